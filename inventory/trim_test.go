package inventory

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestTrimmedCache checks on a real apiserver, both CRD variants, what the
// caches keep: VMs, VMIs and PVCs without managedFields or kubectl's
// last-applied annotation, a VM cut to what is read (its reads equal the
// live VM's, of its annotations the bridge's only), a VMI's spec cut to
// firmware.uuid, firmware.bootloader and rebootPolicy; what the Writer
// reads of a VM's managedFields kept aside for the cached version (the
// bridge's managers' fields, others' under firmware.bootloader.efi only),
// and forgotten when the VM is deleted.
func TestTrimmedCache(t *testing.T) {
	eachVariant(t, func(t *testing.T, c *testcluster.Cluster) {
		ctx := t.Context()
		const ns = "trim"
		if err := c.CreateNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
		cl := newTestClients(t, c)
		admin, adminKube := cl.admin, cl.adminKube
		u := vm(ns, "a", nil)
		u.SetAnnotations(map[string]string{lastApplied: `{"big":"copy"}`, "keep": "me", apply.AnnotationPower: `{"onDeferred":true}`})
		if err := unstructured.SetNestedField(u.Object, map[string]any{"secureBoot": false}, kubevirt.EFI...); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Resource(kubevirt.VirtualMachines).Namespace(ns).Create(ctx, u, metav1.CreateOptions{FieldManager: "author"}); err != nil {
			t.Fatal(err)
		}
		// The bridge's power manager and a manager owning nothing under efi.
		for manager, patch := range map[string]string{"redfish-power": `{"spec":{"runStrategy":"Always"}}`, "other": `{"metadata":{"labels":{"l":"v"}}}`} {
			if _, err := admin.Resource(kubevirt.VirtualMachines).Namespace(ns).Patch(ctx, "a", types.MergePatchType,
				[]byte(patch), metav1.PatchOptions{FieldManager: manager}); err != nil {
				t.Fatal(err)
			}
		}
		vmi := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
			"metadata": map[string]any{"name": "a", "namespace": ns},
			"spec": map[string]any{"domain": map[string]any{
				"firmware": map[string]any{"uuid": "5f1c7d3e-0000-4000-8000-000000000001", "serial": "x",
					"bootloader": map[string]any{"efi": map[string]any{"secureBoot": true}}},
				"rebootPolicy": "Terminate",
				"devices":      map[string]any{"disks": []any{map[string]any{"name": "rootdisk"}}},
			}},
		}}
		if _, err := admin.Resource(kubevirt.VirtualMachineInstances).Namespace(ns).Create(ctx, vmi, metav1.CreateOptions{FieldManager: "author"}); err != nil {
			t.Fatal(err)
		}
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "iso", Namespace: ns},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}
		if _, err := adminKube.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		inv, err := Start(ctx, cl.bridge, cl.bridgeKube, []string{ns})
		if err != nil {
			t.Fatal(err)
		}
		key := system.Key{Namespace: ns, Name: "a"}
		live, err := admin.Resource(kubevirt.VirtualMachines).Namespace(ns).Get(ctx, "a", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var cached *unstructured.Unstructured
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if cached, err = inv.VM(key); err == nil && cached.GetResourceVersion() == live.GetResourceVersion() {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cache never showed VM a at %s: %v", live.GetResourceVersion(), err)
			}
		}
		if mf := cached.GetManagedFields(); len(mf) != 0 {
			t.Errorf("cached VM carries %d managedFields entries, want none", len(mf))
		}
		if diff := cmp.Diff(map[string]string{apply.AnnotationPower: `{"onDeferred":true}`}, cached.GetAnnotations()); diff != "" {
			t.Errorf("cached VM annotations (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(vmReadsOf(t, live), vmReadsOf(t, cached)); diff != "" {
			t.Errorf("reads of the cached VM differ from the live one's (-live +cached):\n%s", diff)
		}
		aside, ok := inv.VMManagedFields(key, live.GetResourceVersion())
		if !ok {
			t.Fatal("no managedFields kept aside for the cached version")
		}
		if diff := cmp.Diff(ownedPaths(t, live.GetManagedFields(), kubevirt.EFI), ownedPaths(t, aside, nil)); diff != "" {
			t.Errorf("managedFields kept aside (-want +aside):\n%s", diff)
		}
		if _, ok := inv.VMManagedFields(key, "1"); ok {
			t.Error("managedFields answered for a version that is not the cached one")
		}

		var cachedVMI *unstructured.Unstructured
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if cachedVMI, err = inv.VMI(key); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cache never showed VMI a: %v", err)
			}
		}
		if mf := cachedVMI.GetManagedFields(); len(mf) != 0 {
			t.Errorf("cached VMI carries %d managedFields entries, want none", len(mf))
		}
		wantSpec := map[string]any{"domain": map[string]any{
			"firmware": map[string]any{"uuid": "5f1c7d3e-0000-4000-8000-000000000001",
				"bootloader": map[string]any{"efi": map[string]any{"secureBoot": true}}},
			"rebootPolicy": "Terminate"}}
		if diff := cmp.Diff(wantSpec, cachedVMI.Object["spec"]); diff != "" {
			t.Errorf("cached VMI spec (-want +got):\n%s", diff)
		}
		cachedPVC, err := inv.PVC(ns, "iso")
		if err != nil {
			t.Fatal(err)
		}
		if len(cachedPVC.ManagedFields) != 0 {
			t.Errorf("cached PVC carries %d managedFields entries, want none", len(cachedPVC.ManagedFields))
		}

		if err := admin.Resource(kubevirt.VirtualMachines).Namespace(ns).Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			inv.owners.mu.RLock()
			_, kept := inv.owners.m[key]
			inv.owners.mu.RUnlock()
			if !kept {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("managedFields of the deleted VM still kept aside")
			}
		}
	})
}

// ownedPaths lists the paths each manager of entries owns; with efi set,
// the bridge's managers' whole and other managers' under efi only (and
// managers owning nothing there left out).
func ownedPaths(t *testing.T, entries []metav1.ManagedFieldsEntry, efi kubevirt.Path) map[string][]string {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetManagedFields(entries)
	owned, err := apply.Owned(u)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for manager, set := range owned {
		for _, p := range apply.Paths(set) {
			if efi == nil || strings.HasPrefix(manager, "redfish-") || strings.HasPrefix(p, "."+efi.String()) {
				out[manager] = append(out[manager], p)
			}
		}
	}
	return out
}
