package service_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// testEvents runs on testLeaderFailover's cluster once b leads and vm-0 is
// on (no cluster of its own): a third replica c starts, and b and c must
// each publish, under the same Event.ID, what nobody asked the bridge
// for: a runStrategy Halted written by someone else as `virtctl stop`
// does (ResourcePoweredOff), an On through Redfish (ResourcePoweredOn), a
// guest shutdown (ResourcePoweredOff), a System created and removed
// (ResourceCreated, ResourceRemoved), an insert, its import and an eject
// (ResourceChanged, ResourceStateChanged, TaskStarted, TaskCompletedOK),
// and the guest shutdown's entry in both replicas' LogService. c, started
// with vm-0 running, must not report vm-0 as created (a restart replays
// no fleet).
func testEvents(t *testing.T, e *env, b *bridge) {
	ctx := t.Context()
	c := e.start(t, "replica-c")
	subB, subC := b.Events.Subscribe(1000), c.Events.Subscribe(1000)
	t.Cleanup(subB.Close)
	t.Cleanup(subC.Close)
	key := system.Key{Namespace: e.ns, Name: "vm-0"}
	sys := "/redfish/v1/Systems/" + key.ID()
	seen := map[*event.Subscription][]event.Event{}
	// both waits for the event of msg about origin on b's and c's buses,
	// and requires the same ID on both.
	both := func(what, msg, origin string) event.Event {
		t.Helper()
		var got []event.Event
		for _, s := range []*event.Subscription{subB, subC} {
			got = append(got, awaitEvent(t, s, seen, what, msg, origin))
		}
		if got[0].ID != got[1].ID {
			t.Errorf("%s: replica b published ID %s, replica c %s: want one ID", what, got[0].ID, got[1].ID)
		}
		return got[0]
	}

	// A subscription made through c (any replica), delivered by b (the
	// leader): the events reach its receiver with the bus's IDs.
	rc := newReceiver(t)
	if code, resp := e.call(t, c, http.MethodPost, "/redfish/v1/EventService/Subscriptions",
		map[string]any{"Destination": rc.URL, "Protocol": "Redfish", "Context": "failover", "EventTypes": []string{"Alert"}}); code != http.StatusCreated {
		t.Fatalf("subscribe: %d %v", code, resp)
	}
	// A Server-Sent Events stream of c (every replica streams from its
	// own bus), read line by line as a client does, filtered to the
	// Systems' power events: the same events under the same IDs.
	stream, resp := testutil.Redfish{Base: "http://" + c.Addr, User: demo.AdminUser, Password: e.password}.OpenSSE(t,
		"/redfish/v1/EventService/SSE?$filter="+url.QueryEscape("(ResourceType eq 'ComputerSystem') and (RegistryPrefix eq 'ResourceEvent')"))
	if stream == nil {
		t.Fatalf("open an event stream: %d %s", resp.Status, resp.Body)
	}
	delivered := func(what string, ev event.Event) {
		t.Helper()
		got := rc.await(t, what, ev.MessageID, ev.Origin)
		if got.id != ev.ID || got.context != "failover" {
			t.Errorf("%s: delivered %+v, want ID %s and the subscription's Context", what, got, ev.ID)
		}
		if streamed, read := stream.Await(t, what, ev.MessageID, ev.Origin); streamed.ID != ev.ID {
			t.Errorf("%s: streamed ID %s, want %s (read %d events)", what, streamed.ID, ev.ID, len(read))
		}
	}

	// virtctl stop of a VM run by runStrategy: someone else's write.
	patch := []byte(`{"spec":{"runStrategy":"` + string(kubevirt.RunStrategyHalted) + `"}}`)
	if _, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(e.ns).Patch(ctx, "vm-0", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	delivered("someone else's runStrategy Halted", both("someone else's runStrategy Halted", "ResourceEvent.1.3.0.ResourcePoweredOff", sys))

	if code, resp := e.call(t, b, http.MethodPost, sys+"/Actions/ComputerSystem.Reset", map[string]any{"ResetType": "On"}); code >= 300 {
		t.Fatalf("On: %d %v", code, resp)
	}
	delivered("an On", both("an On", "ResourceEvent.1.3.0.ResourcePoweredOn", sys))

	// The Once boot is long done: this VMI's end is the guest's own, once
	// it runs (an On reads On while a restart the bridge follows is under
	// way).
	eventually(t, "vm-0's new VMI to run", func() bool {
		vmi, err := e.admin.Resource(kubevirt.VirtualMachineInstances).Namespace(e.ns).Get(ctx, "vm-0", metav1.GetOptions{})
		return err == nil && kubevirt.PhaseOf(vmi) == kubevirt.PhaseRunning
	})
	if err := e.sim.GuestShutdown(ctx, key); err != nil {
		t.Fatal(err)
	}
	ev := both("a guest shutdown", "ResourceEvent.1.3.0.ResourcePoweredOff", sys)
	delivered("a guest shutdown", ev)
	if ev.System != key || ev.ResourceType != "ComputerSystem" || ev.Message != "The resource `"+key.ID()+"` has powered off." {
		t.Errorf("guest shutdown event %+v", ev)
	}

	// Each replica's LogService of vm-0 holds the guest shutdown under
	// the event's ID; ClearLog empties the log of the replica answering.
	entries := sys + "/LogServices/Log/Entries"
	for name, r := range map[string]*bridge{"b": b, "c": c} {
		if !logHas(t, e, r, entries, ev.ID) {
			t.Errorf("replica %s's log of %s lacks the guest shutdown %s", name, key, ev.ID)
		}
	}
	if code, resp := e.call(t, c, http.MethodPost, sys+"/LogServices/Log/Actions/LogService.ClearLog", map[string]any{}); code != http.StatusNoContent {
		t.Fatalf("ClearLog: %d %v", code, resp)
	}
	if _, resp := e.call(t, c, http.MethodGet, entries, nil); len(resp["Members"].([]any)) != 0 {
		t.Errorf("replica c's log after its ClearLog: %v", resp["Members"])
	}

	// Media and its Task: an insert, its import, an eject.
	slot := "/redfish/v1/Managers/" + key.ID() + "/VirtualMedia/cd0"
	if code, resp := e.call(t, b, http.MethodPost, slot+"/Actions/VirtualMedia.InsertMedia", map[string]any{"Image": e.image.url()}); code >= 300 {
		t.Fatalf("InsertMedia: %d %v", code, resp)
	}
	both("an insert", "ResourceEvent.1.3.0.ResourceChanged", slot)
	both("its Task", "TaskEvent.1.0.3.TaskStarted", "/redfish/v1/TaskService/Tasks/")
	both("its import", "ResourceEvent.1.3.0.ResourceStateChanged", slot)
	both("its Task's end", "TaskEvent.1.0.3.TaskCompletedOK", "/redfish/v1/TaskService/Tasks/")
	if code, resp := e.call(t, b, http.MethodPost, slot+"/Actions/VirtualMedia.EjectMedia", map[string]any{}); code >= 300 {
		t.Fatalf("EjectMedia: %d %v", code, resp)
	}
	both("an eject", "ResourceEvent.1.3.0.ResourceChanged", slot)

	vms := e.admin.Resource(kubevirt.VirtualMachines).Namespace(e.ns)
	if _, err := vms.Create(ctx, demo.SampleVM(e.ns, "vm-new"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	newSys := "/redfish/v1/Systems/" + e.ns + ".vm-new"
	both("a VM created", "ResourceEvent.1.3.0.ResourceCreated", newSys)
	// The stream's client reconnects to ANOTHER replica, b, with the
	// Last-Event-ID of the last event it read (the guest shutdown, on c):
	// it reads what b published since that its filter admits, then the
	// live events, none missing and none twice.
	stream.Close()
	resumed, resp := testutil.Redfish{Base: "http://" + b.Addr, User: demo.AdminUser, Password: e.password}.OpenSSEAfter(t,
		"/redfish/v1/EventService/SSE?$filter="+url.QueryEscape("(ResourceType eq 'ComputerSystem') and (RegistryPrefix eq 'ResourceEvent')"), ev.ID)
	if resumed == nil {
		t.Fatalf("reconnect to replica b: %d %s", resp.Status, resp.Body)
	}
	if err := vms.Delete(ctx, "vm-new", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	removed := both("a VM deleted", "ResourceEvent.1.3.0.ResourceRemoved", newSys)
	_, read := resumed.Await(t, "a VM deleted, on the resumed stream", removed.MessageID, removed.Origin)
	if diff := cmp.Diff(streamedAfter(seen[subB], ev.ID), sseIDs(read)); diff != "" || len(resumed.Comments) != 0 {
		t.Errorf("the stream resumed on b after %s (-b's events its filter admits +read), comments %q:\n%s", ev.ID, resumed.Comments, diff)
	}

	resumed.Close()

	testLeaderChange(t, e, b, c, rc, subC, seen)

	for _, ev := range seen[subC] {
		if ev.MessageID == "ResourceEvent.1.3.0.ResourceCreated" && ev.Origin == sys {
			t.Errorf("replica c reported %s created at its start: %+v", key, ev)
		}
	}
}

// streamedAfter are the IDs of the events of evs after the one of ID id
// that the resumed stream's filter admits (a System's ResourceEvents).
func streamedAfter(evs []event.Event, id string) []string {
	out := []string{}
	after := false
	for _, ev := range evs {
		if after && ev.ResourceType == "ComputerSystem" && strings.HasPrefix(ev.MessageID, "ResourceEvent.") {
			out = append(out, ev.ID)
		}
		after = after || ev.ID == id
	}
	return out
}

func sseIDs(evs []testutil.SSEEvent) []string {
	out := []string{}
	for _, ev := range evs {
		out = append(out, ev.ID)
	}
	return out
}

// awaitEvent reads s until the event of msg about origin (or under it,
// when origin ends in "/"), recording every event read in seen[s]; it fails the test when s ends or waitTimeout
// passes first.
func awaitEvent(t *testing.T, s *event.Subscription, seen map[*event.Subscription][]event.Event, what, msg, origin string) event.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	for {
		select {
		case ev, ok := <-s.C:
			if !ok {
				t.Fatalf("%s: subscription ended: %v", what, s.Err())
			}
			seen[s] = append(seen[s], ev)
			if ev.MessageID == msg && (ev.Origin == origin || strings.HasSuffix(origin, "/") && strings.HasPrefix(ev.Origin, origin)) {
				return ev
			}
		case <-ctx.Done():
			var ids []string
			for _, ev := range seen[s] {
				ids = append(ids, ev.MessageID+" "+ev.Origin)
			}
			t.Fatalf("%s: no %s about %s within %s; events read:\n%s", what, msg, origin, waitTimeout, strings.Join(ids, "\n"))
		}
	}
}

// logHas reports whether r's log at entries has an entry of id.
func logHas(t *testing.T, e *env, r *bridge, entries, id string) bool {
	t.Helper()
	code, resp := e.call(t, r, http.MethodGet, entries, nil)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %v", entries, code, resp)
	}
	for _, m := range resp["Members"].([]any) {
		if m.(map[string]any)["Id"] == id {
			return true
		}
	}
	return false
}
