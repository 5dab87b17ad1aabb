package bench

import (
	"slices"
	"sync"
	"time"
)

// Recorder collects latencies and failures per operation. Safe for
// concurrent use.
type Recorder struct {
	mu  sync.Mutex
	ops map[string]*opRecord
}

type opRecord struct {
	lat    []time.Duration
	failed map[string]int // status code or error -> count
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{ops: map[string]*opRecord{}} }

// Add records one call of op taking d; fail is "" for success, else a short
// reason (e.g. "409" or "timeout").
func (r *Recorder) Add(op string, d time.Duration, fail string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.ops[op]
	if rec == nil {
		rec = &opRecord{failed: map[string]int{}}
		r.ops[op] = rec
	}
	rec.lat = append(rec.lat, d)
	if fail != "" {
		rec.failed[fail]++
	}
}

// Summary is the digest of one operation.
type Summary struct {
	Op            string
	N             int
	Failed        int
	FailedBy      map[string]int
	P50, P95, P99 time.Duration
	Max           time.Duration
}

// Summaries returns the digest of every operation, in op name order.
func (r *Recorder) Summaries() []Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Summary
	for op, rec := range r.ops {
		lat := slices.Clone(rec.lat)
		slices.Sort(lat)
		s := Summary{Op: op, N: len(lat), FailedBy: map[string]int{}}
		for k, v := range rec.failed {
			s.Failed += v
			s.FailedBy[k] = v
		}
		s.P50, s.P95, s.P99 = Percentile(lat, 50), Percentile(lat, 95), Percentile(lat, 99)
		if len(lat) > 0 {
			s.Max = lat[len(lat)-1]
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Summary) int { return compareOps(a.Op, b.Op) })
	return out
}

// Percentile returns the nearest-rank p-th percentile of sorted (0 when
// empty).
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	// nearest rank: ceil(p/100 * n), 1-based
	rank := int(p/100*float64(len(sorted)) + 0.999999999)
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// opOrder is the order of the cycle, for printing.
var opOrder = []string{
	OpGetSystem, OpForceOff, OpInsert, OpBootCd, OpResetOn, OpEject, OpBootHdd, OpGetSystemRO1, OpGetSystemRO,
}

func compareOps(a, b string) int {
	ia, ib := slices.Index(opOrder, a), slices.Index(opOrder, b)
	if ia < 0 {
		ia = len(opOrder)
	}
	if ib < 0 {
		ib = len(opOrder)
	}
	if ia != ib {
		return ia - ib
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
