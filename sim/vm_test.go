package sim_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/sim"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// vmOptions are slow enough that every transient status is observable.
var vmOptions = sim.Options{
	StartDelay:       200 * time.Millisecond,
	StopDelay:        200 * time.Millisecond,
	CrashLoopBackoff: 300 * time.Millisecond,
}

func TestVirtController(t *testing.T) {
	for _, v := range crds.Variants {
		t.Run(string(v), func(t *testing.T) {
			e := start(t, v, vmOptions)
			t.Run("run strategies", e.testRunStrategies)
			t.Run("guest shutdown", e.testGuestShutdown)
			t.Run("identity", e.testIdentity)
			t.Run("restart by VMI deletion", e.testRestart)
			t.Run("state change requests", e.testStateChangeRequests)
			t.Run("status sequence", e.testStatusSequence)
			t.Run("restart required", e.testRestartRequired)
			t.Run("corruption", e.testCorruption)
			t.Run("VM deleted", e.testVMDeleted)
		})
	}
}

func (e *env) testRunStrategies(t *testing.T) {
	tests := []struct {
		name     string
		strategy string // "" = none, use running
		running  any    // spec.running, nil = absent
		wantVMI  bool
		want     string
	}{
		{name: "always", strategy: "Always", wantVMI: true, want: "Running"},
		{name: "rerun", strategy: "RerunOnFailure", wantVMI: true, want: "Running"},
		{name: "once", strategy: "Once", wantVMI: true, want: "Running"},
		{name: "halted", strategy: "Halted", want: "Stopped"},
		{name: "manual", strategy: "Manual", want: "Stopped"},
		{name: "running-true", running: true, wantVMI: true, want: "Running"},
		{name: "running-false", running: false, want: "Stopped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vm := newVM(e.ns, "rs-"+tt.name, tt.strategy)
			if tt.strategy == "" {
				unstructured.RemoveNestedField(vm.Object, "spec", "runStrategy")
				if err := unstructured.SetNestedField(vm.Object, tt.running, "spec", "running"); err != nil {
					t.Fatal(err)
				}
			}
			e.createVM(t, vm)
			got := e.vmIs(t, vm.GetName(), tt.want)
			if tt.wantVMI {
				e.vmiIs(t, vm.GetName(), "Running", "")
				if r, _, _ := unstructured.NestedBool(got.Object, "status", "ready"); !r {
					t.Errorf("status.ready = false on a Running VM")
				}
				return
			}
			consistently(t, "no VMI", 300*time.Millisecond, func(ctx context.Context) error {
				if vmi, err := e.getVMI(ctx, vm.GetName()); err == nil {
					return fmt.Errorf("VMI exists in phase %q", str(vmi, "status", "phase"))
				}
				return nil
			})
		})
	}
}

func (e *env) testGuestShutdown(t *testing.T) {
	tests := []struct {
		strategy   string
		restarts   bool
		deleted    bool // the final VMI is deleted, not replaced
		wantStatus string
	}{
		{strategy: "Always", restarts: true, wantStatus: "Running"},
		{strategy: "RerunOnFailure", deleted: true, wantStatus: "Stopped"},
		{strategy: "Once", wantStatus: "Stopped"},
	}
	for _, tt := range tests {
		t.Run(tt.strategy, func(t *testing.T) {
			name := "shutdown-" + strings.ToLower(tt.strategy)
			e.createVM(t, newVM(e.ns, name, tt.strategy))
			vmi := e.vmiIs(t, name, "Running", "")
			if err := e.sim.GuestShutdown(t.Context(), system.Key{Namespace: e.ns, Name: name}); err != nil {
				t.Fatal(err)
			}
			if tt.restarts {
				e.vmiIs(t, name, "Running", vmi.GetUID())
				e.vmIs(t, name, tt.wantStatus)
				return
			}
			e.vmIs(t, name, tt.wantStatus)
			if tt.deleted {
				e.vmiGone(t, name)
				consistently(t, "no new VMI", 500*time.Millisecond, func(ctx context.Context) error {
					if got, err := e.getVMI(ctx, name); err == nil {
						return fmt.Errorf("VMI %s exists in phase %q", got.GetUID(), str(got, "status", "phase"))
					}
					return nil
				})
				return
			}
			consistently(t, "VMI stays Succeeded", 500*time.Millisecond, func(ctx context.Context) error {
				got, err := e.getVMI(ctx, name)
				if err != nil {
					return err
				}
				if got.GetUID() != vmi.GetUID() || str(got, "status", "phase") != "Succeeded" {
					return fmt.Errorf("VMI %s in phase %q, want %s Succeeded", got.GetUID(), str(got, "status", "phase"), vmi.GetUID())
				}
				return nil
			})
		})
	}
}

