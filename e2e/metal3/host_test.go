package metal3

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/ironicproc"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/harness/vmcheck"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// hostNamespace holds the BareMetalHosts and their BMC Secrets of
// baremetal-operator 0.13.2 (the only namespace its manager watches);
// fastNamespace those of 0.14.
const (
	hostNamespace = "metal3"
	fastNamespace = "metal3-fast"
)

// stepTimeout bounds every wait of one step (generous: BMO requeues every
// 10 s while Ironic works, and two demos share a loaded machine).
const stepTimeout = 5 * time.Minute

var bareMetalHosts = schema.GroupVersionResource{Group: "metal3.io", Version: "v1alpha1", Resource: "baremetalhosts"}

// host is one BareMetalHost on the sample VM of one variant's demo.
type host struct {
	s       *suite
	variant crds.Variant
	env     *demo.Env
	bmo     *bmo
	dyn     dynamic.Interface
	kube    kubernetes.Interface
	key     system.Key // the VM
	name    string     // the BareMetalHost, in ns
	ns      string     // the namespace its manager watches
	// inspection is the host's spec.inspectionMode (BMO 0.14); "" is
	// inspection disabled by the inspect.metal3.io annotation (0.13.2).
	inspection string
}

// TestMetal3 drives a BareMetalHost per CRD variant, side by side, through
// baremetal-operator's states on a KubeVirt VM: registering -> available
// (inspection disabled) with HostFirmwareSettings read from the System's
// Bios, a BMCEventSubscription (subscribe: created through Ironic's
// vendor passthru, the receiver hears the provisioning's power-on with the
// subscription's header, deleted after online true), provisioning a live-iso image (Ironic's ramdisk deploy from
// virtual media) with SecureBoot Enabled through HostFirmwareSettings
// (preparing: manual cleaning without an agent) -> provisioned, online
// false and true, a DataImage attached and detached (each at a reboot:
// dataImageScenario), deprovisioning -> available, delete. Beside them, in
// the same clusters and Ironic, BMO 0.14's hosts run at once: fast
// inspection per variant (fastScenario) and the bad BMCs (badBMCScenario).
func TestMetal3(t *testing.T) {
	s := suiteFor(t)
	for _, v := range crds.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			liveISOScenario(t, s, v)
		})
	}
	for _, v := range crds.Variants {
		t.Run("0.14-fast-"+string(v), func(t *testing.T) {
			if s.fastMissing != "" {
				testutil.Missing(t, "%s: 0.14's fast inspection not run", s.fastMissing)
			}
			t.Parallel()
			fastScenario(t, s, v)
		})
	}
	t.Run("0.14-bad-bmc", func(t *testing.T) {
		if s.fastMissing != "" {
			testutil.Missing(t, "%s: 0.14's bad BMCs not run", s.fastMissing)
		}
		t.Parallel()
		badBMCScenario(t, s)
	})
}

