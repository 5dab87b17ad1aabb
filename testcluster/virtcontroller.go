package testcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// virt-controller as the test cluster runs it: out of cluster, against the
// admin kubeconfig, on a loopback port, in KubeVirtNamespace.
const (
	virtControllerBinary = "virt-controller"
	// LauncherImage and ExporterImage name the images virt-controller puts
	// into the pods it creates; nothing pulls them (sim plays the kubelet).
	LauncherImage = "quay.io/kubevirt/virt-launcher:v1.9.0"
	ExporterImage = "quay.io/kubevirt/virt-exportserver:v1.9.0"
	// virtControllerRestartDelay spaces restarts of a virt-controller that
	// exited on its own.
	virtControllerRestartDelay = time.Second
)

// startVirtController writes virt-controller's metrics certificate into its
// own directory (virt-controller watches that directory; a log file there
// would make it reload in a loop), starts it and waits until it leads.
func (c *Cluster) startVirtController(ctx context.Context) error {
	certDir := filepath.Join(c.Dir, "virt-controller-certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return fmt.Errorf("create virt-controller cert dir: %w", err)
	}
	certFile, keyFile := filepath.Join(certDir, "tls.crt"), filepath.Join(certDir, "tls.key")
	certPEM, err := writeServingCert(certFile, keyFile)
	if err != nil {
		return fmt.Errorf("virt-controller certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	client := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
	}
	p, ports, err := c.startWithPorts(ctx, virtControllerBinary, 1, func(ports []int) []string {
		return append([]string{
			"--kubeconfig=" + c.Kubeconfig,
			"--launcher-image=" + LauncherImage,
			"--exporter-image=" + ExporterImage,
			"--listen=127.0.0.1",
			"--port=" + strconv.Itoa(ports[0]),
			"--prom-cert-file=" + certFile,
			"--prom-key-file=" + keyFile,
		}, c.virtControllerArgs...)
	}, func(ctx context.Context, p *process, ports []int) error {
		leader := "https://127.0.0.1:" + strconv.Itoa(ports[0]) + "/leader"
		return waitProcess(ctx, p, "virt-controller to lead", func(ctx context.Context) error {
			return httpOKWith(ctx, client, leader)
		})
	})
	if err != nil {
		return err
	}
	c.mu.Lock()
	stopping := c.stopping
	c.virtControllerProc = p
	c.virtControllerPort = ports[0]
	c.mu.Unlock()
	if stopping { // Stop ran while this (re)start was under way
		return errors.Join(errors.New("virt-controller: cluster stopped"), p.stop(stopGrace))
	}
	go c.superviseVirtController(context.WithoutCancel(ctx), p, func(ctx context.Context) error { return c.startVirtController(ctx) })
	return nil
}

// superviseVirtController restarts virt-controller when it exits while the
// cluster runs (it exits, for one, when it loses its leader lease during an
// apiserver outage, as it does in a real cluster where the Deployment
// restarts it).
func (c *Cluster) superviseVirtController(base context.Context, p *process, start func(context.Context) error) {
	<-p.done
	for {
		c.mu.Lock()
		stopping := c.stopping
		c.mu.Unlock()
		if stopping {
			return
		}
		c.log.Warn("virt-controller exited; restarting it", "error", p.err, "logTail", p.logTail(5))
		time.Sleep(virtControllerRestartDelay)
		ctx, cancel := context.WithTimeout(base, defaultStartTimeout)
		err := start(ctx)
		cancel()
		if err == nil {
			c.virtControllerRestarts.Add(1)
			return // the new process has its own supervisor
		}
		c.log.Warn("restart virt-controller", "error", err)
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
	if p := c.virtControllerProc; p != nil && !p.exited() {
		return p.cmd.Process.Pid
	}
	return 0
}

// stopVirtController stops virt-controller for good (Cluster.Stop).
func (c *Cluster) stopVirtController() error {
	c.mu.Lock()
	c.stopping = true
	p := c.virtControllerProc
	c.mu.Unlock()
	if p == nil {
		return nil
	}
	if err := p.stop(stopGrace); err != nil {
		return fmt.Errorf("stop virt-controller: %w", err)
	}
	return nil
}

func httpOKWith(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close() //nolint:errcheck // status is all we need
	if resp.StatusCode != http.StatusOK {
		return errors.New("GET " + url + ": " + resp.Status)
	}
	return nil
}
