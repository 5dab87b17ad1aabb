package ironic

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/ipmi"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// The IPMI ports of each demo's range, one per scenario that names one.
const (
	ipmiPortHardwareType = iota // ipmiScenario's node
	ipmiPortConsole             // consoleScenario's node
	numIPMIPorts
)

// ipmiPassword is the demo admin's IPMI password (auth.SuffixIPMIPassword
// in the users Secret).
const ipmiPassword = "ironic-ipmi-password"

// freeUDPRange is the first of n consecutive UDP ports of 127.0.0.1 free
// when asked.
func freeUDPRange(n int) (int, error) {
	for range 50 {
		first, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			return 0, fmt.Errorf("free UDP port: %w", err)
		}
		port := first.LocalAddr().(*net.UDPAddr).Port
		held := []*net.UDPConn{first}
		for i := 1; i < n && port+i <= 65535; i++ {
			c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port + i})
			if err != nil {
				break
			}
			held = append(held, c)
		}
		for _, c := range held {
			_ = c.Close()
		}
		if len(held) == n {
			return port, nil
		}
	}
	return 0, errors.New("no range of free UDP ports found in 50 tries")
}

// ipmiConfig is a demo's IPMI endpoint on n ports from first.
func ipmiConfig(first, n int) ipmi.Config {
	return ipmi.Config{Address: "127.0.0.1", FirstPort: first, LastPort: first + n - 1}
}

// giveIPMIPassword writes the demo admin's IPMI password into the users
// Secret, as an administrator does.
func giveIPMIPassword(env *demo.Env) error {
	kube, err := kubernetes.NewForConfig(env.Cluster.Admin)
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	patch, err := json.Marshal(map[string]any{"data": map[string][]byte{env.User + auth.SuffixIPMIPassword: []byte(ipmiPassword)}})
	if err != nil {
		return err
	}
	ctx, cancel := contextFor()
	defer cancel()
	if _, err := kube.CoreV1().Secrets(env.Cluster.BridgeNamespace).Patch(ctx, demo.UsersSecret, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("give %s an IPMI password: %w", env.User, err)
	}
	return nil
}

// enrollIPMI gives the sample VM of scenario the IPMI port of the suite's
// range at index (the VM author's annotation) and enrolls it with the
// `ipmi` hardware type on that port.
func (s *suite) enrollIPMI(t *testing.T, v crds.Variant, scenario, index int) (*node, int) {
	t.Helper()
	port := s.ipmiPorts[v] + index
	vm := fmt.Sprintf("vm-%d", s.vmIndex(v, scenario))
	n := s.newNode(t, v, vm)
	n.annotateIPMIPort(t, port)
	n.create(t, map[string]any{
		"name":   fmt.Sprintf("%s-%s", v, n.key.Name),
		"driver": "ipmi",
		"driver_info": map[string]any{
			"ipmi_address":  "127.0.0.1",
			"ipmi_port":     port,
			"ipmi_username": n.env.User,
			"ipmi_password": ipmiPassword,
		},
		"boot_interface":    "pxe",
		"deploy_interface":  "ramdisk",
		"inspect_interface": "no-inspect",
		"network_interface": "noop",
	})
	return n, port
}

// annotateIPMIPort gives the node's VM the IPMI port, as its author
// does (ipmi.PortAnnotation).
func (n *node) annotateIPMIPort(t *testing.T, port int) {
	t.Helper()
	n.step(t, "the VM's author names its IPMI port", func() {
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{ipmi.PortAnnotation: strconv.Itoa(port)}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := n.dyn.Resource(kubevirt.VirtualMachines).Namespace(n.key.Namespace).Patch(t.Context(), n.key.Name,
			types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "vm-author"}); err != nil {
			t.Fatalf("annotate %s with IPMI port %d: %v", n.key, port, err)
		}
	})
}