func liveISOScenario(t *testing.T, s *suite, v crds.Variant) {
	h := s.newHost(t, v)
	image := s.imageURL(liveISO)
	h.step(t, "create: registering -> available", func() {
		h.create(t)
		h.waitState(t, "available", false)
		h.noVMI(t)
	})
	var es *eventSub
	h.step(t, "BMCEventSubscription: created through Ironic's passthru", func() { es = h.subscribe(t) })
	h.step(t, "HostFirmwareSettings: the System's Bios with its AttributeRegistry", func() {
		h.firmwareSettings(t, map[string]string{"BootMode": "Uefi", "SecureBoot": "Disabled"})
	})
	h.step(t, "provision live-iso with HostFirmwareSettings SecureBoot Enabled: preparing -> provisioning -> provisioned", func() {
		since := time.Now()
		h.setFirmware(t, map[string]any{"SecureBoot": "Enabled"})
		h.patch(t, map[string]any{"online": true, "image": map[string]any{"url": image, "format": "live-iso"}})
		h.waitState(t, "provisioned", true)
		h.bootedCD(t, image)
		if vm, vmi := h.secureBoot(t); vm != "true" || vmi != "true" {
			t.Errorf("efi.secureBoot of the VM %s, of its running VMI %s after HostFirmwareSettings SecureBoot Enabled, want true", vm, vmi)
		}
		h.firmwareSettings(t, map[string]string{"BootMode": "Uefi", "SecureBoot": "Enabled"})
		es.poweredOn(t, since)
	})
	h.step(t, "online false: the VM stops", func() {
		h.patch(t, map[string]any{"online": false})
		h.waitState(t, "provisioned", false)
		h.noVMI(t)
	})
	h.step(t, "online true: the VM runs the live ISO again", func() {
		h.patch(t, map[string]any{"online": true})
		h.waitState(t, "provisioned", true)
		h.bootedCD(t, image)
	})
	h.step(t, "BMCEventSubscription deleted: the bridge's subscription is gone", func() { es.delete(t) })
	h.dataImageScenario(t)
	h.step(t, "deprovision: deprovisioning -> available, the ISO ejected", func() {
		h.patch(t, map[string]any{"online": false, "image": nil})
		h.waitState(t, "available", false)
		h.noVMI(t)
		h.ejected(t)
	})
	h.step(t, "delete: the node leaves Ironic, the VM stays", func() { h.delete(t) })
}

// delete deletes the BareMetalHost and waits until it is gone: its node
// left Ironic, its VM is still there.
func (h *host) delete(t *testing.T) {
	t.Helper()
	if err := h.dyn.Resource(bareMetalHosts).Namespace(h.ns).Delete(t.Context(), h.name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete BareMetalHost %s: %v", h.name, err)
	}
	h.eventually(t, "BareMetalHost gone", func(ctx context.Context) error {
		_, err := h.dyn.Resource(bareMetalHosts).Namespace(h.ns).Get(ctx, h.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read BareMetalHost: %w", err)
		}
		return errors.New("still there")
	})
	if _, err := h.s.api.Node(t.Context(), h.ns+"~"+h.name); !ironicproc.IsStatus(err, http.StatusNotFound) {
		t.Errorf("Ironic node %s~%s after the delete: %v, want 404", h.ns, h.name, err)
	}
	h.vm(t)
	h.checkFields(t)
}

// newHost names the host after the variant (both managers share one
// Ironic, whose node names are <namespace>~<name>) and arranges for the
// diagnostics to be printed if the test fails.
func (s *suite) newHost(t *testing.T, v crds.Variant) *host {
	t.Helper()
	env := s.envs[v]
	dyn, err := dynamic.NewForConfig(env.Cluster.Admin)
	if err != nil {
		t.Fatalf("admin dynamic client: %v", err)
	}
	kube, err := kubernetes.NewForConfig(env.Cluster.Admin)
	if err != nil {
		t.Fatalf("admin client: %v", err)
	}
	h := &host{s: s, variant: v, env: env, bmo: s.bmos[v], dyn: dyn, kube: kube,
		key: system.Key{Namespace: demo.VMNamespace, Name: demo.SampleVMNames(1)[0]}, name: string(v) + "-host", ns: hostNamespace}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("diagnostics of BareMetalHost %s (%s):\n%s", h.name, h.key, h.diagnostics())
		}
	})
	return h
}

