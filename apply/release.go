package apply

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// releaseEFI removes firmware.bootloader.efi, which another writer owns,
// from the VM read: a JSON merge patch under redfish-boot (operation
// Update) that sets efi to null and carries the resourceVersion read, so a
// VM changed since gets 409 and [Client.run] decides again from a live
// read. It is the one write of the bridge that removes another manager's
// field, and only when a Redfish client asks for Legacy ([ValidateLegacy]):
// an apply cannot (see [ErrForeignEFI]). The removal takes efi out of
// every manager's managedFields and leaves redfish-boot owning nothing
// under Update (the patch sets no field); the Legacy apply that follows
// owns bootloader.bios. Until it lands the VM has no bootloader, which
// KubeVirt boots as BIOS: Legacy already.
func (c *Client) releaseEFI(ctx context.Context, read *VM) (*VM, error) {
	patch := map[string]any{"metadata": map[string]any{"resourceVersion": read.Object.GetResourceVersion()}}
	cur := patch
	for i, k := range kubevirt.EFI {
		if i == len(kubevirt.EFI)-1 {
			cur[k] = nil
			break
		}
		next := map[string]any{}
		cur[k] = next
		cur = next
	}
	data, err := json.Marshal(patch)
	if err != nil {
		return nil, fmt.Errorf("encode efi release of %s: %w", read.Key, err)
	}
	out, err := c.dyn.Resource(kubevirt.VirtualMachines).Namespace(read.Key.Namespace).Patch(ctx, read.Key.Name, types.MergePatchType, data,
		metav1.PatchOptions{FieldManager: ManagerBoot})
	if err != nil {
		return nil, fmt.Errorf("%s release %s of %s: %w", ManagerBoot, kubevirt.EFI, read.Key, err)
	}
	c.recent.remember(read.Key, read.Object.GetResourceVersion(), out)
	return Decode(ctx, read.Key, out, read.VMI), nil
}
