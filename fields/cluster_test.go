package fields_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/fields"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// dev is the part of a deviation the tests compare.
type dev struct{ Manager, Path, Kind string }

// TestFieldsOnCluster drives VMs through the bridge's writer (insert of a
// CD and a USB stick, imports recorded Ready, Cd Once override, power on), checks the report has
// no deviation, then lets one foreign writer act and checks exactly the
// expected deviations, and that --check fails.
func TestFieldsOnCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("needs kube-apiserver")
	}
	const ns = "fields"
	annPower := `.metadata.annotations.redfish-bridge.io/power`
	for _, v := range crds.Variants {
		t.Run(string(v), func(t *testing.T) {
			c := testcluster.ForTest(t, v)
			if err := c.CreateNamespace(t.Context(), ns); err != nil {
				t.Fatal(err)
			}
			admin := dynamic.NewForConfigOrDie(c.Admin)
			bridge := dynamic.NewForConfigOrDie(c.Bridge)
			mode, err := apply.DetectMode(t.Context(), bridge)
			if err != nil {
				t.Fatal(err)
			}
			w := apply.New(bridge, nil, mode, apply.Options{})
			for _, tc := range []struct {
				name    string
				foreign func(t *testing.T, vm *unstructured.Unstructured)
				want    []dev
				notes   int
				onlyMap bool
			}{
				{name: "bridge only"},
				{
					name: "SSA manager forces the power annotation",
					foreign: func(t *testing.T, vm *unstructured.Unstructured) {
						body := fmt.Sprintf(`{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine","metadata":{"name":%q,"namespace":%q,"annotations":{%q:"{}"}}}`,
							vm.GetName(), vm.GetNamespace(), apply.AnnotationPower)
						force := true
						if _, err := admin.Resource(kubevirt.VirtualMachines).Namespace(vm.GetNamespace()).Patch(t.Context(), vm.GetName(), types.ApplyPatchType,
							[]byte(body), metav1.PatchOptions{FieldManager: "intruder", Force: &force}); err != nil {
							t.Fatal(err)
						}
					},
					want: []dev{{"intruder", annPower, "taken"}},
				},
				{
					name: "kubectl edit halts the VM",
					foreign: func(t *testing.T, vm *unstructured.Unstructured) {
						if err := unstructured.SetNestedField(vm.Object, "Halted", "spec", "runStrategy"); err != nil {
							t.Fatal(err)
						}
						if _, err := admin.Resource(kubevirt.VirtualMachines).Namespace(vm.GetNamespace()).Update(t.Context(), vm, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
							t.Fatal(err)
						}
					},
					notes: 1, // not a deviation: see the package doc
				},
				{
					name: "kubectl edit rewrites the boot annotation",
					foreign: func(t *testing.T, vm *unstructured.Unstructured) {
						ann := vm.GetAnnotations()
						ann[apply.AnnotationBoot] = `{"target":"Hdd","enabled":"Continuous"}`
						vm.SetAnnotations(ann)
						if _, err := admin.Resource(kubevirt.VirtualMachines).Namespace(vm.GetNamespace()).Update(t.Context(), vm, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
							t.Fatal(err)
						}
					},
					want: []dev{{"kubectl-edit", `.metadata.annotations.redfish-bridge.io/boot`, "taken"}},
				},
				{
					name: "kubectl edit labels the bridge's media PVC",
					foreign: func(t *testing.T, vm *unstructured.Unstructured) {
						pvcs := admin.Resource(pvcResource).Namespace(vm.GetNamespace())
						pvc, err := pvcs.Get(t.Context(), claimOf(vm), metav1.GetOptions{})
						if err != nil {
							t.Fatal(err)
						}
						l := pvc.GetLabels()
						l["team"] = "storage"
						pvc.SetLabels(l)
						if _, err := pvcs.Update(t.Context(), pvc, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
							t.Fatal(err)
						}
					},
					want: []dev{{"kubectl-edit", "PersistentVolumeClaim/{claim}", "foreign"}},
				},
				{
					name:    "kubectl edit changes the bridge's CD-ROM bus",
					onlyMap: true,
					foreign: func(t *testing.T, vm *unstructured.Unstructured) {
						disks, _, _ := unstructured.NestedSlice(vm.Object, "spec", "template", "spec", "domain", "devices", "disks")
						for _, d := range disks {
							if d := d.(map[string]any); d["name"] == "media-cd0" {
								d["cdrom"] = map[string]any{"bus": "scsi", "readonly": true}
							}
						}
						if err := unstructured.SetNestedSlice(vm.Object, disks, "spec", "template", "spec", "domain", "devices", "disks"); err != nil {
							t.Fatal(err)
						}
						if _, err := admin.Resource(kubevirt.VirtualMachines).Namespace(vm.GetNamespace()).Update(t.Context(), vm, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
							t.Fatal(err)
						}
					},
					want: []dev{{"kubectl-edit", `.spec.template.spec.domain.devices.disks[name="media-cd0"].cdrom.bus`, "taken"}},
				},
			} {
				if tc.onlyMap && mode != apply.ModeMap {
					continue
				}
				t.Run(tc.name, func(t *testing.T) {
					name := fmt.Sprintf("vm-%d", time.Now().UnixNano()%1e9)
					vm := demo.SampleVM(ns, name)
					vm.SetLabels(nil)
					if _, err := admin.Resource(kubevirt.VirtualMachines).Namespace(ns).Create(t.Context(), vm, metav1.CreateOptions{FieldManager: "vm-author"}); err != nil {
						t.Fatal(err)
					}
					key := system.Key{Namespace: ns, Name: name}
					// Before the bridge wrote: the author owns runStrategy, no deviation.
					if got := deviations(t, bridge, key); len(got) != 0 {
						t.Fatalf("fresh VM deviations: %v", got)
					}
					cycle(t, w, key)
					cur, err := admin.Resource(kubevirt.VirtualMachines).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
					if err != nil {
						t.Fatal(err)
					}
					creator := createClaim(t, bridge, cur)
					if got := deviations(t, bridge, key); len(got) != 0 {
						t.Fatalf("deviations after the bridge's cycle: %v", got)
					}
					if tc.foreign == nil {
						checkObjects(t, admin, key, claimOf(cur), creator)
						return
					}
					cur, err = admin.Resource(kubevirt.VirtualMachines).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
					if err != nil {
						t.Fatal(err)
					}
					tc.foreign(t, cur)
					want := slices.Clone(tc.want)
					for i := range want {
						want[i].Path = strings.ReplaceAll(want[i].Path, "{claim}", claimOf(cur))
					}
					if diff := cmp.Diff(want, deviations(t, bridge, key), cmpopts.EquateEmpty()); diff != "" {
						t.Errorf("deviations (-want +got):\n%s", diff)
					}
					var out bytes.Buffer
					err = fields.Run(t.Context(), flag.NewFlagSet("fields", flag.ContinueOnError), []string{key.Namespace + "/" + key.Name, "--kubeconfig", c.Kubeconfig, "--check", "-o", "json"}, &out)
					if len(tc.want) == 0 {
						if err != nil {
							t.Errorf("Run --check: %v", err)
						}
						var r fields.Report
						if err := json.Unmarshal(out.Bytes(), &r); err != nil {
							t.Fatalf("json output: %v\n%s", err, out.String())
						}
						if len(r.Notes) != tc.notes {
							t.Errorf("notes %q, want %d", r.Notes, tc.notes)
						}
						return
					}
					// The command with --check fails; -o json carries the same.
					if !errors.Is(err, fields.ErrDeviation) {
						t.Errorf("Run --check: %v, want ErrDeviation", err)
					}
					var r fields.Report
					if err := json.Unmarshal(out.Bytes(), &r); err != nil {
						t.Fatalf("json output: %v\n%s", err, out.String())
					}
					if r.ModeSource != "crd" || r.Mode != mode || len(r.Deviations) != len(tc.want) {
						t.Errorf("json report: mode %s from %s, %d deviations", r.Mode, r.ModeSource, len(r.Deviations))
					}
				})
			}
		})
	}
}

