package podimport

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/internal/objmac"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
)

// An image cache entry is a PVC that any namespace user may mount: its
// image and its meta.json (which records the image's sha256) can be
// rewritten together. What the entry should hold is therefore kept in a
// record the bridge writes and verifies: an immutable ConfigMap named
// after the entry, in its namespace, owned by the entry PVC (the GC
// deletes it with the entry), whose data is the digest and whose
// [objmac.Annotation] is a MAC under the bridge's object secret over the
// namespace, the name, the entry PVC's UID and the data. A tenant may
// delete a record, never forge one: a record without a valid MAC, or of
// an earlier entry of that name, counts as none.
//
// An import pod of the entry gets --cache-sha256 from a valid record (the
// entry is downloaded again when its meta.json says otherwise, and every
// copy is checked against it); with no record, an entry other import pods
// are filling or copying from is shared as it is (one download for a
// fleet), and any other gets --cache-refill. A pod that downloaded into
// the entry records what it downloaded. A pod that copied is accepted only
// when its result's digest is the record's; otherwise it is deleted and
// the insert imports again with --cache-refill: its bytes came from an
// entry nobody can vouch for.

// recordDigestKey is the record's data key holding the image's sha256.
const recordDigestKey = "sha256"

// VerifyCacheEntries is switched off only by the negative control of the
// image cache's record test: the record is written, but no digest is
// passed to an import pod nor its copy checked (the pod trusts the
// entry's meta.json as written).
var VerifyCacheEntries = true

// PassRecordedDigest is switched off only by a test of the copy check
// alone: an import pod gets no --cache-sha256 (nor --cache-refill but
// after a copy that failed its check).
var PassRecordedDigest = true

// recordFields is the identity a record's MAC covers.
func recordFields(ns, name string, entry types.UID) []string {
	return []string{"image-cache-record", ns, name, string(entry)}
}

// recordedDigest is the digest entry's record holds, "" when there is no
// valid record (none, not signed by the bridge, or of another entry).
func (p *podImporter) recordedDigest(ctx context.Context, entry *corev1.PersistentVolumeClaim) (string, error) {
	cm, err := p.d.Kube.CoreV1().ConfigMaps(entry.Namespace).Get(ctx, entry.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("get image cache record %s/%s: %w", entry.Namespace, entry.Name, err)
	}
	if !p.d.CacheRecords.Verify(cm.Annotations[objmac.Annotation], recordFields(cm.Namespace, cm.Name, entry.UID), cm.Data) {
		logctx.From(ctx).DebugContext(ctx, "image cache record not valid for its entry", "configmap", cm.Namespace+"/"+cm.Name)
		return "", nil
	}
	return cm.Data[recordDigestKey], nil
}

// record makes digest entry's record, replacing a record of another
// digest or without the bridge's MAC.
func (p *podImporter) record(ctx context.Context, entry *corev1.PersistentVolumeClaim, digest string) error {
	if !p.d.CacheRecords.Valid() {
		logctx.From(ctx).WarnContext(ctx, "image cache entry not recorded: the bridge has no object secret", "pvc", entry.Namespace+"/"+entry.Name)
		return nil
	}
	have, err := p.recordedDigest(ctx, entry)
	if err != nil || have == digest {
		return err
	}
	cms := p.d.Kube.CoreV1().ConfigMaps(entry.Namespace)
	if err := cms.Delete(ctx, entry.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete image cache record %s/%s: %w", entry.Namespace, entry.Name, err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: entry.Name, Namespace: entry.Namespace,
			Labels: map[string]string{importer.LabelComponent: importer.ComponentImageCache, importer.LabelPartOf: importer.PartOf},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "PersistentVolumeClaim", Name: entry.Name, UID: entry.UID,
			}},
		},
		Data:      map[string]string{recordDigestKey: digest},
		Immutable: ptr.To(true),
	}
	cm.Annotations = map[string]string{objmac.Annotation: p.d.CacheRecords.Sum(recordFields(cm.Namespace, cm.Name, entry.UID), cm.Data)}
	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		// AlreadyExists: another writer came first; the next look decides.
		return fmt.Errorf("create image cache record %s/%s: %w", entry.Namespace, entry.Name, err)
	}
	logctx.From(ctx).InfoContext(ctx, "image cache entry recorded", "pvc", entry.Namespace+"/"+entry.Name, "sha256", digest)
	return nil
}

// deleteRecord deletes the record of the evicted entry (the GC would, as
// its owner is gone; a cluster's GC may lag, and an entry re-created under
// the name never reads it: its UID differs).
func (p *podImporter) deleteRecord(ctx context.Context, entry *corev1.PersistentVolumeClaim) error {
	err := p.d.Kube.CoreV1().ConfigMaps(entry.Namespace).Delete(ctx, entry.Name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete image cache record %s/%s: %w", entry.Namespace, entry.Name, err)
	}
	return nil
}

