package testcluster_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Ground truth: how the real kube-apiserver treats two field managers that
// apply different disks, with each CRD variant. The bridge's design (see
// apply/doc.go) rests on these facts.

const (
	author = "vm-author"
	media  = "media-test"
)

// authorVM is the VM's author's intent: one root disk and its volume.
func authorVM(name string) *unstructured.Unstructured {
	return vmBody(name, []any{disk("rootdisk", 0)}, nil, []any{pvcVolume("rootdisk")})
}

// mediaVM is a second manager's intent: only a CD-ROM and its volume.
func mediaVM(name string) *unstructured.Unstructured {
	return vmBody(name, []any{cdrom("cdrom0", "sata")}, nil, []any{pvcVolume("cdrom0")})
}

// testAtomicLists runs on the stock CRD.
func testAtomicLists(t *testing.T, vms dynamic.ResourceInterface) {
	t.Run("second manager conflicts on whole lists", func(t *testing.T) {
		if _, err := apply(t, vms, authorVM("conflict"), author, false); err != nil {
			t.Fatal(err)
		}
		_, err := apply(t, vms, mediaVM("conflict"), media, false)
		if !apierrors.IsConflict(err) {
			t.Fatalf("second manager's apply: err = %v, want a 409 conflict", err)
		}
		for _, want := range []string{
			`conflicts with "` + author + `"`,
			".spec.template.spec.domain.devices.disks",
			".spec.template.spec.volumes",
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("conflict error %q does not mention %q", err, want)
			}
		}
	})

	t.Run("force replaces the whole list", func(t *testing.T) {
		before, err := apply(t, vms, authorVM("force"), author, false)
		if err != nil {
			t.Fatal(err)
		}
		if owned := ownedPaths(t, before, author); !slicesContain(owned, ".spec.template.spec.domain.devices.disks") {
			t.Fatalf("%s does not own the disks list before the forced apply: %v", author, owned)
		}
		got, err := apply(t, vms, mediaVM("force"), media, true)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"cdrom0"}, names(t, got, disksPath...)); diff != "" {
			t.Errorf("disks after forced apply (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"cdrom0"}, names(t, got, volumesPath...)); diff != "" {
			t.Errorf("volumes after forced apply (-want +got):\n%s", diff)
		}
		if owned := ownedPaths(t, got, author); slicesContain(owned, ".spec.template.spec.domain.devices.disks") {
			t.Errorf("%s still owns disks after the forced apply: %v", author, owned)
		}
	})

}

// testMapLists runs on the maplist CRD.
func testMapLists(t *testing.T, vms dynamic.ResourceInterface) {
	t.Run("managers own their own entries", func(t *testing.T) {
		if _, err := apply(t, vms, authorVM("shared"), author, false); err != nil {
			t.Fatal(err)
		}
		got, err := apply(t, vms, mediaVM("shared"), media, false)
		if err != nil {
			t.Fatalf("second manager's apply: %v, want no conflict with map lists", err)
		}
		if diff := cmp.Diff([]string{"cdrom0", "rootdisk"}, sorted(names(t, got, disksPath...))); diff != "" {
			t.Errorf("disks (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"cdrom0", "rootdisk"}, sorted(names(t, got, volumesPath...))); diff != "" {
			t.Errorf("volumes (-want +got):\n%s", diff)
		}
		owns := func(manager string, list []string, name string) bool {
			return managerSet(t, got, manager).Has(elementPath(list, name))
		}
		want := map[string]bool{
			"author owns disk rootdisk": true, "author owns disk cdrom0": false,
			"author owns volume rootdisk": true, "author owns volume cdrom0": false,
			"media owns disk cdrom0": true, "media owns disk rootdisk": false,
			"media owns volume cdrom0": true, "media owns volume rootdisk": false,
		}
		gotOwns := map[string]bool{}
		for _, m := range []struct{ label, manager string }{{"author", author}, {"media", media}} {
			for _, n := range []string{"rootdisk", "cdrom0"} {
				gotOwns[m.label+" owns disk "+n] = owns(m.manager, disksPath, n)
				gotOwns[m.label+" owns volume "+n] = owns(m.manager, volumesPath, n)
			}
		}
		if diff := cmp.Diff(want, gotOwns); diff != "" {
			t.Errorf("ownership from managedFields (-want +got):\n%s", diff)
		}
	})

}

// testStaleResourceVersion: metadata.resourceVersion in an apply body is a
// precondition, and force does not override it.
func testStaleResourceVersion(t *testing.T, vms dynamic.ResourceInterface) {
	t.Run("stale resourceVersion is a 409 even with force", func(t *testing.T) {
		first, err := apply(t, vms, authorVM("stale"), author, false)
		if err != nil {
			t.Fatal(err)
		}
		stale := first.GetResourceVersion()
		// Someone else changes the VM.
		other := authorVM("stale")
		other.SetAnnotations(map[string]string{"example.com/touched": "yes"})
		if _, err := apply(t, vms, other, "someone-else", false); err != nil {
			t.Fatal(err)
		}
		body := mediaVM("stale")
		body.SetResourceVersion(stale)
		_, err = apply(t, vms, body, media, true)
		if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "the object has been modified") {
			t.Fatalf("forced apply with stale resourceVersion: err = %v, want 409 \"the object has been modified\"", err)
		}
		got, err := vms.Get(t.Context(), "stale", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"rootdisk"}, names(t, got, disksPath...)); diff != "" {
			t.Errorf("disks after the rejected apply (-want +got):\n%s", diff)
		}
		// The same apply with the current resourceVersion goes through.
		body.SetResourceVersion(got.GetResourceVersion())
		if _, err := apply(t, vms, body, media, true); err != nil {
			t.Errorf("forced apply with current resourceVersion: %v", err)
		}
	})
}

// managerSet parses the fields manager owns (through Apply) on obj.
func managerSet(t *testing.T, obj *unstructured.Unstructured, manager string) *fieldpath.Set {
	t.Helper()
	set := &fieldpath.Set{}
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager != manager || mf.Operation != metav1.ManagedFieldsOperationApply || mf.FieldsV1 == nil {
			continue
		}
		if err := set.FromJSON(mf.FieldsV1.GetRawReader()); err != nil {
			t.Fatalf("parse managedFields of %s: %v", manager, err)
		}
	}
	return set
}

// ownedPaths lists manager's owned leaf and list paths as strings.
func ownedPaths(t *testing.T, obj *unstructured.Unstructured, manager string) []string {
	t.Helper()
	var out []string
	managerSet(t, obj, manager).Iterate(func(p fieldpath.Path) { out = append(out, p.String()) })
	return out
}

// elementPath is the path of the entry named name in the map list at list.
func elementPath(list []string, name string) fieldpath.Path {
	var parts []any
	for _, p := range list {
		parts = append(parts, p)
	}
	parts = append(parts, fieldpath.KeyByFields("name", name))
	return fieldpath.MakePathOrDie(parts...)
}

func slicesContain(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
