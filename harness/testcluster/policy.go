package testcluster

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// PolicyName names the ValidatingAdmissionPolicy (and its binding) that
// stands in for KubeVirt's VirtualMachine admission webhook. A rejection
// names it: `ValidatingAdmissionPolicy 'kubevirt-webhook-invariants' ...
// denied request: <message>`.
const PolicyName = "kubevirt-webhook-invariants"

// Policy messages, one per invariant of KubeVirt's webhook (T is
// spec.template.spec). A volume without a disk is NOT rejected: KubeVirt
// accepts it and attaches the volume as a plain disk, which is the
// corruption the simulator must report, not the apiserver.
const (
	MsgDiskWithoutVolume = "a disk that is not a CD-ROM needs a volume of the same name"
	MsgDuplicateBoot     = "bootOrder must be unique across disks and interfaces"
	MsgCDROMVirtio       = "a CD-ROM disk cannot use bus virtio"
	MsgBootOrderPositive = "bootOrder must be greater than 0"
)

// policyVariables reads the lists whether or not they are present. Both CRD
// variants require name on disks, volumes and interfaces.
var policyVariables = []admissionregistrationv1.Variable{
	{Name: "disks", Expression: "object.spec.?template.?spec.?domain.?devices.?disks.orValue([])"},
	{Name: "interfaces", Expression: "object.spec.?template.?spec.?domain.?devices.?interfaces.orValue([])"},
	{Name: "volumes", Expression: "object.spec.?template.?spec.?volumes.orValue([])"},
	{Name: "orders", Expression: "variables.disks.filter(d, has(d.bootOrder)).map(d, d.bootOrder) + " +
		"variables.interfaces.filter(i, has(i.bootOrder)).map(i, i.bootOrder)"},
}

var policyValidations = []admissionregistrationv1.Validation{
	{
		Expression: "variables.disks.all(d, has(d.cdrom) || variables.volumes.exists(v, v.name == d.name))",
		MessageExpression: "'spec.template.spec.domain.devices.disks[name=' + variables.disks.filter(d, !has(d.cdrom) && " +
			"!variables.volumes.exists(v, v.name == d.name))[0].name + ']: " + MsgDiskWithoutVolume + "'",
		Message: MsgDiskWithoutVolume,
		Reason:  ptr(metav1.StatusReasonInvalid),
	},
	{
		Expression: "variables.orders.all(o, variables.orders.filter(x, x == o).size() == 1)",
		MessageExpression: "'" + MsgDuplicateBoot + " (duplicate: ' + " +
			"string(variables.orders.filter(o, variables.orders.filter(x, x == o).size() > 1)[0]) + ')'",
		Message: MsgDuplicateBoot,
		Reason:  ptr(metav1.StatusReasonInvalid),
	},
	{
		Expression: "variables.disks.all(d, !has(d.cdrom) || !has(d.cdrom.bus) || d.cdrom.bus != 'virtio')",
		MessageExpression: "'spec.template.spec.domain.devices.disks[name=' + variables.disks.filter(d, has(d.cdrom) && " +
			"has(d.cdrom.bus) && d.cdrom.bus == 'virtio')[0].name + ']: " + MsgCDROMVirtio + "'",
		Message: MsgCDROMVirtio,
		Reason:  ptr(metav1.StatusReasonInvalid),
	},
	{
		Expression: "variables.orders.all(o, o >= 1)",
		Message:    MsgBootOrderPositive,
		Reason:     ptr(metav1.StatusReasonInvalid),
	},
}

func ptr[T any](v T) *T { return &v }

// installPolicy creates the policy and its Deny binding.
func installPolicy(ctx context.Context, cs kubernetes.Interface) error {
	// Status.TypeChecking would report expressions that do not fit the CRD
	// schema, but its controller runs in kube-controller-manager, which is
	// not here: the policy tests exercise every validation instead.
	return createVMPolicy(ctx, cs, PolicyName, policyVariables, policyValidations, nil)
}

// createVMPolicy creates a Fail-closed ValidatingAdmissionPolicy on
// VirtualMachine creates and updates, and its Deny binding (limited to
// match's namespaces; nil: all).
func createVMPolicy(ctx context.Context, cs kubernetes.Interface, name string, vars []admissionregistrationv1.Variable,
	vals []admissionregistrationv1.Validation, match *admissionregistrationv1.MatchResources) error {
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
						Rule: admissionregistrationv1.Rule{
							APIGroups:   []string{"kubevirt.io"},
							APIVersions: []string{"*"},
							Resources:   []string{"virtualmachines"},
						},
					},
				}},
			},
			Variables:   vars,
			Validations: vals,
		},
	}
	api := cs.AdmissionregistrationV1()
	if _, err := api.ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create admission policy %s: %w", name, err)
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources:    match,
		},
	}
	if _, err := api.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create admission policy binding %s: %w", name, err)
	}
	return nil
}
