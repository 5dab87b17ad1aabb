package backend

import (
	"context"
	"errors"
	"fmt"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/redfish"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// importHTTPBoot starts the import of a Boot.HttpBootUri image into the
// httpboot slot, through the virtual-media state machine: the slot is
// recorded Pending before this returns, so a power-on arriving next is
// deferred until the image is there. An import of another URI still in
// flight is ejected first (a new HttpBootUri replaces the old one).
func (b *Backend) importHTTPBoot(ctx context.Context, key system.Key, uri string) error {
	s, err := b.media.Insert(ctx, key, system.HTTPBootSlot, system.MediaInsert{Image: uri})
	var busy *media.BusyError
	if errors.As(err, &busy) {
		if err := b.media.Eject(ctx, key, system.HTTPBootSlot); err != nil {
			return translate(fmt.Errorf("replace HttpBootUri of %s: %w", key, err))
		}
		s, err = b.media.Insert(ctx, key, system.HTTPBootSlot, system.MediaInsert{Image: uri})
	}
	var badURL *download.InvalidURLError
	if errors.As(err, &badURL) {
		return fmt.Errorf("%w: %w", &redfish.RefusedValueError{Property: apply.PropertyHTTPBootURI, Value: badURL.URL,
			Resolution: "The image URL is refused: " + badURL.Reason + "."}, err)
	}
	if err != nil {
		return translate(fmt.Errorf("import HttpBootUri of %s: %w", key, err))
	}
	b.awaitSlot(ctx, key, func(vm *apply.VM) bool { return vm.Slots[system.HTTPBootSlot].InsertID == s.InsertID })
	return nil
}

// setHTTPBoot applies a boot patch that carries Boot.HttpBootUri: a URI is
// imported before the override is recorded (so no power-on can boot the VM
// before the image is there) and ejected again when the override is
// refused; a cleared URI is ejected after the override no longer names it.
func (b *Backend) setHTTPBoot(ctx context.Context, key system.Key, uri string, write func() error) error {
	if uri == "" {
		if err := write(); err != nil {
			return err
		}
		return translate(b.media.Eject(ctx, key, system.HTTPBootSlot))
	}
	if err := b.importHTTPBoot(ctx, key, uri); err != nil {
		return err
	}
	if err := write(); err != nil {
		if ejErr := b.media.Eject(ctx, key, system.HTTPBootSlot); ejErr != nil {
			return errors.Join(err, fmt.Errorf("undo HttpBootUri import of %s: %w", key, ejErr))
		}
		return err
	}
	return nil
}
