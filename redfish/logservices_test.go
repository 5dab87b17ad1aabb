package redfish

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/eventlog"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// logEnv is a service whose LogServices read a real eventlog.Log of bus.
func logEnv(t *testing.T) (*env, *event.Bus, *eventlog.Log) {
	t.Helper()
	bus := &event.Bus{}
	log := eventlog.New(bus, 3)
	go func() { _ = log.Start(t.Context()) }()
	e := newEnvWith(t, func(b *Backends) { b.Logs = log })
	return e, bus, log
}

// publish publishes n power events of key and waits until log holds want.
func publish(t *testing.T, bus *event.Bus, log *eventlog.Log, key system.Key, n, want int) {
	t.Helper()
	for i := range n {
		bus.Publish(event.Event{ID: fmt.Sprintf("%s-%d", key.Name, i), System: key,
			MessageID: "ResourceEvent.1.3.0.ResourcePoweredOff", Message: "The resource `" + key.ID() + "` has powered off.",
			MessageArgs: []string{key.ID()}, Severity: event.SeverityOK, Origin: "/redfish/v1/Systems/" + key.ID(),
			ResourceType: "ComputerSystem", Time: time.Unix(1800000000+int64(i), 0)})
	}
	testutil.Eventually(t, "the log to record the events", 10*time.Second, 10*time.Millisecond,
		testutil.True(func() bool { return len(log.Entries(key)) == want }))
}

// TestLogService: a System's events are its LogService's entries, newest
// first, the newest kept; the same log under its Manager, where Ansible's
// GetLogs looks, with the entries whole in Members; ClearLog empties it;
// another tenant's System's log is 404.
func TestLogService(t *testing.T) {
	e, bus, log := logEnv(t)
	key := system.Key{Namespace: "team-b", Name: "vm3"}
	publish(t, bus, log, key, 5, 3)
	for _, parent := range []string{"/redfish/v1/Systems/team-b.vm3", "/redfish/v1/Managers/team-b.vm3"} {
		if l, _ := e.get(t, "bob", parent)["LogServices"].(map[string]any); l["@odata.id"] != parent+"/LogServices" {
			t.Errorf("%s links LogServices %v", parent, l)
		}
	}
	for _, parent := range []string{"/redfish/v1/Systems/team-b.vm3", "/redfish/v1/Managers/team-b.vm3"} {
		svcs := e.get(t, "bob", parent+"/LogServices")
		if n := svcs["Members@odata.count"]; n != float64(1) {
			t.Fatalf("%s/LogServices: %v members", parent, n)
		}
		svc := e.get(t, "bob", parent+"/LogServices/Log")
		if svc["MaxNumberOfRecords"] != float64(3) || svc["LogEntryType"] != "Event" {
			t.Errorf("LogService %v", svc)
		}
		// DateTime is the service's clock (Config.Now), so two reads in
		// different seconds answer the same body and ETag.
		if want := e.clock.Now().UTC().Format(time.RFC3339); svc["DateTime"] != want {
			t.Errorf("%s DateTime %v, want the service clock's %s", parent, svc["DateTime"], want)
		}
		entries := e.get(t, "bob", svc["Entries"].(map[string]any)["@odata.id"].(string))
		ms := entries["Members"].([]any)
		var ids []string
		for _, m := range ms {
			ids = append(ids, m.(map[string]any)["Id"].(string))
		}
		if fmt.Sprint(ids) != "[vm3-4 vm3-3 vm3-2]" {
			t.Errorf("%s entries %v, want the newest 3, newest first", parent, ids)
		}
		first := ms[0].(map[string]any)
		if first["MessageId"] != "ResourceEvent.1.3.0.ResourcePoweredOff" || first["Severity"] != "OK" ||
			first["Links"].(map[string]any)["OriginOfCondition"].(map[string]any)["@odata.id"] != "/redfish/v1/Systems/team-b.vm3" {
			t.Errorf("entry %v", first)
		}
		one := e.get(t, "bob", first["@odata.id"].(string))
		if one["Id"] != "vm3-4" {
			t.Errorf("GET entry: %v", one)
		}
	}
	// alice's scope is team-a: bob's System's log is not hers to read or clear.
	for _, r := range []req{
		{path: "/redfish/v1/Systems/team-b.vm3/LogServices/Log/Entries", user: "alice"},
		{method: http.MethodPost, path: "/redfish/v1/Systems/team-b.vm3/LogServices/Log/Actions/LogService.ClearLog", body: "{}", user: "alice"},
	} {
		if rec := e.do(t, r); rec.Code != http.StatusNotFound {
			t.Errorf("%s %s as alice: %d, want 404", r.method, r.path, rec.Code)
		}
	}
	if n := len(log.Entries(key)); n != 3 {
		t.Fatalf("alice's ClearLog cleared bob's log: %d entries", n)
	}
	if rec := e.do(t, req{method: http.MethodPost, path: "/redfish/v1/Systems/team-b.vm3/LogServices/Log/Actions/LogService.ClearLog", body: `{"Bogus": 1}`, user: "bob"}); rec.Code != http.StatusBadRequest {
		t.Errorf("ClearLog with an unknown parameter: %d, want 400", rec.Code)
	}
	if rec := e.do(t, req{method: http.MethodPost, path: "/redfish/v1/Managers/team-b.vm3/LogServices/Log/Actions/LogService.ClearLog", body: "{}", user: "bob"}); rec.Code != http.StatusNoContent {
		t.Fatalf("ClearLog: %d %s", rec.Code, rec.Body)
	}
	if ms := e.get(t, "bob", "/redfish/v1/Systems/team-b.vm3/LogServices/Log/Entries")["Members"].([]any); len(ms) != 0 {
		t.Errorf("after ClearLog: %d entries", len(ms))
	}
}
