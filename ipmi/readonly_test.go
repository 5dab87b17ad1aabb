package ipmi

import (
	"strings"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestIpmitoolReadOnly is the attack of docs/reliability.md row 216: a
// ReadOnly user (rita) drives ipmitool at the System in its scope. At USER
// privilege it reads the power state; chassis control and boot device are
// refused with completion code 0xD4 (insufficient privilege); asking for
// more than USER, at login (ipmitool's default, ADMINISTRATOR, and
// OPERATOR) or afterwards (Set Session Privilege Level), is refused; and
// nothing reaches the backend.
func TestIpmitoolReadOnly(t *testing.T) {
	b := &fakeBackend{state: State{PowerState: system.PowerOff, BootMode: system.BootUEFI}}
	_, port := startServer(t, b)
	asUser := []string{"-L", "USER"}
	rita := func(t *testing.T, extra []string, args ...string) (string, error) {
		t.Helper()
		return testutil.Ipmitool(t, port, "rita", "rita-ipmi-pw", extra, args...)
	}
	if out, err := rita(t, asUser, "chassis", "power", "status"); err != nil || !strings.Contains(out, "Chassis Power is off") {
		t.Fatalf("ReadOnly power status at USER: err %v:\n%s", err, out)
	}
	for _, args := range [][]string{{"chassis", "power", "on"}, {"chassis", "power", "reset"}, {"chassis", "bootdev", "pxe"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out, _ := rita(t, asUser, args...)
			if !strings.Contains(out, "Insufficient privilege level") {
				t.Errorf("ReadOnly %v at USER answered, want completion code 0xD4 (Insufficient privilege level):\n%s", args, out)
			}
		})
	}
	for _, level := range []string{"ADMINISTRATOR", "OPERATOR"} {
		t.Run("login at "+level, func(t *testing.T) {
			out, err := rita(t, []string{"-L", level}, "chassis", "power", "on")
			if err == nil || !strings.Contains(out, "Unable to establish IPMI v2 / RMCP+ session") {
				t.Errorf("ReadOnly login at %s: err %v, want no session:\n%s", level, err, out)
			}
		})
	}
	t.Run("set session privilege above USER", func(t *testing.T) {
		out, _ := rita(t, asUser, "raw", "0x06", "0x3b", "0x04")
		if !strings.Contains(out, "rsp=0x81") {
			t.Errorf("Set Session Privilege Level ADMINISTRATOR as ReadOnly answered, want completion code 0x81:\n%s", out)
		}
	})
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.resets) != 0 || len(b.boots) != 0 {
		t.Errorf("a ReadOnly user's commands ran: resets %v, boots %v", b.resets, b.boots)
	}
}
