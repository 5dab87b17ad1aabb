package cdiimport

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// cdiEjector deletes the slot's check pods on eject (its DataVolume is
// the reconciler's: it sees the slot gone).
type cdiEjector struct{ kube kubernetes.Interface }

func (e cdiEjector) Eject(ctx context.Context, o importer.Owner, slot string) error {
	return importer.DeleteOwnedPods(ctx, e.kube, o, checkSelector(slot), nil)
}

// checkPod is the check pod of the slot's current insert (cached, or
// live while the cache may lag behind its create); nil when absent. Check
// pods of the slot's older inserts are deleted.
func (c *cdiImporter) checkPod(ctx context.Context, t importer.Target) (*corev1.Pod, error) {
	pods, err := c.checks(t.Owner, t.Slot.Slot)
	if err != nil {
		return nil, err
	}
	var current *corev1.Pod
	for _, p := range pods {
		if p.Labels[importer.LabelInsertID] == t.Slot.InsertID {
			current = p
		} else if err := importer.DeletePod(ctx, c.d.Kube, p); err != nil {
			return nil, err
		}
	}
	if current != nil || t.Slot.Phase != system.MediaImporting {
		return current, nil
	}
	name := checkPodName(t.Slot)
	live, err := c.d.Kube.CoreV1().Pods(t.Owner.Key.Namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get check pod %s/%s: %w", t.Owner.Key.Namespace, name, err)
	case !t.Owner.Owns(live) || live.Labels[importer.LabelInsertID] != t.Slot.InsertID:
		return nil, &importer.ForeignClaimError{Namespace: t.Owner.Key.Namespace, Name: name, VM: t.Owner.Key, Kind: "pod"}
	}
	return live, nil
}

// checks lists the cached check pods o owns of slot ("": all).
func (c *cdiImporter) checks(o importer.Owner, slot string) ([]*corev1.Pod, error) {
	var out []*corev1.Pod
	for _, l := range c.pods {
		pods, err := l.Pods(o.Key.Namespace).List(checkSelector(slot))
		if err != nil {
			return nil, fmt.Errorf("list check pods of %s: %w", o.Key, err)
		}
		for _, p := range pods {
			if o.Owns(p) && p.DeletionTimestamp == nil {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// createCheckPod creates the check pod of the slot's insert: the import
// pod's image, policy, trust and limits, with --head-only and no PVC.
func (c *cdiImporter) createCheckPod(ctx context.Context, t importer.Target) error {
	opts, slot := c.d.Options, t.Slot
	slot.CacheKey = "" // no cache entry mounted
	pod := importer.PodFor(t.Owner, slot, opts.ImporterImage, download.ImportRequest{Policy: opts.AddrPolicy, Timeout: opts.ImportTimeout, HeadOnly: true})
	pod.Name = checkPodName(slot)
	pod.Labels[importer.LabelImageCheck] = "true"
	pod.Spec.Volumes = slices.DeleteFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return v.PersistentVolumeClaim != nil })
	ctr := &pod.Spec.Containers[0]
	ctr.VolumeMounts = slices.DeleteFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == importer.ImageMountPath })
	_, err := c.d.Kube.CoreV1().Pods(t.Owner.Key.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	switch {
	case err == nil:
		logctx.From(ctx).InfoContext(ctx, "image check pod created", "vm", t.Owner.Key.String(), "slot", slot.Slot, "pod", pod.Name, "insertID", slot.InsertID)
	case !apierrors.IsAlreadyExists(err):
		return fmt.Errorf("create check pod %s/%s: %w", t.Owner.Key.Namespace, pod.Name, err)
	}
	return nil
}

// deleteChecks deletes the slot's check pods but the one of keepID.
func (c *cdiImporter) deleteChecks(ctx context.Context, t importer.Target, keepID string) error {
	pods, err := c.checks(t.Owner, t.Slot.Slot)
	if err != nil {
		return err
	}
	for _, p := range pods {
		if keepID == "" || p.Labels[importer.LabelInsertID] != keepID {
			if err := importer.DeletePod(ctx, c.d.Kube, p); err != nil {
				return err
			}
		}
	}
	return nil
}
