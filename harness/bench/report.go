package bench

import (
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// Targets of the 1000-VM bench (docs/bench.md).
const (
	TargetGetP99       = 2 * time.Millisecond
	TargetMutatingX    = 1.3
	TargetWritesPerOp  = 1.0
	TargetRSS          = 150 << 20
	TargetRSSAtVMCount = 1000
)

func ms(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) }

func mb(b int64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 0, 64) + " MB" }

func find(sums []Summary, op string) (Summary, bool) {
	for _, s := range sums {
		if s.Op == op {
			return s, true
		}
	}
	return Summary{}, false
}

// perOp is the probe's apiserver requests per call of op: all, sync only,
// VM writes (all, sync).
func (r *Result) perOp(op string) (all, sync, writes, syncWrites float64, ok bool) {
	s, found := find(r.Probe.Summaries(), op)
	k := r.ProbeKube[op]
	if !found || s.N == 0 || k == nil {
		return 0, 0, 0, 0, false
	}
	n := float64(s.N)
	isSync := func(q KubeReq) bool { return q.Sync }
	every := func(KubeReq) bool { return true }
	syncWrite := func(q KubeReq) bool { return q.Sync && IsVMWrite(q) }
	return float64(k.Sum(every)) / n, float64(k.Sum(isSync)) / n, float64(k.Sum(IsVMWrite)) / n, float64(k.Sum(syncWrite)) / n, true
}

// Row is one printed or exported measurement.
type Row struct {
	Op, Metric string
	Value      float64
}

