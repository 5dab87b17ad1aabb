package redfish

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pageAnswer is what a client sees of a page.
type pageAnswer struct {
	Code       int
	ETag, Body string
}

func getPage(t *testing.T, e *env, user, path string) pageAnswer {
	t.Helper()
	rec := e.do(t, req{path: path, user: user})
	return pageAnswer{Code: rec.Code, ETag: rec.Header().Get("ETag"), Body: rec.Body.String()}
}

// withPagedFromKept runs f with [pagedFromKept] set to on.
func withPagedFromKept(on bool, f func()) {
	was := pagedFromKept
	pagedFromKept = on
	defer func() { pagedFromKept = was }()
	f()
}

// TestPagesAsWhole checks that a $top/$skip page built from the kept
// member URIs is byte for byte (and ETag for ETag) the page cut from the
// whole collection: first, middle, last, past the end and empty windows,
// in scopes that see all or some systems, cold and kept.
func TestPagesAsWhole(t *testing.T) {
	e := newEnv(t)
	for i := range 7 {
		e.fake.add("team-a", fmt.Sprintf("vm%d", 10+i), nil, "")
	}
	windows := []string{
		"$top=3", "$skip=3&$top=3", "$skip=9&$top=3", "$skip=8", "$skip=12&$top=3",
		"$top=0", "$skip=3&$top=0", "$skip=0", "$top=10", "$top=1000", "$skip=10",
	}
	type look struct{ user, path string }
	var looks []look
	for _, user := range []string{"admin", "alice", "bob", "carol"} {
		for _, w := range windows {
			looks = append(looks, look{user, "/redfish/v1/Systems?" + w})
		}
	}
	for _, w := range windows[:4] {
		looks = append(looks, look{"admin", "/redfish/v1/Managers?" + w}, look{"carol", "/redfish/v1/Chassis?" + w})
	}
	want := map[look]pageAnswer{}
	withPagedFromKept(false, func() {
		for _, l := range looks {
			want[l] = getPage(t, e, l.user, l.path)
		}
	})
	for _, round := range []string{"cold", "kept", "after the whole collection"} {
		if round == "after the whole collection" {
			for _, p := range []string{"/redfish/v1/Systems", "/redfish/v1/Managers", "/redfish/v1/Chassis"} {
				e.get(t, "admin", p)
				e.get(t, "carol", p)
			}
		}
		for _, l := range looks {
			t.Run(round+" "+l.user+" "+l.path, func(t *testing.T) {
				got := getPage(t, e, l.user, l.path)
				if got.Code != http.StatusOK {
					t.Fatalf("status %d: %s", got.Code, got.Body)
				}
				if diff := cmp.Diff(want[l], got); diff != "" {
					t.Errorf("page from the kept URIs (-whole collection +kept):\n%s", diff)
				}
			})
		}
	}
}

// pageIDs are the @odata.id of a page's members.
func pageIDs(m map[string]any) []string {
	var out []string
	for _, x := range m["Members"].([]any) {
		out = append(out, x.(map[string]any)["@odata.id"].(string))
	}
	return out
}

// TestPageSeesMembershipChange checks that a page after a membership
// change shows it: the kept member URIs are not served stale.
func TestPageSeesMembershipChange(t *testing.T) {
	e := newEnv(t)
	first := e.get(t, "admin", "/redfish/v1/Systems?$top=2")
	if diff := cmp.Diff([]string{"/redfish/v1/Systems/team-a.vm1", "/redfish/v1/Systems/team-a.vm2"}, pageIDs(first)); diff != "" {
		t.Fatalf("first page (-want +got):\n%s", diff)
	}
	check := func(what, path string, want []string, count int) {
		t.Helper()
		page := e.get(t, "admin", path)
		if diff := cmp.Diff(want, pageIDs(page)); diff != "" {
			t.Errorf("%s: %s (-want +got):\n%s", what, path, diff)
		}
		if got := page["Members@odata.count"]; got != float64(count) {
			t.Errorf("%s: %s: Members@odata.count %v, want %d", what, path, got, count)
		}
	}
	e.fake.add("team-a", "vm4", nil, "")
	check("after a VM was added", "/redfish/v1/Systems?$skip=2&$top=2",
		[]string{"/redfish/v1/Systems/team-a.vm4", "/redfish/v1/Systems/team-b.vm3"}, 4)
	e.fake.remove("team-a.vm1")
	check("after a VM was removed", "/redfish/v1/Systems?$skip=2&$top=2",
		[]string{"/redfish/v1/Systems/team-b.vm3"}, 3)
	check("after a VM was removed", "/redfish/v1/Systems?$top=2",
		[]string{"/redfish/v1/Systems/team-a.vm2", "/redfish/v1/Systems/team-a.vm4"}, 3)
}