// entry is the cache entry ns/name, from the cache or else the apiserver;
// nil when absent or being deleted.
func (p *podImporter) entry(ctx context.Context, ns, name string) (*corev1.PersistentVolumeClaim, error) {
	pvc, err := p.d.Claims.Claim(ns, name)
	if err == nil && pvc == nil {
		pvc, err = p.liveEntry(ctx, ns, name)
	}
	if err != nil || pvc == nil || pvc.DeletionTimestamp != nil {
		return nil, err
	}
	return pvc, nil
}

// entryFlags is what an import pod of the slot's entry ns/name is told
// about the entry: the recorded digest, or to refill it, or neither (the
// entry is shared with the import pods using it; the copy is checked when
// the pod ends, [podImporter.checkCopy]). refill is set after a copy that
// failed its check; created, when this insert created the entry (empty:
// whichever of its pods locks it first downloads).
func (p *podImporter) entryFlags(ctx context.Context, ns, name string, created, refill bool) (digest string, _ bool, err error) {
	if !VerifyCacheEntries || (created && !refill) || (!PassRecordedDigest && !refill) {
		return "", false, nil
	}
	entry, err := p.entry(ctx, ns, name)
	if err != nil || entry == nil {
		return "", true, err
	}
	if digest, err = p.recordedDigest(ctx, entry); err != nil || digest != "" {
		return digest, false, err
	}
	if refill {
		return "", true, nil
	}
	used, err := p.entryUsed(ctx, ns, name, "", false)
	return "", !used, err
}

// entryUsed reports, on a live list, whether an import pod of ns other
// than except mounts the entry name and is not being deleted; with
// filling, only one that has not ended or that reported a download into
// the entry (whose record is being written).
func (p *podImporter) entryUsed(ctx context.Context, ns, name, except string, filling bool) (bool, error) {
	pods, err := p.d.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: importer.PodSelector("").String()})
	if err != nil {
		return false, fmt.Errorf("list import pods of %s: %w", ns, err)
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Name == except || pod.DeletionTimestamp != nil || !mounts(pod, name) {
			continue
		}
		if !filling || (pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed) {
			return true, nil
		}
		if res, ok := download.ParseImportResult(importer.TerminationMessage(pod)); ok && pod.Status.Phase == corev1.PodSucceeded && !res.FromCache {
			return true, nil
		}
	}
	return false, nil
}

// mounts reports whether pod mounts the PVC claim.
func mounts(pod *corev1.Pod, claim string) bool {
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
			return true
		}
	}
	return false
}

// checkCopy decides a succeeded import pod of an insert through the cache
// (st is its status): a download into the entry is recorded; a copy
// stands only when its digest is the entry's record. A copy without one
// waits while a download's record may come, else the pod is deleted and
// the insert imports again with --cache-refill.
func (p *podImporter) checkCopy(ctx context.Context, ns, entryName string, pod *corev1.Pod, st importer.Status) (importer.Status, error) {
	res, _ := download.ParseImportResult(importer.TerminationMessage(pod))
	entry, err := p.entry(ctx, ns, entryName)
	if err != nil {
		return importer.Status{}, err
	}
	if !res.FromCache && res.SHA256 != "" {
		if entry == nil {
			return st, nil // downloaded, into an entry evicted since
		}
		return st, p.record(ctx, entry, res.SHA256)
	}
	if !VerifyCacheEntries {
		return st, nil
	}
	recorded := ""
	if entry != nil {
		if recorded, err = p.recordedDigest(ctx, entry); err != nil {
			return importer.Status{}, err
		}
	}
	if recorded != "" && recorded == res.SHA256 {
		return st, nil
	}
	if recorded == "" {
		filling, err := p.entryUsed(ctx, ns, entryName, pod.Name, true)
		if err != nil || filling {
			return importer.Status{State: importer.Waiting}, err
		}
	}
	logctx.From(ctx).WarnContext(ctx, "copy from the image cache does not match the entry's record: importing again",
		"pod", ns+"/"+pod.Name, "sha256", res.SHA256, "recorded", recorded, "pvc", entryName)
	p.refills.add(pod.Namespace + "/" + pod.Name)
	if err := importer.DeletePod(ctx, p.d.Kube, pod); err != nil {
		return importer.Status{}, err
	}
	return importer.Status{State: importer.Waiting}, nil
}

// refillSet holds the import pods (namespace/name) whose copy failed its
// check: the pod re-created for the insert refills the entry.
type refillSet struct {
	mu   sync.Mutex
	pods map[string]bool
}

func (s *refillSet) add(pod string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pods == nil {
		s.pods = map[string]bool{}
	}
	s.pods[pod] = true
}

// take reports whether pod is in the set and removes it.
func (s *refillSet) take(pod string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	had := s.pods[pod]
	delete(s.pods, pod)
	return had
}
