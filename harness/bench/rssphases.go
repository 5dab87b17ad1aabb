package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/redfish-bridge/redfish-bridge/harness/bridgeproc"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// meter measures the bridge process phase by phase.
type meter struct {
	pid        int
	watch      *rssWatch
	metricsURL string
	readyURL   string
	client     *Client
	cluster    *testcluster.Cluster
	timeout    time.Duration // of each phase
	res        *RSSResult
}

// measure starts the bridge binary against cluster and runs the phases;
// a read or write phase that fails is noted and the next one runs.
func measure(ctx context.Context, sc RSSScenario, cluster *testcluster.Cluster, bin, dir, password string, keys []system.Key, res *RSSResult) (err error) {
	addr, err := bridgeproc.FreeAddr()
	if err != nil {
		return err
	}
	metricsAddr, err := bridgeproc.FreeAddr()
	if err != nil {
		return err
	}
	certFile, keyFile, err := writeTLSFiles(dir)
	if err != nil {
		return err
	}
	o := bridgeproc.Options{
		Bin: bin, Kubeconfig: cluster.BridgeKubeconfig, Namespace: cluster.BridgeNamespace,
		Listen: addr, TLSCert: certFile, TLSKey: keyFile,
		MetricsListen: metricsAddr, Log: cmp.Or(sc.BridgeLog, filepath.Join(dir, "bridge.log")),
	}
	if sc.GoMemLimit != "" {
		o.Env = []string{"GOMEMLIMIT=" + sc.GoMemLimit}
	}
	if sc.Subscriptions > 0 {
		o.Args = append(o.Args, EventArgs(sc.Subscriptions)...)
	}
	if sc.BareList {
		bareList(ctx, cluster, res)
	}
	p, err := bridgeproc.Start(o)
	if err != nil {
		return err
	}
	res.Pid = p.Pid()
	watch := watchRSS(p.Pid(), 100*time.Millisecond)
	defer func() {
		watch.stop()
		if err != nil {
			err = fmt.Errorf("%w\nbridge log tail:\n%s", err, p.Tail())
		}
		err = errors.Join(err, p.Kill())
	}()
	base := "https://" + addr
	m := &meter{pid: p.Pid(), watch: watch, metricsURL: "http://" + metricsAddr + "/metrics", readyURL: "http://" + metricsAddr + "/readyz", res: res,
		cluster: cluster, timeout: sc.PhaseTimeout,
		client: &Client{Base: base, User: demo.AdminUser, Password: password, HTTP: NewHTTPClient(sc.Clients)}}
	others, err := startReplicas(sc, o, dir)
	defer func() { err = errors.Join(err, others.kill()) }()
	if err != nil {
		return err
	}
	if len(others) > 0 {
		m.client.Bases = append([]string{base}, others.bases()...)
	}
	running := runningKeys(keys, sc.Running)
	on := map[system.Key]bool{}
	for _, k := range running {
		on[k] = true
	}
	var writes []system.Key
	for i, k := range keys {
		if len(writes) < sc.Writes && (on[k] && i%4 == 0 || !on[k] && i%4 == 1) { // as many running as halted
			writes = append(writes, k)
		}
	}
	var starts []system.Key
	written := map[system.Key]bool{}
	for _, k := range writes {
		written[k] = true
	}
	for _, k := range keys[:len(keys)-min(sc.Cycles, len(keys))] {
		if len(starts) < sc.EventStarts && !on[k] && !written[k] {
			starts = append(starts, k)
		}
	}
	quiet := func(ctx context.Context, _ *Client) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(sc.Quiet):
			return nil
		}
	}
	phases := []struct {
		name string
		run  func(context.Context, *Client) error
	}{
		{"startup", func(ctx context.Context, c *Client) error {
			wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			if err := p.WaitServing(wctx, base+"/redfish/v1/Systems", c.User, c.Password); err != nil {
				return err
			}
			if err := others.waitServing(wctx, c); err != nil {
				return err
			}
			if err := waitReady(wctx, m.readyURL); err != nil {
				return err
			}
			return waitListed(ctx, c, len(keys))
		}},
		{"idle", quiet},
		{"read", func(ctx context.Context, c *Client) error {
			return forEach(ctx, keys, sc.Clients, func(ctx context.Context, k system.Key) error {
				return c.Do(ctx, OpGetSystem, http.MethodGet, systemPath(k.ID()), nil, nil)
			})
		}},
		{"write", func(ctx context.Context, c *Client) error {
			return forEach(ctx, writes, sc.Clients, func(ctx context.Context, k system.Key) error {
				return writeOne(ctx, c, k, on[k])
			})
		}},
		{"events", func(ctx context.Context, c *Client) error { return m.events(ctx, sc, c, starts) }},
		{"poll", func(ctx context.Context, c *Client) error { return m.poll(ctx, c, keys) }},
		{"rates", func(ctx context.Context, _ *Client) error { return m.rates(ctx, sc, keys) }},
		{"pages", func(ctx context.Context, _ *Client) error { return m.pages(ctx, sc, len(keys)) }},
		{"cycle", func(ctx context.Context, c *Client) error {
			return m.cycles(ctx, sc, c, keys[len(keys)-min(sc.Cycles, len(keys)):], keys[:min(sc.PowerPoll, len(keys))])
		}},
		{"after", quiet},
	}
	for _, ph := range phases {
		if ph.name == "rates" && sc.Rates <= 0 || ph.name == "pages" && sc.Pages <= 0 || ph.name == "cycle" && sc.Cycles <= 0 ||
			ph.name == "write" && len(writes) == 0 || (ph.name == "events" || ph.name == "poll") && (sc.Subscriptions <= 0 || len(starts) == 0) {
			continue
		}
		err := m.phase(ctx, ph.name, ph.run)
		if err != nil && (ph.name == "startup" || ctx.Err() != nil) {
			return fmt.Errorf("phase %s: %w", ph.name, err)
		}
		if err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("phase %s: %v", ph.name, err))
		}
	}
	return nil
}

