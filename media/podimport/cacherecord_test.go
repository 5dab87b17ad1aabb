package podimport

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/redfish-bridge/redfish-bridge/internal/objmac"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
)

// TestCacheRecordBinding: a record is honoured only for the entry it was
// written for, under the bridge's key: a record copied to an entry
// re-created under the name (another UID), one whose digest was edited,
// and one signed under another key read as none; record replaces them.
func TestCacheRecordBinding(t *testing.T) {
	const digest = "5f4640d9feff664e6c236596d4b9f1d3a3a1dcbd0c1cd0d5a5bd49aa7f3bcdc2"
	ctx := t.Context()
	entry := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "redfish-image-k", Namespace: "ns", UID: "uid-1"}}
	kube := fake.NewClientset()
	p := &podImporter{d: importer.Deps{Kube: kube, CacheRecords: objmac.Derive([]byte("secret"), importer.CacheRecordPurpose)}}
	if err := p.record(ctx, entry, digest); err != nil {
		t.Fatal(err)
	}
	if got, err := p.recordedDigest(ctx, entry); err != nil || got != digest {
		t.Fatalf("recordedDigest = %q, %v; want %q", got, err, digest)
	}
	cm, err := kube.CoreV1().ConfigMaps("ns").Get(ctx, entry.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Immutable == nil || !*cm.Immutable || len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].UID != entry.UID {
		t.Errorf("record: immutable %v, owners %v; want immutable, owned by the entry", cm.Immutable, cm.OwnerReferences)
	}

	recreated := entry.DeepCopy()
	recreated.UID = "uid-2"
	otherKey := &podImporter{d: importer.Deps{Kube: kube, CacheRecords: objmac.Derive([]byte("other"), importer.CacheRecordPurpose)}}
	for name, read := range map[string]func() (string, error){
		"entry re-created": func() (string, error) { return p.recordedDigest(ctx, recreated) },
		"another key":      func() (string, error) { return otherKey.recordedDigest(ctx, entry) },
	} {
		if got, err := read(); err != nil || got != "" {
			t.Errorf("%s: recordedDigest = %q, %v; want none", name, got, err)
		}
	}

	edited := cm.DeepCopy()
	edited.Data[recordDigestKey] = "0000"
	if _, err := kube.CoreV1().ConfigMaps("ns").Update(ctx, edited, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err) // the fake does not enforce Immutable
	}
	if got, err := p.recordedDigest(ctx, entry); err != nil || got != "" {
		t.Errorf("edited digest: recordedDigest = %q, %v; want none", got, err)
	}
	if err := p.record(ctx, entry, digest); err != nil {
		t.Fatal(err)
	}
	if got, err := p.recordedDigest(ctx, entry); err != nil || got != digest {
		t.Errorf("after record over the edited one: %q, %v; want %q", got, err, digest)
	}
}
