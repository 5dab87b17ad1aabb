package eventdelivery

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/eventsub"
)

// term runs one term of a delivery on te (deps edited by edit) and
// returns once it listens; stop ends the term and returns once it ended
// (its marks recorded).
func (te *testEnv) term(t *testing.T, cfg Config, edit func(*Deps)) (stop func()) {
	t.Helper()
	listening := make(chan struct{})
	deps := Deps{Bus: te.bus, Kube: te.kube, Namespace: "bridge", Store: te.store, Users: users, VMs: vms{},
		Listening: func() { close(listening) },
		Observe: func(sub string, e event.Event, err error, _ time.Duration) {
			te.attempts <- attempt{sub, e.ID, err}
		}}
	if edit != nil {
		edit(&deps)
	}
	cfg.AddrPolicy, cfg.RetryInterval, cfg.Timeout, cfg.Secret = testPolicy, time.Millisecond, time.Minute, "events"
	d, err := New(cfg.WithDefaults(), deps)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- d.Start(ctx) }()
	<-listening
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// TestNewTermReplays: a term records the last event it delivered to each
// subscription when it ends; the next term (the next leader) first
// delivers, from the bus's history, what was published after it (while
// no term ran), then the live events. The duplicates are only the events
// published within ReplaySlack before the mark. Without the replay
// (NoReplay) the events published between the terms are lost: the
// control that the replay is what delivers them.
func TestNewTermReplays(t *testing.T) {
	for _, tc := range []struct {
		name     string
		noReplay bool
		want     []string // what the second term delivers, duplicates of the first term's left out
	}{
		{"replay", false, []string{"a3", "a4", "live"}},
		{"no replay: lost", true, []string{"live"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te := newTestEnv()
			te.bus = event.NewBus(event.Config{})
			rc := newReceiver(t, 204, nil)
			s := te.subscribe(t, "alice", rc.URL, nil)
			stop := te.term(t, Config{}, nil)
			te.bus.Publish(ev("a1", "team-a", "vm1"))
			te.bus.Publish(ev("a2", "team-a", "vm1"))
			first := []string{rc.next(t), rc.next(t)}
			for a := range te.attempts { // the delivery saw a2 answered
				if a.event == "a2" && a.err == nil {
					break
				}
			}
			stop()
			subs, err := te.store.List(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(subs) != 1 || subs[0].ID != s.ID || subs[0].Delivered == nil || subs[0].Delivered.ID != "a2" {
				t.Fatalf("after the first term (delivered %v): subscriptions %+v, want %s marked delivered up to a2", first, subs, s.ID)
			}

			// Nobody delivers: what is published now only the history holds.
			te.bus.Publish(ev("a3", "team-a", "vm1"))
			te.bus.Publish(ev("b1", "team-b", "vm3")) // not alice's
			te.bus.Publish(ev("a4", "team-a", "vm2"))
			te.term(t, Config{}, func(d *Deps) { d.NoReplay = tc.noReplay })
			te.bus.Publish(ev("live", "team-a", "vm1"))
			var got, dups []string
			for len(got) == 0 || got[len(got)-1] != "live" {
				id := rc.next(t)
				if slices.Contains(first, id) {
					dups = append(dups, id)
					continue
				}
				got = append(got, id)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("second term delivered (-want +got):\n%s", diff)
			}
			if slices.Contains(dups, "a2") {
				t.Errorf("second term delivered the marked a2 again (duplicates %v)", dups)
			}
			t.Logf("duplicates delivered by the second term: %v", dups)
		})
	}
}

// TestToReplay: what a new term replays of the history for a
// subscription: after its mark (ReplaySlack before included, the mark
// excluded), since the mark's time when the history lacks the mark
// (lost when the history begins after it), since its creation with no
// mark.
func TestToReplay(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	var held []event.Record
	for i, id := range []string{"e0", "e1", "e2", "e3", "e4"} {
		held = append(held, event.Record{Event: event.Event{ID: id}, Published: t0.Add(time.Duration(i) * time.Second)})
	}
	for _, tc := range []struct {
		name     string
		sub      eventsub.Subscription
		want     []string
		wantLost bool
	}{
		{"a held mark", eventsub.Subscription{Delivered: &eventsub.Mark{ID: "e3", Published: t0}}, []string{"e1", "e2", "e4"}, false},
		{"the newest held", eventsub.Subscription{Delivered: &eventsub.Mark{ID: "e4"}}, []string{"e2", "e3"}, false},
		{"a mark not held, inside the history", eventsub.Subscription{Delivered: &eventsub.Mark{ID: "x", Published: t0.Add(3 * time.Second)}},
			[]string{"e1", "e2", "e3", "e4"}, false},
		{"a mark older than the history", eventsub.Subscription{Delivered: &eventsub.Mark{ID: "x", Published: t0.Add(-time.Hour)}},
			[]string{"e0", "e1", "e2", "e3", "e4"}, true},
		{"no mark: since created", eventsub.Subscription{Created: t0.Add(4 * time.Second)}, []string{"e2", "e3", "e4"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs, lost := toReplay(held, &tc.sub)
			got := []string{}
			for _, r := range rs {
				got = append(got, r.ID)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" || lost != tc.wantLost {
				t.Errorf("lost %v (want %v), replay (-want +got):\n%s", lost, tc.wantLost, diff)
			}
		})
	}
}

// TestReplayBoundedByHalfTheQueue: a replay longer than half the
// subscription's queue sends only the newest half-queue of events, so a
// new term never suspends a subscription by filling its queue with the
// past (a subscription never delivered to replays since its creation).
func TestReplayBoundedByHalfTheQueue(t *testing.T) {
	te := newTestEnv()
	te.bus = event.NewBus(event.Config{})
	rc := newReceiver(t, 204, nil)
	s := te.subscribe(t, "alice", rc.URL, nil)
	for i := range 10 {
		te.bus.Publish(ev(fmt.Sprint("a", i), "team-a", "vm1"))
	}
	te.term(t, Config{QueueSize: 4}, nil)
	te.bus.Publish(ev("live", "team-a", "vm1"))
	var got []string
	for len(got) == 0 || got[len(got)-1] != "live" {
		got = append(got, rc.next(t))
	}
	if diff := cmp.Diff([]string{"a8", "a9", "live"}, got); diff != "" {
		t.Errorf("delivered (-want +got):\n%s", diff)
	}
	sub, err := te.store.Get(t.Context(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if sub.State != eventsub.StateEnabled {
		t.Errorf("subscription %s after the replay, want Enabled", sub.State)
	}
}
