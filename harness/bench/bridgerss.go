package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// VirtControllerThreads raises virt-controller's VM controller workers
// from KubeVirt's default 3: on the shared 2-core machine the apiserver
// answers in hundreds of milliseconds at 10,000 VMs, and with 3 workers
// (each sync is a few requests in a row) 1000 started VMs still showed
// printableStatus Starting or Stopped 20 minutes after their VMIs ran. It
// changes how soon virt-controller reacts, not what the bridge does.
const VirtControllerThreads = "--vm-controller-threads=16"

// RSSScenario is a run of the real `redfish-bridge serve` binary as a
// process of its own, measured from outside: see [BridgeRSS].
type RSSScenario struct {
	Variant crds.Variant
	// VMs are created before the bridge starts (default 1000), at most
	// PerNamespace per namespace (default 100; Namespaces, when set,
	// spreads them over that many namespaces instead).
	VMs, PerNamespace, Namespaces int
	// StatusByBench leaves virt-controller and the simulator out: the bench
	// writes each VM's status itself as virt-controller does for a halted
	// VM (printableStatus Stopped; no VMI), so no VM runs and there is no
	// write or cycle phase. For 100,000 VMs, which virt-controller cannot
	// sync on a small machine in reasonable time.
	StatusByBench bool
	// BareList, when set, times the apiserver listing the objects the
	// bridge's informers list to a bare client, just before the bridge
	// starts ([BareList]): the start-up target's reference.
	BareList bool
	// Pages, when set, adds a phase measuring GET of every $top=1000 page of
	// the collection for Pages each at 1 and RateClients clients.
	Pages time.Duration
	// PowerPoll, when set, has that many systems (the first ones) read once
	// per [PowerPollInterval] during the cycle phase, as Ironic's
	// power-state sync does.
	PowerPoll int
	// Running VMs get runStrategy Always before the bridge starts, so
	// their VMIs exist too (default VMs/2, every other VM).
	Running int
	// Clients is the number of concurrent Redfish clients (default 4).
	Clients int
	// Writes is the number of VMs given a boot override and a power
	// change, half of them running (default 50).
	Writes int
	// Quiet is how long the idle and after phases wait (default 15s).
	Quiet time.Duration
	// Rates, when set, adds a phase measuring GET System and the Systems
	// collection for Rates each at 1 and RateClients clients (default 50).
	Rates       time.Duration
	RateClients int
	// Cycles, when set, adds a phase running Ironic's provisioning cycle
	// ([Cycle]) on that many VMs (the last ones) with RateClients clients.
	Cycles int
	// StepTimeout bounds each setup step: creating the VMs, virt-controller's
	// first sync of them, starting the running ones (default 5m plus 60ms
	// per VM). PhaseTimeout bounds each measured phase (default 10m).
	StepTimeout, PhaseTimeout time.Duration
	Log                       *slog.Logger
	// BridgeLog receives the bridge's own log; default a temporary file.
	BridgeLog string
	// GoMemLimit, when set, is the bridge process's GOMEMLIMIT (e.g.
	// "200MiB"); unset, the Go runtime's default (none).
	GoMemLimit string
	// Progress, when set, gets one line as each setup step and phase ends
	// (a 10,000-VM run takes most of an hour).
	Progress io.Writer
	// Subscriptions, when set, adds the events phase: that many event
	// subscriptions (receivers in the bench), then EventStarts halted VMs
	// (default 100) started out of band, until every subscription got each
	// one's ResourcePoweredOn; and the poll phase: every System read once
	// per [PowerPollInterval] for one interval, as Ironic polls instead.
	Subscriptions, EventStarts int
	// Replicas, when above 1, runs that many bridge processes under leader
	// election (the chart's replicas): every Redfish request goes to a
	// random one; RSS, CPU and metrics are the first process's.
	Replicas int
}

func (s RSSScenario) withDefaults() RSSScenario {
	if s.Variant == "" {
		s.Variant = crds.MapList
	}
	if s.VMs <= 0 {
		s.VMs = 1000
	}
	if s.Namespaces > 0 {
		s.PerNamespace = (s.VMs + s.Namespaces - 1) / s.Namespaces
	}
	if s.PerNamespace <= 0 {
		s.PerNamespace = 100
	}
	if s.Running <= 0 {
		s.Running = s.VMs / 2
	}
	if s.StatusByBench {
		s.Running, s.Writes, s.Cycles = 0, 0, 0
	}
	if s.Clients <= 0 {
		s.Clients = 4
	}
	if s.Writes <= 0 && !s.StatusByBench {
		s.Writes = 50
	}
	s.Writes = max(min(s.Writes, 2*s.Running, 2*(s.VMs-s.Running)), 0)
	s.PowerPoll = min(s.PowerPoll, s.VMs)
	if s.Quiet <= 0 {
		s.Quiet = 15 * time.Second
	}
	if s.RateClients <= 0 {
		s.RateClients = 50
	}
	s.Cycles = min(s.Cycles, s.VMs)
	if s.Subscriptions > 0 && s.EventStarts <= 0 {
		s.EventStarts = 100
	}
	if s.StepTimeout <= 0 {
		s.StepTimeout = 5*time.Minute + time.Duration(s.VMs)*60*time.Millisecond
	}
	if s.PhaseTimeout <= 0 {
		s.PhaseTimeout = 10 * time.Minute
	}
	if s.Log == nil {
		s.Log = slog.Default()
	}
	return s
}

