package vmcheck

import (
	"testing"

	"k8s.io/client-go/dynamic"

	"github.com/redfish-bridge/redfish-bridge/fields"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// CheckFields runs `fields --check` on the VM: no deviation from the
// ownership table, and the list mode read from the CRD installed.
func CheckFields(t testing.TB, dyn dynamic.Interface, key system.Key) {
	t.Helper()
	r, err := fields.Load(t.Context(), dyn, key.Namespace, key.Name, "auto")
	if err != nil {
		t.Fatalf("fields %s: %v", key, err)
	}
	if len(r.Deviations) > 0 || r.ModeSource != "crd" {
		t.Errorf("fields --check %s (mode %s from %s): deviations %+v", key, r.Mode, r.ModeSource, r.Deviations)
	}
}
