package apply

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// BuildPower returns redfish-power's complete intent: the annotation (while
// the intent is not empty) and spec.runStrategy. An empty c.RunStrategy keeps
// the current value: it is re-sent when redfish-power owns it (omitting it
// would delete it) and left out otherwise. Power always forces.
func BuildPower(vm *VM, c PowerChange) (*Body, error) {
	body := skeleton(vm)
	if !c.Intent.IsZero() {
		if err := setAnnotation(body, AnnotationPower, c.Intent); err != nil {
			return nil, err
		}
	}
	rs := c.RunStrategy
	if rs == "" && owns(vm, ManagerPower, kubevirt.RunStrategy.Any()...) {
		rs = kubevirt.RunStrategyOf(vm.Object)
	}
	if rs != "" {
		if err := unstructured.SetNestedField(body.Object, string(rs), kubevirt.RunStrategy...); err != nil {
			return nil, fmt.Errorf("set runStrategy: %w", err)
		}
	}
	return &Body{Object: body, Force: true}, nil
}
