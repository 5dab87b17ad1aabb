package media

import (
	"context"
	"fmt"

	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/media/cdiimport"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/media/podimport"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// The import methods are packages implementing [importer.Importer], each
// registering itself ([importer.Register]) in its init: importing the
// package here is what makes a method available. A new method is one
// package plus its import here (a blank import will do; see
// docs/extending.md).

// Import methods (system.MediaSlot.Method, Options.ImportMethod).
const (
	ImportMethodAuto = "auto" // CDI where its DataVolume CRD is installed, else the pod
	ImportMethodPod  = podimport.Method
	ImportMethodCDI  = cdiimport.Method
)

// Importer is an import method (see [importer.Importer]).
type Importer = importer.Importer

// ImportMethods lists the registered import methods, most preferred first.
func ImportMethods() []string {
	regs := importer.Registered()
	out := make([]string, len(regs))
	for i, f := range regs {
		out[i] = f.Method
	}
	return out
}

// newEjectors builds every registered import method's [importer.Ejector]
// on kube: the slot being ejected may have been imported by any of them.
func newEjectors(kube kubernetes.Interface) []importer.Ejector {
	regs := importer.Registered()
	out := make([]importer.Ejector, len(regs))
	for i, f := range regs {
		out[i] = f.Ejector(kube)
	}
	return out
}

// newImporters builds the import methods the reconciler may use on d:
// every available one under [ImportMethodAuto], else the one named (an
// error when it is unknown or not available).
func newImporters(ctx context.Context, d importer.Deps, want string) ([]Importer, error) {
	var out []Importer
	for _, f := range importer.Registered() {
		if want != ImportMethodAuto && want != f.Method {
			continue
		}
		imp, ok, err := f.New(ctx, d)
		if err != nil {
			return nil, fmt.Errorf("import method %s: %w", f.Method, err)
		}
		if !ok {
			if want == f.Method {
				return nil, fmt.Errorf("import method %s is not available in this cluster", f.Method)
			}
			continue
		}
		out = append(out, imp)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("unknown import method %q (want %s or one of %v)", want, ImportMethodAuto, ImportMethods())
	}
	return out, nil
}

// importerFor picks the import method of the slot's insert: the one
// recorded on the slot, else the first that accepts it; nil and why when
// none can.
func (r *Reconciler) importerFor(slot system.MediaSlot) (Importer, string) {
	if slot.Method != "" {
		for _, imp := range r.importers {
			if imp.Method() == slot.Method {
				return imp, ""
			}
		}
		return nil, fmt.Sprintf("import method %s of this insert is not available", slot.Method)
	}
	var why []string
	for _, imp := range r.importers {
		no := imp.Refuses(slot)
		if no == "" {
			return imp, ""
		}
		why = append(why, imp.Method()+": "+no)
	}
	return nil, fmt.Sprintf("no import method can import this insert (%v)", why)
}
