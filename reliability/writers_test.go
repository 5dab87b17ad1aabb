package reliability

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// Field managers of the outside writers.
const (
	editManager    = "kubectl-edit"              // GET, change, PUT (kubectl edit)
	csaManager     = "kubectl-client-side-apply" // kubectl apply without --server-side
	plannerManager = "capacity-planner"          // another Server-Side Apply manager
)

// writers edits fields the bridge does not own, concurrently with the
// bridge's requests: labels (kubectl edit and client-side kubectl apply), a
// data disk with its volume (kubectl edit), memory (SSA, forced).
type writers struct {
	r          *rig
	variant    crds.Variant
	kubectl    string
	kubeconfig string
	wg         sync.WaitGroup
	writes     int
	// What the last write of each writer set.
	edited, applied, memory string
}

func newWriters(t *testing.T, env *demo.Env, r *rig) *writers {
	t.Helper()
	bin := os.Getenv("REDFISH_BRIDGE_BIN")
	if bin == "" {
		bin = filepath.Join("..", "bin")
	}
	kubectl, err := filepath.Abs(filepath.Join(bin, "kubectl"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(kubectl); err != nil {
		t.Fatalf("kubectl (make tools builds it): %v", err)
	}
	return &writers{r: r, variant: env.Cluster.Variant, kubectl: kubectl, kubeconfig: env.Cluster.Kubeconfig}
}

// during starts the outside write that goes with a cycle step; it runs
// while the bridge handles the next Redfish request.
func (w *writers) during(t *testing.T, cycle int, step string) {
	t.Helper()
	w.wait()
	var write func() error
	tag := fmt.Sprintf("c%d-%s", cycle, step)
	switch step {
	case "off", "on":
		w.edited = tag
		write = func() error { return w.edit(t, tag, cycle == 1 && step == "off") }
	case "insert", "running":
		w.applied = tag
		write = func() error { return w.kubectlApply(t, tag) }
	case "boot":
		w.memory = fmt.Sprintf("%dGi", 4+cycle)
		write = func() error { return w.applyMemory(t, w.memory) }
	default:
		return
	}
	w.writes++
	w.wg.Go(func() {
		if err := write(); err != nil {
			t.Errorf("outside write at %s: %v", tag, err)
		}
	})
}

func (w *writers) wait() { w.wg.Wait() }

// editRetry is how often, and how far apart, [writers.edit] tries again
// after a 409: a power-on's writes and virt-controller's status updates
// move the VM's resourceVersion many times within a second, and on a
// loaded machine retry.DefaultRetry's five tries within ~50 ms all lost
// to them (the person behind kubectl edit saves again too).
var editRetry = wait.Backoff{Steps: 30, Duration: 10 * time.Millisecond, Factor: 1.5, Jitter: 0.5, Cap: time.Second}

// edit is kubectl edit: read, change, update with the read resourceVersion.
func (w *writers) edit(t *testing.T, tag string, addDisk bool) error {
	t.Helper()
	vms := w.r.dyn.Resource(kubevirt.VirtualMachines).Namespace(w.r.key.Namespace)
	return retry.RetryOnConflict(editRetry, func() error {
		vm, err := vms.Get(t.Context(), w.r.key.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		labels := vm.GetLabels()
		labels["edited"] = tag
		vm.SetLabels(labels)
		if addDisk {
			spec := templateSpec(t, vm)
			ds, _, _ := unstructured.NestedSlice(spec, "domain", "devices", "disks")
			vs, _, _ := unstructured.NestedSlice(spec, "volumes")
			ds = append(ds, map[string]any{"name": "datadisk", "disk": map[string]any{"bus": "virtio"}})
			vs = append(vs, map[string]any{"name": "datadisk", "emptyDisk": map[string]any{"capacity": "1Gi"}})
			if err := unstructured.SetNestedSlice(vm.Object, ds, "spec", "template", "spec", "domain", "devices", "disks"); err != nil {
				return err
			}
			if err := unstructured.SetNestedSlice(vm.Object, vs, "spec", "template", "spec", "volumes"); err != nil {
				return err
			}
		}
		_, err = vms.Update(t.Context(), vm, metav1.UpdateOptions{FieldManager: editManager})
		return err
	})
}

// kubectlApply runs client-side kubectl apply of a manifest holding only
// labels (a three-way merge patch with the last-applied annotation).
func (w *writers) kubectlApply(t *testing.T, tag string) error {
	t.Helper()
	manifest := fmt.Sprintf(`{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine","metadata":{"name":%q,"namespace":%q,"labels":{"applied-by":"kubectl","applied":%q}}}`,
		w.r.key.Name, w.r.key.Namespace, tag)
	cmd := exec.CommandContext(t.Context(), w.kubectl, "--kubeconfig", w.kubeconfig, "apply", "-f", "-") // our own kubectl
	cmd.Stdin = strings.NewReader(manifest)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl apply: %w: %s", err, out)
	}
	return nil
}

// applyMemory is another SSA manager taking memory over (forced: the VM's
// author owns it).
func (w *writers) applyMemory(t *testing.T, guest string) error {
	t.Helper()
	body := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
		"metadata": map[string]any{"name": w.r.key.Name, "namespace": w.r.key.Namespace},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"domain": map[string]any{"memory": map[string]any{"guest": guest}},
		}}},
	}}
	_, err := w.r.dyn.Resource(kubevirt.VirtualMachines).Namespace(w.r.key.Namespace).Apply(t.Context(), w.r.key.Name, body,
		metav1.ApplyOptions{FieldManager: plannerManager, Force: true})
	return err
}

