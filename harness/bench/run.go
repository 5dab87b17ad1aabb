package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Scenario is one benchmark run.
type Scenario struct {
	Variant crds.Variant
	VMs     int
	Clients int
	// Close sends Connection: close on every request (as sushy does).
	Close bool
	// PerNamespace caps the VMs per namespace (default 100).
	PerNamespace int
	// ProbeCycles run one at a time before the load, with background work
	// settling between steps, to attribute apiserver requests to each
	// operation (default 3).
	ProbeCycles int
	// Poll is the PowerState polling interval (default 500ms).
	Poll time.Duration
	// Timeout bounds the load phase (default 10m).
	Timeout time.Duration
	Log     *slog.Logger
}

func (s Scenario) withDefaults() Scenario {
	if s.PerNamespace <= 0 {
		s.PerNamespace = 100
	}
	if s.ProbeCycles <= 0 {
		s.ProbeCycles = 3
	}
	if s.Poll <= 0 {
		s.Poll = 500 * time.Millisecond
	}
	if s.Timeout <= 0 {
		s.Timeout = 10 * time.Minute
	}
	if s.Clients <= 0 {
		s.Clients = 50
	}
	if s.Log == nil {
		s.Log = slog.Default()
	}
	return s
}

// Result is what one scenario measured.
type Result struct {
	Scenario   Scenario
	Started    time.Time
	Setup      time.Duration // cluster, VMs and bridge ready
	Load       *Recorder     // K clients
	Probe      *Recorder     // one call at a time
	ReadOnly   *Recorder     // GET System only, K clients, after the load
	ProbeKube  map[string]KubeCounts
	FloorSeq   *Recorder // raw apply one at a time, cache vs live GETs
	FloorLoad  *Recorder // raw apply with K workers
	Cycles     int
	CycleErrs  []string
	Converged  int
	ConvergeIn time.Duration // load start until every VM is in its final state
	Kube       KubeCounts    // the bridge's requests during the load
	KubeFailed map[int]int64 // the bridge's non-2xx answers during the load
	APIServer  APIServerCounts
	Writer     map[string]apply.Counters // per manager, during the load
	Proc       ProcStats
}

// ProcStats is process usage during the load phase.
type ProcStats struct {
	SelfRSSBefore, SelfRSSPeak, SelfRSSAfter int64
	SelfCPU                                  time.Duration
	APIRSSBefore, APIRSSPeak                 int64
	Cluster                                  ClusterCPU // kube-apiserver's and virt-controller's CPU
	Wall                                     time.Duration
	Goroutines                               int
}

// Run runs one scenario: start everything, create the VMs, probe, load,
// converge, floor, tear down.
func Run(ctx context.Context, sc Scenario) (res *Result, err error) {
	sc = sc.withDefaults()
	res = &Result{Scenario: sc, Started: time.Now(), Load: NewRecorder(), Probe: NewRecorder(), ReadOnly: NewRecorder(),
		FloorSeq: NewRecorder(), FloorLoad: NewRecorder(), ProbeKube: map[string]KubeCounts{}}
	counter := NewKubeCounter()
	env, err := demo.Start(ctx, demo.Options{
		Variant: sc.Variant, Listen: "127.0.0.1:0", ImageSize: 64 << 10,
		StartDelay: sim.DefaultStartDelay, StopDelay: sim.DefaultStopDelay,
		Log: sc.Log, WrapKube: counter.Wrap,
	})
	if err != nil {
		return nil, fmt.Errorf("start demo: %w", err)
	}
	defer func() { err = errors.Join(err, env.Stop()) }()

	dyn, err := dynamic.NewForConfig(env.Cluster.Admin)
	if err != nil {
		return nil, fmt.Errorf("admin dynamic client: %w", err)
	}
	probeKeys, err := createVMs(ctx, env.Cluster, dyn, "probe", sc.ProbeCycles, sc.PerNamespace)
	if err != nil {
		return nil, err
	}
	keys, err := createVMs(ctx, env.Cluster, dyn, "bench", sc.VMs, sc.PerNamespace)
	if err != nil {
		return nil, err
	}
	hc := NewHTTPClient(sc.Clients)
	newClient := func(rec *Recorder) *Client {
		return &Client{Base: env.URL, User: env.User, Password: env.Password, Close: sc.Close, HTTP: hc, Rec: rec}
	}
	if err := waitListed(ctx, newClient(nil), len(keys)+len(probeKeys)); err != nil {
		return nil, err
	}
	res.Setup = time.Since(res.Started)
	cycle := CycleOptions{Image: env.Images.URL + "/images/boot.iso", Poll: sc.Poll, PowerOnTimeout: 3 * time.Minute}

	if err := probe(ctx, newClient(res.Probe), counter, probeKeys, cycle, res.ProbeKube); err != nil {
		return res, err
	}
	if err := load(ctx, sc, env, newClient(res.Load), counter, keys, cycle, res); err != nil {
		return res, err
	}
	if err := readOnly(ctx, newClient(res.ReadOnly), OpGetSystemRO1, keys, 1, 5*time.Second); err != nil {
		return res, err
	}
	if err := readOnly(ctx, newClient(res.ReadOnly), OpGetSystemRO, keys, sc.Clients, 10*time.Second); err != nil {
		return res, err
	}
	if err := Reads(ctx, env.Bridge.Writer, dynFor(env), keys, min(1000, 10*len(keys)), res.FloorSeq); err != nil {
		return res, err
	}
	bridgeDyn := dynFor(env)
	mode := env.Bridge.Writer.Mode()
	if err := RawApply(ctx, bridgeDyn, mode, keys[:min(50, len(keys))], 1, 1, res.FloorSeq); err != nil {
		return res, err
	}
	if err := RawApply(ctx, bridgeDyn, mode, keys, sc.Clients, 1, res.FloorLoad); err != nil {
		return res, err
	}
	return res, nil
}

