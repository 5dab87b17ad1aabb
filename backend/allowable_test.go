package backend_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// systemKind is a kind of System: a sample VM and the Redfish writes that
// bring it to the state walked.
type systemKind struct {
	name   string
	sample func(namespace, name string) *unstructured.Unstructured
	setup  []write
}

type write struct{ path, body string }

var systemKinds = []systemKind{
	{name: "authored-uefi", sample: demo.SampleVM},
	{name: "authored-uefi-secureboot", sample: demo.SampleVM,
		setup: []write{{"/SecureBoot", `{"SecureBootEnable":true}`}}},
	{name: "bridge-firmware", sample: demo.SampleFirmwareVM},
	{name: "bridge-firmware-uefi-secureboot", sample: demo.SampleFirmwareVM,
		setup: []write{{"", `{"Boot":{"BootSourceOverrideMode":"UEFI"}}`}, {"/SecureBoot", `{"SecureBootEnable":true}`}}},
}

// advertised is one value of one @Redfish.AllowableValues: where ("Boot/
// BootSourceOverrideMode", "Actions/#ComputerSystem.Reset/ResetType",
// "ResetActionInfo/ResetType") and the value.
type advertised struct{ where, value string }

// TestAdvertisedValuesAccepted walks, on a real apiserver and both CRD
// variants, every value a System advertises (every @Redfish.AllowableValues
// in its body, Boot's and the Reset action's, and the Reset ActionInfo's)
// on Systems of each kind: the sample VM whose author owns
// firmware.bootloader.efi and the firmware sample VM whose firmware the
// bridge may change, each also with Secure Boot enabled. Each value is
// written on a fresh System of that kind and must be accepted (2xx): a
// System never advertises what it then refuses. The boot modes it does not
// advertise are refused with a 400 whose resolution says what is, never
// that the system is in the mode asked for; BiosSetup is never advertised
// and a 400 PropertyValueNotInList. Every kind without Secure Boot switches
// to Legacy, the author's efi too (removed first).
func TestAdvertisedValuesAccepted(t *testing.T) {
	for _, v := range crds.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			testAdvertisedValuesAccepted(t, v)
		})
	}
}

func testAdvertisedValuesAccepted(t *testing.T, v crds.Variant) {
	s := newStack(t, v, nil)
	images := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(make([]byte, 4096)) }))
	t.Cleanup(images.Close)
	n := 0
	fresh := func(k systemKind) string {
		t.Helper()
		n++
		name := fmt.Sprintf("walk-%d", n)
		if _, err := s.admin.Resource(kubevirt.VirtualMachines).Namespace(stackNS).Create(t.Context(), k.sample(stackNS, name), metav1.CreateOptions{FieldManager: "demo-author"}); err != nil {
			t.Fatal(err)
		}
		uri := "/redfish/v1/Systems/" + system.Key{Namespace: stackNS, Name: name}.ID()
		testutil.Eventually(t, name+" served", 30*time.Second, 10*time.Millisecond, func(context.Context) error {
			if rec := s.do(t, http.MethodGet, uri, "", ""); rec.Code != http.StatusOK {
				return fmt.Errorf("GET %d", rec.Code)
			}
			return nil
		})
		for _, w := range k.setup {
			if rec := s.do(t, http.MethodPatch, uri+w.path, w.body, ""); rec.Code/100 != 2 {
				t.Fatalf("%s setup PATCH %s %s: %d %s", k.name, w.path, w.body, rec.Code, rec.Body)
			}
		}
		return uri
	}
	for _, k := range systemKinds {
		t.Run(k.name, func(t *testing.T) {
			vals := advertisedValues(t, s, fresh(k))
			for _, a := range vals {
				uri := fresh(k)
				if now := advertisedValues(t, s, uri); !slices.Contains(now, a) {
					t.Fatalf("%s on a fresh %s: not advertised (%v)", a, k.name, now)
				}
				method, path, body := writeOf(a, images.URL)
				if method == "" {
					t.Errorf("%s: the walk does not know how to write %s", k.name, a.where)
					continue
				}
				rec := s.do(t, method, uri+path, body, "")
				if rec.Code/100 != 2 {
					t.Errorf("%s advertises %s=%s, then %s %s %s answers %d %s", k.name, a.where, a.value, method, path, body, rec.Code, rec.Body)
				}
			}
			modes := map[string]bool{}
			for _, a := range vals {
				if a.where == "Boot/BootSourceOverrideMode" {
					modes[a.value] = true
				}
			}
			if k.setup == nil && !modes[string(system.BootLegacy)] {
				t.Errorf("%s: Legacy not advertised (%v): without Secure Boot the bridge switches it (removing an author's efi)", k.name, vals)
			}
			uri := fresh(k)
			for _, m := range system.BootModes {
				if modes[string(m)] {
					continue
				}
				rec := s.do(t, http.MethodPatch, uri, `{"Boot":{"BootSourceOverrideMode":"`+string(m)+`"}}`, "")
				if rec.Code != http.StatusBadRequest {
					t.Errorf("%s: mode %s not advertised, PATCH answers %d %s: want a 400", k.name, m, rec.Code, rec.Body)
				}
				if body := rec.Body.String(); strings.Contains(body, "BootSourceOverrideMode is "+string(m)) {
					t.Errorf("%s: the refusal of %s says the system is in it: %s", k.name, m, body)
				}
			}
			rec := s.do(t, http.MethodPatch, uri, `{"Boot":{"BootSourceOverrideTarget":"BiosSetup","BootSourceOverrideEnabled":"Once"}}`, "")
			if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "PropertyValueNotInList") {
				t.Errorf("%s: BiosSetup answers %d %s, want 400 PropertyValueNotInList", k.name, rec.Code, rec.Body)
			}
		})
	}
}

