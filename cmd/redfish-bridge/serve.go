package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/redfish-bridge/redfish-bridge/console"
	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/eventdelivery"
	"github.com/redfish-bridge/redfish-bridge/eventstream"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/ipmi"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/power"
	"github.com/redfish-bridge/redfish-bridge/redfish"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/service"
	"github.com/redfish-bridge/redfish-bridge/sshconsole"
	"github.com/redfish-bridge/redfish-bridge/vncconsole"
	"github.com/redfish-bridge/redfish-bridge/webui"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// serveOptions are the serve flags.
type serveOptions struct {
	kubeconfig, namespaces, namespace   string
	users, sessionKey, revocations      string
	listen, certFile, keyFile           string
	insecure                            bool
	serviceUUID, importer, storageClass string
	metricsListen                       string
	leaderElect, imageCache             bool
	leaseName, podName                  string
	configFile                          string
	imagePolicy, importMethod           string
	imageCAConfigMap, imageCAKey        string
	addrPolicy                          download.AddrPolicy
	kubeQPS                             float64
	kubeBurst                           int
	userWrites                          redfish.WriteShare
	events                              eventdelivery.Config
	graphical                           vncconsole.Config
	sse                                 eventstream.Config
	eventBus                            event.Config
	maxImageSize, imageClaimSize        string
	imageCacheSize, imageCacheKeyFile   string
	imageCacheKey                       []byte
	imageCacheBytes                     int64
	maxImageBytes                       int64
	imageClaim                          resource.Quantity
	maxHeaderBytes, maxConnections      int
	maxSessionsPerUser                  int
	heldPowerOn                         time.Duration
	ipmi                                ipmi.Config
	webUI                               webui.Config
	console                             console.Config
	sshConsole                          sshconsole.Config
}

// Defaults of --kube-qps and --kube-burst. client-go's own (5 QPS, burst
// 10) throttle the bridge: one provisioning cycle is ~20 apiserver requests
// per VM, and Ironic drives many VMs at once (measured with the real
// binary: a PATCH Boot waited ~1 s in the client-side rate limiter).
const (
	defaultKubeQPS   = 100
	defaultKubeBurst = 200
)

// Defaults of --user-write-qps and --user-write-burst: a user's writes
// (one to a few apiserver requests each) leave most of --kube-qps to the
// other users and the reconcilers, and are far above what one Ironic
// conductor's provisioning sends.
const (
	defaultUserWriteQPS   = 20
	defaultUserWriteBurst = 40
)

