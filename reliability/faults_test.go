package reliability

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// tally counts what a fault test did, for its RELIABILITY log line.
type tally struct {
	faults, requests, checked, retried, lost int
}

func (n *tally) add(r *rig) {
	n.requests += int(r.c.sent.Load())
	n.checked += r.checked
	n.retried += r.retried
}

// eachVariant runs f once per CRD variant (stock atomic lists, keyed
// maplist), as a subtest named after it.
func eachVariant(t *testing.T, f func(t *testing.T, v crds.Variant)) {
	t.Helper()
	for _, v := range crds.Variants {
		t.Run(string(v), func(t *testing.T) { f(t, v) })
	}
}

// TestFaults runs, on each CRD variant, one demo (3 VMs, one per fault):
// kube-apiserver stopped mid-cycle, etcd stopped mid-cycle, and outside
// writers interleaved with cycles. Each fault is followed by full
// provisioning cycles that must complete with nothing lost or corrupted.
func TestFaults(t *testing.T) { eachVariant(t, testFaults) }

func testFaults(t *testing.T, v crds.Variant) {
	env := startDemo(t, v, 3)
	admin := auth{user: env.User, password: env.Password}
	boot, bootSum := env.Images.URL+"/images/boot.iso", env.Images.SHA256["boot.iso"]
	deploy, deploySum := env.Images.URL+"/images/deploy.iso", env.Images.SHA256["deploy.iso"]
	var n tally
	defer func() {
		t.Logf("RELIABILITY faults (%s): %d faults injected, %d requests, %d objects/fields checked, %d writes retried after 409/503, %d lost or corrupted",
			v, n.faults, n.requests, n.checked, n.retried, n.lost)
	}()
	rigFor := func(t *testing.T, i int) *rig {
		c := newClient(t, env.URL, "")
		c.hc.Timeout = 2 * time.Minute // longer than the bridge's 30 s request timeout
		key := system.Key{Namespace: demo.VMNamespace, Name: "vm-" + strconv.Itoa(i)}
		return newRig(t, c, admin, env.Cluster.Admin, env.Sim, key)
	}
	// down sends the three writes a cycle needs while the control plane is
	// down, at once, and checks each is a 503 Redfish error with Retry-After.
	down := func(t *testing.T, r *rig, what string) {
		writes := []struct{ method, path, body string }{
			{http.MethodPost, r.sys() + "/Actions/ComputerSystem.Reset", `{"ResetType":"On"}`},
			{http.MethodPost, r.sys() + "/VirtualMedia/cd0/Actions/VirtualMedia.InsertMedia", `{"Image":"` + deploy + `"}`},
			{http.MethodPatch, r.sys(), `{"Boot":{"BootSourceOverrideTarget":"Cd","BootSourceOverrideEnabled":"Once"}}`},
		}
		answers := make([]response, len(writes))
		var wg sync.WaitGroup
		var mu sync.Mutex
		for i, w := range writes {
			wg.Go(func() {
				resp := r.c.do(t.Context(), t, w.method, w.path, r.a, w.body)
				mu.Lock()
				answers[i] = resp
				mu.Unlock()
			})
		}
		wg.Wait()
		for i, w := range writes {
			resp := answers[i]
			id := redfishError(t, w.method+" "+w.path, resp)
			r.checked++
			if resp.status != http.StatusServiceUnavailable || !strings.HasSuffix(id, ".ServiceTemporarilyUnavailable") || resp.header.Get("Retry-After") == "" {
				t.Errorf("%s %s with %s down: %d %s (Retry-After %q), want 503 ServiceTemporarilyUnavailable with Retry-After",
					w.method, w.path, what, resp.status, id, resp.header.Get("Retry-After"))
			}
		}
		t.Logf("%s down: %d writes answered 503 %s", what, len(writes), "ServiceTemporarilyUnavailable")
		if resp := r.c.do(t.Context(), t, http.MethodGet, r.sys(), r.a, ""); resp.status != http.StatusOK {
			t.Errorf("GET %s with %s down: %d, want 200 from the cache", r.sys(), what, resp.status)
		}
		r.checked++
	}

	t.Run("apiserver restarted mid-cycle", func(t *testing.T) {
		r := rigFor(t, 0)
		defer n.add(r)
		before := userFields(t, r.vm(t))
		r.offWithMediaReady(t, boot)
		if err := env.Cluster.StopAPIServer(); err != nil {
			t.Fatal(err)
		}
		n.faults++
		t.Log("injected: kube-apiserver stopped (SIGTERM) after InsertMedia, before boot override and power on")
		down(t, r, "kube-apiserver")
		if err := env.Cluster.StartAPIServer(bounded(t)); err != nil {
			t.Fatal(err)
		}
		t.Log("kube-apiserver started again on the same port, etcd and credentials")
		// Nothing the 503 answers refused may have happened.
		vm := r.vm(t)
		if s := slot(t, vm); s.Image != boot || s.Phase != system.MediaReady {
			t.Errorf("slot after the outage %+v, want boot.iso Ready (the refused insert must not land)", s)
		}
		if rs, _, _ := unstructuredString(vm, "spec", "runStrategy"); rs != "Halted" {
			t.Errorf("runStrategy after the outage %q, want Halted (the refused power-on must not land)", rs)
		}
		r.checked += 2
		// The rest of the cycle, then a whole new one.
		r.bootCdOnce(t)
		r.reset(t, "On")
		r.waitProvisioned(t, boot, bootSum)
		r.ejectAndClean(t)
		r.cycle(t, deploy, deploySum, nil)
		n.lost += checkUserFields(t, before, userFields(t, r.vm(t)))
		r.checked++
	})

	t.Run("etcd restarted mid-cycle", func(t *testing.T) {
		r := rigFor(t, 1)
		defer n.add(r)
		before := userFields(t, r.vm(t))
		r.offWithMediaReady(t, boot)
		if err := env.Cluster.StopEtcd(); err != nil {
			t.Fatal(err)
		}
		n.faults++
		t.Log("injected: etcd stopped (SIGTERM) after InsertMedia; kube-apiserver keeps running")
		down(t, r, "etcd")
		if err := env.Cluster.StartEtcd(bounded(t)); err != nil {
			t.Fatal(err)
		}
		t.Log("etcd started again on the same data dir and ports")
		// A refused write may still have reached etcd (the apiserver does
		// not promise otherwise): start from a clean slot, then a full cycle.
		r.ejectAndClean(t)
		r.cycle(t, boot, bootSum, nil)
		n.lost += checkUserFields(t, before, userFields(t, r.vm(t)))
		r.checked++
	})

	t.Run("outside writers during cycles", func(t *testing.T) {
		r := rigFor(t, 2)
		defer n.add(r)
		w := newWriters(t, env, r)
		before := userFields(t, r.vm(t))
		for cycle := 1; cycle <= 3; cycle++ {
			image, sum := boot, bootSum
			if cycle%2 == 0 {
				image, sum = deploy, deploySum
			}
			r.cycle(t, image, sum, func(step string) { w.during(t, cycle, step) })
			w.wait()
			n.lost += w.check(t, before, cycle)
		}
		n.faults += w.writes
		t.Logf("%d outside writes (kubectl-edit Update, client-side kubectl apply, SSA by %s) interleaved with 3 cycles", w.writes, plannerManager)
	})
}

