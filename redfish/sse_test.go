package redfish

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/eventstream"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// labelledVMs answers every VM with no labels (the scope tests here are
// by namespace; eventstream's own tests cover selectors).
type labelledVMs struct{}

func (labelledVMs) VM(system.Key) (*unstructured.Unstructured, error) {
	return &unstructured.Unstructured{}, nil
}

// sseEnv is the service with real event streams on bus, served by a real
// HTTP server (the streams are read as a client reads them).
type sseEnv struct {
	*env
	bus     *event.Bus
	streams *eventstream.Streams
	srv     *httptest.Server
}

func newSSEEnv(t *testing.T, cfg eventstream.Config) *sseEnv {
	t.Helper()
	bus := event.NewBus(event.Config{})
	streams, err := eventstream.New(cfg, bus, labelledVMs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, func(b *Backends) { b.Streams = streams })
	srv := httptest.NewServer(e.e)
	t.Cleanup(srv.Close)
	return &sseEnv{env: e, bus: bus, streams: streams, srv: srv}
}

func (s *sseEnv) client(user string) testutil.Redfish {
	return testutil.Redfish{Base: s.srv.URL, User: user, Password: user + "-pw"}
}

// open opens a stream as user with $filter filter ("" none).
func (s *sseEnv) open(t *testing.T, user, filter string) *testutil.SSE {
	t.Helper()
	st, resp := s.client(user).OpenSSE(t, sseURI+filterQuery(filter))
	if st == nil {
		t.Fatalf("open a stream as %s with $filter %q: %d %s", user, filter, resp.Status, resp.Body)
	}
	return st
}

func filterQuery(filter string) string {
	if filter == "" {
		return ""
	}
	return "?$filter=" + url.QueryEscape(filter)
}

var (
	teamA = system.Key{Namespace: "team-a", Name: "vm-1"}
	teamB = system.Key{Namespace: "team-b", Name: "vm-1"}
)

func powerEvent(id string, key system.Key) event.Event {
	return event.Event{ID: id, System: key, MessageID: "ResourceEvent.1.3.0.ResourcePoweredOn", ResourceType: "ComputerSystem",
		Origin: "/redfish/v1/Systems/" + key.ID(), Message: "The resource has powered on.", Time: time.Unix(1800000000, 0)}
}

// TestEventStream: the EventService shows its ServerSentEventUri; a
// client reading it line by line receives, as text/event-stream with an
// `id:` line (the Event's Id) and a `data:` line (the Event), exactly the
// events its $filter lets through of the Systems it may read, in order,
// with keep-alive comments between.
func TestEventStream(t *testing.T) {
	s := newSSEEnv(t, eventstream.Config{KeepAlive: time.Millisecond})
	if got := s.get(t, "alice", eventServiceURI)["ServerSentEventUri"]; got != sseURI {
		t.Fatalf("ServerSentEventUri = %v, want %s", got, sseURI)
	}
	st := s.open(t, "alice", "(RegistryPrefix eq 'TaskEvent') or (ResourceType eq 'ComputerSystem')")
	task := event.Event{ID: "task", System: teamA, MessageID: "TaskEvent.1.0.3.TaskStarted", ResourceType: "Task",
		Origin: "/redfish/v1/TaskService/Tasks/1"}
	media := event.Event{ID: "media", System: teamA, MessageID: "ResourceEvent.1.3.0.ResourceChanged", ResourceType: "VirtualMedia",
		Origin: "/redfish/v1/Systems/team-a.vm-1/VirtualMedia/cd0"}
	for _, e := range []event.Event{
		powerEvent("bobs", teamB), // not alice's System
		task,
		media, // filtered out
		{ID: "service", MessageID: "Base.1.9.3.Success"}, // the service's: administrators only
		powerEvent("on", teamA),
	} {
		s.bus.Publish(e)
	}
	var got []string
	for range 2 {
		ev, err := st.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Data["Id"] != ev.ID || ev.Data["@odata.type"] != "#Event.v1_10_0.Event" {
			t.Errorf("event %s: data %v, want an Event whose Id is the id line", ev.ID, ev.Data)
		}
		got = append(got, ev.ID)
	}
	if fmt.Sprint(got) != "[task on]" {
		t.Errorf("alice's stream received %v, want [task on]", got)
	}
	if err := st.AwaitKeepAlive(); err != nil {
		t.Errorf("no keep-alive comment on the idle stream: %v", err)
	}
}

// TestEventStreamResumes: a client reconnecting with the Last-Event-ID
// header (as EventSource does) first reads what was published after that
// event, then the live events; an ID the replica does not hold starts
// live after a comment saying events may have been missed.
func TestEventStreamResumes(t *testing.T) {
	s := newSSEEnv(t, eventstream.Config{KeepAlive: time.Hour})
	for _, id := range []string{"1", "2", "3"} {
		s.bus.Publish(powerEvent(id, teamA))
	}
	for _, tc := range []struct {
		lastEventID string
		want        string
		comments    []string
	}{
		{"1", "[2 3 live]", nil},
		{"unknown", "[live]", []string{eventstream.NotHeld}},
	} {
		st, resp := s.client("alice").OpenSSEAfter(t, sseURI, tc.lastEventID)
		if st == nil {
			t.Fatalf("reconnect after %s: %d %s", tc.lastEventID, resp.Status, resp.Body)
		}
		s.bus.Publish(powerEvent("live", teamA))
		var got []string
		for len(got) == 0 || got[len(got)-1] != "live" {
			ev, err := st.Next()
			if err != nil {
				t.Fatalf("after %s, read %v: %v", tc.lastEventID, got, err)
			}
			got = append(got, ev.ID)
		}
		if fmt.Sprint(got) != tc.want || !slices.Equal(st.Comments, tc.comments) {
			t.Errorf("reconnected after %s: read %v and comments %q, want %s and %q", tc.lastEventID, got, st.Comments, tc.want, tc.comments)
		}
		st.Close()
	}
}

