package apply

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// StateRequest is one entry of a VM's status.stateChangeRequests: how
// virt-api's start, stop and restart subresources ask virt-controller to
// act. virt-controller acts on the first entry only and removes it once
// done: a Stop (UID = the VMI to stop) when that VMI is gone, a Start when
// a live VMI exists.
type StateRequest struct {
	Action string // RequestStart or RequestStop
	UID    string // the VMI a Stop is for
}

// State change actions virt-controller understands.
const (
	RequestStart = "Start"
	RequestStop  = "Stop"
)

// StateRequests decodes the VM's status.stateChangeRequests.
func StateRequests(vm *VM) []StateRequest {
	raw, _, _ := unstructured.NestedSlice(vm.Object.Object, stateRequestsPath...)
	out := make([]StateRequest, 0, len(raw))
	for _, r := range raw {
		m, _ := r.(map[string]any)
		a, _ := m["action"].(string)
		uid, _ := m["uid"].(string)
		out = append(out, StateRequest{Action: a, UID: uid})
	}
	return out
}

// StateChangeFunc edits the complete list of state change requests given a
// fresh read; returning ErrNoChange writes nothing.
type StateChangeFunc func(vm *VM, reqs *[]StateRequest) error

// BuildStateRequests returns redfish-power's apply of the VM's status
// subresource: status.stateChangeRequests set to reqs, the whole (atomic)
// list, preconditioned and forced: virt-controller owns the list after it
// removed an entry, and the list sent is the one read plus or minus this
// call's entries, so no concurrent request is lost. An empty list is sent
// as [] (omitting it would leave a list owned by virt-controller in place).
func BuildStateRequests(vm *VM, reqs []StateRequest) (*Body, error) {
	body := skeleton(vm)
	list := make([]any, 0, len(reqs))
	for _, r := range reqs {
		m := map[string]any{"action": r.Action}
		if r.UID != "" {
			m["uid"] = r.UID
		}
		list = append(list, m)
	}
	if err := unstructured.SetNestedSlice(body.Object, list, stateRequestsPath...); err != nil {
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
		reqs := StateRequests(vm)
		if err := change(vm, &reqs); err != nil {
			return nil, err
		}
		return BuildStateRequests(vm, reqs)
	})
}
