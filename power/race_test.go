package power

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestRace replays Ironic's timing: on many VMs at once, insert (with an
// import that goes Pending -> Importing -> Ready), boot Cd Once, power On,
// eject and boot Hdd Continuous, each started 0-150 ms after the previous
// one without waiting for it, while an outside writer edits the VMs. An
// invariant checker watches every VM version. The negative control runs the
// same load with the precondition disabled on stock CRDs and must see
// violations, proving the checker can fail.
func TestRace(t *testing.T) {
	eachVariant(t, func(t *testing.T, v crds.Variant, c *testcluster.Cluster) {
		t.Run("invariants hold", func(t *testing.T) {
			e := startEnv(t, c)
			chk := runRace(t, e, *raceVMs, *raceCycles, true)
			if v := chk.violations(); len(v) > 0 {
				t.Errorf("%d invariant violations, first ones:\n%s", len(v), strings.Join(v[:min(len(v), 15)], "\n"))
			}
			t.Logf("versions checked %d (watch re-opened %d times), starts %d, VMs with the outside disk %d, counters %+v", chk.versions, chk.rewatch, chk.starts, chk.withData, e.w.Stats())
		})
		if v != crds.Stock {
			return
		}
		t.Run("control: no precondition, violations detected", func(t *testing.T) {
			// Without the precondition a violation is likely in a round,
			// not certain: a small round (3 VMs x 2 cycles under -race)
			// can pass clean. The control runs rounds, each on VMs of its
			// own, until one shows a violation; only controlRounds clean
			// rounds in a row fail it.
			for round := 1; ; round++ {
				e := startEnvWith(t, c, envOptions{disablePrecondition: true, allowCorruption: true})
				chk := runRace(t, e, max(*raceVMs/2, 1), max(*raceCycles/2, 1), false)
				v := chk.violations()
				t.Logf("control round %d: %d violations, %d simulator corruptions; first ones:\n%s", round, len(v), len(e.sim.Corruptions()), strings.Join(v[:min(len(v), 5)], "\n"))
				if len(v) > 0 {
					return
				}
				if round == controlRounds {
					t.Errorf("negative control saw no violation in %d rounds: the invariant checker cannot fail", round)
					return
				}
			}
		})
	})
}

// Race size: 12 VMs x 14 cycles = 168 cycles by default, 6 x 4 under the
// race detector (race_on_test.go); the negative control runs half of each.
// Every cycle runs through KubeVirt's virt-controller (a VMI, its launcher
// pod, VM status writes that bump the resourceVersion the bridge's applies
// are preconditioned on): on the loaded 2-core machine the invariant run
// does about 2 cycles a second whatever the VM count, so the size is what
// bounds the package's time. -race.vms and -race.cycles change it.
// controlRounds bounds the negative control's rounds without a violation.
const controlRounds = 8

var (
	raceVMs    = flag.Int("race.vms", defaultRaceVMs, "VMs in TestRace")
	raceCycles = flag.Int("race.cycles", defaultRaceCycles, "cycles per VM in TestRace")
)

// runRace runs cycles cycles on each of vms VMs and returns the checker,
// stopped after the VMs settled.
func runRace(t *testing.T, e *env, vms, cycles int, strict bool) *checker {
	t.Helper()
	ctx := t.Context()
	keys := make([]system.Key, vms)
	for i := range keys {
		keys[i] = e.createVM(t, fmt.Sprintf("race%d", i))
	}
	chk := startChecker(t, e)
	outsideCtx, stopOutside := context.WithCancel(ctx)
	outsideDone := make(chan struct{})
	go func() { defer close(outsideDone); e.outsideWriter(outsideCtx, t, keys) }()

	began := time.Now()
	var wg sync.WaitGroup
	for i, key := range keys {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			for n := range cycles {
				e.cycle(ctx, t, rng, key, n, strict)
			}
		})
	}
	wg.Wait()
	t.Logf("%d cycles on %d VMs done in %s", vms*cycles, vms, time.Since(began).Round(time.Millisecond))
	stopOutside()
	<-outsideDone
	// Nothing stuck: every import finished, every deferred power-on ran or
	// was dropped. (The control, with lost updates, may well be stuck.)
	if strict {
		for _, key := range keys {
			e.eventually(t, key, "no import or deferred power-on left", func(vm *apply.VM) bool {
				_, busy := busySlot(vm)
				return !vm.Power.OnDeferred && !busy
			})
		}
	}
	chk.stop()
	if strict && chk.withData == 0 {
		t.Errorf("the outside writer never added its data disk: invariant 4 was not exercised")
	}
	return chk
}

// cycle issues the five operations in random order, each 0-150 ms after
// the previous one started, waits for all (and the import), then powers off.
func (e *env) cycle(ctx context.Context, t *testing.T, rng *rand.Rand, key system.Key, n int, strict bool) {
	report := t.Errorf // an operation failing is a failure, except in the control
	if !strict {
		report = t.Logf
	}
	insertID := fmt.Sprintf("c%d", n)
	var imports sync.WaitGroup
	// rng is this cycle's goroutine's alone: draw the insert's delay here,
	// not inside the operation that runs on its own goroutine.
	insertDelay := rng.Int64N(150)
	// Each operation goes to a random replica (the only one, without
	// addReplicas), drawn here for the same reason.
	via := make([]replica, 6)
	for i := range via {
		via[i] = e.pick(rng)
	}
	ops := []func() error{
		func() error { return e.insert(ctx, via[0], insertDelay, key, insertID, &imports) },
		func() error {
			_, err := via[1].s.SetBoot(ctx, key, system.BootPatch{Target: ptrTo(system.BootCd), Enabled: ptrTo(system.BootOnce)})
			return err
		},
		func() error { return onRetried(ctx, via[2].s, key) },
		func() error {
			_, err := via[3].w.Media(ctx, key, func(_ *apply.VM, slots map[string]system.MediaSlot) error {
				delete(slots, "cd0")
				return nil
			})
			return err
		},
		func() error {
			_, err := via[4].s.SetBoot(ctx, key, system.BootPatch{Target: ptrTo(system.BootHdd), Enabled: ptrTo(system.BootContinuous)})
			return err
		},
	}
	rng.Shuffle(len(ops), func(i, j int) { ops[i], ops[j] = ops[j], ops[i] })
	var wg sync.WaitGroup
	for _, op := range ops {
		wg.Go(func() {
			if err := op(); err != nil && ctx.Err() == nil {
				report("%s cycle %d: %v", key, n, err)
			}
		})
		time.Sleep(time.Duration(rng.Int64N(150)) * time.Millisecond)
	}
	wg.Wait()
	imports.Wait()
	if err := via[5].s.Reset(ctx, key, system.ResetForceOff); err != nil && ctx.Err() == nil {
		report("%s cycle %d: force off: %v", key, n, err)
	}
}

