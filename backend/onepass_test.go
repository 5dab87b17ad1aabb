package backend_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/inventory"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// countingCache counts the VM reads the Writer makes of the cache.
type countingCache struct {
	apply.Cache
	vmReads atomic.Int64
}

func (c *countingCache) VM(key system.Key) (*unstructured.Unstructured, error) {
	c.vmReads.Add(1)
	return c.Cache.VM(key)
}

// maxReadsPerBootPatch is the budget of cache reads of one PATCH of Boot
// with If-Match: the read If-Match is checked on (redfish/), the read the
// write decides on (apply/, preconditioned on it) and the read that shows
// the client its own write (backend's wait for the cache).
const maxReadsPerBootPatch = 3

// TestOnePassBootPatch: a PATCH of Boot with If-Match reads the VM from the
// cache at most maxReadsPerBootPatch times (4 before If-Match was checked
// once), a stale If-Match is refused (412) with nothing written, and the
// change reads back at once; on both CRD variants.
func TestOnePassBootPatch(t *testing.T) {
	for _, v := range crds.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			testOnePassBootPatch(t, v)
		})
	}
}

func testOnePassBootPatch(t *testing.T, v crds.Variant) {
	var cache *countingCache
	s := newStack(t, v, func(inv *inventory.Inventory) apply.Cache {
		cache = &countingCache{Cache: inv}
		return cache
	})
	w, uri := s.w, s.uri
	do := func(method, body, ifMatch string) *httptest.ResponseRecorder {
		t.Helper()
		return s.do(t, method, uri, body, ifMatch)
	}
	get := do(http.MethodGet, "", "")
	if get.Code != http.StatusOK || get.Header().Get("ETag") == "" {
		t.Fatalf("GET %s: %d, ETag %q: %s", uri, get.Code, get.Header().Get("ETag"), get.Body)
	}
	etag := get.Header().Get("ETag")

	before := cache.vmReads.Load()
	stale := do(http.MethodPatch, `{"Boot":{"BootSourceOverrideTarget":"Hdd","BootSourceOverrideEnabled":"Continuous"}}`, `W/"0000000000000000"`)
	if stale.Code != http.StatusPreconditionFailed {
		t.Fatalf("PATCH with a stale If-Match: %d, want 412: %s", stale.Code, stale.Body)
	}
	if n := cache.vmReads.Load() - before; n != 1 {
		t.Errorf("a refused PATCH read the VM %d times, want once (the If-Match check)", n)
	}
	if applies := w.Stats()[apply.ManagerBoot].Applies; applies != 0 {
		t.Fatalf("a refused PATCH applied %d times", applies)
	}

	before = cache.vmReads.Load()
	patch := do(http.MethodPatch, `{"Boot":{"BootSourceOverrideTarget":"Hdd","BootSourceOverrideEnabled":"Continuous"}}`, etag)
	if patch.Code != http.StatusNoContent {
		t.Fatalf("PATCH with the current If-Match: %d: %s", patch.Code, patch.Body)
	}
	reads := cache.vmReads.Load() - before
	t.Logf("cache reads of the VM for one PATCH of Boot with If-Match: %d", reads)
	if reads > maxReadsPerBootPatch {
		t.Errorf("one PATCH of Boot read the VM %d times from the cache, budget %d", reads, maxReadsPerBootPatch)
	}
	after := do(http.MethodGet, "", "")
	if !strings.Contains(after.Body.String(), `"BootSourceOverrideTarget":"Hdd"`) || after.Header().Get("ETag") == etag {
		t.Errorf("GET after the PATCH: ETag %s (was %s), body %s", after.Header().Get("ETag"), etag, after.Body)
	}
}
