package ironic

import (
	"context"
	"net/http"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/ironicproc"
)

// powerScenario: enroll -> manage, power on, reboot, the conductor's
// power-state sync after the guest powers itself off (it powers the node
// back on; in maintenance it leaves it alone until maintenance ends),
// power off. Reboot and power off must each have forced a stop through
// virt-api (Ironic sends ForceOff for both). The maintenance step runs on
// the first variant only: it proves that Ironic's sync skips a node in
// maintenance and that the bridge powers nothing by itself, where no VM is
// written and the CRD variant changes nothing; it waits out two whole
// sync cycles (2-3.5 min per node on a loaded machine).
func powerScenario(t *testing.T, s *suite, v crds.Variant) {
	n := s.enroll(t, v, vmPower, "ramdisk", nil)
	// The clock: a manageable node, never in maintenance, whose System the
	// conductor's power sync reads every cycle (clock.syncCycles).
	var clock *node
	if v == crds.Variants[0] {
		clock = s.enroll(t, v, vmPowerClock, "ramdisk", nil)
		clock.step(t, "manage the clock node", func() { clock.provision(t, "manage", "manageable", nil) })
	}
	n.step(t, "manage", func() {
		got := n.provision(t, "manage", "manageable", nil)
		if p := str(got.PowerState); p != "power off" {
			t.Errorf("managed node power %q, want power off (the sample VM is Halted)", p)
		}
	})
	if s.is39() {
		n.step(t, "health from the System's Status.Health (API 1.109)", func() {
			n.wait(t, "node health OK", func(x ironicproc.Node) bool { return str(x.Health) == "OK" })
		})
	}
	var first *unstructured.Unstructured
	n.step(t, "power on", func() {
		n.power(t, "power on", "power on")
		first = n.waitVMI(t, "VMI Running after power on", running)
	})
	n.step(t, "reboot", func() {
		ons := len(n.rec.matching(http.MethodPost, n.key.ID()+"/Actions/ComputerSystem.Reset", `"On"`))
		n.expectForced(t, func() { n.power(t, "rebooting", "power on") })
		n.retriedOn(t, ons)
		n.waitVMI(t, "a new VMI Running after reboot", func(vmi *unstructured.Unstructured) bool {
			return running(vmi) && vmi.GetUID() != first.GetUID()
		})
	})
	n.step(t, "power sync: the guest powers off, the conductor powers it back on", func() {
		before := n.waitVMI(t, "VMI Running", running)
		resets := n.rec.count(http.MethodPost, n.key.ID()+"/Actions/ComputerSystem.Reset")
		if err := n.env.Sim.GuestShutdown(t.Context(), n.key); err != nil {
			t.Fatal(err)
		}
		n.waitVMI(t, "a new VMI Running (Ironic restored power)", func(vmi *unstructured.Unstructured) bool {
			return running(vmi) && vmi.GetUID() != before.GetUID()
		})
		if got := n.rec.count(http.MethodPost, n.key.ID()+"/Actions/ComputerSystem.Reset"); got <= resets {
			t.Errorf("VMI restarted without a Reset from Ironic (%d resets before, %d after)", resets, got)
		}
		got := n.get(t)
		if str(got.PowerState) != "power on" || got.Maintenance || str(got.LastError) != "" {
			t.Errorf("after the sync restored power: %s", got.Summary())
		}
	})
	if clock != nil {
		n.step(t, "maintenance: the conductor leaves an off guest alone, then restores it", func() {
			if err := s.api.SetMaintenance(t.Context(), n.uuid, true, "out-of-band test"); err != nil {
				t.Fatal(err)
			}
			resets := n.rec.count(http.MethodPost, n.key.ID()+"/Actions/ComputerSystem.Reset")
			if err := n.env.Sim.GuestShutdown(t.Context(), n.key); err != nil {
				t.Fatal(err)
			}
			off := n.waitVMI(t, "VMI stopped", func(vmi *unstructured.Unstructured) bool { return !running(vmi) })
			// Two whole power-sync cycles after the guest went off, counted on
			// the clock node: Ironic skips nodes in maintenance (out of it, the
			// first cycle that reads the node off powers it on).
			clock.syncCycles(t, 2)
			if vmi := n.vmi(t); running(vmi) || n.rec.count(http.MethodPost, n.key.ID()+"/Actions/ComputerSystem.Reset") != resets {
				t.Errorf("Ironic powered a node in maintenance (VMI %v)", vmi != nil && running(vmi))
			}
			if err := s.api.SetMaintenance(t.Context(), n.uuid, false, ""); err != nil {
				t.Fatal(err)
			}
			n.waitVMI(t, "a new VMI Running (sync after maintenance)", func(vmi *unstructured.Unstructured) bool {
				return running(vmi) && (off == nil || vmi.GetUID() != off.GetUID())
			})
		})
	}
	if s.is39() {
		n.step(t, "soft power off, then power on: refused with 409 while the guest stops, retried by Ironic", func() { softOffThenOn(t, n) })
	}
	n.step(t, "power off", func() {
		n.expectForced(t, func() { n.power(t, "power off", "power off") })
		n.waitVMI(t, "VMI gone after power off", func(vmi *unstructured.Unstructured) bool { return vmi == nil })
	})
	n.checkFields(t)
}

// syncCycles waits until the conductor's power sync has run n whole
// cycles after the call, counted by its reads of n's System: a cycle
// starts only once the previous one ended, so of the bursts of reads after
// the call the first may belong to a cycle under way and the next n are
// whole cycles'; the clock is Ironic's own work, not a time window.
func (n *node) syncCycles(t *testing.T, cycles int) {
	t.Helper()
	since, path := time.Now(), "/redfish/v1/Systems/"+n.key.ID()
	ctx, cancel := context.WithTimeout(t.Context(), stepTimeout)
	defer cancel()
	for n.rec.readBursts(path, since, syncInterval/2) < cycles+1 {
		select {
		case <-ctx.Done():
			t.Fatalf("the conductor read %s in %d bursts in %v, want %d", path, n.rec.readBursts(path, since, syncInterval/2), stepTimeout, cycles+1)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// retriedOn checks the Reset On requests after the first skip of them: the
// last must be accepted. After a forced stop the bridge accepts an On at
// once (measured: [204]); one it refused with 409 (a stop still under way)
// must be followed by one it accepted (Ironic 39 retries on 409
// ActionParameterValueConflict; 21.4 fails the reboot, which n.power
// already reports).
func (n *node) retriedOn(t *testing.T, skip int) {
	t.Helper()
	ons := n.rec.matching(http.MethodPost, n.key.ID()+"/Actions/ComputerSystem.Reset", `"On"`)[skip:]
	var statuses []int
	for _, e := range ons {
		statuses = append(statuses, e.status)
	}
	t.Logf("Ironic %s reboot of %s: Reset On answered %v", n.s.release.Name, n.key, statuses)
	if len(statuses) == 0 || statuses[len(statuses)-1]/100 != 2 {
		t.Errorf("Ironic %s reboot: Reset On answered %v, want the last accepted", n.s.release.Name, statuses)
	}
}
