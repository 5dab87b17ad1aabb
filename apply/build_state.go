package apply

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// StateChangeFunc edits the complete list of state change requests given a
// fresh read; returning ErrNoChange writes nothing.
type StateChangeFunc func(vm *VM, reqs *[]kubevirt.StateChangeRequest) error

// BuildStateRequests returns redfish-power's apply of the VM's status
// subresource: status.stateChangeRequests set to reqs, the whole (atomic)
// list, preconditioned and forced: virt-controller owns the list after it
// removed an entry, and the list sent is the one read plus or minus this
// call's entries, so no concurrent request is lost. An empty list is sent
// as [] (omitting it would leave a list owned by virt-controller in place).
func BuildStateRequests(vm *VM, reqs []kubevirt.StateChangeRequest) (*Body, error) {
	body := skeleton(vm)
	if err := unstructured.SetNestedSlice(body.Object, kubevirt.EncodeStateChangeRequests(reqs), kubevirt.StateChangeRequests...); err != nil {
		return nil, fmt.Errorf("set stateChangeRequests: %w", err)
	}
	return &Body{Object: body, Force: true, Subresource: "status"}, nil
}

// StateChange runs change on a fresh read of the VM's state change requests
// and applies the resulting list under redfish-power to the status
// subresource (preconditioned, forced; see BuildStateRequests). This is
// what virt-api's restart does, as an apply: a Start request starts a VM
// whose run strategy alone would not (RerunOnFailure after its VMI was
// deleted or its guest shut down); Stop+Start replaces a running VMI.
func (c *Client) StateChange(ctx context.Context, key system.Key, change StateChangeFunc) (*VM, error) {
	return c.run(ctx, key, ManagerPower, func(_ context.Context, vm *VM) (*Body, error) {
		reqs := kubevirt.StateChangeRequestsOf(vm.Object)
		if err := change(vm, &reqs); err != nil {
			return nil, err
		}
		return BuildStateRequests(vm, reqs)
	})
}
