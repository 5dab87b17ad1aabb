package apply

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

var update = flag.Bool("update", false, "rewrite testdata/*.json golden bodies")

// TestBuildersGolden pins the exact apply body of every operation in both
// modes. Regenerate with: go test ./apply -run TestBuildersGolden -update
func TestBuildersGolden(t *testing.T) {
	cdOnce := system.BootOverride{Target: system.BootCd, Enabled: system.BootOnce, ArmedVMI: "uid-1"}
	tests := []struct {
		name  string
		build func(t *testing.T, mode Mode) (*Body, error)
	}{
		{"media-insert-pending", func(t *testing.T, mode Mode) (*Body, error) {
			s := system.MediaSlot{Slot: "cd0", Image: "http://images/boot.iso", Phase: system.MediaPending, InsertID: "i-1"}
			return BuildMedia(mode, decodeFixture(baseVM(t)), map[string]system.MediaSlot{"cd0": s})
		}},
		{"media-ready", func(t *testing.T, mode Mode) (*Body, error) {
			return BuildMedia(mode, decodeFixture(baseVM(t)), map[string]system.MediaSlot{"cd0": readySlot()})
		}},
		{"media-ready-again-keeps-bootorder", func(t *testing.T, mode Mode) (*Body, error) {
			vm := decodeFixture(withCD(t, withBootOrders(t, baseVM(t), map[string]int64{"rootdisk": 2, "cloudinit": 3}), 1))
			s := readySlot()
			s.SizeBytes = 1 << 20
			return BuildMedia(mode, vm, map[string]system.MediaSlot{"cd0": s})
		}},
		{"media-eject", func(t *testing.T, mode Mode) (*Body, error) {
			vm := decodeFixture(withCD(t, baseVM(t), 0))
			return BuildMedia(mode, vm, map[string]system.MediaSlot{})
		}},
		{"media-usb-ready", func(t *testing.T, mode Mode) (*Body, error) {
			s := system.MediaSlot{Slot: "usb0", Image: "http://images/config.img", Phase: system.MediaReady, InsertID: "i-2", ClaimName: "vm-media-usb0"}
			return BuildMedia(mode, decodeFixture(withCD(t, baseVM(t), 0)), map[string]system.MediaSlot{"cd0": readySlot(), "usb0": s})
		}},
		{"boot-uefihttp-once", func(t *testing.T, mode Mode) (*Body, error) {
			s := system.MediaSlot{Slot: system.HTTPBootSlot, Image: "https://images/boot.iso", Phase: system.MediaReady, InsertID: "i-3", ClaimName: "vm-media-httpboot"}
			b, err := BuildMedia(ModeAtomic, decodeFixture(withCD(t, baseVM(t), 0)), map[string]system.MediaSlot{"cd0": readySlot(), system.HTTPBootSlot: s})
			if err != nil {
				return nil, err
			}
			o := system.BootOverride{Target: system.BootUefiHttp, Enabled: system.BootOnce, Mode: system.BootUEFI, HTTPBootURI: s.Image}
			return BuildBoot(mode, decodeFixture(b.Object), o, nil)
		}},
		{"boot-cd-once", func(t *testing.T, mode Mode) (*Body, error) {
			return BuildBoot(mode, decodeFixture(withCD(t, baseVM(t), 0)), cdOnce, nil)
		}},
		{"boot-cd-once-no-cdrom-yet", func(t *testing.T, mode Mode) (*Body, error) {
			return BuildBoot(mode, decodeFixture(baseVM(t)), cdOnce, nil)
		}},
		{"boot-cd-once-author-rebootpolicy", func(t *testing.T, mode Mode) (*Body, error) {
			u := withCD(t, baseVM(t), 0)
			if err := unstructured.SetNestedField(u.Object, "Reboot", kubevirt.RebootPolicy...); err != nil {
				t.Fatal(err)
			}
			return BuildBoot(mode, decodeFixture(u), cdOnce, nil)
		}},
		{"boot-hdd-continuous-uefi", func(t *testing.T, mode Mode) (*Body, error) {
			o := system.BootOverride{Target: system.BootHdd, Enabled: system.BootContinuous, Mode: system.BootUEFI}
			return BuildBoot(mode, decodeFixture(withCD(t, baseVM(t), 0)), o, nil)
		}},
		{"boot-pxe-once-legacy", func(t *testing.T, mode Mode) (*Body, error) {
			o := system.BootOverride{Target: system.BootPxe, Enabled: system.BootOnce, Mode: system.BootLegacy}
			return BuildBoot(mode, decodeFixture(baseVM(t)), o, nil)
		}},
		{"boot-revert-after-cd", func(t *testing.T, mode Mode) (*Body, error) {
			u := withBoot(withCD(t, withBootOrders(t, baseVM(t), map[string]int64{"rootdisk": 2, "cloudinit": 3}), 1), cdOnce)
			return BuildBoot(mode, decodeFixture(u), system.BootOverride{Target: system.BootNone, Enabled: system.BootDisabled}, nil)
		}},
		{"boot-cd-exclude-ejected", func(t *testing.T, mode Mode) (*Body, error) {
			u := withBoot(withCD(t, withBootOrders(t, baseVM(t), map[string]int64{"rootdisk": 2, "cloudinit": 3}), 1), cdOnce)
			return BuildBoot(mode, decodeFixture(u), cdOnce, map[string]bool{DiskName("cd0"): true})
		}},
		{"boot-secureboot-on", func(t *testing.T, mode Mode) (*Body, error) {
			o := system.BootOverride{Mode: system.BootUEFI, SecureBoot: system.SecureBootEnabled}
			return BuildBoot(mode, decodeFixture(baseVM(t)), o, nil)
		}},
		{"boot-secureboot-off", func(t *testing.T, mode Mode) (*Body, error) {
			on := system.BootOverride{Mode: system.BootUEFI, SecureBoot: system.SecureBootEnabled}
			o := system.BootOverride{Mode: system.BootUEFI, SecureBoot: system.SecureBootDisabled}
			return BuildBoot(mode, decodeFixture(withBoot(baseVM(t), on)), o, nil)
		}},
		{"boot-legacy-after-secureboot-off", func(t *testing.T, mode Mode) (*Body, error) {
			// Secure Boot on, off, then Legacy: bios only, efi left out (its
			// removal is SSA's: redfish-boot owns it alone, ValidateLegacy).
			off := system.BootOverride{Mode: system.BootUEFI, SecureBoot: system.SecureBootDisabled}
			o := system.BootOverride{Mode: system.BootLegacy, SecureBoot: system.SecureBootDisabled}
			return BuildBoot(mode, decodeFixture(withBoot(baseVM(t), off)), o, nil)
		}},
		{"boot-cd-once-secureboot-on", func(t *testing.T, mode Mode) (*Body, error) {
			o := cdOnce
			o.Mode, o.SecureBoot = system.BootUEFI, system.SecureBootEnabled
			return BuildBoot(mode, decodeFixture(withCD(t, baseVM(t), 0)), o, nil)
		}},
		{"power-on", func(t *testing.T, _ Mode) (*Body, error) {
			return BuildPower(decodeFixture(baseVM(t)), PowerChange{RunStrategy: "RerunOnFailure"})
		}},
		{"power-deferred", func(t *testing.T, _ Mode) (*Body, error) {
			p := system.PowerIntent{OnDeferred: true}
			return BuildPower(decodeFixture(baseVM(t)), PowerChange{Intent: p})
		}},
		{"protocols-ipmi-off", func(t *testing.T, _ Mode) (*Body, error) {
			return BuildProtocols(decodeFixture(baseVM(t)), system.Protocols{IPMIOff: true})
		}},
		{"protocols-all-on", func(t *testing.T, _ Mode) (*Body, error) {
			return BuildProtocols(decodeFixture(baseVM(t)), system.Protocols{})
		}},
	}
	for _, tt := range tests {
		for _, mode := range []Mode{ModeMap, ModeAtomic} {
			t.Run(tt.name+"/"+string(mode), func(t *testing.T) {
				b, err := tt.build(t, mode)
				if err != nil {
					t.Fatalf("build: %v", err)
				}
				got, err := json.MarshalIndent(map[string]any{"force": b.Force, "body": b.Object.Object}, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, '\n')
				path := filepath.Join("testdata", tt.name+"."+string(mode)+".json")
				if *update {
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("read golden (run with -update): %v", err)
				}
				if diff := cmp.Diff(string(want), string(got)); diff != "" {
					t.Errorf("body mismatch (-golden +got):\n%s", diff)
				}
			})
		}
	}
}

