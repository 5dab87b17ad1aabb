package media

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
	"github.com/redfish-bridge/redfish-bridge/system"
)

// cdiEjector deletes the slot's check pods on eject (its DataVolume is
// the reconciler's: it sees the slot gone).
type cdiEjector struct{ kube kubernetes.Interface }

func (e cdiEjector) eject(ctx context.Context, o owner, slot string) error {
	return deleteOwnedPods(ctx, e.kube, o, checkSelector(slot), nil)
}

// checkPod is the check pod of the slot's current insert (cached, or
// live while the cache may lag behind its create); nil when absent. Check
// pods of the slot's older inserts are deleted.
func (c *cdiImporter) checkPod(ctx context.Context, t importTarget) (*corev1.Pod, error) {
	pods, err := c.checks(t.o, t.slot.Slot)
	if err != nil {
		return nil, err
	}
	var current *corev1.Pod
	for _, p := range pods {
		if p.Labels[LabelInsertID] == t.slot.InsertID {
			current = p
		} else if err := deletePod(ctx, c.r.opts.Kube, p); err != nil {
			return nil, err
		}
	}
	if current != nil || t.slot.Phase != system.MediaImporting {
		return current, nil
	}
	name := checkPodName(t.slot)
	live, err := c.r.opts.Kube.CoreV1().Pods(t.o.key.Namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get check pod %s/%s: %w", t.o.key.Namespace, name, err)
	case !t.o.owns(live) || live.Labels[LabelInsertID] != t.slot.InsertID:
		return nil, &ForeignClaimError{Namespace: t.o.key.Namespace, Name: name, VM: t.o.key, Kind: "pod"}
	}
	return live, nil
}

// checks lists the cached check pods o owns of slot ("": all).
func (c *cdiImporter) checks(o owner, slot string) ([]*corev1.Pod, error) {
	var out []*corev1.Pod
	for _, l := range c.pods {
		pods, err := l.Pods(o.key.Namespace).List(checkSelector(slot))
		if err != nil {
			return nil, fmt.Errorf("list check pods of %s: %w", o.key, err)
		}
		for _, p := range pods {
			if o.owns(p) && p.DeletionTimestamp == nil {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// createCheckPod creates the check pod of the slot's insert: the import
// pod's image, policy, trust and limits, with --head-only and no PVC.
func (c *cdiImporter) createCheckPod(ctx context.Context, t importTarget) error {
	r, slot := c.r, t.slot
	slot.CacheKey = "" // no cache entry mounted
	pod := podFor(t.o, slot, r.opts.ImporterImage, download.ImportRequest{Policy: r.opts.AddrPolicy, Timeout: r.opts.ImportTimeout, HeadOnly: true})
	pod.Name = checkPodName(slot)
	pod.Labels[LabelImageCheck] = "true"
	pod.Spec.Volumes = slices.DeleteFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return v.PersistentVolumeClaim != nil })
	ctr := &pod.Spec.Containers[0]
	ctr.VolumeMounts = slices.DeleteFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == ImageMountPath })
	_, err := r.opts.Kube.CoreV1().Pods(t.o.key.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	switch {
	case err == nil:
		logctx.From(ctx).InfoContext(ctx, "image check pod created", "vm", t.o.key.String(), "slot", slot.Slot, "pod", pod.Name, "insertID", slot.InsertID)
	case !apierrors.IsAlreadyExists(err):
		return fmt.Errorf("create check pod %s/%s: %w", t.o.key.Namespace, pod.Name, err)
	}
	return nil
}

// deleteChecks deletes the slot's check pods but the one of keepID.
func (c *cdiImporter) deleteChecks(ctx context.Context, t importTarget, keepID string) error {
	pods, err := c.checks(t.o, t.slot.Slot)
	if err != nil {
		return err
	}
	for _, p := range pods {
		if keepID == "" || p.Labels[LabelInsertID] != keepID {
			if err := deletePod(ctx, c.r.opts.Kube, p); err != nil {
				return err
			}
		}
	}
	return nil
}