// rates measures GET System (over every VM) and the Systems collection
// at 1 and sc.RateClients clients against the floor server ([Ratios]).
func (m *meter) rates(ctx context.Context, sc RSSScenario, keys []system.Key) error {
	paths := make([]string, len(keys))
	for i, k := range keys {
		paths[i] = systemPath(k.ID())
	}
	ops := []ReadOp{{Name: OpGetSystem, Paths: paths}, {Name: OpGetSystems, Paths: []string{"/redfish/v1/Systems"}}}
	var err error
	m.res.Rates, err = Ratios(ctx, m.client.Base, m.client.User, m.client.Password, ops,
		RatioOptions{Clients: []int{1, sc.RateClients}, Each: sc.Rates})
	return err
}

// cycles runs [Cycle] on keys with sc.RateClients clients against a local
// image server. No cycle starts later than PowerOnTimeout (plus a minute)
// before the phase's deadline, so those that start can finish: the others
// are counted as not started, not as failed.
func (m *meter) cycles(ctx context.Context, sc RSSScenario, c *Client, keys, polled []system.Key) (err error) {
	images, err := demo.StartImageServer([]string{"boot.iso"}, 64<<10)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, images.Close()) }()
	cc := *c
	cc.HTTP = NewHTTPClient(sc.RateClients)
	o := CycleOptions{Image: images.URL + "/images/boot.iso", Poll: 500 * time.Millisecond, PowerOnTimeout: 3 * time.Minute}
	startBy := time.Now().Add(m.timeout - o.PowerOnTimeout - time.Minute)
	if len(polled) > 0 {
		stopPoll := powerPoll(ctx, c, polled)
		defer func() {
			m.res.Polls, m.res.PollFailures = stopPoll()
			if m.res.PollFailures > 0 {
				err = errors.Join(err, fmt.Errorf("%d of %d power polls failed", m.res.PollFailures, m.res.Polls))
			}
		}()
	}
	var mu sync.Mutex
	err = forEach(ctx, keys, sc.RateClients, func(ctx context.Context, k system.Key) error {
		if time.Now().After(startBy) {
			mu.Lock()
			m.res.CyclesNotStarted++
			mu.Unlock()
			return nil
		}
		err := Cycle(ctx, &cc, k.ID(), o)
		mu.Lock()
		if err != nil {
			m.res.CycleFailures++
		} else {
			m.res.CyclesDone++
		}
		mu.Unlock()
		return err
	})
	if m.res.CyclesNotStarted > 0 {
		err = errors.Join(err, fmt.Errorf("%d of %d cycles not started within the phase's %s", m.res.CyclesNotStarted, len(keys), m.timeout))
	}
	return firstErrors(err, 3)
}