// TestBuildBootSecureBoot checks what redfish-boot writes for each Secure
// Boot setting, that secure boot outside UEFI is refused, and that an
// annotation written before the field existed still decodes (as unset).
func TestBuildBootSecureBoot(t *testing.T) {
	efi := func(sb bool) map[string]any { return map[string]any{"efi": map[string]any{"secureBoot": sb}} }
	smmOn := map[string]any{"enabled": true}
	tests := []struct {
		name       string
		annotation string // recorded override; "" for none
		o          func(recorded system.BootOverride) system.BootOverride
		wantLoader map[string]any
		wantSMM    map[string]any
	}{
		{name: "enabled under UEFI", o: func(system.BootOverride) system.BootOverride {
			return system.BootOverride{Mode: system.BootUEFI, SecureBoot: system.SecureBootEnabled}
		}, wantLoader: efi(true), wantSMM: smmOn},
		{name: "disabled under UEFI", o: func(system.BootOverride) system.BootOverride {
			return system.BootOverride{Mode: system.BootUEFI, SecureBoot: system.SecureBootDisabled}
		}, wantLoader: efi(false)},
		{name: "disabled without a mode writes no firmware", o: func(system.BootOverride) system.BootOverride {
			return system.BootOverride{SecureBoot: system.SecureBootDisabled}
		}},
		{
			name:       "old annotation: unset, UEFI keeps secureBoot false",
			annotation: `{"target":"Hdd","enabled":"Continuous","mode":"UEFI"}`,
			o:          func(recorded system.BootOverride) system.BootOverride { return recorded },
			wantLoader: efi(false),
		},
		{
			name:       "Once revert keeps secure boot",
			annotation: `{"target":"Cd","enabled":"Once","mode":"UEFI","secureBoot":"Enabled"}`,
			o: func(recorded system.BootOverride) system.BootOverride {
				recorded.Target, recorded.Enabled = system.BootNone, system.BootDisabled
				return recorded
			},
			wantLoader: efi(true), wantSMM: smmOn,
		},
	}
	for _, tt := range tests {
		for _, mode := range []Mode{ModeMap, ModeAtomic} {
			t.Run(tt.name+"/"+string(mode), func(t *testing.T) {
				u := baseVM(t)
				if tt.annotation != "" {
					annotate(u, AnnotationBoot, tt.annotation)
				}
				vm := decodeFixture(u)
				b, err := BuildBoot(mode, vm, tt.o(vm.Boot), nil)
				if err != nil {
					t.Fatalf("BuildBoot: %v", err)
				}
				loader, _, _ := unstructured.NestedMap(b.Object.Object, kubevirt.Bootloader...)
				if diff := cmp.Diff(tt.wantLoader, loader); diff != "" {
					t.Errorf("bootloader (-want +got):\n%s", diff)
				}
				smm, _, _ := unstructured.NestedMap(b.Object.Object, kubevirt.SMM...)
				if diff := cmp.Diff(tt.wantSMM, smm); diff != "" {
					t.Errorf("features.smm (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestValidateSecureBoot: Secure Boot Enabled needs mode UEFI; Disabled
// goes with any mode. The reason of a refusal says what is (Secure Boot
// enabled), never that the system is in the mode the request asked for.
func TestValidateSecureBoot(t *testing.T) {
	tests := []struct {
		o    system.BootOverride
		want bool // refused
	}{
		{system.BootOverride{Mode: system.BootUEFI, SecureBoot: system.SecureBootEnabled}, false},
		{system.BootOverride{Mode: system.BootLegacy, SecureBoot: system.SecureBootDisabled}, false},
		{system.BootOverride{SecureBoot: system.SecureBootDisabled}, false},
		{system.BootOverride{Mode: system.BootLegacy, SecureBoot: system.SecureBootEnabled}, true},
		{system.BootOverride{SecureBoot: system.SecureBootEnabled}, true},
	}
	for _, tt := range tests {
		err := ValidateSecureBoot(tt.o)
		refused, ok := errors.AsType[*RefusedError](err)
		if tt.want != (ok && refused.ConflictsWith == PropertySecureBoot && errors.Is(err, ErrInvalid)) || (!tt.want && err != nil) {
			t.Errorf("ValidateSecureBoot(%+v) = %v, want refused %v", tt.o, err, tt.want)
		}
		if ok && (!strings.Contains(refused.Reason, "Secure Boot is enabled") || strings.Contains(refused.Reason, "BootSourceOverrideMode is")) {
			t.Errorf("ValidateSecureBoot(%+v) reason %q: want it to say Secure Boot is enabled, not what the mode is", tt.o, refused.Reason)
		}
	}
}
