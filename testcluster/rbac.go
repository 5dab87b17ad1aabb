package testcluster

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// bridgeClusterRules is everything the bridge may do in any namespace.
var bridgeClusterRules = []rbacv1.PolicyRule{
	// Server-Side Apply is a PATCH; the bridge never updates or creates VMs.
	{APIGroups: []string{"kubevirt.io"}, Resources: []string{"virtualmachines"}, Verbs: []string{"get", "list", "watch", "patch"}},
	// Start/stop/restart requests (status.stateChangeRequests), applied
	// like virt-api's start and restart write them.
	{APIGroups: []string{"kubevirt.io"}, Resources: []string{"virtualmachines/status"}, Verbs: []string{"patch"}},
	// A forced restart or power-off deletes the VMI at once.
	{APIGroups: []string{"kubevirt.io"}, Resources: []string{"virtualmachineinstances"}, Verbs: []string{"get", "list", "watch", "delete"}},
	// ISO import: a PVC per medium and a helper pod that fills it.
	{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims", "pods"}, Verbs: []string{"create", "get", "list", "watch", "delete"}},
	// The import Secret of an insert (CAs, credentials): created and
	// deleted by name, never read, listed or watched.
	{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create", "delete"}},
	// A slot's trust (VerifyCertificate, Certificates), read by name.
	{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "create", "update"}},
	{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	// List-mode detection reads the installed VirtualMachine CRD.
	{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "list", "watch"}},
}

// bridgeNamespaceRules is what the bridge may do in its own namespace.
var bridgeNamespaceRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch"}},
	{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}},
	// The session revocations ConfigMap (kubeauth.ConfigMapRevocations).
	{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "patch"}},
}

// installBridgeRBAC binds [BridgeUser] to its cluster rules and to its
// namespace rules in ns (which must exist).
func installBridgeRBAC(ctx context.Context, cs kubernetes.Interface, ns string) error {
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: BridgeUser}}
	meta := metav1.ObjectMeta{Name: BridgeUser}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: meta, Rules: bridgeClusterRules}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create cluster role %s: %w", BridgeUser, err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: meta,
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: BridgeUser},
		Subjects:   subjects,
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create cluster role binding %s: %w", BridgeUser, err)
	}
	nsMeta := metav1.ObjectMeta{Name: BridgeUser, Namespace: ns}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: nsMeta, Rules: bridgeNamespaceRules}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create role %s/%s: %w", ns, BridgeUser, err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: nsMeta,
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: BridgeUser},
		Subjects:   subjects,
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create role binding %s/%s: %w", ns, BridgeUser, err)
	}
	return nil
}
