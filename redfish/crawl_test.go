package redfish

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// crawl GETs everything reachable from the service root by @odata.id (and
// registry file locations) as user, returning each resource by URI.
func crawl(t *testing.T, e *env, user string) map[string]map[string]any {
	t.Helper()
	seen := map[string]map[string]any{}
	queue := []string{"/redfish/v1"}
	for len(queue) > 0 {
		uri := queue[0]
		queue = queue[1:]
		if _, ok := seen[uri]; ok {
			continue
		}
		rec := e.do(t, req{path: uri, user: user})
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s: %d %s", uri, rec.Code, rec.Body)
			seen[uri] = nil
			continue
		}
		body := decode(t, rec)
		seen[uri] = body
		if strings.HasSuffix(uri, ".json") {
			continue
		}
		walkLinks(body, func(u string) { queue = append(queue, u) })
	}
	return seen
}

func walkLinks(v any, visit func(string)) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && (k == "@odata.id" || k == "Uri" || k == "@Redfish.ActionInfo") && strings.HasPrefix(s, "/redfish/") {
				visit(s)
			}
			walkLinks(x, visit)
		}
	case []any:
		for _, x := range v {
			walkLinks(x, visit)
		}
	}
}

func TestCrawlValidatesAgainstSchemas(t *testing.T) {
	e := newEnv(t)
	v := newValidator(t)
	// Put a slot into each interesting phase so all task shapes are served.
	ctx := t.Context()
	key := system.Key{Namespace: "team-a", Name: "vm1"}
	if _, err := e.fake.Insert(ctx, key, "cd0", system.MediaInsert{Image: "https://images.example/boot-1.iso"}); err != nil {
		t.Fatal(err)
	}
	addTestCertificate(t, e.fake, system.Key{Namespace: "team-a", Name: "vm1"}, "cd0")
	e.subscribe(t, "alice")
	key2 := system.Key{Namespace: "team-a", Name: "vm2"}
	if _, err := e.fake.Insert(ctx, key2, "cd0", system.MediaInsert{Image: "http://images.example/x.iso"}); err != nil {
		t.Fatal(err)
	}
	e.fake.setPhase(key2.ID(), "cd0", system.MediaFailed, "404 from image server")

	got := crawl(t, e, "admin")
	if len(got) < 40 {
		t.Errorf("crawl found only %d resources", len(got))
	}
	types := map[string]bool{}
	for uri, body := range got {
		if body == nil || strings.HasSuffix(uri, ".json") {
			continue
		}
		if uri != "/redfish/v1/odata" {
			if body["@odata.id"] != uri {
				t.Errorf("%s: @odata.id is %v", uri, body["@odata.id"])
			}
			ot, _ := body["@odata.type"].(string)
			ns := strings.TrimPrefix(ot, "#")
			types[ns[:max(strings.LastIndex(ns, "."), 0)]] = true
			v.validate(t, uri, body)
		}
	}
	// Every registered type (resources.go) is served as a resource of its
	// own, but for those only embedded in others and the Session, which a
	// crawl with Basic credentials does not open.
	embedded := map[string]bool{"Settings.v1_4_0": true, "Message.v1_1_1": true, "Session.v1_8_0": true}
	for _, ns := range e.srv.servedTypes {
		if !embedded[ns] && !types[ns] {
			t.Errorf("crawl never served a resource of %s", ns)
		}
	}
}

func TestEveryResourceHeadAndTrailingSlash(t *testing.T) {
	e := newEnv(t)
	for uri, body := range crawl(t, e, "admin") {
		if body == nil {
			continue
		}
		t.Run(uri, func(t *testing.T) {
			rec := e.do(t, req{path: uri + "/", user: "admin"})
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s/: %d", uri, rec.Code)
			}
			if diff := cmp.Diff(body, decode(t, rec)); diff != "" {
				t.Errorf("with trailing slash (-without +with):\n%s", diff)
			}
			if got := rec.Header().Get("OData-Version"); got != "4.0" {
				t.Errorf("OData-Version = %q", got)
			}
			head := e.do(t, req{method: http.MethodHead, path: uri, user: "admin"})
			if head.Code != http.StatusOK || head.Body.Len() != 0 {
				t.Errorf("HEAD %s: %d with %d body bytes", uri, head.Code, head.Body.Len())
			}
			get := e.do(t, req{path: uri, user: "admin"})
			checkDescribed(t, uri, get, head, body)
		})
	}
}