// vmiIdentity is what a VMI shows of its identity.
type vmiIdentity struct {
	UUID, MAC, Node, Label, Owner string
}

func identityOf(vmi *unstructured.Unstructured) vmiIdentity {
	id := vmiIdentity{
		UUID:  str(vmi, "spec", "domain", "firmware", "uuid"),
		Node:  str(vmi, "status", "nodeName"),
		Label: vmi.GetLabels()["app"],
	}
	if ifaces, _, _ := unstructured.NestedSlice(vmi.Object, "status", "interfaces"); len(ifaces) > 0 {
		id.MAC, _ = ifaces[0].(map[string]any)["mac"].(string)
	}
	if refs := vmi.GetOwnerReferences(); len(refs) == 1 {
		id.Owner = string(refs[0].UID)
	}
	return id
}

func (e *env) testIdentity(t *testing.T) {
	tests := []struct {
		name      string
		uuid, mac string // set in the template when not empty
	}{
		{name: "derived"},
		{name: "from-template", uuid: "8e1f3a46-2b9c-4a5e-9d3f-0c7a1b2c3d4e", mac: "52:54:00:12:34:56"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "id-" + tt.name
			vm := newVM(e.ns, name, "Always")
			want := vmiIdentity{UUID: sim.FirmwareUUID(e.ns, name), MAC: sim.MAC(e.ns, name, "default"), Node: sim.NodeName, Label: name}
			if tt.uuid != "" {
				want.UUID, want.MAC = tt.uuid, tt.mac
				if err := unstructured.SetNestedField(vm.Object, tt.uuid, "spec", "template", "spec", "domain", "firmware", "uuid"); err != nil {
					t.Fatal(err)
				}
				ifaces := []any{map[string]any{"name": "default", "masquerade": map[string]any{}, "macAddress": tt.mac}}
				if err := unstructured.SetNestedSlice(vm.Object, ifaces, "spec", "template", "spec", "domain", "devices", "interfaces"); err != nil {
					t.Fatal(err)
				}
			}
			want.Owner = string(e.createVM(t, vm).GetUID())
			vmi := e.vmiIs(t, name, "Running", "")
			if diff := cmp.Diff(want, identityOf(vmi)); diff != "" {
				t.Errorf("VMI identity (-want +got):\n%s", diff)
			}
		})
	}
}

func (e *env) testRestart(t *testing.T) {
	const name = "restart"
	e.createVM(t, newVM(e.ns, name, "Always"))
	first := e.vmiIs(t, name, "Running", "")
	created := e.sim.Counters().VMIsCreated
	e.deleteVMI(t, name)
	second := e.vmiIs(t, name, "Running", first.GetUID())
	if n := e.sim.Counters().VMIsCreated - created; n != 1 {
		t.Errorf("%d VMIs created for one restart, want 1", n)
	}
	e.vmIs(t, name, "Running")
	if diff := cmp.Diff(identityOf(first), identityOf(second)); diff != "" {
		t.Errorf("identity changed across the restart (-first +second):\n%s", diff)
	}
}

