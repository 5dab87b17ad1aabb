package backend_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/inventory"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// heldCache is the inventory whose VM reads can be held at one version:
// the informer lagging behind a write.
type heldCache struct {
	*inventory.Inventory
	mu   sync.Mutex
	held *unstructured.Unstructured
}

func (c *heldCache) VM(key system.Key) (*unstructured.Unstructured, error) {
	c.mu.Lock()
	held := c.held
	c.mu.Unlock()
	if held != nil && held.GetNamespace() == key.Namespace && held.GetName() == key.Name {
		return held, nil
	}
	return c.Inventory.VM(key)
}

// VMResourceVersion is the held VM's when held (the Writer's Revision
// reads it instead of VM).
func (c *heldCache) VMResourceVersion(key system.Key) (string, error) {
	c.mu.Lock()
	held := c.held
	c.mu.Unlock()
	if held != nil && held.GetNamespace() == key.Namespace && held.GetName() == key.Name {
		return held.GetResourceVersion(), nil
	}
	return c.Inventory.VMResourceVersion(key)
}

func (c *heldCache) hold(vm *unstructured.Unstructured) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held = vm
}

// TestKeptSystemBodyFollowsInputs: GET System serves the body kept for the
// VM's revision, so every input of that body must move the revision. After
// each change (the VM's spec by another client, a media import failing as
// the bridge's own write while the cache still holds the version before
// it, a VMI appearing, pausing, going) the next GET's body and ETag change
// and equal a fresh render's (a query makes the service render afresh);
// on both CRD variants.
func TestKeptSystemBodyFollowsInputs(t *testing.T) {
	for _, v := range crds.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			testKeptSystemBodyFollowsInputs(t, v)
		})
	}
}

func testKeptSystemBodyFollowsInputs(t *testing.T, v crds.Variant) {
	ctx := t.Context()
	var cache *heldCache
	s := newStack(t, v, func(inv *inventory.Inventory) apply.Cache {
		cache = &heldCache{Inventory: inv}
		return cache
	})
	vms := s.admin.Resource(kubevirt.VirtualMachines).Namespace(stackNS)
	vmis := s.admin.Resource(kubevirt.VirtualMachineInstances).Namespace(stackNS)
	var lastETag, lastBody string
	// check GETs the system twice (the second is served kept) and once
	// afresh: all three must agree, and differ from before the change.
	check := func(change string, want func(sys map[string]any) error) {
		t.Helper()
		first := s.do(t, http.MethodGet, s.uri, "", "")
		kept := s.do(t, http.MethodGet, s.uri, "", "")
		fresh := s.do(t, http.MethodGet, s.uri+"?render=fresh", "", "")
		for _, r := range []struct {
			name string
			code int
		}{{"first", first.Code}, {"kept", kept.Code}, {"fresh", fresh.Code}} {
			if r.code != http.StatusOK {
				t.Fatalf("after %s: %s GET: %d", change, r.name, r.code)
			}
		}
		etag, body := kept.Header().Get("ETag"), kept.Body.String()
		if body != fresh.Body.String() || etag != fresh.Header().Get("ETag") || body != first.Body.String() {
			t.Errorf("after %s: the kept body (ETag %s) is not what a fresh render shows (ETag %s)", change, etag, fresh.Header().Get("ETag"))
		}
		if lastETag != "" && (etag == lastETag || body == lastBody) {
			t.Errorf("after %s: GET still answers ETag %s (body changed: %t)", change, etag, body != lastBody)
		}
		var sys map[string]any
		if err := json.Unmarshal(kept.Body.Bytes(), &sys); err != nil {
			t.Fatalf("after %s: %v", change, err)
		}
		if err := want(sys); err != nil {
			t.Errorf("after %s: %v", change, err)
		}
		lastETag, lastBody = etag, body
	}
	// cached waits until the inventory shows rv of the VM (vmi false) or
	// of its VMI ("" = gone).
	cached := func(vmi bool, rv string) {
		t.Helper()
		get := s.inv.VM
		if vmi {
			get = s.inv.VMI
		}
		testutil.Eventually(t, "cache shows "+rv, 30*time.Second, 10*time.Millisecond, func(context.Context) error {
			o, err := get(s.key)
			switch {
			case rv == "" && apierrors.IsNotFound(err):
				return nil
			case err != nil:
				return err
			case o.GetResourceVersion() != rv:
				return fmt.Errorf("at %s", o.GetResourceVersion())
			}
			return nil
		})
	}

	check("start", field("PowerState", string(system.PowerOff)))

	patched, err := vms.Patch(ctx, s.key.Name, types.MergePatchType,
		[]byte(`{"spec":{"template":{"spec":{"domain":{"cpu":{"sockets":1,"cores":3,"threads":1}}}}}}`), metav1.PatchOptions{FieldManager: "someone-else"})
	if err != nil {
		t.Fatal(err)
	}
	cached(false, patched.GetResourceVersion())
	check("another client's change of the VM spec", func(sys map[string]any) error {
		if n := sys["ProcessorSummary"].(map[string]any)["CoreCount"]; n != 3.0 {
			return fmt.Errorf("CoreCount %v, want 3", n)
		}
		return nil
	})

	// The bridge's own write while the cache is behind it: the media
	// reconciler records a failed import; the cache keeps the VM before it.
	before, err := s.inv.VM(s.key)
	if err != nil {
		t.Fatal(err)
	}
	cache.hold(before)
	if _, err := s.w.Media(ctx, s.key, func(_ *apply.VM, slots map[string]system.MediaSlot) error {
		slots["cd0"] = system.MediaSlot{Slot: "cd0", Image: "http://images.example/boot.iso", Phase: system.MediaFailed,
			Reason: "import failed", InsertID: "i1"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	check("a failed media import (the bridge's own write, cache behind)", status("Health", string(system.HealthWarning)))
	cache.hold(nil)

	vmi := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
		"metadata": map[string]any{"name": s.key.Name, "namespace": stackNS},
		"spec":     map[string]any{"domain": map[string]any{"devices": map[string]any{}}},
		"status":   map[string]any{"phase": "Running"},
	}}
	created, err := vmis.Create(ctx, vmi, metav1.CreateOptions{FieldManager: "virt-handler"})
	if err != nil {
		t.Fatal(err)
	}
	cached(true, created.GetResourceVersion())
	check("a VMI Running", field("PowerState", string(system.PowerOn)))

	paused, err := vmis.Patch(ctx, s.key.Name, types.MergePatchType,
		[]byte(`{"status":{"conditions":[{"type":"Paused","status":"True"}]}}`), metav1.PatchOptions{FieldManager: "virt-handler"})
	if err != nil {
		t.Fatal(err)
	}
	cached(true, paused.GetResourceVersion())
	check("the VMI paused", field("PowerState", string(system.PowerPaused)))

	if err := vmis.Delete(ctx, s.key.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cached(true, "")
	check("the VMI gone", field("PowerState", string(system.PowerOff)))
}

// field wants the System's top-level name to be want.
func field(name, want string) func(map[string]any) error {
	return func(sys map[string]any) error {
		if got := sys[name]; got != want {
			return fmt.Errorf("%s %v, want %s", name, got, want)
		}
		return nil
	}
}

// status wants the System's Status.name to be want.
func status(name, want string) func(map[string]any) error {
	return func(sys map[string]any) error {
		st, _ := sys["Status"].(map[string]any)
		if got := st[name]; got != want {
			return fmt.Errorf("Status.%s %v, want %s", name, got, want)
		}
		return nil
	}
}
