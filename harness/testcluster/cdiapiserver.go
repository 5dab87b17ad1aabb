package testcluster

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	cdiv1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/redfish-bridge/redfish-bridge/crds"
)

// CDI v1.66.0 as the test cluster runs it ([Cluster.RunCDIAPIServer]):
// its own programs built from source (hack/cdi.sh), out of cluster, each
// in a network namespace of its own (netns_linux.go), in [CDINamespace],
// with what CDI's operator installs (harness/testcluster/cdi, `make
// generate-cdi`).
const (
	// CDINamespace is where the test cluster "installs" CDI.
	CDINamespace        = "cdi"
	cdiAPIServerBinary  = "cdi-apiserver"
	cdiControllerBinary = "cdi-controller"
	// cdiPort is the port both CDI programs listen on, fixed in their code.
	cdiPort = 8443
	// CDIWebhookDataVolume names cdi-apiserver's DataVolume validating
	// webhook; its denials read `admission webhook
	// "datavolume-validate.cdi.kubevirt.io" denied the request: <message>`.
	CDIWebhookDataVolume = "datavolume-validate.cdi.kubevirt.io"
)

// cdiFiles are what CDI's operator installs for cdi-apiserver and
// cdi-controller (webhook configurations naming the Service cdi-api,
// which registerCDIWebhooks replaces by the relay's URL; RBAC;
// Deployments).
//
//go:embed cdi/*.yaml
var cdiFiles embed.FS

// RunCDIAPIServer installs CDI's own CRDs ([crds.LoadCDI]) and runs CDI's
// cdi-apiserver (bin/cdi-apiserver) with its DataVolume admission webhooks
// registered as CDI's operator registers them, and waits until they deny
// a DataVolume without a source. It needs root (the network namespace)
// and a cluster started with [Options.VirtAPI]: cdi-apiserver reads the
// aggregator's request-header CA (kube-system/extension-apiserver-authentication,
// published only by an aggregating kube-apiserver) and panics without it.
func (c *Cluster) RunCDIAPIServer(ctx context.Context) error {
	if !c.virtAPI {
		return errors.New("run cdi-apiserver: the cluster needs Options.VirtAPI (an aggregating kube-apiserver, whose request-header CA cdi-apiserver reads)")
	}
	if _, err := c.prepareCDI(ctx, cdiAPIServerBinary); err != nil {
		return fmt.Errorf("run cdi-apiserver: %w", err)
	}
	tlsFiles, err := c.selfSignedTLS(cdiAPIServerBinary, "cdi-api."+CDINamespace+".svc")
	if err != nil {
		return err
	}
	np, err := startInNetNS(cdiAPIServerBinary, c.binDir+"/"+cdiAPIServerBinary,
		[]string{"--kubeconfig=" + c.Kubeconfig, "-v=1"},
		[]string{"CERT_FILE=" + tlsFiles.certFile, "KEY_FILE=" + tlsFiles.keyFile},
		c.Dir, []int{c.apiserverPort()}, nil)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.cdiProcs = append(c.cdiProcs, np.process)
	c.mu.Unlock()
	addr, err := np.exposeOn("127.0.0.1", cdiPort)
	if err != nil {
		return err
	}
	healthz := "https://" + addr + "/healthz"
	if err := waitNetNSReady(ctx, np, "cdi-apiserver to answer", func(ctx context.Context) error {
		return httpOKWith(ctx, tlsFiles.client, healthz)
	}); err != nil {
		return err
	}
	if err := c.registerCDIWebhooks(ctx, "https://"+addr, tlsFiles.certPEM); err != nil {
		return err
	}
	return waitNetNSReady(ctx, np, "cdi-apiserver's DataVolume webhook enforced", func(ctx context.Context) error {
		return c.cdiRejectsSourceless(ctx)
	})
}

// installCDICRDs installs every CRD CDI's operator installs.
func (c *Cluster) installCDICRDs(ctx context.Context) error {
	list, err := crds.LoadCDI()
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
	for _, crd := range list {
		if err := installCRD(ctx, cs, disc, crd); err != nil {
			return err
		}
	}
	return nil
}

