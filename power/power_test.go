package power

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// env is a namespace of a cluster where KubeVirt's virt-controller runs,
// with the simulator as its node, the inventory, a Writer, a Service and a
// running Reconciler.
type env struct {
	admin dynamic.Interface
	kube  kubernetes.Interface
	w     *apply.Client
	s     *Service
	sim   *sim.Simulator
	ns    string
	// others are more replicas on the same namespace (addReplicas); e.w
	// and e.s are the leader's.
	others []replica
}

var nsSeq atomic.Int64

func startEnv(t *testing.T, c *testcluster.Cluster) *env {
	t.Helper()
	return startEnvWith(t, c, envOptions{})
}

// envOptions vary startEnvWith for the race suite's negative control.
type envOptions struct {
	disablePrecondition bool // the Writer applies through testutil.WithoutPrecondition
	disableRebootPolicy bool // the Writer applies through testutil.WithoutRebootPolicy
	rebootPolicyGateOff bool // a namespace where the cluster refuses rebootPolicy
	allowCorruption     bool // the control expects corrupted VMs
	noReconciler        bool // nothing settles boot orders behind the test's back
	// virtAPI: the cluster runs virt-api (testcluster.SharedVirtAPI), so the
	// simulator writes as virt-handler.
	virtAPI bool
	// stopDelay is the simulator's StopDelay (default 20 ms).
	stopDelay time.Duration
	noForce   bool // the Service has no Forcer: ForceOff and ForceRestart stay graceful
	// holdTimeout, when set, is the Service's held power-on timeout.
	holdTimeout time.Duration
}

