package event

import (
	"errors"
	"sync"
)

// ErrOverflow ends a subscription whose buffer was full when an event
// was published: the subscriber fell behind.
var ErrOverflow = errors.New("event subscriber fell behind: buffer full")

// ErrClosed ends the subscriptions of a bus that was closed.
var ErrClosed = errors.New("event bus closed")

// Bus fans every published event out to every subscription, each with a
// bounded buffer of its own. Publish never blocks. The zero Bus is ready.
type Bus struct {
	mu     sync.Mutex
	subs   map[*Subscription]struct{}
	closed bool
}

// Subscription receives the events published after it was made, in the
// order they were published, on C. C is closed when the subscription ends
// ([Subscription.Close], overflow or the bus closed); Err then says why.
type Subscription struct {
	C   <-chan Event
	c   chan Event
	bus *Bus
	err error // guarded by bus.mu
}

// Subscribe returns a subscription with room for buffer events not yet
// read (at least 1).
func (b *Bus) Subscribe(buffer int) *Subscription {
	if buffer < 1 {
		buffer = 1
	}
	c := make(chan Event, buffer)
	s := &Subscription{C: c, c: c, bus: b}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		s.err = ErrClosed
		close(c)
		return s
	}
	if b.subs == nil {
		b.subs = map[*Subscription]struct{}{}
	}
	b.subs[s] = struct{}{}
	return s
}

// Publish hands e to every subscription; one whose buffer is full is
// ended with [ErrOverflow].
func (b *Bus) Publish(e Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		select {
		case s.c <- e:
		default:
			b.end(s, ErrOverflow)
		}
	}
}

// Subscribers is how many subscriptions are open.
func (b *Bus) Subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}

// Close ends every subscription with [ErrClosed]; later ones start ended.
func (b *Bus) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for s := range b.subs {
		b.end(s, ErrClosed)
	}
}

// end closes s with err; b.mu is held.
func (b *Bus) end(s *Subscription, err error) {
	if _, ok := b.subs[s]; !ok {
		return
	}
	delete(b.subs, s)
	s.err = err
	close(s.c)
}

// Close ends the subscription (Err nil); the events still buffered can
// be read.
func (s *Subscription) Close() {
	s.bus.mu.Lock()
	defer s.bus.mu.Unlock()
	s.bus.end(s, nil)
}

// Err is why the subscription ended: nil while it is open or after Close,
// [ErrOverflow] or [ErrClosed].
func (s *Subscription) Err() error {
	s.bus.mu.Lock()
	defer s.bus.mu.Unlock()
	return s.err
}
