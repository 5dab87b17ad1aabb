package backend_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/crypto/bcrypt"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/backend"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/demo"
	"github.com/redfish-bridge/redfish-bridge/internal/testutil"
	"github.com/redfish-bridge/redfish-bridge/inventory"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/power"
	"github.com/redfish-bridge/redfish-bridge/redfish"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/system"
	"github.com/redfish-bridge/redfish-bridge/testcluster"
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
	ctx := t.Context()
	c := testcluster.ForTest(t, v)
	const ns = "vms"
	if err := c.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	admin := dynamic.NewForConfigOrDie(c.Admin)
	if err := demo.CreateSampleVMs(ctx, admin, ns, 1); err != nil {
		t.Fatal(err)
	}
	bridge := dynamic.NewForConfigOrDie(c.Bridge)
	kube := kubernetes.NewForConfigOrDie(c.Bridge)
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	mode, err := apply.DetectMode(ctx, bridge)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Start(ctx, bridge, kube, []string{ns})
	if err != nil {
		t.Fatal(err)
	}
	cache := &countingCache{Cache: inv}
	w := apply.New(bridge, cache, mode, apply.Options{})
	be := backend.New(inv, w, media.NewService(w, kube), power.New(w, bridge), nil)
	hash, err := bcrypt.GenerateFromPassword([]byte("secret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	authn, err := auth.New(auth.Config{
		Users:       auth.StaticUsers{"ironic": {Name: "ironic", PasswordHash: hash, Scope: auth.Scope{Namespaces: []string{ns}}}},
		Revocations: &testutil.MemoryRevocations{}, Key: []byte("0123456789abcdef0123456789abcdef"),
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err := redfish.New(redfish.Config{ServiceUUID: "8a3d1f0e-1111-4222-8333-444455556666", Version: "test", Logger: log}, be.Backends(authn))
	if err != nil {
		t.Fatal(err)
	}
	uri := "/redfish/v1/Systems/" + system.Key{Namespace: ns, Name: "vm-0"}.ID()
	do := func(method, body, ifMatch string) *httptest.ResponseRecorder {
		t.Helper()
		req := httptest.NewRequestWithContext(ctx, method, uri, strings.NewReader(body))
		req.SetBasicAuth("ironic", "secret")
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if ifMatch != "" {
			req.Header.Set("If-Match", ifMatch)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
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
