package testcluster

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// virt-api as the test cluster runs it ([Options.VirtAPI]): out of cluster,
// as its service account ([VirtAPIUser]), on a port of [Cluster.HostIP],
// serving KubeVirt's admission webhooks (registered by URL) and its
// aggregated API subresources.kubevirt.io (registered as virt-operator
// does, see aggregation.go).
const (
	virtAPIBinary = "virt-api"
	// VirtAPIWebhookVM names virt-api's VirtualMachine validating webhook;
	// its denials read `admission webhook "virtualmachine-validator.kubevirt.io"
	// denied the request: <message>`.
	VirtAPIWebhookVM = "virtualmachine-validator.kubevirt.io"
	// VirtAPIMutatorConfig names virt-api's mutating webhook
	// configuration (VirtualMachines, VMIs, migrations, clones).
	VirtAPIMutatorConfig = "virt-api-mutator"
)

// MsgVirtAPIDiskWithoutVolume is virt-api's denial of a VirtualMachine
// whose template has a disk (entry i of the disks list) without a volume
// of its name (KubeVirt v1.9 vms-admitter), after
// `admission webhook "virtualmachine-validator.kubevirt.io" denied the request: `.
func MsgVirtAPIDiskWithoutVolume(i int, name string) string {
	return fmt.Sprintf("spec.template.spec.domain.devices.disks[%d].Name '%s' not found.", i, name)
}

// webhookFiles are virt-api's webhook configurations as virt-operator
// v1.9.0 installs them (`make generate-webhooks`, from KubeVirt's own
// generator): clientConfig names the virt-api Service, which
// registerWebhooks replaces by a loopback URL.
//
//go:embed webhooks/virt-api-validator.yaml webhooks/virt-api-mutator.yaml
var webhookFiles embed.FS

// startVirtAPI starts virt-api on HostIP with a self-signed certificate
// (selfSignedTLS, also valid for its Service's name), waits until it
// answers, registers its webhooks and its aggregated API at its port, and
// waits until the webhooks reject a bad VirtualMachine and the APIService
// is Available. A restart (see supervise) registers the new port.
func (c *Cluster) startVirtAPI(ctx context.Context) error {
	tlsFiles, err := c.selfSignedTLS("virt-api", c.hostIP, virtAPIService+"."+KubeVirtNamespace+".svc")
	if err != nil {
		return err
	}
	p, ports, err := c.startWithPorts(ctx, virtAPIBinary, 1, func(ports []int) []string {
		return []string{
			"--kubeconfig=" + c.virtAPIKubeconfig,
			"--listen=" + c.hostIP,
			"--port=" + strconv.Itoa(ports[0]),
			"--tls-cert-file=" + tlsFiles.certFile,
			"--tls-key-file=" + tlsFiles.keyFile,
			// virt-api calls virt-handler (console, VNC) with this client
			// certificate, at this port (handlerpki.go; package sim
			// serves virt-handler's side).
			"--handler-cert-file=" + c.handlerPKI.clientCertFile,
			"--handler-key-file=" + c.handlerPKI.clientKeyFile,
			ConsoleServerPortFlag + "=" + strconv.Itoa(c.handlerPKI.port),
		}
	}, func(ctx context.Context, p *process, ports []int) error {
		healthz := "https://" + net.JoinHostPort(c.hostIP, strconv.Itoa(ports[0])) + "/healthz"
		return waitProcess(ctx, p, "virt-api to answer", func(ctx context.Context) error {
			return httpOKWith(ctx, tlsFiles.client, healthz)
		})
	})
	if err != nil {
		return err
	}
	if err := c.adopt(ctx, p, &c.virtAPIProc, c.startVirtAPI, &c.virtAPIRestarts); err != nil {
		return err
	}
	if err := c.registerWebhooks(ctx, ports[0], tlsFiles.certPEM); err != nil {
		return err
	}
	if err := c.registerAPIService(ctx, ports[0], tlsFiles.certPEM); err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(c.Admin)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	if err := c.waitRejected(ctx, dyn, "virt-api's webhooks enforced", VirtAPIWebhookVM); err != nil {
		return err
	}
	enforced := time.Now()
	if err := c.waitAPIServiceAvailable(ctx, p); err != nil {
		return err
	}
	c.log.DebugContext(ctx, "virt-api's APIService available", "afterWebhooks", time.Since(enforced).Round(time.Millisecond))
	return nil
}

// registerWebhooks applies (creates, or after a restart updates)
// virt-api's webhook configurations with clientConfig url
// https://HostIP:port/<path> and caBundle its certificate.
func (c *Cluster) registerWebhooks(ctx context.Context, port int, caPEM []byte) error {
	dyn, err := dynamic.NewForConfig(c.Admin)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	base := "https://" + net.JoinHostPort(c.hostIP, strconv.Itoa(port))
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
	var configs []*admissionregistrationv1.WebhookClientConfig
	if err := loadWebhooks("webhooks/virt-api-validator.yaml", validating); err != nil {
		return err
	}
	for i := range validating.Webhooks {
		configs = append(configs, &validating.Webhooks[i].ClientConfig)
	}
	if err := loadWebhooks("webhooks/virt-api-mutator.yaml", mutating); err != nil {
		return err
	}
	for i := range mutating.Webhooks {
		configs = append(configs, &mutating.Webhooks[i].ClientConfig)
	}
	for _, cc := range configs {
		if cc.Service == nil || cc.Service.Path == nil {
			return errors.New("virt-api webhook without a service path")
		}
		url := base + *cc.Service.Path
		cc.URL, cc.Service, cc.CABundle = &url, nil, caPEM
	}
	for resource, obj := range map[string]any{
		"validatingwebhookconfigurations": validating,
		"mutatingwebhookconfigurations":   mutating,
	} {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return fmt.Errorf("convert %s: %w", resource, err)
		}
		body := &unstructured.Unstructured{Object: u}
		gvr := admissionregistrationv1.SchemeGroupVersion.WithResource(resource)
		_, err = dyn.Resource(gvr).Apply(ctx, body.GetName(), body, metav1.ApplyOptions{FieldManager: "testcluster", Force: true})
		if err != nil {
			return fmt.Errorf("register webhook configuration %s: %w", body.GetName(), err)
		}
	}
	return nil
}

func loadWebhooks(name string, into any) error {
	data, err := webhookFiles.ReadFile(name)
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		return fmt.Errorf("decode %s: %w", name, err)
	}
	return nil
}

// VirtAPIRestarts is how often virt-api exited on its own and was started
// again.
func (c *Cluster) VirtAPIRestarts() int64 { return c.virtAPIRestarts.Load() }

// VirtAPIPID is the process id of the virt-api running now (0 without
// [Options.VirtAPI] or while it restarts).
func (c *Cluster) VirtAPIPID() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.virtAPIProc.pid()
}
