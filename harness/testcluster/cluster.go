package testcluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/crds"
)

// DefaultBridgeNamespace is where the bridge's leases and secrets live
// unless [Options.BridgeNamespace] says otherwise.
const DefaultBridgeNamespace = "redfish-bridge"

// defaultStartTimeout bounds Start when ctx has no deadline: a deadline
// for the cluster to be ready, not a measure of it, so generous for a
// loaded machine (at load ~40 kube-apiserver took 2 min to serve the
// KubeVirt CRDs, and 3 min ran out before virt-api answered).
const defaultStartTimeout = 10 * time.Minute

// Options configure [Start]. The zero value is usable.
type Options struct {
	// Variant is the CRD variant to install; default [crds.Stock].
	Variant crds.Variant
	// BinDir holds etcd and kube-apiserver. Default: $REDFISH_BRIDGE_BIN,
	// else <module root>/bin (module root: nearest go.mod above the
	// working directory).
	BinDir string
	// Dir holds data, credentials, kubeconfigs and logs. Default: a new
	// temporary directory, removed by Stop. A Dir given here must be empty
	// (etcd keeps its data there) and is kept.
	Dir string
	// BridgeNamespace is created and holds the bridge's namespaced
	// permissions (leases, secrets, configmaps). Default
	// [DefaultBridgeNamespace].
	BridgeNamespace string
	// Log receives progress messages; default slog.Default().
	Log *slog.Logger
	// VirtController runs KubeVirt's own virt-controller v1.9.0 (bin/,
	// built by `make tools`) against the cluster, with what it needs
	// installed (see installControlPlane), and restarts it when it exits.
	// The node side (virt-handler, kubelet) is package sim's.
	VirtController bool
	// VirtControllerArgs are further virt-controller flags, e.g.
	// "--vm-controller-threads=10" for a benchmark whose apiserver answers
	// slowly.
	VirtControllerArgs []string
	// VirtAPI also runs KubeVirt's virt-api v1.9.0 (bin/virt-api) for its
	// admission webhooks, registered with loopback URLs, instead of the
	// admission policy [PolicyName] that imitates them; it implies
	// VirtController. See virtapi.go.
	VirtAPI bool
	// CDI installs CDI v1.66.0's CRDs before KubeVirt's controllers start
	// and runs CDI's own cdi-controller ([Cluster.RunCDIController]), and
	// with VirtAPI cdi-apiserver too ([Cluster.RunCDIAPIServer]). It
	// needs root (CDI's namespaces) and bin/cdi-controller; without them
	// Start fails with [ErrNoCDI] or [ErrMissingBinary].
	CDI bool
}

// Cluster is a running etcd + kube-apiserver. Copy the rest.Configs with
// rest.CopyConfig before changing them.
type Cluster struct {
	// Admin is a system:masters identity.
	Admin *rest.Config
	// Bridge is the RBAC-restricted identity [BridgeUser].
	Bridge *rest.Config
	// VirtHandler is virt-handler's identity on [NodeName] (the admin
	// impersonating [VirtHandlerUser] with the node-name extra a bound
	// service account token carries), for package sim, which plays
	// virt-handler: virt-api's VMI webhooks revert VMI status writes by
	// anyone but KubeVirt's service accounts.
	VirtHandler *rest.Config
	// Kubeconfig and BridgeKubeconfig are files holding the same two
	// identities, for kubectl, helm and subprocesses.
	Kubeconfig       string
	BridgeKubeconfig string
	// Dir is the working directory (logs: etcd.log, kube-apiserver.log).
	Dir             string
	Variant         crds.Variant
	BridgeNamespace string
	// ReadyAfter is how long Start took, processes to policy enforced.
	ReadyAfter time.Duration

	ownDir         bool
	binDir         string
	log            *slog.Logger
	virtController bool // Options.VirtController (or VirtAPI)
	virtAPI        bool // Options.VirtAPI
	cdi            bool // Options.CDI
	// virtControllerKubeconfig is VirtControllerUser's kubeconfig.
	virtControllerKubeconfig string
	// virtAPIKubeconfig is VirtAPIUser's kubeconfig.
	virtAPIKubeconfig string
	// hostIP is where virt-api listens (see HostIP).
	hostIP string
	// handlerPKI is virt-api's side of virt-handler's console server
	// (handlerpki.go), with Options.VirtAPI.
	handlerPKI *handlerPKI
	etcd       *process
	apiserver  *process
	stopOnce   sync.Once
	stopErr    error

	virtControllerArgs []string // Options.VirtControllerArgs

	mu                     sync.Mutex // guards the KubeVirt process fields below
	stopping               bool
	virtControllerProc     *process
	virtControllerRestarts atomic.Int64
	virtAPIProc            *process
	virtAPIRestarts        atomic.Int64
	// cdiProcs are CDI's programs (RunCDIAPIServer); Stop stops them.
	cdiProcs []*process
	// cdiPodIP is CDIPodIP's answer.
	cdiPodIP string

	failureLogs failureLogs // Cluster.LogsOnFailure
}

