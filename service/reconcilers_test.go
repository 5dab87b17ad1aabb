package service

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/controller"
	"github.com/redfish-bridge/redfish-bridge/manager"
)

// TestReconcilersTerm: the reconcilers' parts, added to a manager, run as
// one term: a term starts every reconciler or none (one that cannot start
// fails the term before any runs), one that stops stops the others (and
// the bridge, with its error), and the engines' counters are listed in
// the reconcilers' order.
func TestReconcilersTerm(t *testing.T) {
	stopped := errors.New("stopped")
	for _, tc := range []struct {
		name     string
		startErr error // of the second reconciler
		runErr   error // of the second reconciler's run
		wantRuns int   // runs started
	}{
		{name: "cannot start", startErr: errors.New("no options"), wantRuns: 0},
		{name: "one stops", runErr: stopped, wantRuns: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs := make(chan string, 2)
			first := reconciler{ctrl: controller.New("first", controller.Options{}), part: manager.PartFunc(func(ctx context.Context) error {
				runs <- "first"
				<-ctx.Done()
				return ctx.Err()
			})}
			second := reconciler{ctrl: controller.New("second", controller.Options{}), part: manager.EachTerm(func() (manager.Part, error) {
				if tc.startErr != nil {
					return nil, tc.startErr
				}
				return manager.PartFunc(func(context.Context) error { runs <- "second"; return tc.runErr }), nil
			})}
			r := reconcilers{list: []reconciler{first, second}}
			mgr := manager.New(manager.Options{})
			if err := r.addTo(mgr); err != nil {
				t.Fatal(err)
			}
			if err := mgr.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := mgr.Serve(t.Context()); err != nil {
				t.Fatal(err)
			}
			err := mgr.Wait()
			want := tc.startErr
			if want == nil {
				want = tc.runErr
			}
			if !errors.Is(err, want) {
				t.Errorf("Wait: %v, want %v", err, want)
			}
			if len(runs) != tc.wantRuns {
				t.Errorf("%d runs started, want %d", len(runs), tc.wantRuns)
			}
			var names []string
			for _, s := range r.controllers() {
				names = append(names, s.Name)
			}
			if diff := cmp.Diff([]string{"first", "second"}, names); diff != "" {
				t.Errorf("controllers (-want +got):\n%s", diff)
			}
		})
	}
}
