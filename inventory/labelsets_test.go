package inventory

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestLabelsShared: the identities of two VMs with the same labels share
// one labels map, a VM with other labels gets another (each with its own
// labels), and labels the table cannot share (too long, the table full)
// are a map of the VM's own, equal to its labels.
func TestLabelsShared(t *testing.T) {
	identity := func(labels map[string]any) map[string]string {
		u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "vm", "labels": labels}}}
		return identityOf(u).Labels
	}
	same := func(a, b map[string]string) bool {
		return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	}
	fleet := map[string]any{"app.kubernetes.io/part-of": "fleet-a", "tier": "gold"}
	a, b := identity(fleet), identity(map[string]any{"tier": "gold", "app.kubernetes.io/part-of": "fleet-a"})
	if !same(a, b) {
		t.Error("two VMs with the same labels hold two labels maps, want one shared")
	}
	other := identity(map[string]any{"app.kubernetes.io/part-of": "fleet-b"})
	if same(a, other) {
		t.Error("a VM with other labels shares another VM's labels map")
	}
	if diff := cmp.Diff(map[string]string{"app.kubernetes.io/part-of": "fleet-b"}, other); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}

	long := map[string]any{"k": strings.Repeat("v", labelSetMaxLen)}
	if l1, l2 := identity(long), identity(long); same(l1, l2) || len(l1["k"]) != labelSetMaxLen {
		t.Errorf("labels too long to share: shared %v, value of %d bytes, want own maps of the labels", same(l1, l2), len(l1["k"]))
	}

	labelSets.mu.Lock()
	saved := labelSets.m
	labelSets.m = map[string]map[string]string{}
	labelSets.mu.Unlock()
	t.Cleanup(func() {
		labelSets.mu.Lock()
		labelSets.m = saved
		labelSets.mu.Unlock()
	})
	for i := range labelSetsMax {
		identity(map[string]any{"i": fmt.Sprint(i)})
	}
	full := map[string]any{"i": "one-too-many"}
	if l1, l2 := identity(full), identity(full); same(l1, l2) || l1["i"] != "one-too-many" || len(labelSets.m) != labelSetsMax {
		t.Errorf("a full table (%d sets, %d kept): shared %v, labels %v, want own maps of the labels and no more sets", labelSetsMax, len(labelSets.m), same(l1, l2), l1)
	}
}
