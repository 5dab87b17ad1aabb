package media

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// VMEvents delivers the key of a VM whenever it (or its VMI) changes,
// replaying the VMs already known; inventory.Inventory implements it.
type VMEvents interface {
	AddVMHandler(handle func(key system.Key)) error
}

// Options configure a [Reconciler].
type Options struct {
	Writer apply.Writer
	Kube   kubernetes.Interface
	Events VMEvents
	// Namespaces to watch for import pods and PVCs; empty means all.
	Namespaces []string
	// ImportMethod is how images are imported: [ImportMethodAuto] (the
	// default: a CDI DataVolume where CDI is installed, else the import
	// pod), or one of [ImportMethods].
	ImportMethod string
	// Dynamic reads and writes CDI DataVolumes; nil: no CDI.
	Dynamic dynamic.Interface
	// ImporterImage runs the import pods; default [DefaultImporterImage]
	// (the bridge's own image).
	ImporterImage string
	// AddrPolicy is what the import pods check on every connection (see
	// [AddrPolicy]); the zero value is the default policy.
	AddrPolicy AddrPolicy
	// StorageClass of the image PVCs; "" uses the cluster default.
	StorageClass string
	// DefaultSize is the size of an image PVC before the image's size is
	// known; an import pod that finds the image larger reports its size and
	// the PVC is re-created to fit. Default 8Gi.
	DefaultSize resource.Quantity
	// MaxImageSize in bytes fails the import of a larger image; default
	// [DefaultMaxImageSize], at most [MaxImageSizeLimit].
	MaxImageSize int64
	// ImportTimeout fails a Pending/Importing slot older than this; default 30m.
	ImportTimeout time.Duration
	// OrphanGrace is how old a PVC of an empty slot must be before it is
	// deleted (another replica's cache may not show its insert yet); default 30s.
	OrphanGrace time.Duration
	Workers     int          // default 2
	Log         *slog.Logger // the reconciler's logger; nil: the one Run's ctx carries (logctx)
	// ImageCacheBudget bounds the image cache entries of each namespace
	// (bytes of their PVC requests; 0: no bound): a new entry first evicts
	// the least recently used entries no import pod is using (cache.go).
	ImageCacheBudget int64
	// ObserveImport, if set, is called once per finished import with
	// "succeeded" or "failed" and the pod's age (the import duration), or
	// "timed_out" and the time since the slot entered its phase.
	ObserveImport func(result string, d time.Duration)
}

// DefaultImporterImage is the bridge's own image.
const DefaultImporterImage = "ghcr.io/redfish-bridge/redfish-bridge:latest"

// Stats are the reconciler's counters.
type Stats struct {
	PodsCreated       int64
	ClaimsCreated     int64
	ImportsReady      int64
	ImportsFailed     int64
	ImportsTimedOut   int64
	StalePodsDeleted  int64
	VolumesHealed     int64
	DisksWithoutVol   int64
	OrphanClaimsFreed int64
	// CacheEntriesEvicted counts image cache entries deleted for the budget.
	CacheEntriesEvicted int64
}

type counters struct {
	podsCreated, claimsCreated, ready, failed, timedOut, stale, healed, diskNoVol, orphans atomic.Int64
	evicted                                                                                atomic.Int64
}

// Reconciler drives virtual-media imports from watches. See the package doc.
type Reconciler struct {
	opts      Options
	log       *slog.Logger
	queue     workqueue.TypedRateLimitingInterface[system.Key]
	claims    []corelisters.PersistentVolumeClaimLister
	importers []Importer
	synced    []cache.InformerSynced
	c         counters

	mu       sync.Mutex
	reported map[system.Key]string // disk-without-volume already reported, by VM resourceVersion

	// cacheMu orders the image cache's evictions and the import pods
	// mounting entries (cache.go); usedMu guards cacheUsed, when an import
	// pod last used each entry (namespace/name), for the LRU.
	cacheMu   sync.Mutex
	usedMu    sync.Mutex
	cacheUsed map[string]time.Time
}

// NewReconciler checks opts and fills defaults. Informers start in Run.
func NewReconciler(opts Options) (*Reconciler, error) {
	if opts.Writer == nil || opts.Kube == nil || opts.Events == nil {
		return nil, fmt.Errorf("media reconciler: Writer, Kube and Events are required")
	}
	if opts.ImporterImage == "" {
		opts.ImporterImage = DefaultImporterImage
	}
	if opts.DefaultSize.IsZero() {
		opts.DefaultSize = resource.MustParse("8Gi")
	}
	if opts.ImportTimeout <= 0 {
		opts.ImportTimeout = 30 * time.Minute
	}
	if opts.OrphanGrace <= 0 {
		opts.OrphanGrace = 30 * time.Second
	}
	if opts.MaxImageSize == 0 {
		opts.MaxImageSize = DefaultMaxImageSize
	}
	if opts.MaxImageSize < 0 || opts.MaxImageSize > MaxImageSizeLimit {
		return nil, fmt.Errorf("media reconciler: MaxImageSize %d is not between 1 and %d", opts.MaxImageSize, MaxImageSizeLimit)
	}
	if opts.ImportMethod == "" {
		opts.ImportMethod = ImportMethodAuto
	}
	if opts.ImportMethod != ImportMethodAuto && !slices.Contains(ImportMethods(), opts.ImportMethod) {
		return nil, fmt.Errorf("media reconciler: unknown import method %q (want %s or one of %v)", opts.ImportMethod, ImportMethodAuto, ImportMethods())
	}
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	var log *slog.Logger // else Run's ctx's
	if opts.Log != nil {
		log = opts.Log.With("controller", "media")
	}
	return &Reconciler{
		opts: opts,
		log:  log,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[system.Key](),
			workqueue.TypedRateLimitingQueueConfig[system.Key]{Name: "media"}),
		reported:  map[system.Key]string{},
		cacheUsed: map[string]time.Time{},
	}, nil
}