// TestEventStreamRefused: a hostile or malformed $filter, or another
// query, is refused with its Redfish error and opens nothing; past a
// user's cap a stream is refused while another user's opens; an
// unauthenticated client is refused.
func TestEventStreamRefused(t *testing.T) {
	s := newSSEEnv(t, eventstream.Config{MaxPerUser: 2, KeepAlive: time.Hour})
	for _, tc := range []struct {
		query, id string
		status    int
	}{
		{filterQuery(strings.Repeat("(", 10) + "ResourceType eq 'Task'" + strings.Repeat(")", 10)), "QueryParameterValueFormatError", 400},
		{filterQuery(strings.Repeat("ResourceType eq 'Task' or ", 100) + "ResourceType eq 'Task'"), "QueryParameterValueFormatError", 400},
		{filterQuery("Destination eq 'http://169.254.169.254/'"), "QueryParameterValueFormatError", 400},
		{filterQuery("ResourceType ne 'Task'"), "QueryParameterValueFormatError", 400},
		{filterQuery("ResourceType eq 'Task"), "QueryParameterValueFormatError", 400},
		{filterQuery("x") + "&$filter=y", "QueryParameterValueFormatError", 400},
		{"?$top=1", "QueryNotSupported", 501},
		{"?$filter=%zz", "GeneralError", 400},
	} {
		t.Run(tc.query[:min(len(tc.query), 40)], func(t *testing.T) {
			st, resp := s.client("alice").OpenSSE(t, sseURI+tc.query)
			if st != nil {
				t.Fatal("the stream opened")
			}
			got, _ := testutil.ReadRefusal(t, resp.Status, resp.Body)
			if got.Status != tc.status || got.ID != tc.id {
				t.Errorf("refused %d %s, want %d %s", got.Status, got.ID, tc.status, tc.id)
			}
		})
	}
	if n := s.streams.Count(); n != 0 {
		t.Fatalf("%d streams open after the refusals, want 0", n)
	}

	s.open(t, "alice", "")
	second := s.open(t, "alice", "")
	third, resp := s.client("alice").OpenSSE(t, sseURI)
	if third != nil {
		t.Fatal("alice's third stream opened past her cap of 2")
	}
	if got, _ := testutil.ReadRefusal(t, resp.Status, resp.Body); got.Status != 400 || got.ID != "CreateLimitReachedForResource" {
		t.Errorf("alice's third stream: %+v, want 400 CreateLimitReachedForResource", got)
	}
	s.open(t, "bob", "") // another user's still opens
	second.Close()       // the client leaves: its place is given back
	testutil.Eventually(t, "alice's left stream to close", 30*time.Second, 10*time.Millisecond,
		testutil.True(func() bool { return s.streams.Count() == 2 }))
	s.open(t, "alice", "")

	_, resp = testutil.Redfish{Base: s.srv.URL}.OpenSSE(t, sseURI)
	if resp == nil || resp.Status != http.StatusUnauthorized {
		t.Errorf("unauthenticated stream: %+v, want 401", resp)
	}
}

// TestEventStreamEndsAtLogout: a stream opened with a session's token
// ends when that session logs out (the client reads the end of the
// body), not at its next keep-alive (an hour away).
func TestEventStreamEndsAtLogout(t *testing.T) {
	s := newSSEEnv(t, eventstream.Config{KeepAlive: time.Hour})
	tok, loc := login(t, s.env, "alice", "alice-pw")
	st, resp := testutil.Redfish{Base: s.srv.URL, Token: tok}.OpenSSE(t, sseURI)
	if st == nil {
		t.Fatalf("open with a token: %d %s", resp.Status, resp.Body)
	}
	if rec := s.do(t, req{method: http.MethodDelete, path: loc, token: tok}); rec.Code != http.StatusNoContent {
		t.Fatalf("logout: %d %s", rec.Code, rec.Body)
	}
	ended := make(chan error, 1)
	go func() {
		_, err := st.Next()
		ended <- err
	}()
	select {
	case err := <-ended:
		if !errors.Is(err, io.EOF) {
			t.Fatalf("the stream after logout: %v, want its end (EOF)", err)
		}
	case <-time.After(testutil.AwaitBound):
		t.Fatal("the stream is still open after its session logged out")
	}
}

// TestEventStreamOutlivesRequestTimeout: a stream is not cut at the
// request timeout that bounds every other request: it still delivers
// after a keep-alive sent 50 times the timeout after it opened.
func TestEventStreamOutlivesRequestTimeout(t *testing.T) {
	bus := &event.Bus{}
	streams, err := eventstream.New(eventstream.Config{KeepAlive: 50 * time.Millisecond}, bus, labelledVMs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, func(b *Backends) { b.Streams = streams })
	_, h, err := newServer(Config{ServiceUUID: "8a3d1f0e-1111-4222-8333-444455556666", RequestTimeout: time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)}, e.srv.b)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	st, resp := testutil.Redfish{Base: srv.URL, User: "alice", Password: "alice-pw"}.OpenSSE(t, sseURI)
	if st == nil {
		t.Fatalf("open: %d %s", resp.Status, resp.Body)
	}
	if err := st.AwaitKeepAlive(); err != nil {
		t.Fatalf("keep-alive: %v", err)
	}
	bus.Publish(powerEvent("late", teamA))
	if ev, err := st.Next(); err != nil || ev.ID != "late" {
		t.Fatalf("after the request timeout: %+v %v, want the event", ev, err)
	}
}