// dynFor is a dynamic client with the bridge's identity, not counted.
func dynFor(env *demo.Env) dynamic.Interface {
	d, err := dynamic.NewForConfig(env.Cluster.Bridge)
	if err != nil {
		panic(fmt.Sprintf("bridge dynamic client: %v", err)) // a valid config never fails
	}
	return d
}

// waitListed waits until the bridge lists n systems.
func waitListed(ctx context.Context, c *Client, n int) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	for {
		var list struct {
			Count int `json:"Members@odata.count"`
		}
		err := c.Do(ctx, "", http.MethodGet, "/redfish/v1/Systems", nil, &list)
		if err == nil && list.Count >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("bridge lists %d systems, want %d (last error: %w): %w", list.Count, n, err, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// load runs one cycle per VM with sc.Clients clients, then waits until every
// VM is in its final state.
func load(ctx context.Context, sc Scenario, env *demo.Env, c *Client, counter *KubeCounter, keys []system.Key, cycle CycleOptions, res *Result) error {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, sc.Timeout)
	defer cancel()
	kubeBefore, failedBefore := counter.Snapshot(), counter.Failed()
	apiBefore, err := ScrapeRequests(ctx, env.Cluster.Admin)
	if err != nil {
		return err
	}
	writerBefore := env.Bridge.Writer.Stats()
	sampler := startSampler(ctx, env)
	start := time.Now()

	var mu sync.Mutex
	fed, _ := startEach(ctx, keys, sc.Clients, func(ctx context.Context, k system.Key) error {
		err := Cycle(ctx, c, k.ID(), cycle)
		mu.Lock()
		defer mu.Unlock()
		res.Cycles++
		if err != nil {
			res.CycleErrs = append(res.CycleErrs, err.Error())
		}
		return nil // recorded in res
	})
	if fed < len(keys) {
		sc.Log.WarnContext(ctx, "load phase timed out", "cyclesStarted", fed, "of", len(keys), "timeout", sc.Timeout)
	}
	// Converge the VMs whose cycle started, within 3 more minutes even when
	// the load phase timed out.
	cctx, ccancel := context.WithTimeout(parent, 3*time.Minute)
	res.Converged, err = converge(cctx, c, keys[:fed], sc.Clients)
	ccancel()
	res.ConvergeIn = time.Since(start)
	if err != nil {
		sc.Log.WarnContext(ctx, "not every VM converged", "converged", res.Converged, "of", len(keys), "err", err)
	}
	res.Proc = sampler.stop()
	res.Kube = counter.Snapshot().Sub(kubeBefore)
	res.KubeFailed = subCodes(counter.Failed(), failedBefore)
	res.Writer = subWriter(env.Bridge.Writer.Stats(), writerBefore)
	apiAfter, err := ScrapeRequests(parent, env.Cluster.Admin)
	if err != nil {
		return err
	}
	res.APIServer = apiAfter.Sub(apiBefore)
	return nil
}

// converge polls every VM (workers at a time) until all are in the final
// state or ctx ends; it returns how many are.
func converge(ctx context.Context, c *Client, keys []system.Key, workers int) (int, error) {
	pending := keys
	for {
		var mu sync.Mutex
		var next []system.Key
		var lastErr error
		sem := make(chan struct{}, workers)
		var wg sync.WaitGroup
		for _, k := range pending {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				ok, state, err := Converged(ctx, c, k.ID())
				if !ok {
					mu.Lock()
					next = append(next, k)
					if err != nil {
						lastErr = err
					} else {
						lastErr = fmt.Errorf("%s: %s", k, state)
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		pending = next
		if len(pending) == 0 {
			return len(keys), nil
		}
		select {
		case <-ctx.Done():
			return len(keys) - len(pending), fmt.Errorf("%d VMs not converged (e.g. %w): %w", len(pending), lastErr, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

func subCodes(a, b map[int]int64) map[int]int64 {
	out := map[int]int64{}
	for k, v := range a {
		if d := v - b[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

func subWriter(a, b map[string]apply.Counters) map[string]apply.Counters {
	out := map[string]apply.Counters{}
	for m, c := range a {
		p := b[m]
		out[m] = apply.Counters{Applies: c.Applies - p.Applies, Conflicts: c.Conflicts - p.Conflicts,
			Retries: c.Retries - p.Retries, Failures: c.Failures - p.Failures}
	}
	return out
}
