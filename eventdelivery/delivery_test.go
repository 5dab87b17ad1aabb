package eventdelivery

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/eventsub"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// testPolicy allows the test receivers (loopback) and nothing else the
// default refuses.
var testPolicy = download.AddrPolicy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}

var users = auth.StaticUsers{
	"admin": {Name: "admin", Scope: auth.Scope{Namespaces: []string{auth.AllNamespaces}}},
	"alice": {Name: "alice", Scope: auth.Scope{Namespaces: []string{"team-a"}}},
	"bob":   {Name: "bob", Scope: auth.Scope{Namespaces: []string{"team-b"}}},
}

// vms knows every VM of the tests (no labels).
type vms struct{}

func (vms) VM(key system.Key) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetNamespace(key.Namespace)
	u.SetName(key.Name)
	return u, nil
}

// receiver is a destination recording what it receives.
type receiver struct {
	*httptest.Server
	got  chan map[string]any
	hdrs chan http.Header
}

// newReceiver answers every POST with status after handle (if set)
// returned.
func newReceiver(t *testing.T, status int, handle func(r *http.Request)) *receiver {
	t.Helper()
	rc := &receiver{got: make(chan map[string]any, 100), hdrs: make(chan http.Header, 100)}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		if handle != nil {
			handle(r)
		}
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		rc.got <- body
		rc.hdrs <- r.Header
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// next is the id of the next event the receiver gets.
func (rc *receiver) next(t *testing.T) string {
	t.Helper()
	select {
	case b := <-rc.got:
		return b["Events"].([]any)[0].(map[string]any)["EventId"].(string)
	case <-t.Context().Done():
		t.Fatal("no event received")
		return ""
	}
}

type testEnv struct {
	bus   *event.Bus
	store *eventsub.Store
	kube  *kubefake.Clientset
	// attempts receives every delivery attempt.
	attempts chan attempt
}

type attempt struct {
	sub, event string
	err        error
}

// newTestEnv is a bus and a store of subscriptions; start starts the
// delivery on them.
func newTestEnv() *testEnv {
	kube := kubefake.NewClientset()
	return &testEnv{bus: &event.Bus{}, kube: kube, store: eventsub.NewStore(kube, "bridge", "events", eventsub.Limits{}),
		attempts: make(chan attempt, 1000)}
}

// start runs the delivery until the test ends and returns once it
// listens: it has read the subscriptions made before, and delivers every
// event published from now on.
func (te *testEnv) start(t *testing.T, cfg Config) {
	t.Helper()
	if cfg.AddrPolicy.String() == "" {
		cfg.AddrPolicy = testPolicy
	}
	if cfg.RetryInterval == 0 {
		cfg.RetryInterval = time.Millisecond
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = time.Minute
	}
	cfg.Secret = "events"
	listening := make(chan struct{})
	d, err := New(cfg.WithDefaults(), Deps{Bus: te.bus, Kube: te.kube, Namespace: "bridge", Store: te.store, Users: users, VMs: vms{},
		Observe: func(sub string, e event.Event, err error, _ time.Duration) {
			te.attempts <- attempt{sub, e.ID, err}
		},
		Listening: func() { close(listening) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- d.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	})
	<-listening
}

// subscribe records a subscription of owner to dest.
func (te *testEnv) subscribe(t *testing.T, owner, dest string, edit func(*eventsub.Request)) eventsub.Subscription {
	t.Helper()
	r := eventsub.Request{Destination: dest, Context: owner + "-ctx", Headers: map[string]string{"Authorization": "Bearer " + owner}}
	if edit != nil {
		edit(&r)
	}
	s, err := eventsub.Validate(r, testPolicy)
	if err != nil {
		t.Fatal(err)
	}
	s.Owner = owner
	if s, err = te.store.Create(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	return s
}

func ev(id, ns, name string) event.Event {
	e := event.Event{ID: id, MessageID: "ResourceEvent.1.3.0.ResourcePowerStateChanged", ResourceType: "ComputerSystem",
		Time: time.Unix(1800000000, 0)}
	if ns != "" {
		e.System = system.Key{Namespace: ns, Name: name}
		e.Origin = "/redfish/v1/Systems/" + ns + "." + name
	}
	return e
}

// TestDeliversInOrderToTheOwnersScope: each subscription receives, in
// order, the events of the Systems its owner may read, with its Context
// and headers; an administrator's receives every one, an event of the
// service itself only it.
func TestDeliversInOrderToTheOwnersScope(t *testing.T) {
	te := newTestEnv()
	ra, rb, radm := newReceiver(t, 204, nil), newReceiver(t, 204, nil), newReceiver(t, 204, nil)
	te.subscribe(t, "alice", ra.URL, nil)
	te.subscribe(t, "bob", rb.URL, nil)
	te.subscribe(t, "admin", radm.URL, func(r *eventsub.Request) { r.RegistryPrefixes = []string{"ResourceEvent"} })
	te.start(t, Config{})
	for _, e := range []event.Event{ev("a1", "team-a", "vm1"), ev("b1", "team-b", "vm3"), ev("a2", "team-a", "vm1"), ev("svc", "", ""), ev("a3", "team-a", "vm2")} {
		te.bus.Publish(e)
	}
	var gotA, gotB, gotAdm []string
	for range 3 {
		gotA = append(gotA, ra.next(t))
	}
	gotB = append(gotB, rb.next(t))
	for range 5 {
		gotAdm = append(gotAdm, radm.next(t))
	}
	if diff := cmp.Diff([]string{"a1", "a2", "a3"}, gotA); diff != "" {
		t.Errorf("alice (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"b1"}, gotB); diff != "" {
		t.Errorf("bob (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a1", "b1", "a2", "svc", "a3"}, gotAdm); diff != "" {
		t.Errorf("admin (-want +got):\n%s", diff)
	}
	select {
	case b := <-ra.got:
		t.Errorf("alice received more: %v", b)
	case b := <-rb.got:
		t.Errorf("bob received more: %v", b)
	default:
	}
	if h := <-ra.hdrs; h.Get("Authorization") != "Bearer alice" {
		t.Errorf("alice's headers %v", h)
	}
}
