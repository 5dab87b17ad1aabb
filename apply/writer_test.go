package apply

import (
	"errors"
	"strings"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestWriter runs every Writer test on a real kube-apiserver, once per CRD
// variant (one cluster each).
func TestWriter(t *testing.T) {
	forEachVariant(t, func(t *testing.T, c *testcluster.Cluster) {
		t.Run("detect mode", func(t *testing.T) { testDetectMode(t, newEnv(t, c)) })
		t.Run("lifecycle ownership", func(t *testing.T) { testLifecycle(t, newEnv(t, c)) })
		t.Run("outside writers keep their fields", func(t *testing.T) { testOutsideWriters(t, newEnv(t, c)) })
		t.Run("stale precondition retries", func(t *testing.T) { testStale(t, newEnv(t, c)) })
		t.Run("a refusal is not a failure", func(t *testing.T) { testRefusalCounted(t, newEnv(t, c)) })
		t.Run("relayout after late CD-ROM", func(t *testing.T) { testRelayout(t, newEnv(t, c)) })
		t.Run("control: eject without releasing boot orders", func(t *testing.T) { testEjectControl(t, newEnv(t, c)) })
	})
}

func testDetectMode(t *testing.T, e *env) {
	want := map[string]Mode{"stock": ModeAtomic, "maplist": ModeMap}[string(e.cluster.Variant)]
	if e.mode != want {
		t.Errorf("DetectMode on %s CRDs = %s, want %s", e.cluster.Variant, e.mode, want)
	}
}

func setSlot(s system.MediaSlot) MediaChange {
	return func(_ *VM, slots map[string]system.MediaSlot) error {
		slots[s.Slot] = s
		return nil
	}
}

func ejectSlot(slot string) MediaChange {
	return func(_ *VM, slots map[string]system.MediaSlot) error {
		delete(slots, slot)
		return nil
	}
}

func setBoot(o system.BootOverride) BootChange {
	return func(_ *VM, b *system.BootOverride) error {
		*b = o
		return nil
	}
}

// noErr returns a sink for a Writer call's results that fails t on error:
// noErr(t)(w.Boot(...)).
func noErr(t *testing.T) func(*VM, error) {
	t.Helper()
	return func(_ *VM, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// testLifecycle walks insert, import done, boot Cd Once, power on, eject,
// revert, and after each step compares disks and every bridge manager's
// fields with the ownership table in doc.go.
func testLifecycle(t *testing.T, e *env) {
	ctx := t.Context()
	w := New(e.bridge, nil, e.mode, Options{})
	key := e.createVM(t, "vm1")
	cd0 := DiskName("cd0")
	mediaAnn := annotationPath(AnnotationMediaPrefix + "cd0")
	bootAnn := annotationPath(AnnotationBoot)
	disksMap := func(fields ...string) []string {
		var out []string
		for _, f := range fields {
			out = append(out, elem(kubevirt.Disks, cd0, f))
		}
		return out
	}
	bootOrders := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, elem(kubevirt.Disks, n, "bootOrder"), elem(kubevirt.Disks, n, "name"))
		}
		return out
	}
	mediaFields := map[Mode][]string{
		ModeMap: append(append(disksMap("cdrom.bus", "cdrom.readonly", "name"), mediaAnn),
			elem(kubevirt.Volumes, cd0, "name"), elem(kubevirt.Volumes, cd0, "persistentVolumeClaim.claimName")),
		ModeAtomic: {mediaAnn, path(kubevirt.Disks), path(kubevirt.Volumes)},
	}
	type check struct {
		disks map[string]string
		owned map[string][]string // manager -> leaf paths
	}
	steps := []struct {
		name string
		do   func() (*VM, error)
		want map[Mode]check
	}{
		{"insert pending", func() (*VM, error) {
			return w.Media(ctx, key, setSlot(system.MediaSlot{Slot: "cd0", Image: "http://x/boot.iso", Phase: system.MediaPending, InsertID: "i1"}))
		}, map[Mode]check{
			ModeMap:    {map[string]string{"rootdisk": "disk/0", "cloudinit": "disk/0"}, map[string][]string{ManagerMedia: {mediaAnn}}},
			ModeAtomic: {map[string]string{"rootdisk": "disk/0", "cloudinit": "disk/0"}, map[string][]string{ManagerMedia: {mediaAnn}}},
		}},
		{"import ready", func() (*VM, error) {
			return w.Media(ctx, key, setSlot(system.MediaSlot{Slot: "cd0", Image: "http://x/boot.iso", Phase: system.MediaReady, InsertID: "i1", ClaimName: "pvc-i1"}))
		}, map[Mode]check{
			ModeMap:    {map[string]string{"rootdisk": "disk/0", "cloudinit": "disk/0", cd0: "cdrom/0"}, map[string][]string{ManagerMedia: mediaFields[ModeMap]}},
			ModeAtomic: {map[string]string{"rootdisk": "disk/0", "cloudinit": "disk/0", cd0: "cdrom/0"}, map[string][]string{ManagerMedia: mediaFields[ModeAtomic]}},
		}},
		{"boot cd once", func() (*VM, error) {
			return w.Boot(ctx, key, setBoot(system.BootOverride{Target: system.BootCd, Enabled: system.BootOnce}))
		}, map[Mode]check{
			ModeMap: {map[string]string{"rootdisk": "disk/2", "cloudinit": "disk/3", cd0: "cdrom/1"}, map[string][]string{
				ManagerMedia: mediaFields[ModeMap],
				ManagerBoot:  append(bootOrders("cloudinit", cd0, "rootdisk"), bootAnn, path(kubevirt.RebootPolicy)),
			}},
			ModeAtomic: {map[string]string{"rootdisk": "disk/2", "cloudinit": "disk/3", cd0: "cdrom/1"}, map[string][]string{
				ManagerMedia: {mediaAnn, path(kubevirt.Volumes)},
				ManagerBoot:  {bootAnn, path(kubevirt.Disks), path(kubevirt.RebootPolicy)},
			}},
		}},
		{"power on", func() (*VM, error) {
			return w.Power(ctx, key, func(_ *VM, p *PowerChange) error { p.RunStrategy = "RerunOnFailure"; return nil })
		}, map[Mode]check{
			ModeMap: {map[string]string{"rootdisk": "disk/2", "cloudinit": "disk/3", cd0: "cdrom/1"}, map[string][]string{
				ManagerPower: {path(kubevirt.RunStrategy)},
			}},
			ModeAtomic: {map[string]string{"rootdisk": "disk/2", "cloudinit": "disk/3", cd0: "cdrom/1"}, map[string][]string{
				ManagerPower: {path(kubevirt.RunStrategy)},
			}},
		}},
		{"eject", func() (*VM, error) { return w.Media(ctx, key, ejectSlot("cd0")) }, map[Mode]check{
			// The drive stays, empty, with its bootOrder (build_hotplug.go).
			ModeMap: {map[string]string{"rootdisk": "disk/2", "cloudinit": "disk/3", cd0: "cdrom/1"}, map[string][]string{
				ManagerMedia: disksMap("cdrom.bus", "cdrom.readonly", "name"),
				ManagerBoot:  append(bootOrders("cloudinit", cd0, "rootdisk"), bootAnn, path(kubevirt.RebootPolicy)),
			}},
			ModeAtomic: {map[string]string{"rootdisk": "disk/2", "cloudinit": "disk/3", cd0: "cdrom/1"}, map[string][]string{
				ManagerMedia: {path(kubevirt.Disks), path(kubevirt.Volumes)},
				ManagerBoot:  {bootAnn, path(kubevirt.Disks), path(kubevirt.RebootPolicy)},
			}},
		}},
		{"revert override", func() (*VM, error) {
			return w.Boot(ctx, key, setBoot(system.BootOverride{Target: system.BootNone, Enabled: system.BootDisabled}))
		}, map[Mode]check{
			ModeMap: {map[string]string{"rootdisk": "disk/0", "cloudinit": "disk/0", cd0: "cdrom/0"}, map[string][]string{
				ManagerMedia: disksMap("cdrom.bus", "cdrom.readonly", "name"), ManagerBoot: {bootAnn}, ManagerPower: {path(kubevirt.RunStrategy)},
			}},
			ModeAtomic: {map[string]string{"rootdisk": "disk/0", "cloudinit": "disk/0", cd0: "cdrom/0"}, map[string][]string{
				ManagerMedia: {path(kubevirt.Volumes)}, ManagerBoot: {bootAnn, path(kubevirt.Disks)}, ManagerPower: {path(kubevirt.RunStrategy)},
			}},
		}},
	}
	for _, s := range steps {
		if _, err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		want := s.want[e.mode]
		if diff := cmp.Diff(want.disks, e.disks(t, key)); diff != "" {
			t.Errorf("%s: disks (-want +got):\n%s", s.name, diff)
		}
		for manager, paths := range want.owned {
			got := e.ownedBy(t, key, manager)
			if diff := cmp.Diff(sorted(paths), got); diff != "" {
				t.Errorf("%s: fields of %s (-want +got):\n%s", s.name, manager, diff)
			}
		}
	}
	// The author's runStrategy went to redfish-power (forced); its disks
	// and volumes stay: rootdisk and cloudinit only.
	if diff := cmp.Diff([]string{"rootdisk", "cloudinit"}, e.volumes(t, key)); diff != "" {
		t.Errorf("volumes after eject (-want +got):\n%s", diff)
	}
	for _, p := range e.ownedBy(t, key, "test-author") {
		if p == path(kubevirt.RunStrategy) {
			t.Errorf("test-author still owns %s after a forced power apply", p)
		}
	}
}