// bounded is a context for restarting a cluster process: the test's, cut at
// settle.
func bounded(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), settle)
	t.Cleanup(cancel)
	return ctx
}

// checkUserFields reports (and counts as lost) any difference in the fields
// the bridge does not own.
func checkUserFields(t *testing.T, want, got map[string]any) int {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fields the bridge does not own changed (-before +after):\n%s", diff)
		return 1
	}
	return 0
}

// TestBridgeKilledMidImport runs the bridge as a real process, inserts an
// image whose download is held halfway, sends the boot override and a
// power-on (deferred behind the import), SIGKILLs the bridge and starts a
// new one: the import must finish, the deferred power-on happen after it,
// and the image arrive intact.
func TestBridgeKilledMidImport(t *testing.T) { eachVariant(t, testBridgeKilledMidImport) }

func testBridgeKilledMidImport(t *testing.T, v crds.Variant) {
	ce := startCrashEnv(t, v)
	cluster, simulator, bin, a, key := ce.cluster, ce.sim, ce.bin, ce.a, ce.key
	addr := freeAddr(t)
	first := startBridgeProc(t, bin, cluster, addr, demo.VMNamespace, a, "/redfish/v1/Systems/"+key.ID())
	c := newClient(t, "http://"+addr, "")
	r := newRig(t, c, a, cluster.Admin, simulator, key)
	before := userFields(t, r.vm(t))
	image := newGatedImage(t, 4<<20)
	var n tally
	defer func() {
		t.Logf("RELIABILITY bridge SIGKILL (%s): %d faults injected, %d requests, %d objects/fields checked, %d image downloads, %d lost or corrupted",
			v, n.faults, n.requests, n.checked, image.downloads(), n.lost)
	}()
	defer n.add(r)

	r.insert(t, image.URL)
	select {
	case <-image.started:
	case <-time.After(settle):
		t.Fatal("the import never started downloading")
	}
	r.bootCdOnce(t)
	r.reset(t, "On")
	vm := r.vm(t)
	var intent system.PowerIntent
	if raw := vm.GetAnnotations()[apply.AnnotationPower]; json.Unmarshal([]byte(raw), &intent) != nil || !intent.OnDeferred {
		t.Errorf("power intent %q after On during the import, want onDeferred recorded on the VM", raw)
	}
	if s := slot(t, vm); s.Phase != system.MediaImporting {
		t.Errorf("slot %+v before the kill, want Importing", s)
	}
	r.checked += 2

	first.kill(t)
	n.faults++
	t.Logf("injected: SIGKILL to the bridge (pid %d) with the import half done and the power-on deferred", first.Pid())
	if vmi := r.vmi(t); vmi != nil {
		t.Errorf("a VMI exists while the import is unfinished: phase %s", phase(vmi))
	}
	second := startBridgeProc(t, bin, cluster, addr, demo.VMNamespace, a, "/redfish/v1/Systems/"+key.ID())
	t.Logf("a new bridge (pid %d) serves on the same address; releasing the image download", second.Pid())
	image.release()

	r.waitProvisioned(t, image.URL, image.SHA256)
	if err := json.Unmarshal([]byte(r.vm(t).GetAnnotations()[apply.AnnotationPower]), &intent); err == nil && intent.OnDeferred {
		t.Errorf("power intent %+v after the VM started, want the deferral done", intent)
	}
	if refused := simulator.Counters().MultiAttachRefusals; refused != 0 {
		t.Errorf("%d import pods refused with Multi-Attach: the VM started on an unfinished import", refused)
	}
	r.checked += 2
	r.ejectAndClean(t)
	n.lost += checkUserFields(t, before, userFields(t, r.vm(t)))
	r.checked++
}
