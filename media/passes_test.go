package media_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/controller"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// passes is the Writer a reconciler under test reads with: it counts the
// reads of each VM, and every reconcile pass starts with exactly one read of
// its VM (reconcile.go), so the count is the number of passes begun.
type passes struct {
	apply.Writer
	ctrl *controller.Controller

	mu    sync.Mutex
	reads map[system.Key]int
}

// withPasses makes the reconciler read through a new passes and run on its
// engine.
func withPasses(p **passes) func(*media.Options) {
	return func(o *media.Options) {
		*p = &passes{Writer: o.Writer, ctrl: controller.New("media", controller.Options{Workers: 2}), reads: map[system.Key]int{}}
		o.Writer, o.Controller = *p, (*p).ctrl
	}
}

func (p *passes) Read(ctx context.Context, key system.Key) (*apply.VM, error) {
	p.mu.Lock()
	p.reads[key]++
	p.mu.Unlock()
	return p.Writer.Read(ctx, key)
}

func (p *passes) begun(key system.Key) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reads[key]
}

// barrier returns once a pass of key that began after barrier was called
// has ended, so that everything the reconciler's caches held at the call
// was reconciled: it enqueues key and waits for a pass to begin, then
// enqueues it again and waits for the next one. The engine runs one key's
// passes one at a time, so the first has ended when the second begins.
// No time window: each step waits for an event.
func (p *passes) barrier(t *testing.T, e *env, key system.Key) {
	t.Helper()
	for i := range 2 {
		n := p.begun(key)
		p.ctrl.Add(key)
		e.eventually(t, fmt.Sprintf("pass %d of %s after the barrier", i+1, key), func(context.Context) error {
			if got := p.begun(key); got <= n {
				return fmt.Errorf("%d passes begun, want more than %d", got, n)
			}
			return nil
		})
	}
}
