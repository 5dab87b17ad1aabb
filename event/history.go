package event

import (
	"flag"
	"time"
)

// Config is the bus's settings.
type Config struct {
	// History is how many of the last published events the bus keeps,
	// in publish order, for a reader that reconnects or takes over
	// ([Bus.SubscribeAfter], [Bus.SubscribeHistory]); 0 keeps
	// [DefaultHistory], a negative number none. Each costs about 430
	// bytes (a power event of a System, measured).
	History int
}

// DefaultHistory is [DefaultConfig]'s History.
const DefaultHistory = 10000

// DefaultConfig is what the flags default to.
func DefaultConfig() Config { return Config{History: DefaultHistory} }

// RegisterFlags registers the settings' flags on fs, defaulting to c.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.IntVar(&c.History, "event-history", c.History,
		"events each replica keeps (the newest, about 430 bytes each) for a Server-Sent Events client reconnecting with Last-Event-ID and for a new leader's delivery; negative keeps none")
}

// Record is an event the bus holds and when this replica published it
// (this replica's clock).
type Record struct {
	Event
	Published time.Time
}

// history is a ring of the last len(ring) records; the zero history
// holds none.
type history struct {
	ring  []Record
	start int // index of the oldest record
	n     int // records held
}

func newHistory(size int) history {
	if size <= 0 {
		return history{}
	}
	return history{ring: make([]Record, size)}
}

// add records r, dropping the oldest when full.
func (h *history) add(r Record) {
	if len(h.ring) == 0 {
		return
	}
	if h.n < len(h.ring) {
		h.ring[(h.start+h.n)%len(h.ring)] = r
		h.n++
		return
	}
	h.ring[h.start] = r
	h.start = (h.start + 1) % len(h.ring)
}

// at is the i-th oldest record held.
func (h *history) at(i int) *Record { return &h.ring[(h.start+i)%len(h.ring)] }

// find is the index of the newest record of event id, -1 if none held.
func (h *history) find(id string) int {
	for i := h.n - 1; i >= 0; i-- {
		if h.at(i).ID == id {
			return i
		}
	}
	return -1
}

// from copies the records from index i on, oldest first.
func (h *history) from(i int) []Record {
	out := make([]Record, 0, h.n-i)
	for ; i < h.n; i++ {
		out = append(out, *h.at(i))
	}
	return out
}

// Newest is the index in rs of the newest record of event id, -1 when
// rs holds none.
func Newest(rs []Record, id string) int {
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i].ID == id {
			return i
		}
	}
	return -1
}

// Since returns the records of rs published at or after t.
func Since(rs []Record, t time.Time) []Record {
	for i, r := range rs {
		if !r.Published.Before(t) {
			return rs[i:]
		}
	}
	return nil
}