// phase runs one phase with a fresh recorder and records the bridge's
// RSS peak and end, CPU and Go runtime gauges.
func (m *meter) phase(ctx context.Context, name string, run func(context.Context, *Client) error) error {
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	m.watch.mark()
	cluster := markCPU(m.cluster)
	cpu0, cpuErr := ProcCPU(m.pid)
	c := *m.client
	c.Rec = NewRecorder()
	start := time.Now()
	runErr := run(ctx, &c)
	ph := RSSPhase{Name: name, Took: time.Since(start), Cluster: cluster.since(m.cluster)}
	ph.Ops = c.Rec.Summaries()
	for _, s := range ph.Ops {
		ph.Requests += s.N
		ph.Failed += s.Failed
	}
	var rssErr, gaugeErr error
	ph.RSSPeak, ph.RSSEnd, rssErr = m.watch.read()
	if cpu, err := ProcCPU(m.pid); err == nil && cpuErr == nil {
		ph.CPU = cpu - cpu0
	}
	ph.Gauges, gaugeErr = ScrapeGauges(ctx, m.metricsURL)
	m.res.Phases = append(m.res.Phases, ph)
	m.res.progress("phase %s: %s, %d requests, %d failed, RSS peak %s MB (error: %v)", name, ph.Took.Round(100*time.Millisecond), ph.Requests, ph.Failed, mib(ph.RSSPeak), runErr)
	return errors.Join(runErr, rssErr, gaugeErr)
}

// mib is b in MiB with one decimal.
func mib(b int64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }

// Print writes r as a table.
func (r *RSSResult) Print(w io.Writer) {
	sc := r.Scenario
	fmt.Fprintf(w, "\n=== bridge binary as its own process (pid %d, GOMEMLIMIT %s): %s CRDs, %d VMs (%d running, %d per namespace), %d clients, %d VMs written, started %s, setup %s ===\n",
		r.Pid, cmp.Or(sc.GoMemLimit, "unset"), sc.Variant, sc.VMs, sc.Running, sc.PerNamespace, sc.Clients, sc.Writes,
		r.Started.UTC().Format(time.RFC3339), r.Setup.Round(time.Second))
	if sc.Replicas > 1 {
		fmt.Fprintf(w, "%d replicas under leader election, each request to a random one; the figures below are the first process's\n", sc.Replicas)
	}
	r.printSteps(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\ttook\trequests\tfailed\tRSS end MB\tRSS peak MB\theap alloc MB\theap inuse MB\tGo sys MB\tgoroutines\tCPU s\tvirt-controller CPU s\tapiserver CPU s\t")
	for _, p := range r.Phases {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t%.1f\t%s\t%.1f\t\n", p.Name, p.Took.Round(100*time.Millisecond),
			p.Requests, p.Failed, mib(p.RSSEnd), mib(p.RSSPeak), mib(p.HeapAlloc), mib(p.HeapInuse), mib(p.GoSys), p.Goroutines, p.CPU.Seconds(),
			p.Cluster.virtController(), p.Cluster.APIServer.Seconds())
	}
	_ = tw.Flush()
	for _, p := range r.Phases {
		for _, s := range p.Ops {
			fmt.Fprintf(w, "  %s: %s n=%d failed=%d p50=%sms p99=%sms max=%sms\n", p.Name, s.Op, s.N, s.Failed, ms(s.P50), ms(s.P99), ms(s.Max))
		}
	}
	if len(r.Rates) > 0 {
		fmt.Fprintf(w, "GETs on the bridge process with %d VMs, ", sc.VMs)
		printRatioTable(w, r.Rates)
	}
	if len(r.Pages) > 0 {
		fmt.Fprintf(w, "$top=%d pages of the %d-member collection, round robin, ", PageSize, sc.VMs)
		printRatioTable(w, r.Pages)
	}
	if r.BareList > 0 {
		fmt.Fprintf(w, "bare list (VMs, VMIs, PVCs, in pages of %d, the three at once, to a bare client): %s, %.1f MB of JSON\n",
			bareListPage, r.BareList.Round(time.Millisecond), float64(r.BareListBytes)/1e6)
	}
	if sc.PowerPoll > 0 && sc.Cycles > 0 {
		fmt.Fprintf(w, "power polls during the cycle phase (%d systems, each every %s): %d, %d failed\n", sc.PowerPoll, PowerPollInterval, r.Polls, r.PollFailures)
	}
	r.printEvents(w)
	r.PrintTargets(w)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

// printSteps writes the setup steps as a table.
func (r *RSSResult) printSteps(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "setup step\ttook\tdone\tvirt-controller CPU s\tapiserver CPU s\tended short because\t")
	for _, s := range r.Steps {
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%.1f\t%s\t\n", s.Name, s.Took.Round(100*time.Millisecond), s.Done, s.Want,
			s.Cluster.virtController(), s.Cluster.APIServer.Seconds(), cmp.Or(s.Err, "-"))
	}
	_ = tw.Flush()
}

// virtController is virt-controller's CPU seconds, marked when it restarted
// in between.
func (c ClusterCPU) virtController() string {
	if c.Restarted {
		return fmt.Sprintf("%.1f (restarted)", c.VirtController.Seconds())
	}
	return fmt.Sprintf("%.1f", c.VirtController.Seconds())
}
