package demo

import (
	"context"

	"k8s.io/client-go/kubernetes"
)

// CreateAccounts writes the users Secret ([AdminUser] seeing every
// namespace, with a random password it returns, and the ReadOnly
// [ViewerUser] with the same password) and the session key Secret
// into namespace, as [Start] does: what service.Start needs.
func CreateAccounts(ctx context.Context, kube kubernetes.Interface, namespace string) (string, error) {
	return createAccounts(ctx, kube, namespace)
}
