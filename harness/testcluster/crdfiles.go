package testcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/yaml"
)

// InstallCRDFiles installs the CustomResourceDefinitions of the YAML files
// matching glob (one CRD a file, as controller-gen writes them, e.g.
// metal3's baremetal-operator's config/base/crds/bases/*.yaml) and waits
// until each is established and served by discovery.
func (c *Cluster) InstallCRDFiles(ctx context.Context, glob string) error {
	files, err := filepath.Glob(glob)
	if err != nil {
		return fmt.Errorf("CRD files %s: %w", glob, err)
	}
	if len(files) == 0 {
		return fmt.Errorf("no CRD files match %s", glob)
	}
	cs, err := apiextensionsclient.NewForConfig(c.Admin)
	if err != nil {
		return fmt.Errorf("apiextensions client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(c.Admin)
	if err != nil {
		return fmt.Errorf("discovery client: %w", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f) // the caller's CRD files
		if err != nil {
			return fmt.Errorf("read CRD: %w", err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(raw, crd); err != nil {
			return fmt.Errorf("decode CRD %s: %w", f, err)
		}
		if err := installCRD(ctx, cs, disc, crd); err != nil {
			return err
		}
	}
	return nil
}
