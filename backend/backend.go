package backend

import (
	"context"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/inventory"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/redfish"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Backend implements redfish.Systems, redfish.Media, redfish.MediaTrust,
// redfish.Power and redfish.Boot.
type Backend struct {
	inv   *inventory.Inventory
	w     apply.Writer
	media *media.Service
	power PowerVerbs
	slots []string
}

// New returns a Backend. slots are the virtual-media slot ids every system
// offers; nil means media.DefaultSlots (a CD and a USB stick).
func New(inv *inventory.Inventory, w apply.Writer, m *media.Service, p PowerVerbs, slots []string) *Backend {
	if len(slots) == 0 {
		slots = media.DefaultSlots
	}
	return &Backend{inv: inv, w: w, media: m, power: p, slots: slots}
}

// Backends returns the four redfish backends plus the given authenticator
// and EventService.
func (b *Backend) Backends(a *auth.Authenticator, ev redfish.Events) redfish.Backends {
	return redfish.Backends{Systems: b, Power: b, Boot: b, Media: b, Trust: b, Events: ev, Auth: a}
}

// List implements redfish.Systems: the VMs in scope, sorted by id. Its
// views are decoded from cached VMs without their owners, so their
// BootModes omit Legacy on a VM with efi set; the service lists systems
// only for their tasks (Get's views, which a System shows, carry them).
func (b *Backend) List(ctx context.Context, scope auth.Scope) ([]redfish.SystemView, error) {
	vms, err := b.vmsInScope(scope)
	if err != nil {
		return nil, err
	}
	out := make([]redfish.SystemView, 0, len(vms))
	for _, id := range vms {
		key := system.Key{Namespace: id.GetNamespace(), Name: id.GetName()}
		obj, err := b.inv.VM(key)
		if apierrors.IsNotFound(err) {
			continue // deleted since listed
		}
		if err != nil {
			return nil, translate(fmt.Errorf("list systems: %w", err))
		}
		if r, ok := b.w.(ownWrites); ok {
			obj = r.Resolved(key, obj) // a task is found right after its insert's 202
		}
		vmi, _ := b.inv.VMI(key)
		out = append(out, b.view(apply.Decode(ctx, key, obj, vmi)))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key.ID() < out[j].Key.ID() })
	return out, nil
}

// ownWrites is the Writer that remembers its own writes while the cache is
// behind them (apply.Client).
type ownWrites interface {
	Resolved(key system.Key, obj *unstructured.Unstructured) *unstructured.Unstructured
}

// Members implements redfish.Systems: the keys and labels of the VMs in
// scope, sorted by id, read from the cache without building views.
func (b *Backend) Members(ctx context.Context, scope auth.Scope) ([]redfish.Member, error) {
	vms, err := b.vmsInScope(scope)
	if err != nil {
		return nil, err
	}
	out := make([]redfish.Member, 0, len(vms))
	for _, obj := range vms {
		out = append(out, redfish.Member{Key: system.Key{Namespace: obj.GetNamespace(), Name: obj.GetName()}, Labels: obj.GetLabels()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key.ID() < out[j].Key.ID() })
	return out, nil
}

// vmsInScope lists the identities of the cached VMs of the scope's
// namespaces that match its selector (shared with the cache: do not modify
// them).
func (b *Backend) vmsInScope(scope auth.Scope) ([]metav1.Object, error) {
	sel := scope.Selector
	if sel == nil {
		sel = labels.Everything()
	}
	namespaces := scope.Namespaces
	if scope.AllowsNamespace(auth.AllNamespaces) {
		namespaces = []string{""}
	}
	var out []metav1.Object
	for _, ns := range namespaces {
		vms, err := b.inv.ListVMs(ns, sel)
		if err != nil {
			return nil, translate(fmt.Errorf("list systems: %w", err))
		}
		out = append(out, vms...)
	}
	return out, nil
}

// Membership implements redfish.Systems: [inventory.Inventory.Membership].
func (b *Backend) Membership() uint64 { return b.inv.Membership() }

// Revision implements redfish.Systems: the revision of the VM read Get
// would make now ([apply.Client.Revision]), "" when the Writer cannot say.
func (b *Backend) Revision(key system.Key) string {
	if r, ok := b.w.(revisions); ok {
		return r.Revision(key)
	}
	return ""
}

// revisions is the Writer that tells the revision of its next read
// without reading (apply.Client).
type revisions interface {
	Revision(key system.Key) string
}

// Get implements redfish.Systems.
func (b *Backend) Get(ctx context.Context, key system.Key) (redfish.SystemView, error) {
	vm, err := b.w.Read(ctx, key)
	if err != nil {
		return redfish.SystemView{}, translate(fmt.Errorf("read system %s: %w", key, err))
	}
	return b.view(vm), nil
}

func (b *Backend) view(vm *apply.VM) redfish.SystemView {
	return View(vm, b.slots, b.inv.PVC)
}

// Insert implements redfish.Media.
func (b *Backend) Insert(ctx context.Context, key system.Key, slot string, req system.MediaInsert) (system.MediaSlot, error) {
	s, err := b.media.Insert(ctx, key, slot, req)
	if err != nil {
		return s, translate(err)
	}
	b.awaitSlot(ctx, key, func(vm *apply.VM) bool { return vm.Slots[slot].InsertID == s.InsertID })
	return s, nil
}

// Eject implements redfish.Media.
func (b *Backend) Eject(ctx context.Context, key system.Key, slot string) error {
	if err := b.media.Eject(ctx, key, slot); err != nil {
		return translate(err)
	}
	b.awaitSlot(ctx, key, func(vm *apply.VM) bool { return vm.Slots[slot].Phase == system.MediaEmpty })
	return nil
}

// awaitSlot waits (bounded) until the cache shows what a media write did,
// so the client's next GET (or its task's) reads its own change back.
func (b *Backend) awaitSlot(ctx context.Context, key system.Key, done func(*apply.VM) bool) {
	if a, ok := b.w.(awaiter); ok {
		a.AwaitCache(ctx, key, done)
	}
}

// awaiter is the Writer that waits, woken by the cache's change events,
// until a read shows a write (apply.Client); without it a write answers
// at once.
type awaiter interface {
	AwaitCache(ctx context.Context, key system.Key, done func(*apply.VM) bool)
	AwaitVersion(ctx context.Context, key system.Key, written *apply.VM)
}

// Trust implements redfish.MediaTrust.
func (b *Backend) Trust(ctx context.Context, key system.Key, slot string) (system.MediaTrust, error) {
	t, err := b.media.Trust(ctx, key, slot)
	return t, translate(err)
}

// SetVerifyCertificate implements redfish.MediaTrust.
func (b *Backend) SetVerifyCertificate(ctx context.Context, key system.Key, slot string, verify bool) error {
	return translate(b.media.SetVerifyCertificate(ctx, key, slot, verify))
}

// AddCertificate implements redfish.MediaTrust.
func (b *Backend) AddCertificate(ctx context.Context, key system.Key, slot, pem string) (system.MediaCertificate, error) {
	c, err := b.media.AddCertificate(ctx, key, slot, pem)
	return c, translate(err)
}

// DeleteCertificate implements redfish.MediaTrust.
func (b *Backend) DeleteCertificate(ctx context.Context, key system.Key, slot, id string) error {
	return translate(b.media.DeleteCertificate(ctx, key, slot, id))
}
