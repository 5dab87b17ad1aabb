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
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/controller"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// VMEvents delivers the key of a VM whenever it (or its VMI) changes,
// replaying the VMs already known, until its handler is removed;
// inventory.Inventory implements it.
type VMEvents = controller.Handlers

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
	// Options are what the import methods read (image, address policy,
	// PVC class and size, image size and time limits, the image cache's
	// budget); NewReconciler fills their defaults.
	importer.Options
	// ObjectSecret keys the MACs of the image cache entries' digest
	// records (the session key, as [Service.SetObjectSecret]); without it
	// no entry is trusted: every insert through the cache downloads.
	ObjectSecret []byte
	// OrphanGrace is how old a PVC of an empty slot must be before it is
	// deleted (another replica's cache may not show its insert yet); default 30s.
	OrphanGrace time.Duration
	Workers     int          // default 2; unused with Controller
	Log         *slog.Logger // the reconciler's logger; nil: the one Run's ctx carries (logctx)
	// Controller is the engine Run runs its term on, shared by the
	// reconcilers of successive terms (its metrics are cumulative); nil: a
	// new one named "media" with Workers workers.
	Controller *controller.Controller
	// Counters are the import counters, shared by the reconcilers of
	// successive terms; nil: the reconciler's own.
	Counters *Counters
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
	// FailedClaimsReleased counts PVCs of failed imports deleted (release.go).
	FailedClaimsReleased int64
	// CacheEntriesEvicted counts image cache entries deleted for the budget.
	CacheEntriesEvicted int64
}

// Counters count what reconcilers did ([Counters.Stats]); the zero value
// is ready.
type Counters struct {
	podsCreated, claimsCreated, ready, failed, timedOut, stale, healed, diskNoVol, orphans atomic.Int64
	evicted, released                                                                      atomic.Int64
}

// Reconciler drives virtual-media imports from watches. See the package doc.
type Reconciler struct {
	opts      Options
	ctrl      *controller.Controller
	claims    []corelisters.PersistentVolumeClaimLister
	importers []Importer
	synced    []cache.InformerSynced
	c         *Counters

	mu       sync.Mutex
	reported map[system.Key]string // disk-without-volume already reported, by VM resourceVersion

	// cache is the image cache's lock and recency, shared by the import
	// methods (deps.go).
	cache *importer.Cache
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
		opts.MaxImageSize = download.DefaultMaxImageSize
	}
	if opts.MaxImageSize < 0 || opts.MaxImageSize > download.MaxImageSizeLimit {
		return nil, fmt.Errorf("media reconciler: MaxImageSize %d is not between 1 and %d", opts.MaxImageSize, download.MaxImageSizeLimit)
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
	if opts.Controller == nil {
		opts.Controller = controller.New("media", controller.Options{Workers: opts.Workers})
	}
	if opts.Counters == nil {
		opts.Counters = &Counters{}
	}
	return &Reconciler{
		opts:     opts,
		ctrl:     opts.Controller,
		c:        opts.Counters,
		reported: map[system.Key]string{},
		cache:    &importer.Cache{},
	}, nil
}

// Stats returns a snapshot of the reconciler's counters (of every term
// sharing them).
func (r *Reconciler) Stats() Stats { return r.c.Stats() }

// Stats returns a snapshot of the counters.
func (c *Counters) Stats() Stats {
	return Stats{
		PodsCreated: c.podsCreated.Load(), ClaimsCreated: c.claimsCreated.Load(),
		ImportsReady: c.ready.Load(), ImportsFailed: c.failed.Load(),
		ImportsTimedOut: c.timedOut.Load(), StalePodsDeleted: c.stale.Load(),
		VolumesHealed: c.healed.Load(), DisksWithoutVol: c.diskNoVol.Load(),
		OrphanClaimsFreed: c.orphans.Load(), CacheEntriesEvicted: c.evicted.Load(),
		FailedClaimsReleased: c.released.Load(),
	}
}

