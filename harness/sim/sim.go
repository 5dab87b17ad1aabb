package sim

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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
)

// Defaults for [Options] fields whose zero value means something else.
const (
	// DefaultStartDelay and DefaultStopDelay are realistic small delays for
	// demos; the zero value of the Options fields means "immediate".
	DefaultStartDelay = 50 * time.Millisecond
	DefaultStopDelay  = 50 * time.Millisecond
)

// Options configures a [Simulator].
type Options struct {
	// Namespaces to watch; empty means all namespaces.
	Namespaces []string
	// StartDelay is how long a VMI handed to the node (Scheduled) takes to
	// run. Zero means immediate; see [DefaultStartDelay].
	StartDelay time.Duration
	// StopDelay is how long a deleted VMI stays Running before its domain
	// has stopped (VMI Succeeded), at most the VMI's
	// spec.terminationGracePeriodSeconds (0: immediate). Zero means
	// immediate.
	StopDelay time.Duration
	// DataDir is where imported images land:
	// <DataDir>/<namespace>/<pvc>/disk.img. Empty means a new temporary
	// directory.
	DataDir string
	// Log receives what the simulator does; nil means slog.Default().
	Log *slog.Logger
}

// Counters counts what the simulator did since it started.
type Counters struct {
	VMIsStarted      int64 // VMIs whose domain the node side started (Running)
	VMIsFailed       int64 // VMIs the node side failed (corrupt specs)
	ImportsStarted   int64
	ImportsSucceeded int64
	ImportsFailed    int64
	// ImportsFromCache counts succeeded imports whose image was copied
	// from the image cache entry (revalidated, not downloaded).
	ImportsFromCache int64
	// ImageChecks counts import pods that ran --head-only (the CDI image
	// cache's revalidation; not imports).
	ImageChecks int64
	// Clones counts DataVolumes cloned from a PVC (source.pvc) and
	// CloneBytes the bytes those clones copied.
	Clones, CloneBytes  int64
	MultiAttachRefusals int64 // import pods refused (counted once per pod)
	PVCsBound           int64
	// LaunchersHeld counts deleted virt-launcher pods held for their
	// guest's stop (once per VMI; see [Simulator.LauncherHeld]).
	LaunchersHeld int64
	// HotplugSteps counts virt-handler's hotplug steps the simulator
	// played: a volume attached (Ready) or unmounted (hotplug.go).
	HotplugSteps int64
}

// Corruption is one observation of a VM whose template pairs a volume with
// no disk (or a non-CD-ROM disk with no volume): the production crash loop.
// It is recorded when the VM turns corrupt (or its problems change), with
// the generation first seen so; later writes that keep the same problems
// do not add another.
type Corruption struct {
	Time       time.Time
	VM         string // namespace/name
	UID        types.UID
	Generation int64
	Problems   []string
}

// Simulator plays virt-handler, the scheduler and the kubelet; see the
// package documentation.
type Simulator struct {
	opts Options
	log  *slog.Logger
	dyn  dynamic.Interface
	kube kubernetes.Interface

	caches  map[string]*nsCaches // by namespace; "" = all namespaces
	queues  queues
	started atomic.Bool

	vmisStarted, vmisFailed                  atomic.Int64
	importsStarted, importsOK, importsFailed atomic.Int64
	importsFromCache, imageChecks            atomic.Int64
	clones, cloneBytes                       atomic.Int64
	multiAttachRefusals, pvcsBound           atomic.Int64
	launchersHeld                            atomic.Int64
	hotplugs                                 atomic.Int64
	mu                                       sync.Mutex
	corruptions                              []Corruption
	corruptSeen                              map[types.UID]string // VM -> problems last recorded
	phaseSince                               map[types.UID]phaseMark
	stopSeen                                 map[types.UID]time.Time
	launcherHeld                             map[types.UID]bool     // VMIs whose deleted launcher pod was held for the guest's stop
	teardowns                                map[types.UID]teardown // deleted launcher pods (teardown.go)
	downloads                                map[types.UID]context.CancelFunc
	finished                                 map[types.UID]bool // imports done, until the pod is gone
	refused                                  map[types.UID]bool // import pods already told Multi-Attach
	missingPVC                               map[types.UID]bool // import pods already told the PVC is missing
	missingVolume                            map[types.UID]bool // import pods already told a Secret or ConfigMap is missing
	downloadWG                               sync.WaitGroup
	clonesHeld                               chan struct{}  // HoldClones' gate
	podSynced                                sync.Map       // import pod key -> resourceVersion of its last finished sync
	kubelet                                  kubelet        // the import pods' logs (kubelet.go)
	console                                  *consoleServer // virt-handler's console server (consoleserver.go); nil without virt-api
}

type phaseMark struct {
	phase string
	at    time.Time
}