// check compares the VM's non-bridge fields with before plus what the
// writers set, and that every writer is still a field manager. It returns
// 1 if a write was lost.
func (w *writers) check(t *testing.T, before map[string]any, cycle int) int {
	t.Helper()
	vm := w.r.vm(t)
	want := maps.Clone(before)
	labels := maps.Clone(before["labels"].(map[string]string))
	labels["edited"], labels["applied"], labels["applied-by"] = w.edited, w.applied, "kubectl"
	want["labels"] = labels
	want["memory"] = map[string]any{"guest": w.memory}
	want["disks"] = append(append([]any{}, before["disks"].([]any)...), map[string]any{"name": "datadisk", "disk": map[string]any{"bus": "virtio"}})
	vols := maps.Clone(before["volumes"].(map[string]any))
	vols["datadisk"] = map[string]any{"name": "datadisk", "emptyDisk": map[string]any{"capacity": "1Gi"}}
	want["volumes"] = vols
	lost := checkUserFields(t, want, userFields(t, vm))
	managers := map[string]bool{}
	for _, m := range vm.GetManagedFields() {
		managers[m.Manager] = true
	}
	// After the eject that ends a cycle, redfish-media's intent is the
	// empty CD drive it keeps (apply/testdata/media-eject.*.json): it owns
	// that disk (and with atomic lists the volumes list too), but in keyed
	// lists no volume.
	wantManagers := []string{editManager, csaManager, plannerManager, "redfish-boot", "redfish-power", "redfish-media"}
	if w.variant != crds.Stock {
		for _, m := range vm.GetManagedFields() {
			if m.Manager == "redfish-media" && m.FieldsV1 != nil && strings.Contains(m.FieldsV1.GetRawString(), `"f:volumes":{"k:`) {
				t.Errorf("after cycle %d: redfish-media owns a volume after its eject intent on %s: %s", cycle, w.variant, m.FieldsV1.GetRawString())
			}
		}
	}
	for _, m := range wantManagers {
		if !managers[m] {
			t.Errorf("after cycle %d: field manager %s missing from the VM (managers: %v)", cycle, m, managers)
			lost = 1
		}
	}
	w.r.checked += 3
	t.Logf("cycle %d: labels edited=%s applied=%s, memory %s, datadisk paired: kept", cycle, w.edited, w.applied, w.memory)
	return lost
}

// userFields are the VM's fields the bridge does not own: labels, CPU,
// memory, firmware, interfaces, networks, the non-media disks (without
// bootOrder, which the boot override may set) and volumes.
func userFields(t *testing.T, vm *unstructured.Unstructured) map[string]any {
	t.Helper()
	spec := templateSpec(t, vm)
	field := func(path ...string) any {
		v, _, _ := unstructured.NestedFieldCopy(spec, path...)
		return v
	}
	out := map[string]any{
		"labels":     vm.GetLabels(),
		"cpu":        field("domain", "cpu"),
		"memory":     field("domain", "memory"),
		"firmware":   field("domain", "firmware"),
		"interfaces": field("domain", "devices", "interfaces"),
		"networks":   field("networks"),
	}
	var ds []any
	list, _, _ := unstructured.NestedSlice(spec, "domain", "devices", "disks")
	for _, d := range list {
		m, _ := d.(map[string]any)
		if m["name"] == cdDisk() {
			continue
		}
		m = maps.Clone(m)
		delete(m, "bootOrder")
		ds = append(ds, m)
	}
	out["disks"] = ds
	vols := map[string]any{}
	list, _, _ = unstructured.NestedSlice(spec, "volumes")
	for _, v := range list {
		m, _ := v.(map[string]any)
		if name, _ := m["name"].(string); name != cdDisk() {
			vols[name] = m
		}
	}
	out["volumes"] = vols
	return out
}

func unstructuredString(obj *unstructured.Unstructured, path ...string) (string, bool, error) {
	return unstructured.NestedString(obj.Object, path...)
}
