package event

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBusFansOutInOrder(t *testing.T) {
	var b Bus
	s1, s2 := b.Subscribe(3), b.Subscribe(3)
	for _, id := range []string{"a", "b", "c"} {
		b.Publish(Event{ID: id})
	}
	for _, s := range []*Subscription{s1, s2} {
		var got []string
		for range 3 {
			got = append(got, (<-s.C).ID)
		}
		if diff := cmp.Diff([]string{"a", "b", "c"}, got); diff != "" {
			t.Errorf("order (-want +got):\n%s", diff)
		}
	}
}

func TestBusOverflowEndsOnlyTheSlowSubscriber(t *testing.T) {
	var b Bus
	slow, fast := b.Subscribe(1), b.Subscribe(4)
	b.Publish(Event{ID: "1"})
	b.Publish(Event{ID: "2"}) // slow's buffer is full: it ends
	if e := <-slow.C; e.ID != "1" {
		t.Fatalf("slow got %q first, want the buffered 1", e.ID)
	}
	if _, open := <-slow.C; open {
		t.Fatal("slow subscription still open after overflow")
	}
	if !errors.Is(slow.Err(), ErrOverflow) {
		t.Fatalf("slow.Err() = %v, want ErrOverflow", slow.Err())
	}
	if got := b.Subscribers(); got != 1 {
		t.Fatalf("Subscribers() = %d after overflow, want 1", got)
	}
	b.Publish(Event{ID: "3"})
	var got []string
	for range 3 {
		got = append(got, (<-fast.C).ID)
	}
	if diff := cmp.Diff([]string{"1", "2", "3"}, got); diff != "" {
		t.Errorf("fast subscriber (-want +got):\n%s", diff)
	}
	if fast.Err() != nil {
		t.Errorf("fast.Err() = %v, want nil", fast.Err())
	}
}

func TestBusCloseEndsEverySubscription(t *testing.T) {
	var b Bus
	s := b.Subscribe(1)
	s2 := b.Subscribe(1)
	s2.Close()
	b.Close()
	if _, open := <-s.C; open || !errors.Is(s.Err(), ErrClosed) {
		t.Fatalf("after Close: open %v, Err %v; want closed with ErrClosed", open, s.Err())
	}
	if s2.Err() != nil {
		t.Fatalf("a subscription closed by its owner has Err %v, want nil", s2.Err())
	}
	late := b.Subscribe(1)
	if _, open := <-late.C; open || !errors.Is(late.Err(), ErrClosed) {
		t.Fatal("a subscription made after Close is open")
	}
	b.Publish(Event{ID: "x"}) // no panic on a closed bus
}
