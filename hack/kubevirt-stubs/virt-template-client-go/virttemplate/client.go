// Package virttemplate is a stub of kubevirt.io/virt-template-client-go's
// clientset: NewForConfig and a REST client for template.kubevirt.io/v1beta1.
// See hack/kubevirt-stubs.
package virttemplate

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

	"kubevirt.io/virt-template-api/core/v1beta1"
)

// Clientset holds the template.kubevirt.io/v1beta1 client.
type Clientset struct{ v1beta1 *TemplateV1beta1Client }

// TemplateV1beta1Client is the REST client of template.kubevirt.io/v1beta1.
type TemplateV1beta1Client struct{ rest rest.Interface }

// RESTClient returns the group's REST client.
func (c *TemplateV1beta1Client) RESTClient() rest.Interface { return c.rest }

// TemplateV1beta1 returns the template.kubevirt.io/v1beta1 client.
func (c *Clientset) TemplateV1beta1() *TemplateV1beta1Client { return c.v1beta1 }

// NewForConfig builds the clientset from a REST config.
func NewForConfig(c *rest.Config) (*Clientset, error) {
	config := rest.CopyConfig(c)
	scheme := runtime.NewScheme()
	scheme.AddKnownTypes(v1beta1.GroupVersion, &v1beta1.VirtualMachineTemplate{})
	gv := v1beta1.GroupVersion
	config.GroupVersion = &gv
	config.APIPath = "/apis"
	config.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	if config.UserAgent == "" {
		config.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	client, err := rest.RESTClientFor(config)
	if err != nil {
		return nil, fmt.Errorf("template.kubevirt.io/v1beta1 client: %w", err)
	}
	return &Clientset{v1beta1: &TemplateV1beta1Client{rest: client}}, nil
}
