package reliability

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/harness/bridgeproc"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Issue 37's attack 3 on the real binary: 60 ConfigMaps of 859 KiB with
// the trust labels took a replica from 44 to 125 MB.
const (
	trustFloodConfigMaps = 60
	trustFloodBytes      = 859 << 10
	// trustFloodRSSBound is how much the planted ConfigMaps may grow the
	// bridge at its peak (whole, they are 50 MB; held whole they took a
	// replica from 44 to 125 MB). The peak includes the decode garbage the
	// GC has not yet collected, which rides on the GC's heap target and so
	// on the bridge's baseline heap: clean-clone CI at load measured 17 MB
	// once the event, console and IPMI parts joined (16 MB before).
	trustFloodRSSBound = 24 << 20
)

// TestTrustConfigMapFlood: a namespace user with no Redfish account
// creates 60 ConfigMaps of 859 KiB carrying the bridge's trust labels and
// an owner reference with the VM's UID; the bridge has seen them all (its
// own trust write returns once its cache shows it, after them on the one
// watch) and its RSS grew by at most trustFloodRSSBound; an authenticated
// client is answered and the slot still verifies certificates.
func TestTrustConfigMapFlood(t *testing.T) {
	ctx := t.Context()
	binary := buildBridge(t)
	cluster, a := clusterWithAdmin(t)
	if err := cluster.CreateNamespace(ctx, demo.VMNamespace); err != nil {
		t.Fatal(err)
	}
	if err := demo.CreateSampleVMs(ctx, dynamic.NewForConfigOrDie(cluster.Admin), demo.VMNamespace, 1); err != nil {
		t.Fatal(err)
	}
	key := system.Key{Namespace: demo.VMNamespace, Name: demo.SampleVMNames(1)[0]}
	vm, err := dynamic.NewForConfigOrDie(cluster.Admin).Resource(kubevirt.VirtualMachines).Namespace(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sys := "/redfish/v1/Systems/" + key.ID()
	addr := freeAddr(t)
	p := startBridgeWith(t, cluster, bridgeproc.Options{Bin: binary(), Namespaces: []string{demo.VMNamespace}, Listen: addr}, a, sys).Proc
	c := newClient(t, "http://"+addr, "127.0.0.1")
	cms := kubernetes.NewForConfigOrDie(cluster.Admin).CoreV1().ConfigMaps(demo.VMNamespace)
	filler := strings.Repeat("f", trustFloodBytes)
	before := rss(t, p)
	peak := sampleRSS(t, p, func() {
		for i := range trustFloodConfigMaps {
			cm := &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{
					Name: fmt.Sprintf("planted-%d-tls", i), Namespace: key.Namespace,
					Labels: map[string]string{media.LabelComponent: media.ComponentTrust, media.LabelPartOf: media.PartOf, media.LabelSlot: media.DefaultSlot},
					OwnerReferences: []metav1.OwnerReference{{
						APIVersion: kubevirt.APIVersion, Kind: kubevirt.Kind, Name: key.Name, UID: vm.GetUID(),
					}},
				},
				Data: map[string]string{"verifyCertificate": "false", "certificate-1": filler},
			}
			if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		// Returns once the bridge's cache shows the write: after the
		// planted ConfigMaps on the same watch.
		slot := sys + "/VirtualMedia/" + media.DefaultSlot
		if r := c.do(ctx, t, http.MethodPatch, slot, a, `{"VerifyCertificate": true}`); r.status != http.StatusOK && r.status != http.StatusNoContent {
			t.Fatalf("PATCH %s: %d %s", slot, r.status, r.body)
		}
	})
	t.Logf("RELIABILITY trust ConfigMap flood: %d ConfigMaps of %d KiB with the trust labels: RSS %d MB -> peak %d MB, after %d MB",
		trustFloodConfigMaps, trustFloodBytes>>10, before>>20, peak>>20, rss(t, p)>>20)
	if peak > chartMemoryLimit {
		t.Errorf("peak RSS %d MB, over the chart's limit %d MB", peak>>20, chartMemoryLimit>>20)
	}
	if grew := peak - before; grew > trustFloodRSSBound {
		t.Errorf("the planted ConfigMaps grew the bridge by %d MB, bound %d MB", grew>>20, trustFloodRSSBound>>20)
	}
	if r := c.do(ctx, t, http.MethodGet, sys, a, ""); r.status != http.StatusOK {
		t.Errorf("after the flood: GET %s %d, want 200", sys, r.status)
	}
}
