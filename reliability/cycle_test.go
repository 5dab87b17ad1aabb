package reliability

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/harness/vmcheck"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// settle bounds every wait for the cluster or the bridge to settle: generous,
// the machine may be loaded; nothing asserts how long it took.
const settle = 90 * time.Second

// rig drives provisioning cycles of one VM through Redfish and checks the
// Kubernetes objects behind them.
type rig struct {
	c       *client
	a       auth
	dyn     dynamic.Interface
	kube    kubernetes.Interface
	sim     *sim.Simulator
	key     system.Key
	checked int // objects and fields checked
	retried int // writes answered 409 or 503 and sent again
}

func newRig(t *testing.T, c *client, a auth, admin *rest.Config, s *sim.Simulator, key system.Key) *rig {
	t.Helper()
	dyn, err := dynamic.NewForConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{c: c, a: a, dyn: dyn, kube: kube, sim: s, key: key}
}

func (r *rig) sys() string { return "/redfish/v1/Systems/" + r.key.ID() }

// write sends a Redfish write and requires 2xx. 409 and 503 (a write that
// raced an outside writer, an apiserver not back yet) are retried, as Ironic
// retries them, until settle passes.
func (r *rig) write(t *testing.T, method, path, body string) response {
	t.Helper()
	deadline := time.Now().Add(settle)
	for {
		resp := r.c.do(t.Context(), t, method, path, r.a, body)
		if resp.status/100 == 2 {
			return resp
		}
		retry := resp.status == http.StatusConflict || resp.status == http.StatusServiceUnavailable
		if !retry || time.Now().After(deadline) {
			t.Fatalf("%s %s %s: %d %s", method, path, body, resp.status, resp.body)
		}
		redfishError(t, method+" "+path, resp)
		r.retried++
		t.Logf("%s %s: %d, retrying", method, path, resp.status)
		sleep(t, time.Second)
	}
}

func (r *rig) reset(t *testing.T, kind string) {
	t.Helper()
	r.write(t, http.MethodPost, r.sys()+"/Actions/ComputerSystem.Reset", `{"ResetType":"`+kind+`"}`)
}

func (r *rig) insert(t *testing.T, image string) {
	t.Helper()
	r.write(t, http.MethodPost, r.sys()+"/VirtualMedia/cd0/Actions/VirtualMedia.InsertMedia", `{"Image":"`+image+`"}`)
}

func (r *rig) bootCdOnce(t *testing.T) {
	t.Helper()
	r.write(t, http.MethodPatch, r.sys(), `{"Boot":{"BootSourceOverrideTarget":"Cd","BootSourceOverrideEnabled":"Once"}}`)
}

func (r *rig) eject(t *testing.T) {
	t.Helper()
	r.write(t, http.MethodPost, r.sys()+"/VirtualMedia/cd0/Actions/VirtualMedia.EjectMedia", `{}`)
}

// cycle is one provisioning cycle; hook (may be nil) runs after each step.
func (r *rig) cycle(t *testing.T, image, sum string, hook func(step string)) {
	t.Helper()
	if hook == nil {
		hook = func(string) {}
	}
	r.powerOff(t)
	hook("off")
	r.insert(t, image)
	hook("insert")
	r.bootCdOnce(t)
	hook("boot")
	r.reset(t, "On")
	hook("on")
	r.waitProvisioned(t, image, sum)
	hook("running")
	r.ejectAndClean(t)
}

// powerOff sends ForceOff and waits until the VMI is gone.
// offWithMediaReady powers the VM off and inserts image, waiting until its
// import is Ready: the point mid-cycle where the faults are injected.
func (r *rig) offWithMediaReady(t *testing.T, image string) {
	t.Helper()
	r.powerOff(t)
	r.insert(t, image)
	waitFor(t, "image Ready", func() (bool, string) {
		s := slot(t, r.vm(t))
		return s.Phase == system.MediaReady, string(s.Phase)
	})
}

func (r *rig) powerOff(t *testing.T) {
	t.Helper()
	r.reset(t, "ForceOff")
	waitFor(t, r.key.Name+" VMI gone", func() (bool, string) {
		vmi := r.vmi(t)
		return vmi == nil, "phase " + phase(vmi)
	})
}

// waitProvisioned waits for the VMI Running with the image Ready, and
// checks the VMI boots the CD-ROM paired with its PVC, created after the
// import finished, holding the right bytes.
func (r *rig) waitProvisioned(t *testing.T, image, sum string) {
	t.Helper()
	var vmi *unstructured.Unstructured
	var s system.MediaSlot
	waitFor(t, r.key.Name+" Running with the image Ready", func() (bool, string) {
		s = slot(t, r.vm(t))
		vmi = r.vmi(t)
		return s.Phase == system.MediaReady && phase(vmi) == "Running" && vmi.GetDeletionTimestamp() == nil,
			"slot " + string(s.Phase) + ", VMI " + phase(vmi)
	})
	if s.Image != image {
		t.Errorf("%s: slot image %s, want %s", r.key, s.Image, image)
	}
	spec, _, _ := unstructured.NestedMap(vmi.Object, "spec")
	ds := vmcheck.Disks(spec)
	if len(ds) == 0 || ds[0].Name != cdDisk() || !ds[0].CDROM || ds[0].BootOrder == 0 {
		t.Errorf("%s: VMI disks by boot order %+v, want the %s CD-ROM first", r.key, ds, cdDisk())
	}
	if claim := vmcheck.Volumes(spec)[cdDisk()]; claim != s.ClaimName || claim == "" {
		t.Errorf("%s: VMI volume %s claim %q, want %q", r.key, cdDisk(), claim, s.ClaimName)
	}
	if created := vmi.GetCreationTimestamp().Time; created.Before(s.Since.Truncate(time.Second)) {
		t.Errorf("%s: VMI created %s, before the import was Ready at %s", r.key, created, s.Since)
	}
	if got := fileSHA256(t, r.sim.ImagePath(r.key.Namespace, s.ClaimName)); got != sum {
		t.Errorf("%s: imported image sha256 %s, want %s", r.key, got, sum)
	}
	r.paired(t, spec, "VMI")
	r.checked += 5
	r.waitRedfishView(t, image)
}

