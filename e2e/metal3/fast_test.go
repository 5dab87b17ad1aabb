package metal3

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/ironicproc"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

var hardwareData = schema.GroupVersionResource{Group: "metal3.io", Version: "v1alpha1", Resource: "hardwaredata"}

// fastVM is the two-disk VM of the fast-inspection host of variant v:
// the sample VM (2 vCPUs, 4 GiB, one NIC on the pod network) with a
// serial on its 20 GiB root disk and a second, 8 GiB data disk with a
// serial of its own. Each variant's VM has a name of its own: the
// simulator derives a NIC's MAC from the VM's namespace and name, and
// both variants' hosts share one Ironic, where BMO 0.14 makes the
// inspected NICs the node's ports (register.go:317) and refuses a MAC
// that is already another node's port (ironic.go:281).
func fastVM(v crds.Variant) string { return "vm-fast-" + string(v) }

// fastDisk is one disk of fastVM as its spec says it.
type fastDisk struct {
	name, serial string
	size         int64
}

var fastDisks = []fastDisk{{"rootdisk", "RB-ROOT-0001", 20 << 30}, {"data", "RB-DATA-0002", 8 << 30}}

// fastScenario drives a BareMetalHost of one CRD variant through
// baremetal-operator 0.14 with `spec.inspectionMode: fast` (Ironic's
// out-of-band Redfish inspection, no ramdisk) on a two-disk VM, beside
// TestMetal3's 0.13.2 hosts in the same clusters and Ironic:
// registering -> inspecting -> available without starting the VM; the
// HardwareData BMO records describes the VM as its spec does (CPUs,
// memory, the NIC with its MAC and network, both disks with size and
// serial); rootDeviceHints written from that HardwareData (the data
// disk's serialNumber) reach Ironic as the node's root_device, and
// Ironic's own matcher selects that disk, and only it, from the
// inventory; the host then provisions a live ISO and is deleted. A
// BMCEventSubscription of the host (BMO 0.14's) hears its power-on, and
// its deletion deletes the bridge's subscription.
func fastScenario(t *testing.T, s *suite, v crds.Variant) {
	h := s.newHost(t, v)
	h.bmo, h.ns, h.inspection = s.fast[v], fastNamespace, "fast"
	h.key = system.Key{Namespace: demo.VMNamespace, Name: fastVM(v)}
	h.name = string(v) + "-fast"
	h.step(t, "a VM with two disks", func() { h.createVM(t, fastDisks) })
	h.step(t, "create (inspectionMode fast): registering -> inspecting -> available", func() {
		h.create(t)
		h.waitState(t, "available", false)
		h.noVMI(t) // out of band: the VM never ran
	})
	var es *eventSub
	h.step(t, "BMCEventSubscription (BMO 0.14): created through Ironic's passthru", func() { es = h.subscribe(t) })
	var hw map[string]any
	h.step(t, "HardwareData describes the VM; its NIC is the node's port", func() {
		hw = h.hardware(t)
		h.checkHardware(t, hw)
		h.ports(t)
	})
	h.step(t, "rootDeviceHints from HardwareData select the data disk", func() {
		serial := serialOf(t, hw, "data")
		// The hints first, until BMO has taken them into its status:
		// that status write does not wake BMO again, so a provisioning
		// asked for in the same patch would wait for its next requeue;
		// the image's patch below wakes it.
		h.patch(t, map[string]any{"rootDeviceHints": map[string]any{"serialNumber": serial}})
		h.eventually(t, "rootDeviceHints taken", func(ctx context.Context) error {
			bmh, err := h.dyn.Resource(bareMetalHosts).Namespace(h.ns).Get(ctx, h.name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if got, _, _ := unstructured.NestedString(bmh.Object, "status", "provisioning", "rootDeviceHints", "serialNumber"); got != serial {
				return fmt.Errorf("status.provisioning.rootDeviceHints.serialNumber %q", got)
			}
			return nil
		})
		since := time.Now()
		h.patch(t, map[string]any{"online": true, "image": map[string]any{"url": s.imageURL(liveISO), "format": "live-iso"}})
		h.waitState(t, "provisioned", true)
		h.bootedCD(t, s.imageURL(liveISO))
		h.rootDevice(t, "data")
		es.poweredOn(t, since)
	})
	h.step(t, "BMCEventSubscription deleted: the bridge's subscription is gone", func() { es.delete(t) })
	h.step(t, "delete: the node leaves Ironic, the VM stays", func() { h.delete(t) })
}

// createVM creates h's VM, the sample VM with disks ds, as its author
// would and waits until virt-controller has synced it.
func (h *host) createVM(t *testing.T, ds []fastDisk) {
	t.Helper()
	vm := demo.SampleVM(h.key.Namespace, h.key.Name)
	var disks, volumes []any
	for _, d := range ds {
		disks = append(disks, map[string]any{"name": d.name, "serial": d.serial, "disk": map[string]any{"bus": "virtio"}})
		volumes = append(volumes, map[string]any{"name": d.name, "emptyDisk": map[string]any{"capacity": fmt.Sprintf("%dGi", d.size>>30)}})
	}
	if err := unstructured.SetNestedSlice(vm.Object, disks, kubevirt.Disks...); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedSlice(vm.Object, volumes, kubevirt.Volumes...); err != nil {
		t.Fatal(err)
	}
	if _, err := h.dyn.Resource(kubevirt.VirtualMachines).Namespace(h.key.Namespace).Create(t.Context(), vm, metav1.CreateOptions{FieldManager: "demo-author"}); err != nil {
		t.Fatalf("create VM %s: %v", h.key, err)
	}
	if err := demo.WaitSynced(t.Context(), h.dyn, h.key.Namespace, h.key.Name); err != nil {
		t.Fatalf("VM %s: %v", h.key, err)
	}
}

// hardware is the spec.hardware of the host's HardwareData, once BMO has
// written it.
func (h *host) hardware(t *testing.T) map[string]any {
	t.Helper()
	var hw map[string]any
	h.eventually(t, "HardwareData", func(ctx context.Context) error {
		hd, err := h.dyn.Resource(hardwareData).Namespace(h.ns).Get(ctx, h.name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("read HardwareData: %w", err)
		}
		var ok bool
		if hw, ok, _ = unstructured.NestedMap(hd.Object, "spec", "hardware"); !ok {
			return fmt.Errorf("HardwareData %s has no spec.hardware", h.name)
		}
		return nil
	})
	out, _ := json.MarshalIndent(hw, "", "  ")
	t.Logf("HardwareData %s/%s spec.hardware:\n%s", h.ns, h.name, out)
	return hw
}

// checkHardware compares what HardwareData says with fastVM's spec.
func (h *host) checkHardware(t *testing.T, hw map[string]any) {
	t.Helper()
	got := map[string]any{}
	got["cpu.count"], _, _ = unstructured.NestedFieldNoCopy(hw, "cpu", "count")
	got["cpu.arch"], _, _ = unstructured.NestedFieldNoCopy(hw, "cpu", "arch")
	got["ramMebibytes"], _, _ = unstructured.NestedFieldNoCopy(hw, "ramMebibytes")
	var nics []string
	list, _, _ := unstructured.NestedSlice(hw, "nics")
	for _, n := range list {
		n, _ := n.(map[string]any)
		nics = append(nics, fmt.Sprintf("%v %v", n["name"], n["mac"]))
	}
	got["nics"] = nics
	var storage []string
	list, _, _ = unstructured.NestedSlice(hw, "storage")
	for _, d := range list {
		d, _ := d.(map[string]any)
		storage = append(storage, fmt.Sprintf("%v %v %v", d["name"], d["sizeBytes"], d["serialNumber"]))
	}
	got["storage"] = storage
	var want []string
	for _, d := range fastDisks {
		want = append(want, fmt.Sprintf("%s %d %s", d.name, d.size, d.serial))
	}
	wantAll := map[string]any{
		"cpu.count":    int64(2),
		"cpu.arch":     "x86_64",
		"ramMebibytes": int64(4096),
		// The interface's name is the VM's network (the pod network, "default").
		"nics":    []string{"default " + sim.MAC(h.key.Namespace, h.key.Name, "default")},
		"storage": want,
	}
	if diff := cmp.Diff(wantAll, got); diff != "" {
		t.Errorf("HardwareData of %s against VM %s's spec (-want +got):\n%s", h.name, h.key, diff)
	}
}

// ports checks that the host's Ironic node has one port, the VM's NIC's
// MAC (BMO 0.14 creates the ports from HardwareData's NICs before it
// lets the host leave preparing), and that no other node holds that MAC.
func (h *host) ports(t *testing.T) {
	t.Helper()
	node, err := h.s.api.Node(t.Context(), h.ns+"~"+h.name)
	if err != nil {
		t.Fatalf("Ironic node: %v", err)
	}
	mac := sim.MAC(h.key.Namespace, h.key.Name, "default")
	ports, err := h.s.api.Ports(t.Context(), node.UUID)
	if err != nil {
		t.Fatalf("ports of node %s: %v", node.UUID, err)
	}
	if len(ports) != 1 || ports[0].Address != mac {
		t.Errorf("node %s's ports %v, want one: %s (VM %s's NIC)", node.UUID, ports, mac, h.key)
	}
	var all []ironicproc.Port
	if err := h.s.api.Do(t.Context(), http.MethodGet, "/v1/ports?address="+url.QueryEscape(mac), nil, &struct {
		Ports *[]ironicproc.Port `json:"ports"`
	}{&all}); err != nil {
		t.Fatalf("ports with address %s: %v", mac, err)
	}
	if len(all) != 1 {
		t.Errorf("Ironic holds %d ports with VM %s's MAC %s, want 1: %v", len(all), h.key, mac, all)
	}
}

// serialOf is the serialNumber HardwareData gives the disk named name.
func serialOf(t *testing.T, hw map[string]any, name string) string {
	t.Helper()
	list, _, _ := unstructured.NestedSlice(hw, "storage")
	for _, d := range list {
		if d, _ := d.(map[string]any); d["name"] == name {
			if s, _ := d["serialNumber"].(string); s != "" {
				return s
			}
		}
	}
	t.Fatalf("HardwareData has no disk %q with a serialNumber: %v", name, list)
	return ""
}

// rootDevice checks that the node's root_device (what BMO wrote from
// rootDeviceHints) selects want, and only it, from the inventory of the
// fast inspection, by Ironic's own matcher; the other disk's serial
// selects the other disk (the hints discriminate).
func (h *host) rootDevice(t *testing.T, want string) {
	t.Helper()
	node, err := h.s.api.Node(t.Context(), h.ns+"~"+h.name)
	if err != nil {
		t.Fatalf("Ironic node: %v", err)
	}
	hints, _ := node.InstanceInfo["root_device"].(map[string]any)
	inv, err := h.s.api.NodeInventory(t.Context(), node.UUID)
	if err != nil {
		t.Fatalf("inventory: %v", err)
	}
	disks, _ := inv.Inventory["disks"].([]any)
	got, err := h.s.release.MatchRootDevice(t.Context(), disks, hints)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("root_device %v selects %v of the inventory's disks %v", hints, got, disks)
	if !slices.Equal(got, []string{want}) {
		t.Errorf("root_device %v selects %v of %v, want only %q", hints, got, disks, want)
	}
	other := map[string]any{"serial": "s== " + fastDisks[0].serial}
	if got, err := h.s.release.MatchRootDevice(t.Context(), disks, other); err != nil || !slices.Equal(got, []string{fastDisks[0].name}) {
		t.Errorf("the root disk's serial %v selects %v (%v), want only %q", other, got, err, fastDisks[0].name)
	}
}

// badBMCScenario: BareMetalHosts (BMO 0.14) whose BMC cannot be used
// show a registration error on the host and write nothing to any VM: a
// System that does not exist, and wrong credentials for a VM that does
// (no field manager of the bridge on it).
func badBMCScenario(t *testing.T, s *suite) {
	v := crds.Variants[0]
	cases := []struct {
		name, vm, password string
		want               string // in the host's errorMessage: the bridge's answer
	}{
		{"no-such-system", "vm-nope", "", "/redfish/v1/Systems/demo.vm-nope not found"},
		{"wrong-password", "vm-bad", "not-the-password", "returned code 401"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := s.newHost(t, v)
			// fast: no bootMACAddress needed (0.14 refuses a host
			// without one that it cannot inspect), so the BMC is tried.
			h.bmo, h.ns, h.inspection = s.fast[v], fastNamespace, "fast"
			h.key = system.Key{Namespace: demo.VMNamespace, Name: c.vm}
			h.name = "bad-" + c.name
			if c.password != "" {
				h.createVM(t, fastDisks[:1])
				h.env = &demo.Env{URL: h.env.URL, User: h.env.User, Password: c.password}
			}
			h.step(t, "create: a registration error on the host", func() {
				h.create(t)
				h.eventually(t, "registration error", func(ctx context.Context) error {
					bmh, err := h.dyn.Resource(bareMetalHosts).Namespace(h.ns).Get(ctx, h.name, metav1.GetOptions{})
					if err != nil {
						return err
					}
					typ, _, _ := unstructured.NestedString(bmh.Object, "status", "errorType")
					msg, _, _ := unstructured.NestedString(bmh.Object, "status", "errorMessage")
					op, _, _ := unstructured.NestedString(bmh.Object, "status", "operationalStatus")
					if typ != "registration error" || msg == "" || op != "error" || !strings.Contains(msg, c.want) {
						return fmt.Errorf("errorType %q operationalStatus %q errorMessage %q", typ, op, msg)
					}
					t.Logf("BareMetalHost %s: %s: %s", h.name, typ, msg)
					return nil
				})
			})
			if c.password != "" {
				for _, mf := range h.vm(t).GetManagedFields() {
					if strings.HasPrefix(mf.Manager, "redfish-") {
						t.Errorf("VM %s written by a host with wrong credentials: field manager %s (%s)", h.key, mf.Manager, mf.Operation)
					}
				}
			} else if _, err := h.dyn.Resource(kubevirt.VirtualMachines).Namespace(h.key.Namespace).Get(t.Context(), h.key.Name, metav1.GetOptions{}); err == nil {
				t.Errorf("VM %s exists after a host named its System", h.key)
			}
		})
	}
}
