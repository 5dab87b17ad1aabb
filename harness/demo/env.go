package demo

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"golang.org/x/crypto/bcrypt"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/eventdelivery"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/ipmi"
	"github.com/redfish-bridge/redfish-bridge/kubeauth"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/service"
	"github.com/redfish-bridge/redfish-bridge/sshconsole"
)

// Names of the bridge's own objects in the demo (and the chart's defaults).
const (
	UsersSecret          = "redfish-bridge-users"
	SessionKeySecret     = "redfish-bridge-session-key"
	RevocationsConfigMap = "redfish-bridge-sessions"
	// ImageCAConfigMap is the bridge-wide CA bundle for image downloads
	// (key ca.crt, in the bridge's namespace); the demo creates none.
	ImageCAConfigMap = testcluster.ImageCAConfigMap
	// VMNamespace holds the sample VMs.
	VMNamespace = "demo"
	// AdminUser sees every namespace.
	AdminUser = "admin"
	// ViewerUser sees every namespace and is ReadOnly (the users Secret's
	// <user>.role): it reads, changes nothing, and gets a view-only
	// console. Its password is the admin's.
	ViewerUser = "viewer"
)

// Options configure [Start].
type Options struct {
	Variant crds.Variant
	// VMs is the number of sample VMs ([SampleVM]: their author owns
	// firmware.bootloader.efi, so they boot UEFI until a client asks for
	// Legacy, which removes the author's efi).
	VMs int
	// FirmwareVMs is the number of firmware sample VMs besides them
	// ([SampleFirmwareVM], named [FirmwareVMNames]): their boot firmware
	// is the bridge's to change (Legacy and UEFI, Secure Boot).
	FirmwareVMs int
	// Listen is the Redfish address; "127.0.0.1:0" picks a free port.
	Listen string
	// IPMI are the IPMI endpoint's settings (zero: off).
	IPMI ipmi.Config
	// SSHConsole is the SSH serial console's listener (zero: off; a
	// Listen of "127.0.0.1:0" picks a free port, [service.Running]'s
	// SSHConsoleAddr says which).
	SSHConsole sshconsole.Config
	// StartDelay and StopDelay are the node side's VMI delays (sim: how
	// long a scheduled VMI takes to run, a deleted one to stop).
	StartDelay, StopDelay time.Duration
	// ImageSize is the size of the sample ISOs in bytes.
	ImageSize int
	Log       *slog.Logger
	// MaxImageSize and ImageClaimSize, when set, are the bridge's
	// --max-image-size and --image-claim-size.
	MaxImageSize   int64
	ImageClaimSize resource.Quantity
	// WrapKube, when set, wraps the bridge's transport to the apiserver
	// (e.g. to count its requests); the cluster's own config is unchanged.
	WrapKube func(http.RoundTripper) http.RoundTripper
	// VirtAPI runs KubeVirt's virt-api in the cluster (testcluster's
	// Options.VirtAPI: its webhooks and its subresource API, through
	// which the bridge forces ForceOff and ForceRestart); the simulator
	// then writes as virt-handler. Without it the admission policy stands
	// in for the webhooks and ForceOff and ForceRestart stay graceful.
	VirtAPI bool
	// CDI runs CDI v1.66.0's own cdi-controller in the cluster
	// (testcluster's Options.CDI; with VirtAPI cdi-apiserver too) and the
	// simulator's node side of its importer pods: the bridge then imports
	// through CDI DataVolumes ([Env.ImportMethod]). Needs root.
	CDI bool
	// GracePeriodSeconds, when not 0, is the sample VMs'
	// terminationGracePeriodSeconds ([SetGracePeriod]): with a long
	// StopDelay, only a forced stop ends their guests before it.
	GracePeriodSeconds int64
	// Events are the bridge's EventService settings (zero: its defaults,
	// with an AddrPolicy that allows loopback destinations).
	Events eventdelivery.Config
}

// Env is a running demo.
type Env struct {
	Cluster  *testcluster.Cluster
	Sim      *sim.Simulator
	Bridge   *service.Running
	Images   *ImageServer
	URL      string // https://host:port
	User     string
	Password string
	// ImportMethod is how the bridge imports images here: "cdi" (CDI's
	// own cdi-controller, Options.CDI) or "pod" (its import pods).
	ImportMethod string
	cancel       context.CancelFunc
	simDone      chan error
	cdiDone      chan error // the simulator's CDI node side; nil without CDI
}

