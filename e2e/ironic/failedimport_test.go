package ironic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/vmcheck"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// failedImportDeployScenario (Ironic 39, insert polling on): a custom-agent
// deploy whose agent ISO download breaks off half way. The slot reads
// Inserted while the import runs, so Ironic's polling passes and its
// power-on is held (PoweringOn, which Ironic counts as on); the broken
// download then fails the import: the slot reads Inserted false with the
// reason in its Status, the held power-on is dropped (the CD never boots)
// and the bridge releases the import's PVC and pod on its own. Ironic's
// callback timeout fails the deploy; its teardown, which ejects only
// inserted media, sends no EjectMedia, and undeploy leaves no VMI, no
// import pod and no PVC.
func failedImportDeployScenario(t *testing.T, s *suite, v crds.Variant) {
	image := newStalledImage(t, 1<<20)
	n := s.enroll(t, v, vmFailImport, "custom-agent", map[string]any{"deploy_iso": image.url})
	n.step(t, "manage", func() { n.provision(t, "manage", "manageable", nil) })
	n.step(t, "provide", func() { n.provision(t, "provide", "available", nil) })
	cdPath := n.cdPath()
	var deployAt time.Time
	n.step(t, "deploy: the insert read back Inserted, the power-on held", func() {
		deployAt = time.Now()
		if err := s.api.Provision(t.Context(), n.uuid, "active", nil); err != nil {
			t.Fatalf("deploy: %v", err)
		}
		n.waitState(t, "wait call-back")
		n.checkInsertPolled(t, media.DefaultSlot)
		if sys := n.redfish(t, "/redfish/v1/Systems/"+n.key.ID()); sys["PowerState"] != "PoweringOn" {
			t.Errorf("during the import: PowerState %v, want PoweringOn", sys["PowerState"])
		}
	})
	n.step(t, "the download breaks: Inserted false with the reason, nothing held", func() {
		image.fail()
		n.eventually(t, "cd0 Failed", func(context.Context) error {
			if slot := vmcheck.MustSlot(t, n.vm(t), media.DefaultSlot); slot.Phase != system.MediaFailed {
				return fmt.Errorf("slot %+v, want Failed", slot)
			}
			return nil
		})
		cd := n.redfish(t, cdPath)
		if why := failedReason(cd); cd["Inserted"] != false || !strings.Contains(why, "unexpected EOF") {
			t.Errorf("failed slot: Inserted %v Status %v, want false with a condition saying why (the download's unexpected EOF)", cd["Inserted"], cd["Status"])
		}
		t.Logf("the failed slot says: %s", failedReason(cd))
		n.eventually(t, "the import's pod and PVC released", func(ctx context.Context) error {
			return n.noMediaObjects(ctx)
		})
		n.neverBootedCD(t)
	})
	n.step(t, "the callback timeout fails the deploy; nothing to eject", func() {
		got := n.waitState(t, "deploy failed")
		t.Logf("TIMING ironic %s %s %s: deploy to deploy failed in %s", s.release.Name, v, n.key.Name, time.Since(deployAt).Round(time.Millisecond))
		// Ironic 39 under load at times overwrites the callback timeout's
		// last_error with its own second clean-up's ("Async execution of
		// cleanup_after_timeout failed ... Can not transition from state
		// 'deploy failed' on event 'fail'"): the state is what counts.
		if le := str(got.LastError); le == "" {
			t.Errorf("deploy failed with no last_error: %s", got.Summary())
		} else {
			t.Logf("Ironic's last_error: %s", le)
		}
		if ej := n.rec.matching(http.MethodPost, n.key.ID()+"/VirtualMedia/"+media.DefaultSlot+"/Actions/VirtualMedia.EjectMedia", ""); len(ej) > 0 {
			t.Errorf("Ironic ejected a slot that read Inserted false: %v", ej[0])
		}
		n.neverBootedCD(t)
	})
	n.step(t, "undeploy leaves nothing behind", func() { n.undeployLeavesNothing(t) })
	n.checkFields(t)
}

// failedReason is the Message and Resolution of a VirtualMedia resource's
// first Status condition ("" when it has none).
func failedReason(cd map[string]any) string {
	st, _ := cd["Status"].(map[string]any)
	conds, _ := st["Conditions"].([]any)
	if len(conds) == 0 {
		return ""
	}
	c, _ := conds[0].(map[string]any)
	m, _ := c["Message"].(string)
	r, _ := c["Resolution"].(string)
	return m + " " + r
}

// undeployLeavesNothing undeploys a node whose deploy failed and checks
// what it leaves: no VMI, no import pod or PVC, no power-on held, cd0
// ejected.
func (n *node) undeployLeavesNothing(t *testing.T) {
	t.Helper()
	n.provision(t, "deleted", "available", nil)
	n.waitVMI(t, "VMI gone", func(vmi *unstructured.Unstructured) bool { return vmi == nil })
	if err := n.noMediaObjects(t.Context()); err != nil {
		t.Error(err)
	}
	if p := powerIntent(t, n.vm(t)); p.OnDeferred {
		t.Errorf("power-on held after undeploy: %+v", p)
	}
	if cd := n.redfish(t, n.cdPath()); cd["Inserted"] != false {
		t.Errorf("after undeploy cd0 Inserted %v, want false", cd["Inserted"])
	}
}

// cdPath is the node's cd0 VirtualMedia resource.
func (n *node) cdPath() string {
	return "/redfish/v1/Systems/" + n.key.ID() + "/VirtualMedia/" + media.DefaultSlot
}

// noMediaObjects is an error naming what the node's cd0 import left (its
// pod, its PVC), nil when nothing.
func (n *node) noMediaObjects(ctx context.Context) error {
	left, err := vmcheck.MediaObjects(ctx, n.kube, n.key, media.DefaultSlot)
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return errors.New("left behind: " + strings.Join(left, ", "))
	}
	return nil
}

// neverBootedCD fails t if the VM's VMI, when it has one, has the cd0
// volume: the failed image must never boot.
func (n *node) neverBootedCD(t *testing.T) {
	t.Helper()
	vmi := n.vmi(t)
	if vmi == nil {
		return
	}
	spec, _, _ := unstructured.NestedMap(vmi.Object, "spec")
	if claim, ok := vmcheck.Volumes(spec)[apply.DiskName(media.DefaultSlot)]; ok {
		t.Errorf("VMI %s has the CD volume (claim %q) of the failed import", vmi.GetUID(), claim)
	}
}
