package ipmi

import (
	"strings"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestIronicIpmitoolBootDevice sends what Ironic 39's ipmitool management
// interface (ironic/drivers/modules/ipmitool.py, set_boot_device) sends
// for a UEFI node, with Debian's ipmitool: first the raw Set System Boot
// Options parameter 3 (boot flag valid bit clearing, "0x00 0x08 0x03
// 0x08", sent unless [ipmi]disable_boot_timeout is off), then the boot
// flags as raw bytes (0xa0: valid, EFI, next boot only; 0xe0: persistent
// too; device 0x04 PXE, 0x08 disk, 0x14 CD-ROM), then reads them back
// with `chassis bootparam get 5` (get_boot_device). A failed raw command
// fails Ironic's set_boot_device (IPMIFailure).
func TestIronicIpmitoolBootDevice(t *testing.T) {
	b := &fakeBackend{state: State{PowerState: system.PowerOff, BootMode: system.BootUEFI}}
	_, port := startServer(t, b)
	run := func(t *testing.T, args ...string) string {
		t.Helper()
		out, err := testutil.Ipmitool(t, port, "alice", "alice-ipmi-pw", nil, args...)
		if err != nil {
			t.Fatalf("ipmitool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	for _, tc := range []struct {
		name, flags, dev string
		target           system.BootTarget
		enabled          system.BootEnabled
		selector         string // what `chassis bootparam get 5` names
	}{
		{"pxe persistent", "0xe0", "0x04", system.BootPxe, system.BootContinuous, "Force PXE"},
		{"disk once", "0xa0", "0x08", system.BootHdd, system.BootOnce, "Force Boot from default Hard-Drive"},
		{"cdrom once", "0xa0", "0x14", system.BootCd, system.BootOnce, "Force Boot from CD/DVD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run(t, "raw", "0x00", "0x08", "0x03", "0x08")
			run(t, "raw", "0x00", "0x08", "0x05", tc.flags, tc.dev, "0x00", "0x00", "0x00")
			b.mu.Lock()
			st := b.state
			b.mu.Unlock()
			if st.Boot.Target != tc.target || st.Boot.Enabled != tc.enabled || st.BootMode != system.BootUEFI {
				t.Errorf("boot %+v mode %s, want %s %s UEFI", st.Boot, st.BootMode, tc.target, tc.enabled)
			}
			out := run(t, "chassis", "bootparam", "get", "5")
			if !strings.Contains(out, tc.selector) || !strings.Contains(out, "BIOS EFI boot") {
				t.Errorf("bootparam get 5, want %q and EFI:\n%s", tc.selector, out)
			}
			if persistent := strings.Contains(out, "Options apply to all future boots"); persistent != (tc.enabled == system.BootContinuous) {
				t.Errorf("bootparam get 5 persistent %v, want %v:\n%s", persistent, tc.enabled == system.BootContinuous, out)
			}
		})
	}
	t.Run("parameter 3 reads back what the bridge does", func(t *testing.T) {
		// bits 4-2: the valid bit is never cleared by PEF, the 60 s
		// timeout or the watchdog; a once override is cleared by the boot
		// it applies to.
		if out := run(t, "raw", "0x00", "0x09", "0x03", "0x00", "0x00"); !strings.Contains(out, "01 03 1c") {
			t.Errorf("get parameter 3: %q, want 01 03 1c", out)
		}
	})
	t.Run("parameter 3 with reserved bits is refused", func(t *testing.T) {
		if out, err := testutil.Ipmitool(t, port, "alice", "alice-ipmi-pw", nil, "raw", "0x00", "0x08", "0x03", "0xe0"); err == nil || !strings.Contains(out, "rsp=0xcc") {
			t.Errorf("set parameter 3 0xe0: err %v, want 0xCC:\n%s", err, out)
		}
		if out, err := testutil.Ipmitool(t, port, "alice", "alice-ipmi-pw", nil, "raw", "0x00", "0x08", "0x03"); err == nil || !strings.Contains(out, "rsp=0xc7") {
			t.Errorf("set parameter 3 without data: err %v, want 0xC7:\n%s", err, out)
		}
	})
}