// insert plays media/: create the PVC, record Pending through replica r
// (the one the InsertMedia request went to), then (in the background, like
// the import job the leader follows) Importing and Ready through the
// leader, each step only if the insert is still the current one.
func (e *env) insert(ctx context.Context, r replica, delayMs int64, key system.Key, id string, imports *sync.WaitGroup) error {
	claim := key.Name + "-" + id
	if err := e.createClaim(ctx, key.Namespace, claim); err != nil {
		return err
	}
	_, err := r.w.Media(ctx, key, func(_ *apply.VM, slots map[string]system.MediaSlot) error {
		slots["cd0"] = system.MediaSlot{Slot: "cd0", Image: "http://x/boot.iso", Phase: system.MediaPending, InsertID: id}
		return nil
	})
	if err != nil {
		return err
	}
	advance := func(from, to system.MediaPhase) error {
		for ctx.Err() == nil { // the import job retries until it recorded its step
			_, err := e.w.Media(ctx, key, func(_ *apply.VM, slots map[string]system.MediaSlot) error {
				s, ok := slots["cd0"]
				if !ok || s.InsertID != id || s.Phase != from {
					return apply.ErrNoChange // ejected or replaced meanwhile
				}
				s.Phase, s.ClaimName = to, claim
				slots["cd0"] = s
				return nil
			})
			if err == nil {
				return nil
			}
		}
		return ctx.Err()
	}
	imports.Go(func() {
		time.Sleep(time.Duration(delayMs) * time.Millisecond)
		if err := advance(system.MediaPending, system.MediaImporting); err != nil {
			return
		}
		time.Sleep(time.Duration(delayMs) * time.Millisecond)
		_ = advance(system.MediaImporting, system.MediaReady)
	})
	return nil
}

// outsideWriter is kubectl edit: GET, change, Update (optimistic), on random
// VMs; the first edit of each VM adds a data disk and its volume.
func (e *env) outsideWriter(ctx context.Context, t *testing.T, keys []system.Key) {
	rng := rand.New(rand.NewPCG(99, 1))
	res := e.admin.Resource(kubevirt.VirtualMachines).Namespace(e.ns)
	var key system.Key
	conflicted := false
	for n := 0; ctx.Err() == nil; n++ {
		if !conflicted { // after a conflict, edit the same VM again at once
			key = keys[rng.IntN(len(keys))]
		}
		u, err := res.Get(ctx, key.Name, metav1.GetOptions{})
		if err != nil {
			continue
		}
		if !hasDisk(u, "data") {
			disks, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "domain", "devices", "disks")
			vols, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "volumes")
			disks = append(disks, map[string]any{"name": "data", "disk": map[string]any{"bus": "virtio"}})
			vols = append(vols, map[string]any{"name": "data", "emptyDisk": map[string]any{"capacity": "1Gi"}})
			_ = unstructured.SetNestedSlice(u.Object, disks, "spec", "template", "spec", "domain", "devices", "disks")
			_ = unstructured.SetNestedSlice(u.Object, vols, "spec", "template", "spec", "volumes")
		}
		labels := u.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels["edited"] = fmt.Sprint(n)
		u.SetLabels(labels)
		_, err = res.Update(ctx, u, metav1.UpdateOptions{FieldManager: "kubectl-edit"})
		if conflicted = apierrors.IsConflict(err); conflicted {
			continue
		}
		if err != nil && ctx.Err() == nil {
			t.Logf("outside writer: %v", err)
		}
		time.Sleep(time.Duration(rng.Int64N(50)) * time.Millisecond)
	}
}

func hasDisk(u *unstructured.Unstructured, name string) bool {
	disks, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "domain", "devices", "disks")
	vols, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "volumes")
	return namedIn(disks, name) && namedIn(vols, name)
}

func namedIn(l []any, name string) bool {
	for _, e := range l {
		if m, ok := e.(map[string]any); ok && m["name"] == name {
			return true
		}
	}
	return false
}

// onRetried powers key on through s as a client that retries a 409 does
// (Ironic 39 on ActionParameterValueConflict): a ResetConflictError (the
// previous cycle's power-off still stopping the guest) is retried with
// apply.Backoff until the On is accepted or ctx ends.
func onRetried(ctx context.Context, s *Service, key system.Key) error {
	for attempt := 0; ; attempt++ {
		err := s.Reset(ctx, key, system.ResetOn)
		if _, conflict := errors.AsType[*ResetConflictError](err); !conflict {
			return err
		}
		if err := apply.Backoff(ctx, attempt+1, 20*time.Millisecond, time.Second); err != nil {
			return err
		}
	}
}
