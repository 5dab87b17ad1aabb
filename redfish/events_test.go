package redfish

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/eventsub"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// fakeSubsPerUser is the fake's cap on one user's subscriptions.
const fakeSubsPerUser = 5

// fakePolicy is the fake's destination policy: the default one.
var fakePolicy = download.AddrPolicy{DenyLoopback: true}

func (f *fake) Subscribe(ctx context.Context, owner string, r eventsub.Request) (eventsub.Subscription, error) {
	s, err := eventsub.Validate(r, fakePolicy)
	if err != nil {
		return s, err
	}
	s.Owner = owner
	return f.subs.Create(ctx, s)
}

func (f *fake) Subscriptions(ctx context.Context) ([]eventsub.Subscription, error) {
	return f.subs.List(ctx)
}

func (f *fake) Patch(ctx context.Context, id string, p eventsub.Patch) (eventsub.Subscription, error) {
	return f.subs.Patch(ctx, id, p)
}

func (f *fake) Unsubscribe(ctx context.Context, id string) error { return f.subs.Delete(ctx, id) }

func (f *fake) SubmitTestEvent(_ context.Context, p auth.Principal, e event.Event, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.testEvents = append(f.testEvents, p.User+" "+e.ID)
	return nil
}

func (f *fake) Settings() EventSettings { return EventSettings{RetryAttempts: 3, RetryInterval: 30e9} }

const subscriptionBody = `{"Destination":"https://receiver.example/events","Protocol":"Redfish","Context":"ironic-node-1",
	"EventTypes":["Alert"],"HttpHeaders":[{"Authorization":"Bearer s3cr3t-t0ken"}]}`

// subscribe creates a subscription as user and returns its URI.
func (e *env) subscribe(t *testing.T, user string) string {
	t.Helper()
	rec := e.do(t, req{method: http.MethodPost, path: subscriptionsURI, user: user, body: subscriptionBody})
	if rec.Code != http.StatusCreated {
		t.Fatalf("create subscription as %s: %d %s", user, rec.Code, rec.Body)
	}
	return rec.Header().Get("Location")
}

// TestEventSubscriptionsCRUD: a subscription is created, read (its
// HttpHeaders never), listed and deleted.
func TestEventSubscriptionsCRUD(t *testing.T) {
	e := newEnv(t)
	svc := e.get(t, "alice", eventServiceURI)
	if svc["Subscriptions"].(map[string]any)["@odata.id"] != subscriptionsURI {
		t.Fatalf("EventService does not link its subscriptions: %v", svc)
	}
	uri := e.subscribe(t, "alice")
	got := e.get(t, "alice", uri)
	for k, want := range map[string]any{"Destination": "https://receiver.example/events", "Context": "ironic-node-1",
		"Protocol": "Redfish", "DeliveryRetryPolicy": "SuspendRetries", "VerifyCertificate": true} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v", k, got[k], want)
		}
	}
	raw, _ := json.Marshal(got)
	if strings.Contains(string(raw), "s3cr3t") || strings.Contains(e.do(t, req{path: subscriptionsURI + "?$expand=.", user: "alice"}).Body.String(), "s3cr3t") {
		t.Errorf("a GET shows the HttpHeaders: %s", raw)
	}
	if diff := cmp.Diff([]string{uri}, members(t, e.get(t, "alice", subscriptionsURI))); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	if rec := e.do(t, req{method: http.MethodDelete, path: uri, user: "alice"}); rec.Code != http.StatusNoContent {
		t.Fatalf("delete: %d %s", rec.Code, rec.Body)
	}
	if rec := e.do(t, req{path: uri, user: "alice"}); rec.Code != http.StatusNotFound {
		t.Fatalf("GET after delete: %d", rec.Code)
	}
}

// TestEventSubscriptionsTenancy: a user sees and deletes only its own
// subscriptions (another's is missing: 404), an Administrator every one.
func TestEventSubscriptionsTenancy(t *testing.T) {
	e := newEnv(t)
	alices, bobs := e.subscribe(t, "alice"), e.subscribe(t, "bob")
	if diff := cmp.Diff([]string{bobs}, members(t, e.get(t, "bob", subscriptionsURI))); diff != "" {
		t.Errorf("bob lists (-want +got):\n%s", diff)
	}
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		if rec := e.do(t, req{method: m, path: alices, user: "bob"}); rec.Code != http.StatusNotFound {
			t.Errorf("bob %s alice's subscription: %d, want 404", m, rec.Code)
		}
	}
	if got := members(t, e.get(t, "admin", subscriptionsURI)); len(got) != 2 {
		t.Errorf("admin lists %v, want both", got)
	}
	if rec := e.do(t, req{method: http.MethodDelete, path: alices, user: "admin"}); rec.Code != http.StatusNoContent {
		t.Errorf("admin deletes alice's: %d", rec.Code)
	}
}

