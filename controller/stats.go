package controller

import (
	"sync"
	"sync/atomic"
	"time"
)

// DurationBuckets are the upper bounds, in seconds, of the work duration
// histogram (controller-runtime's reconcile_time_seconds uses similar).
var DurationBuckets = []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// Stats are a Controller's counters, cumulative over its terms, and the
// running term's queue depth.
type Stats struct {
	Name string
	// Running: a term runs now (Depth is its queue's).
	Running bool
	Depth   int
	// Adds counts keys enqueued by the sources and by Add and AddAfter
	// (adds of a key already waiting collapse in the queue but count here).
	Adds int64
	// Passes by outcome: Successes (the key forgotten), Requeues (a
	// Result.RequeueAfter), Errors (requeued with backoff, or dropped when
	// the term was ending).
	Successes, Requeues, Errors int64
	// Retries counts the rate-limited requeues after an error.
	Retries int64
	// Duration is the histogram of Reconcile's durations.
	Duration Histogram
}

// Histogram is a cumulative histogram over [DurationBuckets] (seconds).
type Histogram struct {
	Count uint64
	Sum   float64
	// Buckets maps each upper bound to the passes no longer than it.
	Buckets map[float64]uint64
}

type counters struct {
	adds, successes, requeues, errors, retries atomic.Int64

	mu      sync.Mutex
	count   uint64
	sum     float64
	buckets []uint64 // per bound, not cumulative
}

func (c *counters) observe(d time.Duration) {
	s := d.Seconds()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.count++
	c.sum += s
	for i, b := range DurationBuckets {
		if s <= b {
			c.buckets[i]++
			break
		}
	}
}

// Stats returns a snapshot of the counters.
func (c *Controller) Stats() Stats {
	s := Stats{
		Name: c.name, Running: c.Running(), Depth: c.Len(),
		Adds: c.c.adds.Load(), Successes: c.c.successes.Load(), Requeues: c.c.requeues.Load(),
		Errors: c.c.errors.Load(), Retries: c.c.retries.Load(),
	}
	c.c.mu.Lock()
	defer c.c.mu.Unlock()
	s.Duration = Histogram{Count: c.c.count, Sum: c.c.sum, Buckets: make(map[float64]uint64, len(DurationBuckets))}
	var cum uint64
	for i, b := range DurationBuckets {
		cum += c.c.buckets[i]
		s.Duration.Buckets[b] = cum
	}
	return s
}
