package podimport

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// The slot's PVC, which the pod method makes (CDI makes its own).

// checkClaim looks at the slot's cached PVC: exists, and ready for an
// import (ours, not being deleted, large enough for size bytes; an absent
// PVC is ready to be created), and the size the import pod writes into. A
// too small PVC is deleted (and re-created once gone).
func (p *podImporter) checkClaim(ctx context.Context, o importer.Owner, slot system.MediaSlot, size int64) (exists, ready bool, claimSize resource.Quantity, err error) {
	want := download.ClaimSize(size, p.d.Options.DefaultSize)
	pvc, err := p.d.Claims.Claim(o.Key.Namespace, slot.ClaimName)
	if err != nil || pvc == nil {
		return false, err == nil, want, err
	}
	switch {
	case pvc.DeletionTimestamp != nil:
		return true, false, want, nil
	case !o.Owns(pvc):
		return true, false, want, &importer.ForeignClaimError{Namespace: pvc.Namespace, Name: pvc.Name, VM: o.Key}
	}
	have := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if size <= 0 || have.Cmp(want) >= 0 {
		return true, true, have, nil
	}
	logctx.From(ctx).InfoContext(ctx, "image PVC too small, replacing it", "vm", o.Key.String(), "pvc", pvc.Name, "have", have.String(), "want", want.String())
	return true, false, want, importer.DeleteClaim(ctx, p.d.Kube, pvc)
}

// createClaim creates the slot's PVC sized for size bytes.
func (p *podImporter) createClaim(ctx context.Context, o importer.Owner, slot system.MediaSlot, size int64) error {
	want := download.ClaimSize(size, p.d.Options.DefaultSize)
	_, err := p.d.Kube.CoreV1().PersistentVolumeClaims(o.Key.Namespace).Create(ctx,
		importer.ClaimFor(o, slot, want, p.d.Options.StorageClass), metav1.CreateOptions{})
	switch {
	case err == nil:
		p.d.Counters.ClaimCreated()
		logctx.From(ctx).InfoContext(ctx, "image PVC created", "vm", o.Key.String(), "pvc", slot.ClaimName, "size", want.String())
	case apierrors.IsAlreadyExists(err): // our cache lags, or another replica made it
	default:
		return fmt.Errorf("create PVC %s/%s: %w", o.Key.Namespace, slot.ClaimName, err)
	}
	return nil
}

// MountedByImports returns the PVCs (namespace/name) that the import pods
// of ns ("": all) which have not ended mount.
func MountedByImports(ctx context.Context, kube kubernetes.Interface, ns string) (map[string]bool, error) {
	pods, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: importer.PodSelector("").String()})
	if err != nil {
		return nil, fmt.Errorf("list import pods of %q: %w", ns, err)
	}
	inUse := map[string]bool{}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for _, v := range p.Spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				inUse[p.Namespace+"/"+v.PersistentVolumeClaim.ClaimName] = true
			}
		}
	}
	return inUse, nil
}