// Rows flattens r for the CSV and the target checks.
func (r *Result) Rows() []Row {
	var rows []Row
	add := func(op, metric string, v float64) { rows = append(rows, Row{op, metric, v}) }
	floorApplyK, _ := find(r.FloorLoad.Summaries(), FloorApply)
	floorSeq := r.FloorSeq.Summaries()
	floorApply1, _ := find(floorSeq, FloorApply)
	cacheGET, _ := find(floorSeq, FloorCacheGET)
	probe := r.Probe.Summaries()
	for _, s := range r.Load.Summaries() {
		add(s.Op, "calls", float64(s.N))
		add(s.Op, "failed", float64(s.Failed))
		add(s.Op, "p50_ms", float64(s.P50)/1e6)
		add(s.Op, "p95_ms", float64(s.P95)/1e6)
		add(s.Op, "p99_ms", float64(s.P99)/1e6)
		add(s.Op, "max_ms", float64(s.Max)/1e6)
		if p, ok := find(probe, s.Op); ok {
			add(s.Op, "probe_p50_ms", float64(p.P50)/1e6)
			if slices.Contains(MutatingOps, s.Op) && floorApply1.P50 > 0 {
				add(s.Op, "probe_p50_over_raw_apply_seq_p50", float64(p.P50)/float64(floorApply1.P50))
			}
		}
		if all, sync, w, sw, ok := r.perOp(s.Op); ok {
			add(s.Op, "kube_req_per_call", all)
			add(s.Op, "kube_req_per_call_sync", sync)
			add(s.Op, "vm_writes_per_call", w)
			add(s.Op, "vm_writes_per_call_sync", sw)
		}
		if slices.Contains(MutatingOps, s.Op) && floorApplyK.P50 > 0 {
			add(s.Op, "p50_over_raw_apply_p50", float64(s.P50)/float64(floorApplyK.P50))
			add(s.Op, "p99_over_raw_apply_p99", float64(s.P99)/float64(floorApplyK.P99))
		}
		if s.Op == OpGetSystem && cacheGET.P99 > 0 {
			add(s.Op, "p99_over_cache_read_p99", float64(s.P99)/float64(cacheGET.P99))
		}
	}
	for _, s := range r.ReadOnly.Summaries() {
		add(s.Op, "calls", float64(s.N))
		add(s.Op, "failed", float64(s.Failed))
		add(s.Op, "p50_ms", float64(s.P50)/1e6)
		add(s.Op, "p95_ms", float64(s.P95)/1e6)
		add(s.Op, "p99_ms", float64(s.P99)/1e6)
		add(s.Op, "max_ms", float64(s.Max)/1e6)
		if cacheGET.P99 > 0 {
			add(s.Op, "p99_over_cache_read_p99", float64(s.P99)/float64(cacheGET.P99))
		}
	}
	for _, f := range []struct {
		label string
		rec   *Recorder
	}{{"seq", r.FloorSeq}, {"x" + strconv.Itoa(r.Scenario.Clients), r.FloorLoad}} {
		for _, s := range f.rec.Summaries() {
			op := s.Op + " [" + f.label + "]"
			add(op, "calls", float64(s.N))
			add(op, "failed", float64(s.Failed))
			add(op, "p50_ms", float64(s.P50)/1e6)
			add(op, "p95_ms", float64(s.P95)/1e6)
			add(op, "p99_ms", float64(s.P99)/1e6)
		}
	}
	var mutating, failed int
	for _, s := range r.Load.Summaries() {
		failed += s.Failed
		if slices.Contains(MutatingOps, s.Op) {
			mutating += s.N
		}
	}
	add("load", "cycles", float64(r.Cycles))
	add("load", "cycles_failed", float64(len(r.CycleErrs)))
	add("load", "failed_requests", float64(failed))
	add("load", "vms_converged", float64(r.Converged))
	add("load", "converge_s", r.ConvergeIn.Seconds())
	add("load", "mutating_calls", float64(mutating))
	add("load", "bridge_kube_requests", float64(r.Kube.Sum(func(KubeReq) bool { return true })))
	add("load", "bridge_kube_requests_sync", float64(r.Kube.Sum(func(k KubeReq) bool { return k.Sync })))
	syncWrites := r.Kube.Sum(func(k KubeReq) bool { return k.Sync && IsVMWrite(k) })
	allWrites := r.Kube.Sum(IsVMWrite)
	add("load", "bridge_vm_writes_sync", float64(syncWrites))
	add("load", "bridge_vm_writes_all", float64(allWrites))
	if mutating > 0 {
		add("load", "vm_writes_sync_per_mutating_call", float64(syncWrites)/float64(mutating))
		add("load", "vm_writes_all_per_mutating_call", float64(allWrites)/float64(mutating))
	}
	add("load", "bridge_vm_applies", float64(r.Kube.Sum(func(k KubeReq) bool { return k.Verb == "APPLY" && k.Resource == kubevirt.VirtualMachines.Resource })))
	add("load", "apiserver_vm_applies", r.APIServer["APPLY virtualmachines"])
	add("load", "apiserver_requests_all_clients", r.APIServer.Total())
	for code, n := range r.KubeFailed {
		add("load", "bridge_kube_answers_"+strconv.Itoa(code), float64(n))
	}
	for _, m := range slices.Sorted(maps.Keys(r.Writer)) {
		c := r.Writer[m]
		add("manager "+m, "applies", float64(c.Applies))
		add("manager "+m, "conflicts", float64(c.Conflicts))
		add("manager "+m, "retries", float64(c.Retries))
		add("manager "+m, "failures", float64(c.Failures))
	}
	p := r.Proc
	add("process", "self_rss_before_mb", float64(p.SelfRSSBefore)/(1<<20))
	add("process", "self_rss_peak_mb", float64(p.SelfRSSPeak)/(1<<20))
	add("process", "self_cpu_s", p.SelfCPU.Seconds())
	add("process", "self_cpu_cores_avg", p.SelfCPU.Seconds()/p.Wall.Seconds())
	add("process", "apiserver_rss_peak_mb", float64(p.APIRSSPeak)/(1<<20))
	add("process", "apiserver_cpu_s", p.Cluster.APIServer.Seconds())
	add("process", "virt_controller_cpu_s", p.Cluster.VirtController.Seconds())
	return rows
}

