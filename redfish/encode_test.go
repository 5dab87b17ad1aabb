package redfish

import (
	"encoding/json"
	"math"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestAppendJSON: appendJSON writes the bytes json.Marshal writes, for
// what resources are made of and for what it hands to json.Marshal.
func TestAppendJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
	}{
		{"nil", nil},
		{"plain string", "KubeVirt VirtualMachine team-a/vm1"},
		{"HTML and quotes", `<a href="x">&'\`},
		{"ampersand", "a=1&b=2"},
		{"greater", "a>b"},
		{"control and unicode", "tab\there\n\u2028 é \xff"},
		{"named string", system.PowerOn},
		{"named strings", system.ResetTypes},
		{"nil named strings", []system.BootMode(nil)},
		{"empty named strings", []system.BootMode{}},
		{"numbers", []any{0, -3, int64(1) << 62, 4.0, 0.5, -1.25, 1e-7, 1e21, 123456789.125, math.SmallestNonzeroFloat64, uint8(7)}},
		{"bools", []any{true, false}},
		{"nil object", obj(nil)},
		{"nil objects", []obj(nil)},
		{"nil strings", []string(nil)},
		{"nested", obj{"b": obj{"z": 1, "a": []obj{{"@odata.id": "/x"}}}, "a": []string{"x", "<y>"}, "@odata.id": "/redfish/v1", "A": nil}},
		{"marshaler", obj{"raw": json.RawMessage(`{"k":1}`), "ip": net.IPv4(192, 0, 2, 1), "m": map[string]string{"b": "1", "a": "2"}}},
		{"bytes", []byte("abc")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := json.Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			got, err := appendJSON([]byte("prefix"), tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff("prefix"+string(want), string(got)); diff != "" {
				t.Errorf("appendJSON (-json.Marshal +got):\n%s", diff)
			}
		})
	}
	if _, err := appendJSON(nil, obj{"x": math.NaN()}); err == nil {
		t.Error("NaN encoded, want json.Marshal's error")
	}
}

// logDateTime is a LogService's DateTime (its ETag and @odata.etag vary
// with it).
var logDateTime = regexp.MustCompile(`"DateTime":"[^"]*"|W/\\?"[0-9a-f]{16}\\?"`)

// TestResourcesEncodeAsJSONMarshal: every resource reachable from the
// service root (each system's twice: rendered, then kept) has the bytes
// and ETag it has when encoded by json.Marshal.
func TestResourcesEncodeAsJSONMarshal(t *testing.T) {
	rawCrawl := func() map[string]string {
		e := newEnv(t)
		e.fake.mu.Lock()
		v := e.fake.systems["team-a.vm1"]
		v.Boot = system.BootOverride{Target: system.BootCd, Enabled: system.BootOnce, HTTPBootURI: "http://192.0.2.1/boot.efi?a=1&b=2"}
		v.PowerState = system.PowerOn
		e.fake.bump(v)
		e.fake.mu.Unlock()
		seen := map[string]string{}
		queue := []string{"/redfish/v1"}
		for len(queue) > 0 {
			uri := queue[0]
			queue = queue[1:]
			if _, ok := seen[uri]; ok {
				continue
			}
			rec := e.do(t, req{path: uri, user: "admin"})
			again := e.do(t, req{path: uri, user: "admin"})
			if rec.Code != http.StatusOK || again.Body.String() != rec.Body.String() {
				t.Fatalf("GET %s: %d %s, again %s", uri, rec.Code, rec.Body, again.Body)
			}
			seen[uri] = rec.Header().Get("ETag") + " " + rec.Body.String()
			if strings.Contains(rec.Body.String(), `"DateTime":"`) {
				// A LogService's DateTime is the wall clock's: the two
				// crawls may straddle a second. Its ETag follows it.
				seen[uri] = logDateTime.ReplaceAllString(rec.Body.String(), `"DateTime":"<now>"`)
			}
			if strings.HasSuffix(uri, ".json") {
				continue
			}
			walkLinks(decode(t, rec), func(u string) { queue = append(queue, u) })
		}
		return seen
	}
	got := rawCrawl()
	marshalResource = func(body obj) ([]byte, error) { return json.Marshal(body) }
	t.Cleanup(func() { marshalResource = marshalBody })
	want := rawCrawl()
	if len(want) < 50 {
		t.Fatalf("crawled %d resources, want the whole service", len(want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bodies (-json.Marshal +appendJSON):\n%s", diff)
	}
}
