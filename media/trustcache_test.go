package media

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/internal/objmac"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// TestTrustCacheAwaitWakesOnChange: a trust write's wait for the cache
// ends when the informer's handler reports the write, not on a timer:
// with the bound an hour away, the wait for resourceVersion 2 ends once
// the ConfigMap is updated to it.
func TestTrustCacheAwaitWakesOnChange(t *testing.T) {
	defer func(w time.Duration) { trustCacheWait = w }(trustCacheWait)
	trustCacheWait = time.Hour // only a change can end the wait
	kube := kubefake.NewClientset()
	c, err := StartTrustCache(t.Context(), kube, []string{"ns"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Namespace: "ns", Name: "vm1-media-cd0-tls", ResourceVersion: "1",
		Labels: map[string]string{LabelComponent: ComponentTrust, LabelPartOf: PartOf},
	}}
	if _, err := kube.CoreV1().ConfigMaps("ns").Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the cache holds resourceVersion 1", time.Minute, 10*time.Millisecond, func(context.Context) error {
		got, err := c.get("ns", cm.Name)
		if err == nil && got == nil {
			return context.DeadlineExceeded // not yet
		}
		return err
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.await(t.Context(), "ns", cm.Name, "2")
	}()
	cm.ResourceVersion = "2"
	cm.Data = map[string]string{"a.pem": "x"}
	if _, err := kube.CoreV1().ConfigMaps("ns").Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("await did not end a minute after the ConfigMap reached resourceVersion 2 (no wake-up on the change)")
	}
	got, err := c.get("ns", cm.Name)
	if err != nil || got == nil || got.ResourceVersion != "2" {
		t.Fatalf("after await the cache holds %v (%v), want resourceVersion 2", got, err)
	}
}

// TestTrimTrust: the cache holds a trust ConfigMap's data and MAC only
// when the MAC verifies for the VM its owner reference names; of a
// planted one (the bridge's labels, the VM's UID, ~1 MiB of data and
// labels, annotations and managedFields) it holds the identity alone.
func TestTrimTrust(t *testing.T) {
	secret := []byte("trim trust test secret, 32 bytes")
	k := trustKey(secret)
	ref := metav1.OwnerReference{APIVersion: kubevirt.APIVersion, Kind: kubevirt.Kind, Name: "vm1", UID: "uid-1"}
	base := func() *corev1.ConfigMap {
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: "ns", Name: "vm1-media-cd0-tls", UID: "cm-uid", ResourceVersion: "7",
				Labels:          map[string]string{LabelComponent: ComponentTrust, LabelPartOf: PartOf, "big": strings.Repeat("x", 63)},
				Annotations:     map[string]string{"note": strings.Repeat("n", 100<<10)},
				OwnerReferences: []metav1.OwnerReference{{Kind: "Other", UID: "uid-1"}, ref},
				ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
			},
			Data: map[string]string{verifyKey: "false", certPrefix + "1": strings.Repeat("p", 900<<10)},
		}
	}
	identity := metav1.ObjectMeta{
		Namespace: "ns", Name: "vm1-media-cd0-tls", UID: "cm-uid", ResourceVersion: "7",
		Labels: map[string]string{LabelComponent: ComponentTrust, LabelPartOf: PartOf},
	}
	signedCM := base()
	signTrust(k, signedCM, ref.UID)
	signedMeta := identity
	signedMeta.OwnerReferences = []metav1.OwnerReference{ref}
	signedMeta.Annotations = map[string]string{objmac.Annotation: signedCM.Annotations[objmac.Annotation]}
	otherVM := base()
	signTrust(k, otherVM, "uid-2")
	for _, tt := range []struct {
		name string
		in   *corev1.ConfigMap
		key  objmac.Key
		want *corev1.ConfigMap
	}{
		{"signed", signedCM, k, &corev1.ConfigMap{ObjectMeta: signedMeta, Data: base().Data}},
		{"planted", base(), k, &corev1.ConfigMap{ObjectMeta: identity}},
		{"signed for another VM", otherVM, k, &corev1.ConfigMap{ObjectMeta: identity}},
		{"signed, no key", signedCM, objmac.Key{}, &corev1.ConfigMap{ObjectMeta: identity}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, trimTrust(tt.key, tt.in)); diff != "" {
				t.Errorf("trimTrust (-want +got):\n%s", diff)
			}
		})
	}
}
