package ironic

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/ironicproc"
	"github.com/redfish-bridge/redfish-bridge/harness/vmcheck"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// powerWait is the conductor's power_state_change_timeout
// (harness/ironicproc's config): how long Ironic waits for a power state.
const powerWait = 30 * time.Second

// slowImportDeployScenario: a custom-agent deploy whose agent ISO takes
// longer to import than Ironic waits for power (the image server sends
// half of it, then stalls until the test lets it go, after the deploy is
// over). The bridge holds the power-on and shows PoweringOn, which Ironic
// 21.4 counts as on: the deploy goes on to wait for the agent instead of
// failing on "Timed out ... waiting for power on", and the CD shows
// Inserted during the import. The callback timeout fails the deploy;
// Ironic's clean-up ejects the CD (it reads Inserted true), which cancels
// the held power-on: the ISO never boots, and the VM is in the power state
// Ironic believes. Undeploy leaves it off with nothing inserted, no power-on
// held and no import left, so nothing can start it after Ironic gave up.
func slowImportDeployScenario(t *testing.T, s *suite, v crds.Variant) {
	image := newStalledImage(t, 1<<20)
	n := s.enroll(t, v, vmSlowImport, "custom-agent", map[string]any{"deploy_iso": image.url})
	n.step(t, "manage", func() { n.provision(t, "manage", "manageable", nil) })
	n.step(t, "provide", func() { n.provision(t, "provide", "available", nil) })
	var resetOn time.Time
	n.step(t, "deploy: power-on held behind the import, shown PoweringOn", func() {
		if err := s.api.Provision(t.Context(), n.uuid, "active", nil); err != nil {
			t.Fatalf("deploy: %v", err)
		}
		got := n.waitState(t, "wait call-back")
		if str(got.PowerState) != "power on" {
			t.Errorf("in wait call-back: %s, want power on", got.Summary())
		}
		at, ok := n.rec.lastAt(http.MethodPost, n.key.ID()+"/Actions/ComputerSystem.Reset", `"On"`)
		if !ok {
			t.Fatal("Ironic sent no Reset On")
		}
		resetOn = at
		if image.done() {
			t.Fatal("the import finished: the stalled image server let it through")
		}
		if vmi := n.vmi(t); vmi != nil {
			t.Errorf("a VMI exists while the import is in flight: phase %s", vmcheck.Phase(vmi))
		}
		sys := n.redfish(t, "/redfish/v1/Systems/"+n.key.ID())
		cd := n.redfish(t, "/redfish/v1/Systems/"+n.key.ID()+"/VirtualMedia/"+media.DefaultSlot)
		if sys["PowerState"] != "PoweringOn" || cd["Inserted"] != true || cd["Image"] != image.url {
			t.Errorf("during the import: PowerState %v, cd0 Inserted %v Image %v; want PoweringOn, true, %s", sys["PowerState"], cd["Inserted"], cd["Image"], image.url)
		}
	})
	n.step(t, "callback timeout: Ironic ejects, the held power-on is cancelled", func() {
		got := n.waitState(t, "deploy failed")
		if le := str(got.LastError); !strings.Contains(le, "Timeout reached while waiting for callback") {
			t.Errorf("deploy failed with %q, want the callback timeout", le)
		}
		if _, ok := n.rec.lastAt(http.MethodPost, n.key.ID()+"/VirtualMedia/"+media.DefaultSlot+"/Actions/VirtualMedia.EjectMedia", ""); !ok {
			t.Errorf("Ironic sent no EjectMedia for the CD it inserted")
		}
		vm := n.vm(t)
		if slot, err := vmcheck.Slot(vm, media.DefaultSlot); err != nil || slot.Phase != system.MediaEmpty {
			t.Errorf("slot %+v (%v) after Ironic's clean-up, want empty", slot, err)
		}
		if p := powerIntent(t, vm); p.OnDeferred {
			t.Errorf("power-on still held after the eject: %+v", p)
		}
		// Ironic 21.4 believes the node is on (it read PoweringOn) and its
		// power sync powers the VM on again, without the CD: the VM ends
		// in the power state Ironic believes, whichever it is.
		var vmi *unstructured.Unstructured
		n.wait(t, "the VM in the power state Ironic believes", func(x ironicproc.Node) bool {
			if str(x.Reservation) != "" || str(x.TargetPowerState) != "" { // deploy failed keeps its target: not Stable()
				return false
			}
			switch vmi = n.vmi(t); str(x.PowerState) {
			case "power on":
				return running(vmi)
			case "power off":
				return vmi == nil
			}
			return false
		})
		if vmi != nil {
			spec, _, _ := unstructured.NestedMap(vmi.Object, "spec")
			if _, ok := vmcheck.Volumes(spec)[apply.DiskName(media.DefaultSlot)]; ok {
				t.Errorf("VMI %s has the CD volume: the ISO Ironic ejected was booted", vmi.GetUID())
			}
		}
	})
	n.step(t, "undeploy", func() {
		n.provision(t, "deleted", "available", nil)
		n.poweredOffEjected(t)
		if p := powerIntent(t, n.vm(t)); p.OnDeferred {
			t.Errorf("power-on held after undeploy: %+v", p)
		}
		if waited := time.Since(resetOn); waited <= powerWait {
			time.Sleep(powerWait - waited + time.Second) // the import must outlast Ironic's power wait
		}
		image.release()
		cd := n.redfish(t, "/redfish/v1/Systems/"+n.key.ID()+"/VirtualMedia/"+media.DefaultSlot)
		if sys := n.redfish(t, "/redfish/v1/Systems/"+n.key.ID()); sys["PowerState"] != "Off" || cd["Inserted"] != false {
			t.Errorf("after undeploy: PowerState %v, cd0 Inserted %v; want Off, false", sys["PowerState"], cd["Inserted"])
		}
		if got := n.get(t); str(got.PowerState) != "power off" {
			t.Errorf("after undeploy Ironic has %s, want power off", got.Summary())
		}
	})
	n.checkFields(t)
}