// RSSPhase is what one phase measured of the bridge process.
type RSSPhase struct {
	Name     string
	Took     time.Duration
	Requests int // Redfish requests sent during the phase
	Failed   int
	// RSSPeak is the highest VmRSS sampled (every 100 ms) during the
	// phase, RSSEnd the one at its end.
	RSSPeak, RSSEnd int64
	CPU             time.Duration
	Cluster         ClusterCPU // virt-controller's and kube-apiserver's CPU
	Gauges                     // from the bridge's /metrics at the end of the phase
	Ops             []Summary
}

// RSSResult is what [BridgeRSS] measured.
type RSSResult struct {
	Scenario RSSScenario
	Started  time.Time
	Setup    time.Duration // cluster, VMs, VMIs and binary ready
	Steps    []SetupStep
	Pid      int
	Phases   []RSSPhase
	// Rates are the bridge's GET figures (no floor: the process serves
	// plain HTTP), when [RSSScenario.Rates] is set.
	Rates []RatioRow
	// CyclesDone, CycleFailures and CyclesNotStarted count the cycle
	// phase's cycles that completed, failed, or were left out when the
	// phase ran out of time.
	CyclesDone, CycleFailures, CyclesNotStarted int
	// Polls and PollFailures count the power polls during the cycle phase
	// ([RSSScenario.PowerPoll]).
	Polls, PollFailures int
	// BareList is the time the apiserver took to list the objects to a
	// bare client, BareListBytes their JSON ([RSSScenario.BareList]).
	BareList      time.Duration
	BareListBytes int64
	// Pages are the pages phase's figures ([RSSScenario.Pages]).
	Pages []RatioRow
	// Events are the events phase's figures, FleetPolls and
	// FleetPollFailures the poll phase's ([RSSScenario.Subscriptions]).
	Events                        EventFigures
	FleetPolls, FleetPollFailures int
	Notes                         []string // what did not go as planned
}

// namespaces is how many namespaces the VMs are spread over.
func (s RSSScenario) namespaces() int { return (s.VMs + s.PerNamespace - 1) / s.PerNamespace }

// Phase returns the phase called name (zero when absent).
func (r *RSSResult) Phase(name string) RSSPhase {
	for _, p := range r.Phases {
		if p.Name == name {
			return p
		}
	}
	return RSSPhase{}
}

// Peak is the highest RSS and heap seen in any phase.
func (r *RSSResult) Peak() (rss, heap int64) {
	for _, p := range r.Phases {
		rss, heap = max(rss, p.RSSPeak), max(heap, p.HeapAlloc)
	}
	return rss, heap
}

