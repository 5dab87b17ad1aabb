package backend

import (
	"context"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/redfish"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// PowerVerbs is what the backend needs of power.Service.
type PowerVerbs interface {
	Reset(ctx context.Context, key system.Key, kind system.ResetType) error
	SetBoot(ctx context.Context, key system.Key, patch system.BootPatch) (*apply.VM, error)
	SetSecureBoot(ctx context.Context, key system.Key, enable bool) (*apply.VM, error)
	ResetFirmware(ctx context.Context, key system.Key) (*apply.VM, error)
}

// Reset implements redfish.Power.
func (b *Backend) Reset(ctx context.Context, key system.Key, kind system.ResetType) error {
	return translate(b.power.Reset(ctx, key, kind))
}

// SetBoot implements redfish.Boot. If-Match was checked where the request
// entered (redfish/), against the ETag of the resource shown; the write
// itself is preconditioned by apply. It returns once the cache shows the
// write, so the client's next GET reads its own change back (Ironic re-reads
// the boot mode at once).
func (b *Backend) SetBoot(ctx context.Context, key system.Key, patch system.BootPatch) error {
	write := func() error {
		vm, err := b.power.SetBoot(ctx, key, patch)
		if err != nil {
			return translate(err)
		}
		return b.awaitCache(ctx, key, vm)
	}
	if patch.HTTPBootURI != nil {
		return b.setHTTPBoot(ctx, key, *patch.HTTPBootURI, write)
	}
	return write()
}

// SetSecureBoot implements redfish.Boot: redfish-boot writes
// efi.secureBoot (and features.smm.enabled while enabled). Enabling it on a
// system that does not boot UEFI is a bad SecureBootEnable value (400). Like
// SetBoot it returns once the cache shows the write.
func (b *Backend) SetSecureBoot(ctx context.Context, key system.Key, enable bool) error {
	vm, err := b.power.SetSecureBoot(ctx, key, enable)
	if err != nil {
		return translate(err)
	}
	return b.awaitCache(ctx, key, vm)
}

// ResetFirmware implements redfish.Boot (Bios.ResetBios): redfish-boot
// releases the firmware fields it wrote for a boot mode or Secure Boot a
// client set. Like SetBoot it returns once the cache shows the write.
func (b *Backend) ResetFirmware(ctx context.Context, key system.Key) error {
	vm, err := b.power.ResetFirmware(ctx, key)
	if err != nil {
		return translate(err)
	}
	return b.awaitCache(ctx, key, vm)
}

// refusal is the Redfish form of a value power refused: the property and
// value it names, refused because of the one it conflicts with, or (no
// conflict) because the VM's spec or what the bridge can do is in the way;
// its reason is the Resolution.
func refusal(r *apply.RefusedError) *redfish.RefusedValueError {
	return &redfish.RefusedValueError{Property: r.Property, Value: r.Value, ConflictsWith: r.ConflictsWith, Resolution: r.Reason}
}

// awaitCache waits (bounded, [apply.CacheWait]) until a read of the VM
// (what the client's next GET sees) shows it as written, or newer
// ([apply.Client.AwaitVersion]: woken by the cache's change events).
func (b *Backend) awaitCache(ctx context.Context, key system.Key, written *apply.VM) error {
	if a, ok := b.w.(awaiter); ok {
		a.AwaitVersion(ctx, key, written)
	}
	return nil
}
