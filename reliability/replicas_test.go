package reliability

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/bridgeproc"
	"github.com/redfish-bridge/redfish-bridge/service"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// replicas is how many bridge processes TestLeaderKilledThreeReplicas runs.
const replicas = 3

// TestLeaderKilledThreeReplicas runs three bridge processes (the chart's
// replicas, with the binary's own leader election timings: lease 15 s,
// retry 2 s) on one apiserver. Ironic's insert, boot override and
// power-on each go to a random replica; with the import's download held
// halfway and the power-on deferred behind it, the Lease holder is
// SIGKILLed (it cannot release the Lease) and the download let go. One of
// the two others must take the Lease and finish both: the import Ready
// and intact, from the one import pod the dead leader started, and the VM
// started after it; until then the two others answer Redfish (the System
// PoweringOn: the held power-on). The RELIABILITY line says what the
// leader change cost: from the kill until another replica held the Lease,
// and until the VM ran (observed every 250 ms).
func TestLeaderKilledThreeReplicas(t *testing.T) { eachVariant(t, testLeaderKilledThreeReplicas) }

func testLeaderKilledThreeReplicas(t *testing.T, v crds.Variant) {
	ce := startCrashEnv(t, v)
	kube, err := kubernetes.NewForConfig(ce.cluster.Admin)
	if err != nil {
		t.Fatal(err)
	}
	sys := "/redfish/v1/Systems/" + ce.key.ID()
	names := make([]string, replicas)
	procs := make([]bridgeProc, replicas)
	clients := make([]*client, replicas)
	for i := range replicas {
		names[i] = fmt.Sprintf("bridge-%d", i)
		addr := freeAddr(t)
		procs[i] = startBridgeWith(t, ce.cluster, bridgeproc.Options{
			Bin: ce.bin, Namespaces: []string{ce.key.Namespace}, Listen: addr, PodName: names[i],
		}, ce.a, sys)
		clients[i] = newClient(t, "http://"+addr, "")
	}
	// holder is the replica holding the Lease, -1 for none of them.
	holder := func() (int, string) {
		lease, err := kube.CoordinationV1().Leases(ce.cluster.BridgeNamespace).Get(t.Context(), service.DefaultLeaseName, metav1.GetOptions{})
		if err != nil {
			return -1, err.Error()
		}
		h := ""
		if lease.Spec.HolderIdentity != nil {
			h = *lease.Spec.HolderIdentity
		}
		return slices.Index(names, h), "holder " + h
	}
	leader := -1
	waitFor(t, "a replica to hold the Lease", func() (bool, string) {
		i, what := holder()
		leader = i
		return i >= 0, what
	})

	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	r := newRig(t, clients[0], ce.a, ce.cluster.Admin, ce.sim, ce.key)
	var route []string
	via := func(among []int) { // the next request's replica, at random
		i := among[rng.IntN(len(among))]
		r.c = clients[i]
		route = append(route, names[i])
	}
	all := []int{0, 1, 2}
	before := userFields(t, r.vm(t))
	image := newGatedImage(t, 4<<20)

	via(all)
	r.insert(t, image.URL)
	select {
	case <-image.started:
	case <-time.After(settle):
		t.Fatal("the import never started downloading")
	}
	via(all)
	r.bootCdOnce(t)
	via(all)
	r.reset(t, "On")
	var intent system.PowerIntent
	if raw := r.vm(t).GetAnnotations()[apply.AnnotationPower]; json.Unmarshal([]byte(raw), &intent) != nil || !intent.OnDeferred {
		t.Errorf("power intent %q after On during the import, want onDeferred recorded on the VM", raw)
	}
	if s := slot(t, r.vm(t)); s.Phase != system.MediaImporting {
		t.Errorf("slot %+v before the kill, want Importing", s)
	}

	killed := time.Now()
	procs[leader].kill(t)
	image.release() // the import pod goes on without a leader
	t.Logf("seed %d: insert, boot override, On sent to %v; SIGKILL to the leader %s (pid %d) with the import half done and the power-on deferred",
		seed, route, names[leader], procs[leader].Pid())
	survivors := slices.DeleteFunc(slices.Clone(all), func(i int) bool { return i == leader })
	for _, i := range survivors { // no leader yet: the survivors serve all the same
		var got struct{ PowerState string }
		resp := clients[i].do(t.Context(), t, http.MethodGet, sys, ce.a, "")
		if err := json.Unmarshal([]byte(resp.body), &got); resp.status != http.StatusOK || err != nil || got.PowerState != "PoweringOn" {
			t.Errorf("GET %s from %s with the leader dead: %d %s, want 200 with PowerState PoweringOn (the held power-on)", sys, names[i], resp.status, resp.body)
		}
	}
	next := -1
	waitFor(t, "another replica to take the Lease", func() (bool, string) {
		i, what := holder()
		next = i
		return i >= 0 && i != leader, what
	})
	tookOver := time.Since(killed)
	via(survivors)
	r.waitProvisioned(t, image.URL, image.SHA256)
	completed := time.Since(killed)

	if err := json.Unmarshal([]byte(r.vm(t).GetAnnotations()[apply.AnnotationPower]), &intent); err == nil && intent.OnDeferred {
		t.Errorf("power intent %+v after the VM started, want the deferral done", intent)
	}
	c := ce.sim.Counters()
	if c.ImportsStarted != 1 || c.MultiAttachRefusals != 0 {
		t.Errorf("simulator: %d import pods started (want 1: the new leader follows the dead one's), %d refused with Multi-Attach (want 0)",
			c.ImportsStarted, c.MultiAttachRefusals)
	}
	via(survivors)
	r.ejectAndClean(t)
	lost := checkUserFields(t, before, userFields(t, r.vm(t)))
	var sent int64
	for _, c := range clients {
		sent += c.sent.Load()
	}
	t.Logf("RELIABILITY leader SIGKILL, %d replicas (%s): %s took the Lease %s after the kill, import Ready and VM Running %s after it; %d requests, %d import pods started, %d lost or corrupted",
		replicas, v, names[next], tookOver.Round(10*time.Millisecond), completed.Round(10*time.Millisecond), sent, c.ImportsStarted, lost)
}