// writeOf is the request that writes a: method ("" when unknown), path
// below the System and body. A target is sent with Enabled Once, as Ironic
// sets a boot device, and UefiHttp with its HttpBootUri.
func writeOf(a advertised, images string) (method, path, body string) {
	switch a.where {
	case "Boot/BootSourceOverrideTarget":
		extra := ""
		if a.value == string(system.BootUefiHttp) {
			extra = `,"HttpBootUri":"` + images + `/boot.iso"`
		}
		return http.MethodPatch, "", `{"Boot":{"BootSourceOverrideTarget":"` + a.value + `","BootSourceOverrideEnabled":"Once"` + extra + `}}`
	case "Boot/BootSourceOverrideEnabled", "Boot/BootSourceOverrideMode":
		return http.MethodPatch, "", `{"Boot":{"` + strings.TrimPrefix(a.where, "Boot/") + `":"` + a.value + `"}}`
	case "Actions/#ComputerSystem.Reset/ResetType", "ResetActionInfo/ResetType":
		return http.MethodPost, "/Actions/ComputerSystem.Reset", `{"ResetType":"` + a.value + `"}`
	}
	return "", "", ""
}

// advertisedValues collects every @Redfish.AllowableValues of the System
// at uri (at any depth) and the AllowableValues of its Reset ActionInfo.
func advertisedValues(t *testing.T, s *stack, uri string) []advertised {
	t.Helper()
	get := func(path string) map[string]any {
		rec := s.do(t, http.MethodGet, path, "", "")
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
		var body map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		return body
	}
	var out []advertised
	var walk func(prefix string, o map[string]any)
	walk = func(prefix string, o map[string]any) {
		for _, k := range slices.Sorted(maps.Keys(o)) {
			switch val := o[k].(type) {
			case map[string]any:
				walk(prefix+k+"/", val)
			case []any:
				name, ok := strings.CutSuffix(k, "@Redfish.AllowableValues")
				if !ok {
					continue
				}
				for _, v := range val {
					out = append(out, advertised{prefix + name, fmt.Sprint(v)})
				}
			}
		}
	}
	walk("", get(uri))
	info := get(uri + "/ResetActionInfo")
	for _, p := range info["Parameters"].([]any) {
		p := p.(map[string]any)
		for _, v := range p["AllowableValues"].([]any) {
			out = append(out, advertised{"ResetActionInfo/" + p["Name"].(string), fmt.Sprint(v)})
		}
	}
	return out
}
