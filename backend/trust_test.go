package backend_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/testca"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// certPEM is a self-signed certificate whose PEM is about size bytes.
func certPEM(t *testing.T, cn string, size int) string {
	t.Helper()
	pem, err := testca.PaddedCertPEM(cn, size)
	if err != nil {
		t.Fatal(err)
	}
	return pem
}

func certBody(t *testing.T, pemText string) string {
	t.Helper()
	b, err := json.Marshal(map[string]string{"CertificateString": pemText, "CertificateType": "PEM"})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// redfishError is the part of a Redfish error body the tests read.
type redfishError struct {
	Error struct {
		Info []struct {
			MessageID         string   `json:"MessageId"`
			RelatedProperties []string `json:"RelatedProperties"`
			Resolution        string
		} `json:"@Message.ExtendedInfo"`
	} `json:"error"`
}

// TestTrustLimits is the attack of a slot loaded with certificates (16 of
// ~63 KiB each took the bridge to 273 MiB when read in a loop): a POST
// past the slot's byte cap, or past its count cap, is 400
// PropertyValueIncorrect on CertificateString with nothing stored; and
// reading the slot, its Certificates, a certificate and every other
// resource of the service (crawled) in a loop makes no apiserver request,
// so no user's reads draw on the budget the others' writes and logins
// need.
func TestTrustLimits(t *testing.T) {
	s := newStack(t, crds.Stock, nil)
	certs := s.uri + "/VirtualMedia/" + media.DefaultSlot + "/Certificates"
	refused := func(t *testing.T, body string) {
		t.Helper()
		rec := s.do(t, http.MethodPost, certs, body, "")
		if rec.Code != http.StatusBadRequest {
			t.Fatalf("POST past the cap: %d, want 400", rec.Code)
		}
		var e redfishError
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || len(e.Error.Info) != 1 {
			t.Fatalf("error body %s: %v", rec.Body, err)
		}
		m := e.Error.Info[0]
		if diff := cmp.Diff([]string{"PropertyValueIncorrect", "#/CertificateString"}, []string{m.MessageID[strings.LastIndex(m.MessageID, ".")+1:], strings.Join(m.RelatedProperties, ",")}); diff != "" {
			t.Errorf("message (-want +got):\n%s", diff)
		}
		t.Logf("refused: %s", m.Resolution)
	}
	members := func(t *testing.T) int {
		t.Helper()
		rec := s.do(t, http.MethodGet, certs, "", "")
		var c struct {
			N int `json:"Members@odata.count"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &c); err != nil || rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s %v", certs, rec.Code, rec.Body, err)
		}
		return c.N
	}

	t.Run("bytes", func(t *testing.T) {
		big := certPEM(t, "big", 40<<10)
		if rec := s.do(t, http.MethodPost, certs, certBody(t, big), ""); rec.Code != http.StatusCreated {
			t.Fatalf("first %d-byte certificate: %d %s", len(big), rec.Code, rec.Body)
		}
		refused(t, certBody(t, certPEM(t, "big2", 40<<10)))
		if n := members(t); n != 1 {
			t.Errorf("%d certificates after the refused POST, want 1", n)
		}
		if rec := s.do(t, http.MethodDelete, certs+"/1", "", ""); rec.Code != http.StatusNoContent {
			t.Fatalf("DELETE: %d %s", rec.Code, rec.Body)
		}
	})
	t.Run("count", func(t *testing.T) {
		small := certPEM(t, "small", 0)
		for i := range media.MaxCertificates {
			if rec := s.do(t, http.MethodPost, certs, certBody(t, small), ""); rec.Code != http.StatusCreated {
				t.Fatalf("certificate %d: %d %s", i+1, rec.Code, rec.Body)
			}
		}
		refused(t, certBody(t, small))
		if n := members(t); n != media.MaxCertificates {
			t.Errorf("%d certificates after the refused POST, want %d", n, media.MaxCertificates)
		}
	})
	t.Run("reads", func(t *testing.T) {
		before := s.requests.Load()
		uris := crawl(t, s)
		for _, want := range []string{s.uri + "/VirtualMedia/" + media.DefaultSlot, certs, certs + "/2",
			"/redfish/v1/Managers/" + s.key.ID() + "/VirtualMedia/" + media.DefaultSlot + "/Certificates/2"} {
			if !slices.Contains(uris, want) {
				t.Fatalf("the crawl did not reach %s: %v", want, uris)
			}
		}
		for range 10 {
			for _, uri := range uris {
				if rec := s.do(t, http.MethodGet, uri, "", ""); rec.Code != http.StatusOK {
					t.Fatalf("GET %s: %d %s", uri, rec.Code, rec.Body)
				}
			}
		}
		t.Logf("crawled %d resources", len(uris))
		if n := s.requests.Load() - before; n != 0 {
			t.Errorf("11 GETs of each of %d resources (the slots, their certificates, everything else) made %d apiserver requests, want 0", len(uris), n)
		}
	})
}

// crawl GETs every resource reachable from the service root through
// @odata.id links and returns their URIs.
func crawl(t *testing.T, s *stack) []string {
	t.Helper()
	seen := map[string]bool{"/redfish/v1": true}
	queue := []string{"/redfish/v1"}
	var out []string
	for len(queue) > 0 && len(out) < 500 {
		uri := queue[0]
		queue = queue[1:]
		rec := s.do(t, http.MethodGet, uri, "", "")
		if rec.Code != http.StatusOK {
			t.Logf("crawl: GET %s: %d (left out)", uri, rec.Code)
			continue
		}
		out = append(out, uri)
		var body any
		if json.Unmarshal(rec.Body.Bytes(), &body) != nil {
			continue // $metadata is XML
		}
		for _, link := range odataIDs(body) {
			link, _, _ = strings.Cut(link, "#")
			if strings.HasPrefix(link, "/redfish/v1") && !seen[link] {
				seen[link] = true
				queue = append(queue, link)
			}
		}
	}
	return out
}

// odataIDs are the @odata.id values anywhere in v.
func odataIDs(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && k == "@odata.id" {
				out = append(out, s)
			}
			out = append(out, odataIDs(e)...)
		}
	case []any:
		for _, e := range v {
			out = append(out, odataIDs(e)...)
		}
	}
	return out
}

// TestPlantedTrustIgnored is the attack of a ConfigMap planted under a
// slot's trust name by someone allowed to create ConfigMaps in the VM's
// namespace, saying verifyCertificate false: one naming the VM as its
// owner (with another UID), without and with the bridge's labels. The
// slot keeps VerifyCertificate true (for the Redfish GET and for the
// insert's import), and a write to its trust is refused (409) instead of
// editing the planted object.
func TestPlantedTrustIgnored(t *testing.T) {
	s := newStack(t, crds.Stock, nil)
	ctx := t.Context()
	cms := s.adminKube.CoreV1().ConfigMaps(stackNS)
	other := system.Key{Namespace: stackNS, Name: "sentinel"}
	if _, err := s.admin.Resource(kubevirt.VirtualMachines).Namespace(stackNS).Create(ctx, demo.SampleVM(stackNS, other.Name), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sentinel := "/redfish/v1/Systems/" + other.ID() + "/VirtualMedia/" + media.DefaultSlot + "/Certificates"
	for i, tc := range []struct {
		name   string
		slot   string
		labels map[string]string
	}{
		{"no labels", media.DefaultSlot, nil},
		{"bridge labels, another UID", media.USBSlot, map[string]string{
			media.LabelComponent: media.ComponentTrust, media.LabelPartOf: media.PartOf, media.LabelSlot: media.USBSlot,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			planted := &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{
					Name: media.TrustConfigMapName(s.key, tc.slot), Namespace: stackNS, Labels: tc.labels,
					OwnerReferences: []metav1.OwnerReference{{
						APIVersion: kubevirt.APIVersion, Kind: kubevirt.Kind, Name: s.key.Name,
						UID: types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i)),
					}},
				},
				Data: map[string]string{"verifyCertificate": "false"},
			}
			if _, err := cms.Create(ctx, planted, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			// The bridge's own trust write returns once its cache shows it,
			// so the cache has seen the planted one (one watch, in order).
			if rec := s.do(t, http.MethodPost, sentinel, certBody(t, certPEM(t, "sentinel", 0)), ""); rec.Code != http.StatusCreated {
				t.Fatalf("sentinel POST %s: %d %s", sentinel, rec.Code, rec.Body)
			}
			slot := s.uri + "/VirtualMedia/" + tc.slot
			rec := s.do(t, http.MethodGet, slot, "", "")
			var got struct{ VerifyCertificate *bool }
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusOK || got.VerifyCertificate == nil {
				t.Fatalf("GET %s: %d %s %v", slot, rec.Code, rec.Body, err)
			}
			if !*got.VerifyCertificate {
				t.Errorf("GET %s: VerifyCertificate false, taken from the planted ConfigMap", slot)
			}
			trust, err := s.media.Trust(ctx, s.key, tc.slot)
			if err != nil {
				t.Fatal(err)
			}
			if !trust.VerifyCertificate {
				t.Errorf("the insert's trust of %s: VerifyCertificate false, taken from the planted ConfigMap", tc.slot)
			}
			if rec := s.do(t, http.MethodPatch, slot, `{"VerifyCertificate": true}`, ""); rec.Code != http.StatusConflict {
				t.Errorf("PATCH over the planted ConfigMap: %d %s, want 409", rec.Code, rec.Body)
			}
			after, err := cms.Get(ctx, planted.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(planted.Data, after.Data); diff != "" {
				t.Errorf("the planted ConfigMap was edited (-planted +now):\n%s", diff)
			}
		})
	}
}
