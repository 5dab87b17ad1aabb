package ironic

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/ironicproc"
	"github.com/redfish-bridge/redfish-bridge/harness/vmcheck"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// untrustedReason is what the bridge answers an InsertMedia from an image
// server whose CA it does not trust, and what Ironic's last_error carries.
const untrustedReason = "x509: certificate signed by unknown authority"

// httpsUntrustedDeployScenario (Ironic 39): httpsCADeployScenario's deploy
// from an HTTPS image server whose private CA Ironic trusts and the bridge
// does not. The bridge's handshake at the insert refuses it at once (400
// with the TLS reason and what to do; nothing recorded, no import): Ironic
// fails the deploy within seconds with that reason in last_error, never
// powers the node on, and undeploy leaves no VMI, pod or PVC. (Without
// the refusal Ironic's insert polling read the slot Inserted while its
// import ran, and the node went active on a VM that never booted the CD.)
func httpsUntrustedDeployScenario(t *testing.T, s *suite, v crds.Variant) {
	srv, err := s.cas.untrusted.NewServer(http.FileServer(http.Dir(s.ironic.HTTPRoot)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	image := srv.URL + "/" + bootISO
	n := s.enroll(t, v, vmUntrusted, "ramdisk", map[string]any{"vmedia_transport_protocol": "HTTPS"})
	n.step(t, "manage", func() { n.provision(t, "manage", "manageable", nil) })
	n.step(t, "provide", func() { n.provision(t, "provide", "available", nil) })
	insert := "/Systems/" + n.key.ID() + "/VirtualMedia/" + media.DefaultSlot + "/Actions/VirtualMedia.InsertMedia"
	n.step(t, "deploy: the insert refused with the TLS reason, the deploy failed", func() {
		if _, err := s.api.PatchNode(t.Context(), n.uuid, map[string]any{"op": "add", "path": "/instance_info/boot_iso", "value": image}); err != nil {
			t.Fatalf("set instance_info/boot_iso: %v", err)
		}
		start := time.Now()
		if err := s.api.Provision(t.Context(), n.uuid, "active", nil); err != nil {
			t.Fatalf("deploy: %v", err)
		}
		// Active or failed, whichever comes: without the refusal Ironic
		// went on to active.
		got := n.wait(t, "deploy failed", func(x ironicproc.Node) bool {
			return str(x.Reservation) == "" && str(x.TargetPowerState) == "" &&
				(x.ProvisionState == "active" || strings.HasSuffix(x.ProvisionState, "failed"))
		})
		if got.ProvisionState != "deploy failed" {
			t.Fatalf("deploy from a server the bridge does not trust: %s; want deploy failed with %q", got.Summary(), untrustedReason)
		}
		t.Logf("TIMING ironic %s %s %s: deploy to deploy failed in %s", s.release.Name, v, n.key.Name, time.Since(start).Round(time.Millisecond))
		// Ironic 39 records the reason in the node's history and in
		// last_error, which its own clean-up then empties: the ramdisk
		// deploy's clean-up powers the node off, and a power action that
		// finds the node already off clears last_error
		// (conductor/utils.py, _not_going_to_change).
		why := n.historyErrors(t)
		t.Logf("Ironic's last_error: %q; its node history: %s", str(got.LastError), why)
		if !strings.Contains(why, untrustedReason) || !strings.Contains(why, "POST its CA to the slot's Certificates") {
			t.Errorf("deploy failed with history %q; want the TLS reason (%s) and what to do", why, untrustedReason)
		}
		if le := str(got.LastError); le != "" && !strings.Contains(le, untrustedReason) {
			t.Errorf("deploy failed with last_error %q; want the TLS reason (%s)", le, untrustedReason)
		}
		n.insertedHTTPS(t, image)
		ins := n.rec.matching(http.MethodPost, insert, "")
		for _, e := range ins {
			if e.status != http.StatusBadRequest || !strings.Contains(e.resBody, untrustedReason) {
				t.Errorf("InsertMedia answered %d %s; want 400 with %q", e.status, e.resBody, untrustedReason)
			}
		}
		if on := n.rec.matching(http.MethodPost, "/Systems/"+n.key.ID()+"/Actions/ComputerSystem.Reset", "On"); len(on) > 0 {
			t.Errorf("Ironic powered the node on after the refused insert: %v", on[0])
		}
		cd := n.redfish(t, "/redfish/v1/Systems/"+n.key.ID()+"/VirtualMedia/"+media.DefaultSlot)
		if cd["Inserted"] != false || cd["Image"] != nil {
			t.Errorf("cd0 after the refused insert: Inserted %v Image %v, want false, null", cd["Inserted"], cd["Image"])
		}
		if slot := vmcheck.MustSlot(t, n.vm(t), media.DefaultSlot); slot.Phase != system.MediaEmpty || slot.InsertID != "" {
			t.Errorf("slot %+v after the refused insert, want nothing recorded", slot)
		}
		if err := n.noMediaObjects(t.Context()); err != nil {
			t.Error(err)
		}
		n.neverBootedCD(t)
	})
	n.step(t, "undeploy leaves nothing behind", func() { n.undeployLeavesNothing(t) })
	n.checkFields(t)
}

// historyErrors is the node's history events of severity ERROR (Ironic
// API 1.78: `baremetal node history list`), one a line.
func (n *node) historyErrors(t *testing.T) string {
	t.Helper()
	var hist struct {
		History []struct {
			Event    string `json:"event"`
			Severity string `json:"severity"`
		} `json:"history"`
	}
	if err := n.s.api.Do(t.Context(), http.MethodGet, "/v1/nodes/"+n.uuid+"/history?detail=true", nil, &hist); err != nil {
		t.Fatalf("node history: %v", err)
	}
	var out []string
	for _, e := range hist.History {
		if e.Severity == "ERROR" {
			out = append(out, e.Event)
		}
	}
	return strings.Join(out, "\n")
}