// parseServe parses the serve command line. Every flag can also be set
// with an environment variable REDFISH_BRIDGE_<FLAG> (dashes as
// underscores), which the chart uses, or in the YAML file --config (keys
// are flag names); precedence flag > env > file > default.
func parseServe(args []string, s streams) (*serveOptions, error) {
	env := func(name string) string { v, _ := s.lookupEnv(name); return v }
	podName := env("POD_NAME")
	if podName == "" {
		podName, _ = os.Hostname()
	}
	o := &serveOptions{events: eventdelivery.DefaultConfig(), sse: eventstream.DefaultConfig(), eventBus: event.DefaultConfig()}
	fs := flagSet("serve", serveSummary, s)
	o.events.RegisterFlags(fs)
	o.sse.RegisterFlags(fs)
	o.eventBus.RegisterFlags(fs)
	o.console = console.DefaultConfig()
	o.console.RegisterFlags(fs)
	o.sshConsole.RegisterFlags(fs)
	fs.StringVar(&o.configFile, "config", "", "YAML file of flag values (keys are flag names); flags and env win over it")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file; empty uses the in-cluster service account")
	fs.StringVar(&o.namespaces, "namespaces", "", "comma-separated namespaces whose VMs are served; empty means all")
	fs.StringVar(&o.namespace, "namespace", env("POD_NAMESPACE"), "namespace of the bridge's own Secrets, ConfigMap and Lease")
	fs.StringVar(&o.users, "users-secret", "redfish-bridge-users", "Secret with users (bcrypt hashes) and their scopes")
	fs.StringVar(&o.sessionKey, "session-key-secret", "redfish-bridge-session-key", "Secret with the session signing key (created when missing)")
	fs.StringVar(&o.revocations, "sessions-configmap", "redfish-bridge-sessions", "ConfigMap recording open and ended sessions")
	fs.StringVar(&o.listen, "listen", ":8443", "HTTPS listen address")
	fs.StringVar(&o.certFile, "tls-cert", "", "TLS certificate file (PEM)")
	fs.StringVar(&o.keyFile, "tls-key", "", "TLS private key file (PEM)")
	fs.BoolVar(&o.insecure, "insecure-http", false, "serve plain HTTP (only behind a TLS-terminating proxy)")
	fs.StringVar(&o.serviceUUID, "service-uuid", "", "Redfish service root UUID, the same on every replica (required)")
	fs.StringVar(&o.importer, "importer-image", "", "image of the ISO import pods (default: the bridge's own)")
	fs.StringVar(&o.importMethod, "import-method", media.ImportMethodAuto, "how images are imported: auto (a CDI DataVolume where CDI's DataVolume CRD is installed, else an import pod), "+strings.Join(media.ImportMethods(), " or "))
	fs.StringVar(&o.storageClass, "storage-class", "", "StorageClass of image PVCs (default: the cluster default)")
	fs.StringVar(&o.maxImageSize, "max-image-size", download.FormatBytes(download.DefaultMaxImageSize), "largest image an import may write (1Mi to 1Pi); a larger one fails its Task")
	fs.StringVar(&o.imageClaimSize, "image-claim-size", "8Gi", "size of an image PVC before the image's size is known; an import pod that finds the image larger has the PVC re-created to fit")
	fs.BoolVar(&o.imageCache, "image-cache", false, "share one download among the inserts of one image in a namespace: with the import pod, each insert's import pod revalidates the namespace's cached copy with a conditional HEAD to the image server (with the insert's own CAs and credentials; the cache key includes them), downloads only when it is absent or changed, and copies it into the VM's own PVC (the cached copy is a PVC redfish-image-<key>); with CDI, each insert's check pod (import --head-only) sends a HEAD, CDI imports each version once into a DataVolume redfish-image-<key>-<version> and every VM's DataVolume is a CDI clone of it; cached copies are owned by the VM whose insert created them")
	fs.StringVar(&o.imageCacheKeyFile, "image-cache-key-file", "", "with --image-cache (required then), a file holding the secret the cache keys are an HMAC under (at least 32 bytes, e.g. from openssl rand -hex 32; the chart generates one into a Secret and mounts it), so a key in a slot annotation or an entry's PVC name reveals nothing of the credentials; the same file on every replica and across restarts, else entries are not shared (a new secret leaves the old entries unused: redfish-bridge cache prune deletes them)")
	fs.StringVar(&o.imageCacheSize, "image-cache-size", "0", "with --image-cache, the budget of each namespace's image cache entries (their PVC requests, e.g. 100Gi): a new entry first evicts the least recently used entries no import pod is reading; entries in use may keep a namespace over it; 0: no budget")
	fs.StringVar(&o.imagePolicy, "image-addr-policy", "", "which addresses image URLs may reach, comma-separated: deny-loopback, deny-private, deny=<prefix>, allow=<prefix> (link-local and cloud metadata addresses are always refused); checked at insert (literal IPs, and with --import-method auto or cdi the host name resolved) and by the import pod on every dial")
	fs.StringVar(&o.imageCAConfigMap, "image-ca-configmap", "", "ConfigMap in --namespace with a PEM CA bundle that image downloads trust besides the system roots (a slot's VerifyCertificate false skips all verification)")
	fs.DurationVar(&o.heldPowerOn, "held-power-on-timeout", power.DefaultHoldTimeout, "how long a power-on that arrives during a virtual-media import is held for it (the System shows PoweringOn meanwhile); when the import has not completed by then, the power-on is dropped (logged, System Off, Status.Health Warning) and the VM stays off")
	fs.StringVar(&o.imageCAKey, "image-ca-key", media.DefaultCABundleKey, "key of the bundle in --image-ca-configmap")
	fs.StringVar(&o.metricsListen, "metrics-listen", ":9090", "plain-HTTP address of /metrics, /healthz and /readyz; empty disables")
	fs.BoolVar(&o.leaderElect, "leader-elect", true, "run the reconcilers only on the replica holding the Lease (every replica serves Redfish)")
	fs.StringVar(&o.leaseName, "lease-name", service.DefaultLeaseName, "name of the Lease in --namespace")
	fs.StringVar(&o.podName, "pod-name", podName, "leader identity (default $POD_NAME, else the hostname)")
	fs.Float64Var(&o.kubeQPS, "kube-qps", defaultKubeQPS, "client-side rate limit of apiserver requests per second")
	fs.IntVar(&o.kubeBurst, "kube-burst", defaultKubeBurst, "client-side burst of apiserver requests")
	fs.Float64Var(&o.userWrites.PerSecond, "user-write-qps", defaultUserWriteQPS, "writes (POST, PATCH, DELETE, logins) per second each Redfish user may make on average while other users write too, its share of --kube-qps (beyond it: 429 with Retry-After; a user writing alone is not refused); 0 for no limit")
	fs.IntVar(&o.userWrites.Burst, "user-write-burst", defaultUserWriteBurst, "writes each Redfish user may make at once")
	o.graphical.RegisterFlags(fs)
	fs.IntVar(&o.maxHeaderBytes, "max-header-bytes", service.DefaultMaxHeaderBytes, "largest request header accepted (HTTP/1 and HTTP/2), bytes")
	fs.IntVar(&o.maxConnections, "max-connections", service.DefaultMaxConnections, "open connections per listener (TLS handshakes included), shared out per user (authenticated connections) and per address (the others): at the cap a new connection closes one of whoever is over its share, an unfinished handshake first, or is itself closed; -1 for no cap")
	fs.IntVar(&o.maxSessionsPerUser, "max-sessions-per-user", auth.DefaultMaxSessionsPerUser, "open sessions one user may hold (across replicas); that user's next login answers 503 SessionLimitExceeded, other users' do not; -1 for no per-user bound")
	o.ipmi.RegisterFlags(fs)
	o.webUI.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("serve: unexpected arguments %q", fs.Args())
	}
	if err := settle(fs, "config", s.lookupEnv); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if err := o.ipmi.Validate(); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if o.serviceUUID == "" {
		return nil, errors.New("serve: --service-uuid (REDFISH_BRIDGE_SERVICE_UUID) is required")
	}
	if o.namespace == "" {
		return nil, errors.New("serve: --namespace (or POD_NAMESPACE) is required")
	}
	p, err := download.ParseAddrPolicy(o.imagePolicy)
	if err != nil {
		return nil, fmt.Errorf("serve: --image-addr-policy: %w", err)
	}
	o.addrPolicy = p
	if o.importMethod != media.ImportMethodAuto && !slices.Contains(media.ImportMethods(), o.importMethod) {
		return nil, fmt.Errorf("serve: --import-method %q: want %s or one of %v", o.importMethod, media.ImportMethodAuto, media.ImportMethods())
	}
	if o.maxImageBytes, err = download.ParseImageSize(o.maxImageSize); err != nil {
		return nil, fmt.Errorf("serve: --max-image-size: %w", err)
	}
	budget, err := resource.ParseQuantity(o.imageCacheSize)
	if err != nil || budget.Sign() < 0 {
		return nil, fmt.Errorf("serve: --image-cache-size %q: a quantity such as 100Gi (0: no budget) is required", o.imageCacheSize)
	}
	o.imageCacheBytes = budget.Value()
	if o.imageCache {
		if o.imageCacheKeyFile == "" {
			return nil, errors.New("serve: --image-cache needs --image-cache-key-file: a file with a random secret (e.g. openssl rand -hex 32 > key), the same on every replica and across restarts (the chart makes one)")
		}
		if o.imageCacheKey, err = media.ReadImageCacheKey(o.imageCacheKeyFile); err != nil {
			return nil, fmt.Errorf("serve: --image-cache-key-file: %w", err)
		}
	}
	if o.imageClaim, err = resource.ParseQuantity(o.imageClaimSize); err != nil || o.imageClaim.Sign() <= 0 {
		return nil, fmt.Errorf("serve: --image-claim-size %q: a positive quantity such as 8Gi is required", o.imageClaimSize)
	}
	if o.userWrites.PerSecond > 0 && o.userWrites.Burst <= 0 {
		return nil, fmt.Errorf("serve: --user-write-burst must be positive (got %d)", o.userWrites.Burst)
	}
	if o.heldPowerOn <= 0 {
		return nil, fmt.Errorf("serve: --held-power-on-timeout %s: a positive duration such as 10m is required", o.heldPowerOn)
	}
	if o.kubeQPS <= 0 || o.kubeBurst <= 0 {
		return nil, fmt.Errorf("serve: --kube-qps and --kube-burst must be positive (got %v, %d)", o.kubeQPS, o.kubeBurst)
	}
	return o, nil
}

