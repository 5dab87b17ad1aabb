package backend_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/crypto/bcrypt"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/backend"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/eventdelivery"
	"github.com/redfish-bridge/redfish-bridge/eventsub"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/inventory"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/power"
	"github.com/redfish-bridge/redfish-bridge/redfish"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// stackNS is the namespace of a stack's VMs.
const stackNS = "vms"

// stackObjectSecret is the secret a stack's bridge signs its objects with.
var stackObjectSecret = []byte("stack object secret, 32 bytes ok")

// stack is the Redfish service over the backend on a real apiserver, as
// the bridge builds it, with one sample VM (vm-0) in stackNS.
type stack struct {
	h     http.Handler
	w     *apply.Client
	inv   *inventory.Inventory
	media *media.Service
	be    *backend.Backend
	admin dynamic.Interface
	// adminKube is the admin's typed client.
	adminKube kubernetes.Interface
	key       system.Key
	uri       string
	// requests counts the bridge's apiserver requests other than watches.
	requests *atomic.Int64
}

// countRequests counts the requests of the client it wraps, watches aside
// (an informer's one long request).
type countRequests struct {
	next http.RoundTripper
	n    *atomic.Int64
}

func (c countRequests) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Query().Get("watch") != "true" {
		c.n.Add(1)
	}
	return c.next.RoundTrip(req)
}

// newStack starts a cluster of variant v and the stack on it; the Writer
// reads through wrap(inventory) (wrap may be nil). It logs warnings to the
// test's output.
func newStack(t testing.TB, v crds.Variant, wrap func(*inventory.Inventory) apply.Cache) *stack {
	t.Helper()
	return newStackLog(t, v, wrap, slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})))
}

// newStackLog is [newStack] logging to log.
func newStackLog(t testing.TB, v crds.Variant, wrap func(*inventory.Inventory) apply.Cache, log *slog.Logger) *stack {
	t.Helper()
	ctx := t.Context()
	c := testcluster.ForTest(t, v)
	if err := c.CreateNamespace(ctx, stackNS); err != nil {
		t.Fatal(err)
	}
	admin := dynamic.NewForConfigOrDie(c.Admin)
	if err := demo.CreateSampleVMs(ctx, admin, stackNS, 1); err != nil {
		t.Fatal(err)
	}
	requests := &atomic.Int64{}
	cfg := rest.CopyConfig(c.Bridge)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countRequests{next: rt, n: requests} })
	bridge := dynamic.NewForConfigOrDie(cfg)
	kube := kubernetes.NewForConfigOrDie(cfg)
	mode, err := apply.DetectMode(ctx, bridge)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Start(ctx, bridge, kube, []string{stackNS})
	if err != nil {
		t.Fatal(err)
	}
	var cache apply.Cache = inv
	if wrap != nil {
		cache = wrap(inv)
	}
	trust, err := media.StartTrustCache(ctx, kube, []string{stackNS}, stackObjectSecret)
	if err != nil {
		t.Fatal(err)
	}
	w := apply.New(bridge, cache, mode, apply.Options{})
	ms := media.NewService(w, kube)
	ms.SetTrustCache(trust)
	ms.SetObjectSecret(stackObjectSecret)
	be := backend.New(inv, w, ms, power.New(w, bridge, nil), nil)
	hash, err := bcrypt.GenerateFromPassword([]byte("secret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	authn, err := auth.New(auth.Config{
		Users:       auth.StaticUsers{"ironic": {Name: "ironic", PasswordHash: hash, Scope: auth.Scope{Namespaces: []string{stackNS}}}},
		Revocations: &testutil.MemoryRevocations{}, Key: []byte("0123456789abcdef0123456789abcdef"),
	})
	if err != nil {
		t.Fatal(err)
	}
	// The subscriptions are read from a watch, as every replica reads them
	// (the watch as the administrator: the stack keeps them in its own
	// namespace, where the chart grants the bridge nothing).
	subs := eventsub.NewStore(kube, stackNS, "events", eventsub.Limits{})
	watched, err := eventsub.Watch(ctx, kubernetes.NewForConfigOrDie(c.Admin), stackNS, "events")
	if err != nil {
		t.Fatal(err)
	}
	subs.ReadFrom(watched)
	h, err := redfish.New(redfish.Config{ServiceUUID: "8a3d1f0e-1111-4222-8333-444455556666", Version: "test", Logger: log}, be.Backends(authn,
		backend.NewEvents(subs, eventdelivery.Config{})))
	if err != nil {
		t.Fatal(err)
	}
	key := system.Key{Namespace: stackNS, Name: "vm-0"}
	return &stack{h: h, w: w, inv: inv, media: ms, be: be, admin: admin, adminKube: kubernetes.NewForConfigOrDie(c.Admin), key: key,
		uri: "/redfish/v1/Systems/" + key.ID(), requests: requests}
}

// do sends one request as the stack's user (body as JSON when not empty,
// If-Match when not empty).
func (s *stack) do(t *testing.T, method, uri, body, ifMatch string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), method, uri, strings.NewReader(body))
	req.SetBasicAuth("ironic", "secret")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if ifMatch != "" {
		req.Header.Set("If-Match", ifMatch)
	}
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, req)
	return rec
}
