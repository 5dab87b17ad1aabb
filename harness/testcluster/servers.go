package testcluster

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"
)

// portAttempts bounds retries when a free port was taken before the child
// bound it.
const portAttempts = 3

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		defer l.Close() // probe listener
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// startWithPorts starts a child on fresh ports and waits with ready;
// if the child dies because a port was taken meanwhile, it tries again.
func (c *Cluster) startWithPorts(ctx context.Context, name string, nPorts int,
	args func(ports []int) []string, ready func(ctx context.Context, p *process, ports []int) error,
) (*process, []int, error) {
	for attempt := 1; ; attempt++ {
		ports, err := freePorts(nPorts)
		if err != nil {
			return nil, nil, err
		}
		p, err := startProcess(name, filepath.Join(c.binDir, name), args(ports), c.Dir)
		if err != nil {
			return nil, nil, err
		}
		err = ready(ctx, p, ports)
		if err == nil {
			return p, ports, nil
		}
		_ = p.stop(0)
		if attempt < portAttempts && strings.Contains(p.logTail(50), "address already in use") {
			c.log.DebugContext(ctx, "port taken, retrying", "process", name, "ports", ports)
			continue
		}
		return nil, nil, err
	}
}

// waitProcess polls check until it succeeds, failing fast if p exits.
func waitProcess(ctx context.Context, p *process, what string, check func(ctx context.Context) error) error {
	return poll(ctx, what, func(ctx context.Context) (bool, error) {
		if p.exited() {
			return false, permanent(p.exitError())
		}
		err := check(ctx)
		return err == nil, err
	})
}

func (c *Cluster) startEtcd(ctx context.Context) (string, error) {
	var url string
	p, ports, err := c.startWithPorts(ctx, etcdBinary, 2, func(ports []int) []string {
		client := "http://127.0.0.1:" + strconv.Itoa(ports[0])
		peer := "http://127.0.0.1:" + strconv.Itoa(ports[1])
		return []string{
			"--name=default",
			"--data-dir=" + filepath.Join(c.Dir, "etcd"),
			"--listen-client-urls=" + client,
			"--advertise-client-urls=" + client,
			"--listen-peer-urls=" + peer,
			"--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=default=" + peer,
			"--unsafe-no-fsync=true", // throwaway data: durability buys nothing
			"--log-level=warn",
		}
	}, func(ctx context.Context, p *process, ports []int) error {
		health := "http://127.0.0.1:" + strconv.Itoa(ports[0]) + "/health"
		return waitProcess(ctx, p, "etcd health", func(ctx context.Context) error {
			return httpOK(ctx, health)
		})
	})
	if err != nil {
		return "", err
	}
	c.etcd = p
	url = "http://127.0.0.1:" + strconv.Itoa(ports[0])
	return url, nil
}

func httpOK(ctx context.Context, url string) error {
	return httpOKWith(ctx, http.DefaultClient, url)
}

// startAPIServer starts kube-apiserver and waits until it listens; it
// returns the https host.
func (c *Cluster) startAPIServer(ctx context.Context, etcdURL string, creds *credentials) (string, error) {
	p, ports, err := c.startWithPorts(ctx, apiserverBinary, 1, func(ports []int) []string {
		args := []string{
			"--advertise-address=127.0.0.1",
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(ports[0]),
			"--etcd-servers=" + etcdURL,
			"--cert-dir=" + filepath.Join(c.Dir, "certs"),
			"--tls-cert-file=" + creds.certFile,
			"--tls-private-key-file=" + creds.keyFile,
			"--token-auth-file=" + creds.tokenFile,
			"--authorization-mode=RBAC",
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file=" + creds.saPubFile,
			"--service-account-signing-key-file=" + creds.saKeyFile,
			"--service-cluster-ip-range=10.0.0.0/24",
			// ServiceAccount needs the token controller; StorageObjectInUseProtection
			// adds a PVC finalizer only a controller removes. Neither runs here.
			"--disable-admission-plugins=ServiceAccount,StorageObjectInUseProtection",
			"--allow-privileged=true",
			"--profiling=false",
			"--enable-priority-and-fairness=false",
			// The kubernetes Service endpoints may not point at loopback.
			"--endpoint-reconciler-type=none",
		}
		if c.virtAPI {
			args = append(args, aggregationFlags(creds)...)
		}
		return args
	}, func(ctx context.Context, p *process, ports []int) error {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
		return waitProcess(ctx, p, "kube-apiserver to listen", func(ctx context.Context) error {
			var d net.Dialer
			conn, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				return err
			}
			return conn.Close()
		})
	})
	if err != nil {
		return "", err
	}
	c.apiserver = p
	return "https://127.0.0.1:" + strconv.Itoa(ports[0]), nil
}

// waitReady waits for /readyz (all post-start hooks, RBAC bootstrap done).
func (c *Cluster) waitReady(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(c.Admin)
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	return waitProcess(ctx, c.apiserver, "kube-apiserver /readyz", func(ctx context.Context) error {
		_, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err
	})
}
