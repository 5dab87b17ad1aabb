package ironic

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
)

// inspectScenario runs Ironic's out-of-band (redfish) inspection: the
// node's memory, CPUs, architecture and disk from the sample VM's spec
// (4 GiB, 1x2x1 vCPUs, a 20 GiB root disk), its boot mode capability,
// and one port per MAC. Ironic 39's inspection is hook-based and leaves
// properties.cpus unset: its inventory (checkInventory) holds the CPUs,
// memory, NICs and disk.
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
		if s.is39() {
			delete(want, "cpus") // in the inventory instead
			checkInventory(t, n)
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

// checkInventory checks the inventory Ironic 39's inspection stored: the
// sample VM's 2 vCPUs (x86_64), 4 GiB, the MAC of its one NIC and its
// 20 GiB root disk.
func checkInventory(t *testing.T, n *node) {
	t.Helper()
	inv, err := n.s.api.NodeInventory(t.Context(), n.uuid)
	if err != nil {
		t.Fatalf("inventory: %v", err)
	}
	t.Logf("Ironic %s inventory of %s: %v", n.s.release.Name, n.key, inv.Inventory)
	got := map[string]any{}
	if cpu, ok := inv.Inventory["cpu"].(map[string]any); ok {
		got["cpu.count"] = cpu["count"]
		got["cpu.architecture"] = cpu["architecture"]
	}
	if mem, ok := inv.Inventory["memory"].(map[string]any); ok {
		got["memory.physical_mb"] = mem["physical_mb"]
	}
	var macs []any
	ifaces, _ := inv.Inventory["interfaces"].([]any)
	for _, i := range ifaces {
		if i, ok := i.(map[string]any); ok {
			macs = append(macs, i["mac_address"])
		}
	}
	got["interfaces.mac_address"] = macs
	var sizes []any
	disks, _ := inv.Inventory["disks"].([]any)
	for _, d := range disks {
		if d, ok := d.(map[string]any); ok {
			sizes = append(sizes, d["size"])
		}
	}
	got["disks.size"] = sizes
	want := map[string]any{
		"cpu.count":              2.0,
		"cpu.architecture":       "x86_64",
		"memory.physical_mb":     4096.0,
		"interfaces.mac_address": []any{sim.MAC(n.key.Namespace, n.key.Name, "default")},
		"disks.size":             []any{float64(20 << 30)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Ironic %s inventory of %s (-want +got):\n%s", n.s.release.Name, n.key, diff)
	}
}