// Start brings up the whole demo and returns once virt-controller has
// synced the sample VMs ([WaitSynced]). Call [Env.Stop] to tear it down.
func Start(ctx context.Context, opts Options) (env *Env, err error) {
	if opts.Variant == "" {
		opts.Variant = crds.Stock
	}
	if opts.Listen == "" {
		opts.Listen = "127.0.0.1:8443"
	}
	if opts.ImageSize == 0 {
		opts.ImageSize = 4 << 20
	}
	log := opts.Log
	if log == nil {
		log = slog.Default()
	}
	cluster, err := testcluster.Start(ctx, testcluster.Options{Variant: opts.Variant, Log: log, VirtController: true, VirtAPI: opts.VirtAPI, CDI: opts.CDI})
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	env = &Env{Cluster: cluster, cancel: cancel, User: AdminUser, simDone: make(chan error, 1), ImportMethod: media.ImportMethodPod}
	defer func() {
		if err != nil {
			err = errors.Join(err, env.Stop())
		}
	}()
	if err := cluster.CreateNamespace(ctx, VMNamespace); err != nil {
		return env, err
	}
	kube, err := kubernetes.NewForConfig(cluster.Admin)
	if err != nil {
		return env, fmt.Errorf("admin client: %w", err)
	}
	if env.Password, err = createAccounts(ctx, kube, cluster.BridgeNamespace); err != nil {
		return env, err
	}
	nodeSide := cluster.Admin
	if opts.VirtAPI {
		nodeSide = cluster.VirtHandler // virt-api reverts VMI status writes by others
	}
	env.Sim, err = sim.New(nodeSide, sim.Options{
		StartDelay: opts.StartDelay, StopDelay: opts.StopDelay,
		DataDir: filepath.Join(cluster.Dir, "images"), Log: log,
	})
	if err != nil {
		return env, fmt.Errorf("simulator: %w", err)
	}
	go func() { env.simDone <- env.Sim.Run(runCtx) }()
	if opts.CDI {
		env.ImportMethod, env.cdiDone = media.ImportMethodCDI, make(chan error, 1)
		go func() { env.cdiDone <- env.Sim.RunCDINode(runCtx, cluster.CDIPodIP()) }()
	}
	dyn, err := dynamic.NewForConfig(cluster.Admin)
	if err != nil {
		return env, fmt.Errorf("admin dynamic client: %w", err)
	}
	if err := createVMs(ctx, dyn, VMNamespace, SampleVMNames(opts.VMs), SampleVM, opts.GracePeriodSeconds); err != nil {
		return env, err
	}
	if err := createVMs(ctx, dyn, VMNamespace, FirmwareVMNames(opts.FirmwareVMs), SampleFirmwareVM, opts.GracePeriodSeconds); err != nil {
		return env, err
	}
	if env.Images, err = StartImageServer([]string{"boot.iso", "deploy.iso"}, opts.ImageSize); err != nil {
		return env, err
	}
	cert, err := SelfSignedCert()
	if err != nil {
		return env, err
	}
	bridgeKube := cluster.Bridge
	if opts.WrapKube != nil {
		bridgeKube = rest.CopyConfig(cluster.Bridge)
		bridgeKube.Wrap(opts.WrapKube)
	}
	env.Bridge, err = service.Start(runCtx, service.Config{
		Kube:                 bridgeKube,
		Namespace:            cluster.BridgeNamespace,
		UsersSecret:          UsersSecret,
		SessionKeySecret:     SessionKeySecret,
		RevocationsConfigMap: RevocationsConfigMap,
		Listen:               opts.Listen,
		TLS:                  &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ServiceUUID:          "8f0e8d44-5a38-4c55-9a0a-6d6f2c1d2b01",
		Version:              "demo",
		MaxImageSize:         opts.MaxImageSize,
		ImageClaimSize:       opts.ImageClaimSize,
		ImageCAConfigMap:     ImageCAConfigMap,
		IPMI:                 opts.IPMI,
		SSHConsole:           opts.SSHConsole,
		Events:               opts.Events,
		Log:                  log.With("component", "bridge"),
	})
	if err != nil {
		return env, fmt.Errorf("start bridge: %w", err)
	}
	env.URL = "https://" + env.Bridge.Addr
	// As in a cluster where VMs exist before a Redfish client comes:
	// virt-controller's first writes to the sample VMs are done.
	if err := WaitSynced(ctx, dyn, VMNamespace, append(SampleVMNames(opts.VMs), FirmwareVMNames(opts.FirmwareVMs)...)...); err != nil {
		return env, err
	}
	return env, nil
}

// Stop tears everything down: bridge, simulator, image server, cluster.
func (e *Env) Stop() error {
	e.cancel()
	var errs []error
	if e.Bridge != nil {
		if err := e.Bridge.Wait(); err != nil {
			errs = append(errs, err)
		}
	}
	if e.Sim != nil {
		select {
		case err := <-e.simDone:
			if err != nil {
				errs = append(errs, fmt.Errorf("simulator: %w", err))
			}
		case <-time.After(10 * time.Second):
			errs = append(errs, errors.New("simulator did not stop within 10s"))
		}
	}
	if e.cdiDone != nil {
		select {
		case err := <-e.cdiDone:
			if err != nil {
				errs = append(errs, fmt.Errorf("simulated CDI node: %w", err))
			}
		case <-time.After(10 * time.Second):
			errs = append(errs, errors.New("simulated CDI node did not stop within 10s"))
		}
	}
	if e.Images != nil {
		errs = append(errs, e.Images.Close())
	}
	errs = append(errs, e.Cluster.Stop())
	return errors.Join(errs...)
}

// createAccounts writes the users Secret (an admin seeing every
// namespace, with a random password it returns, and a ReadOnly viewer
// with the same password) and the session key.
func createAccounts(ctx context.Context, kube kubernetes.Interface, namespace string) (string, error) {
	pw := make([]byte, 12)
	if _, err := rand.Read(pw); err != nil {
		return "", fmt.Errorf("generate demo password: %w", err)
	}
	password := hex.EncodeToString(pw)
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return "", fmt.Errorf("hash demo password: %w", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("generate session key: %w", err)
	}
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: UsersSecret, Namespace: namespace}, Data: map[string][]byte{
			AdminUser: hash, AdminUser + auth.SuffixNamespaces: []byte(auth.AllNamespaces),
			ViewerUser: hash, ViewerUser + auth.SuffixNamespaces: []byte(auth.AllNamespaces),
			ViewerUser + auth.SuffixRole: []byte(auth.RoleReadOnly),
		}},
		{ObjectMeta: metav1.ObjectMeta{Name: SessionKeySecret, Namespace: namespace}, Data: map[string][]byte{kubeauth.SessionKeyField: key}},
	} {
		if _, err := kube.CoreV1().Secrets(namespace).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			return "", fmt.Errorf("create secret %s/%s: %w", namespace, s.Name, err)
		}
	}
	return password, nil
}
