package manager

import "context"

// A Part is one long-running piece of the bridge.
type Part interface {
	// Start runs the part until ctx ends and returns nil then (an error it
	// returns after ctx ended is its shutdown, not a failure). An error
	// while ctx lives stops the bridge. ctx carries the bridge's logger
	// (internal/logctx).
	Start(ctx context.Context) error
}

// PartFunc adapts a function to [Part] (a reconciler's Run).
type PartFunc func(ctx context.Context) error

// Start calls f.
func (f PartFunc) Start(ctx context.Context) error { return f(ctx) }

// A Readier is a part that is not ready as soon as its Start is called: a
// cache until its informers synced. The manager waits for a Caches part
// before it starts the servers, and for a Servers part before it is ready.
type Readier interface {
	// WaitReady returns nil once the part is ready, or ctx's error when
	// ctx ends first (the part failed or the bridge stops).
	WaitReady(ctx context.Context) error
}

// CacheFunc adapts a function that starts a cache and returns once it
// synced (what it started runs until ctx ends: inventory.Start,
// media.StartTrustCache) to a [Readier] part of the Caches group.
func CacheFunc(start func(ctx context.Context) error) Part {
	return &cacheFunc{start: start, synced: make(chan struct{})}
}

type cacheFunc struct {
	start  func(ctx context.Context) error
	synced chan struct{}
}

func (c *cacheFunc) Start(ctx context.Context) error {
	if err := c.start(ctx); err != nil {
		return err
	}
	close(c.synced)
	<-ctx.Done()
	return nil
}

func (c *cacheFunc) WaitReady(ctx context.Context) error {
	select {
	case <-c.synced:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// EachTerm is a Leader part built afresh for every leadership term (a
// reconciler that runs once): at a term's start every EachTerm part of
// the Leader group is built before any part starts, and a build that
// fails fails the term (and the bridge) with none started.
func EachTerm(build func() (Part, error)) Part { return termPart(build) }

type termPart func() (Part, error)

// Start builds the part and runs it: a termPart outside the Leader group
// runs once.
func (t termPart) Start(ctx context.Context) error {
	p, err := t()
	if err != nil {
		return err
	}
	return p.Start(ctx)
}
