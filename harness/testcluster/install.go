package testcluster

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"

	"github.com/redfish-bridge/redfish-bridge/crds"
)

// kubevirtGroupVersion is what the CRDs serve and the bridge uses.
const kubevirtGroupVersion = "kubevirt.io/v1"

// installCRDs creates the CRDs of variant v and waits until each is
// Established and discovery and OpenAPI v3 serve kubevirt.io/v1 with them.
func installCRDs(ctx context.Context, cs apiextensionsclient.Interface, disc discovery.DiscoveryInterface, v crds.Variant) error {
	list, err := crds.Load(v)
	if err != nil {
		return err
	}
	if err := createCRDs(ctx, cs, list); err != nil {
		return err
	}
	var plurals, kinds []string
	for _, crd := range list {
		plurals = append(plurals, crd.Spec.Names.Plural)
		kinds = append(kinds, crd.Spec.Names.Kind)
	}
	err = poll(ctx, "discovery of "+kubevirtGroupVersion, func(context.Context) (bool, error) {
		res, err := disc.ServerResourcesForGroupVersion(kubevirtGroupVersion)
		if err != nil {
			return false, err
		}
		for _, p := range plurals {
			if !slices.ContainsFunc(res.APIResources, func(r metav1.APIResource) bool { return r.Name == p }) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	return poll(ctx, "OpenAPI v3 of "+kubevirtGroupVersion, func(context.Context) (bool, error) {
		paths, err := disc.OpenAPIV3().Paths()
		if err != nil {
			return false, err
		}
		gv, ok := paths["apis/"+kubevirtGroupVersion]
		if !ok {
			return false, nil
		}
		doc, err := gv.Schema(runtime.ContentTypeJSON)
		if err != nil {
			return false, err
		}
		for _, k := range kinds {
			if !bytes.Contains(doc, []byte(`"io.kubevirt.v1.`+k+`"`)) {
				return false, nil
			}
		}
		return true, nil
	})
}

// createCRDs creates the CRDs and waits until each is Established.
func createCRDs(ctx context.Context, cs apiextensionsclient.Interface, list []*apiextensionsv1.CustomResourceDefinition) error {
	api := cs.ApiextensionsV1().CustomResourceDefinitions()
	for _, crd := range list {
		if _, err := api.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create CRD %s: %w", crd.Name, err)
		}
	}
	for _, crd := range list {
		name := crd.Name
		err := poll(ctx, "CRD "+name+" established", func(ctx context.Context) (bool, error) {
			got, err := api.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, c := range got.Status.Conditions {
				if c.Type == apiextensionsv1.NamesAccepted && c.Status == apiextensionsv1.ConditionFalse {
					return false, permanent(fmt.Errorf("CRD %s names not accepted: %s", name, c.Message))
				}
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
