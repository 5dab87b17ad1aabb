package system

import (
	"strings"
	"testing"
)

// FuzzParseID checks that ParseID never panics, that whatever it accepts
// round-trips through Key.ID byte for byte (so it accepts only what ID can
// produce), and that accepted ids carry nothing a path or a label selector
// could be tricked with.
func FuzzParseID(f *testing.F) {
	for _, seed := range []string{
		"default.vm1", "team-a.web-0", "ns.a.b.c", "a.b", "", ".", "ns.", ".name",
		"ns..name", "NS.vm", "ns.VM", "ns/vm", "../../etc.passwd", "ns.vm/../x",
		"ns.vm%2F..", "ns.-vm", "-ns.vm", "ns.vm-", "ns.vm.", "ns vm.x",
		strings.Repeat("a", 63) + ".b", strings.Repeat("a", 64) + ".b",
		"a." + strings.Repeat("b", 253), "a." + strings.Repeat("b", 254),
		"ns.vm\x00", "ns.vm\n", "ns.ñ", "ns.*", "ns.vm?x=1",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, id string) {
		key, err := ParseID(id)
		if err != nil {
			if key != (Key{}) {
				t.Fatalf("ParseID(%q) failed (%v) but returned %+v", id, err, key)
			}
			return
		}
		if got := key.ID(); got != id {
			t.Fatalf("ParseID(%q) = %+v, whose ID is %q", id, key, got)
		}
		if strings.Contains(key.Namespace, ".") {
			t.Fatalf("ParseID(%q): namespace %q contains a dot", id, key.Namespace)
		}
		if key.Namespace == "" || key.Name == "" || len(key.Namespace) > 63 || len(key.Name) > 253 {
			t.Fatalf("ParseID(%q) = %+v: empty or too long part", id, key)
		}
		if strings.ContainsFunc(id, func(r rune) bool {
			return (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' && r != '.'
		}) {
			t.Fatalf("ParseID(%q) accepted a character outside [a-z0-9.-]", id)
		}
		if strings.Contains(id, "..") {
			t.Fatalf("ParseID(%q) accepted \"..\"", id)
		}
		again, err := ParseID(key.ID())
		if err != nil || again != key {
			t.Fatalf("ParseID(ID(%+v)) = %+v, %v", key, again, err)
		}
	})
}
