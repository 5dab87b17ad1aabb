package eventstream

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// labelled are VMs by key with their labels; a key not there is unknown.
type labelled map[system.Key]map[string]string

func (l labelled) VM(key system.Key) (*unstructured.Unstructured, error) {
	lbls, ok := l[key]
	if !ok {
		return nil, fmt.Errorf("vm %s: not found", key)
	}
	u := &unstructured.Unstructured{}
	u.SetLabels(lbls)
	return u, nil
}

// revoked is a session store where the sessions in it were logged out.
type revoked map[string]bool

func (r revoked) Revoked(_ context.Context, id string) (bool, error) { return r[id], nil }

var (
	gold  = system.Key{Namespace: "team-a", Name: "gold"}
	plain = system.Key{Namespace: "team-a", Name: "plain"}
	other = system.Key{Namespace: "team-b", Name: "vm"}
	vms   = labelled{gold: {"tier": "gold"}, plain: {}, other: {}}
)

func newStreams(t *testing.T, cfg Config, sessions Sessions) (*Streams, *event.Bus) {
	t.Helper()
	bus := &event.Bus{}
	ss, err := New(cfg, bus, vms, sessions)
	if err != nil {
		t.Fatal(err)
	}
	return ss, bus
}

func scope(t *testing.T, ns, sel string) auth.Scope {
	t.Helper()
	s, err := labels.Parse(sel)
	if err != nil {
		t.Fatal(err)
	}
	return auth.Scope{Namespaces: []string{ns}, Selector: s}
}

// TestSlowReaderDropped: a stream whose client reads nothing holds
// Buffer events; the next one ends it (ErrTooSlow) and Publish never
// waits for it: the other stream gets every event.
func TestSlowReaderDropped(t *testing.T) {
	ss, bus := newStreams(t, Config{Buffer: 4, KeepAlive: time.Hour}, nil)
	admin := auth.Principal{User: "admin", Scope: auth.Scope{Namespaces: []string{"*"}}}
	slow, err := ss.Open(admin, "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	fast, err := ss.Open(auth.Principal{User: "other-admin", Scope: admin.Scope}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close()
	for i := range 4 {
		bus.Publish(event.Event{ID: fmt.Sprint(i), System: gold})
		if f, err := fast.Next(t.Context()); err != nil || f.ID != fmt.Sprint(i) {
			t.Fatalf("fast stream: %+v %v, want event %d", f, err, i)
		}
	}
	bus.Publish(event.Event{ID: "overflow", System: gold}) // returns: the bus never waits
	if f, err := fast.Next(t.Context()); err != nil || f.ID != "overflow" {
		t.Fatalf("fast stream: %+v %v, want the fifth event", f, err)
	}
	for i := range 4 {
		if f, err := slow.Next(t.Context()); err != nil || f.ID != fmt.Sprint(i) {
			t.Fatalf("slow stream's buffered event %d: %+v %v", i, f, err)
		}
	}
	if _, err := slow.Next(t.Context()); !errors.Is(err, ErrTooSlow) {
		t.Fatalf("slow stream after its buffer filled: %v, want ErrTooSlow", err)
	}
	if n := bus.Subscribers(); n != 1 {
		t.Errorf("bus subscribers %d after the slow stream was dropped, want 1", n)
	}
}

// TestStreamScope: a stream receives only the events of the Systems its
// user may read (namespace and label selector), and the service's own
// events only when the user is unrestricted.
func TestStreamScope(t *testing.T) {
	ss, bus := newStreams(t, Config{KeepAlive: time.Hour}, nil)
	for _, tc := range []struct {
		name  string
		scope auth.Scope
		end   system.Key // a System the user reads: its event ends the test's reading
		want  []string
	}{
		{"admin", auth.Scope{Namespaces: []string{"*"}}, gold, []string{"gold", "plain", "other", "service", "unknown-a"}},
		{"alice (team-a)", scope(t, "team-a", ""), gold, []string{"gold", "plain", "unknown-a"}},
		{"carol (team-a, tier=gold)", scope(t, "team-a", "tier=gold"), gold, []string{"gold"}},
		{"bob (team-b)", scope(t, "team-b", ""), other, []string{"other"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := ss.Open(auth.Principal{User: tc.name, Scope: tc.scope}, "", "")
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			for _, e := range []event.Event{{ID: "gold", System: gold}, {ID: "plain", System: plain}, {ID: "other", System: other},
				{ID: "service"}, {ID: "unknown-a", System: system.Key{Namespace: "team-a", Name: "gone"}}, {ID: "end", System: tc.end}} {
				bus.Publish(e)
			}
			var got []string
			for {
				f, err := st.Next(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if f.ID == "end" {
					break
				}
				got = append(got, f.ID)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("received %v, want %v", got, tc.want)
			}
		})
	}
}

// TestStreamCapAndSessionEnd: one user holds MaxPerUser streams; a
// stream ends when its session logs out on this replica (at once) or on
// another (at the next keep-alive); closing gives the place back.
func TestStreamCapAndSessionEnd(t *testing.T) {
	elsewhere := revoked{}
	ss, _ := newStreams(t, Config{MaxPerUser: 2, KeepAlive: time.Hour}, elsewhere)
	alice := auth.Principal{User: "alice", Scope: scope(t, "team-a", ""), Session: "s1"}
	a1, err := ss.Open(alice, "", "")
	if err != nil {
		t.Fatal(err)
	}
	a2, err := ss.Open(alice, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ss.Open(alice, "", ""); !errors.Is(err, ErrLimit) {
		t.Fatalf("alice's third stream: %v, want ErrLimit", err)
	}
	bob, err := ss.Open(auth.Principal{User: "bob", Session: "s2"}, "", "")
	if err != nil {
		t.Fatalf("bob's stream while alice is at her cap: %v", err)
	}
	ss.SessionEnded("s1")
	for _, st := range []*Stream{a1, a2} {
		if _, err := st.Next(t.Context()); !errors.Is(err, ErrSessionEnded) {
			t.Fatalf("alice's stream after her logout: %v, want ErrSessionEnded", err)
		}
		st.Close()
	}
	if _, err := ss.Open(alice, "", ""); err != nil {
		t.Fatalf("alice's stream once hers closed: %v", err)
	}

	// Logged out on another replica: seen at the next keep-alive.
	ss.cfg.KeepAlive = time.Millisecond
	bob.tick.Reset(time.Millisecond)
	if f, err := bob.Next(t.Context()); err != nil || f.Data != nil {
		t.Fatalf("bob's idle stream: %+v %v, want a keep-alive", f, err)
	}
	elsewhere["s2"] = true
	if _, err := bob.Next(t.Context()); !errors.Is(err, ErrSessionEnded) {
		t.Fatalf("bob's stream after a logout elsewhere: %v, want ErrSessionEnded", err)
	}
	bob.Close()
	bob.Close() // twice is harmless
	if n := ss.Count(); n != 1 {
		t.Errorf("%d streams open, want alice's last one", n)
	}
}
