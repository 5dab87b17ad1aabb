package controller

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/client-go/util/workqueue"

	"github.com/redfish-bridge/redfish-bridge/system"
)

var (
	keyA = system.Key{Namespace: "ns", Name: "a"}
	keyB = system.Key{Namespace: "ns", Name: "b"}
	keyC = system.Key{Namespace: "ns", Name: "c"}
)

// waitTimeout bounds every wait of these tests on an event (generous: a
// loaded machine is slow, but each wait ends on its event).
const waitTimeout = 2 * time.Minute

// keys is a source enqueueing ks when it starts.
func keys(ks ...system.Key) Source {
	return SourceFunc(func(_ context.Context, enqueue func(system.Key)) (func() error, error) {
		for _, k := range ks {
			enqueue(k)
		}
		return func() error { return nil }, nil
	})
}

// term runs c for one term in the background; end cancels it and waits for
// Run to return.
func term(t *testing.T, c *Controller, r Reconciler, sources ...Source) (end func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, r, sources...) }()
	var once sync.Once
	end = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(end)
	return end
}

func recv[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitTimeout):
		t.Fatalf("%s: not within %s", what, waitTimeout)
		var zero T
		return zero
	}
}

// TestSerialisesPerKey: with 4 workers a key is never reconciled twice at
// once, another key is reconciled meanwhile, and the adds of a key under
// way collapse into one more pass after it.
func TestSerialisesPerKey(t *testing.T) {
	c := New("test", Options{Workers: 4})
	var mu sync.Mutex
	running, maxRunning, passesA := 0, 0, 0
	started := make(chan system.Key, 16)
	release := make(chan struct{})
	r := ReconcileFunc(func(_ context.Context, k system.Key) (Result, error) {
		if k == keyA {
			mu.Lock()
			running++
			passesA++
			maxRunning = max(maxRunning, running)
			first := passesA == 1
			mu.Unlock()
			defer func() { mu.Lock(); running--; mu.Unlock() }()
			started <- k
			if first {
				<-release
			}
			return Result{}, nil
		}
		started <- k
		return Result{}, nil
	})
	end := term(t, c, r, keys(keyA))
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(free) // before end: a failed test's blocked pass must return
	if k := recv(t, "first pass", started); k != keyA {
		t.Fatalf("first pass of %s, want %s", k, keyA)
	}
	for range 10 {
		c.Add(keyA) // while A's pass is under way
	}
	c.Add(keyB)
	if k := recv(t, "B while A is under way", started); k != keyB {
		t.Fatalf("pass of %s while A is under way, want %s (A twice at once?)", k, keyB)
	}
	free()
	if k := recv(t, "A again after its pass", started); k != keyA {
		t.Fatalf("pass of %s, want %s again", k, keyA)
	}
	end()
	mu.Lock()
	defer mu.Unlock()
	if maxRunning != 1 || passesA != 2 {
		t.Errorf("key A: at most %d passes at once, %d passes; want 1 at once, 2 passes (10 adds under way collapse into one)", maxRunning, passesA)
	}
}

// recordingLimiter records what the queue asks of its rate limiter.
type recordingLimiter struct {
	workqueue.TypedRateLimiter[system.Key]
	mu      sync.Mutex
	whens   []int // NumRequeues before each When
	forgets int
}

func (l *recordingLimiter) When(k system.Key) time.Duration {
	l.mu.Lock()
	l.whens = append(l.whens, l.NumRequeues(k))
	l.mu.Unlock()
	return l.TypedRateLimiter.When(k)
}

func (l *recordingLimiter) Forget(k system.Key) {
	l.mu.Lock()
	l.forgets++
	l.mu.Unlock()
	l.TypedRateLimiter.Forget(k)
}

// TestRequeue: a failed pass is requeued through the rate limiter with the
// key's growing backoff, a success forgets it, and Result.RequeueAfter
// looks again.
func TestRequeue(t *testing.T) {
	lim := &recordingLimiter{TypedRateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[system.Key](time.Millisecond, time.Second)}
	c := New("test", Options{RateLimiter: func() workqueue.TypedRateLimiter[system.Key] { return lim }})
	passes := make(chan int, 16)
	n := 0
	r := ReconcileFunc(func(context.Context, system.Key) (Result, error) {
		n++
		passes <- n
		switch n {
		case 1, 2:
			return Result{}, errors.New("conflict")
		case 3:
			return Result{RequeueAfter: time.Millisecond}, nil
		}
		return Result{}, nil
	})
	end := term(t, c, r, keys(keyA))
	for want := 1; want <= 4; want++ {
		if got := recv(t, "pass", passes); got != want {
			t.Fatalf("pass %d, want %d", got, want)
		}
	}
	end()
	lim.mu.Lock()
	got := struct {
		Whens   []int
		Forgets int
	}{lim.whens, lim.forgets}
	lim.mu.Unlock()
	// Two failures back off 1 and 2 ms; passes 3 (requeue after) and 4 forget.
	want := struct {
		Whens   []int
		Forgets int
	}{[]int{0, 1}, 2}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rate limiter calls (-want +got):\n%s", diff)
	}
	st := c.Stats()
	if diff := cmp.Diff(Stats{Name: "test", Adds: 1, Successes: 1, Requeues: 1, Errors: 2, Retries: 2}, st,
		cmpopts.IgnoreFields(Stats{}, "Duration")); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
}

// TestStatsAcrossTerms: a Controller's counters add up over its terms, the
// queue depth is the running term's only, and a second Run during a term
// is refused.
func TestStatsAcrossTerms(t *testing.T) {
	c := New("test", Options{Workers: 2})
	done := make(chan system.Key, 16)
	r := ReconcileFunc(func(_ context.Context, k system.Key) (Result, error) {
		done <- k
		return Result{}, nil
	})
	end := term(t, c, r, keys(keyA, keyB))
	recv(t, "term 1 pass", done)
	recv(t, "term 1 pass", done)
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.Run(ended, r); err == nil {
		t.Error("a second Run during a term: no error")
	}
	end()
	if st := c.Stats(); st.Running || st.Adds != 2 || st.Successes != 2 {
		t.Errorf("after term 1: %+v, want not running, 2 adds, 2 successes", st)
	}
	c.Add(keyC) // between terms: dropped
	end = term(t, c, r, keys(keyC))
	if k := recv(t, "term 2 pass", done); k != keyC {
		t.Errorf("term 2 reconciled %s, want %s", k, keyC)
	}
	end()
	st := c.Stats()
	want := Stats{Name: "test", Adds: 3, Successes: 3}
	if diff := cmp.Diff(want, st, cmpopts.IgnoreFields(Stats{}, "Duration")); diff != "" {
		t.Errorf("after term 2 (-want +got):\n%s", diff)
	}
	if st.Duration.Count != 3 || st.Duration.Buckets[DurationBuckets[len(DurationBuckets)-1]] != 3 {
		t.Errorf("duration histogram %+v, want 3 passes", st.Duration)
	}
}