// Stats returns a snapshot of the counters.
func (r *Reconciler) Stats() Stats {
	return Stats{
		PodsCreated: r.c.podsCreated.Load(), ClaimsCreated: r.c.claimsCreated.Load(),
		ImportsReady: r.c.ready.Load(), ImportsFailed: r.c.failed.Load(),
		ImportsTimedOut: r.c.timedOut.Load(), StalePodsDeleted: r.c.stale.Load(),
		VolumesHealed: r.c.healed.Load(), DisksWithoutVol: r.c.diskNoVol.Load(),
		OrphanClaimsFreed: r.c.orphans.Load(), CacheEntriesEvicted: r.c.evicted.Load(),
	}
}

// Run starts the pod and PVC informers, subscribes to VM events and works
// the queue until ctx ends. A Reconciler runs once. What it calls logs
// with its logger (controller=media), carried in ctx.
func (r *Reconciler) Run(ctx context.Context) error {
	if r.log == nil {
		r.log = logctx.From(ctx).With("controller", "media")
	}
	ctx = logctx.Into(ctx, r.log)
	defer r.queue.ShutDown()
	namespaces := r.opts.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	for _, ns := range namespaces {
		f := informers.NewSharedInformerFactoryWithOptions(r.opts.Kube, 0,
			informers.WithNamespace(ns),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = partOfSelector().String() }))
		claims := f.Core().V1().PersistentVolumeClaims()
		if _, err := claims.Informer().AddEventHandler(handlerFor(r.enqueueOwner)); err != nil {
			return fmt.Errorf("media reconciler: add handler: %w", err)
		}
		r.synced = append(r.synced, claims.Informer().HasSynced)
		r.claims = append(r.claims, claims.Lister())
		f.Start(ctx.Done())
		defer f.Shutdown()
	}
	importers, err := newImporters(ctx, r, r.opts.ImportMethod)
	if err != nil {
		return fmt.Errorf("media reconciler: %w", err)
	}
	methods := make([]string, len(importers))
	for i, imp := range importers {
		synced, err := imp.watch(ctx, namespaces, r.enqueueOwner)
		if err != nil {
			return fmt.Errorf("media reconciler: %w", err)
		}
		r.synced = append(r.synced, synced...)
		methods[i] = imp.method()
	}
	r.importers = importers
	if !cache.WaitForCacheSync(ctx.Done(), r.synced...) {
		return fmt.Errorf("media reconciler: caches did not sync: %w", context.Cause(ctx))
	}
	if err := r.opts.Events.AddVMHandler(func(k system.Key) { r.queue.Add(k) }); err != nil {
		return fmt.Errorf("media reconciler: %w", err)
	}
	r.log.InfoContext(ctx, "media reconciler started", "namespaces", namespaces, "importMethods", methods, "image", r.opts.ImporterImage)
	var wg sync.WaitGroup
	for range r.opts.Workers {
		wg.Go(func() {
			for r.next(ctx) {
			}
		})
	}
	<-ctx.Done()
	r.queue.ShutDown()
	wg.Wait()
	return nil
}

// QueueLen is the number of VMs waiting to be reconciled.
func (r *Reconciler) QueueLen() int { return r.queue.Len() }

func (r *Reconciler) enqueueOwner(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	if name, ok := ownerName(m); ok {
		r.queue.Add(system.Key{Namespace: m.GetNamespace(), Name: name})
	}
}

func (r *Reconciler) next(ctx context.Context) bool {
	key, quit := r.queue.Get()
	if quit {
		return false
	}
	defer r.queue.Done(key)
	after, err := r.reconcile(ctx, key)
	switch {
	case err != nil && ctx.Err() == nil:
		utilruntime.HandleErrorWithContext(ctx, err, "media reconcile", "vm", key.String())
		r.queue.AddRateLimited(key)
	case after > 0:
		r.queue.Forget(key)
		r.queue.AddAfter(key, after)
	default:
		r.queue.Forget(key)
	}
	return true
}

// listClaims returns the cached media PVCs owned by the VM.
func (r *Reconciler) listClaims(o owner) ([]*corev1.PersistentVolumeClaim, error) {
	var out []*corev1.PersistentVolumeClaim
	for _, l := range r.claims {
		pvcs, err := l.PersistentVolumeClaims(o.key.Namespace).List(partOfSelector())
		if err != nil {
			return nil, fmt.Errorf("list PVCs of %s: %w", o.key, err)
		}
		for _, p := range pvcs {
			if o.owns(p) && p.Labels[LabelComponent] == ComponentMedia {
				out = append(out, p)
			}
		}
	}
	return out, nil
}
