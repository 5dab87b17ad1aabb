package metal3

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/harness/vmcheck"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// dataISO is the file the conductor's http_root serves as the hosts'
// DataImage (other bytes than liveISO).
const dataISO = "data.iso"

// rebootAnnotation is BMO's suffixless reboot request (a soft reboot).
const rebootAnnotation = "reboot.metal3.io"

var dataImages = schema.GroupVersionResource{Group: "metal3.io", Version: "v1alpha1", Resource: "dataimages"}

// dataImageScenario runs on a provisioned, powered-on host: a DataImage is
// attached and then detached. baremetal-operator v0.13.2 handles
// DataImages only while powering on a provisioned host
// (handleDataImageActions runs when spec.online is true and
// status.poweredOn false), never on a running one, so each change takes a
// reboot (the annotation reboot.metal3.io): BMO powers the VM off, calls
// Ironic's vmedia API (attach: POST /v1/nodes/{id}/vmedia, which ejects
// every CD, the live ISO too, and inserts Ironic's own copy of the image,
// <http_url>/redfish/cdrom-<node uuid>.iso, into cd0; detach: DELETE, which ejects
// it) and powers it on again: the VM starts a new VMI with the CD.
func (h *host) dataImageScenario(t *testing.T) {
	t.Helper()
	url := h.s.imageURL(dataISO)
	h.step(t, "DataImage: attached at BMO's reboot of the provisioned host", func() {
		before := h.runningVMI(t, "").GetUID()
		h.createDataImage(t, url)
		h.reboot(t)
		h.eventually(t, "DataImage attachedImage.url", func(ctx context.Context) error {
			di, err := h.dataImage(ctx)
			if err != nil {
				return err
			}
			if got, _, _ := unstructured.NestedString(di.Object, "status", "attachedImage", "url"); got != url {
				return fmt.Errorf("status.attachedImage.url %q, want %q", got, url)
			}
			return nil
		})
		vmi := h.runningVMI(t, before)
		h.waitState(t, "provisioned", true)
		h.dataImageClean(t)
		node, err := h.s.api.Node(t.Context(), h.ns+"~"+h.name)
		if err != nil {
			t.Fatalf("Ironic node: %v", err)
		}
		// BMO records attachedImage.url as soon as Ironic accepts the attach
		// (204); whether the conductor's work after that succeeded shows on
		// the VM: the slot holds Ironic's copy of the image.
		slot := vmcheck.MustSlot(t, h.vm(t), media.DefaultSlot)
		if want := "/cdrom-" + node.UUID + ".iso"; slot.Phase != system.MediaReady || !strings.HasPrefix(slot.Image, h.s.ironic.HTTPURL+"/") || !strings.HasSuffix(slot.Image, want) {
			t.Errorf("slot %+v, want Ready with Ironic's copy of the DataImage (%s/...%s)", slot, h.s.ironic.HTTPURL, want)
		}
		spec, _, _ := unstructured.NestedMap(vmi.Object, "spec")
		cd := apply.DiskName(media.DefaultSlot)
		if got, want := vmcheck.Volumes(spec)[cd], media.ClaimName(h.key, media.DefaultSlot); got != want {
			t.Errorf("VMI %s volume %s claim %q, want %q", vmi.GetUID(), cd, got, want)
		}
	})
	h.step(t, "DataImage deleted: detached at BMO's next reboot", func() {
		before := h.runningVMI(t, "").GetUID()
		if err := h.dyn.Resource(dataImages).Namespace(h.ns).Delete(t.Context(), h.name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete DataImage %s: %v", h.name, err)
		}
		h.reboot(t)
		h.eventually(t, "DataImage gone (BMO's finalizer removed after the detach)", func(ctx context.Context) error {
			_, err := h.dataImage(ctx)
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			return errors.New("still there")
		})
		vmi := h.runningVMI(t, before)
		h.waitState(t, "provisioned", true)
		if slot := vmcheck.MustSlot(t, h.vm(t), media.DefaultSlot); slot.Phase != system.MediaEmpty {
			t.Errorf("slot %+v after the detach, want Empty", slot)
		}
		spec, _, _ := unstructured.NestedMap(vmi.Object, "spec")
		if cd := apply.DiskName(media.DefaultSlot); vmcheck.Volumes(spec)[cd] != "" {
			t.Errorf("VMI %s still has volume %s after the detach", vmi.GetUID(), cd)
		}
	})
}

// createDataImage creates the host's DataImage (BMO pairs them by name).
func (h *host) createDataImage(t *testing.T, url string) {
	t.Helper()
	di := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "metal3.io/v1alpha1",
		"kind":       "DataImage",
		"metadata":   map[string]any{"name": h.name, "namespace": h.ns},
		"spec":       map[string]any{"url": url},
	}}
	if _, err := h.dyn.Resource(dataImages).Namespace(h.ns).Create(t.Context(), di, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create DataImage: %v", err)
	}
}

func (h *host) dataImage(ctx context.Context) (*unstructured.Unstructured, error) {
	di, err := h.dyn.Resource(dataImages).Namespace(h.ns).Get(ctx, h.name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("read DataImage %s: %w", h.name, err)
	}
	return di, nil
}

// dataImageClean checks that the DataImage records no error.
func (h *host) dataImageClean(t *testing.T) {
	t.Helper()
	di, err := h.dataImage(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if msg, _, _ := unstructured.NestedString(di.Object, "status", "error", "message"); msg != "" {
		t.Errorf("DataImage status.error.message %q, want empty", msg)
	}
}

// reboot sets BMO's reboot annotation (BMO removes it once powered off).
func (h *host) reboot(t *testing.T) {
	t.Helper()
	body := fmt.Sprintf(`{"metadata":{"annotations":{%q:""}}}`, rebootAnnotation)
	if _, err := h.dyn.Resource(bareMetalHosts).Namespace(h.ns).Patch(t.Context(), h.name, types.MergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
		t.Fatalf("annotate BareMetalHost %s: %v", h.name, err)
	}
}

// runningVMI waits for a Running VMI whose UID is not notUID and returns it.
func (h *host) runningVMI(t *testing.T, notUID types.UID) *unstructured.Unstructured {
	t.Helper()
	var vmi *unstructured.Unstructured
	h.eventually(t, "a Running VMI other than "+string(notUID), func(context.Context) error {
		vmi = vmcheck.MustVMI(t, h.dyn, h.key)
		switch {
		case vmi == nil:
			return errors.New("no VMI")
		case vmi.GetUID() == notUID:
			return fmt.Errorf("VMI %s is the one before the reboot", notUID)
		case vmi.GetDeletionTimestamp() != nil || vmcheck.Phase(vmi) != "Running":
			return fmt.Errorf("VMI %s phase %q", vmi.GetUID(), vmcheck.Phase(vmi))
		}
		return nil
	})
	return vmi
}