// New returns a simulator for the cluster at cfg. Nothing runs before
// [Simulator.Run].
func New(cfg *rest.Config, opts Options) (*Simulator, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 500, 1000 // the simulator stands for a whole cluster's controllers
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("sim: dynamic client: %w", err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("sim: kubernetes client: %w", err)
	}
	if opts.DataDir == "" {
		dir, err := os.MkdirTemp("", "redfish-bridge-sim-")
		if err != nil {
			return nil, fmt.Errorf("sim: data dir: %w", err)
		}
		opts.DataDir = dir
	}
	s := &Simulator{
		opts:          opts,
		log:           opts.Log,
		dyn:           dyn,
		kube:          kube,
		corruptSeen:   map[types.UID]string{},
		phaseSince:    map[types.UID]phaseMark{},
		stopSeen:      map[types.UID]time.Time{},
		launcherHeld:  map[types.UID]bool{},
		teardowns:     map[types.UID]teardown{},
		downloads:     map[types.UID]context.CancelFunc{},
		finished:      map[types.UID]bool{},
		refused:       map[types.UID]bool{},
		missingPVC:    map[types.UID]bool{},
		missingVolume: map[types.UID]bool{},
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.log = s.log.With("component", "sim")
	s.queues = newQueues()
	s.caches = s.newCaches()
	return s, nil
}

// Run starts the informers and workers and blocks until ctx is done. It
// can be called once.
func (s *Simulator) Run(ctx context.Context) error {
	if !s.started.CompareAndSwap(false, true) {
		return fmt.Errorf("sim: Run called twice")
	}
	if err := s.checkVirtController(ctx); err != nil {
		s.queues.shutDown()
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	if err := s.startCaches(ctx); err != nil {
		s.queues.shutDown()
		if ctx.Err() != nil {
			return nil // stopped before it started: not a failure
		}
		return err
	}
	if err := s.serveKubelet(ctx); err != nil {
		s.queues.shutDown()
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	if err := s.serveConsoles(ctx); err != nil { // consoleserver.go
		s.queues.shutDown()
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	if err := s.serveTokenWebhook(ctx); err != nil { // satoken.go
		s.queues.shutDown()
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	var wg sync.WaitGroup
	s.queues.run(ctx, &wg, s)
	s.log.InfoContext(ctx, "simulator running", "namespaces", s.opts.Namespaces, "dataDir", s.opts.DataDir)
	<-ctx.Done()
	s.queues.shutDown()
	wg.Wait()
	s.mu.Lock()
	for _, cancel := range s.downloads {
		cancel()
	}
	s.mu.Unlock()
	s.downloadWG.Wait()
	return nil
}

// ImagePath is where the image imported into PVC namespace/pvc lands.
func (s *Simulator) ImagePath(namespace, pvc string) string {
	return filepath.Join(s.opts.DataDir, namespace, pvc, "disk.img")
}

// Corruptions returns every corruption observed so far, oldest first.
func (s *Simulator) Corruptions() []Corruption {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Corruption, len(s.corruptions))
	copy(out, s.corruptions)
	return out
}

// Counters returns a snapshot of the counters.
func (s *Simulator) Counters() Counters {
	return Counters{
		VMIsStarted:         s.vmisStarted.Load(),
		VMIsFailed:          s.vmisFailed.Load(),
		ImportsStarted:      s.importsStarted.Load(),
		ImportsSucceeded:    s.importsOK.Load(),
		ImportsFromCache:    s.importsFromCache.Load(),
		ImageChecks:         s.imageChecks.Load(),
		Clones:              s.clones.Load(),
		CloneBytes:          s.cloneBytes.Load(),
		ImportsFailed:       s.importsFailed.Load(),
		MultiAttachRefusals: s.multiAttachRefusals.Load(),
		PVCsBound:           s.pvcsBound.Load(),
		LaunchersHeld:       s.launchersHeld.Load(),
		HotplugSteps:        s.hotplugs.Load(),
	}
}

// checkVirtController checks that a virt-controller holds its leader lease
// in the cluster: the simulator is only the node side, and without
// virt-controller no VMI would ever come to it. (testcluster.Start returns
// once virt-controller leads; the lease outlives its restarts.)
func (s *Simulator) checkVirtController(ctx context.Context) error {
	lease, err := s.kube.CoordinationV1().Leases(testcluster.KubeVirtNamespace).Get(ctx, virtControllerLease, metav1.GetOptions{})
	if err == nil && (lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "") {
		err = errors.New("lease has no holder")
	}
	if err != nil {
		return fmt.Errorf("sim: no virt-controller leads the cluster (lease %s/%s: %w); start the test cluster with VirtController", testcluster.KubeVirtNamespace, virtControllerLease, err)
	}
	return nil
}

// virtControllerLease is virt-controller's leader election lease.
const virtControllerLease = "virt-controller"
