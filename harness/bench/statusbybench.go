package bench

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// stoppedStatus is the status virt-controller writes on a halted VM it
// synced (no VMI): what a bench without virt-controller
// ([RSSScenario.StatusByBench]) writes itself, through the VM's status
// subresource.
var stoppedStatus = []byte(`{"status":{"printableStatus":"` + string(kubevirt.StatusStopped) + `","ready":false,"created":false,` +
	`"runStrategy":"` + string(kubevirt.RunStrategyHalted) + `","desiredGeneration":1,"observedGeneration":1,` +
	`"conditions":[{"type":"Ready","status":"False","reason":"VMINotExists","message":"VMI does not exist"}]}}`)

// writeStoppedStatus gives VM k the status virt-controller would.
func writeStoppedStatus(dyn dynamic.Interface) func(context.Context, system.Key) error {
	return func(ctx context.Context, k system.Key) error {
		_, err := dyn.Resource(kubevirt.VirtualMachines).Namespace(k.Namespace).Patch(ctx, k.Name, types.MergePatchType, stoppedStatus,
			metav1.PatchOptions{FieldManager: kubevirt.ControllerFieldManager}, "status")
		if err != nil {
			return fmt.Errorf("status of VM %s: %w", k, err)
		}
		return nil
	}
}
