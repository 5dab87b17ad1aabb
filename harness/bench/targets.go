package bench

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Targets of the read path against the floor server (BenchmarkReads and
// BridgeRSS's rates phase) and of the bridge process with 10,000 and
// 100,000 VMs (issue 23, docs/bench.md): the one place that defines them.
const (
	TargetSystemRatioK  = 0.50 // GET System req/s at K clients / floor's
	TargetSystemRatio1  = 0.60 // at 1 client
	TargetCollectionRPS = 2000 // GET /redfish/v1/Systems with 1000 members (BenchmarkReads)

	// RSSTarget bounds the bridge's RSS up to 10,000 VMs, RSSTarget100k
	// above.
	RSSTarget     = 150 << 20
	RSSTarget100k = 400 << 20
	// StartupVsBareList bounds the start-up (exec until /readyz and every
	// system listed) against the time the apiserver takes to list the same
	// objects to a bare client in the same run.
	StartupVsBareList = 1.5
	// StartupTarget bounds the start-up when the bare list was not timed.
	StartupTarget = 10 * time.Second
	// TargetCollectionRatio is the whole Systems collection's req/s
	// against the floor's (up to 10,000 members).
	TargetCollectionRatio = 0.80
	// TargetPageRPS is GET of a $top=1000 page of the collection at
	// RateClients clients, in req/s.
	TargetPageRPS = 500
	// Large is the VM count from which the 100,000-VM targets apply.
	Large = 10001
)

// RSSTargetFor is the RSS bound for vms VMs.
func RSSTargetFor(vms int) int64 {
	if vms >= Large {
		return RSSTarget100k
	}
	return RSSTarget
}

// TargetRow is one target of a [BridgeRSS] run and what the run measured.
type TargetRow struct {
	Target   string
	Measured string
	// Status is REACHED, NOT reached, or "not measured" (the phase did not
	// run in this scenario).
	Status string
}

const notMeasured = "not measured"

// Targets are the run's targets, each with what was measured against it.
func (r *RSSResult) Targets() []TargetRow {
	sc := r.Scenario
	var rows []TargetRow
	add := func(target, measured string, ok bool) {
		rows = append(rows, TargetRow{Target: target, Measured: measured, Status: reached(ok)})
	}
	skip := func(target, why string) {
		rows = append(rows, TargetRow{Target: target, Measured: why, Status: notMeasured})
	}
	sys1, sysK, coll := r.rate(OpGetSystem, 1), r.rate(OpGetSystem, sc.RateClients), r.rate(OpGetSystems, sc.RateClients)
	for _, t := range []struct {
		row  *RatioRow
		want float64
		name string
	}{{sys1, TargetSystemRatio1, "GET System, every system round robin, 1 client"},
		{sysK, TargetSystemRatioK, fmt.Sprintf("GET System, every system round robin, %d clients", sc.RateClients)}} {
		target := fmt.Sprintf("%s >= %.0f%% of the floor", t.name, 100*t.want)
		if t.row == nil {
			skip(target, "no rates phase")
			continue
		}
		add(target, fmt.Sprintf("%.0f%% (%.0f / %.0f req/s)", 100*t.row.Throughput(), t.row.Bridge.PerSecond(), t.row.Floor.PerSecond()), t.row.Throughput() >= t.want)
	}
	if sc.VMs < Large {
		target := fmt.Sprintf("the %d-member Systems collection, %d clients, >= %.0f%% of the floor", sc.VMs, sc.RateClients, 100*TargetCollectionRatio)
		if coll == nil {
			skip(target, "no rates phase")
		} else {
			add(target, fmt.Sprintf("%.0f%% (%.0f / %.0f req/s)", 100*coll.Throughput(), coll.Bridge.PerSecond(), coll.Floor.PerSecond()), coll.Throughput() >= TargetCollectionRatio)
		}
	}
	rss, heap := r.Peak()
	add(fmt.Sprintf("bridge RSS <= %s MB", mib(RSSTargetFor(sc.VMs))), fmt.Sprintf("idle %s MB, peak %s MB (peak heap %s MB)", mib(r.Phase("idle").RSSEnd), mib(rss), mib(heap)),
		rss > 0 && rss <= RSSTargetFor(sc.VMs))
	startup := r.Phase("startup").Took
	if r.BareList > 0 {
		add(fmt.Sprintf("start-up (until /readyz and every system listed) <= %.1fx the bare list", StartupVsBareList),
			fmt.Sprintf("%s vs bare list %s: %.2fx", startup.Round(100*time.Millisecond), r.BareList.Round(100*time.Millisecond), ratio(startup.Seconds(), r.BareList.Seconds())),
			startup > 0 && startup.Seconds() <= StartupVsBareList*r.BareList.Seconds())
	} else {
		add(fmt.Sprintf("start-up (until /readyz and every system listed) < %s (bare list not timed)", StartupTarget), startup.Round(100*time.Millisecond).String(),
			startup > 0 && startup < StartupTarget)
	}
	if sc.VMs >= Large || sc.Pages > 0 {
		target := fmt.Sprintf("$top=%d/$skip pages, %d clients, >= %d req/s", PageSize, sc.RateClients, TargetPageRPS)
		if p := r.page(sc.RateClients); p == nil {
			skip(target, "no pages phase")
		} else {
			add(target, fmt.Sprintf("%.0f req/s (floor %.0f)", p.Bridge.PerSecond(), p.Floor.PerSecond()), p.Bridge.PerSecond() >= TargetPageRPS)
		}
	}
	target := fmt.Sprintf("%d Ironic cycles at %d clients, 0 failed", max(sc.Cycles, 1000), sc.RateClients)
	if sc.PowerPoll > 0 || sc.VMs >= Large {
		target += fmt.Sprintf(", while %d systems are power-polled every %s", max(sc.PowerPoll, 10000), PowerPollInterval)
	}
	switch {
	case sc.Cycles <= 0:
		skip(target, r.cycleSkipped())
	default:
		measured := fmt.Sprintf("%d of %d completed, %d failed, %d not started", r.CyclesDone, sc.Cycles, r.CycleFailures, r.CyclesNotStarted)
		ok := r.CyclesDone == sc.Cycles && r.CycleFailures == 0 && sc.Cycles >= 1000
		if sc.PowerPoll > 0 {
			measured += fmt.Sprintf("; power polls %d, %d failed", r.Polls, r.PollFailures)
			ok = ok && r.PollFailures == 0 && sc.PowerPoll >= 10000
		}
		add(target, measured, ok)
	}
	return rows
}

// cycleSkipped says why no cycles ran.
func (r *RSSResult) cycleSkipped() string {
	if r.Scenario.StatusByBench {
		return "no cycle phase: without virt-controller nothing starts a VM"
	}
	return "no cycle phase"
}

// rate is the rates phase's row for op at clients, nil when not measured.
func (r *RSSResult) rate(op string, clients int) *RatioRow {
	for i := range r.Rates {
		if r.Rates[i].Op == op && r.Rates[i].Clients == clients {
			return &r.Rates[i]
		}
	}
	return nil
}

// page is the pages phase's row at clients, nil when not measured.
func (r *RSSResult) page(clients int) *RatioRow {
	for i := range r.Pages {
		if r.Pages[i].Clients == clients {
			return &r.Pages[i]
		}
	}
	return nil
}

// PrintTargets writes the targets as one table.
func (r *RSSResult) PrintTargets(w io.Writer) {
	sc := r.Scenario
	how := "virt-controller synced the VMs"
	if sc.StatusByBench {
		how = "the bench wrote each VM's status (no virt-controller)"
	}
	fmt.Fprintf(w, "targets, %d VMs in %d namespaces (%s):\n", sc.VMs, sc.namespaces(), how)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\tmeasured\t\t")
	for _, t := range r.Targets() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t\n", t.Target, t.Measured, t.Status)
	}
	_ = tw.Flush()
}
