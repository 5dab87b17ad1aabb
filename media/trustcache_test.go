package media

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// TestTrustCacheAwaitWakesOnChange: a trust write's wait for the cache
// ends when the informer's handler reports the write, not on a timer:
// with the bound an hour away, the wait for resourceVersion 2 ends once
// the ConfigMap is updated to it.
func TestTrustCacheAwaitWakesOnChange(t *testing.T) {
	defer func(w time.Duration) { trustCacheWait = w }(trustCacheWait)
	trustCacheWait = time.Hour // only a change can end the wait
	kube := kubefake.NewClientset()
	c, err := StartTrustCache(t.Context(), kube, []string{"ns"})
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