// Print writes r as a table.
func (r *Result) Print(w io.Writer) {
	sc := r.Scenario
	conn := "keep-alive"
	if sc.Close {
		conn = "Connection: close"
	}
	fmt.Fprintf(w, "\n=== %s CRDs, %d VMs (%d per namespace), %d clients, %s, started %s, setup %s ===\n",
		sc.Variant, sc.VMs, sc.PerNamespace, sc.Clients, conn, r.Started.UTC().Format(time.RFC3339), r.Setup.Round(time.Second))
	get := map[string]map[string]float64{}
	for _, row := range r.Rows() {
		if get[row.Op] == nil {
			get[row.Op] = map[string]float64{}
		}
		get[row.Op][row.Metric] = row.Value
	}
	opt := func(op, m, format string) string {
		v, ok := get[op][m]
		if !ok {
			return "-"
		}
		return fmt.Sprintf(format, v)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "operation\tcalls\tfailed\tp50 ms\tp95 ms\tp99 ms\tmax ms\tx raw apply p50/p99\tGET/cache p99\tseq p50 ms\tseq x raw\tkube req/call (sync)\tVM writes/call (sync)\t")
	for _, s := range r.Load.Summaries() {
		op := s.Op
		ratio := "-"
		if _, ok := get[op]["p50_over_raw_apply_p50"]; ok {
			ratio = opt(op, "p50_over_raw_apply_p50", "%.2f") + " / " + opt(op, "p99_over_raw_apply_p99", "%.2f")
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s (%s)\t%s (%s)\t\n", op, s.N, s.Failed,
			ms(s.P50), ms(s.P95), ms(s.P99), ms(s.Max), ratio, opt(op, "p99_over_cache_read_p99", "%.0f"),
			opt(op, "probe_p50_ms", "%.2f"), opt(op, "probe_p50_over_raw_apply_seq_p50", "%.2f"),
			opt(op, "kube_req_per_call", "%.2f"), opt(op, "kube_req_per_call_sync", "%.2f"),
			opt(op, "vm_writes_per_call", "%.2f"), opt(op, "vm_writes_per_call_sync", "%.2f"))
	}
	for _, s := range r.ReadOnly.Summaries() {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t-\t%s\t\t\t\t\t\n", s.Op, s.N, s.Failed, ms(s.P50), ms(s.P95), ms(s.P99), ms(s.Max),
			opt(s.Op, "p99_over_cache_read_p99", "%.0f"))
	}
	for _, f := range []struct {
		label string
		rec   *Recorder
	}{{"sequential", r.FloorSeq}, {strconv.Itoa(sc.Clients) + " in parallel", r.FloorLoad}} {
		for _, s := range f.rec.Summaries() {
			fmt.Fprintf(tw, "%s (%s)\t%d\t%d\t%s\t%s\t%s\t%s\t\t\t\t\t\t\t\n", s.Op, f.label, s.N, s.Failed, ms(s.P50), ms(s.P95), ms(s.P99), ms(s.Max))
		}
	}
	_ = tw.Flush()
	l := get["load"]
	fmt.Fprintf(w, "cycles %.0f (failed %.0f), failed Redfish requests %.0f, VMs converged %.0f/%d in %.1f s\n",
		l["cycles"], l["cycles_failed"], l["failed_requests"], l["vms_converged"], sc.VMs, l["converge_s"])
	fmt.Fprintf(w, "bridge -> apiserver during load: %.0f requests (%.0f while serving Redfish); VM writes %.0f (%.0f sync) for %.0f mutating calls = %.2f per call (%.2f sync)\n",
		l["bridge_kube_requests"], l["bridge_kube_requests_sync"], l["bridge_vm_writes_all"], l["bridge_vm_writes_sync"], l["mutating_calls"],
		l["vm_writes_all_per_mutating_call"], l["vm_writes_sync_per_mutating_call"])
	fmt.Fprintf(w, "cross-check: VM applies counted by the bridge transport %.0f, by apiserver_request_total %.0f; apiserver requests from all clients %.0f\n",
		l["bridge_vm_applies"], l["apiserver_vm_applies"], l["apiserver_requests_all_clients"])
	fmt.Fprintf(w, "bridge non-2xx apiserver answers: %v\n", r.KubeFailed)
	fmt.Fprintf(w, "by verb/resource: %s\n", topKube(r.Kube, 12))
	for _, m := range slices.Sorted(maps.Keys(r.Writer)) {
		c := r.Writer[m]
		fmt.Fprintf(w, "manager %-14s applies %6d  conflicts %5d  retries %5d  failures %d\n", m, c.Applies, c.Conflicts, c.Retries, c.Failures)
	}
	p := r.Proc
	fmt.Fprintf(w, "process (bridge + simulator + clients, one Go process): RSS %s before load, peak %s; CPU %.1f s over %.1f s (%.2f cores)\n",
		mb(p.SelfRSSBefore), mb(p.SelfRSSPeak), p.SelfCPU.Seconds(), p.Wall.Seconds(), p.SelfCPU.Seconds()/p.Wall.Seconds())
	fmt.Fprintf(w, "kube-apiserver: RSS %s before load, peak %s; CPU %.1f s\n", mb(p.APIRSSBefore), mb(p.APIRSSPeak), p.Cluster.APIServer.Seconds())
	fmt.Fprintf(w, "virt-controller: CPU %s s (%.2f cores)\n", p.Cluster.virtController(), p.Cluster.VirtController.Seconds()/p.Wall.Seconds())
	if n := len(r.CycleErrs); n > 0 {
		fmt.Fprintf(w, "first cycle errors (%d):\n", n)
		for _, e := range r.CycleErrs[:min(5, n)] {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	r.printTargets(w, get)
}

func (r *Result) printTargets(w io.Writer, get map[string]map[string]float64) {
	sc := r.Scenario
	yes := reached
	fmt.Fprintln(w, "targets:")
	if v, ok := get[OpGetSystem]["p99_ms"]; ok {
		fmt.Fprintf(w, "  GET System p99 %.2f ms <= %s ms during the provisioning load (%d VMs): %s\n", v, ms(TargetGetP99), sc.VMs, yes(v <= float64(TargetGetP99)/1e6))
	}
	for _, op := range []string{OpGetSystemRO1, OpGetSystemRO} {
		if v, ok := get[op]["p99_ms"]; ok {
			fmt.Fprintf(w, "  %s p99 %.2f ms <= %s ms (%d VMs): %s\n", op, v, ms(TargetGetP99), sc.VMs, yes(v <= float64(TargetGetP99)/1e6))
		}
	}
	for _, op := range MutatingOps {
		if v, ok := get[op]["p50_over_raw_apply_p50"]; ok {
			fmt.Fprintf(w, "  %s p50 = %.2fx raw apply p50 under load (seq %sx) <= %.1fx: %s\n", op, v, fmtOpt(get[op], "probe_p50_over_raw_apply_seq_p50"), TargetMutatingX, yes(v <= TargetMutatingX))
		}
	}
	if sc.Variant == crds.MapList {
		worst := 0.0
		for _, op := range MutatingOps {
			worst = max(worst, get[op]["vm_writes_per_call_sync"])
		}
		load := get["load"]["vm_writes_sync_per_mutating_call"]
		fmt.Fprintf(w, "  VM writes per mutating call (map mode): worst op %.2f (probe), %.2f over the load: %s\n", worst, load, yes(worst <= TargetWritesPerOp && load <= TargetWritesPerOp))
	}
	f := get["load"]["failed_requests"]
	fmt.Fprintf(w, "  zero failed requests (%.0f): %s\n", f, yes(f == 0))
	rss := get["process"]["self_rss_peak_mb"]
	fmt.Fprintf(w, "  RSS < 150 MB: whole bench process peak %.0f MB with %d VMs: %s (upper bound on the bridge's own)\n", rss, sc.VMs, yes(rss < 150))
}

func fmtOpt(m map[string]float64, k string) string {
	if v, ok := m[k]; ok {
		return fmt.Sprintf("%.2f", v)
	}
	return "-"
}

func topKube(k KubeCounts, n int) string {
	type kv struct {
		k string
		v int64
	}
	agg := map[string]int64{}
	for q, v := range k {
		agg[q.Verb+" "+q.Resource] += v
	}
	var all []kv
	for key, v := range agg {
		all = append(all, kv{key, v})
	}
	slices.SortFunc(all, func(a, b kv) int { return int(b.v - a.v) })
	var parts []string
	for _, e := range all[:min(n, len(all))] {
		parts = append(parts, fmt.Sprintf("%s=%d", e.k, e.v))
	}
	return strings.Join(parts, ", ")
}

// WriteCSV writes every result's rows: variant,vms,clients,op,metric,value.
func WriteCSV(w io.Writer, results []*Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"variant", "vms", "clients", "operation", "metric", "value"}); err != nil {
		return fmt.Errorf("write CSV: %w", err)
	}
	for _, r := range results {
		for _, row := range r.Rows() {
			rec := []string{string(r.Scenario.Variant), strconv.Itoa(r.Scenario.VMs), strconv.Itoa(r.Scenario.Clients),
				row.Op, row.Metric, strconv.FormatFloat(row.Value, 'g', 6, 64)}
			if err := cw.Write(rec); err != nil {
				return fmt.Errorf("write CSV: %w", err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write CSV: %w", err)
	}
	return nil
}
