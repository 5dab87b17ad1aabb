package backend

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/redfish"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// PowerVerbs is what the backend needs of power.Service.
type PowerVerbs interface {
	Reset(ctx context.Context, key system.Key, kind system.ResetType) error
	SetBoot(ctx context.Context, key system.Key, patch system.BootPatch) (*apply.VM, error)
	SetSecureBoot(ctx context.Context, key system.Key, enable bool) (*apply.VM, error)
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
		if refused, ok := errors.AsType[*apply.RefusedError](err); ok && patch.Mode != nil {
			return fmt.Errorf("%w: %w", refusal(refused, "Boot/BootSourceOverrideMode", string(*patch.Mode), "SecureBootEnable"), err)
		}
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
	if refused, ok := errors.AsType[*apply.RefusedError](err); ok {
		return fmt.Errorf("%w: %w", refusal(refused, "SecureBootEnable", strconv.FormatBool(enable), "BootSourceOverrideMode"), err)
	}
	if err != nil {
		return translate(err)
	}
	return b.awaitCache(ctx, key, vm)
}

// refusal is the Redfish form of a firmware change power refused: property
// set to value conflicts with other, or (no conflict) the VM's spec is in
// the way.
func refusal(r *apply.RefusedError, property, value, other string) *redfish.RefusedValueError {
	e := &redfish.RefusedValueError{Property: property, Value: value, Resolution: r.Reason}
	if r.Conflict {
		e.ConflictsWith = other
	}
	return e
}

// awaitCache waits (bounded) until a read of the VM (what the client's next
// GET sees) shows it as written, or newer. Reads go through the Writer,
// which answers with its own write while the cache still serves the version
// that write replaced, so this usually returns at once. resourceVersions of
// one apiserver's etcd are increasing integers; an unparsable one just skips
// the wait.
func (b *Backend) awaitCache(ctx context.Context, key system.Key, written *apply.VM) error {
	if written == nil || written.Object == nil {
		return nil
	}
	want, err := strconv.ParseUint(written.Object.GetResourceVersion(), 10, 64)
	if err != nil {
		return nil
	}
	await(ctx, func() bool {
		vm, err := b.w.Read(ctx, key)
		if err != nil {
			return false
		}
		have, err := strconv.ParseUint(vm.Object.GetResourceVersion(), 10, 64)
		return err != nil || have >= want
	})
	return nil
}