func sorted(in []string) []string {
	out := append([]string(nil), in...)
	if len(out) == 0 {
		return nil
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// testOutsideWriters: another SSA manager and a kubectl-edit-like Update
// (including a new disk+volume in between the bridge's writes) keep their
// fields and values through the bridge's whole cycle.
func testOutsideWriters(t *testing.T, e *env) {
	ctx := t.Context()
	w := New(e.bridge, nil, e.mode, Options{})
	key := e.createVM(t, "vm2")
	gitops := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
		"metadata": map[string]any{"name": key.Name, "namespace": key.Namespace},
		"spec":     map[string]any{"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"team": "blue"}}}},
	}}
	if _, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(key.Namespace).Apply(ctx, key.Name, gitops, metav1.ApplyOptions{FieldManager: "gitops"}); err != nil {
		t.Fatalf("gitops apply: %v", err)
	}
	noErr(t)(w.Media(ctx, key, setSlot(system.MediaSlot{Slot: "cd0", Image: "http://x/a.iso", Phase: system.MediaReady, InsertID: "i1", ClaimName: "pvc-a"})))
	// kubectl edit: more memory, and a data disk with its volume.
	u := e.get(t, key)
	if err := unstructured.SetNestedField(u.Object, "256Mi", "spec", "template", "spec", "domain", "resources", "requests", "memory"); err != nil {
		t.Fatal(err)
	}
	disks := append(list(u, kubevirt.Disks), map[string]any{"name": "data", "disk": map[string]any{"bus": "virtio"}})
	vols := append(list(u, kubevirt.Volumes), map[string]any{"name": "data", "emptyDisk": map[string]any{"capacity": "1Gi"}})
	_ = unstructured.SetNestedSlice(u.Object, toSlice(disks), kubevirt.Disks...)
	_ = unstructured.SetNestedSlice(u.Object, toSlice(vols), kubevirt.Volumes...)
	if _, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(key.Namespace).Update(ctx, u, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatalf("kubectl-edit update: %v", err)
	}
	noErr(t)(w.Boot(ctx, key, setBoot(system.BootOverride{Target: system.BootCd, Enabled: system.BootOnce})))
	noErr(t)(w.Power(ctx, key, func(_ *VM, p *PowerChange) error { p.RunStrategy = "RerunOnFailure"; return nil }))
	noErr(t)(w.Media(ctx, key, ejectSlot("cd0")))
	noErr(t)(w.Boot(ctx, key, setBoot(system.BootOverride{Target: system.BootHdd, Enabled: system.BootContinuous})))

	got := e.get(t, key)
	team, _, _ := unstructured.NestedString(got.Object, "spec", "template", "metadata", "labels", "team")
	mem, _, _ := unstructured.NestedString(got.Object, "spec", "template", "spec", "domain", "resources", "requests", "memory")
	if team != "blue" || mem != "256Mi" {
		t.Errorf("outside values: team=%q memory=%q, want blue, 256Mi", team, mem)
	}
	if diff := cmp.Diff([]string{"rootdisk", "cloudinit", "data"}, e.volumes(t, key)); diff != "" {
		t.Errorf("volumes (-want +got):\n%s", diff)
	}
	wantDisks := map[string]string{"rootdisk": "disk/1", "cloudinit": "disk/2", "data": "disk/3", DiskName("cd0"): "cdrom/4"}
	if diff := cmp.Diff(wantDisks, e.disks(t, key)); diff != "" {
		t.Errorf("disks after Hdd (-want +got):\n%s", diff)
	}
	owned, err := Owned(got)
	if err != nil {
		t.Fatal(err)
	}
	if !owned["gitops"].Has(mustPath(t, ".spec.template.metadata.labels.team")) {
		t.Errorf("gitops lost spec.template.metadata.labels.team; owns %v", Paths(owned["gitops"]))
	}
	if !owned["kubectl-edit"].Has(mustPath(t, ".spec.template.spec.domain.resources.requests.memory")) {
		t.Errorf("kubectl-edit lost memory; owns %v", Paths(owned["kubectl-edit"]))
	}
}

// staleCache serves a fixed, outdated object.
type staleCache struct{ vm *unstructured.Unstructured }

func (s staleCache) VM(system.Key) (*unstructured.Unstructured, error) { return s.vm, nil }
func (s staleCache) VMI(key system.Key) (*unstructured.Unstructured, error) {
	return nil, errors.New("no VMI in this test")
}

// testStale: a read older than the server's object gets 409 from the
// precondition, and the retry from a live read applies on top of the newer
// object without losing the concurrent change.
func testStale(t *testing.T, e *env) {
	ctx := t.Context()
	key := e.createVM(t, "vm3")
	stale := e.get(t, key)
	patch := []byte(`{"metadata":{"labels":{"touched":"yes"}}}`)
	if _, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(key.Namespace).Patch(ctx, key.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "other"}); err != nil {
		t.Fatal(err)
	}
	w := New(e.bridge, staleCache{stale}, e.mode, Options{})
	vm, err := w.Boot(ctx, key, setBoot(system.BootOverride{Target: system.BootHdd, Enabled: system.BootContinuous}))
	if err != nil {
		t.Fatalf("boot after stale read: %v", err)
	}
	if vm.Object.GetLabels()["touched"] != "yes" || vm.Boot.Target != system.BootHdd {
		t.Errorf("after retry: labels %v boot %+v", vm.Object.GetLabels(), vm.Boot)
	}
	want := Counters{Applies: 1, Conflicts: 1, Retries: 1}
	if diff := cmp.Diff(want, w.Stats()[ManagerBoot]); diff != "" {
		t.Errorf("boot counters (-want +got):\n%s", diff)
	}
	// The negative control: without the precondition the stale write lands.
	nc := New(testutil.WithoutPrecondition(e.bridge), staleCache{stale}, e.mode, Options{})
	if _, err := nc.Power(ctx, key, func(_ *VM, p *PowerChange) error { p.RunStrategy = "Always"; return nil }); err != nil {
		t.Fatal(err)
	}
	if got := nc.Stats()[ManagerPower]; got.Conflicts != 0 {
		t.Errorf("without precondition a stale read still conflicted: %+v", got)
	}
}

