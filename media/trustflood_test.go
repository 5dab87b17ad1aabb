package media

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// plantedTrustBytes is the data of one planted ConfigMap: issue 37's
// 859 KiB (a ConfigMap holds at most 1 MiB).
const plantedTrustBytes = 859 << 10

// TestTrustCacheFlood is issue 37's attack 3 against a real apiserver: a
// namespace user without a Redfish account creates ConfigMaps carrying
// the bridge's trust labels and an owner reference with a VM's UID, 859
// KiB each, to fill every replica's trust cache. The cache holds their
// identity alone (at most 1 KiB each, counted from the objects it holds);
// the heap the cache adds over an informer of an empty namespace (the
// list's decode buffers included) stays under a quarter of the planted
// data (~17 MiB in all).
func TestTrustCacheFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a test cluster")
	}
	const planted = 20
	c := testcluster.ForTest(t, crds.Stock)
	ctx := t.Context()
	const ns = "flood"
	if err := c.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	admin := kubernetes.NewForConfigOrDie(c.Admin)
	secret := []byte("trust flood test secret 32 bytes")
	filler := strings.Repeat("f", plantedTrustBytes)
	for i := range planted {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				Name: fmt.Sprintf("vm%d-media-cd0-tls", i), Namespace: ns,
				Labels: map[string]string{LabelComponent: ComponentTrust, LabelPartOf: PartOf, LabelSlot: "cd0"},
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: kubevirt.APIVersion, Kind: kubevirt.Kind, Name: fmt.Sprintf("vm%d", i),
					UID: "00000000-0000-0000-0000-000000000001",
				}},
			},
			Data: map[string]string{verifyKey: "false", certPrefix + "1": filler},
		}
		if _, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	kube := kubernetes.NewForConfigOrDie(c.Bridge)
	empty, err := StartTrustCache(ctx, kube, []string{"no-such-namespace"}, secret)
	if err != nil {
		t.Fatal(err)
	}
	before := heapAfterGC()
	cache, err := StartTrustCache(ctx, kube, []string{ns}, secret)
	if err != nil {
		t.Fatal(err)
	}
	grown := int64(heapAfterGC()) - int64(before)
	held, n := 0, 0
	for _, obj := range cache.informers[ns].GetStore().List() {
		cm := obj.(*corev1.ConfigMap)
		held += cm.Size()
		n++
		if len(cm.Data) != 0 {
			t.Errorf("the cache holds the data of planted ConfigMap %s (%d keys)", cm.Name, len(cm.Data))
		}
	}
	t.Logf("%d planted ConfigMaps of %d KiB: the cache holds %d objects, %d bytes encoded; heap grew %d KiB", planted, plantedTrustBytes>>10, n, held, grown>>10)
	if n != planted {
		t.Fatalf("the cache holds %d objects, want the %d planted", n, planted)
	}
	if held > planted<<10 {
		t.Errorf("the cache holds %d bytes of %d planted ConfigMaps, want at most 1 KiB each", held, planted)
	}
	if grown > planted*plantedTrustBytes/4 {
		t.Errorf("the trust cache's heap grew %d KiB with %d planted ConfigMaps of %d KiB, want under a quarter of their data", grown>>10, planted, plantedTrustBytes>>10)
	}
	runtime.KeepAlive(empty)
	runtime.KeepAlive(cache)
}

// heapAfterGC is the live heap after a full collection.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