// TestEventSubscriptionsRefused: malformed destinations and hostile
// filters and headers are refused with a 400 naming the property, and
// nothing is stored.
func TestEventSubscriptionsRefused(t *testing.T) {
	e := newEnv(t)
	many := make([]string, eventsub.MaxFilterEntries+1)
	for i := range many {
		many[i] = fmt.Sprintf("T%d", i)
	}
	manyJSON, _ := json.Marshal(many)
	for _, c := range []struct{ name, body, prop string }{
		{"no destination", `{"Protocol":"Redfish"}`, "Destination"},
		{"ftp", `{"Destination":"ftp://r.example/","Protocol":"Redfish"}`, "Destination"},
		{"no host", `{"Destination":"http:///events","Protocol":"Redfish"}`, "Destination"},
		{"credentials in URL", `{"Destination":"https://u:p@r.example/","Protocol":"Redfish"}`, "Destination"},
		{"metadata", `{"Destination":"http://169.254.169.254/latest/meta-data","Protocol":"Redfish"}`, "Destination"},
		{"metadata in IPv6", `{"Destination":"http://[::ffff:169.254.169.254]/","Protocol":"Redfish"}`, "Destination"},
		{"loopback", `{"Destination":"http://127.0.0.1:8443/redfish/v1","Protocol":"Redfish"}`, "Destination"},
		{"link-local", `{"Destination":"http://[fe80::1]/","Protocol":"Redfish"}`, "Destination"},
		{"control character", `{"Destination":"http://r.example/\u0000","Protocol":"Redfish"}`, "Destination"},
		{"huge", `{"Destination":"http://r.example/` + strings.Repeat("a", 3000) + `","Protocol":"Redfish"}`, "Destination"},
		{"SNMP", `{"Destination":"http://r.example/","Protocol":"SNMPv2c"}`, "Protocol"},
		{"metric reports", `{"Destination":"http://r.example/","Protocol":"Redfish","EventFormatType":"MetricReport"}`, "EventFormatType"},
		{"retry policy", `{"Destination":"http://r.example/","Protocol":"Redfish","DeliveryRetryPolicy":"Never"}`, "DeliveryRetryPolicy"},
		{"too many filters", `{"Destination":"http://r.example/","Protocol":"Redfish","ResourceTypes":` + string(manyJSON) + `}`, "ResourceTypes"},
		{"unknown registry", `{"Destination":"http://r.example/","Protocol":"Redfish","RegistryPrefixes":["Evil"]}`, "RegistryPrefixes"},
		{"origin outside the service", `{"Destination":"http://r.example/","Protocol":"Redfish","OriginResources":[{"@odata.id":"/redfish/v1/../../etc"}]}`, "OriginResources"},
		{"regex message id", `{"Destination":"http://r.example/","Protocol":"Redfish","MessageIds":["(a+)+$"]}`, "MessageIds"},
		{"Host header", `{"Destination":"http://r.example/","Protocol":"Redfish","HttpHeaders":[{"Host":"metadata"}]}`, "HttpHeaders"},
		{"header injection", `{"Destination":"http://r.example/","Protocol":"Redfish","HttpHeaders":[{"X-A":"b\r\nX-Injected: 1"}]}`, "HttpHeaders"},
		{"wrong type", `{"Destination":"http://r.example/","Protocol":"Redfish","EventTypes":"Alert"}`, "EventTypes"},
		{"unknown property", `{"Destination":"http://r.example/","Protocol":"Redfish","Oem":{}}`, "Oem"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := e.do(t, req{method: http.MethodPost, path: subscriptionsURI, user: "alice", body: c.body})
			info := errInfo(t, rec)
			if rec.Code != http.StatusBadRequest || !slices.Contains(info.Related, "#/"+c.prop) {
				t.Errorf("%d %v %v, want 400 about #/%s: %s", rec.Code, info.IDs, info.Related, c.prop, rec.Body)
			}
		})
	}
	if got := members(t, e.get(t, "admin", subscriptionsURI)); len(got) != 0 {
		t.Errorf("refused requests stored %v", got)
	}
}

// TestEventSubscriptionsCapped: one user posting 10,000 subscriptions
// gets its cap and then 400 CreateLimitReachedForResource; another user
// still subscribes.
func TestEventSubscriptionsCapped(t *testing.T) {
	e := newEnv(t)
	created := 0
	for range 10000 {
		rec := e.do(t, req{method: http.MethodPost, path: subscriptionsURI, user: "alice", body: subscriptionBody})
		if rec.Code == http.StatusCreated {
			created++
			continue
		}
		if info := errInfo(t, rec); rec.Code != http.StatusBadRequest || info.IDs[0] != "CreateLimitReachedForResource" {
			t.Fatalf("post %d: %d %v, want 400 CreateLimitReachedForResource", created+1, rec.Code, info.IDs)
		}
	}
	if created != fakeSubsPerUser {
		t.Errorf("alice created %d, want the cap %d", created, fakeSubsPerUser)
	}
	e.subscribe(t, "bob")
}

// TestSubmitTestEvent: the action reaches the backend with the caller.
func TestSubmitTestEvent(t *testing.T) {
	e := newEnv(t)
	rec := e.do(t, req{method: http.MethodPost, path: eventServiceURI + "/Actions/" + submitTestEvent, user: "alice",
		body: `{"EventId":"t1","MessageId":"Base.1.9.3.Success","Severity":"OK"}`})
	if rec.Code != http.StatusNoContent {
		t.Fatalf("SubmitTestEvent: %d %s", rec.Code, rec.Body)
	}
	if diff := cmp.Diff([]string{"alice t1"}, e.fake.testEvents); diff != "" {
		t.Errorf("test events (-want +got):\n%s", diff)
	}
	rec = e.do(t, req{method: http.MethodPost, path: eventServiceURI + "/Actions/" + submitTestEvent, user: "alice",
		body: `{"Severity":"Dire"}`})
	if rec.Code != http.StatusBadRequest {
		t.Errorf("bad Severity: %d", rec.Code)
	}
}
