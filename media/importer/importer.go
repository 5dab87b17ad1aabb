package importer

import (
	"context"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// Importer is one way of filling a slot's PVC with its image: the bridge's
// import pod (package podimport) or a CDI DataVolume (package cdiimport).
// The media reconciler keeps the slot's state machine (Pending, Importing,
// Ready, Failed, the timeout, the import Secret); an Importer makes, reads
// and deletes its own objects, each labelled as the bridge's and owned by
// the VM.
//
// An import method is one package: a type implementing Importer and an
// init registering its factory with [Register]; media imports the package
// (one line in media/methods.go).
type Importer interface {
	Ejector
	// Method is the name recorded on the slot (system.MediaSlot.Method).
	Method() string
	// Refuses says why this method cannot import the slot's insert ("": it can).
	Refuses(slot system.MediaSlot) string
	// Watch starts the method's informers for the namespaces; every change
	// of one of its objects enqueues the owning VM.
	Watch(ctx context.Context, namespaces []string, enqueue func(obj any)) ([]cache.InformerSynced, error)
	// Observe says where the import of the slot's current insert stands,
	// deleting the method's objects of older inserts of the slot first.
	Observe(ctx context.Context, t Target) (Status, error)
	// Start creates what imports the current insert (the slot was recorded
	// Importing just before, on a fresh read); st is what Observe said.
	Start(ctx context.Context, t Target, st Status) error
	// Finish deletes what an ended (or abandoned) import no longer needs;
	// the image's PVC stays.
	Finish(ctx context.Context, t Target) error
	// Settle deletes the method's objects of a slot that is not importing
	// and that its current state does not need.
	Settle(ctx context.Context, t Target) error
	// Orphans lists the method's cached objects owned by o, for the
	// collection of objects of slots no longer on the VM.
	Orphans(o Owner) ([]metav1.Object, error)
	// Remove deletes one orphan.
	Remove(ctx context.Context, obj metav1.Object) error
}

// Ejector is the part of an [Importer] the Redfish verbs use: Eject runs
// on any replica, leader or not, so it reads live, not from the
// reconciler's informers. Each registered method has one ([Register]),
// whether or not it is available in this cluster.
type Ejector interface {
	// Eject deletes the method's objects of the slot's imports that o owns
	// and that an ejected slot leaves behind: what the verbs delete at
	// once. The image's PVC and the import Secret are the verbs' own;
	// what the reconciler collects when it sees the slot gone it collects.
	Eject(ctx context.Context, o Owner, slot string) error
}

// Target is the slot whose import an [Importer] works on.
type Target struct {
	Owner Owner
	Slot  system.MediaSlot
}

// State is where an import stands.
type State int

// The states of an import.
const (
	Absent    State = iota // nothing of this insert exists: start it
	Waiting                // something must go first (older objects being deleted)
	Running                // the import is under way
	Succeeded              // the image is in the PVC
	Failed                 // the import failed: Reason says why
	NeedsRoom              // the image needs a larger PVC: Bytes says how large
)

// Status is what [Importer.Observe] found.
type Status struct {
	State State
	// Reason explains Failed.
	Reason string
	// Bytes is the image's size (Succeeded, NeedsRoom; 0: unknown).
	Bytes int64
	// Percent is the progress of Running (0: unknown).
	Percent int
	// Recheck, if > 0, asks for another look at a Running import this
	// soon (its progress is read, not watched).
	Recheck time.Duration
	// Started is when the import began (for the import duration metric).
	Started time.Time
	// Next is the method's own note of an Absent import for its Start
	// (what exists, what to create); the reconciler only passes it on.
	Next any
}

// Factory builds an import method on what the reconciler shares; ok is
// false when the method is not available in this cluster.
type Factory func(ctx context.Context, d Deps) (imp Importer, ok bool, err error)

// EjectorFactory builds an import method's [Ejector] on the verbs' client.
type EjectorFactory func(kube kubernetes.Interface) Ejector

// Registration is one registered import method.
type Registration struct {
	Method string
	// Preference orders the methods under "auto": the available method
	// of the highest preference that does not refuse an insert imports it.
	Preference int
	New        Factory
	Ejector    EjectorFactory
}

// registered are the import methods, most preferred first.
var registered []Registration

// Register makes an import method available (from the method package's
// init). A method without a name, a factory or an ejector, or registered
// twice, panics: every test of the binary fails.
func Register(r Registration) {
	if r.Method == "" || r.New == nil || r.Ejector == nil {
		panic(fmt.Sprintf("import method %q: Register needs Method, New and Ejector", r.Method))
	}
	if slices.ContainsFunc(registered, func(o Registration) bool { return o.Method == r.Method }) {
		panic(fmt.Sprintf("import method %q registered twice", r.Method))
	}
	registered = append(registered, r)
	slices.SortStableFunc(registered, func(a, b Registration) int { return b.Preference - a.Preference })
}

// Registered lists the registered import methods, most preferred first.
func Registered() []Registration { return slices.Clone(registered) }

// Objects is a typed list (and its error) as metav1.Objects.
func Objects[T metav1.Object](l []T, err error) ([]metav1.Object, error) {
	if err != nil {
		return nil, err
	}
	out := make([]metav1.Object, len(l))
	for i, obj := range l {
		out[i] = obj
	}
	return out, nil
}

// HandlerFor enqueues the owner of every object an informer reports.
func HandlerFor(enqueue func(obj any)) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}
}
