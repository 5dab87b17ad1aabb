package ironic

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/eventrecv"
	"github.com/redfish-bridge/redfish-bridge/harness/ironicproc"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/media/download"
)

// eventPolicy is the bridge's --event-destination-policy in this suite:
// the product's default (deny-loopback) with the receivers' 127.0.0.1
// allowed, so another loopback address is still refused.
const eventPolicy = "deny-loopback,allow=127.0.0.1/32"

// eventBound bounds how long after Ironic (or the apiserver) reports a
// power change its event may take to reach the receiver.
const eventBound = 30 * time.Second

// mustAddrPolicy parses an --event-destination-policy value.
func mustAddrPolicy(s string) download.AddrPolicy {
	p, err := download.ParseAddrPolicy(s)
	if err != nil {
		panic(err)
	}
	return p
}

// eventsScenario (Ironic 39's redfish vendor passthru, what
// baremetal-operator's BMCEventSubscription calls): create_subscription
// with a receiver the test runs as Destination, get_subscription and
// get_all_subscriptions find it under the bridge's id (which Ironic 39's
// id validation accepts); the receiver gets ResourcePoweredOn after Ironic
// powers the node on, ResourcePoweredOff after an out-of-band forced stop
// through virt-api (virtctl stop --force --grace-period 0), and
// ResourcePoweredOn again when the conductor's power sync restores it;
// delete_subscription removes it. A destination the address policy
// refuses and an id with ".." are refused with nothing created.
func eventsScenario(t *testing.T, s *suite, v crds.Variant) {
	rc := eventrecv.Start(t)
	n := s.enroll(t, v, vmEvents, "ramdisk", nil)
	origin := "/redfish/v1/Systems/" + n.key.ID()
	subContext := "ironic-" + n.uuid
	n.step(t, "vendor interface redfish, manage", func() {
		if _, err := s.api.PatchNode(t.Context(), n.uuid, map[string]any{"op": "replace", "path": "/vendor_interface", "value": "redfish"}); err != nil {
			t.Fatalf("vendor_interface redfish: %v", err)
		}
		n.provision(t, "manage", "manageable", nil)
	})
	var id string
	n.step(t, "create_subscription", func() {
		var got map[string]any
		if err := s.api.VendorPassthru(t.Context(), n.uuid, http.MethodPost, "create_subscription",
			map[string]any{"Destination": rc.URL(), "Context": subContext}, &got); err != nil {
			t.Fatalf("create_subscription: %v", err)
		}
		id, _ = got["Id"].(string)
		types, _ := got["EventTypes"].([]any)
		if id == "" || got["Destination"] != rc.URL() || got["Context"] != subContext || got["Protocol"] != "Redfish" || !slices.Equal(types, []any{"Alert"}) {
			t.Fatalf("create_subscription answered %v", got)
		}
	})
	n.step(t, "get_subscription, get_all_subscriptions", func() {
		var got map[string]any
		if err := s.api.VendorPassthru(t.Context(), n.uuid, http.MethodGet, "get_subscription", map[string]any{"id": id}, &got); err != nil || got["Id"] != id {
			t.Fatalf("get_subscription %s: %v, %v", id, got, err)
		}
		if uris := n.subscriptions(t); !slices.Contains(uris, "/redfish/v1/EventService/Subscriptions/"+id) {
			t.Fatalf("get_all_subscriptions: %v, want subscription %s", uris, id)
		}
	})
	n.step(t, "refused: a loopback destination the policy denies, an id with ..", func() {
		before := n.subscriptions(t)
		err := s.api.VendorPassthru(t.Context(), n.uuid, http.MethodPost, "create_subscription",
			map[string]any{"Destination": "http://127.0.0.2:9/events", "Context": subContext}, nil)
		var apiErr *ironicproc.APIError
		if !errors.As(err, &apiErr) || !strings.Contains(apiErr.Fault, "returned code 400") || !strings.Contains(apiErr.Fault, "the address policy refuses 127.0.0.2") {
			t.Errorf("create_subscription to 127.0.0.2: %v, want the bridge's 400 (the address policy) through Ironic", err)
		}
		err = s.api.VendorPassthru(t.Context(), n.uuid, http.MethodDelete, "delete_subscription", map[string]any{"id": "../" + id}, nil)
		if !errors.As(err, &apiErr) || apiErr.Status != http.StatusBadRequest {
			t.Errorf("delete_subscription ../%s: %v, want Ironic's 400", id, err)
		}
		if after := n.subscriptions(t); !slices.Equal(before, after) {
			t.Errorf("subscriptions %v, after the refusals %v", before, after)
		}
	})
	n.step(t, "power on: the receiver gets ResourcePoweredOn", func() {
		since := time.Now()
		n.power(t, "power on", "power on")
		on := time.Now()
		e := rc.WaitFor(t, origin, since, time.Since(since)+eventBound, "ResourcePoweredOn")
		t.Logf("TIMING ironic 39 %s event ResourcePoweredOn: %s after the power request, %s after Ironic reported power on",
			v, e.At.Sub(since).Round(time.Millisecond), e.At.Sub(on).Round(time.Millisecond))
		if e.Context != subContext {
			t.Errorf("event context %q, want %q", e.Context, subContext)
		}
	})
	n.step(t, "out-of-band forced stop: ResourcePoweredOff, then the power sync's ResourcePoweredOn", func() {
		since := time.Now()
		if err := n.kube.CoreV1().RESTClient().Put().AbsPath(kubevirt.SubresourcePath(n.key.Namespace, n.key.Name, kubevirt.SubresourceStop)).
			Body(kubevirt.ForceStopBody()).Do(t.Context()).Error(); err != nil {
			t.Fatalf("stop %s through virt-api: %v", n.key, err)
		}
		stopped := time.Now()
		off := rc.WaitFor(t, origin, since, eventBound, "ResourcePoweredOff")
		t.Logf("TIMING ironic 39 %s event ResourcePoweredOff: %s after the stop answered", v, off.At.Sub(stopped).Round(time.Millisecond))
		rc.WaitFor(t, origin, off.At, stepTimeout, "ResourcePoweredOn")
		n.wait(t, "Ironic power on", func(x ironicproc.Node) bool { return x.Stable() && str(x.PowerState) == "power on" })
	})
	n.step(t, "delete_subscription", func() {
		if err := s.api.VendorPassthru(t.Context(), n.uuid, http.MethodDelete, "delete_subscription", map[string]any{"id": id}, nil); err != nil {
			t.Fatalf("delete_subscription %s: %v", id, err)
		}
		if uris := n.subscriptions(t); slices.Contains(uris, "/redfish/v1/EventService/Subscriptions/"+id) {
			t.Errorf("get_all_subscriptions after delete: %v", uris)
		}
		err := s.api.VendorPassthru(t.Context(), n.uuid, http.MethodGet, "get_subscription", map[string]any{"id": id}, nil)
		if err == nil {
			t.Errorf("get_subscription %s after delete: found", id)
		}
	})
	n.step(t, "power off", func() {
		n.expectForced(t, func() { n.power(t, "power off", "power off") })
		n.waitVMI(t, "VMI gone after power off", func(vmi *unstructured.Unstructured) bool { return vmi == nil })
	})
	t.Logf("the receiver got %d events in all", rc.Count())
	n.checkFields(t)
}

// subscriptions is get_all_subscriptions' members' @odata.ids.
func (n *node) subscriptions(t *testing.T) []string {
	t.Helper()
	var got struct {
		Members []struct {
			ID string `json:"@odata.id"`
		} `json:"Members"`
	}
	if err := n.s.api.VendorPassthru(t.Context(), n.uuid, http.MethodGet, "get_all_subscriptions", nil, &got); err != nil {
		t.Fatalf("get_all_subscriptions: %v", err)
	}
	var uris []string
	for _, m := range got.Members {
		uris = append(uris, m.ID)
	}
	return uris
}