// Run runs one term on the controller engine: it starts the pod and PVC
// informers and the importers' watches, subscribes to VM events once they
// synced, and works the queue until ctx ends; then it unsubscribes and
// stops the informers. A Reconciler runs once. What it calls logs with its
// logger (controller=media), carried in ctx.
func (r *Reconciler) Run(ctx context.Context) error {
	log := r.opts.Log
	if log == nil {
		log = logctx.From(ctx)
	}
	ctx = logctx.Into(ctx, log.With("controller", "media"))
	if err := r.ctrl.Run(ctx, controller.ReconcileFunc(r.pass),
		controller.SourceFunc(r.watch), controller.VMEvents(r.opts.Events)); err != nil {
		return fmt.Errorf("media reconciler: %w", err)
	}
	return nil
}

// watch starts the term's informers (the import objects of the VMs, their
// changes enqueue the owning VM) and waits for them to sync; stop shuts
// them down.
func (r *Reconciler) watch(ctx context.Context, enqueue func(system.Key)) (stop func() error, err error) {
	var factories []informers.SharedInformerFactory
	shutdown := func() error {
		for _, f := range factories {
			f.Shutdown()
		}
		return nil
	}
	defer func() {
		if err != nil {
			_ = shutdown()
		}
	}()
	owners := func(obj any) { enqueueOwner(enqueue, obj) }
	namespaces := r.opts.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	for _, ns := range namespaces {
		f := informers.NewSharedInformerFactoryWithOptions(r.opts.Kube, 0,
			informers.WithNamespace(ns),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = importer.PartOfSelector().String() }))
		claims := f.Core().V1().PersistentVolumeClaims()
		if err := claims.Informer().SetTransform(importer.TrimCached()); err != nil {
			return nil, fmt.Errorf("PVCs: %w", err)
		}
		if _, err := claims.Informer().AddEventHandler(importer.HandlerFor(owners)); err != nil {
			return nil, fmt.Errorf("add handler: %w", err)
		}
		r.synced = append(r.synced, claims.Informer().HasSynced)
		r.claims = append(r.claims, claims.Lister())
		f.Start(ctx.Done())
		factories = append(factories, f)
	}
	importers, err := newImporters(ctx, r.deps(), r.opts.ImportMethod)
	if err != nil {
		return nil, err
	}
	methods := make([]string, len(importers))
	for i, imp := range importers {
		synced, err := imp.Watch(ctx, namespaces, owners)
		if err != nil {
			return nil, err
		}
		r.synced = append(r.synced, synced...)
		methods[i] = imp.Method()
	}
	r.importers = importers
	if !cache.WaitForCacheSync(ctx.Done(), r.synced...) {
		return nil, fmt.Errorf("caches did not sync: %w", context.Cause(ctx))
	}
	logctx.From(ctx).InfoContext(ctx, "media reconciler started", "namespaces", namespaces, "importMethods", methods, "image", r.opts.ImporterImage)
	return shutdown, nil
}

func enqueueOwner(enqueue func(system.Key), obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	if name, ok := importer.OwnerName(m); ok {
		enqueue(system.Key{Namespace: m.GetNamespace(), Name: name})
	}
}

// pass is one reconcile of one VM for the engine.
func (r *Reconciler) pass(ctx context.Context, key system.Key) (controller.Result, error) {
	after, err := r.reconcile(ctx, key)
	return controller.Result{RequeueAfter: after}, err
}

// listClaims returns the cached media PVCs owned by the VM.
func (r *Reconciler) listClaims(o owner) ([]*corev1.PersistentVolumeClaim, error) {
	var out []*corev1.PersistentVolumeClaim
	for _, l := range r.claims {
		pvcs, err := l.PersistentVolumeClaims(o.Key.Namespace).List(importer.PartOfSelector())
		if err != nil {
			return nil, fmt.Errorf("list PVCs of %s: %w", o.Key, err)
		}
		for _, p := range pvcs {
			if o.Owns(p) && p.Labels[LabelComponent] == ComponentMedia {
				out = append(out, p)
			}
		}
	}
	return out, nil
}
