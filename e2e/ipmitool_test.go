package e2e

import (
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/ipmi"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// TestIpmitool drives a VM with Debian's ipmitool 1.8.19 (lanplus,
// cipher suite 17) through the bridge's IPMI endpoint, on the shared demo
// env: the VM's author gives it a port (ipmi.PortAnnotation), the
// administrator an IPMI password (<user>.ipmi in the users Secret); then
// mc info (and the Manager's NetworkProtocol shows IPMI enabled on the
// port), chassis power on (the VMI runs), status, sol activate (the
// guest's login prompt and echo through virt-api), bootdev cdrom
// options=efiboot (the Redfish System shows the Cd Once UEFI override the
// same writer wrote), power off (the VMI ends), sol info.
func TestIpmitool(t *testing.T) {
	tool, err := exec.LookPath("ipmitool")
	if err != nil {
		testutil.Missing(t, "ipmitool not installed")
	}
	forEachVariant(t, func(t *testing.T, env *demo.Env) {
		a := adminFor(t, env)
		envs.mu.Lock()
		port := envs.ipmiPorts[env.Cluster.Variant]
		envs.mu.Unlock()
		const ipmiPassword = "e2e-ipmi-password"
		patch, err := json.Marshal(map[string]any{"data": map[string][]byte{demo.AdminUser + auth.SuffixIPMIPassword: []byte(ipmiPassword)}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.kube.CoreV1().Secrets(env.Cluster.BridgeNamespace).Patch(t.Context(), demo.UsersSecret, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatalf("give admin an IPMI password: %v", err)
		}
		// The VM's author (not the bridge) names the port.
		a.patch(t, keyOf(vmIPMI), kubevirt.VirtualMachines,
			map[string]any{"metadata": map[string]any{"annotations": map[string]any{ipmi.PortAnnotation: strconv.Itoa(port)}}}, "vm-author")
		run := func(args ...string) (string, error) {
			t.Helper()
			start := time.Now()
			argv := append([]string{"-I", "lanplus", "-H", "127.0.0.1", "-p", strconv.Itoa(port), "-U", demo.AdminUser, "-P", ipmiPassword, "-N", "2", "-R", "3"}, args...)
			out, err := clientCommand(t, tool, argv...).CombinedOutput()
			t.Logf("TIMING ipmitool %s: %s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
			return string(out), err
		}
		must := func(args ...string) string {
			t.Helper()
			out, err := run(args...)
			if err != nil {
				t.Fatalf("ipmitool %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			return out
		}
		// The bridge serves the port once its cache shows the annotation
		// and the Secret's IPMI password.
		waitFor(t, "ipmitool mc info answers", func() (bool, string) {
			out, err := run("mc", "info")
			return err == nil && strings.Contains(out, "IPMI Version              : 2.0"), out
		})
		// The Manager shows the port the endpoint serves.
		rf := newRFClient(env)
		if got, _ := rf.get(t, "/redfish/v1/Managers/"+sysID(vmIPMI)+"/NetworkProtocol").body["IPMI"].(map[string]any); got["ProtocolEnabled"] != true || got["Port"] != float64(port) {
			t.Errorf("NetworkProtocol IPMI: %v, want enabled on port %d", got, port)
		}
		must("chassis", "power", "on")
		a.waitRunning(t, vmIPMI)
		if out := must("chassis", "power", "status"); !strings.Contains(out, "Chassis Power is on") {
			t.Errorf("power status after on: %s", out)
		}
		// Serial-over-LAN to the running guest through the bridge's
		// console stream and KubeVirt's real virt-api (the simulated
		// guest's serial port): its login prompt, its echo, "~." to leave.
		// ipmitool reads its stdin once the payload is active, and prints
		// its banner when the guest's first output flushes stdout.
		sol := testutil.StartSOL(t, port, demo.AdminUser, ipmiPassword)
		sol.Type(t, "\r")
		sol.Take(t, "[SOL Session operational.  Use ~? for help]")
		sol.Take(t, "\r\n"+sim.GuestLoginPrompt(vmName(vmIPMI)))
		sol.Type(t, "root\r")
		sol.Take(t, "root\r\n"+sim.GuestLoginPrompt(vmName(vmIPMI)))
		sol.Type(t, "~.")
		sol.Take(t, "[terminated ipmitool]")
		if err := sol.Wait(t); err != nil {
			t.Errorf("ipmitool sol activate after ~.: %v\n%s", err, sol.Output())
		}
		must("chassis", "bootdev", "cdrom", "options=efiboot")
		boot, _ := rf.get(t, "/redfish/v1/Systems/"+sysID(vmIPMI)).body["Boot"].(map[string]any)
		if boot["BootSourceOverrideTarget"] != "Cd" || boot["BootSourceOverrideEnabled"] != "Once" || boot["BootSourceOverrideMode"] != "UEFI" {
			t.Errorf("Redfish Boot after ipmitool bootdev cdrom options=efiboot: %v", boot)
		}
		if out := must("chassis", "bootparam", "get", "5"); !strings.Contains(out, "Force Boot from CD/DVD") {
			t.Errorf("bootparam get 5:\n%s", out)
		}
		must("chassis", "power", "off")
		waitFor(t, vmName(vmIPMI)+" VMI gone", func() (bool, string) {
			vmi := a.vmi(t.Context(), t, vmIPMI)
			return vmi == nil, "phase " + phase(vmi)
		})
		if out := must("chassis", "power", "status"); !strings.Contains(out, "Chassis Power is off") {
			t.Errorf("power status after off: %s", out)
		}
		// Serial-over-LAN's configuration through the running bridge.
		if out := must("sol", "info"); !strings.Contains(out, "Enabled                         : true") ||
			!strings.Contains(out, "Payload Port                    : "+strconv.Itoa(port)) {
			t.Errorf("sol info:\n%s", out)
		}
	})
}
