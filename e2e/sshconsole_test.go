package e2e

import (
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// TestSSHConsole reaches a running VM's serial console with OpenSSH's
// client through the bridge's SSH console, on the shared demo env of each
// CRD variant (its bridge listens with --ssh-console-listen), through the
// console stream and KubeVirt's real virt-api: the guest's boot log
// naming the VM, its login prompt, the echo of what the client types, and
// "~." to leave; the demo's ReadOnly viewer is refused.
func TestSSHConsole(t *testing.T) {
	forEachVariant(t, func(t *testing.T, env *demo.Env) {
		_, port, err := net.SplitHostPort(env.Bridge.SSHConsoleAddr)
		if err != nil {
			t.Fatalf("the demo's SSH console address %q: %v", env.Bridge.SSHConsoleAddr, err)
		}
		a := adminFor(t, env)
		rf := newRFClient(env)
		id := keyOf(vmSSH).ID()
		if got := rf.do(t, http.MethodPost, "/redfish/v1/Systems/"+id+"/Actions/ComputerSystem.Reset", `{"ResetType":"On"}`, nil); got.status/100 != 2 {
			t.Fatalf("power on %s: %d %s", id, got.status, got.body)
		}
		a.waitRunning(t, vmSSH)

		ssh := testutil.StartSSH(t, port, env.User, env.Password, id)
		ssh.Type(t, "\r")
		if got := ssh.Until(t, "\r\n"+sim.GuestLoginPrompt(vmName(vmSSH))); !strings.Contains(got, sim.GuestBootBanner(demo.VMNamespace, vmName(vmSSH))) {
			t.Errorf("read %q: no boot log naming the VM", got)
		}
		ssh.Type(t, "root\r")
		ssh.Until(t, "root\r\n"+sim.GuestLoginPrompt(vmName(vmSSH)))
		ssh.Type(t, "~.")
		if err := ssh.Wait(); err != nil {
			t.Errorf("ssh after ~.: %v (stderr %s)", err, ssh.Stderr())
		}

		viewer := testutil.StartSSH(t, port, demo.ViewerUser, env.Password, id)
		if err := viewer.Wait(); err == nil || !strings.Contains(viewer.Stderr(), "a ReadOnly user cannot open a console") {
			t.Errorf("the ReadOnly viewer: %v, stderr %q; want refused", err, viewer.Stderr())
		}
		if got := rf.do(t, http.MethodPost, "/redfish/v1/Systems/"+id+"/Actions/ComputerSystem.Reset", `{"ResetType":"ForceOff"}`, nil); got.status/100 != 2 {
			t.Errorf("power off %s: %d %s", id, got.status, got.body)
		}
	})
}
