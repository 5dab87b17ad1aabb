package redfish

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/internal/addrkey"
)

// Reads (GET, HEAD) come from the caches and cost the bridge CPU, not the
// apiserver; so that one user's flood of reads cannot hold the others up,
// they share the server: at most a number of reads run at once, and when
// one ends the next to run is the waiting read of the reader with the
// fewest reads running (the longest waiting among equals). One reader
// runs at most three quarters of the slots (all of one or two): the rest
// are kept for the others, so a flood of heavy reads (a 100-member
// $expand page) queues behind itself and another reader's read starts at
// once, sharing the CPUs with fewer of the flood's. A reader is the
// authenticated user, or for a public read without credentials the
// client's address (an IPv6 /64 counts as one).

// ReadShare is how reads share the server.
type ReadShare struct {
	// Concurrent is how many reads run at once; 0:
	// [DefaultReadConcurrency] per CPU (GOMAXPROCS); negative: no limit.
	Concurrent int
	// Queue is how many reads of one reader may wait; past it a read is
	// refused with 429 and Retry-After. 0: [DefaultReadQueue].
	Queue int
}

// Defaults of [ReadShare].
const (
	DefaultReadConcurrency = 4
	DefaultReadQueue       = 256
)

// ReadThrottledError refuses a read of a reader with [ReadShare.Queue]
// reads waiting already. 429 with Retry-After.
type ReadThrottledError struct {
	Reader string
	Queue  int
}

func (e *ReadThrottledError) Error() string {
	return fmt.Sprintf("%s has %d reads waiting already", e.Reader, e.Queue)
}

// retryAfterRead is the Retry-After of a read refused for the queue: the
// reader's own reads are ahead, and each takes milliseconds.
const retryAfterRead = "1"

// answer is the Redfish error of the refusal.
func (e *ReadThrottledError) answer() *Error {
	m := msg("GeneralError", nil)
	m.Resolution = fmt.Sprintf("Too many reads by this client at once (%d waiting): retry in %s seconds.", e.Queue, retryAfterRead)
	return &Error{Status: http.StatusTooManyRequests, Messages: []Message{m}, Header: http.Header{"Retry-After": {retryAfterRead}}, Cause: e}
}

// readShares schedules reads ([ReadShare]). Its maps hold only readers
// with reads running or waiting.
type readShares struct {
	slots, queue int
	// perReader is how many reads one reader runs at once: slots less
	// the quarter kept for other readers.
	perReader int

	mu      sync.Mutex
	running int
	// runs counts each reader's running reads, waits holds its waiting
	// ones, oldest first.
	runs  map[string]int
	waits map[string][]*readWaiter
	// arrivals numbers the waiters in arrival order.
	arrivals uint64
}

// readWaiter is a waiting read; granted is closed when it may run.
type readWaiter struct {
	seq     uint64
	granted chan struct{}
}

// newReadShares returns the scheduler of share; nil (no limit) when
// share.Concurrent is negative.
func newReadShares(share ReadShare) *readShares {
	if share.Concurrent < 0 {
		return nil
	}
	if share.Concurrent == 0 {
		share.Concurrent = DefaultReadConcurrency * runtime.GOMAXPROCS(0)
	}
	if share.Queue <= 0 {
		share.Queue = DefaultReadQueue
	}
	return &readShares{slots: share.Concurrent, perReader: share.Concurrent - share.Concurrent/4, queue: share.Queue,
		runs: map[string]int{}, waits: map[string][]*readWaiter{}}
}

// acquire waits until reader's read may run (or ctx ends) and returns the
// function that ends it.
func (r *readShares) acquire(ctx context.Context, reader string) (func(), error) {
	if r == nil {
		return func() {}, nil
	}
	r.mu.Lock()
	if r.running < r.slots && r.runs[reader] < r.perReader {
		r.startLocked(reader)
		r.mu.Unlock()
		return r.releaser(reader), nil
	}
	if len(r.waits[reader]) >= r.queue {
		r.mu.Unlock()
		return nil, &ReadThrottledError{Reader: reader, Queue: r.queue}
	}
	r.arrivals++
	w := &readWaiter{seq: r.arrivals, granted: make(chan struct{})}
	r.waits[reader] = append(r.waits[reader], w)
	r.mu.Unlock()

	select {
	case <-w.granted:
		return r.releaser(reader), nil
	case <-ctx.Done():
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-w.granted: // granted meanwhile: hand the slot on
		r.endLocked(reader)
	default:
		r.dropLocked(reader, w)
	}
	return nil, fmt.Errorf("wait to read: %w: %w", ErrUnavailable, ctx.Err())
}

// releaser is the function ending one read of reader (once).
func (r *readShares) releaser(reader string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.endLocked(reader)
		})
	}
}

// startLocked counts a read of reader as running.
func (r *readShares) startLocked(reader string) {
	r.running++
	r.runs[reader]++
}

// endLocked ends a read of reader and starts the next waiting one: of the
// reader with the fewest running (below its share), the longest waiting
// among equals.
func (r *readShares) endLocked(reader string) {
	r.running--
	if r.runs[reader] <= 1 {
		delete(r.runs, reader)
	} else {
		r.runs[reader]--
	}
	var next string
	var head *readWaiter
	for who, ws := range r.waits {
		if r.runs[who] >= r.perReader {
			continue
		}
		if head == nil || r.runs[who] < r.runs[next] || (r.runs[who] == r.runs[next] && ws[0].seq < head.seq) {
			next, head = who, ws[0]
		}
	}
	if head == nil {
		return
	}
	r.dropLocked(next, head)
	r.startLocked(next)
	close(head.granted)
}

// dropLocked removes waiter w of reader.
func (r *readShares) dropLocked(reader string, w *readWaiter) {
	ws := r.waits[reader]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(r.waits, reader)
	} else {
		r.waits[reader] = ws
	}
}

// shareReads runs a read when the caller's share allows ([readShares]).
func (s *Server) shareReads(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		done, err := s.readShares.acquire(c.Request().Context(), readerOf(c))
		if err != nil {
			return err
		}
		defer done()
		return next(c)
	}
}

// readerOf names the reader of a read: "user " and the authenticated
// user, else "address " and the client's address (an IPv6 /64).
func readerOf(c echo.Context) string {
	if user := principal(c).User; user != "" {
		return "user " + user
	}
	return "address " + addrkey.FromHost(c.Request().RemoteAddr)
}
