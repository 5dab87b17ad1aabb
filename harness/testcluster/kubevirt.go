package testcluster

import (
	"context"
	"errors"
	"fmt"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// VirtualMachines and VirtualMachineInstances are the KubeVirt resources.
var (
	VirtualMachines         = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachines"}
	VirtualMachineInstances = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachineinstances"}
)

// installKubeVirt installs the CRDs and the admission policies and waits
// until the policy rejects a bad VirtualMachine. With virt-api
// ([Options.VirtAPI]) its webhooks take the place of policy [PolicyName]
// (see startVirtAPI); the feature-gate policy stays.
func (c *Cluster) installKubeVirt(ctx context.Context, cs kubernetes.Interface, phase func(string)) error {
	ext, err := apiextensionsclient.NewForConfig(c.Admin)
	if err != nil {
		return fmt.Errorf("apiextensions client: %w", err)
	}
	if err := installCRDs(ctx, ext, cs.Discovery(), c.Variant); err != nil {
		return err
	}
	phase("CRDs served")
	if err := installGatePolicy(ctx, cs); err != nil {
		return err
	}
	if c.virtAPI {
		return nil
	}
	if err := installPolicy(ctx, cs); err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(c.Admin)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	defer phase("admission policy enforced")
	return c.waitRejected(ctx, dyn, "admission policy enforced", PolicyName)
}

// waitRejected creates a VirtualMachine with a disk without a volume with
// dry run until the apiserver rejects it with an error that names by (the
// admission policy or virt-api's webhook).
func (c *Cluster) waitRejected(ctx context.Context, dyn dynamic.Interface, what, by string) error {
	probe := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubevirt.io/v1",
		"kind":       "VirtualMachine",
		"metadata":   map[string]any{"name": "testcluster-policy-probe"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"domain": map[string]any{"devices": map[string]any{"disks": []any{
				map[string]any{"name": "probe", "disk": map[string]any{"bus": "virtio"}},
			}}},
		}}},
	}}
	vms := dyn.Resource(VirtualMachines).Namespace(c.BridgeNamespace)
	return poll(ctx, what, func(ctx context.Context) (bool, error) {
		_, err := vms.Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil {
			return false, errors.New("probe VirtualMachine admitted")
		}
		if strings.Contains(err.Error(), by) {
			return true, nil
		}
		return false, err
	})
}

// waitBridgeAuthorized waits until the RBAC authorizer has seen the
// bridge's bindings (asking as the bridge itself).
func (c *Cluster) waitBridgeAuthorized(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(c.Bridge)
	if err != nil {
		return fmt.Errorf("bridge client: %w", err)
	}
	checks := []authorizationv1.ResourceAttributes{
		{Group: "kubevirt.io", Resource: "virtualmachines", Verb: "patch"},
		{Group: "coordination.k8s.io", Resource: "leases", Verb: "update", Namespace: c.BridgeNamespace, Name: chartRelease},
	}
	for _, ra := range checks {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &ra}}
		err := poll(ctx, "bridge RBAC for "+ra.Verb+" "+ra.Resource, func(ctx context.Context) (bool, error) {
			res, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
			if err != nil {
				return false, err
			}
			return res.Status.Allowed, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
