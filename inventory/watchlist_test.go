package inventory

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
)

// recordedRequests records the query of every request per resource.
type recordedRequests struct {
	mu   sync.Mutex
	byRe map[string][]string // resource -> raw queries, in order
}

func (r *recordedRequests) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		parts := strings.Split(req.URL.Path, "/")
		r.mu.Lock()
		r.byRe[parts[len(parts)-1]] = append(r.byRe[parts[len(parts)-1]], req.URL.RawQuery)
		r.mu.Unlock()
		return next.RoundTrip(req)
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestStartStreamsLists checks on a real kube-apiserver (1.37, which serves
// streaming lists) that the inventory's informers sync through WatchList:
// each resource's first request is a watch with sendInitialEvents, and none
// is a plain LIST (which would page every object through one response).
func TestStartStreamsLists(t *testing.T) {
	if testing.Short() {
		t.Skip("needs kube-apiserver")
	}
	c := testcluster.ForTest(t, crds.Stock)
	rec := &recordedRequests{byRe: map[string][]string{}}
	cfg := rest.CopyConfig(c.Bridge)
	cfg.Wrap(rec.wrap)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Start(t.Context(), dyn, kube, nil); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, res := range []string{"virtualmachines", "virtualmachineinstances", "persistentvolumeclaims"} {
		t.Run(res, func(t *testing.T) {
			qs := rec.byRe[res]
			if len(qs) == 0 {
				t.Fatalf("no request for %s", res)
			}
			if !strings.Contains(qs[0], "watch=true") || !strings.Contains(qs[0], "sendInitialEvents=true") {
				t.Errorf("first request for %s: %q, want a streaming list (watch=true&sendInitialEvents=true)", res, qs[0])
			}
			for _, q := range qs {
				if !strings.Contains(q, "watch=true") {
					t.Errorf("plain LIST of %s: %q", res, q)
				}
			}
		})
	}
}
