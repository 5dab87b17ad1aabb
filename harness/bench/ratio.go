package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/pprof"
	"slices"
	"sync"
	"text/tabwriter"
	"time"
)

// OpGetSystems is GET of the Systems collection.
const OpGetSystems = "GET Systems"

// Rate is what a fixed-duration run of GETs measured.
type Rate struct {
	N, Failed int
	Took      time.Duration
	P50, P99  time.Duration
}

// PerSecond is the throughput of successful requests.
func (r Rate) PerSecond() float64 {
	if r.Took <= 0 {
		return 0
	}
	return float64(r.N-r.Failed) / r.Took.Seconds()
}

// ReadOp is one GET measured against the floor: the bridge's paths
// (taken round robin) and, for the floor, the bytes of the first one.
type ReadOp struct {
	Name  string
	Paths []string
}

// RatioRow is one GET at one client count, on the bridge and on the floor
// in the same run.
type RatioRow struct {
	Op            string
	Clients       int
	Bytes         int // body size served by both
	Bridge, Floor Rate
}

// Throughput is the bridge's req/s over the floor's.
func (r RatioRow) Throughput() float64 { return ratio(r.Bridge.PerSecond(), r.Floor.PerSecond()) }

// P99 is the bridge's p99 over the floor's.
func (r RatioRow) P99() float64 {
	return ratio(float64(r.Bridge.P99), float64(r.Floor.P99))
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// RatioOptions say how [Ratios] measures.
type RatioOptions struct {
	Clients []int         // client counts (default 1 and 50)
	Each    time.Duration // per row and server, in two halves (default 6s)
	// Profile, when set, is a file receiving a CPU profile of this process
	// taken only while the bridge is measured.
	Profile string
}

// Ratios measures every op at every client count on the bridge (base,
// with user and password) and on a [FloorServer] answering the same bytes,
// alternating bridge, floor, bridge, floor so that both see the same
// machine. Each server gets its own HTTP client, as [NewHTTPClient] makes
// them (keep-alive, TLS without verification).
func Ratios(ctx context.Context, base, user, password string, ops []ReadOp, o RatioOptions) (rows []RatioRow, err error) {
	if len(o.Clients) == 0 {
		o.Clients = []int{1, 50}
	}
	if o.Each <= 0 {
		o.Each = 6 * time.Second
	}
	floor, err := StartFloor(user, password)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, floor.Close()) }()
	var prof *os.File
	if o.Profile != "" {
		if prof, err = os.Create(o.Profile); err != nil {
			return nil, fmt.Errorf("cpu profile: %w", err)
		}
		defer prof.Close() // closed below
	}
	for _, op := range ops {
		probe := &Client{Base: base, User: user, Password: password, HTTP: NewHTTPClient(1)}
		var body json.RawMessage
		if err := probe.Do(ctx, "", http.MethodGet, op.Paths[0], nil, &body); err != nil {
			return rows, fmt.Errorf("ratio %s: %w", op.Name, err)
		}
		floor.Serve(op.Paths[0], body)
		for _, k := range o.Clients {
			row := RatioRow{Op: op.Name, Clients: k, Bytes: len(body)}
			bridge := &Client{Base: base, User: user, Password: password, HTTP: NewHTTPClient(k)}
			fl := &Client{Base: floor.URL, User: user, Password: password, HTTP: NewHTTPClient(k)}
			for range 2 {
				if prof != nil {
					if err := pprof.StartCPUProfile(prof); err != nil {
						return rows, fmt.Errorf("cpu profile: %w", err)
					}
				}
				b, err := rate(ctx, bridge, op.Paths, k, o.Each/2)
				if prof != nil {
					pprof.StopCPUProfile()
					prof = nil // one profile: the first half of the first row
				}
				if err != nil {
					return rows, fmt.Errorf("ratio %s, %d clients, bridge: %w", op.Name, k, err)
				}
				f, err := rate(ctx, fl, op.Paths[:1], k, o.Each/2)
				if err != nil {
					return rows, fmt.Errorf("ratio %s, %d clients, floor: %w", op.Name, k, err)
				}
				row.Bridge, row.Floor = row.Bridge.add(b), row.Floor.add(f)
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// add sums two runs; the percentiles are the worse of the two.
func (r Rate) add(o Rate) Rate {
	return Rate{N: r.N + o.N, Failed: r.Failed + o.Failed, Took: r.Took + o.Took, P50: max(r.P50, o.P50), P99: max(r.P99, o.P99)}
}

// rate GETs paths round robin with clients workers for d.
func rate(ctx context.Context, c *Client, paths []string, clients int, d time.Duration) (Rate, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	rec := NewRecorder()
	cc := *c
	cc.Rec = rec
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	start := time.Now()
	for w := range clients {
		wg.Go(func() {
			for i := w; ctx.Err() == nil; i += clients {
				err := cc.Do(ctx, "get", http.MethodGet, paths[i%len(paths)], nil, nil)
				if err != nil && ctx.Err() == nil {
					mu.Lock()
					firstErr = cmpErr(firstErr, err)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	var r Rate
	for _, s := range rec.Summaries() {
		r = Rate{N: s.N, Failed: s.Failed, Took: took, P50: s.P50, P99: s.P99}
	}
	return r, firstErr
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// PrintRatios writes rows as a table and the targets they meet.
func PrintRatios(w io.Writer, rows []RatioRow) {
	if len(rows) == 0 {
		return
	}
	printRatioTable(w, rows)
	for _, r := range rows {
		switch {
		case r.Op == OpGetSystem && r.Clients == 1:
			fmt.Fprintf(w, "  GET System, 1 client: %.0f%% of the floor >= %.0f%%: %s\n", 100*r.Throughput(), 100*TargetSystemRatio1, reached(r.Throughput() >= TargetSystemRatio1))
		case r.Op == OpGetSystem:
			fmt.Fprintf(w, "  GET System, %d clients: %.0f%% of the floor >= %.0f%%: %s\n", r.Clients, 100*r.Throughput(), 100*TargetSystemRatioK, reached(r.Throughput() >= TargetSystemRatioK))
		case r.Op == OpGetSystems && r.Clients > 1:
			fmt.Fprintf(w, "  GET Systems, %d clients: %.0f req/s >= %d (target set for 1000 members): %s\n", r.Clients, r.Bridge.PerSecond(), TargetCollectionRPS, reached(r.Bridge.PerSecond() >= TargetCollectionRPS))
		}
	}
}

// printRatioTable writes rows as a table (the targets are the caller's).
func printRatioTable(w io.Writer, rows []RatioRow) {
	fmt.Fprintln(w, "reads against the floor server (same run, same TLS, same body, same client):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "GET\tclients\tbody B\tbridge req/s\tfloor req/s\tthroughput ratio\tbridge p50 ms\tbridge p99 ms\tfloor p99 ms\tp99 ratio\tfailed\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.0f\t%.0f%%\t%s\t%s\t%s\t%.2fx\t%d\t\n", r.Op, r.Clients, r.Bytes,
			r.Bridge.PerSecond(), r.Floor.PerSecond(), 100*r.Throughput(), ms(r.Bridge.P50), ms(r.Bridge.P99), ms(r.Floor.P99), r.P99(),
			r.Bridge.Failed+r.Floor.Failed)
	}
	_ = tw.Flush()
}

func reached(ok bool) string {
	if ok {
		return "REACHED"
	}
	return "NOT reached"
}

// readOps are the GETs measured against the floor: GET System over
// the first VMs, and the Systems collection.
func readOps(systems []string) []ReadOp {
	return []ReadOp{
		{Name: OpGetSystem, Paths: slices.Clip(systems[:min(len(systems), 1000)])},
		{Name: OpGetSystems, Paths: []string{"/redfish/v1/Systems"}},
	}
}
