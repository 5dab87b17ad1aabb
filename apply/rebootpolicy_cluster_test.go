package apply

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

const rebootPolicyLeaf = ".spec.template.spec.domain.rebootPolicy"

var (
	cdOnceOverride = system.BootOverride{Target: system.BootCd, Enabled: system.BootOnce}
	revertedBoot   = system.BootOverride{Target: system.BootNone, Enabled: system.BootDisabled}
)

// TestRebootPolicy proves on the real apiserver, both CRD variants, that
// redfish-boot owns rebootPolicy Terminate exactly while a Once override
// lays out a boot, never takes an author's value, and falls back (the
// override without it, a Warning event, a counter) where the cluster
// refuses the field.
func TestRebootPolicy(t *testing.T) {
	forEachVariant(t, func(t *testing.T, c *testcluster.Cluster) {
		t.Run("armed while Once, released after", func(t *testing.T) { testRebootPolicyArmed(t, newEnv(t, c)) })
		t.Run("author's value kept", func(t *testing.T) { testRebootPolicyAuthor(t, newEnv(t, c)) })
		t.Run("refused by the cluster", func(t *testing.T) {
			e := newEnv(t, c)
			e.ns = c.RebootPolicyGateOff(t)
			testRebootPolicyRefused(t, e)
		})
	})
}

func (e *env) setBoot(t *testing.T, w *Client, key system.Key, o system.BootOverride) {
	t.Helper()
	if _, err := w.Boot(t.Context(), key, func(_ *VM, b *system.BootOverride) error { *b = o; return nil }); err != nil {
		t.Fatalf("boot %+v: %v", o, err)
	}
}

func testRebootPolicyArmed(t *testing.T, e *env) {
	key := e.createVM(t, "armed")
	w := New(e.bridge, nil, e.mode, Options{})
	e.setBoot(t, w, key, cdOnceOverride)
	if got := kubevirt.RebootPolicyOf(e.get(t, key)); got != kubevirt.RebootPolicyTerminate {
		t.Fatalf("rebootPolicy %q while Once is armed, want %s", got, kubevirt.RebootPolicyTerminate)
	}
	if owned := e.ownedBy(t, key, ManagerBoot); !slices.Contains(owned, rebootPolicyLeaf) {
		t.Errorf("redfish-boot does not own %s: %v", rebootPolicyLeaf, owned)
	}
	e.setBoot(t, w, key, revertedBoot)
	if got := kubevirt.RebootPolicyOf(e.get(t, key)); got != "" {
		t.Errorf("rebootPolicy %q after the override ended, want none", got)
	}
	e.setBoot(t, w, key, system.BootOverride{Target: system.BootCd, Enabled: system.BootContinuous})
	if got := kubevirt.RebootPolicyOf(e.get(t, key)); got != "" {
		t.Errorf("rebootPolicy %q under Continuous, want none", got)
	}
	if n := w.RebootPolicyFallbacks(); n[FallbackRefused]+n[FallbackAuthor] != 0 {
		t.Errorf("fallbacks %v, want none", n)
	}
}

func testRebootPolicyAuthor(t *testing.T, e *env) {
	for _, value := range []string{"Reboot", kubevirt.RebootPolicyTerminate} {
		key := e.createVMWith(t, "author-"+strings.ToLower(value), func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, value, kubevirt.RebootPolicy...)
		})
		w := New(e.bridge, nil, e.mode, Options{})
		e.setBoot(t, w, key, cdOnceOverride)
		if got := kubevirt.RebootPolicyOf(e.get(t, key)); got != value {
			t.Errorf("%s: rebootPolicy %q while Once is armed: the author's value was clobbered", value, got)
		}
		if owned := e.ownedBy(t, key, ManagerBoot); slices.Contains(owned, rebootPolicyLeaf) {
			t.Errorf("%s: redfish-boot took the author's rebootPolicy", value)
		}
		e.setBoot(t, w, key, revertedBoot)
		if got := kubevirt.RebootPolicyOf(e.get(t, key)); got != value {
			t.Errorf("%s: rebootPolicy %q after the override ended, want the author's %s", value, got, value)
		}
		wantAuthor := int64(0)
		if value != kubevirt.RebootPolicyTerminate {
			wantAuthor = 1
			e.wantEvent(t, key, FallbackAuthor)
		}
		if n := w.RebootPolicyFallbacks(); n[FallbackAuthor] != wantAuthor {
			t.Errorf("%s: author fallbacks %d, want %d", value, n[FallbackAuthor], wantAuthor)
		}
	}
}

func testRebootPolicyRefused(t *testing.T, e *env) {
	key := e.createVM(t, "refused")
	// The control: the cluster does refuse the field here.
	body := skeleton(decodeFixture(e.get(t, key)))
	_ = unstructured.SetNestedField(body.Object, kubevirt.RebootPolicyTerminate, kubevirt.RebootPolicy...)
	_, err := e.bridge.Resource(kubevirt.VirtualMachines).Namespace(e.ns).Apply(t.Context(), key.Name, body, metav1.ApplyOptions{FieldManager: "test-probe", Force: true})
	if !RebootPolicyRefused(err) {
		t.Fatalf("gate-off namespace took rebootPolicy (err %v)", err)
	}
	w := New(e.bridge, nil, e.mode, Options{})
	e.setBoot(t, w, key, cdOnceOverride)
	vm := Decode(t.Context(), key, e.get(t, key), nil)
	if got := kubevirt.RebootPolicyOf(vm.Object); got != "" {
		t.Errorf("rebootPolicy %q on a cluster that refuses it", got)
	}
	if vm.Boot.Enabled != system.BootOnce || !Settled(vm) {
		t.Errorf("the Once override was not applied without rebootPolicy: boot %+v, settled %v", vm.Boot, Settled(vm))
	}
	if n := w.RebootPolicyFallbacks(); n[FallbackRefused] != 1 {
		t.Errorf("refused fallbacks %d, want 1", n[FallbackRefused])
	}
	e.wantEvent(t, key, FallbackRefused)
}

// createVMWith creates the fixture VM, edited, as its author would.
func (e *env) createVMWith(t *testing.T, name string, edit func(*unstructured.Unstructured)) system.Key {
	t.Helper()
	u := baseVM(t)
	u.SetName(name)
	u.SetNamespace(e.ns)
	u.SetResourceVersion("")
	edit(u)
	if _, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(e.ns).Create(t.Context(), u, metav1.CreateOptions{FieldManager: "test-author"}); err != nil {
		t.Fatalf("create VM: %v", err)
	}
	return system.Key{Namespace: e.ns, Name: name}
}

// wantEvent checks for a Warning event with reason on the VM.
func (e *env) wantEvent(t *testing.T, key system.Key, reason string) {
	t.Helper()
	events, err := e.admin.Resource(schema.GroupVersionResource{Version: "v1", Resource: "events"}).Namespace(key.Namespace).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events.Items {
		name, _, _ := unstructured.NestedString(ev.Object, "involvedObject", "name")
		r, _, _ := unstructured.NestedString(ev.Object, "reason")
		typ, _, _ := unstructured.NestedString(ev.Object, "type")
		if name == key.Name && r == reason && typ == "Warning" {
			return
		}
	}
	t.Errorf("no Warning event %s on %s (%d events)", reason, key, len(events.Items))
}