// testStatusSequence watches one VM through start and stop and checks
// every printableStatus it went through.
func (e *env) testStatusSequence(t *testing.T) {
	const name = "sequence"
	vm := e.createVM(t, newVM(e.ns, name, "Halted"))
	w, err := e.dyn.Resource(sim.VMResource).Namespace(e.ns).Watch(t.Context(), metav1.ListOptions{
		FieldSelector: "metadata.name=" + name, ResourceVersion: vm.GetResourceVersion(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	e.vmIs(t, name, "Stopped")
	e.patchVM(t, name, `{"spec":{"runStrategy":"Always"}}`)
	e.vmIs(t, name, "Running")
	e.patchVM(t, name, `{"spec":{"runStrategy":"Halted"}}`)
	e.vmIs(t, name, "Stopped")
	e.vmiGone(t, name)

	var seen []string
	deadline := time.After(time.Second)
	for done := false; !done; {
		select {
		case ev := <-w.ResultChan():
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				t.Fatalf("watch event %s: %T", ev.Type, ev.Object)
			}
			if s := str(u, "status", "printableStatus"); s != "" && (len(seen) == 0 || seen[len(seen)-1] != s) {
				seen = append(seen, s)
			}
		case <-deadline:
			done = true
		}
	}
	want := []string{"Stopped", "Starting", "Running", "Stopping", "Stopped"}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("printableStatus sequence (-want +got):\n%s", diff)
	}
}

func (e *env) testRestartRequired(t *testing.T) {
	const name = "restart-required"
	e.createVM(t, newVM(e.ns, name, "Always"))
	first := e.vmiIs(t, name, "Running", "")
	if got := condition(e.vmIs(t, name, "Running"), "RestartRequired"); got != "" {
		t.Fatalf("RestartRequired = %q before any change", got)
	}
	e.patchVM(t, name, `{"spec":{"template":{"spec":{"domain":{"memory":{"guest":"2Gi"}}}}}}`)
	if got := condition(e.vmIs(t, name, "Running"), "RestartRequired"); got != "True" {
		t.Fatalf("RestartRequired = %q after a template change, want True", got)
	}
	e.deleteVMI(t, name)
	second := e.vmiIs(t, name, "Running", first.GetUID())
	if got := str(second, "spec", "domain", "memory", "guest"); got != "2Gi" {
		t.Errorf("restarted VMI memory = %q, want 2Gi", got)
	}
	if got := condition(e.vmIs(t, name, "Running"), "RestartRequired"); got != "" {
		t.Errorf("RestartRequired = %q after the restart, want absent", got)
	}
}

func (e *env) testCorruption(t *testing.T) {
	const name = "corrupt"
	vm := newVM(e.ns, name, "Always")
	vols, _, _ := unstructured.NestedSlice(vm.Object, "spec", "template", "spec", "volumes")
	vols = append(vols, map[string]any{"name": "cdrom0", "persistentVolumeClaim": map[string]any{"claimName": "iso"}})
	if err := unstructured.SetNestedSlice(vm.Object, vols, "spec", "template", "spec", "volumes"); err != nil {
		t.Fatal(err)
	}
	created := e.createVM(t, vm)

	failed := e.vmiIs(t, name, "Failed", "")
	if got := str(failed, "status", "reason"); !strings.Contains(got, "volume cdrom0 has no disk") {
		t.Errorf("VMI reason = %q, want it to name volume cdrom0", got)
	}
	e.vmIs(t, name, "CrashLoopBackOff")
	e.vmiIs(t, name, "Failed", failed.GetUID()) // the crash loop goes on

	want := []sim.Corruption{{
		VM: e.ns + "/" + name, UID: created.GetUID(), Generation: created.GetGeneration(),
		Problems: []string{"volume cdrom0 has no disk: attached as a writable disk"},
	}}
	if diff := cmp.Diff(want, corruptionsOf(e.sim, e.ns+"/"+name), ignoreTime); diff != "" {
		t.Errorf("corruptions (-want +got):\n%s", diff)
	}
	events, err := e.kube.CoreV1().Events(e.ns).List(t.Context(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, ev := range events.Items {
		if ev.Type == "Warning" {
			reasons = append(reasons, ev.Reason)
		}
	}
	if diff := cmp.Diff([]string{sim.ReasonCorrupted}, reasons); diff != "" {
		t.Errorf("warning events (-want +got):\n%s", diff)
	}

	// Repairing the template ends the loop.
	e.patchVM(t, name, `{"spec":{"template":{"spec":{"domain":{"devices":{"disks":[
		{"name":"rootdisk","disk":{"bus":"virtio"}},{"name":"cdrom0","cdrom":{"bus":"sata"}}]}}}}}}`)
	e.vmiIs(t, name, "Running", "")
	e.vmIs(t, name, "Running")
	if got := len(corruptionsOf(e.sim, e.ns+"/"+name)); got != 1 {
		t.Errorf("%d corruptions recorded after the repair, want still 1", got)
	}
}

var ignoreTime = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Time" }, cmp.Ignore())

func corruptionsOf(s *sim.Simulator, vm string) []sim.Corruption {
	var out []sim.Corruption
	for _, c := range s.Corruptions() {
		if c.VM == vm {
			out = append(out, c)
		}
	}
	return out
}

func (e *env) testVMDeleted(t *testing.T) {
	const name = "deleted"
	e.createVM(t, newVM(e.ns, name, "Always"))
	e.vmiIs(t, name, "Running", "")
	if err := e.dyn.Resource(sim.VMResource).Namespace(e.ns).Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.vmiGone(t, name)
}