// create writes the BMC Secret and the BareMetalHost: the VM's System as a
// redfish-virtualmedia BMC with the bridge's self-signed certificate,
// inspection disabled (or h.inspection), automated cleaning off, powered
// off.
func (h *host) create(t *testing.T) {
	t.Helper()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: h.name + "-bmc", Namespace: h.ns},
		StringData: map[string]string{"username": h.env.User, "password": h.env.Password},
	}
	if _, err := h.kube.CoreV1().Secrets(h.ns).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create BMC Secret: %v", err)
	}
	bmh := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "metal3.io/v1alpha1",
		"kind":       "BareMetalHost",
		"metadata": map[string]any{
			"name": h.name, "namespace": h.ns,
			"annotations": map[string]any{"inspect.metal3.io": "disabled"},
		},
		"spec": map[string]any{
			"online":                false,
			"bootMode":              "UEFI",
			"automatedCleaningMode": "disabled",
			"bmc": map[string]any{
				"address":                        "redfish-virtualmedia+" + h.env.URL + "/redfish/v1/Systems/" + h.key.ID(),
				"credentialsName":                secret.Name,
				"disableCertificateVerification": true,
			},
		},
	}}
	if h.inspection != "" {
		unstructured.RemoveNestedField(bmh.Object, "metadata", "annotations")
		if err := unstructured.SetNestedField(bmh.Object, h.inspection, "spec", "inspectionMode"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.dyn.Resource(bareMetalHosts).Namespace(h.ns).Create(t.Context(), bmh, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create BareMetalHost: %v", err)
	}
}

// patch merges spec into the BareMetalHost's spec.
func (h *host) patch(t *testing.T, spec map[string]any) {
	t.Helper()
	body, err := (&unstructured.Unstructured{Object: map[string]any{"spec": spec}}).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.dyn.Resource(bareMetalHosts).Namespace(h.ns).Patch(t.Context(), h.name, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch BareMetalHost %s %s: %v", h.name, body, err)
	}
}

// status is what the test reads of a BareMetalHost's status.
type status struct {
	state, operational, errMsg string
	poweredOn                  bool
}

func (st status) String() string {
	return fmt.Sprintf("provisioning.state %q operationalStatus %q poweredOn %v errorMessage %q", st.state, st.operational, st.poweredOn, st.errMsg)
}

func (h *host) status(ctx context.Context) (status, error) {
	bmh, err := h.dyn.Resource(bareMetalHosts).Namespace(h.ns).Get(ctx, h.name, metav1.GetOptions{})
	if err != nil {
		return status{}, fmt.Errorf("read BareMetalHost %s: %w", h.name, err)
	}
	var st status
	st.state, _, _ = unstructured.NestedString(bmh.Object, "status", "provisioning", "state")
	st.operational, _, _ = unstructured.NestedString(bmh.Object, "status", "operationalStatus")
	st.errMsg, _, _ = unstructured.NestedString(bmh.Object, "status", "errorMessage")
	st.poweredOn, _, _ = unstructured.NestedBool(bmh.Object, "status", "poweredOn")
	return st, nil
}

// waitState waits until BMO reports the host in state, operational (OK,
// no error) and powered as poweredOn; an error state fails at once. Then
// `fields --check` runs on the VM.
func (h *host) waitState(t *testing.T, state string, poweredOn bool) {
	t.Helper()
	h.eventually(t, fmt.Sprintf("state %s poweredOn %v", state, poweredOn), func(ctx context.Context) error {
		st, err := h.status(ctx)
		if err != nil {
			return err
		}
		if st.errMsg != "" || st.operational == "error" {
			t.Fatalf("BareMetalHost %s failed: %s", h.name, st)
		}
		if st.state != state || st.operational != "OK" || st.poweredOn != poweredOn {
			return fmt.Errorf("BareMetalHost %s: %s", h.name, st)
		}
		return nil
	})
	h.checkFields(t)
}

// eventually waits for cond (stepTimeout), failing early when the manager
// exits.
func (h *host) eventually(t *testing.T, what string, cond func(ctx context.Context) error) {
	t.Helper()
	testutil.Eventually(t, what, stepTimeout, time.Second, func(ctx context.Context) error {
		if why := h.bmo.exited(); why != "" {
			t.Fatal(why)
		}
		return cond(ctx)
	})
}

// step runs f, logging its duration as a TIMING line.
func (h *host) step(t *testing.T, name string, f func()) {
	t.Helper()
	start := time.Now()
	f()
	t.Logf("TIMING metal3 %s %s: %s", h.variant, name, time.Since(start).Round(time.Millisecond))
}

// vm reads the VirtualMachine.
func (h *host) vm(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	return vmcheck.MustVM(t, h.dyn, h.key)
}

// noVMI waits until the VM has no VMI and runStrategy Halted.
func (h *host) noVMI(t *testing.T) {
	t.Helper()
	h.eventually(t, "VMI gone", func(context.Context) error {
		if vmi := vmcheck.MustVMI(t, h.dyn, h.key); vmi != nil {
			return fmt.Errorf("VMI %s phase %q", vmi.GetUID(), vmcheck.Phase(vmi))
		}
		return nil
	})
	if rs, _, _ := unstructured.NestedString(h.vm(t).Object, "spec", "runStrategy"); rs != "Halted" {
		t.Errorf("runStrategy %q with the host powered off, want Halted", rs)
	}
}

// bootedCD waits for a Running VMI that boots the virtual-media CD-ROM
// first, from the PVC holding image.
func (h *host) bootedCD(t *testing.T, image string) {
	t.Helper()
	var vmi *unstructured.Unstructured
	h.eventually(t, "VMI Running", func(context.Context) error {
		vmi = vmcheck.MustVMI(t, h.dyn, h.key)
		if vmi == nil || vmi.GetDeletionTimestamp() != nil || vmcheck.Phase(vmi) != "Running" {
			return fmt.Errorf("VMI phase %q", vmcheck.Phase(vmi))
		}
		return nil
	})
	spec, _, _ := unstructured.NestedMap(vmi.Object, "spec")
	cd := apply.DiskName(media.DefaultSlot)
	if ds := vmcheck.Disks(spec); len(ds) == 0 || ds[0].Name != cd || !ds[0].CDROM || ds[0].BootOrder == 0 {
		t.Errorf("VMI %s disks by boot order %+v: want the %s CD-ROM first", vmi.GetUID(), ds, cd)
	}
	if got, want := vmcheck.Volumes(spec)[cd], media.ClaimName(h.key, media.DefaultSlot); got != want {
		t.Errorf("VMI volume %s claim %q, want %q", cd, got, want)
	}
	if slot := vmcheck.MustSlot(t, h.vm(t), media.DefaultSlot); slot.Phase != system.MediaReady || slot.Image != image {
		t.Errorf("slot %+v, want Ready with %s", slot, image)
	}
}

// ejected waits until the slot is empty and no import pod or media PVC is
// left.
func (h *host) ejected(t *testing.T) {
	t.Helper()
	h.eventually(t, "ISO ejected", func(ctx context.Context) error {
		if slot := vmcheck.MustSlot(t, h.vm(t), media.DefaultSlot); slot.Phase != system.MediaEmpty {
			return fmt.Errorf("slot %+v", slot)
		}
		left, err := vmcheck.MediaObjects(ctx, h.kube, h.key, media.DefaultSlot)
		if err != nil {
			return err
		}
		if len(left) > 0 {
			return fmt.Errorf("left: %v", left)
		}
		return nil
	})
}

// checkFields runs `fields --check` on the VM.
func (h *host) checkFields(t *testing.T) {
	t.Helper()
	vmcheck.CheckFields(t, h.dyn, h.key)
}

// diagnostics is what a failing host prints: its status, the Ironic node,
// and the manager's and the conductor's log lines about it.
func (h *host) diagnostics() string {
	var b strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if st, err := h.status(ctx); err != nil {
		fmt.Fprintf(&b, "%v\n", err)
	} else {
		fmt.Fprintf(&b, "BareMetalHost: %s\n", st)
	}
	node := h.ns + "~" + h.name
	uuid := node
	if n, err := h.s.api.Node(ctx, node); err != nil {
		fmt.Fprintf(&b, "Ironic node %s: %v\n", node, err)
	} else {
		uuid = n.UUID
		fmt.Fprintf(&b, "Ironic node: %s\n", n.Summary())
	}
	fmt.Fprintf(&b, "--- baremetal-operator log (last lines naming the host):\n%s\n", h.bmo.logTail(40, h.name))
	fmt.Fprintf(&b, "--- conductor log (last lines naming the node):\n%s\n", h.s.ironic.LogTail(40, uuid))
	return b.String()
}
