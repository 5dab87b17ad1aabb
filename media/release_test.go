package media_test

import (
	"context"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// claimReleased waits until the PVC of key's slot, whose import failed, is
// gone or being deleted (the test cluster runs no controller that removes
// the pvc-protection finalizer): a failed import holds no storage, so an
// undeploy that ejects only inserted media leaves none behind.
func (e *env) claimReleased(t *testing.T, key system.Key, slot string) {
	t.Helper()
	name := media.ClaimName(key, slot)
	e.eventually(t, "the failed import's PVC "+name+" released", func(ctx context.Context) error {
		pvc, err := e.adminKube.CoreV1().PersistentVolumeClaims(key.Namespace).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		case pvc.DeletionTimestamp == nil:
			return fmt.Errorf("PVC %s still held by the failed slot (phase %s)", name, pvc.Status.Phase)
		}
		return nil
	})
}
