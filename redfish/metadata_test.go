package redfish

import (
	"encoding/xml"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestMetadataCoversServedTypes parses $metadata and checks that every
// @odata.type a crawl meets is included, and nothing else.
func TestMetadataCoversServedTypes(t *testing.T) {
	e := newEnv(t)
	rec := e.do(t, req{path: "/redfish/v1/$metadata"})
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/xml") {
		t.Fatalf("$metadata without credentials: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	var doc struct {
		References []struct {
			URI      string `xml:"Uri,attr"`
			Includes []struct {
				Namespace string `xml:"Namespace,attr"`
			} `xml:"Include"`
		} `xml:"Reference"`
	}
	if err := xml.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("$metadata is not XML: %v", err)
	}
	included := map[string]bool{}
	for _, r := range doc.References {
		for _, i := range r.Includes {
			included[i.Namespace] = true
		}
	}
	served := map[string]bool{"Message.v1_1_1": true, "Settings.v1_4_0": true} // embedded types
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ot, ok := v["@odata.type"].(string); ok {
				ns := strings.TrimPrefix(ot, "#")
				served[ns[:strings.LastIndex(ns, ".")]] = true
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	if _, err := e.fake.Insert(t.Context(), system.Key{Namespace: "team-a", Name: "vm1"}, "cd0", system.MediaInsert{Image: "http://i/a.iso"}); err != nil {
		t.Fatal(err)
	}
	addTestCertificate(t, e.fake, system.Key{Namespace: "team-a", Name: "vm1"}, "cd0")
	e.subscribe(t, "alice")
	for uri, body := range crawl(t, e, "admin") {
		if !strings.HasSuffix(uri, ".json") {
			walk(body)
		}
	}
	tok, loc := login(t, e, "bob", "bob-pw")
	walk(decode(t, e.do(t, req{path: loc, token: tok})))
	for ns := range served {
		if !included[ns] {
			t.Errorf("served type %s is not in $metadata", ns)
		}
	}
	for _, ns := range e.srv.servedTypes {
		if !served[ns] {
			t.Errorf("$metadata lists %s, which the crawl never met", ns)
		}
	}
	if !slices.IsSorted(e.srv.servedTypes) {
		t.Error("servedTypes is not sorted")
	}
}
