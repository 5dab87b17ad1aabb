package apply

import (
	"errors"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Reasons redfish-boot could not arm rebootPolicy Terminate for a Once
// override ([Client.RebootPolicyFallbacks], the Warning event's reason).
const (
	// FallbackRefused: the cluster refused the field (KubeVirt's RebootPolicy
	// feature gate is off, or a KubeVirt older than v1.8).
	FallbackRefused = "RebootPolicyRefused"
	// FallbackAuthor: the VM's author owns another rebootPolicy value.
	FallbackAuthor = "RebootPolicyAuthorOwned"
)

// armsTerminate reports whether redfish-boot's intent for override o
// includes rebootPolicy Terminate: while a Once override lays out a boot,
// so that a reboot the guest does itself ends the VMI and the next VMI boots
// what the reverted override leaves (the disk). An author's value is never
// taken: the field is armed only when the VM has none or redfish-boot owns
// it already.
func armsTerminate(vm *VM, o system.BootOverride) bool {
	if o.Enabled != system.BootOnce || !Active(o) {
		return false
	}
	if kubevirt.RebootPolicyOf(vm.Object) == "" {
		return true
	}
	return owns(vm, ManagerBoot, kubevirt.RebootPolicy.Any()...)
}

// RebootPolicyRefused reports whether err is the cluster refusing
// T.domain.rebootPolicy: KubeVirt's VM admission webhook with the
// RebootPolicy feature gate off (v1.9 denies the field with a
// FieldValueNotSupported cause on it, message naming the gate
// 'RebootPolicy'), or an apiserver whose VirtualMachine schema predates the
// field ("field not declared in schema"). Conflicts never are.
func RebootPolicyRefused(err error) bool {
	var se apierrors.APIStatus
	if err == nil || apierrors.IsConflict(err) || !errors.As(err, &se) {
		return false
	}
	st := se.Status()
	texts := []string{st.Message}
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			texts = append(texts, c.Field, c.Message)
		}
	}
	for _, s := range texts {
		if strings.Contains(strings.ToLower(s), "rebootpolicy") {
			return true
		}
	}
	return false
}

// hasRebootPolicy reports whether an apply body sets rebootPolicy.
func hasRebootPolicy(body *unstructured.Unstructured) bool {
	_, found, _ := unstructured.NestedFieldNoCopy(body.Object, kubevirt.RebootPolicy...)
	return found
}

// withoutRebootPolicy returns a copy of body without rebootPolicy, and
// without the parents that held nothing else (an empty map in an apply body
// would claim it).
func withoutRebootPolicy(body *unstructured.Unstructured) *unstructured.Unstructured {
	out := body.DeepCopy()
	for n := len(kubevirt.RebootPolicy); n >= 1; n-- {
		path := kubevirt.RebootPolicy[:n]
		if n < len(kubevirt.RebootPolicy) {
			if m, _, _ := unstructured.NestedMap(out.Object, path...); len(m) > 0 {
				break
			}
		}
		unstructured.RemoveNestedField(out.Object, path...)
	}
	return out
}