// TestIronicProfile checks that every property the OpenStack Ironic
// interoperability profile makes mandatory is present on the resources the
// service serves, and that mandatory Reset values are allowed.
func TestIronicProfile(t *testing.T) {
	dir := testutil.SharedDir(t, "redfish")
	raw, err := os.ReadFile(filepath.Join(dir, "profiles", "OpenStackIronicProfile.v1_2_0.json"))
	if err != nil {
		t.Fatal(err)
	}
	var profile struct {
		Protocol  struct{ MinVersion string }
		Resources map[string]profileResource
	}
	if err := json.Unmarshal(raw, &profile); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	byType := map[string][]map[string]any{}
	for _, body := range crawl(t, e, "admin") {
		if ot, ok := body["@odata.type"].(string); ok {
			name := strings.TrimPrefix(ot, "#")
			name = name[:strings.Index(name, ".")]
			byType[name] = append(byType[name], body)
		}
	}
	if !versionAtLeast(t, RedfishVersion, profile.Protocol.MinVersion) {
		t.Errorf("RedfishVersion %s < profile minimum %s", RedfishVersion, profile.Protocol.MinVersion)
	}
	for name, res := range profile.Resources {
		bodies := byType[name]
		if len(bodies) == 0 {
			if res.ReadRequirement == "" || res.ReadRequirement == "Mandatory" {
				t.Errorf("profile resource %s is mandatory and never served", name)
			} else {
				t.Logf("profile resource %s (%s) not served", name, res.ReadRequirement)
			}
			continue
		}
		for _, b := range bodies {
			reqs := res.PropertyRequirements
			if uri := b["@odata.id"].(string); strings.HasSuffix(uri, "/Settings") {
				// A settings object is where @Redfish.Settings points, it
				// does not carry one itself.
				reqs = maps.Clone(reqs)
				delete(reqs, "@Redfish.Settings")
			}
			checkProfileProps(t, b["@odata.id"].(string), b, reqs)
		}
	}
	sys := e.get(t, "admin", "/redfish/v1/Systems/team-a.vm1")
	allowed := sys["Actions"].(map[string]any)["#ComputerSystem.Reset"].(map[string]any)["ResetType@Redfish.AllowableValues"].([]any)
	reset := profile.Resources["ComputerSystem"].ActionRequirements["Reset"].Parameters["ResetType"]
	// Nmi is only recommended, and KubeVirt cannot inject one: advertising
	// it would make Ironic's inject-NMI fail at the bridge instead of in sushy.
	notOffered := map[string]bool{"Nmi": true}
	for _, want := range append(reset.ParameterValues, reset.RecommendedValues...) {
		if got := slices.Contains(allowed, any(want)); got == notOffered[want] {
			t.Errorf("ResetType %s allowed: %v, want %v", want, got, !notOffered[want])
		}
	}
}

func versionAtLeast(t *testing.T, v, min string) bool {
	t.Helper()
	parse := func(s string) [3]int {
		var out [3]int
		if _, err := fmt.Sscanf(s, "%d.%d.%d", &out[0], &out[1], &out[2]); err != nil {
			t.Fatalf("version %q: %v", s, err)
		}
		return out
	}
	a, b := parse(v), parse(min)
	return slices.Compare(a[:], b[:]) >= 0
}

type profileResource struct {
	ReadRequirement      string
	PropertyRequirements map[string]profileProp
	ActionRequirements   map[string]struct {
		Parameters map[string]struct {
			ParameterValues, RecommendedValues []string
		}
	}
}

type profileProp struct {
	ReadRequirement      string
	Values               []string
	MinSupportValues     []string
	Comparison           string
	PropertyRequirements map[string]profileProp
}

func checkProfileProps(t *testing.T, where string, body map[string]any, reqs map[string]profileProp) {
	t.Helper()
	for name, p := range reqs {
		val, ok := body[name]
		mandatory := p.ReadRequirement == "" || p.ReadRequirement == "Mandatory"
		switch {
		case !ok && mandatory:
			t.Errorf("%s: mandatory property %s missing", where, name)
			continue
		case !ok:
			t.Logf("%s: %s property %s not served", where, p.ReadRequirement, name)
			continue
		}
		if p.Comparison == "AnyOf" && !slices.Contains(p.Values, val.(string)) {
			t.Errorf("%s: %s = %v, want one of %v", where, name, val, p.Values)
		}
		if len(p.MinSupportValues) > 0 {
			allowed, _ := body[name+"@Redfish.AllowableValues"].([]any)
			for _, v := range p.MinSupportValues {
				if allowed != nil && !slices.Contains(allowed, any(v)) {
					t.Errorf("%s: %s does not allow %s", where, name, v)
				}
			}
		}
		if sub, ok := val.(map[string]any); ok && len(p.PropertyRequirements) > 0 {
			checkProfileProps(t, where+"/"+name, sub, p.PropertyRequirements)
		}
	}
}
