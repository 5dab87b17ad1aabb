package media

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/redfish-bridge/redfish-bridge/system"
)

func TestClaimName(t *testing.T) {
	long := strings.Repeat("a", 60)
	tests := []struct {
		name string
		key  system.Key
		slot string
		want string // "" = only check validity
	}{
		{"plain", system.Key{Namespace: "ns", Name: "node-1"}, "cd0", "node-1-media-cd0"},
		{"dotted name hashed", system.Key{Namespace: "ns", Name: "node.1"}, "cd0", ""},
		{"long name hashed", system.Key{Namespace: "ns", Name: long}, "cd0", ""},
		{"long subdomain", system.Key{Namespace: "ns", Name: strings.Repeat("a.b-", 60) + "z"}, "cd1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ClaimName(tt.key, tt.slot)
			if tt.want != "" && got != tt.want {
				t.Fatalf("ClaimName = %q, want %q", got, tt.want)
			}
			if errs := validation.IsDNS1123Label(got); len(errs) > 0 {
				t.Fatalf("ClaimName %q is not a DNS-1123 label: %v", got, errs)
			}
			if len(got) > maxClaimName {
				t.Fatalf("ClaimName %q has %d chars, want <= %d", got, len(got), maxClaimName)
			}
			pod := PodName(got, NewInsertID())
			if errs := validation.IsDNS1123Label(pod); len(errs) > 0 {
				t.Fatalf("PodName %q: %v", pod, errs)
			}
			if again := ClaimName(tt.key, tt.slot); again != got {
				t.Fatalf("not deterministic: %q then %q", got, again)
			}
		})
	}
	t.Run("distinct", func(t *testing.T) {
		keys := []system.Key{
			{Namespace: "a", Name: "node.1"}, {Namespace: "b", Name: "node.1"},
			{Namespace: "a", Name: "node-1"}, {Namespace: "a", Name: long}, {Namespace: "a", Name: long + "b"},
		}
		seen := map[string]system.Key{}
		for _, k := range keys {
			for _, slot := range []string{"cd0", "cd1"} {
				n := ClaimName(k, slot)
				if prev, dup := seen[n]; dup {
					t.Fatalf("%v and %v/%s share claim name %q", prev, k, slot, n)
				}
				seen[n] = k
			}
		}
	})
}

func TestValidSlot(t *testing.T) {
	for slot, want := range map[string]bool{"cd0": true, "cd": true, "": false, "Cd": false, "0cd": false, "cd-0": false, "cdrom1234": false} {
		if got := ValidSlot(slot); got != want {
			t.Errorf("ValidSlot(%q) = %v, want %v", slot, got, want)
		}
	}
}

func TestNewInsertID(t *testing.T) {
	a, b := NewInsertID(), NewInsertID()
	if a == b || len(a) != insertIDLength {
		t.Fatalf("NewInsertID gave %q and %q", a, b)
	}
}
