package backend_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// TestExpandReadsTheCache: the collections Ironic's sensor collection
// expands ($expand=.($levels=1) on Chassis and Storage), and the Systems
// and Managers collections with every link expanded, answer each member
// expanded without one apiserver request: a member is read through the
// cache, as its own GET reads it, not fetched per member.
func TestExpandReadsTheCache(t *testing.T) {
	s := newStack(t, crds.Stock, nil)
	const more = 5
	if err := demo.CreateFirmwareVMs(t.Context(), s.admin, stackNS, more); err != nil {
		t.Fatal(err)
	}
	members := func(t *testing.T, uri string) []map[string]any {
		t.Helper()
		rec := s.do(t, http.MethodGet, uri, "", "")
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", uri, rec.Code, rec.Body)
		}
		var body struct{ Members []map[string]any }
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("GET %s: %v", uri, err)
		}
		return body.Members
	}
	testutil.Eventually(t, "the cache shows every VM", time.Minute, 50*time.Millisecond, func(context.Context) error {
		if n := len(members(t, "/redfish/v1/Systems")); n != 1+more {
			return fmt.Errorf("%d systems, want %d", n, 1+more)
		}
		return nil
	})
	expand := func(q string) string { return "?$expand=" + url.QueryEscape(q) }
	for _, tc := range []struct {
		uri  string
		want int
	}{
		{"/redfish/v1/Chassis" + expand(".($levels=1)"), 1 + more},
		{s.uri + "/Storage" + expand(".($levels=1)"), 1},
		{"/redfish/v1/Systems" + expand("*"), 1 + more},
		{"/redfish/v1/Managers" + expand("."), 1 + more},
		{s.uri + expand("*"), 0},
	} {
		before := s.requests.Load()
		ms := members(t, tc.uri)
		if n := s.requests.Load() - before; n != 0 {
			t.Errorf("GET %s made %d apiserver requests, want 0", tc.uri, n)
		}
		if len(ms) != tc.want {
			t.Errorf("GET %s: %d members, want %d", tc.uri, len(ms), tc.want)
		}
		for _, m := range ms {
			if m["Id"] == nil || m["@odata.etag"] == nil {
				t.Errorf("GET %s: member %v not expanded", tc.uri, m)
			}
		}
	}
}
