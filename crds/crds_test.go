package crds_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// TestLoadControllerDeps: every CRD virt-operator installs besides VM and
// VMI, among them the KubeVirt CR virt-controller reads its configuration
// from.
func TestLoadControllerDeps(t *testing.T) {
	list, err := crds.LoadControllerDeps()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, crd := range list {
		names[crd.Name] = true
	}
	for _, want := range []string{"kubevirts.kubevirt.io", "virtualmachineinstancemigrations.kubevirt.io", "virtualmachinesnapshots.snapshot.kubevirt.io", "virtualmachineinstancetypes.instancetype.kubevirt.io"} {
		if !names[want] {
			t.Errorf("no CRD %s in %v", want, names)
		}
	}
	for _, own := range []string{"virtualmachines.kubevirt.io", "virtualmachineinstances.kubevirt.io"} {
		if names[own] {
			t.Errorf("CRD %s belongs to the variants, not to LoadControllerDeps", own)
		}
	}
}

func TestLoad(t *testing.T) {
	for _, v := range crds.Variants {
		t.Run(string(v), func(t *testing.T) {
			list, err := crds.Load(v)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, crd := range list {
				names = append(names, crd.Name)
			}
			want := []string{"virtualmachineinstances.kubevirt.io", "virtualmachines.kubevirt.io"}
			if diff := cmp.Diff(want, names); diff != "" {
				t.Errorf("CRD names (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("unknown", func(t *testing.T) {
		if _, err := crds.Load("atomic"); err == nil {
			t.Error("Load(\"atomic\") succeeded, want an error")
		}
	})
}

// TestStockMatchesOperator compares the stock variant with the CRDs
// virt-operator v1.9.0 installs, kept in <module root>/../shared/kubevirt-crds.
func TestStockMatchesOperator(t *testing.T) {
	dir := testutil.SharedDir(t, "kubevirt-crds")
	list, err := crds.Load(crds.Stock)
	if err != nil {
		t.Fatal(err)
	}
	for _, got := range list {
		t.Run(got.Name, func(t *testing.T) {
			want := readCRD(t, filepath.Join(dir, got.Name+".crd.yaml"))
			if diff := cmp.Diff(fieldPaths(want), fieldPaths(got)); diff != "" {
				t.Errorf("field paths and list types (-operator +stock):\n%s", diff)
			}
			// Beyond paths: names, printer columns, subresources, versions,
			// schemas down to descriptions.
			if diff := cmp.Diff(want.Spec, got.Spec); diff != "" {
				t.Errorf("spec (-operator +stock):\n%s", diff)
			}
			if diff := cmp.Diff(want.Labels, got.Labels); diff != "" {
				t.Errorf("labels (-operator +stock):\n%s", diff)
			}
		})
	}
}

// TestMapListOnlyKeysLists checks that the maplist variant differs from the
// stock one exactly in the four lists being list-type map keyed by name.
func TestMapListOnlyKeysLists(t *testing.T) {
	stock, err := crds.Load(crds.Stock)
	if err != nil {
		t.Fatal(err)
	}
	maplist, err := crds.Load(crds.MapList)
	if err != nil {
		t.Fatal(err)
	}
	prefix := map[string]string{
		"virtualmachines.kubevirt.io":         ".spec.template.spec",
		"virtualmachineinstances.kubevirt.io": ".spec",
	}
	for i := range stock {
		name := stock[i].Name
		t.Run(name, func(t *testing.T) {
			want := fieldPaths(stock[i])
			for _, v := range []string{"v1", "v1alpha3"} {
				for _, l := range []string{".domain.devices.disks", ".domain.devices.interfaces", ".volumes", ".networks"} {
					p := v + " " + prefix[name] + l
					if !strings.HasPrefix(want[p], "array list=- ") {
						t.Fatalf("stock %s = %q, want an array without list type", p, want[p])
					}
					want[p] = "array list=map keys=[name]"
					if want[p+"[].name"] != "string required" {
						t.Errorf("stock %s[].name = %q, want a required string", p, want[p+"[].name"])
					}
				}
			}
			if diff := cmp.Diff(want, fieldPaths(maplist[i])); diff != "" {
				t.Errorf("maplist vs stock with the four lists keyed (-want +got):\n%s", diff)
			}
		})
	}
}

// fieldPaths maps "<version> <path>" of every schema node to its type, list
// type, map keys and whether the parent requires it.
func fieldPaths(crd *apiextensionsv1.CustomResourceDefinition) map[string]string {
	out := map[string]string{}
	var walk func(path string, s *apiextensionsv1.JSONSchemaProps, required bool)
	walk = func(path string, s *apiextensionsv1.JSONSchemaProps, required bool) {
		desc := s.Type
		if s.Type == "array" {
			lt := "-"
			if s.XListType != nil {
				lt = *s.XListType
			}
			desc += " list=" + lt + " keys=" + "[" + strings.Join(s.XListMapKeys, ",") + "]"
		}
		if required {
			desc += " required"
		}
		out[path] = desc
		for name, p := range s.Properties {
			walk(path+"."+name, &p, contains(s.Required, name))
		}
		if s.Items != nil && s.Items.Schema != nil {
			walk(path+"[]", s.Items.Schema, false)
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			walk(path+"{}", s.AdditionalProperties.Schema, false)
		}
	}
	for _, v := range crd.Spec.Versions {
		walk(v.Name+" ", v.Schema.OpenAPIV3Schema, false)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func readCRD(t *testing.T, path string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return crd
}

// TestLoadCDI: the CRDs CDI's operator installs, among them the five the
// test cluster's fixtures stand for.
func TestLoadCDI(t *testing.T) {
	list, err := crds.LoadCDI()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, crd := range list {
		if crd.Spec.Group != "cdi.kubevirt.io" && !strings.HasSuffix(crd.Spec.Group, ".kubevirt.io") {
			t.Errorf("CRD %s is in group %s", crd.Name, crd.Spec.Group)
		}
		names[crd.Name] = true
	}
	for _, want := range []string{"datavolumes.cdi.kubevirt.io", "cdis.cdi.kubevirt.io", "cdiconfigs.cdi.kubevirt.io",
		"storageprofiles.cdi.kubevirt.io", "datasources.cdi.kubevirt.io", "volumeclonesources.cdi.kubevirt.io"} {
		if !names[want] {
			t.Errorf("no CRD %s in %v", want, names)
		}
	}
}

// TestDataVolumeFixtureMatchesCDI: every field of the DataVolume test
// fixture is a field of CDI's own DataVolume CRD, of the same type, so the
// fixture spells nothing CDI would prune or reject. Control: a field CDI
// does not have, added to a copy of the fixture, is reported.
func TestDataVolumeFixtureMatchesCDI(t *testing.T) {
	fixture, err := crds.DataVolumeFixture()
	if err != nil {
		t.Fatal(err)
	}
	list, err := crds.LoadCDI()
	if err != nil {
		t.Fatal(err)
	}
	var cdi *apiextensionsv1.CustomResourceDefinition
	for _, crd := range list {
		if crd.Name == fixture.Name {
			cdi = crd
		}
	}
	if cdi == nil {
		t.Fatalf("CDI installs no %s", fixture.Name)
	}
	for _, m := range notInCDI(fixture, cdi) {
		t.Error(m)
	}
	t.Run("control", func(t *testing.T) {
		bad := fixture.DeepCopy()
		spec := bad.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
		spec.Properties["importFrom"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
		bad.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
		got := notInCDI(bad, cdi)
		want := []string{`fixture field "v1beta1 .spec.importFrom" is not in CDI's DataVolume CRD`}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("mismatches (-want +got):\n%s", diff)
		}
	})
}

// notInCDI lists the fields of fixture that cdi lacks or types otherwise.
func notInCDI(fixture, cdi *apiextensionsv1.CustomResourceDefinition) []string {
	var out []string
	real := fieldPaths(cdi)
	for path, desc := range fieldPaths(fixture) {
		got, ok := real[path]
		if !ok {
			out = append(out, fmt.Sprintf("fixture field %q is not in CDI's DataVolume CRD", path))
			continue
		}
		if typ, realTyp := strings.Fields(desc), strings.Fields(got); len(typ) > 0 && len(realTyp) > 0 && typ[0] != realTyp[0] {
			out = append(out, fmt.Sprintf("fixture field %q is %s, CDI's is %s", path, desc, got))
		}
	}
	sort.Strings(out)
	return out
}