func startEnvWith(t *testing.T, c *testcluster.Cluster, o envOptions) *env {
	t.Helper()
	ctx := t.Context()
	e := &env{ns: fmt.Sprintf("p%d", nsSeq.Add(1))}
	if o.rebootPolicyGateOff {
		e.ns = c.RebootPolicyGateOff(t)
	} else if err := c.CreateNamespace(ctx, e.ns); err != nil {
		t.Fatal(err)
	}
	c.LogsOnFailure(t, e.ns) // a failure shows virt-controller's lines about e.ns
	var err error
	if e.admin, err = dynamic.NewForConfig(c.Admin); err != nil {
		t.Fatal(err)
	}
	if e.kube, err = kubernetes.NewForConfig(c.Admin); err != nil {
		t.Fatal(err)
	}
	log := testcluster.LoggerForTest(t, "simulator and power reconciler")
	nodeSide, stopDelay := c.Admin, 20*time.Millisecond
	if o.virtAPI {
		nodeSide = c.VirtHandler
	}
	if o.stopDelay != 0 {
		stopDelay = o.stopDelay
	}
	simulator, err := sim.New(nodeSide, sim.Options{Namespaces: []string{e.ns}, StartDelay: 20 * time.Millisecond, StopDelay: stopDelay, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	e.sim = simulator
	simCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	var runErr error
	go func() { defer close(done); runErr = simulator.Run(simCtx) }()
	t.Cleanup(func() {
		stop()
		<-done
		if runErr != nil {
			t.Errorf("simulator: %v", runErr)
		}
		if cs := simulator.Corruptions(); len(cs) > 0 && !o.allowCorruption {
			t.Errorf("simulator saw corrupted VMs: %+v", cs)
		}
	})
	leader, inv := e.startReplica(t, c, o)
	e.w, e.s = leader.w, leader.s
	if o.noReconciler {
		return e
	}
	r := NewReconciler(e.s, inv, 2)
	// The reconciler logs to this test: it must have returned before the
	// test ends (a line after that is a data race in package testing).
	// ctx, the test's, ends just before its cleanups run.
	rdone := make(chan struct{})
	go func() {
		defer close(rdone)
		if err := r.Run(logctx.Into(ctx, log)); err != nil {
			t.Errorf("power reconciler: %v", err)
		}
	}()
	t.Cleanup(func() { <-rdone })
	return e
}

func (e *env) createVM(t *testing.T, name string) system.Key {
	t.Helper()
	return e.createVMFrom(t, testutil.VM(e.ns, name, "Halted"))
}

// createVMFrom creates VM u (in e.ns) as its author and waits until the
// Writer's cache has it.
func (e *env) createVMFrom(t *testing.T, u *unstructured.Unstructured) system.Key {
	t.Helper()
	name := u.GetName()
	if _, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(e.ns).Create(t.Context(), u, metav1.CreateOptions{FieldManager: "test-author"}); err != nil {
		t.Fatal(err)
	}
	key := system.Key{Namespace: e.ns, Name: name}
	// The Writer reads from the informer cache, where a miss is NotFound:
	// hand the VM over once the cache has it.
	// (60 s, as eventually: an informer on a loaded machine took over 10.)
	for _, r := range e.replicas() { // every replica's, when there are several
		testutil.Eventually(t, "VM "+key.String()+" in the Writer's cache", 60*time.Second, 10*time.Millisecond, func(ctx context.Context) error {
			_, err := r.w.Read(ctx, key)
			return err
		})
	}
	return key
}

// bootOrders maps a VM's disks to their bootOrder (0 = none).
func bootOrders(vm *apply.VM) map[string]int64 {
	return ordersOf(vm.Object, "spec", "template", "spec", "domain", "devices", "disks")
}

func ordersOf(obj *unstructured.Unstructured, path ...string) map[string]int64 {
	out := map[string]int64{}
	disks, _, _ := unstructured.NestedSlice(obj.Object, path...)
	for _, d := range disks {
		m, _ := d.(map[string]any)
		name, _ := m["name"].(string)
		n, _ := m["bootOrder"].(int64)
		out[name] = n
	}
	return out
}

func runStrategy(vm *apply.VM) kubevirt.RunStrategyValue { return kubevirt.RunStrategyOf(vm.Object) }

// setSlot records slot s on the VM; a slot with a claim gets its PVC first
// (media/ creates it before the import): virt-controller creates no
// launcher pod for a VMI whose PVC is missing, the VM would stay
// PoweringOn (docs/testing-kubevirt.md).
func (e *env) setSlot(t *testing.T, key system.Key, s system.MediaSlot) {
	t.Helper()
	if s.ClaimName != "" {
		if err := e.createClaim(t.Context(), key.Namespace, s.ClaimName); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.w.Media(t.Context(), key, func(_ *apply.VM, slots map[string]system.MediaSlot) error {
		slots[s.Slot] = s
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// createClaim creates the PVC an import would fill (the simulator binds
// it); one that exists already is fine.
func (e *env) createClaim(ctx context.Context, namespace, name string) error {
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if _, err := e.kube.CoreV1().PersistentVolumeClaims(namespace).Create(ctx, pvc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create PVC %s/%s: %w", namespace, name, err)
	}
	return nil
}

func ptrTo[T any](v T) *T { return &v }

// TestMain stops the shared test clusters (testcluster.SharedKubeVirt)
// after the tests.
func TestMain(m *testing.M) { os.Exit(testcluster.RunMain(m)) }

// eachVariant runs f on the package's shared test cluster of every CRD
// variant, where KubeVirt's virt-controller runs (skipped with -short: it
// needs kube-apiserver). Tests keep to their own namespaces (startEnvWith).
func eachVariant(t *testing.T, f func(t *testing.T, v crds.Variant, c *testcluster.Cluster)) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs kube-apiserver")
	}
	for _, v := range crds.Variants {
		t.Run(string(v), func(t *testing.T) { f(t, v, testcluster.SharedKubeVirt(t, v)) })
	}
}

func TestPower(t *testing.T) {
	eachVariant(t, func(t *testing.T, _ crds.Variant, c *testcluster.Cluster) {
		t.Run("Once override reverts after exactly one boot", func(t *testing.T) { testOnce(t, startEnv(t, c)) })
		t.Run("power-on deferred until import completes", func(t *testing.T) { testDeferred(t, startEnv(t, c)) })
		t.Run("deferred power-on dropped when import fails", func(t *testing.T) { testDropped(t, startEnv(t, c)) })
		t.Run("off, shutdown, button, nmi", func(t *testing.T) { testVerbs(t, startEnv(t, c)) })
		t.Run("restarts replace the VMI", func(t *testing.T) { testRestarts(t, startEnv(t, c)) })
		t.Run("guest shutdown, then On", func(t *testing.T) { testGuestShutdownThenOn(t, startEnv(t, c)) })
		t.Run("ForceOff right after On stays off", func(t *testing.T) { testOnThenOff(t, startEnv(t, c)) })
		t.Run("On with a stale cached VMI", func(t *testing.T) { testOnWithStaleVMI(t, startEnv(t, c)) })
	})
}

var ready = system.MediaSlot{Slot: "cd0", Image: "http://x/boot.iso", Phase: system.MediaReady, InsertID: "i1", ClaimName: "pvc-i1"}

// onWithNewVMI: vm is On with a VMI other than prev's. State alone says On
// with no VMI at all while a restart is under way (the reboot watch), which
// a test polling for the new VMI may read.
func onWithNewVMI(vm, prev *apply.VM) bool {
	return vm.VMI != nil && State(vm) == system.PowerOn && vm.VMI.GetUID() != prev.VMI.GetUID()
}

// testOnce: Cd Once, power on: the first VMI boots the CD-ROM first, the
// override reverts, and the next boot (restart) has no override.
func testOnce(t *testing.T, e *env) {
	ctx := t.Context()
	key, first := cdOnceBooted(t, e, "once")
	vmiOrders := ordersOf(first.VMI, "spec", "domain", "devices", "disks")
	if vmiOrders[apply.DiskName("cd0")] != 1 {
		t.Errorf("first boot did not boot the CD-ROM first: VMI boot orders %v", vmiOrders)
	}
	for name, n := range bootOrders(first) {
		if n != 0 {
			t.Errorf("after revert disk %s keeps bootOrder %d", name, n)
		}
	}
	if first.Boot.Target != system.BootNone {
		t.Errorf("reverted override target %s, want None", first.Boot.Target)
	}
	if err := e.s.Reset(ctx, key, system.ResetForceRestart); err != nil {
		t.Fatal(err)
	}
	second := e.eventually(t, key, "second boot running", func(vm *apply.VM) bool {
		return onWithNewVMI(vm, first)
	})
	for name, n := range ordersOf(second.VMI, "spec", "domain", "devices", "disks") {
		if n != 0 {
			t.Errorf("second boot still carries the override: disk %s bootOrder %d", name, n)
		}
	}
}

// testDeferred: power-on during an import is recorded, not executed; the
// VM starts once the import is Ready, with the CD-ROM first.
func testDeferred(t *testing.T, e *env) {
	ctx := t.Context()
	key := e.createVM(t, "deferred")
	e.setSlot(t, key, system.MediaSlot{Slot: "cd0", Image: "http://x/boot.iso", Phase: system.MediaImporting, InsertID: "i1", ClaimName: "pvc-i1"})
	if _, err := e.s.SetBoot(ctx, key, system.BootPatch{Target: ptrTo(system.BootCd), Enabled: ptrTo(system.BootOnce)}); err != nil {
		t.Fatal(err)
	}
	if err := e.s.Reset(ctx, key, system.ResetOn); err != nil {
		t.Fatal(err)
	}
	vm := e.live(t, key)
	if !vm.Power.OnDeferred || runStrategy(vm) != "Halted" || vm.VMI != nil {
		t.Fatalf("power-on during import: deferred=%v runStrategy=%s vmi=%v", vm.Power.OnDeferred, runStrategy(vm), vm.VMI != nil)
	}
	// The reconciler must not start it either: a pass over the VM now (the
	// running reconciler's code, called by the test so that the check
	// follows a pass, not a window of time) leaves it Halted.
	if err := NewReconciler(e.s, nil, 1).Reconcile(ctx, key); err != nil {
		t.Fatalf("a reconciler pass during the import: %v", err)
	}
	if vm := e.live(t, key); vm.VMI != nil || runStrategy(vm) != "Halted" {
		t.Fatalf("VM started while its import was in flight: runStrategy %s, vmi %v", runStrategy(vm), vm.VMI != nil)
	}
	e.setSlot(t, key, ready)
	vm = e.eventually(t, key, "started after import", func(vm *apply.VM) bool {
		return State(vm) == system.PowerOn && !vm.Power.OnDeferred
	})
	if got := ordersOf(vm.VMI, "spec", "domain", "devices", "disks")[apply.DiskName("cd0")]; got != 1 {
		t.Errorf("deferred start did not boot the CD-ROM first: bootOrder %d", got)
	}
}

// testDropped: a deferred power-on is dropped, with a reason, when the
// import fails.
func testDropped(t *testing.T, e *env) {
	ctx := t.Context()
	key := e.createVM(t, "dropped")
	e.setSlot(t, key, system.MediaSlot{Slot: "cd0", Image: "http://x/boot.iso", Phase: system.MediaPending, InsertID: "i1"})
	if err := e.s.Reset(ctx, key, system.ResetOn); err != nil {
		t.Fatal(err)
	}
	e.setSlot(t, key, system.MediaSlot{Slot: "cd0", Image: "http://x/boot.iso", Phase: system.MediaFailed, InsertID: "i1", Reason: "404"})
	vm := e.eventually(t, key, "deferred power-on dropped", func(vm *apply.VM) bool {
		return !vm.Power.OnDeferred && vm.Power.DroppedReason != ""
	})
	if runStrategy(vm) != "Halted" || vm.VMI != nil {
		t.Errorf("dropped power-on still started the VM: runStrategy %s", runStrategy(vm))
	}
}

// testVerbs: each verb ends in its PowerState, live and in the cache, and
// in the printableStatus KubeVirt's virt-controller writes for it.
func testVerbs(t *testing.T, e *env) {
	ctx := t.Context()
	key := e.createVM(t, "verbs")
	steps := []struct {
		reset     system.ResetType
		want      system.PowerState
		printable kubevirt.Status
	}{
		{system.ResetPushPowerButton, system.PowerOn, kubevirtv1.VirtualMachineStatusRunning},
		{system.ResetGracefulShutdown, system.PowerOff, kubevirtv1.VirtualMachineStatusStopped},
		{system.ResetForceOn, system.PowerOn, kubevirtv1.VirtualMachineStatusRunning},
		{system.ResetForceOff, system.PowerOff, kubevirtv1.VirtualMachineStatusStopped},
		{system.ResetGracefulRestart, system.PowerOn, kubevirtv1.VirtualMachineStatusRunning}, // restart of an Off system powers it on
		{system.ResetPushPowerButton, system.PowerOff, kubevirtv1.VirtualMachineStatusStopped},
	}
	for _, s := range steps {
		if err := e.s.Reset(ctx, key, s.reset); err != nil {
			t.Fatalf("%s: %v", s.reset, err)
		}
		e.eventually(t, key, fmt.Sprintf("%s -> %s (%s)", s.reset, s.want, s.printable), func(vm *apply.VM) bool {
			cached, err := e.w.Read(ctx, key) // PushPowerButton decides from the cache
			return err == nil && State(vm) == s.want && State(cached) == s.want && kubevirt.PrintableStatusOf(vm.Object) == s.printable
		})
	}
	if err := e.s.Reset(ctx, key, "Nmi"); !errors.Is(err, ErrInvalid) {
		t.Errorf("Nmi: err %v, want ErrInvalid", err)
	}
}