// cycle is what the bridge writes for insert (import done), a Cd Once
// override, power on and an Administrator switching IPMI off.
func cycle(t *testing.T, w *apply.Client, key system.Key) {
	t.Helper()
	ctx := t.Context()
	if _, err := w.Media(ctx, key, func(_ *apply.VM, slots map[string]system.MediaSlot) error {
		slots["cd0"] = system.MediaSlot{Slot: "cd0", Image: "http://images.example/boot.iso", Phase: system.MediaReady,
			InsertID: "i1", ClaimName: "media-" + key.Name + "-cd0", Since: time.Now().UTC()}
		slots["usb0"] = system.MediaSlot{Slot: "usb0", Image: "http://images.example/config.img", Phase: system.MediaReady,
			InsertID: "i2", ClaimName: "media-" + key.Name + "-usb0", Since: time.Now().UTC()}
		return nil
	}); err != nil {
		t.Fatalf("media: %v", err)
	}
	if _, err := w.Boot(ctx, key, func(_ *apply.VM, b *system.BootOverride) error {
		b.Target, b.Enabled, b.Mode = system.BootCd, system.BootOnce, system.BootUEFI
		return nil
	}); err != nil {
		t.Fatalf("boot: %v", err)
	}
	if _, err := w.Power(ctx, key, func(_ *apply.VM, p *apply.PowerChange) error {
		p.RunStrategy = "Always"
		return nil
	}); err != nil {
		t.Fatalf("power: %v", err)
	}
	off := false
	if _, err := w.Protocols(ctx, key, system.ProtocolSwitch{IPMI: &off}); err != nil {
		t.Fatalf("protocols: %v", err)
	}
}

