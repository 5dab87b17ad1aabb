package crds

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// Variant selects which generated CRD set to load.
type Variant string

// CRD variants; see the package documentation.
const (
	Stock   Variant = "stock"
	MapList Variant = "maplist"
)

// Variants lists every variant, for tests that run on each.
var Variants = []Variant{Stock, MapList}

//go:embed stock/*.yaml maplist/*.yaml kubevirt/*.yaml cdi/*.yaml
var files embed.FS

// controllerDir holds the CRDs virt-operator v1.9.0 installs besides
// VirtualMachine and VirtualMachineInstance (hack/tools/kubevirt/kubevirt-crds).
const controllerDir = "kubevirt"

// cdiDir holds the CRDs CDI v1.66.0's operator installs (`make
// generate-cdi`: hack/cdi.sh, from CDI's own operator code).
const cdiDir = "cdi"

// Load returns the CRDs of variant v, sorted by name.
func Load(v Variant) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	if v != Stock && v != MapList {
		return nil, fmt.Errorf("load CRDs: unknown variant %q (want %q or %q)", v, Stock, MapList)
	}
	return loadDir(string(v))
}

// LoadControllerDeps returns the CRDs virt-operator v1.9.0 installs besides
// VirtualMachine and VirtualMachineInstance (KubeVirt, migrations,
// snapshots, exports, pools, instancetypes...), sorted by name:
// virt-controller watches them all and does not start without them. They
// are the same for both variants.
func LoadControllerDeps() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return loadDir(controllerDir)
}

// LoadCDI returns the CRDs CDI v1.66.0's operator installs (DataVolume,
// CDI, CDIConfig, StorageProfile, DataSource, DataImportCron, the volume
// populator sources...), sorted by name, as CDI's own code prints them.
func LoadCDI() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return loadDir(cdiDir)
}

func loadDir(dir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	names, err := fs.Glob(files, path.Join(dir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("list %s CRDs: %w", dir, err)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("load %s CRDs: none embedded (run make generate-crds)", dir)
	}
	sort.Strings(names)
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(names))
	for _, name := range names {
		data, err := files.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", name, err)
		}
		out = append(out, crd)
	}
	return out, nil
}

//go:embed testfixture/*.yaml
var fixtures embed.FS

// DataVolumeFixture is a TEST FIXTURE standing for CDI: a minimal
// structural DataVolume CRD (cdi.kubevirt.io/v1beta1) with the fields the
// bridge uses, written for the test cluster (not CDI's own CRD).
func DataVolumeFixture() (*apiextensionsv1.CustomResourceDefinition, error) {
	return fixture("datavolumes")
}

// CDIWatchedFixtures are TEST FIXTURES: schemaless CRDs for the other CDI
// resources KubeVirt's virt-controller lists and watches once the
// DataVolume API is served (CDI, CDIConfig, StorageProfile, DataSource);
// without them it syncs no VM from then on.
func CDIWatchedFixtures() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, plural := range []string{"cdis", "cdiconfigs", "storageprofiles", "datasources"} {
		crd, err := fixture(plural)
		if err != nil {
			return nil, err
		}
		out = append(out, crd)
	}
	return out, nil
}

// fixture reads the test fixture CRD of a cdi.kubevirt.io resource.
func fixture(plural string) (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := fixtures.ReadFile("testfixture/" + plural + ".cdi.kubevirt.io.yaml")
	if err != nil {
		return nil, fmt.Errorf("read the %s fixture: %w", plural, err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		return nil, fmt.Errorf("decode the %s fixture: %w", plural, err)
	}
	return crd, nil
}
