// Command kubevirt-webhooks writes the admission webhook configurations
// virt-operator v1.9.0 installs for virt-api (the validating and the
// mutating one; not virt-operator's own, nor the virt-launcher pod mutator
// it installs only with the ContainerPathVolumes feature gate), one YAML
// file each, into the directory given as its only argument. They are
// printed by virt-operator's own generator
// (pkg/virt-operator/resource/generate/components) for the kubevirt
// namespace; their clientConfig names virt-api's Service, which the test
// cluster replaces by a loopback URL (testcluster/virtapi.go).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"kubevirt.io/kubevirt/pkg/virt-operator/resource/generate/components"
)

// namespace is where the test cluster "installs" KubeVirt.
const namespace = "kubevirt"

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kubevirt-webhooks DIR")
		os.Exit(2)
	}
	if err := write(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "kubevirt-webhooks:", err)
		os.Exit(1)
	}
}

func write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	validating := components.NewVirtAPIValidatingWebhookConfiguration(namespace)
	mutating := components.NewVirtAPIMutatingWebhookConfiguration(namespace)
	for name, obj := range map[string]any{
		validating.Name: validating,
		mutating.Name:   mutating,
	} {
		b, err := yaml.Marshal(obj)
		if err != nil {
			return fmt.Errorf("marshal %s: %w", name, err)
		}
		path := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	return nil
}