func deviations(t *testing.T, dyn dynamic.Interface, key system.Key) []dev {
	t.Helper()
	r, err := fields.Load(t.Context(), dyn, key.Namespace, key.Name, "auto")
	if err != nil {
		t.Fatal(err)
	}
	var out []dev
	for _, d := range r.Deviations {
		out = append(out, dev{d.Manager, d.Path, d.Kind})
	}
	return out
}

var pvcResource = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}

// claimOf is the name of the media PVC of vm's slot cd0.
func claimOf(vm *unstructured.Unstructured) string {
	return media.ClaimName(system.Key{Namespace: vm.GetNamespace(), Name: vm.GetName()}, media.DefaultSlot)
}

// createClaim creates vm's cd0 media PVC as media's reconciler does: with
// media's labels, an ownerReference to vm, by the bridge's identity and
// without a fieldManager (the apiserver names the manager after the test
// binary's user agent), and returns the manager recorded.
func createClaim(t *testing.T, bridge dynamic.Interface, vm *unstructured.Unstructured) string {
	t.Helper()
	pvc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "PersistentVolumeClaim",
		"spec": map[string]any{"accessModes": []any{"ReadWriteOnce"}, "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}},
	}}
	pvc.SetName(claimOf(vm))
	pvc.SetLabels(map[string]string{media.LabelPartOf: media.PartOf, media.LabelComponent: media.ComponentMedia, media.LabelSlot: media.DefaultSlot})
	pvc.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: kubevirt.APIVersion, Kind: kubevirt.Kind, Name: vm.GetName(), UID: vm.GetUID()}})
	created, err := bridge.Resource(pvcResource).Namespace(vm.GetNamespace()).Create(t.Context(), pvc, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create media PVC: %v", err)
	}
	if mfs := created.GetManagedFields(); len(mfs) == 1 {
		return mfs[0].Manager
	}
	t.Fatalf("created media PVC's managedFields: %+v", created.GetManagedFields())
	return ""
}

// checkObjects checks the report (read by the admin: every kind listed)
// names the media PVC, its role and its one manager, the bridge's.
func checkObjects(t *testing.T, admin dynamic.Interface, key system.Key, claim, manager string) {
	t.Helper()
	r, err := fields.Load(t.Context(), admin, key.Namespace, key.Name, "auto")
	if err != nil {
		t.Fatal(err)
	}
	want := []fields.Object{{Kind: "PersistentVolumeClaim", Name: claim, Role: "media slot " + media.DefaultSlot,
		Managers: []fields.ObjectManager{{Name: manager, Operation: "Update", Bridge: true}}}}
	if diff := cmp.Diff(want, r.Objects); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
}
