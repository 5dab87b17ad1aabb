package apply

import (
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/inventory"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// vmGETs counts GETs of single VirtualMachines sent through it.
type vmGETs struct {
	next http.RoundTripper
	n    atomic.Int64
}

func (c *vmGETs) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/virtualmachines/") {
		c.n.Add(1)
	}
	return c.next.RoundTrip(req)
}

// missEnv is a stock cluster's env with the bridge's dynamic client, its
// single-VM GETs counted, and an inventory of the env's namespace.
func missEnv(t *testing.T) (*env, *vmGETs, dynamic.Interface, *inventory.Inventory) {
	t.Helper()
	c := testcluster.ForTest(t, crds.Stock)
	e := newEnv(t, c)
	counter := &vmGETs{}
	cfg := rest.CopyConfig(c.Bridge)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { counter.next = rt; return counter })
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Start(t.Context(), dyn, kube, []string{e.ns})
	if err != nil {
		t.Fatal(err)
	}
	return e, counter, dyn, inv
}

// TestReadMissNoAPIServer is the attack of docs/reliability.md row 9: every cache
// miss used to be a live GET, so a caller could load the apiserver with
// reads of names that do not exist and, scoped by a label selector, tell
// by the time of a 404 which names exist outside its scope. Misses may
// cost at most the miss budget (missBurst, then missQPS a second).
func TestReadMissNoAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("needs kube-apiserver")
	}
	e, counter, dyn, inv := missEnv(t)
	w := New(dyn, inv, e.mode, Options{})
	key := e.createVM(t, "exists")
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, err := w.Read(t.Context(), key); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the created VM never reached the cache: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second * missBurst / missQPS) // the budget refilled
	before, start := counter.n.Load(), time.Now()
	const misses = 200
	for i := range misses {
		_, err := w.Read(t.Context(), system.Key{Namespace: e.ns, Name: "absent-" + strconv.Itoa(i)})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("read of an absent VM: %v, want NotFound", err)
		}
	}
	if _, err := w.Read(t.Context(), key); err != nil {
		t.Fatalf("read of the existing VM: %v", err)
	}
	budget := int64(missBurst + missQPS*time.Since(start).Seconds() + 1)
	if n := counter.n.Load() - before; n > budget {
		t.Errorf("%d cache misses sent %d GETs to the apiserver, budget %d", misses, n, budget)
	}
}

// hidingCache is a cache that does not have the VM hidden yet: its watch
// event is late.
type hidingCache struct {
	Cache
	hidden system.Key
}

func (h hidingCache) VM(key system.Key) (*unstructured.Unstructured, error) {
	if key == h.hidden {
		return nil, apierrors.NewNotFound(kubevirt.VirtualMachines.GroupResource(), key.Name)
	}
	return h.Cache.VM(key)
}

// TestReadMissFoundStays: a VM a live read found while the cache did not
// have it yet keeps being found while the cache lags, even after reads of
// absent names spent the miss budget (the CI failure: a System created a
// moment ago answered 200, then 404 to the next GET, on a loaded machine
// whose watch events were late). Absent names stay within the budget.
func TestReadMissFoundStays(t *testing.T) {
	if testing.Short() {
		t.Skip("needs kube-apiserver")
	}
	e, counter, dyn, inv := missEnv(t)
	key := e.createVM(t, "late")
	w := New(dyn, hidingCache{Cache: inv, hidden: key}, e.mode, Options{})
	if _, err := w.Read(t.Context(), key); err != nil {
		t.Fatalf("first read of a VM the cache does not have yet: %v", err)
	}
	before, start := counter.n.Load(), time.Now()
	const misses = 100
	for i := range misses {
		_, err := w.Read(t.Context(), system.Key{Namespace: e.ns, Name: "absent-" + strconv.Itoa(i)})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("read of an absent VM: %v, want NotFound", err)
		}
	}
	budget := int64(missBurst + missQPS*time.Since(start).Seconds() + 1)
	if n := counter.n.Load() - before; n > budget {
		t.Errorf("%d misses of absent names sent %d GETs, budget %d", misses, n, budget)
	}
	for i := range 3 {
		if _, err := w.Read(t.Context(), key); err != nil {
			t.Fatalf("read %d of the VM found live, budget spent: %v (it answered a moment ago)", i+2, err)
		}
	}
}
