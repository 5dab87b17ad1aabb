package testcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"
)

// virt-controller as the test cluster runs it: out of cluster, as
// VirtControllerUser, on a loopback port, in KubeVirtNamespace.
const (
	virtControllerBinary = "virt-controller"
	// LauncherImage and ExporterImage name the images virt-controller puts
	// into the pods it creates; nothing pulls them (sim plays the kubelet).
	LauncherImage = "quay.io/kubevirt/virt-launcher:v1.9.0"
	ExporterImage = "quay.io/kubevirt/virt-exportserver:v1.9.0"
	// kubeVirtRestartDelay spaces restarts of a virt-controller or virt-api
	// that exited on its own.
	kubeVirtRestartDelay = time.Second
)

// startVirtController writes virt-controller's metrics certificate
// (selfSignedTLS), starts it and waits until it leads.
func (c *Cluster) startVirtController(ctx context.Context) error {
	tlsFiles, err := c.selfSignedTLS("virt-controller")
	if err != nil {
		return err
	}
	p, _, err := c.startWithPorts(ctx, virtControllerBinary, 1, func(ports []int) []string {
		return append([]string{
			"--kubeconfig=" + c.virtControllerKubeconfig,
			"--launcher-image=" + LauncherImage,
			"--exporter-image=" + ExporterImage,
			"--listen=127.0.0.1",
			"--port=" + strconv.Itoa(ports[0]),
			"--prom-cert-file=" + tlsFiles.certFile,
			"--prom-key-file=" + tlsFiles.keyFile,
		}, c.virtControllerArgs...)
	}, func(ctx context.Context, p *process, ports []int) error {
		leader := "https://127.0.0.1:" + strconv.Itoa(ports[0]) + "/leader"
		return waitProcess(ctx, p, "virt-controller to lead", func(ctx context.Context) error {
			return leads(ctx, tlsFiles.client, leader)
		})
	})
	if err != nil {
		return err
	}
	return c.adopt(ctx, p, &c.virtControllerProc, c.startVirtController, &c.virtControllerRestarts)
}

// selfSignedTLS is a KubeVirt process's serving certificate, self-signed,
// and an HTTPS client that trusts it.
type selfSignedTLS struct {
	certFile, keyFile string
	certPEM           []byte
	client            *http.Client
}

// selfSignedTLS writes a new certificate for process name, valid for
// 127.0.0.1, localhost and the extra hosts (IPs or DNS names), into its own
// directory (virt-controller and virt-api watch theirs; a log file there
// would make them reload in a loop).
func (c *Cluster) selfSignedTLS(name string, hosts ...string) (*selfSignedTLS, error) {
	certDir := filepath.Join(c.Dir, name+"-certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s cert dir: %w", name, err)
	}
	s := &selfSignedTLS{certFile: filepath.Join(certDir, "tls.crt"), keyFile: filepath.Join(certDir, "tls.key")}
	cert, err := writeCert(s.certFile, s.keyFile, certSpec{cn: name, hosts: append([]string{"127.0.0.1", "localhost"}, hosts...)})
	if err != nil {
		return nil, fmt.Errorf("%s certificate: %w", name, err)
	}
	s.certPEM = cert.pem
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.certPEM)
	s.client = &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
	}
	return s, nil
}

// adopt records a KubeVirt process that just became ready in *slot and
// supervises it (start restarts it), unless Stop ran while it was starting:
// then it stops it.
func (c *Cluster) adopt(ctx context.Context, p *process, slot **process, start func(context.Context) error, restarts *atomic.Int64) error {
	c.mu.Lock()
	stopping := c.stopping
	*slot = p
	c.mu.Unlock()
	if stopping {
		return errors.Join(errors.New(p.name+": cluster stopped"), p.stop(stopGrace))
	}
	go c.supervise(context.WithoutCancel(ctx), p, start, restarts)
	return nil
}

// supervise restarts a KubeVirt process (virt-controller, virt-api) with
// start when it exits while the cluster runs, as its Deployment would in a
// real cluster: virt-controller exits, for one, when it loses its leader
// lease during an apiserver outage; virt-api when a CRD it depends on
// (CDI's DataSource) appears or goes. restarts counts the restarts.
func (c *Cluster) supervise(base context.Context, p *process, start func(context.Context) error, restarts *atomic.Int64) {
	<-p.done
	for {
		c.mu.Lock()
		stopping := c.stopping
		c.mu.Unlock()
		if stopping {
			return
		}
		c.log.Warn(p.name+" exited; restarting it", "error", p.err, "logTail", p.logTail(5))
		time.Sleep(kubeVirtRestartDelay)
		ctx, cancel := context.WithTimeout(base, defaultStartTimeout)
		err := start(ctx)
		cancel()
		if err == nil {
			restarts.Add(1)
			return // the new process has its own supervisor
		}
		c.log.Warn("restart "+p.name, "error", err)
	}
}

// VirtControllerRestarts is how often virt-controller exited on its own and
// was started again.
func (c *Cluster) VirtControllerRestarts() int64 { return c.virtControllerRestarts.Load() }

// VirtControllerPID is the process id of the virt-controller running now
// (0 without [Options.VirtController] or while it restarts), for benchmarks
// that watch its CPU.
func (c *Cluster) VirtControllerPID() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.virtControllerProc.pid()
}

// stopKubeVirt stops virt-controller and virt-api for good (Cluster.Stop).
func (c *Cluster) stopKubeVirt() []error {
	c.mu.Lock()
	c.stopping = true
	procs := append([]*process{c.virtControllerProc, c.virtAPIProc}, c.cdiProcs...)
	c.mu.Unlock()
	var errs []error
	for _, p := range procs {
		if p == nil {
			continue
		}
		if err := p.stop(stopGrace); err != nil {
			errs = append(errs, fmt.Errorf("stop %s: %w", p.name, err))
		}
	}
	return errs
}

// leads asks virt-controller's leader probe whether it leads: the probe
// answers 200 from the start, with {"apiserver":{"leader":"false"}} until
// it holds its lease.
func leads(ctx context.Context, client *http.Client, url string) error {
	var probe struct {
		APIServer struct {
			Leader string `json:"leader"`
		} `json:"apiserver"`
	}
	if err := getOK(ctx, client, url, &probe); err != nil {
		return err
	}
	if probe.APIServer.Leader != "true" {
		return errors.New("GET " + url + ": not leading yet")
	}
	return nil
}

func httpOKWith(ctx context.Context, client *http.Client, url string) error {
	return getOK(ctx, client, url, nil)
}

// getOK GETs url and requires 200; into, when not nil, gets the JSON body.
func getOK(ctx context.Context, client *http.Client, url string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close() // a GET's body; nothing to report
	if resp.StatusCode != http.StatusOK {
		return errors.New("GET " + url + ": " + resp.Status)
	}
	if into == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	return nil
}
