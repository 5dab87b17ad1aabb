package bench

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPercentile(t *testing.T) {
	ms := func(n ...int) []time.Duration {
		var out []time.Duration
		for _, x := range n {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	for _, tc := range []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 99, 0},
		{"one", ms(7), 50, 7 * time.Millisecond},
		{"p50 of 1..100", ms(hundred...), 50, 50 * time.Millisecond},
		{"p99 of 1..100", ms(hundred...), 99, 99 * time.Millisecond},
		{"p95 of four", ms(1, 2, 3, 40), 95, 40 * time.Millisecond},
		{"p50 of four", ms(1, 2, 3, 40), 50, 2 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Percentile(tc.sorted, tc.p); got != tc.want {
				t.Errorf("Percentile(p%v) = %s, want %s", tc.p, got, tc.want)
			}
		})
	}
}

func TestRecorderSummaries(t *testing.T) {
	r := NewRecorder()
	r.Add("zz other", time.Millisecond, "")
	r.Add(OpBootCd, 3*time.Millisecond, "409")
	r.Add(OpBootCd, time.Millisecond, "")
	r.Add(OpGetSystem, 2*time.Millisecond, "")
	got := r.Summaries()
	want := []Summary{
		{Op: OpGetSystem, N: 1, FailedBy: map[string]int{}, P50: 2 * time.Millisecond, P95: 2 * time.Millisecond, P99: 2 * time.Millisecond, Max: 2 * time.Millisecond},
		{Op: OpBootCd, N: 2, Failed: 1, FailedBy: map[string]int{"409": 1}, P50: time.Millisecond, P95: 3 * time.Millisecond, P99: 3 * time.Millisecond, Max: 3 * time.Millisecond},
		{Op: "zz other", N: 1, FailedBy: map[string]int{}, P50: time.Millisecond, P95: time.Millisecond, P99: time.Millisecond, Max: time.Millisecond},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Summaries (-want +got):\n%s", diff)
	}
}
