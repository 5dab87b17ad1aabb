package testcluster

import (
	"context"
	"fmt"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"

	"github.com/redfish-bridge/redfish-bridge/crds"
)

// InstallCDI installs the DataVolume CRD test fixture
// ([crds.DataVolumeFixture]), so the cluster looks like one with CDI, and
// waits until discovery serves cdi.kubevirt.io/v1beta1 datavolumes. The
// simulator plays CDI's DataVolume controller. The other CDI CRDs
// virt-controller watches once the DataVolume API is served
// ([crds.CDIWatchedFixtures]) are installed first: virt-controller starts
// again when the DataVolume CRD appears, and without them it would sync no
// VM from then on.
func (c *Cluster) InstallCDI(ctx context.Context) error {
	watched, err := crds.CDIWatchedFixtures()
	if err != nil {
		return err
	}
	dv, err := crds.DataVolumeFixture()
	if err != nil {
		return err
	}
	cs, err := apiextensionsclient.NewForConfig(c.Admin)
	if err != nil {
		return fmt.Errorf("apiextensions client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(c.Admin)
	if err != nil {
		return fmt.Errorf("discovery client: %w", err)
	}
	for _, crd := range append(watched, dv) {
		if err := installCRD(ctx, cs, disc, crd); err != nil {
			return err
		}
	}
	return nil
}

// installCRD creates crd (unless it exists) and waits until it is established and discovery
// serves it.
func installCRD(ctx context.Context, cs apiextensionsclient.Interface, disc discovery.DiscoveryInterface, crd *apiextensionsv1.CustomResourceDefinition) error {
	api := cs.ApiextensionsV1().CustomResourceDefinitions()
	if _, err := api.Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create CRD %s: %w", crd.Name, err)
	}
	err := poll(ctx, "CRD "+crd.Name+" established", func(ctx context.Context) (bool, error) {
		got, err := api.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return slices.ContainsFunc(got.Status.Conditions, func(c apiextensionsv1.CustomResourceDefinitionCondition) bool {
			return c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue
		}), nil
	})
	if err != nil {
		return err
	}
	gv := crd.Spec.Group + "/" + crd.Spec.Versions[0].Name
	return poll(ctx, "discovery of "+crd.Name, func(context.Context) (bool, error) {
		res, err := disc.ServerResourcesForGroupVersion(gv)
		if err != nil {
			return false, nil // not served yet
		}
		return slices.ContainsFunc(res.APIResources, func(r metav1.APIResource) bool { return r.Name == crd.Spec.Names.Plural }), nil
	})
}
