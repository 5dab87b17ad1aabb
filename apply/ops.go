package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Media runs change on a fresh read of the slots and applies redfish-media's
// complete intent (preconditioned; see BuildMedia).
//
// Map mode, shared-element trap: when the change detaches a disk (a USB
// stick; a CD-ROM drive stays, empty: build_hotplug.go) whose bootOrder
// redfish-boot owns, Media first re-applies redfish-boot's layout
// without that disk (preconditioned), then the media intent preconditioned on
// the result, so no {name: media-<slot>, bootOrder: N} element is left
// behind. The change function then runs again on the newer read.
func (c *Client) Media(ctx context.Context, key system.Key, change MediaChange) (*VM, error) {
	return c.run(ctx, key, ManagerMedia, func(ctx context.Context, vm *VM) (*Body, error) {
		slots := cloneSlots(vm.Slots)
		if err := change(vm, slots); err != nil {
			return nil, err
		}
		if c.mode == ModeMap {
			if shared := bootOwnedDetached(vm, slots); len(shared) > 0 {
				b, err := BuildBoot(c.mode, vm, vm.Boot, shared)
				if err != nil {
					return nil, fmt.Errorf("release boot order of %v on %s: %w", shared, key, err)
				}
				if vm, err = c.apply(ctx, ManagerBoot, vm, b); err != nil {
					return nil, err
				}
				slots = cloneSlots(vm.Slots)
				if err := change(vm, slots); err != nil {
					return nil, err
				}
			}
		}
		return BuildMedia(c.mode, vm, slots)
	})
}

// bootOwnedDetached returns the media disks present in the read that slots
// no longer attach and whose bootOrder redfish-boot owns; a CD-ROM drive
// is not among them: it stays, empty, with its bootOrder.
func bootOwnedDetached(vm *VM, slots map[string]system.MediaSlot) map[string]bool {
	var out map[string]bool
	for _, d := range list(vm.Object, kubevirt.Disks) {
		name := kubevirt.NameOf(d)
		slot, ok := strings.CutPrefix(name, DiskPrefix)
		if !ok {
			continue
		}
		if s, has := slots[slot]; has && attached(s) {
			continue
		}
		if _, cd := d[kubevirt.KeyCDROM]; cd && system.KindOf(slot) == system.SlotCD {
			continue // the drive stays, empty (keptDrives): nothing is left orphaned
		}
		if ownsElementField(vm, ManagerBoot, kubevirt.Disks, name, kubevirt.KeyBootOrder) {
			if out == nil {
				out = map[string]bool{}
			}
			out[name] = true
		}
	}
	return out
}

// Boot runs change on a fresh read of the override and applies
// redfish-boot's complete intent (preconditioned, forced; see BuildBoot).
//
// A change that answers [ErrForeignEFI] (Legacy asked while another writer
// owns firmware.bootloader.efi) has efi removed first ([Client.releaseEFI],
// preconditioned on the read), then runs again on the result.
func (c *Client) Boot(ctx context.Context, key system.Key, change BootChange) (*VM, error) {
	return c.run(ctx, key, ManagerBoot, func(ctx context.Context, vm *VM) (*Body, error) {
		o := vm.Boot
		err := change(vm, &o)
		if errors.Is(err, ErrForeignEFI) {
			if vm, err = c.releaseEFI(ctx, vm); err != nil {
				return nil, err
			}
			o = vm.Boot
			err = change(vm, &o)
		}
		if err != nil {
			return nil, err
		}
		return BuildBoot(c.mode, vm, o, nil)
	})
}

// Relayout re-applies redfish-boot's intent with the recorded override when
// the boot orders are not what it lays out (a disk appeared or went away). It
// writes nothing when they already are ([Settled]).
func (c *Client) Relayout(ctx context.Context, key system.Key) (*VM, error) {
	return c.run(ctx, key, ManagerBoot, func(_ context.Context, vm *VM) (*Body, error) {
		if Settled(vm) {
			return nil, ErrNoChange
		}
		return BuildBoot(c.mode, vm, vm.Boot, nil)
	})
}

// Power runs change on a fresh read of the power intent and applies
// redfish-power's complete intent (preconditioned, forced; see BuildPower).
func (c *Client) Power(ctx context.Context, key system.Key, change PowerChangeFunc) (*VM, error) {
	return c.run(ctx, key, ManagerPower, func(_ context.Context, vm *VM) (*Body, error) {
		p := PowerChange{Intent: vm.Power}
		if err := change(vm, &p); err != nil {
			return nil, err
		}
		return BuildPower(vm, p)
	})
}
