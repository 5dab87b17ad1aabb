package importer

import (
	"context"
	"testing"

	"k8s.io/client-go/kubernetes"
)

// TestRegisterRefuses: a registration without a name, a factory or an
// ejector, or of a method already registered, panics at init rather than
// leaving a method Eject cannot reach.
func TestRegisterRefuses(t *testing.T) {
	newImp := func(context.Context, Deps) (Importer, bool, error) { return nil, false, nil }
	newEj := func(kubernetes.Interface) Ejector { return nil }
	for _, tc := range []struct {
		name string
		reg  Registration
	}{
		{"no method", Registration{New: newImp, Ejector: newEj}},
		{"no factory", Registration{Method: "x", Ejector: newEj}},
		{"no ejector", Registration{Method: "x", New: newImp}},
		{"twice", Registration{Method: "twice", New: newImp, Ejector: newEj}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved := registered
			t.Cleanup(func() { registered = saved })
			if tc.name == "twice" {
				Register(tc.reg)
			}
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%+v) did not panic", tc.reg)
				}
			}()
			Register(tc.reg)
		})
	}
}
