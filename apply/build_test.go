package apply

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

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
		{"boot-cd-once", func(t *testing.T, mode Mode) (*Body, error) {
			return BuildBoot(mode, decodeFixture(withCD(t, baseVM(t), 0)), cdOnce, nil)
		}},
		{"boot-cd-once-no-cdrom-yet", func(t *testing.T, mode Mode) (*Body, error) {
			return BuildBoot(mode, decodeFixture(baseVM(t)), cdOnce, nil)
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
		{"power-on", func(t *testing.T, _ Mode) (*Body, error) {
			return BuildPower(decodeFixture(baseVM(t)), PowerChange{RunStrategy: "RerunOnFailure"})
		}},
		{"power-deferred", func(t *testing.T, _ Mode) (*Body, error) {
			p := system.PowerIntent{OnDeferred: true}
			return BuildPower(decodeFixture(baseVM(t)), PowerChange{Intent: p})
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
