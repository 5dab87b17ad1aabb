package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/system"
)

func keysN(n int) []system.Key {
	keys := make([]system.Key, n)
	for i := range keys {
		keys[i] = system.Key{Namespace: "ns", Name: fmt.Sprintf("vm-%d", i)}
	}
	return keys
}

// TestForEachStopsHandingOutWork: once ctx ends no key is handed out any
// more, and the error says how many were never started (a bounded setup
// step of 10,000 creates must end, not fail 10,000 times).
func TestForEachStopsHandingOutWork(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	var ran atomic.Int64
	err := forEach(ctx, keysN(100), 2, func(context.Context, system.Key) error {
		if ran.Add(1) == 10 {
			cancel()
		}
		return nil
	})
	if n := ran.Load(); n >= 100 || n < 10 {
		t.Fatalf("ran %d of 100 after the context ended at 10", n)
	}
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "not started") {
		t.Fatalf("err = %v, want the keys not started and context.Canceled", err)
	}
}

func TestForEachJoinsErrors(t *testing.T) {
	err := forEach(t.Context(), keysN(10), 3, func(_ context.Context, k system.Key) error {
		if k.Name == "vm-3" || k.Name == "vm-7" {
			return errors.New("failed " + k.Name)
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "failed vm-3") || !strings.Contains(err.Error(), "failed vm-7") {
		t.Fatalf("err = %v, want both failures", err)
	}
	if err := forEach(t.Context(), keysN(10), 3, func(context.Context, system.Key) error { return nil }); err != nil {
		t.Fatalf("err = %v, want nil", err)
	}
}

func TestFirstErrors(t *testing.T) {
	var errs []error
	for i := range 10 {
		errs = append(errs, fmt.Errorf("error %d", i))
	}
	got := firstErrors(errors.Join(errs...), 3).Error()
	if !strings.Contains(got, "error 2") || strings.Contains(got, "error 3") || !strings.Contains(got, "and 7 more errors") {
		t.Fatalf("firstErrors = %q, want errors 0-2 and a count of 7 more", got)
	}
	if got := firstErrors(errors.Join(errs[:2]...), 3); got.Error() != "error 0\nerror 1" {
		t.Fatalf("firstErrors of 2 = %q, want both unchanged", got)
	}
}
