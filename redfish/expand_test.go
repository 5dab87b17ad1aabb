package redfish

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// expanded is GET uri with $expand=q as user.
func (e *env) expanded(t *testing.T, user, uri, q string) map[string]any {
	t.Helper()
	return e.get(t, user, uri+"?$expand="+url.QueryEscape(q))
}

// linkOf is the @odata.id of a hyperlink, "" when v is not one.
func linkOf(v any) string {
	o, ok := v.(map[string]any)
	if !ok || len(o) != 1 {
		return ""
	}
	id, _ := o["@odata.id"].(string)
	return id
}

// TestExpandCollections: a collection with $expand . or * (what Ironic's
// sensor collection sends on Chassis and Storage: .($levels=1)) answers
// each member as its own GET answers it, @odata.etag included, and
// nothing else changes; ~ expands nothing in a collection (Members is not
// in Links).
func TestExpandCollections(t *testing.T) {
	e := newEnv(t)
	sys := "/redfish/v1/Systems/team-a.vm1"
	for _, uri := range []string{
		"/redfish/v1/Chassis", "/redfish/v1/Systems", "/redfish/v1/Managers",
		sys + "/Storage", sys + "/Processors", sys + "/EthernetInterfaces", sys + "/SimpleStorage",
		sys + "/VirtualMedia", sys + "/Storage/default/Controllers", "/redfish/v1/AccountService/Accounts",
	} {
		plain := e.get(t, "admin", uri)
		links, _ := plain["Members"].([]any)
		if len(links) == 0 {
			t.Fatalf("%s has no members to expand", uri)
		}
		for _, q := range []string{".($levels=1)", ".", "*", "*($levels=1)", "~", "~($levels=1)"} {
			t.Run(strings.TrimPrefix(uri, "/redfish/v1/")+" "+q, func(t *testing.T) {
				got := e.expanded(t, "admin", uri, q)
				want := map[string]any{}
				for k, v := range plain {
					want[k] = v
				}
				if !strings.HasPrefix(q, "~") {
					var members []any
					for _, l := range links {
						members = append(members, e.get(t, "admin", linkOf(l)))
					}
					want["Members"] = members
				}
				delete(want, "@odata.etag") // the digest of what is shown
				delete(got, "@odata.etag")
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("GET %s?$expand=%s (-members' own GETs +expanded):\n%s", uri, q, diff)
				}
			})
		}
	}
}

// TestExpandResources: on a resource, . expands the hyperlinks outside
// Links, ~ those in Links, * both.
func TestExpandResources(t *testing.T) {
	e := newEnv(t)
	sys := "/redfish/v1/Systems/team-a.vm1"
	chassis := "/redfish/v1/Chassis/team-a.vm1"
	mgr := "/redfish/v1/Managers/team-a.vm1"
	tests := []struct {
		uri, q string
		// expanded and kept are properties ("Links.X" inside Links) that
		// must be expanded, and must stay links.
		expanded, kept []string
	}{
		{sys, ".", []string{"Bios", "SecureBoot", "Processors", "Storage", "VirtualMedia"}, []string{"Links.Chassis", "Links.ManagedBy"}},
		{sys, "~", []string{"Links.Chassis", "Links.ManagedBy"}, []string{"Bios", "Processors", "Storage"}},
		{sys, "*", []string{"Bios", "Processors", "Storage", "Links.Chassis", "Links.ManagedBy"}, nil},
		{chassis, ".($levels=1)", nil, []string{"Links.ComputerSystems", "Links.ManagedBy"}},
		{chassis, "*", []string{"Links.ComputerSystems", "Links.ManagedBy"}, nil},
		{mgr, ".", []string{"VirtualMedia"}, []string{"Links.ManagerForServers", "Links.ManagerForChassis"}},
		{mgr, "~", []string{"Links.ManagerForServers", "Links.ManagerForChassis"}, []string{"VirtualMedia"}},
	}
	for _, tc := range tests {
		t.Run(strings.TrimPrefix(tc.uri, "/redfish/v1/")+" "+tc.q, func(t *testing.T) {
			plain := e.get(t, "admin", tc.uri)
			got := e.expanded(t, "admin", tc.uri, tc.q)
			prop := func(body map[string]any, name string) any {
				if l, ok := strings.CutPrefix(name, "Links."); ok {
					v := body["Links"].(map[string]any)[l]
					if a, ok := v.([]any); ok {
						return a[0]
					}
					return v
				}
				return body[name]
			}
			for _, name := range tc.expanded {
				uri := linkOf(prop(plain, name))
				if uri == "" {
					t.Fatalf("%s is not a link in the plain GET", name)
				}
				if diff := cmp.Diff(e.get(t, "admin", uri), prop(got, name)); diff != "" {
					t.Errorf("%s (-its own GET +expanded):\n%s", name, diff)
				}
			}
			for _, name := range tc.kept {
				if diff := cmp.Diff(prop(plain, name), prop(got, name)); diff != "" {
					t.Errorf("%s changed, want the link (-plain +expanded):\n%s", name, diff)
				}
			}
		})
	}
	// The service root: its collections and services, one level.
	root := e.expanded(t, "admin", "/redfish/v1", "*")
	systems, _ := root["Systems"].(map[string]any)
	if members, _ := systems["Members"].([]any); len(members) != 3 || linkOf(members[0]) == "" {
		t.Errorf("root's Systems expanded to %v, want the collection with its 3 members as links (one level)", systems)
	}
	if sessions, _ := root["Links"].(map[string]any)["Sessions"].(map[string]any); sessions["Members"] == nil {
		t.Errorf("root's Links.Sessions with *: %v, want the collection", sessions)
	}
	if rec := e.do(t, req{path: "/redfish/v1"}); rec.Code != http.StatusOK {
		t.Errorf("root without $expand nor credentials: %d, want 200 (public)", rec.Code)
	}
}