// runServe runs the bridge against a cluster.
func runServe(ctx context.Context, s streams, args []string) error {
	o, err := parseServe(args, s)
	if err != nil {
		return err
	}
	applyMemoryLimit(logctx.From(ctx), s.lookupEnv, cgroupMemoryFiles)
	var tlsCfg *tls.Config
	switch {
	case o.certFile != "" && o.keyFile != "":
		cert, err := tls.LoadX509KeyPair(o.certFile, o.keyFile)
		if err != nil {
			return fmt.Errorf("serve: --tls-cert/--tls-key: %w", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	case !o.insecure:
		return errors.New("serve: TLS is the default: give --tls-cert and --tls-key, or --insecure-http explicitly")
	}
	kube, err := kubeConfig(o.kubeconfig)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	kube.QPS, kube.Burst = float32(o.kubeQPS), o.kubeBurst
	run, err := service.Start(ctx, service.Config{
		Kube: kube, Namespaces: splitList(o.namespaces), Namespace: o.namespace,
		UsersSecret: o.users, SessionKeySecret: o.sessionKey, RevocationsConfigMap: o.revocations, MaxSessionsPerUser: o.maxSessionsPerUser,
		Listen: o.listen, TLS: tlsCfg, Limits: service.Limits{MaxHeaderBytes: o.maxHeaderBytes, MaxConnections: o.maxConnections}, ServiceUUID: o.serviceUUID, Version: version,
		ImporterImage: o.importer, StorageClass: o.storageClass, MetricsListen: o.metricsListen,
		ImageCAConfigMap: o.imageCAConfigMap, ImageCAKey: o.imageCAKey,
		MaxImageSize: o.maxImageBytes, ImageClaimSize: o.imageClaim, ImageAddrPolicy: o.addrPolicy, ImportMethod: o.importMethod,
		ImageCache: o.imageCache, ImageCacheKey: o.imageCacheKey, ImageCacheBudget: o.imageCacheBytes,
		HeldPowerOnTimeout: o.heldPowerOn,
		IPMI:               o.ipmi,
		Leader:             service.LeaderElection{Disabled: !o.leaderElect, LeaseName: o.leaseName, Identity: o.podName},
		UserWrites:         o.userWrites,
		WebUI:              o.webUI,
		Events:             o.events,
		SSE:                o.sse,
		EventBus:           o.eventBus,
		GraphicalConsole:   o.graphical,
		Console:            o.console,
		SSHConsole:         o.sshConsole,
	})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return run.Wait()
}

func kubeConfig(path string) (*rest.Config, error) {
	if path == "" {
		path = os.Getenv("KUBECONFIG")
	}
	var cfg *rest.Config
	var err error
	if path == "" {
		cfg, err = rest.InClusterConfig()
	} else {
		cfg, err = clientcmd.BuildConfigFromFlags("", path)
	}
	if err != nil {
		return nil, fmt.Errorf("kubernetes client configuration: %w", err)
	}
	cfg.UserAgent = "redfish-bridge/" + version
	return cfg, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
