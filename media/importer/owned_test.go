package importer

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestOwns: only the part-of label plus an ownerReference to this VM's UID
// make an object the bridge's; a name, a label or an ownerReference by
// name alone do not.
func TestOwns(t *testing.T) {
	o := Owner{Key: system.Key{Namespace: "ns", Name: "vm1"}, UID: "uid-1"}
	slot := system.MediaSlot{Slot: "cd0", ClaimName: "vm1-media-cd0", InsertID: "0123456789abcdef"}
	ours := ClaimFor(o, slot, resource.MustParse("1Gi"), "")
	edit := func(f func(*corev1.PersistentVolumeClaim)) *corev1.PersistentVolumeClaim {
		c := ours.DeepCopy()
		f(c)
		return c
	}
	tests := []struct {
		name string
		obj  metav1.Object
		o    Owner
		want bool
	}{
		{"ours", ours, o, true},
		{"same name, no label, no Owner", &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "vm1-media-cd0", Namespace: "ns"}}, o, false},
		{"our labels, no Owner", edit(func(c *corev1.PersistentVolumeClaim) { c.OwnerReferences = nil }), o, false},
		{"Owner by name, other UID", edit(func(c *corev1.PersistentVolumeClaim) { c.OwnerReferences[0].UID = "uid-2" }), o, false},
		{"Owner, no label", edit(func(c *corev1.PersistentVolumeClaim) { delete(c.Labels, LabelPartOf) }), o, false},
		{"other namespace", edit(func(c *corev1.PersistentVolumeClaim) { c.Namespace = "other" }), o, false},
		{"VM UID unknown", ours, Owner{Key: o.Key}, false},
		{"other VM", ours, Owner{Key: system.Key{Namespace: "ns", Name: "vm2"}, UID: "uid-1"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.o.Owns(tt.obj); got != tt.want {
				t.Fatalf("owns = %v, want %v", got, tt.want)
			}
		})
	}
}
