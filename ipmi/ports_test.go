package ipmi

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestPorts: a System is served on the port its annotation names when in
// range; of two naming one port the first by namespace/name has it (every
// replica decides alike), and the refusals are reported.
func TestPorts(t *testing.T) {
	k := func(ns, name string) system.Key { return system.Key{Namespace: ns, Name: name} }
	got, err := Ports(map[system.Key]string{
		k("b", "vm1"): "6230",
		k("a", "vm9"): "6230",
		k("a", "vm2"): "6231",
		k("a", "vm3"): "99",
		k("a", "vm4"): "x",
	}, Config{FirstPort: 6230, LastPort: 6239})
	want := map[int]system.Key{6230: k("a", "vm9"), 6231: k("a", "vm2")}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ports (-want +got):\n%s", d)
	}
	for _, s := range []string{`b/vm1: port 6230 is a/vm9's`, `a/vm3: redfish-bridge.io/ipmi-port "99" is not a port in 6230-6239`, `a/vm4`} {
		if err == nil || !strings.Contains(err.Error(), s) {
			t.Errorf("error %v, want it to say %q", err, s)
		}
	}
}
