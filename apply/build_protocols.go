package apply

import (
	"context"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// BuildProtocols returns redfish-protocols' complete intent: the
// annotation recording the protocols switched off, while any is (all on:
// the annotation is omitted, so the apply removes it). It owns nothing
// else, so nobody's field can conflict; it forces all the same, to take
// the annotation back from a hand edit.
func BuildProtocols(vm *VM, p system.Protocols) (*Body, error) {
	body := skeleton(vm)
	if !p.IsZero() {
		if err := setAnnotation(body, AnnotationProtocols, p); err != nil {
			return nil, err
		}
	}
	return &Body{Object: body, Force: true}, nil
}

// Protocols switches key's protocols as sw says, on a fresh read of what
// is recorded, and applies redfish-protocols' complete intent
// (preconditioned, forced; see BuildProtocols): two switches at once,
// from two replicas, both land.
func (c *Client) Protocols(ctx context.Context, key system.Key, sw system.ProtocolSwitch) (*VM, error) {
	return c.run(ctx, key, ManagerProtocols, func(_ context.Context, vm *VM) (*Body, error) {
		p := vm.Protocols
		sw.MergeInto(&p)
		if p == vm.Protocols {
			return nil, ErrNoChange
		}
		return BuildProtocols(vm, p)
	})
}
