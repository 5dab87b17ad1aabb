package testcluster

import (
	"context"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// GatePolicyName names the ValidatingAdmissionPolicy that stands in for
// KubeVirt's feature-gate checks: in namespaces labelled
// [LabelRebootPolicyGate]=off it denies a VirtualMachine whose template sets
// rebootPolicy, as virt-api's VM webhook does while the RebootPolicy
// feature gate is off (a cluster-wide switch in KubeVirt; per namespace
// here so that one test cluster holds both kinds).
const GatePolicyName = "kubevirt-feature-gates"

// LabelRebootPolicyGate on a namespace, value "off", turns KubeVirt's
// RebootPolicy feature gate off for its VirtualMachines.
const LabelRebootPolicyGate = "testcluster.redfish-bridge.io/reboot-policy-gate"

// MsgRebootPolicyGate is virt-api's denial (KubeVirt v1.9 capability
// check, pkg/capabilities: CapRebootPolicy is Experimental, gated by
// featuregate.RebootPolicy).
const MsgRebootPolicyGate = "spec.template.spec.domain.rebootPolicy: Reboot policy support is experimental on this platform. But feature gate 'RebootPolicy' is not enabled"

// installGatePolicy creates the policy and its binding to gate-off
// namespaces.
func installGatePolicy(ctx context.Context, cs kubernetes.Interface) error {
	vals := []admissionregistrationv1.Validation{{
		Expression: "!object.spec.?template.?spec.?domain.?rebootPolicy.hasValue()",
		Message:    MsgRebootPolicyGate,
		Reason:     ptr(metav1.StatusReasonInvalid),
	}}
	match := &admissionregistrationv1.MatchResources{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelRebootPolicyGate: "off"}},
	}
	return createVMPolicy(ctx, cs, GatePolicyName, nil, vals, match)
}

// RebootPolicyGateOff creates a test namespace (named as
// [Cluster.TestNamespace] does) labelled with the RebootPolicy feature gate
// off, and waits until the policy denies rebootPolicy there.
func (c *Cluster) RebootPolicyGateOff(t testing.TB) string {
	t.Helper()
	ctx := t.Context()
	name := c.TestNamespace(t)
	cs, err := kubernetes.NewForConfig(c.Admin)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns.Labels = map[string]string{corev1.LabelMetadataName: name, LabelRebootPolicyGate: "off"}
	if _, err := cs.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(c.Admin)
	if err != nil {
		t.Fatal(err)
	}
	probe := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
		"metadata": map[string]any{"name": "testcluster-gate-probe"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"domain": map[string]any{"rebootPolicy": "Terminate", "devices": map[string]any{}},
		}}},
	}}
	err = poll(ctx, "RebootPolicy gate off in "+name, func(ctx context.Context) (bool, error) {
		_, err := dyn.Resource(VirtualMachines).Namespace(name).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && apierrors.IsInvalid(err) && strings.Contains(err.Error(), GatePolicyName) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return name
}
