package event

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func ids[T interface{ id() string }](xs []T) []string {
	out := []string{}
	for _, x := range xs {
		out = append(out, x.id())
	}
	return out
}

func (e Event) id() string { return e.ID }

func publish(b *Bus, idList ...string) {
	for _, id := range idList {
		b.Publish(Event{ID: id})
	}
}

func TestHistoryKeepsTheNewestInPublishOrder(t *testing.T) {
	b := NewBus(Config{History: 3})
	publish(b, "a", "b", "c", "d", "e")
	got := []string{}
	for _, r := range b.History() {
		got = append(got, r.ID)
	}
	if diff := cmp.Diff([]string{"c", "d", "e"}, got); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	var zero Bus
	publish(&zero, "a")
	if h := zero.History(); len(h) != 0 {
		t.Errorf("the zero Bus holds %d records, want none", len(h))
	}
}

func TestSubscribeAfter(t *testing.T) {
	for _, tc := range []struct {
		name     string
		after    string
		want     []string
		wantHeld bool
	}{
		{"a held ID: the events after it", "c", []string{"d", "e"}, true},
		{"the newest: nothing missed", "e", []string{}, true},
		{"an ID dropped from the history", "a", []string{}, false},
		{"an unknown ID", "zz", []string{}, false},
		{"no ID", "", []string{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBus(Config{History: 3})
			publish(b, "a", "b", "c", "d", "e")
			s, missed, held := b.SubscribeAfter(tc.after, 4)
			defer s.Close()
			if held != tc.wantHeld {
				t.Errorf("held = %v, want %v", held, tc.wantHeld)
			}
			if diff := cmp.Diff(tc.want, ids(missed)); diff != "" {
				t.Errorf("missed (-want +got):\n%s", diff)
			}
			// The seam: what is published next comes live, once.
			publish(b, "f")
			if e := <-s.C; e.ID != "f" {
				t.Errorf("live event %q, want f", e.ID)
			}
			if len(s.C) != 0 {
				t.Errorf("%d more events live, want none", len(s.C))
			}
		})
	}
}

// TestSubscribeAfterNoGapNoDuplicate reconnects while events are being
// published: the missed events then the live ones are exactly the events
// after the reader's ID, each once, in publish order.
func TestSubscribeAfterNoGapNoDuplicate(t *testing.T) {
	const n = 100000
	b := NewBus(Config{History: n})
	started, stop, done := make(chan struct{}), make(chan struct{}), make(chan int)
	go func() { // publishes until told to stop, at most n
		i := 0
		defer func() { done <- i }()
		for ; i < n; i++ {
			select {
			case <-stop:
				return
			default:
			}
			b.Publish(Event{ID: strconv.Itoa(i)})
			if i == 100 {
				close(started)
			}
		}
	}()
	<-started
	h := b.History()
	after := h[len(h)/2].ID
	s, missed, held := b.SubscribeAfter(after, n)
	if !held {
		t.Fatalf("%s not held", after)
	}
	got := ids(missed)
	for range 100 { // events published after the reconnect
		got = append(got, (<-s.C).ID)
	}
	close(stop)
	published := <-done
	s.Close()
	for e := range s.C {
		got = append(got, e.ID)
	}
	k, _ := strconv.Atoi(after)
	want := []string{}
	for i := k + 1; i < published; i++ {
		want = append(want, strconv.Itoa(i))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after %s, missed %d then live (-want +got):\n%s", after, len(missed), diff)
	}
}

func TestNewestAndSince(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	rs := []Record{{Event{ID: "a"}, t0}, {Event{ID: "b"}, t0.Add(time.Second)}, {Event{ID: "a"}, t0.Add(2 * time.Second)}, {Event{ID: "c"}, t0.Add(3 * time.Second)}}
	recIDs := func(rs []Record) []string {
		out := []string{}
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	if i := Newest(rs, "a"); i < 0 || !cmp.Equal([]string{"c"}, recIDs(rs[i+1:])) {
		t.Errorf("Newest(a) = %d, want the newest a, with [c] after it", i)
	}
	if i := Newest(rs, "x"); i != -1 {
		t.Errorf("Newest(x) = %d, want -1: not held", i)
	}
	if got := Since(rs, t0.Add(time.Second)); !cmp.Equal([]string{"b", "a", "c"}, recIDs(got)) {
		t.Errorf("Since(t0+1s) = %v", recIDs(got))
	}
	if got := Since(rs, t0.Add(time.Hour)); len(got) != 0 {
		t.Errorf("Since(later) = %v, want none", recIDs(got))
	}
}
