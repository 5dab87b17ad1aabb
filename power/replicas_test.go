package power

import (
	"flag"
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/inventory"
	"github.com/redfish-bridge/redfish-bridge/virtapi"
)

// replica is one bridge replica's write path, what its Redfish handlers
// call: its own clients, its own informer caches (inventory), its own
// Writer (with its own memory of recent writes) and its own Service. Only
// the env's first replica, the leader, runs the Reconciler, as under
// service/'s leader election.
type replica struct {
	w *apply.Client
	s *Service
}

// addReplicas gives e n more replicas (none runs a Reconciler), built as
// startEnvWith builds the first with options o.
func (e *env) addReplicas(t *testing.T, c *testcluster.Cluster, n int, o envOptions) {
	t.Helper()
	for range n {
		r, _ := e.startReplica(t, c, o)
		e.others = append(e.others, r)
	}
}

// startReplica builds one replica's write path on c for e's namespace,
// with options o: the bridge identity's clients, its informer caches
// (returned, for the leader's Reconciler), its Writer and its Service.
func (e *env) startReplica(t *testing.T, c *testcluster.Cluster, o envOptions) (replica, *inventory.Inventory) {
	t.Helper()
	ctx := t.Context()
	bridge, err := dynamic.NewForConfig(c.Bridge)
	if err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(c.Bridge)
	if err != nil {
		t.Fatal(err)
	}
	mode, err := apply.DetectMode(ctx, bridge)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Start(ctx, bridge, kube, []string{e.ns})
	if err != nil {
		t.Fatal(err)
	}
	var writes dynamic.Interface = bridge
	if o.disablePrecondition {
		writes = testutil.WithoutPrecondition(writes)
	}
	if o.disableRebootPolicy {
		writes = testutil.WithoutRebootPolicy(writes)
	}
	w := apply.New(writes, inv, mode, apply.Options{})
	var forcer Forcer
	if !o.noForce {
		if forcer, err = virtapi.New(c.Bridge); err != nil {
			t.Fatal(err)
		}
	}
	s := New(w, bridge, forcer)
	s.SetHoldTimeout(o.holdTimeout)
	return replica{w: w, s: s}, inv
}

// replicas is every replica of e, the leader first.
func (e *env) replicas() []replica {
	return append([]replica{{w: e.w, s: e.s}}, e.others...)
}

// pick is the replica a request goes to: a random one when e has several
// (rng is the caller's goroutine's), the only one otherwise (drawing
// nothing, so a one-replica run's random sequence is unchanged).
func (e *env) pick(rng *rand.Rand) replica {
	if len(e.others) == 0 {
		return replica{w: e.w, s: e.s}
	}
	return e.replicas()[rng.IntN(len(e.others)+1)]
}

// TestRaceReplicas is TestRace with its writers spread over three
// replicas on one apiserver: every operation of a cycle (insert, both boot
// overrides, On, eject, the closing ForceOff) goes to a random replica,
// each deciding from its own caches, so one replica's apply often rests on
// a version another replica's write already replaced. The import's steps
// and the reconciler's writes come from the leader. What keeps the VMs
// whole is the resourceVersion precondition on every apply (apply/doc.go):
// the negative control switches it off on every replica (stock CRDs) and
// must see violations, at the same size (at half, 3 VMs x 1 cycle under
// -race, it saw none).
func TestRaceReplicas(t *testing.T) {
	const n = 3
	eachVariant(t, func(t *testing.T, v crds.Variant, c *testcluster.Cluster) {
		t.Run("invariants hold", func(t *testing.T) {
			e := startEnv(t, c)
			e.addReplicas(t, c, n-1, envOptions{})
			chk := runRace(t, e, *replicaRaceVMs, *replicaRaceCycles, true)
			if v := chk.violations(); len(v) > 0 {
				t.Errorf("%d invariant violations, first ones:\n%s", len(v), strings.Join(v[:min(len(v), 15)], "\n"))
			}
			t.Logf("versions checked %d (watch re-opened %d times), starts %d, VMs with the outside disk %d", chk.versions, chk.rewatch, chk.starts, chk.withData)
			for i, r := range e.replicas() {
				t.Logf("replica %d counters %+v", i, r.w.Stats())
			}
		})
		if v != crds.Stock {
			return
		}
		t.Run("control: no precondition, violations detected", func(t *testing.T) {
			o := envOptions{disablePrecondition: true, allowCorruption: true}
			e := startEnvWith(t, c, o)
			e.addReplicas(t, c, n-1, o)
			chk := runRace(t, e, *replicaRaceVMs, *replicaRaceCycles, false) // full size: half saw none
			v := chk.violations()
			t.Logf("control: %d violations, %d simulator corruptions; first ones:\n%s", len(v), len(e.sim.Corruptions()), strings.Join(v[:min(len(v), 5)], "\n"))
			if len(v) == 0 {
				t.Errorf("negative control saw no violation: the invariant checker cannot fail")
			}
		})
	})
}

// TestRaceReplicas's size, with or without -race: 6 VMs x 3 cycles, the
// control the same, cost 128 s under -race on the loaded 2-core machine
// (both variants, the shared clusters' start included; the cycles 30 s a
// run). -race.replicas.vms and -race.replicas.cycles change it.
const (
	defaultReplicaRaceVMs    = 6
	defaultReplicaRaceCycles = 3
)

var (
	replicaRaceVMs    = flag.Int("race.replicas.vms", defaultReplicaRaceVMs, "VMs in TestRaceReplicas")
	replicaRaceCycles = flag.Int("race.replicas.cycles", defaultReplicaRaceCycles, "cycles per VM in TestRaceReplicas")
)