// testRefusalCounted: a decision that refuses (its own error, nothing
// written) counts as a refusal, not a failure: the failed outcome, which
// operators alert on, stays the apiserver's and the retries'.
func testRefusalCounted(t *testing.T, e *env) {
	ctx := t.Context()
	key := e.createVM(t, "vm-refused")
	w := New(e.bridge, nil, e.mode, Options{}) // live reads: the absent VM's read fails
	no := errors.New("the VM cannot take this value")
	if _, err := w.Power(ctx, key, func(*VM, *PowerChange) error { return no }); !errors.Is(err, no) {
		t.Fatalf("Power = %v, want the decision's own error", err)
	}
	if _, err := w.Power(ctx, system.Key{Namespace: key.Namespace, Name: "absent"}, func(*VM, *PowerChange) error { return nil }); err == nil {
		t.Fatal("Power of an absent VM succeeded")
	}
	if d := cmp.Diff(Counters{Refusals: 1, Failures: 1}, w.Stats()[ManagerPower]); d != "" {
		t.Errorf("power counters (-want +got):\n%s", d)
	}
}

// testRelayout: a Cd override set before the CD-ROM exists; once the CD-ROM
// appears Relayout puts it first, and a second Relayout writes nothing.
func testRelayout(t *testing.T, e *env) {
	ctx := t.Context()
	w := New(e.bridge, nil, e.mode, Options{})
	key := e.createVM(t, "vm4")
	noErr(t)(w.Boot(ctx, key, setBoot(system.BootOverride{Target: system.BootCd, Enabled: system.BootOnce})))
	noErr(t)(w.Media(ctx, key, setSlot(system.MediaSlot{Slot: "cd0", Image: "http://x/a.iso", Phase: system.MediaReady, InsertID: "i1", ClaimName: "pvc-a"})))
	vm, err := w.Read(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if Settled(vm) {
		t.Fatalf("settled before relayout: %v", e.disks(t, key))
	}
	noErr(t)(w.Relayout(ctx, key))
	want := map[string]string{DiskName("cd0"): "cdrom/1", "rootdisk": "disk/2", "cloudinit": "disk/3"}
	if diff := cmp.Diff(want, e.disks(t, key)); diff != "" {
		t.Errorf("disks after relayout (-want +got):\n%s", diff)
	}
	rv := e.get(t, key).GetResourceVersion()
	before := w.Stats()[ManagerBoot].Applies
	noErr(t)(w.Relayout(ctx, key))
	if got := e.get(t, key).GetResourceVersion(); got != rv || w.Stats()[ManagerBoot].Applies != before {
		t.Errorf("settled relayout wrote: rv %s -> %s", rv, got)
	}
}

// testEjectControl is the control for the shared-element trap: in map mode a
// media apply without cd0's disk while redfish-boot still owns its bootOrder leaves
// {name: media-cd0, bootOrder: 1}, which the KubeVirt policy rejects. Media
// must (and, in testLifecycle, does) release the boot order first.
func testEjectControl(t *testing.T, e *env) {
	if e.mode != ModeMap {
		t.Skip("the trap exists only with map lists")
	}
	ctx := t.Context()
	w := New(e.bridge, nil, e.mode, Options{})
	key := e.createVM(t, "vm5")
	noErr(t)(w.Media(ctx, key, setSlot(system.MediaSlot{Slot: "cd0", Image: "http://x/a.iso", Phase: system.MediaReady, InsertID: "i1", ClaimName: "pvc-a"})))
	noErr(t)(w.Boot(ctx, key, setBoot(system.BootOverride{Target: system.BootCd, Enabled: system.BootOnce})))
	vm, err := w.Read(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	// A media body without the drive: what an eject wrote before CD-ROM
	// drives stayed, empty (the trap remains for USB sticks' disks).
	vm.Object = withoutDisk(t, vm.Object, DiskName("cd0"))
	body, err := BuildMedia(e.mode, vm, map[string]system.MediaSlot{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.apply(ctx, ManagerMedia, vm, body)
	if err == nil || !strings.Contains(err.Error(), testcluster.MsgDiskWithoutVolume) {
		t.Fatalf("naive eject: err %v, want the policy to reject an orphan {name: media-cd0, bootOrder}", err)
	}
}

// withoutDisk is a copy of u without the disk named name.
func withoutDisk(t *testing.T, u *unstructured.Unstructured, name string) *unstructured.Unstructured {
	t.Helper()
	out := u.DeepCopy()
	var disks []map[string]any
	for _, d := range list(out, kubevirt.Disks) {
		if kubevirt.NameOf(d) != name {
			disks = append(disks, d)
		}
	}
	if err := unstructured.SetNestedSlice(out.Object, toSlice(disks), kubevirt.Disks...); err != nil {
		t.Fatal(err)
	}
	return out
}