// registerCDIWebhooks applies CDI's webhook configurations with
// clientConfig url base+<path> and caBundle caPEM.
func (c *Cluster) registerCDIWebhooks(ctx context.Context, base string, caPEM []byte) error {
	dyn, err := dynamic.NewForConfig(c.Admin)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	names, err := fs.Glob(cdiFiles, "cdi/*webhookconfiguration-*.yaml")
	if err != nil || len(names) == 0 {
		return fmt.Errorf("no CDI webhook configurations embedded (run make generate-cdi): %w", err)
	}
	for _, name := range names {
		data, err := cdiFiles.ReadFile(name)
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		var obj any
		var ccs []*admissionregistrationv1.WebhookClientConfig
		resource := "validatingwebhookconfigurations"
		if strings.HasPrefix(path.Base(name), "mutating") {
			resource = "mutatingwebhookconfigurations"
			m := &admissionregistrationv1.MutatingWebhookConfiguration{}
			if err := yaml.UnmarshalStrict(data, m); err != nil {
				return fmt.Errorf("decode %s: %w", name, err)
			}
			for i := range m.Webhooks {
				ccs = append(ccs, &m.Webhooks[i].ClientConfig)
			}
			obj = m
		} else {
			v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			if err := yaml.UnmarshalStrict(data, v); err != nil {
				return fmt.Errorf("decode %s: %w", name, err)
			}
			for i := range v.Webhooks {
				ccs = append(ccs, &v.Webhooks[i].ClientConfig)
			}
			obj = v
		}
		for _, cc := range ccs {
			if cc.Service == nil || cc.Service.Path == nil {
				return fmt.Errorf("%s: a CDI webhook without a service path", name)
			}
			url := base + *cc.Service.Path
			cc.URL, cc.Service, cc.CABundle = &url, nil, caPEM
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return fmt.Errorf("convert %s: %w", name, err)
		}
		body := &unstructured.Unstructured{Object: u}
		gvr := admissionregistrationv1.SchemeGroupVersion.WithResource(resource)
		if _, err := dyn.Resource(gvr).Apply(ctx, body.GetName(), body, metav1.ApplyOptions{FieldManager: "testcluster", Force: true}); err != nil {
			return fmt.Errorf("register CDI webhook configuration %s: %w", body.GetName(), err)
		}
	}
	return nil
}

// cdiDataVolumes is CDI's DataVolume resource, for the probe below
// (media/cdiimport, which spells it for the bridge, imports this package
// in its tests).
var cdiDataVolumes = cdiv1beta1.SchemeGroupVersion.WithResource("datavolumes")

// cdiRejectsSourceless dry-runs the creation of a DataVolume without a
// source and succeeds when CDI's webhook denies it.
func (c *Cluster) cdiRejectsSourceless(ctx context.Context) error {
	dyn, err := dynamic.NewForConfig(c.Admin)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	dv := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
		"metadata": map[string]any{"name": "testcluster-probe", "namespace": CDINamespace},
		"spec":     map[string]any{"storage": map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": "1Mi"}}}},
	}}
	_, err = dyn.Resource(cdiDataVolumes).Namespace(CDINamespace).Create(ctx, dv, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err == nil {
		return errors.New("a DataVolume without a source was admitted")
	}
	if !strings.Contains(err.Error(), `admission webhook "`+CDIWebhookDataVolume+`" denied`) {
		return err
	}
	return nil
}

// apiserverPort is the port of kube-apiserver's loopback address.
func (c *Cluster) apiserverPort() int {
	u, err := url.Parse(c.Admin.Host)
	if err != nil {
		return 0
	}
	port, _ := strconv.Atoi(u.Port())
	return port
}

// waitNetNSReady is waitProcess for a netnsProcess.
func waitNetNSReady(ctx context.Context, np *netnsProcess, what string, check func(ctx context.Context) error) error {
	return waitProcess(ctx, np.process, what, check)
}

// ErrNoCDI is returned by [Start] with [Options.CDI] where CDI's programs
// cannot run (no root, not Linux): a test skips on it.
var ErrNoCDI = errors.New("CDI's programs need their own namespaces")

// errNoNetNS is returned where network namespaces cannot be made.
var errNoNetNS = errors.New("a network namespace of its own needs Linux and root (CAP_SYS_ADMIN)")