// Start runs etcd and kube-apiserver and installs CRDs, RBAC and the
// admission policy; see the package documentation. On error everything
// started is stopped again. The processes are not tied to ctx: call
// [Cluster.Stop].
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	began := time.Now()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultStartTimeout)
		defer cancel()
	}
	c, err := newCluster(opts)
	if err != nil {
		return nil, err
	}
	if err := c.start(ctx); err != nil {
		if c.apiserver != nil && !c.apiserver.exited() {
			err = fmt.Errorf("%w\nkube-apiserver log tail:\n%s", err, c.apiserver.logTail(20))
		}
		if stopErr := c.Stop(); stopErr != nil {
			err = errors.Join(err, stopErr)
		}
		return nil, fmt.Errorf("start test cluster: %w", err)
	}
	c.ReadyAfter = time.Since(began)
	rss, _ := c.APIServerRSS()
	c.log.InfoContext(ctx, "test cluster ready", "host", c.Admin.Host, "variant", c.Variant,
		"readyAfter", c.ReadyAfter.Round(time.Millisecond), "apiserverRSSMiB", rss>>20, "dir", c.Dir)
	return c, nil
}

func newCluster(opts Options) (*Cluster, error) {
	c := &Cluster{
		Variant: opts.Variant, Dir: opts.Dir, BridgeNamespace: opts.BridgeNamespace, log: opts.Log,
		virtController: opts.VirtController || opts.VirtAPI, virtAPI: opts.VirtAPI, cdi: opts.CDI,
		virtControllerArgs: opts.VirtControllerArgs,
	}
	if c.Variant == "" {
		c.Variant = crds.Stock
	}
	if c.BridgeNamespace == "" {
		c.BridgeNamespace = DefaultBridgeNamespace
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	binDir, err := resolveBinDir(opts.BinDir)
	if err != nil {
		return nil, err
	}
	if c.virtController {
		if err := checkBinary(binDir, virtControllerBinary); err != nil {
			return nil, err
		}
	}
	if c.virtAPI {
		if err := checkBinary(binDir, virtAPIBinary); err != nil {
			return nil, err
		}
		if c.hostIP, err = hostIPv4(); err != nil {
			return nil, err
		}
	}
	if c.Dir == "" {
		sweepStaleDirs()
		if c.Dir, err = os.MkdirTemp("", tempDirPattern); err != nil {
			return nil, fmt.Errorf("create test cluster dir: %w", err)
		}
		c.ownDir = true
		if err := claimDir(c.Dir); err != nil {
			_ = os.RemoveAll(c.Dir)
			return nil, fmt.Errorf("claim test cluster dir: %w", err)
		}
	} else if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("create test cluster dir: %w", err)
	}
	c.binDir = binDir
	return c, nil
}

