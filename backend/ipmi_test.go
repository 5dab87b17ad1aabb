package backend_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/ipmi"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestIPMIBackend drives the IPMI endpoint's backend on a real apiserver:
// a boot device written through it reads back through the Redfish
// System (the same redfish-boot write), and a value the System refuses
// (Legacy while Secure Boot is on) is ipmi.ErrRefused (completion code
// 0xD5), not a failure of the bridge.
func TestIPMIBackend(t *testing.T) {
	s := newStack(t, crds.Variants[0], nil)
	b := s.be.IPMI()
	ctx := t.Context()
	cd, once, uefi := system.BootCd, system.BootOnce, system.BootUEFI
	if err := b.SetBoot(ctx, s.key, system.BootPatch{Target: &cd, Enabled: &once, Mode: &uefi}); err != nil {
		t.Fatalf("set boot cd once uefi: %v", err)
	}
	st, err := b.State(ctx, s.key)
	if err != nil {
		t.Fatal(err)
	}
	if st.Boot.Target != cd || st.Boot.Enabled != once || st.BootMode != uefi || st.PowerState != system.PowerOff {
		t.Errorf("state after set boot: %+v", st)
	}
	if rec := s.do(t, http.MethodPatch, s.uri+"/SecureBoot", `{"SecureBootEnable":true}`, ""); rec.Code/100 != 2 {
		t.Fatalf("enable secure boot: %d %s", rec.Code, rec.Body)
	}
	legacy := system.BootLegacy
	err = b.SetBoot(ctx, s.key, system.BootPatch{Target: &cd, Enabled: &once, Mode: &legacy})
	if !errors.Is(err, ipmi.ErrRefused) {
		t.Fatalf("legacy under secure boot: %v, want ipmi.ErrRefused", err)
	}
}