// BridgeRSS starts a cluster with KubeVirt's virt-controller and the
// simulator (the node side) in this process, creates the VMs (starting
// some), builds and starts the bridge binary against it and measures the
// bridge process through its phases: startup (until it lists every VM),
// idle, read (GET every System once), write (boot override and power change
// on sc.Writes VMs until each reached its power state), rates and cycle
// when asked, and after (idle again). Every setup step and phase is bounded
// ([RSSScenario.StepTimeout], [RSSScenario.PhaseTimeout]); one that runs
// short is noted and the run goes on with what there is, so res holds what
// was measured even when err is set.
func BridgeRSS(ctx context.Context, sc RSSScenario) (res *RSSResult, err error) {
	sc = sc.withDefaults()
	res = &RSSResult{Scenario: sc, Started: time.Now()}
	bb, err := buildBridge(ctx, "bench-bridgerss-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(bb.dir) // best effort
	dir, built := bb.dir, bb.done
	cluster, err := testcluster.Start(ctx, testcluster.Options{Variant: sc.Variant, Log: sc.Log, VirtController: !sc.StatusByBench,
		VirtControllerArgs: []string{VirtControllerThreads}})
	if err != nil {
		return res, errors.Join(fmt.Errorf("start cluster: %w", err), <-built)
	}
	defer func() { err = errors.Join(err, cluster.Stop()) }()
	stop := func() error { return nil }
	if !sc.StatusByBench {
		if err := runSimulator(ctx, cluster, sc, dir, &stop); err != nil {
			return res, errors.Join(err, <-built)
		}
	}
	defer func() { err = errors.Join(err, stop()) }()
	password, keys, err := populate(ctx, cluster, sc, res)
	if err != nil {
		return res, errors.Join(err, <-built)
	}
	if err := <-built; err != nil {
		return res, err
	}
	res.Setup = time.Since(res.Started)
	return res, measure(ctx, sc, cluster, bb.bin, dir, password, keys, res)
}

// runSimulator starts the simulator (the node side) until *stop is called.
func runSimulator(ctx context.Context, cluster *testcluster.Cluster, sc RSSScenario, dir string, stop *func() error) error {
	simulator, err := sim.New(cluster.Admin, sim.Options{StartDelay: sim.DefaultStartDelay, StopDelay: sim.DefaultStopDelay,
		DataDir: filepath.Join(dir, "images"), Log: sc.Log})
	if err != nil {
		return fmt.Errorf("simulator: %w", err)
	}
	simCtx, stopSim := context.WithCancel(ctx)
	simDone := make(chan error, 1)
	go func() { simDone <- simulator.Run(simCtx) }()
	*stop = func() error {
		stopSim()
		return <-simDone
	}
	return nil
}

// populate writes the accounts, creates the VMs, waits until
// virt-controller synced them and starts every other one until sc.Running
// run. Each step is bounded by sc.StepTimeout; a step that ends short is
// noted and the next one goes on with what there is. It returns the keys of
// the VMs created (an error only when there are none, or for the accounts).
func populate(ctx context.Context, cluster *testcluster.Cluster, sc RSSScenario, res *RSSResult) (string, []system.Key, error) {
	kube, err := kubernetes.NewForConfig(cluster.Admin)
	if err != nil {
		return "", nil, fmt.Errorf("admin client: %w", err)
	}
	fast := rest.CopyConfig(cluster.Admin)
	fast.QPS, fast.Burst = 2000, 4000 // the creates' rate is the apiserver's, not the client's
	dyn, err := dynamic.NewForConfig(fast)
	if err != nil {
		return "", nil, fmt.Errorf("admin dynamic client: %w", err)
	}
	password, err := demo.CreateAccounts(ctx, kube, cluster.BridgeNamespace)
	if err != nil {
		return "", nil, err
	}
	vms, err := watchVMs(ctx, dyn)
	if err != nil {
		return "", nil, err
	}
	defer vms.stop()
	var keys []system.Key
	res.step(ctx, cluster, "create VMs", sc.VMs, func(ctx context.Context) (int, error) {
		var then func(context.Context, system.Key) error
		if sc.StatusByBench {
			then = writeStoppedStatus(dyn)
		}
		keys, err = createAllThen(ctx, cluster, dyn, "rss", sc.VMs, sc.PerNamespace, then)
		return len(keys), err
	})
	if len(keys) == 0 {
		return "", nil, fmt.Errorf("no VM created: %w", err)
	}
	synced := "virt-controller synced every VM"
	if sc.StatusByBench {
		synced = "every VM's status (written by the bench) seen"
	}
	res.step(ctx, cluster, synced, len(keys), func(ctx context.Context) (int, error) {
		return vms.wait(ctx, keys, "")
	})
	if sc.StatusByBench {
		return password, keys, nil
	}
	running := runningKeys(keys, sc.Running)
	res.step(ctx, cluster, "VMs started (printableStatus Running)", len(running), func(ctx context.Context) (int, error) {
		patch := []byte(`{"spec":{"runStrategy":"` + string(kubevirt.RunStrategyAlways) + `"}}`)
		err := forEach(ctx, running, 8, func(ctx context.Context, k system.Key) error {
			_, err := dyn.Resource(kubevirt.VirtualMachines).Namespace(k.Namespace).Patch(ctx, k.Name, types.MergePatchType, patch,
				metav1.PatchOptions{FieldManager: "demo-author"})
			if err != nil {
				return fmt.Errorf("start %s: %w", k, err)
			}
			return nil
		})
		if err != nil {
			return vms.count(running, kubevirt.StatusRunning), firstErrors(err, 3)
		}
		return vms.wait(ctx, running, kubevirt.StatusRunning)
	})
	return password, keys, nil
}

// runningKeys are every other key, n of them.
func runningKeys(keys []system.Key, n int) []system.Key {
	var out []system.Key
	for i := 0; i < len(keys) && len(out) < n; i += 2 {
		out = append(out, keys[i])
	}
	return out
}

// systemGet is the part of a System the write phase checks.
type systemGet struct {
	PowerState string `json:"PowerState"`
}

// writeOne gives system k a boot override (Cd, Once, UEFI) and turns it
// off (when on) or on, then polls until its PowerState changed.
func writeOne(ctx context.Context, c *Client, k system.Key, wasOn bool) error {
	sys := systemPath(k.ID())
	if err := c.Do(ctx, OpBootCd, http.MethodPatch, sys, map[string]any{"Boot": map[string]string{
		"BootSourceOverrideTarget": "Cd", "BootSourceOverrideEnabled": "Once", "BootSourceOverrideMode": "UEFI"}}, nil); err != nil {
		return err
	}
	op, reset, want := OpResetOn, "On", "On"
	if wasOn {
		op, reset, want = OpForceOff, "ForceOff", "Off"
	}
	if err := c.Do(ctx, op, http.MethodPost, sys+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": reset}, nil); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		var s systemGet
		err := c.Do(ctx, OpGetSystem, http.MethodGet, sys, nil, &s)
		if err == nil && s.PowerState == want {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: PowerState %q, want %s (last error: %w): %w", k, s.PowerState, want, err, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}
