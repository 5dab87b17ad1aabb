package ironic

import (
	"fmt"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/sim"
)

// inspectScenario runs Ironic's out-of-band (redfish) inspection: the
// node's memory, CPUs, architecture and disk from the sample VM's spec
// (4 GiB, 1x2x1 vCPUs, a 20 GiB root disk), its boot mode capability,
// and one port per MAC.
func inspectScenario(t *testing.T, s *suite, v crds.Variant) {
	n := s.enroll(t, v, vmInspect, "ramdisk", nil)
	n.step(t, "manage", func() { n.provision(t, "manage", "manageable", nil) })
	n.step(t, "inspect", func() {
		got := n.provision(t, "inspect", "manageable", nil)
		if le := str(got.LastError); le != "" {
			t.Errorf("inspection error: %s", le)
		}
		want := map[string]string{
			"memory_mb": "4096",
			"cpus":      "2",
			"cpu_arch":  "x86_64",
			// Ironic keeps 1 GiB back for partitioning.
			"local_gb":     "19",
			"capabilities": "boot_mode:uefi",
		}
		for k, w := range want {
			if g := fmt.Sprint(got.Properties[k]); g != w {
				t.Errorf("inspected %s = %q, want %q (properties %v)", k, g, w, got.Properties)
			}
		}
		ports, err := s.api.Ports(t.Context(), n.uuid)
		if err != nil {
			t.Fatalf("ports: %v", err)
		}
		mac := sim.MAC(n.key.Namespace, n.key.Name, "default")
		if len(ports) != 1 || ports[0].Address != mac {
			t.Errorf("ports %+v, want one with the VM's MAC %s", ports, mac)
		}
	})
	n.step(t, "inspect again (ports not duplicated)", func() {
		n.provision(t, "inspect", "manageable", nil)
		if ports, err := s.api.Ports(t.Context(), n.uuid); err != nil || len(ports) != 1 {
			t.Errorf("ports after a second inspection: %+v (%v), want the one", ports, err)
		}
	})
	if vmi := n.vmi(t); vmi != nil {
		t.Errorf("out-of-band inspection started the VM (VMI %s)", vmi.GetUID())
	}
	n.checkFields(t)
}