// ipmiScenario (Ironic 39, the `ipmi` hardware type): a node whose BMC is
// the bridge's IPMI endpoint of its VM is managed (Ironic's ipmitool reads
// the power state), powered on and off, and given boot devices
// persistent and once in UEFI (Ironic's raw Set System Boot Options,
// parameter 3 then 5); each change is checked on the VM, written by the
// bridge's own server-side applies (redfish-power, redfish-boot).
func ipmiScenario(t *testing.T, s *suite, v crds.Variant) {
	n, port := s.enrollIPMI(t, v, vmIPMI, ipmiPortHardwareType)
	n.step(t, "manage over IPMI", func() {
		// The bridge serves the port once its cache shows the annotation;
		// Ironic's verify retries ipmitool until its own timeout.
		got := n.provision(t, "manage", "manageable", nil)
		if p := str(got.PowerState); p != "power off" {
			t.Errorf("managed node power %q, want power off (the sample VM is Halted); port %d", p, port)
		}
	})
	n.step(t, "power on over IPMI", func() {
		n.power(t, "power on", "power on")
		n.waitVMI(t, "VMI Running after power on", running)
		n.expectApplied(t, apply.ManagerPower, `"f:runStrategy"`)
	})
	targets := map[string]system.BootTarget{"pxe": system.BootPxe, "disk": system.BootHdd, "cdrom": system.BootCd}
	for _, tc := range []struct {
		dev        string
		persistent bool
	}{{"pxe", true}, {"cdrom", false}, {"disk", false}} {
		name := "boot device " + tc.dev + map[bool]string{false: " once", true: " persistent"}[tc.persistent] + " (UEFI) over IPMI"
		n.step(t, name, func() {
			if err := s.api.SetBootDevice(t.Context(), n.uuid, tc.dev, tc.persistent); err != nil {
				t.Fatalf("set %s: %v\nconductor log:\n%s", name, err, s.conductorLog(n.uuid, 15))
			}
			got, err := s.api.GetBootDevice(t.Context(), n.uuid)
			if err != nil {
				t.Fatalf("get boot device after %s: %v", name, err)
			}
			if str(got.BootDevice) != tc.dev || got.Persistent == nil || *got.Persistent != tc.persistent {
				t.Errorf("%s: Ironic reads back %s persistent %v", name, str(got.BootDevice), deref(got.Persistent))
			}
			want := system.BootOverride{Target: targets[tc.dev], Enabled: system.BootOnce, Mode: system.BootUEFI}
			if tc.persistent {
				want.Enabled = system.BootContinuous
			}
			if o := n.bootOverride(t); o.Target != want.Target || o.Enabled != want.Enabled || o.Mode != want.Mode {
				t.Errorf("%s: VM boot override %+v, want %s/%s/%s", name, o, want.Target, want.Enabled, want.Mode)
			}
			n.expectApplied(t, apply.ManagerBoot, `"f:`+apply.AnnotationBoot+`"`)
		})
	}
	n.step(t, "power off over IPMI", func() {
		n.expectForced(t, func() { n.power(t, "power off", "power off") })
		n.waitVMI(t, "VMI gone after power off", func(vmi *unstructured.Unstructured) bool { return vmi == nil })
	})
	n.checkFields(t)
}

// expectApplied checks that manager's server-side apply entry on the VM
// (what `kubectl get vm --show-managed-fields` lists) holds field.
func (n *node) expectApplied(t *testing.T, manager, field string) {
	t.Helper()
	var entries []string
	for _, e := range n.vm(t).GetManagedFields() {
		if e.FieldsV1 == nil {
			continue
		}
		raw := e.FieldsV1.GetRawString()
		if e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply && strings.Contains(raw, field) {
			return
		}
		entries = append(entries, fmt.Sprintf("%s (%s): %s", e.Manager, e.Operation, raw))
	}
	t.Errorf("%s: no Apply by %s holding %s; managedFields:\n%s", n.key, manager, field, strings.Join(entries, "\n"))
}
