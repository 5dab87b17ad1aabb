package testcluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/redfish-bridge/redfish-bridge/crds"
)

const (
	// KubeVirtNamespace is where virt-controller looks for its KubeVirt CR
	// and holds its leader lease.
	KubeVirtNamespace = "kubevirt"
	// KubeVirtName names the KubeVirt CR.
	KubeVirtName = "kubevirt"
	// NodeName is the one schedulable node; sim binds every virt-launcher
	// and import pod to it.
	NodeName = "sim-node"
)

// KubeVirts is the resource of the KubeVirt CR.
var KubeVirts = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "kubevirts"}

// installControlPlane prepares what virt-controller needs: its namespace,
// the CRDs virt-operator installs besides VM and VMI, a KubeVirt CR whose
// status says Deployed (as virt-operator leaves it), and a Node labelled
// schedulable for KubeVirt.
func (c *Cluster) installControlPlane(ctx context.Context, cs kubernetes.Interface) error {
	if err := c.CreateNamespace(ctx, KubeVirtNamespace); err != nil {
		return err
	}
	list, err := crds.LoadControllerDeps()
	if err != nil {
		return err
	}
	ext, err := apiextensionsclient.NewForConfig(c.Admin)
	if err != nil {
		return fmt.Errorf("apiextensions client: %w", err)
	}
	if err := createCRDs(ctx, ext, list); err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(c.Admin)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	if err := createKubeVirtCR(ctx, dyn); err != nil {
		return err
	}
	return createNode(ctx, cs)
}

// createKubeVirtCR creates the KubeVirt CR and writes the status
// virt-operator would: phase Deployed, the default architecture.
func createKubeVirtCR(ctx context.Context, dyn dynamic.Interface) error {
	kv := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubevirt.io/v1",
		"kind":       "KubeVirt",
		"metadata":   map[string]any{"name": KubeVirtName, "namespace": KubeVirtNamespace},
		"spec": map[string]any{
			"certificateRotateStrategy": map[string]any{},
			"configuration":             map[string]any{},
		},
	}}
	api := dyn.Resource(KubeVirts).Namespace(KubeVirtNamespace)
	created, err := api.Create(ctx, kv, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create KubeVirt CR: %w", err)
	}
	if err := unstructured.SetNestedMap(created.Object, map[string]any{
		"phase":               string(kubevirtv1.KubeVirtPhaseDeployed),
		"defaultArchitecture": "amd64",
	}, "status"); err != nil {
		return fmt.Errorf("KubeVirt CR status: %w", err)
	}
	if _, err := api.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("KubeVirt CR status Deployed: %w", err)
	}
	return nil
}

// createNode creates NodeName, Ready, labelled kubevirt.io/schedulable.
func createNode(ctx context.Context, cs kubernetes.Interface) error {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("1000"),
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: NodeName, Labels: map[string]string{
		kubevirtv1.NodeSchedulable: "true",
		corev1.LabelHostname:       NodeName,
		corev1.LabelArchStable:     "amd64",
		corev1.LabelOSStable:       "linux",
	}}}
	created, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create node %s: %w", NodeName, err)
	}
	created.Status = corev1.NodeStatus{
		Capacity:    capacity,
		Allocatable: capacity,
		Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
		}},
	}
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("node %s status: %w", NodeName, err)
	}
	return nil
}