// TestExpandScope: a user sees in an expanded collection exactly the
// systems its GETs show, and a hyperlink to a system outside its scope
// (or gone) stays a link.
func TestExpandScope(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		user string
		want []string
	}{
		{"admin", []string{"team-a.vm1", "team-a.vm2", "team-b.vm3"}},
		{"alice", []string{"team-a.vm1", "team-a.vm2"}},
		{"bob", []string{"team-b.vm3"}},
		{"carol", []string{"team-a.vm1"}},
	} {
		for _, coll := range []string{"/redfish/v1/Systems", "/redfish/v1/Chassis", "/redfish/v1/Managers"} {
			got := e.expanded(t, tc.user, coll, ".($levels=1)")
			var ids []string
			for _, m := range got["Members"].([]any) {
				id, _ := m.(map[string]any)["Id"].(string)
				ids = append(ids, id)
			}
			if diff := cmp.Diff(tc.want, ids); diff != "" {
				t.Errorf("%s: %s expanded (-want +got):\n%s", tc.user, coll, diff)
			}
		}
	}
	carol := &auth.Principal{User: "carol", Scope: auth.Scope{Namespaces: []string{"team-a"}, Selector: labels.SelectorFromSet(labels.Set{"tier": "gold"})}}
	for _, tc := range []struct {
		uri  string
		show bool
	}{
		{"/redfish/v1/Systems/team-a.vm1", true},
		{"/redfish/v1/Systems/team-a.vm2", false}, // out of the selector
		{"/redfish/v1/Chassis/team-b.vm3", false}, // out of the namespaces
		{"/redfish/v1/Systems/team-a.vm9", false}, // gone
		{"/redfish/v1/Systems/team-a.vm1/Actions/ComputerSystem.Reset", false},
	} {
		hr, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "/redfish/v1/Chassis?$expand=*", nil)
		if err != nil {
			t.Fatal(err)
		}
		c := e.e.NewContext(hr, nil)
		c.Set(principalKey, carol)
		b, err := e.srv.read(c, tc.uri)
		if err != nil {
			t.Fatalf("read %s: %v", tc.uri, err)
		}
		if got := b != nil; got != tc.show {
			t.Errorf("carol expands %s: %t, want %t", tc.uri, got, tc.show)
		}
	}
}

// TestExpandCost: a collection of N systems expanded reads each system
// once, through the backend's Get (the cache), and lists once.
func TestExpandCost(t *testing.T) {
	e := newEnv(t)
	lists, gets := e.fake.memberLists, e.fake.gets
	e.expanded(t, "admin", "/redfish/v1/Chassis", ".($levels=1)")
	if n := e.fake.memberLists - lists; n != 1 {
		t.Errorf("%d member lists, want 1", n)
	}
	if n := e.fake.gets - gets; n != 3 {
		t.Errorf("%d system reads for 3 members, want 3", n)
	}
}

// TestExpandPagesAndHeaders: $top pages before members are expanded and
// the next page is expanded alike; the answer has its own ETag (304 on
// If-None-Match) and the collection's Allow.
func TestExpandPagesAndHeaders(t *testing.T) {
	e := newEnv(t)
	var ids []string
	next := "/redfish/v1/Systems?$top=2&$expand=" + url.QueryEscape(".($levels=1)")
	for pages := 0; next != ""; pages++ {
		if pages > 3 {
			t.Fatalf("more pages than members; last %s", next)
		}
		page := e.get(t, "admin", next)
		for _, m := range page["Members"].([]any) {
			id, _ := m.(map[string]any)["Id"].(string)
			ids = append(ids, id)
		}
		next, _ = page["Members@odata.nextLink"].(string)
	}
	if diff := cmp.Diff([]string{"team-a.vm1", "team-a.vm2", "team-b.vm3"}, ids); diff != "" {
		t.Errorf("expanded pages (-want +got):\n%s", diff)
	}

	uri := "/redfish/v1/Chassis?$expand=."
	rec := e.do(t, req{path: uri, user: "admin"})
	plain := e.do(t, req{path: "/redfish/v1/Chassis", user: "admin"})
	if rec.Header().Get("ETag") == "" || rec.Header().Get("ETag") == plain.Header().Get("ETag") {
		t.Errorf("ETag %q, want its own (plain %q)", rec.Header().Get("ETag"), plain.Header().Get("ETag"))
	}
	if got, want := rec.Header().Get("Allow"), plain.Header().Get("Allow"); got != want || got == "" {
		t.Errorf("Allow %q, want the collection's %q", got, want)
	}
	member := decode(t, rec)["Members"].([]any)[0].(map[string]any)
	own := e.do(t, req{path: "/redfish/v1/Chassis/" + member["Id"].(string), user: "admin"})
	if member["@odata.etag"] != own.Header().Get("ETag") {
		t.Errorf("member @odata.etag %v, its own GET's ETag %q", member["@odata.etag"], own.Header().Get("ETag"))
	}
	again := e.do(t, req{path: uri, user: "admin", header: map[string]string{"If-None-Match": rec.Header().Get("ETag")}})
	if again.Code != http.StatusNotModified {
		t.Errorf("If-None-Match with the expanded answer's ETag: %d, want 304", again.Code)
	}
}
