package apply

import (
	"context"
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// vmYAML is the base VM the tests read: a root disk, a cloud-init disk, one
// interface, no bootOrder anywhere, runStrategy Halted.
const vmJSON = `{
  "apiVersion": "kubevirt.io/v1",
  "kind": "VirtualMachine",
  "metadata": {"name": "vm1", "namespace": "ns1", "resourceVersion": "42"},
  "spec": {
    "runStrategy": "Halted",
    "template": {
      "metadata": {"labels": {"app": "vm1"}},
      "spec": {
        "domain": {
          "devices": {
            "disks": [
              {"name": "rootdisk", "disk": {"bus": "virtio"}},
              {"name": "cloudinit", "disk": {"bus": "virtio"}}
            ],
            "interfaces": [{"name": "default", "masquerade": {}}]
          },
          "resources": {"requests": {"memory": "128Mi"}}
        },
        "networks": [{"name": "default", "pod": {}}],
        "volumes": [
          {"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:latest"}},
          {"name": "cloudinit", "cloudInitNoCloud": {"userData": "#cloud-config\n"}}
        ]
      }
    }
  }
}`

// baseVM returns a fresh unstructured copy of vmJSON.
func baseVM(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(vmJSON), &u.Object); err != nil {
		t.Fatalf("decode fixture: %v", err)
	}
	return u
}

// readySlot is slot cd0 holding an imported image.
func readySlot() system.MediaSlot {
	return system.MediaSlot{Slot: "cd0", Image: "http://images/boot.iso", Phase: system.MediaReady, InsertID: "i-1", ClaimName: "vm1-cd0-i-1"}
}

// withCD adds slot cd0's annotation, CD-ROM disk and volume as the media
// manager would have written them.
func withCD(t *testing.T, u *unstructured.Unstructured, bootOrder int64) *unstructured.Unstructured {
	t.Helper()
	s := readySlot()
	raw, _ := json.Marshal(s)
	annotate(u, AnnotationMediaPrefix+"cd0", string(raw))
	disks := list(u, kubevirt.Disks)
	d := mediaDisk("cd0")
	if bootOrder > 0 {
		d["bootOrder"] = bootOrder
	}
	disks = append(disks, d)
	vols := append(list(u, kubevirt.Volumes), mediaVolume(s, false))
	if err := unstructured.SetNestedSlice(u.Object, toSlice(disks), kubevirt.Disks...); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedSlice(u.Object, toSlice(vols), kubevirt.Volumes...); err != nil {
		t.Fatal(err)
	}
	return u
}

// withBootOrders sets bootOrders on disks by name.
func withBootOrders(t *testing.T, u *unstructured.Unstructured, orders map[string]int64) *unstructured.Unstructured {
	t.Helper()
	disks := list(u, kubevirt.Disks)
	for _, d := range disks {
		if n, ok := orders[kubevirt.NameOf(d)]; ok {
			d["bootOrder"] = n
		}
	}
	if err := unstructured.SetNestedSlice(u.Object, toSlice(disks), kubevirt.Disks...); err != nil {
		t.Fatal(err)
	}
	return u
}

// withBoot records a boot override annotation.
func withBoot(u *unstructured.Unstructured, o system.BootOverride) *unstructured.Unstructured {
	raw, _ := json.Marshal(o)
	annotate(u, AnnotationBoot, string(raw))
	return u
}

func annotate(u *unstructured.Unstructured, k, v string) {
	a := u.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[k] = v
	u.SetAnnotations(a)
}

func decodeFixture(u *unstructured.Unstructured) *VM {
	return Decode(context.Background(), system.Key{Namespace: u.GetNamespace(), Name: u.GetName()}, u, nil)
}
