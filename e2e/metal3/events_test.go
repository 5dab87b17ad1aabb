package metal3

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/redfish-bridge/redfish-bridge/harness/eventrecv"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/media/download"
)

// eventPolicy is the bridge's --event-destination-policy in this suite:
// the product's default (deny-loopback) with the receivers' 127.0.0.1
// allowed.
const eventPolicy = "deny-loopback,allow=127.0.0.1/32"

// eventBound bounds how long after BMO reports the host powered on its
// power event may take to reach the receiver.
const eventBound = 30 * time.Second

// eventToken is the header the subscription's httpHeadersRef Secret adds
// to every delivery.
const eventToken = "X-Metal3-Token"

var bmcEventSubscriptions = schema.GroupVersionResource{Group: "metal3.io", Version: "v1alpha1", Resource: "bmceventsubscriptions"}

// mustAddrPolicy parses an --event-destination-policy value.
func mustAddrPolicy(s string) download.AddrPolicy {
	p, err := download.ParseAddrPolicy(s)
	if err != nil {
		panic(err)
	}
	return p
}

// eventSub is a BMCEventSubscription of a host, its receiver, and the
// bridge subscription baremetal-operator created for it through Ironic's
// vendor passthru.
type eventSub struct {
	h    *host
	name string
	rc   *eventrecv.Receiver
	id   string // status.subscriptionID
}

// subscribe creates a BMCEventSubscription for the host (Destination a
// receiver, httpHeadersRef a Secret with eventToken) and waits until
// baremetal-operator reports the subscription's id; the bridge must hold
// it with the context, and show no header.
func (h *host) subscribe(t *testing.T) *eventSub {
	t.Helper()
	es := &eventSub{h: h, name: h.name + "-events", rc: eventrecv.Start(t)}
	headers := &corev1.Secret{
		// baremetal-operator's client caches only the Secrets with this
		// label: without it, "Secret ... not found".
		ObjectMeta: metav1.ObjectMeta{Name: es.name + "-headers", Namespace: h.ns, Labels: map[string]string{"environment.metal3.io": "baremetal"}},
		StringData: map[string]string{eventToken: "t0ken-" + string(h.variant)},
	}
	if _, err := h.kube.CoreV1().Secrets(h.ns).Create(t.Context(), headers, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create headers Secret: %v", err)
	}
	sub := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "metal3.io/v1alpha1",
		"kind":       "BMCEventSubscription",
		"metadata":   map[string]any{"name": es.name, "namespace": h.ns},
		"spec": map[string]any{
			"hostName":       h.name,
			"destination":    es.rc.URL(),
			"context":        "metal3-" + string(h.variant),
			"httpHeadersRef": map[string]any{"name": headers.Name, "namespace": h.ns},
		},
	}}
	if _, err := h.dyn.Resource(bmcEventSubscriptions).Namespace(h.ns).Create(t.Context(), sub, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create BMCEventSubscription: %v", err)
	}
	h.eventually(t, "BMCEventSubscription's subscriptionID", func(ctx context.Context) error {
		got, err := h.dyn.Resource(bmcEventSubscriptions).Namespace(h.ns).Get(ctx, es.name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("read BMCEventSubscription: %w", err)
		}
		es.id, _, _ = unstructured.NestedString(got.Object, "status", "subscriptionID")
		if es.id == "" {
			msg, _, _ := unstructured.NestedString(got.Object, "status", "error")
			return fmt.Errorf("no subscriptionID yet (error %q)", msg)
		}
		return nil
	})
	r := h.redfish().Do(t, http.MethodGet, "/redfish/v1/EventService/Subscriptions/"+es.id, nil)
	body := r.JSON(t)
	if r.Status != http.StatusOK || body["Destination"] != es.rc.URL() || body["Context"] != "metal3-"+string(h.variant) {
		t.Fatalf("the bridge's subscription %s: %d %v", es.id, r.Status, body)
	}
	if hs, _ := body["HttpHeaders"].([]any); len(hs) != 0 {
		t.Errorf("the bridge showed the subscription's HttpHeaders: %v", hs)
	}
	return es
}

// poweredOn waits for the receiver's ResourcePoweredOn about the host's
// System received since (when the change was asked for), at the latest
// eventBound after BMO reported the host on (the caller's wait ended),
// carrying the header.
func (es *eventSub) poweredOn(t *testing.T, since time.Time) {
	t.Helper()
	origin := "/redfish/v1/Systems/" + es.h.key.ID()
	e := es.rc.WaitFor(t, origin, since, time.Since(since)+eventBound, "ResourcePoweredOn")
	t.Logf("TIMING metal3 %s event ResourcePoweredOn: %s after the provisioning was asked for",
		es.h.variant, e.At.Sub(since).Round(time.Millisecond))
	if got, want := e.Header.Get(eventToken), "t0ken-"+string(es.h.variant); got != want || e.Context != "metal3-"+string(es.h.variant) {
		t.Errorf("event with %s %q context %q, want %q and metal3-%s", eventToken, got, e.Context, want, es.h.variant)
	}
}

// delete deletes the BMCEventSubscription and waits until it is gone
// (baremetal-operator's finalizer deleted the subscription through Ironic):
// the bridge's subscription must be gone too.
func (es *eventSub) delete(t *testing.T) {
	t.Helper()
	h := es.h
	if err := h.dyn.Resource(bmcEventSubscriptions).Namespace(h.ns).Delete(t.Context(), es.name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete BMCEventSubscription: %v", err)
	}
	h.eventually(t, "BMCEventSubscription gone", func(ctx context.Context) error {
		_, err := h.dyn.Resource(bmcEventSubscriptions).Namespace(h.ns).Get(ctx, es.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read BMCEventSubscription: %w", err)
		}
		return errors.New("still there")
	})
	if r := h.redfish().Do(t, http.MethodGet, "/redfish/v1/EventService/Subscriptions/"+es.id, nil); r.Status != http.StatusNotFound {
		t.Errorf("the bridge's subscription %s after the BMCEventSubscription's delete: %d, want 404", es.id, r.Status)
	}
}

// redfish is a Redfish client of the host's bridge as its administrator.
func (h *host) redfish() testutil.Redfish {
	return testutil.Redfish{Base: h.env.URL, User: h.env.User, Password: h.env.Password, HTTP: testutil.Insecure()}
}
