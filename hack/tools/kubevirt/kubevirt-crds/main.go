// Command kubevirt-crds writes the CustomResourceDefinitions virt-operator
// v1.9.0 installs, other than VirtualMachine and VirtualMachineInstance
// (crds/stock and crds/maplist hold those), one YAML file each, into the
// directory given as its only argument. virt-controller watches these
// resources and does not start without them. It prints them with
// virt-operator's own generator (pkg/virt-operator/resource/generate/components).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"kubevirt.io/kubevirt/pkg/virt-operator/resource/generate/components"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kubevirt-crds DIR")
		os.Exit(2)
	}
	if err := write(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "kubevirt-crds:", err)
		os.Exit(1)
	}
}

func write(dir string) error {
	makers := []func() (*extv1.CustomResourceDefinition, error){
		components.NewKubeVirtCrd,
		components.NewPresetCrd,
		components.NewReplicaSetCrd,
		components.NewVirtualMachineInstanceMigrationCrd,
		components.NewVirtualMachinePoolCrd,
		components.NewVirtualMachineSnapshotCrd,
		components.NewVirtualMachineSnapshotContentCrd,
		components.NewVirtualMachineRestoreCrd,
		components.NewVirtualMachineExportCrd,
		components.NewVirtualMachineBackupCrd,
		components.NewVirtualMachineBackupTrackerCrd,
		components.NewVirtualMachineInstancetypeCrd,
		components.NewVirtualMachineClusterInstancetypeCrd,
		components.NewVirtualMachinePreferenceCrd,
		components.NewVirtualMachineClusterPreferenceCrd,
		components.NewMigrationPolicyCrd,
		components.NewVirtualMachineCloneCrd,
		components.NewPluginCrd,
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	for _, newCRD := range makers {
		crd, err := newCRD()
		if err != nil {
			return fmt.Errorf("generate CRD: %w", err)
		}
		crd.TypeMeta.APIVersion = "apiextensions.k8s.io/v1"
		crd.TypeMeta.Kind = "CustomResourceDefinition"
		crd.Status = extv1.CustomResourceDefinitionStatus{}
		b, err := yaml.Marshal(crd)
		if err != nil {
			return fmt.Errorf("marshal %s: %w", crd.Name, err)
		}
		path := filepath.Join(dir, crd.Name+".yaml")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	return nil
}
