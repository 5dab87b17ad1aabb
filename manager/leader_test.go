package manager

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// elector plays the Lease campaign: each value sent on terms begins a
// term, which ends when that channel closes (the Lease lost); ended
// receives once the term's lead returned.
type elector struct {
	terms chan chan struct{}
	ended chan struct{}
}

func newElector() *elector {
	return &elector{terms: make(chan chan struct{}), ended: make(chan struct{}, 10)}
}

func (e *elector) elect(ctx context.Context, leading func(bool), lead func(context.Context)) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case end := <-e.terms:
			termCtx, cancel := context.WithCancel(ctx)
			go func() {
				select {
				case <-end:
				case <-termCtx.Done():
				}
				cancel()
			}()
			leading(true)
			lead(termCtx)
			leading(false)
			cancel()
			e.ended <- struct{}{}
		}
	}
}

// TestLeaderTerms: a Leader part starts only while the replica leads, its
// ctx ends with the term and the term's lead returns only after it
// returned; an EachTerm part is built afresh for each term.
func TestLeaderTerms(t *testing.T) {
	var l log
	e := newElector()
	m := New(Options{Elect: e.elect})
	part, up := blocking(&l, "reconciler")
	builds := 0
	perTerm, perTermUp := blocking(&l, "per-term reconciler")
	for _, p := range []Part{part, EachTerm(func() (Part, error) {
		builds++
		l.add("built")
		return perTerm, nil
	})} {
		if err := m.Add(p, Leader); err != nil {
			t.Fatal(err)
		}
	}
	always, alwaysUp := blocking(&l, "always")
	if err := m.Add(always, Always); err != nil {
		t.Fatal(err)
	}
	cancel := startServing(t, m)
	await(t, "the always-on part to start", alwaysUp)
	if m.Leading() || builds != 0 || contains(l.get(), "reconciler started") {
		t.Fatalf("before any term: leading %t, %d builds, events %v", m.Leading(), builds, l.get())
	}
	for term := 1; term <= 2; term++ {
		end := make(chan struct{})
		e.terms <- end
		await(t, "the reconciler to start", up)
		await(t, "the per-term reconciler to start", perTermUp)
		if !m.Leading() || builds != term {
			t.Errorf("term %d: leading %t, %d builds", term, m.Leading(), builds)
		}
		close(end)
		await(t, "the term to end", e.ended)
		if m.Leading() {
			t.Errorf("term %d ended: still leading", term)
		}
	}
	cancel()
	if err := await(t, "Wait", waitErr(m)); err != nil {
		t.Errorf("Wait: %v", err)
	}
	// Each term's parts stopped before its lead returned (the next term's
	// events come after); within a term, in any order.
	var terms [][]string
	for _, ev := range l.get() {
		if ev == "built" {
			terms = append(terms, nil)
		}
		if len(terms) > 0 && ev != "always stopped" {
			terms[len(terms)-1] = append(terms[len(terms)-1], ev)
		}
	}
	for i, evs := range terms {
		got := map[string]bool{}
		for _, ev := range evs {
			got[ev] = true
		}
		want := map[string]bool{"built": true, "reconciler started": true, "per-term reconciler started": true,
			"reconciler stopped": true, "per-term reconciler stopped": true}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("term %d's events (-want +got):\n%s", i+1, diff)
		}
	}
	if len(terms) != 2 {
		t.Errorf("%d terms, want 2: %v", len(terms), l.get())
	}
}

// TestLeaderTermStartsAllOrNone: a term whose EachTerm part cannot be
// built starts none of its parts; a part that returns stops the term's
// others. Either error stops the bridge and Wait returns it.
func TestLeaderTermStartsAllOrNone(t *testing.T) {
	errBuild, errRun := errors.New("no options"), errors.New("stopped")
	for _, tc := range []struct {
		name     string
		buildErr error // of the second part
		runErr   error // of the second part's run
		want     []string
	}{
		{name: "cannot build", buildErr: errBuild, want: nil},
		{name: "one stops", runErr: errRun, want: []string{"first started", "first stopped", "second ran"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l log
			m := New(Options{})
			first, _ := blocking(&l, "first")
			second := EachTerm(func() (Part, error) {
				if tc.buildErr != nil {
					return nil, tc.buildErr
				}
				return PartFunc(func(context.Context) error { l.add("second ran"); return tc.runErr }), nil
			})
			for _, p := range []Part{first, second} {
				if err := m.Add(p, Leader); err != nil {
					t.Fatal(err)
				}
			}
			if err := m.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := m.Serve(t.Context()); err != nil {
				t.Fatal(err)
			}
			want := tc.buildErr
			if want == nil {
				want = tc.runErr
			}
			if err := await(t, "Wait", waitErr(m)); !errors.Is(err, want) {
				t.Errorf("Wait: %v, want %v", err, want)
			}
			got := map[string]bool{}
			for _, ev := range l.get() {
				got[ev] = true
			}
			wantEvents := map[string]bool{}
			for _, ev := range tc.want {
				wantEvents[ev] = true
			}
			if diff := cmp.Diff(wantEvents, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLeaderPartReturningEndsTheTerm: a Leader part that returns, even
// without an error, ends its term's other parts (a term runs whole or not
// at all); the bridge keeps running.
func TestLeaderPartReturningEndsTheTerm(t *testing.T) {
	m := New(Options{})
	stopped := make(chan struct{})
	first := PartFunc(func(ctx context.Context) error {
		<-ctx.Done()
		close(stopped)
		return nil
	})
	second := PartFunc(func(context.Context) error { return nil })
	for _, p := range []Part{first, second} {
		if err := m.Add(p, Leader); err != nil {
			t.Fatal(err)
		}
	}
	cancel := startServing(t, m)
	await(t, "the first part to stop after the second returned", stopped)
	if err := m.Ready(); err != nil {
		t.Errorf("Ready after the term ended: %v", err)
	}
	cancel()
	if err := await(t, "Wait", waitErr(m)); err != nil {
		t.Errorf("Wait: %v", err)
	}
}