// powerIntent decodes the VM's power annotation.
func powerIntent(t *testing.T, vm *unstructured.Unstructured) system.PowerIntent {
	t.Helper()
	var p system.PowerIntent
	if raw := vm.GetAnnotations()[apply.AnnotationPower]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &p); err != nil {
			t.Fatalf("power annotation %q: %v", raw, err)
		}
	}
	return p
}

// redfish GETs path from the node's bridge, as its admin.
func (n *node) redfish(t *testing.T, path string) map[string]any {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, n.env.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(n.env.User, n.env.Password)
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the demo bridge's self-signed certificate
	}}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
	}
	return body
}

// stalledImage serves one ISO of which it sends half, then nothing more
// until release (the rest follows) or fail (the connection ends short of
// its Content-Length, and every later download too): an import that takes
// as long as the test wants, and ends as it wants.
type stalledImage struct {
	url      string
	release  func()
	fail     func()
	finished chan struct{}
	once     sync.Once
}

func newStalledImage(t *testing.T, size int) *stalledImage {
	t.Helper()
	data := bytes.Repeat([]byte("redfish-bridge stalled agent iso\n"), size/33)
	open, broken := make(chan struct{}), make(chan struct{})
	img := &stalledImage{finished: make(chan struct{})}
	var releaseOnce, failOnce sync.Once
	img.release = func() { releaseOnce.Do(func() { close(open) }) }
	img.fail = func() { failOnce.Do(func() { close(broken) }) }
	t.Cleanup(img.release)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Header().Set("Content-Type", "application/octet-stream")
		if r.Method == http.MethodHead {
			return
		}
		half := len(data) / 2
		_, _ = w.Write(data[:half])
		w.(http.Flusher).Flush()
		select {
		case <-broken:
			return // short of Content-Length: the client reads an unexpected EOF
		case <-open:
		case <-r.Context().Done():
			return
		}
		if _, err := w.Write(data[half:]); err == nil {
			img.once.Do(func() { close(img.finished) })
		}
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	img.url = "http://" + l.Addr().String() + "/slow/agent.iso"
	return img
}

// done reports whether a download got the whole image.
func (i *stalledImage) done() bool {
	select {
	case <-i.finished:
		return true
	default:
		return false
	}
}
