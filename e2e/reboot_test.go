package e2e

import (
	"slices"
	"testing"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/redfish"

	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// checkGuestReboot follows a Cd/Once boot of VM i whose guest then reboots
// itself (an installer done writing the disk): over Redfish the system
// stays On, and the next VMI boots the disk, not the CD again.
func checkGuestReboot(t *testing.T, env *demo.Env, a admin, c *gofish.APIClient, sysURI string, i int) {
	first := a.waitRunning(t, i)
	if got := sim.Boots(first); len(got) != 1 || got[0] != mediaDisk() {
		t.Fatalf("the Cd/Once boot booted %v, want %s", got, mediaDisk())
	}
	waitFor(t, "Once override reverted over gofish", func() (bool, string) {
		s, err := redfish.GetComputerSystem(c, sysURI)
		if err != nil {
			return false, err.Error()
		}
		return s.Boot.BootSourceOverrideEnabled == redfish.DisabledBootSourceOverrideEnabled, string(s.Boot.BootSourceOverrideEnabled)
	})
	if err := env.Sim.GuestReboot(t.Context(), keyOf(i)); err != nil {
		t.Fatal(err)
	}
	var states []redfish.PowerState
	waitFor(t, "the next VMI running", func() (bool, string) {
		s, err := redfish.GetComputerSystem(c, sysURI)
		if err != nil {
			return false, err.Error()
		}
		if len(states) == 0 || states[len(states)-1] != s.PowerState {
			states = append(states, s.PowerState)
		}
		vmi := a.vmi(t.Context(), t, i)
		return vmi != nil && vmi.GetUID() != first.GetUID() && phase(vmi) == "Running", "phase " + phase(vmi)
	})
	if !slices.Equal(states, []redfish.PowerState{redfish.OnPowerState}) {
		t.Errorf("PowerState over gofish across the guest reboot went %v, want On throughout", states)
	}
	next := a.vmi(t.Context(), t, i)
	firstDisk := disks(t, vmiSpec(t, next))[0].Name
	if got := sim.Boots(next); len(got) != 1 || got[0] == mediaDisk() || got[0] != firstDisk {
		t.Errorf("the boot after the guest reboot booted %v, want the disk %s", got, firstDisk)
	}
	if got := kubevirt.RebootPolicyOf(a.vm(t.Context(), t, i)); got != "" {
		t.Errorf("rebootPolicy %q left on the VM after the Once boot", got)
	}
}
