package importer

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/redfish-bridge/redfish-bridge/internal/objmac"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestPodSigned: an import pod counts as the bridge's only under its MAC,
// over its identity, owners and what its importer runs; a sidecar an
// admission webhook adds does not matter; the cache keeps the verdict and
// nothing a tenant planted.
func TestPodSigned(t *testing.T) {
	k := objmac.Derive([]byte("0123456789abcdef0123456789abcdef"), ImportPodPurpose)
	owner := Owner{Key: system.Key{Namespace: "ns", Name: "vm"}, UID: "uid-1"}
	slot := system.MediaSlot{Slot: "cd0", ClaimName: "vm-media-cd0", InsertID: "i1", Image: "https://images.example/a.iso"}
	signed := func() *corev1.Pod {
		p := PodFor(owner, slot, "bridge:1", download.ImportRequest{})
		p.Namespace = "ns"
		SignPod(k, p)
		return p
	}
	for _, tc := range []struct {
		name string
		edit func(*corev1.Pod)
		want bool
	}{
		{"as signed", func(*corev1.Pod) {}, true},
		{"a sidecar and its volume added", func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "mesh", Image: "mesh:1"})
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "mesh-certs"})
		}, true},
		{"no MAC (planted)", func(p *corev1.Pod) { delete(p.Annotations, objmac.Annotation) }, false},
		{"another image", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "tenant/forger:1" }, false},
		{"another argument", func(p *corev1.Pod) {
			c := &p.Spec.Containers[0]
			c.Args = append(c.Args, "--insecure")
		}, false},
		{"another PVC mounted", func(p *corev1.Pod) { p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName = "other" }, false},
		{"another name (the MAC copied)", func(p *corev1.Pod) { p.Name += "x" }, false},
		{"another VM's UID", func(p *corev1.Pod) { p.OwnerReferences[0].UID = "uid-2" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := signed()
			tc.edit(p)
			if got := PodSigned(k, p); got != tc.want {
				t.Errorf("PodSigned = %t, want %t", got, tc.want)
			}
			cached, err := TrimCachedPods(k)(p.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			if got := CachedPodSigned(cached.(*corev1.Pod)); got != tc.want {
				t.Errorf("cached: CachedPodSigned = %t, want %t", got, tc.want)
			}
			// client-go may transform a cached object again: the verdict stays.
			again, err := TrimCachedPods(k)(cached)
			if err != nil {
				t.Fatal(err)
			}
			if got := CachedPodSigned(again.(*corev1.Pod)); got != tc.want {
				t.Errorf("transformed twice: CachedPodSigned = %t, want %t", got, tc.want)
			}
		})
	}
	t.Run("a planted verdict is dropped", func(t *testing.T) {
		p := signed()
		delete(p.Annotations, objmac.Annotation)
		p.Annotations[cachedSigned] = "true"
		cached, err := TrimCachedPods(k)(p)
		if err != nil {
			t.Fatal(err)
		}
		if CachedPodSigned(cached.(*corev1.Pod)) {
			t.Error("a pod carrying the cache's verdict annotation itself is cached as signed")
		}
	})
	t.Run("no object secret: labels and owner decide", func(t *testing.T) {
		p := PodFor(owner, slot, "bridge:1", download.ImportRequest{})
		SignPod(objmac.Key{}, p)
		if !PodSigned(objmac.Key{}, p) {
			t.Error("without an object secret an unsigned pod is refused")
		}
	})
}