func (c *Cluster) start(ctx context.Context) error {
	began := time.Now()
	phase := func(name string) {
		c.log.DebugContext(ctx, "test cluster phase done", "phase", name, "elapsed", time.Since(began).Round(time.Millisecond))
	}
	creds, err := writeCredentials(c.Dir)
	if err != nil {
		return err
	}
	etcdURL, err := c.startEtcd(ctx)
	if err != nil {
		return err
	}
	phase("etcd healthy")
	host, err := c.startAPIServer(ctx, etcdURL, creds)
	if err != nil {
		return err
	}
	c.Admin = restConfig(host, creds.servingCertPEM, creds.adminToken)
	c.Bridge = restConfig(host, creds.servingCertPEM, creds.bridgeToken)
	c.VirtHandler = virtHandlerConfig(c.Admin)
	if err := c.waitReady(ctx); err != nil {
		return err
	}
	phase("kube-apiserver ready")
	c.Kubeconfig = filepath.Join(c.Dir, "admin.kubeconfig")
	c.BridgeKubeconfig = filepath.Join(c.Dir, "bridge.kubeconfig")
	if err := writeKubeconfig(c.Kubeconfig, host, creds.servingCertPEM, AdminUser, creds.adminToken, ""); err != nil {
		return err
	}
	if err := writeKubeconfig(c.BridgeKubeconfig, host, creds.servingCertPEM, BridgeUser, creds.bridgeToken, c.BridgeNamespace); err != nil {
		return err
	}
	c.virtControllerKubeconfig = filepath.Join(c.Dir, "virt-controller.kubeconfig")
	if err := writeKubeconfig(c.virtControllerKubeconfig, host, creds.servingCertPEM, VirtControllerUser, creds.virtControllerToken, KubeVirtNamespace); err != nil {
		return err
	}
	c.virtAPIKubeconfig = filepath.Join(c.Dir, "virt-api.kubeconfig")
	if err := writeKubeconfig(c.virtAPIKubeconfig, host, creds.servingCertPEM, VirtAPIUser, creds.virtAPIToken, KubeVirtNamespace); err != nil {
		return err
	}
	if err := c.install(ctx, phase); err != nil {
		return err
	}
	if !c.virtController {
		return nil
	}
	if c.virtAPI { // first, so that virt-controller's writes are admitted by it too
		cs, err := kubernetes.NewForConfig(c.Admin)
		if err != nil {
			return fmt.Errorf("admin client: %w", err)
		}
		if c.handlerPKI, err = c.installHandlerPKI(ctx, cs); err != nil {
			return err
		}
		if err := c.startVirtAPI(ctx); err != nil {
			return err
		}
		phase("virt-api webhooks enforced, APIService available")
	}
	if err := c.startVirtController(ctx); err != nil {
		return err
	}
	phase("virt-controller leading")
	return c.startCDI(ctx, phase)
}

// startCDI runs CDI's programs with Options.CDI: cdi-apiserver (with
// VirtAPI), then cdi-controller.
func (c *Cluster) startCDI(ctx context.Context, phase func(string)) error {
	if !c.cdi {
		return nil
	}
	if c.virtAPI {
		if err := c.RunCDIAPIServer(ctx); err != nil {
			return err
		}
		phase("cdi-apiserver webhooks enforced")
	}
	if err := c.RunCDIController(ctx); err != nil {
		return err
	}
	phase("cdi-controller reconciling")
	return nil
}

// install creates the bridge namespace and RBAC, the CRDs and the policy.
func (c *Cluster) install(ctx context.Context, phase func(string)) error {
	cs, err := kubernetes.NewForConfig(c.Admin)
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	if err := c.CreateNamespace(ctx, c.BridgeNamespace); err != nil {
		return err
	}
	if err := c.installBridgeRBAC(ctx, cs, c.BridgeNamespace); err != nil {
		return err
	}
	if err := c.installKubeVirt(ctx, cs, phase); err != nil {
		return err
	}
	if c.cdi { // before virt-controller, which restarts when CDI's API appears
		if err := canNetNS(); err != nil {
			return fmt.Errorf("%w: %w", ErrNoCDI, err)
		}
		if err := checkBinary(c.binDir, cdiControllerBinary); err != nil {
			return err
		}
		if err := c.installCDICRDs(ctx); err != nil {
			return err
		}
		phase("CDI CRDs installed")
	}
	if c.virtController {
		if err := c.installControlPlane(ctx, cs); err != nil {
			return err
		}
		phase("KubeVirt control plane installed")
	}
	if err := c.waitBridgeAuthorized(ctx); err != nil {
		return err
	}
	phase("bridge RBAC effective")
	return nil
}

// CreateNamespace creates namespace name; an existing one is not an error.
// (No controller-manager runs, so nothing else creates namespaces.)
func (c *Cluster) CreateNamespace(ctx context.Context, name string) error {
	cs, err := kubernetes.NewForConfig(c.Admin)
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}

// Stop kills kube-apiserver and etcd (SIGTERM to each process group, SIGKILL
// after 10 s), waits for them, and removes Dir if Start created it. It is
// safe to call more than once.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		errs := c.stopKubeVirt()
		for _, p := range []*process{c.apiserver, c.etcd} {
			if p != nil {
				errs = append(errs, p.stop(10*time.Second))
			}
		}
		if c.ownDir {
			if err := os.RemoveAll(c.Dir); err != nil {
				errs = append(errs, fmt.Errorf("remove test cluster dir: %w", err))
			}
		}
		c.stopErr = errors.Join(errs...)
	})
	return c.stopErr
}
