package event

import (
	"errors"
	"sync"
	"time"
)

// ErrOverflow ends a subscription whose buffer was full when an event
// was published: the subscriber fell behind.
var ErrOverflow = errors.New("event subscriber fell behind: buffer full")

// ErrClosed ends the subscriptions of a bus that was closed.
var ErrClosed = errors.New("event bus closed")

// Bus fans every published event out to every subscription, each with a
// bounded buffer of its own, and keeps the last [Config.History] events
// for readers that reconnect. Publish never blocks. The zero Bus is
// ready and keeps no history.
type Bus struct {
	mu     sync.Mutex
	subs   map[*Subscription]struct{}
	closed bool
	hist   history
}

// NewBus returns a bus keeping cfg.History events.
func NewBus(cfg Config) *Bus {
	n := cfg.History
	if n == 0 {
		n = DefaultHistory
	}
	return &Bus{hist: newHistory(n)}
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
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.subscribe(buffer)
}

// SubscribeAfter subscribes as [Bus.Subscribe] and returns, in the same
// step (no event between them, none in both), the events held that were
// published after the newest one of ID id, oldest first. held is false
// when no event of that ID is held (too old, published before this
// replica started, or never): then missed is empty and the reader may
// have missed events.
func (b *Bus) SubscribeAfter(id string, buffer int) (s *Subscription, missed []Event, held bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := b.hist.find(id)
	if i < 0 {
		return b.subscribe(buffer), nil, false
	}
	for _, r := range b.hist.from(i + 1) {
		missed = append(missed, r.Event)
	}
	return b.subscribe(buffer), missed, true
}

// SubscribeHistory subscribes as [Bus.Subscribe] and returns, in the
// same step, every record held, oldest first.
func (b *Bus) SubscribeHistory(buffer int) (*Subscription, []Record) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.subscribe(buffer), b.hist.from(0)
}

// History returns every record held, oldest first.
func (b *Bus) History() []Record {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hist.from(0)
}

// subscribe makes a subscription; b.mu is held.
func (b *Bus) subscribe(buffer int) *Subscription {
	if buffer < 1 {
		buffer = 1
	}
	c := make(chan Event, buffer)
	s := &Subscription{C: c, c: c, bus: b}
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

// Publish records e in the history and hands it to every subscription;
// one whose buffer is full is ended with [ErrOverflow].
func (b *Bus) Publish(e Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.hist.add(Record{Event: e, Published: time.Now()})
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