// TestPagesListMembersOnce checks that pages of an unchanged membership
// do not list every system again: one listing serves every page (and the
// whole collection) until the membership changes.
func TestPagesListMembersOnce(t *testing.T) {
	e := newEnv(t)
	lists := func() int {
		e.fake.mu.Lock()
		defer e.fake.mu.Unlock()
		return e.fake.memberLists
	}
	for _, p := range []string{"$top=1", "$skip=1&$top=1", "$skip=2", "$top=0", "$skip=7"} {
		e.get(t, "admin", "/redfish/v1/Systems?"+p)
	}
	e.get(t, "admin", "/redfish/v1/Systems")
	if got := lists(); got != 1 {
		t.Errorf("5 pages and the whole collection listed the systems %d times, want 1", got)
	}
	// Other queries take the whole collection, as before.
	e.get(t, "admin", "/redfish/v1/Systems?$top=1&pretty")
	if got := lists(); got != 2 {
		t.Errorf("a page with ?pretty: %d listings, want 2", got)
	}
}

// BenchmarkSystemsPage is one GET of a page of 1000 of 10,000 systems
// through the whole service: "kept" builds it from the kept member URIs,
// "listed" (the path before them) lists and renders every member
// (go test -run '^$' -bench SystemsPage -benchmem ./redfish/).
func BenchmarkSystemsPage(b *testing.B) {
	e := newEnv(&testing.T{})
	for i := range 10000 - 3 {
		e.fake.add("team-c", fmt.Sprintf("vm%05d", i), nil, "")
	}
	for _, bc := range []struct {
		name string
		on   bool
	}{{"kept", true}, {"listed", false}} {
		b.Run(bc.name, func(b *testing.B) {
			withPagedFromKept(bc.on, func() {
				benchGET(b, e, "admin", "admin-pw", "/redfish/v1/Systems?$top=1000&$skip=5000")
			})
		})
	}
}

// TestMemberLinksEncodeAsMaps checks that [linkedCollection] encodes, with
// the service's encoder and with encoding/json (?pretty), to the bytes of
// [collection]'s one map per member: no member, one, and URIs that need
// escaping.
func TestMemberLinksEncodeAsMaps(t *testing.T) {
	for _, uris := range [][]string{
		nil,
		{},
		{"/redfish/v1/Systems/ns.vm-0"},
		{"/redfish/v1/Systems/a", `/x/"q"\<&>`, "/x/\u00e9\u2028", "/x/\x01"},
	} {
		want, wantVersion, err := encodeResource(collection("/c", "#T.T", "C", uris), false)
		if err != nil {
			t.Fatal(err)
		}
		got, gotVersion, err := encodeResource(linkedCollection("/c", "#T.T", "C", uris), false)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) || gotVersion != wantVersion {
			t.Errorf("members %q: encoded\n%s (version %s), want\n%s (version %s)", uris, got, gotVersion, want, wantVersion)
		}
		wantPretty, _, _ := encodeResource(collection("/c", "#T.T", "C", uris), true)
		gotPretty, _, err := encodeResource(linkedCollection("/c", "#T.T", "C", uris), true)
		if err != nil || string(gotPretty) != string(wantPretty) {
			t.Errorf("members %q: ?pretty encoded\n%s (%v), want\n%s", uris, gotPretty, err, wantPretty)
		}
	}
}
