package manager

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// waitTimeout bounds every wait: a guard against a hang, never what a
// test decides on.
const waitTimeout = 30 * time.Second

// await receives from c or fails the test after waitTimeout.
func await[T any](t *testing.T, what string, c <-chan T) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(waitTimeout):
		t.Fatalf("%s: nothing after %s", what, waitTimeout)
		panic("unreachable")
	}
}

// log records the events of the parts, in order.
type log struct {
	mu     sync.Mutex
	events []string
}

func (l *log) add(e string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *log) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}

// blocking is a part that logs its start, runs until ctx ends and logs
// its stop; started is signalled after the start was logged.
func blocking(l *log, name string) (Part, <-chan struct{}) {
	started := make(chan struct{}, 100)
	return PartFunc(func(ctx context.Context) error {
		l.add(name + " started")
		started <- struct{}{}
		<-ctx.Done()
		l.add(name + " stopped")
		return nil
	}), started
}

// TestStartOrder: the probes are up while a cache syncs, /readyz says
// why not, no server starts before every cache synced, and the manager
// is ready once the servers started.
func TestStartOrder(t *testing.T) {
	var l log
	m := New(Options{})
	probe, probeUp := blocking(&l, "probe")
	server, _ := blocking(&l, "server")
	syncing, release := make(chan struct{}), make(chan struct{})
	cache := CacheFunc(func(ctx context.Context) error {
		close(syncing)
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		l.add("cache synced")
		return nil
	})
	fast := CacheFunc(func(context.Context) error { return nil }) // synced at once: the slow one still holds
	for _, a := range []struct {
		p Part
		g Group
	}{{probe, Probes}, {cache, Caches}, {fast, Caches}, {server, Servers}} {
		if err := m.Add(a.p, a.g); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	started := make(chan error, 1)
	go func() { started <- m.Start(ctx) }()
	await(t, "the probe to start", probeUp)
	await(t, "the cache to start syncing", syncing)
	if err := m.Ready(); err == nil || !strings.Contains(err.Error(), "caches not synced") {
		t.Errorf("Ready while a cache syncs: %v, want caches not synced", err)
	}
	select {
	case err := <-started:
		t.Fatalf("Start returned (%v) while a cache was syncing", err)
	default:
	}
	for _, g := range []Group{Servers, Always, Leader} {
		if m.groupStarted(g) { // the goroutines of a started group may not have run yet: ask the manager
			t.Errorf("the %s group started while a cache was syncing", g)
		}
	}
	close(release)
	if err := await(t, "Start", started); err != nil {
		t.Fatal(err)
	}
	if err := m.Ready(); err == nil || !strings.Contains(err.Error(), "servers not started") {
		t.Errorf("Ready before Serve: %v, want servers not started", err)
	}
	if m.groupStarted(Servers) {
		t.Error("the servers group started before Serve")
	}
	if err := m.Serve(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Ready(); err != nil {
		t.Errorf("Ready after Serve: %v", err)
	}
	cancel()
	if err := await(t, "Wait", waitErr(m)); err != nil {
		t.Errorf("Wait after ctx ended: %v, want nil", err)
	}
	want := []string{"probe started", "cache synced", "server started", "server stopped", "probe stopped"}
	if diff := cmp.Diff(want, l.get()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// groupStarted reports whether g's parts were started.
func (m *Manager) groupStarted(g Group) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.started[g]
}

// waitErr returns Wait's result on a channel.
func waitErr(m *Manager) <-chan error {
	c := make(chan error, 1)
	go func() { c <- m.Wait() }()
	return c
}

// startServing starts m and its servers under a context of the test's
// and returns the func that cancels that context.
func startServing(t *testing.T, m *Manager) context.CancelFunc {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	if err := m.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := m.Serve(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	return cancel
}

// TestShutdownOrder: ctx ending stops the groups in the reverse order of
// their start, each after the later one returned: the leader's term ends
// first, the probes answer until the last.
func TestShutdownOrder(t *testing.T) {
	var l log
	m := New(Options{})
	var ups []<-chan struct{}
	for _, g := range []Group{Probes, Caches, Servers, Always, Leader} {
		p, up := blocking(&l, g.String())
		ups = append(ups, up)
		if err := m.Add(p, g); err != nil {
			t.Fatal(err)
		}
	}
	cancel := startServing(t, m)
	for _, up := range ups {
		await(t, "every part to start", up)
	}
	cancel()
	if err := await(t, "Wait", waitErr(m)); err != nil {
		t.Errorf("Wait: %v", err)
	}
	// The starts are goroutines of their own (in any order once begun);
	// the stops are ordered.
	var stops []string
	for _, e := range l.get() {
		if strings.HasSuffix(e, " stopped") {
			stops = append(stops, e)
		}
	}
	want := []string{"leader stopped", "always stopped", "servers stopped", "caches stopped", "probes stopped"}
	if diff := cmp.Diff(want, stops); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestFailingPartStopsTheBridge: a part of any group that fails stops
// every other part, and Wait returns its error; a cache that fails while
// syncing makes Start return it.
func TestFailingPartStopsTheBridge(t *testing.T) {
	errBoom := errors.New("boom")
	for _, failing := range []Group{Probes, Caches, Servers, Always, Leader} {
		t.Run(failing.String(), func(t *testing.T) {
			var l log
			m := New(Options{})
			var ups []<-chan struct{}
			fail := make(chan struct{})
			for _, g := range []Group{Probes, Caches, Servers, Always, Leader} {
				p, up := blocking(&l, g.String())
				ups = append(ups, up)
				if err := m.Add(p, g); err != nil {
					t.Fatal(err)
				}
			}
			if err := m.Add(PartFunc(func(ctx context.Context) error {
				select {
				case <-fail:
					return errBoom
				case <-ctx.Done():
					return nil
				}
			}), failing); err != nil {
				t.Fatal(err)
			}
			if err := m.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := m.Serve(t.Context()); err != nil {
				t.Fatal(err)
			}
			for _, up := range ups {
				await(t, "every part to start", up)
			}
			close(fail)
			if err := await(t, "Wait after a part failed", waitErr(m)); !errors.Is(err, errBoom) {
				t.Errorf("Wait: %v, want %v", err, errBoom)
			}
			for _, g := range []Group{Probes, Caches, Servers, Always, Leader} {
				if !contains(l.get(), g.String()+" stopped") {
					t.Errorf("%s part not stopped after the %s part failed: %v", g, failing, l.get())
				}
			}
		})
	}
	t.Run("cache while syncing", func(t *testing.T) {
		var l log
		m := New(Options{})
		probe, probeUp := blocking(&l, "probe")
		server, _ := blocking(&l, "server")
		holding := make(chan struct{})
		slow := CacheFunc(func(ctx context.Context) error {
			close(holding)
			<-ctx.Done() // never syncs: only the failure of the other ends it
			l.add("slow cache stopped")
			return ctx.Err()
		})
		broken := CacheFunc(func(context.Context) error {
			<-holding
			return errBoom
		})
		for _, a := range []struct {
			p Part
			g Group
		}{{probe, Probes}, {slow, Caches}, {broken, Caches}, {server, Servers}} {
			if err := m.Add(a.p, a.g); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.Start(t.Context()); !errors.Is(err, errBoom) {
			t.Errorf("Start: %v, want %v", err, errBoom)
		}
		await(t, "the probe to start", probeUp)
		if err := await(t, "Wait", waitErr(m)); !errors.Is(err, errBoom) {
			t.Errorf("Wait: %v, want %v", err, errBoom)
		}
		if err := m.Serve(t.Context()); err == nil {
			t.Error("Serve after a failed Start: no error")
		}
		// The probe's goroutine says "started" when it runs, which may be
		// after the caches' failure stopped the slow cache: only the
		// probe's stop is ordered, after the caches stopped. The server
		// never starts.
		got := l.get()
		want := []string{"probe started", "probe stopped", "slow cache stopped"}
		if diff := cmp.Diff(want, slices.Sorted(slices.Values(got))); diff != "" {
			t.Errorf("events (-want +got, sorted):\n%s", diff)
		}
		if slices.Index(got, "slow cache stopped") > slices.Index(got, "probe stopped") {
			t.Errorf("events %v: the probe stopped before the slow cache", got)
		}
	})
}

func contains(events []string, e string) bool {
	for _, got := range events {
		if got == e {
			return true
		}
	}
	return false
}

// TestAddAfterItsGroupStarted: a part added once its group started would
// never run; Add says so.
func TestAddAfterItsGroupStarted(t *testing.T) {
	m := New(Options{})
	ctx, cancel := context.WithCancel(t.Context())
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	noop := PartFunc(func(context.Context) error { return nil })
	for _, g := range []Group{Probes, Caches} {
		if err := m.Add(noop, g); err == nil {
			t.Errorf("Add to %s after Start: no error", g)
		}
	}
	if err := m.Add(noop, Always); err != nil {
		t.Errorf("Add to always before Serve: %v", err)
	}
	if err := m.Add(noop, Group(7)); err == nil {
		t.Error("Add to group 7: no error")
	}
	cancel()
	if err := await(t, "Wait", waitErr(m)); err != nil {
		t.Error(err)
	}
}

// readyPart is a part that is ready once ready is closed.
type readyPart struct {
	Part
	ready chan struct{}
}

func (p readyPart) WaitReady(ctx context.Context) error {
	select {
	case <-p.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestProbesReadyBeforeCaches: no cache starts before every probe is
// ready (the health server listens), and a probe that fails to become
// ready (a taken port) fails Start.
func TestProbesReadyBeforeCaches(t *testing.T) {
	var l log
	m := New(Options{})
	probe, probeUp := blocking(&l, "probe")
	slow := readyPart{Part: probe, ready: make(chan struct{})}
	cache, cacheUp := blocking(&l, "cache")
	if err := errors.Join(m.Add(slow, Probes), m.Add(cache, Caches)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	started := make(chan error, 1)
	go func() { started <- m.Start(ctx) }()
	await(t, "the probe to start", probeUp)
	if m.groupStarted(Caches) {
		t.Error("the caches group started before the probes were ready")
	}
	close(slow.ready)
	if err := await(t, "Start", started); err != nil {
		t.Fatal(err)
	}
	await(t, "the cache to start", cacheUp)
	cancel()
	if err := await(t, "Wait", waitErr(m)); err != nil {
		t.Error(err)
	}

	errTaken := errors.New("address already in use")
	m = New(Options{})
	cache, _ = blocking(&l, "cache")
	taken := readyPart{Part: PartFunc(func(context.Context) error { return errTaken }), ready: make(chan struct{})}
	if err := errors.Join(m.Add(taken, Probes), m.Add(cache, Caches)); err != nil {
		t.Fatal(err)
	}
	if err := m.Start(t.Context()); !errors.Is(err, errTaken) {
		t.Errorf("Start with a probe that cannot listen: %v, want %v", err, errTaken)
	}
	if m.groupStarted(Caches) {
		t.Error("the caches group started though a probe failed")
	}
	if err := await(t, "Wait", waitErr(m)); !errors.Is(err, errTaken) {
		t.Errorf("Wait: %v, want %v", err, errTaken)
	}
}
