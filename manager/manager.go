package manager

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// Options configure a [Manager].
type Options struct {
	// Elect calls lead for every leadership term this replica holds, with
	// a ctx that ends with the term, until ctx ends; leading reports each
	// term's start and end. It returns when ctx ended and the last term's
	// lead returned (service's Lease campaign). Nil: this replica leads one
	// term for as long as it runs.
	Elect func(ctx context.Context, leading func(bool), lead func(ctx context.Context)) error
}

// The manager's phases, in order ([Manager.Ready] reads them).
const (
	phaseNew int32 = iota
	phaseSyncing
	phaseSynced
	phaseServing
	phaseReady
)

// Manager runs the parts of each [Group]. Add the parts, then call
// [Manager.Start] (probes and caches; returns once the caches synced),
// add what was built from the caches, then [Manager.Serve] (servers,
// always-on parts, leader election).
type Manager struct {
	opts Options

	mu      sync.Mutex
	parts   [numGroups][]Part
	started [numGroups]bool
	stopped bool                          // no group starts any more
	cancel  [numGroups]context.CancelFunc // of each started group's ctx
	running [numGroups]sync.WaitGroup

	phase   atomic.Int32
	leading atomic.Bool

	failOnce sync.Once
	err      error
	failed   chan struct{} // closed by the first failure
	done     chan struct{} // closed once every group stopped
}

// New returns a manager with no parts.
func New(opts Options) *Manager {
	return &Manager{opts: opts, failed: make(chan struct{}), done: make(chan struct{})}
}

// Add adds p to group g. A part is added before its group starts: Probes
// and Caches before [Manager.Start], the others before [Manager.Serve].
func (m *Manager) Add(p Part, g Group) error {
	if g < 0 || g >= numGroups {
		return fmt.Errorf("manager: add to %s: no such group", g)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started[g] {
		return fmt.Errorf("manager: add to %s: the group has started", g)
	}
	m.parts[g] = append(m.parts[g], p)
	return nil
}

// Start starts the Probes group, waits until every probe is ready (a
// server listens), starts the Caches group and returns once every cache
// is ready, or the error that stopped the bridge first (a cache that
// failed, or ctx ended). The manager stops when ctx ends; ctx's values (its
// logger) reach every part.
func (m *Manager) Start(ctx context.Context) error {
	m.mu.Lock()
	if m.phase.Load() != phaseNew {
		m.mu.Unlock()
		return errors.New("manager: started twice")
	}
	m.phase.Store(phaseSyncing)
	m.mu.Unlock()
	go m.stop(ctx)
	if err := m.waitReady(m.startGroup(ctx, Probes), Probes); err != nil {
		return fmt.Errorf("manager: probes not ready: %w", err)
	}
	if err := m.waitReady(m.startGroup(ctx, Caches), Caches); err != nil {
		return fmt.Errorf("manager: caches did not sync: %w", err)
	}
	m.phase.Store(phaseSynced)
	return nil
}

// Serve starts the Servers group, waits until every server is ready,
// starts the Always group and then campaigns for the Leader group's
// terms. ctx is Start's (its values reach the parts; its end is already
// watched). It returns the error that stopped the bridge first, if any
// did before the servers were ready.
func (m *Manager) Serve(ctx context.Context) error {
	if !m.phase.CompareAndSwap(phaseSynced, phaseServing) {
		return errors.New("manager: Serve before Start returned, or twice")
	}
	if err := m.waitReady(m.startGroup(ctx, Servers), Servers); err != nil {
		return fmt.Errorf("manager: servers not ready: %w", err)
	}
	m.startGroup(ctx, Always)
	m.phase.Store(phaseReady)
	m.startLeader(ctx)
	return nil
}

// Ready is nil once every cache synced and every server is ready, else
// why not (what /readyz answers).
func (m *Manager) Ready() error {
	switch m.phase.Load() {
	case phaseReady:
		return nil
	case phaseSynced, phaseServing:
		return errors.New("servers not started yet")
	default:
		return errors.New("caches not synced yet")
	}
}

// Leading reports whether this replica leads now (its Leader parts run).
func (m *Manager) Leading() bool { return m.leading.Load() }

// Wait blocks until every group stopped (Start's ctx ended or a part
// failed) and returns the failure, nil when ctx ended. Only after Start.
func (m *Manager) Wait() error {
	<-m.done
	return m.failure()
}

// fail records err as the bridge's failure (the first one wins) and
// stops every group.
func (m *Manager) fail(err error) {
	m.failOnce.Do(func() {
		m.mu.Lock()
		m.err = err
		m.mu.Unlock()
		close(m.failed)
	})
}

func (m *Manager) failure() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

// stop waits for ctx to end or a part to fail, then stops the groups in
// the reverse order of their start, each after the later one returned.
func (m *Manager) stop(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-m.failed:
	}
	m.mu.Lock()
	m.stopped = true
	m.mu.Unlock()
	for g := numGroups - 1; g >= 0; g-- {
		m.mu.Lock()
		cancel := m.cancel[g]
		m.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		m.running[g].Wait()
	}
	close(m.done)
}

// startGroup starts every part of g in its own goroutine, unless the
// manager is stopping, and returns the group's ctx. The group's ctx
// carries ctx's values and ends when [Manager.stop] stops the group, not
// when ctx ends: the groups stop one after the other.
func (m *Manager) startGroup(ctx context.Context, g Group) context.Context {
	return m.launch(ctx, g, func() []Part { return m.parts[g] })
}

// launch starts what parts returns (read under the manager's lock) as
// group g's goroutines, unless the manager is stopping, and returns the
// group's ctx: [Manager.startGroup] for a group's own parts,
// [Manager.startLeader] for the Leader group's campaign.
func (m *Manager) launch(ctx context.Context, g Group, parts func() []Part) context.Context {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.mu.Lock()
	defer m.mu.Unlock()
	m.started[g], m.cancel[g] = true, cancel
	if m.stopped {
		cancel()
		return ctx
	}
	for _, p := range parts() {
		m.running[g].Go(func() { m.check(ctx, p.Start(ctx)) })
	}
	return ctx
}

// check fails the bridge with err when a part returned it while its ctx
// lived; an error after ctx ended is the part's shutdown.
func (m *Manager) check(ctx context.Context, err error) {
	if err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) {
		m.fail(err)
	}
}

// waitReady waits until every [Readier] of g (started with ctx) is ready.
// When the bridge stops first it returns the failure that stopped it, or
// why it stopped.
func (m *Manager) waitReady(ctx context.Context, g Group) error {
	m.mu.Lock()
	parts := m.parts[g]
	m.mu.Unlock()
	errc := make(chan error, len(parts))
	for _, p := range parts {
		r, ok := p.(Readier)
		if !ok {
			errc <- nil
			continue
		}
		go func() { errc <- r.WaitReady(ctx) }()
	}
	for range parts {
		if err := <-errc; err != nil {
			if f := m.failure(); f != nil {
				return f
			}
			return err
		}
	}
	if f := m.failure(); f != nil {
		return f
	}
	return ctx.Err()
}
