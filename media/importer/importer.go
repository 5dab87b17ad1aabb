package media

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// Importer is one way of filling a slot's PVC with its image: the bridge's
// import pod ([ImportMethodPod], importpod.go) or a CDI DataVolume
// ([ImportMethodCDI], importcdi.go). The [Reconciler] keeps the slot's
// state machine (Pending, Importing, Ready, Failed, the timeout, the import
// Secret); an Importer makes, reads and deletes its own objects, each
// labelled as the bridge's and owned by the VM.
//
// An import method is one file: a type implementing Importer and an init
// registering its factory with [registerImporter].
type Importer interface {
	ejector
	// method is the name recorded on the slot (system.MediaSlot.Method).
	method() string
	// refuses says why this method cannot import the slot's insert ("": it can).
	refuses(slot system.MediaSlot) string
	// watch starts the method's informers for the namespaces; every change
	// of one of its objects enqueues the owning VM.
	watch(ctx context.Context, namespaces []string, enqueue func(obj any)) ([]cache.InformerSynced, error)
	// observe says where the import of the slot's current insert stands,
	// deleting the method's objects of older inserts of the slot first.
	observe(ctx context.Context, t importTarget) (importStatus, error)
	// start creates what imports the current insert (the slot was recorded
	// Importing just before, on a fresh read); st is what observe said.
	start(ctx context.Context, t importTarget, st importStatus) error
	// finish deletes what an ended (or abandoned) import no longer needs;
	// the image's PVC stays.
	finish(ctx context.Context, t importTarget) error
	// settle deletes the method's objects of a slot that is not importing
	// and that its current state does not need.
	settle(ctx context.Context, t importTarget) error
	// orphans lists the method's cached objects owned by o, for the
	// collection of objects of slots no longer on the VM.
	orphans(o owner) ([]metav1.Object, error)
	// remove deletes one orphan.
	remove(ctx context.Context, obj metav1.Object) error
}

// ejector is the part of an [Importer] the Redfish verbs use: Eject runs
// on any replica, leader or not, so it reads live, not from the
// reconciler's informers. Each registered method has one
// ([registerImporter]), whether or not it is available in this cluster.
type ejector interface {
	// eject deletes the method's objects of the slot's imports that o owns
	// and that an ejected slot leaves behind: what the verbs delete at
	// once. The image's PVC and the import Secret are the verbs' own;
	// what the reconciler collects when it sees the slot gone it collects.
	eject(ctx context.Context, o owner, slot string) error
}

// Import methods (system.MediaSlot.Method, Options.ImportMethod).
const (
	ImportMethodAuto = "auto" // CDI where its DataVolume CRD is installed, else the pod
	ImportMethodPod  = "pod"
	ImportMethodCDI  = "cdi"
)

// importTarget is the slot whose import an [Importer] works on.
type importTarget struct {
	o    owner
	slot system.MediaSlot
}

// importState is where an import stands.
type importState int

const (
	importAbsent    importState = iota // nothing of this insert exists: start it
	importWaiting                      // something must go first (older objects being deleted)
	importRunning                      // the import is under way
	importSucceeded                    // the image is in the PVC
	importFailed                       // the import failed: reason says why
	importNeedsRoom                    // the image needs a larger PVC: bytes says how large
)

// importStatus is what [Importer.observe] found.
type importStatus struct {
	state importState
	// reason explains importFailed.
	reason string
	// bytes is the image's size (importSucceeded, importNeedsRoom; 0: unknown).
	bytes int64
	// percent is the progress of importRunning (0: unknown).
	percent int
	// recheck, if > 0, asks for another look at an importRunning import
	// this soon (its progress is read, not watched: podprogress.go).
	recheck time.Duration
	// started is when the import began (for the import duration metric).
	started time.Time
	// claimExists and claimSize describe the PVC an importAbsent import
	// writes into.
	claimExists bool
	claimSize   resource.Quantity
	// cacheExists says the slot's image cache entry exists (a slot with a
	// CacheKey).
	cacheExists bool
	// cdi is the next step of a CDI insert with a cache key (cachecdi.go).
	cdi cdiStep
}

// importerFactory builds an import method for a reconciler; ok is false
// when the method is not available in this cluster.
type importerFactory func(ctx context.Context, r *Reconciler) (imp Importer, ok bool, err error)

// ejectorFactory builds an import method's [ejector] on the verbs' client.
type ejectorFactory func(kube kubernetes.Interface) ejector

// registration is one registered import method.
type registration struct {
	method     string
	preference int
	factory    importerFactory
	ejector    ejectorFactory
}

// importerFactories are the registered import methods, most preferred first.
var importerFactories []registration

// registerImporter makes an import method available; with
// [ImportMethodAuto] the available method of the highest preference that
// does not refuse an insert imports it. e builds what [Service.Eject]
// deletes the method's objects with.
func registerImporter(method string, preference int, f importerFactory, e ejectorFactory) {
	importerFactories = append(importerFactories, registration{method, preference, f, e})
	slices.SortStableFunc(importerFactories, func(a, b registration) int { return b.preference - a.preference })
}

// ImportMethods lists the registered import methods, most preferred first.
func ImportMethods() []string {
	out := make([]string, len(importerFactories))
	for i, f := range importerFactories {
		out[i] = f.method
	}
	return out
}

// newEjectors builds every registered import method's [ejector] on kube:
// the slot being ejected may have been imported by any of them.
func newEjectors(kube kubernetes.Interface) []ejector {
	out := make([]ejector, len(importerFactories))
	for i, f := range importerFactories {
		out[i] = f.ejector(kube)
	}
	return out
}

// newImporters builds the import methods the reconciler may use: every
// available one under [ImportMethodAuto], else the one named (an error
// when it is unknown or not available).
func newImporters(ctx context.Context, r *Reconciler, want string) ([]Importer, error) {
	var out []Importer
	for _, f := range importerFactories {
		if want != ImportMethodAuto && want != f.method {
			continue
		}
		imp, ok, err := f.factory(ctx, r)
		if err != nil {
			return nil, fmt.Errorf("import method %s: %w", f.method, err)
		}
		if !ok {
			if want == f.method {
				return nil, fmt.Errorf("import method %s is not available in this cluster", f.method)
			}
			continue
		}
		out = append(out, imp)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("unknown import method %q (want %s or one of %v)", want, ImportMethodAuto, ImportMethods())
	}
	return out, nil
}

// importerFor picks the import method of the slot's insert: the one
// recorded on the slot, else the first that accepts it; nil and why when
// none can.
func (r *Reconciler) importerFor(slot system.MediaSlot) (Importer, string) {
	if slot.Method != "" {
		for _, imp := range r.importers {
			if imp.method() == slot.Method {
				return imp, ""
			}
		}
		return nil, fmt.Sprintf("import method %s of this insert is not available", slot.Method)
	}
	var why []string
	for _, imp := range r.importers {
		no := imp.refuses(slot)
		if no == "" {
			return imp, ""
		}
		why = append(why, imp.method()+": "+no)
	}
	return nil, fmt.Sprintf("no import method can import this insert (%v)", why)
}

// objects is a typed list (and its error) as metav1.Objects.
func objects[T metav1.Object](l []T, err error) ([]metav1.Object, error) {
	if err != nil {
		return nil, err
	}
	out := make([]metav1.Object, len(l))
	for i, obj := range l {
		out[i] = obj
	}
	return out, nil
}
