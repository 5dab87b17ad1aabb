package media

import (
	"context"
	"fmt"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// A failed import holds nothing. Ironic (and sushy) eject only slots that
// read Inserted true, and a slot whose import failed must not read so: it
// holds no CD the VM could boot, and Ironic 39's vmedia insert polling
// would take Inserted true for a mounted CD. So a failed slot reads
// Inserted false, ConnectedVia NotConnected, and its storage is released
// by the bridge as soon as the failure is recorded: the import's pods
// (each method's Settle), its DataVolume (the CDI method's Settle), its
// Secret (deleted before the failure is recorded) and the slot's PVC
// (here). What stays is the record alone (the Image asked for, Health
// Warning and the reason as a Status condition on the VirtualMedia
// resource), until the next InsertMedia (Ironic's next deploy) or
// EjectMedia of the slot: an undeploy that ejects only inserted media
// leaves no storage behind.

// releaseFailed deletes the PVC of slot, whose import failed, when the
// bridge made it for this VM (label and ownerReference, from the cache)
// and no volume of the VM uses it. A PVC already being deleted is left to
// finish.
func (r *Reconciler) releaseFailed(ctx context.Context, vm *apply.VM, o owner, slot system.MediaSlot) error {
	if slot.ClaimName == "" {
		return nil
	}
	for _, v := range kubevirt.VolumesOf(vm.Object) {
		if v.Claim == slot.ClaimName {
			return nil
		}
	}
	claims, err := r.listClaims(o)
	if err != nil {
		return err
	}
	for _, c := range claims {
		if c.Name != slot.ClaimName || c.DeletionTimestamp != nil {
			continue
		}
		if err := importer.DeleteClaim(ctx, r.opts.Kube, c); err != nil {
			return fmt.Errorf("release PVC %s/%s of the failed import into slot %s: %w", c.Namespace, c.Name, slot.Slot, err)
		}
		logctx.From(ctx).InfoContext(ctx, "released the PVC of a failed import", "vm", vm.Key.String(), "slot", slot.Slot, "insertID", slot.InsertID, "pvc", c.Name)
		r.c.released.Add(1)
	}
	return nil
}
