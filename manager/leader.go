package manager

import (
	"context"
	"sync"
)

// startLeader campaigns for the Leader group's terms ([Options.Elect])
// with a ctx of the group's (as [Manager.startGroup]).
func (m *Manager) startLeader(ctx context.Context) {
	elect := m.opts.Elect
	if elect == nil {
		elect = leadAlways
	}
	campaign := PartFunc(func(ctx context.Context) error { return elect(ctx, m.leading.Store, m.term) })
	m.launch(ctx, Leader, func() []Part { return []Part{campaign} })
}

// leadAlways is the Elect of a replica that leads alone: one term, for as
// long as ctx lives.
func leadAlways(ctx context.Context, leading func(bool), lead func(context.Context)) error {
	leading(true)
	defer leading(false)
	lead(ctx)
	return nil
}

// term runs one leadership term of every Leader part until ctx ends: it
// builds every [EachTerm] part first (one that cannot be built fails the
// bridge and none starts), then starts all; one that returns ends the
// term's others (an error fails the bridge). It returns once every part
// returned.
func (m *Manager) term(ctx context.Context) {
	m.mu.Lock()
	parts := append([]Part(nil), m.parts[Leader]...)
	m.mu.Unlock()
	runs := make([]Part, len(parts))
	for i, p := range parts {
		t, ok := p.(termPart)
		if !ok {
			runs[i] = p
			continue
		}
		var err error
		if runs[i], err = t(); err != nil {
			m.check(ctx, err)
			return
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for _, p := range runs {
		wg.Go(func() {
			defer cancel()
			m.check(ctx, p.Start(ctx))
		})
	}
	wg.Wait()
}