// waitRedfishView waits until the bridge itself (its caches, after any
// fault) reports the system On with the image inserted.
func (r *rig) waitRedfishView(t *testing.T, image string) {
	t.Helper()
	waitFor(t, r.key.ID()+" reported On with the image inserted over Redfish", func() (bool, string) {
		var sys struct{ PowerState string }
		var cd struct {
			Image    string
			Inserted bool
		}
		s := r.c.do(t.Context(), t, http.MethodGet, r.sys(), r.a, "")
		m := r.c.do(t.Context(), t, http.MethodGet, r.sys()+"/VirtualMedia/cd0", r.a, "")
		if s.status != http.StatusOK || m.status != http.StatusOK || json.Unmarshal(s.body, &sys) != nil || json.Unmarshal(m.body, &cd) != nil {
			return false, fmt.Sprintf("GET system %d, cd0 %d", s.status, m.status)
		}
		return sys.PowerState == "On" && cd.Inserted && cd.Image == image,
			fmt.Sprintf("PowerState %s, cd0 Inserted %v Image %s", sys.PowerState, cd.Inserted, cd.Image)
	})
	r.checked += 2
}

// ejectAndClean ejects, powers off, and waits until no import pod or PVC of
// the VM is left and the template holds no media disk or volume.
func (r *rig) ejectAndClean(t *testing.T) {
	t.Helper()
	r.eject(t)
	r.powerOff(t)
	waitFor(t, r.key.Name+" import pods and PVC gone", func() (bool, string) {
		left := r.mediaObjects(t)
		return len(left) == 0, strings.Join(left, ", ")
	})
	vm := r.vm(t)
	if s := slot(t, vm); s.Phase != system.MediaEmpty {
		t.Errorf("%s: slot %+v after eject, want empty", r.key, s)
	}
	tmpl := templateSpec(t, vm)
	if _, ok := vmcheck.Volumes(tmpl)[cdDisk()]; ok {
		t.Errorf("%s: volume %s still in the template after eject", r.key, cdDisk())
	}
	r.paired(t, tmpl, "VM template")
	if cs := r.sim.Corruptions(); len(cs) > 0 {
		t.Errorf("simulator saw corrupted VMs: %+v", cs)
	}
	r.checked += 4
}

// paired checks every disk has a volume and every volume a disk, but for
// the empty CD drives the bridge keeps after an eject.
func (r *rig) paired(t *testing.T, spec map[string]any, what string) {
	t.Helper()
	vols := vmcheck.Volumes(spec)
	ds := vmcheck.Disks(spec)
	drives := 0
	for _, d := range ds {
		if vmcheck.EmptyDrive(d, vols) {
			drives++
			continue
		}
		if _, ok := vols[d.Name]; !ok {
			t.Errorf("%s %s: disk %s has no volume", r.key, what, d.Name)
		}
	}
	if len(vols) != len(ds)-drives {
		t.Errorf("%s %s: %d disks %+v (%d empty CD drives), %d volumes %v", r.key, what, len(ds), ds, drives, len(vols), vols)
	}
}

func (r *rig) vm(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	return vmcheck.MustVM(t, r.dyn, r.key)
}

// vmi is the VM's VMI, nil if there is none.
func (r *rig) vmi(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	return vmcheck.MustVMI(t, r.dyn, r.key)
}

// mediaObjects lists the VM's import pods and media PVC.
func (r *rig) mediaObjects(t *testing.T) []string {
	t.Helper()
	out, err := vmcheck.MediaObjects(t.Context(), r.kube, r.key, media.DefaultSlot)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func cdDisk() string { return apply.DiskName(media.DefaultSlot) }

// slot decodes the VM's cd0 media annotation (zero if none).
func slot(t *testing.T, vm *unstructured.Unstructured) system.MediaSlot {
	t.Helper()
	return vmcheck.MustSlot(t, vm, media.DefaultSlot)
}

func phase(obj *unstructured.Unstructured) string {
	if obj == nil {
		return "(none)"
	}
	return vmcheck.Phase(obj)
}

var templateSpec = vmcheck.MustTemplateSpec

var fileSHA256 = vmcheck.MustFileSHA256

// waitFor polls cond every 250 ms until it holds; after settle (or when the
// test's context ends) it fails with what cond last reported.
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	testutil.Eventually(t, what, settle, 250*time.Millisecond, testutil.Holds(cond))
}

func sleep(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-t.Context().Done():
	case <-time.After(d):
	}
}
