package bench

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestClientBases: with Bases set, requests are spread over every replica
// (none left out), each answered as from Base.
func TestClientBases(t *testing.T) {
	const replicas, requests = 3, 300
	var served [replicas]atomic.Int64
	bases := make([]string, replicas)
	for i := range replicas {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			served[i].Add(1)
			_, _ = w.Write([]byte(`{"PowerState":"On"}`))
		}))
		t.Cleanup(srv.Close)
		bases[i] = srv.URL
	}
	c := &Client{Base: "http://127.0.0.1:1", Bases: bases, HTTP: &http.Client{}}
	for range requests {
		var s systemBody
		if err := c.Do(t.Context(), OpGetSystem, http.MethodGet, systemPath("ns.vm"), nil, &s); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff("On", s.PowerState); diff != "" {
			t.Fatalf("PowerState (-want +got):\n%s", diff)
		}
	}
	var total int64
	for i := range served {
		n := served[i].Load()
		if n < requests/replicas/2 {
			t.Errorf("replica %d served %d of %d requests, want about a third", i, n, requests)
		}
		total += n
	}
	if total != requests {
		t.Errorf("replicas served %d requests, want %d (none to Base)", total, requests)
	}
}
