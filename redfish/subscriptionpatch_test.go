package redfish

import (
	"net/http"
	"path"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/eventsub"
)

// TestEventSubscriptionPatch: the owner (or an Administrator) changes
// Context, DeliveryRetryPolicy, HttpHeaders (still never shown) and
// resumes a suspended subscription with Status.State Enabled; another
// user's PATCH is 404; a read-only property (Destination, a filter) is
// PropertyNotWritable and a bad value refused, and a refused PATCH
// changes nothing.
func TestEventSubscriptionPatch(t *testing.T) {
	e := newEnv(t)
	uri := e.subscribe(t, "alice")
	id := path.Base(uri)
	stored := func() eventsub.Subscription {
		t.Helper()
		s, err := e.fake.subs.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	patch := func(user, body string) (int, errorInfo, map[string]any) {
		t.Helper()
		rec := e.do(t, req{method: http.MethodPatch, path: uri, user: user, body: body})
		if rec.Code != http.StatusOK {
			return rec.Code, errInfo(t, rec), nil
		}
		return rec.Code, errorInfo{}, decode(t, rec)
	}

	code, _, body := patch("alice", `{"Context":"node-2","DeliveryRetryPolicy":"RetryForever","HttpHeaders":[{"X-Token":"t2"}]}`)
	if code != http.StatusOK || body["Context"] != "node-2" || body["DeliveryRetryPolicy"] != "RetryForever" ||
		len(body["HttpHeaders"].([]any)) != 0 {
		t.Fatalf("owner's PATCH: %d %v", code, body)
	}
	if diff := cmp.Diff(map[string]string{"X-Token": "t2"}, stored().Headers); diff != "" {
		t.Errorf("stored headers (-want +got):\n%s", diff)
	}
	if code, _, _ := patch("bob", `{"Context":"bob's"}`); code != http.StatusNotFound {
		t.Errorf("another user's PATCH: %d, want 404", code)
	}
	before := stored()
	for _, tc := range []struct{ body, id string }{
		{`{"Context":"x","Destination":"https://elsewhere.example/"}`, "PropertyNotWritable"},
		{`{"RegistryPrefixes":["TaskEvent"]}`, "PropertyNotWritable"},
		{`{"Protocol":"SNMPv3"}`, "PropertyNotWritable"},
		{`{"Status":{"Health":"OK"}}`, "PropertyNotWritable"},
		{`{"DeliveryRetryPolicy":"Never"}`, "PropertyValueNotInList"},
		{`{"Status":{"State":"Absent"}}`, "PropertyValueNotInList"},
		{`{"HttpHeaders":[{"Host":"metadata"}]}`, "PropertyValueFormatError"},
		{`{"Context":7}`, "PropertyValueTypeError"},
		{`{"Bogus":1}`, "PropertyUnknown"},
	} {
		code, info, _ := patch("alice", tc.body)
		if code != http.StatusBadRequest || len(info.IDs) == 0 || info.IDs[0] != tc.id {
			t.Errorf("PATCH %s: %d %v, want 400 %s", tc.body, code, info.IDs, tc.id)
		}
	}
	if diff := cmp.Diff(before, stored()); diff != "" {
		t.Errorf("refused PATCHes changed the subscription (-before +after):\n%s", diff)
	}

	// Suspended by the delivery, resumed by its owner.
	if err := e.fake.subs.SetState(t.Context(), id, eventsub.StateDisabled); err != nil {
		t.Fatal(err)
	}
	code, _, body = patch("admin", `{"Status":{"State":"Enabled"}}`)
	if code != http.StatusOK || body["Status"].(map[string]any)["State"] != "Enabled" || stored().State != eventsub.StateEnabled {
		t.Fatalf("resume by an administrator: %d %v", code, body)
	}
	if g := stored().Generation; g != before.Generation+1 {
		t.Errorf("generation %d after the resume, want %d (the delivery starts again on a newer one)", g, before.Generation+1)
	}
}
