package testcluster

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// virt-api's aggregated API (the start/stop/restart/... subresources of
// subresources.kubevirt.io) as virt-operator registers it: an APIService
// naming the Service virt-api in the KubeVirt namespace. kube-apiserver
// runs with --enable-aggregator-routing, so it dials the Service's
// endpoints (its EndpointSlices) rather than its cluster IP; endpoints may
// not be loopback addresses, so virt-api listens on the machine's first
// non-loopback IPv4 address ([Cluster.HostIP]).
const (
	// SubresourcesAPIService names the APIService of
	// subresources.kubevirt.io/v1 (virt-operator's name for it).
	SubresourcesAPIService = "v1.subresources.kubevirt.io"
	virtAPIService         = "virt-api"
	virtAPIServicePort     = 443
	virtAPIPortName        = "https"
)

var (
	apiServices    = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	services       = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	endpoints      = schema.GroupVersionResource{Version: "v1", Resource: "endpoints"}
	endpointSlices = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
)

// aggregationFlags make kube-apiserver an aggregator that virt-api
// accepts: a request-header CA published in
// kube-system/extension-apiserver-authentication (virt-api does not start
// without one; it trusts client certificates signed by it and reads the
// user from the X-Remote-* headers), the proxy client certificate signed by
// that CA whose CN is the one allowed name, and routing to endpoints. The
// CA is the apiserver's own self-signed certificate.
func aggregationFlags(creds *credentials) []string {
	return []string{
		"--requestheader-client-ca-file=" + creds.certFile,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--requestheader-allowed-names=" + proxyClientName,
		"--proxy-client-cert-file=" + creds.proxyClientCertFile,
		"--proxy-client-key-file=" + creds.proxyClientKeyFile,
		"--enable-aggregator-routing=true",
	}
}

// hostIPv4 is the machine's first non-loopback IPv4 address on an
// interface that is up.
func hostIPv4() (string, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return "", fmt.Errorf("list network interfaces: %w", err)
	}
	for _, iface := range ifaces {
		if iface.Flags&net.FlagUp == 0 || iface.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := iface.Addrs()
		if err != nil {
			return "", fmt.Errorf("addresses of %s: %w", iface.Name, err)
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
				return n.IP.String(), nil
			}
		}
	}
	return "", errors.New("no non-loopback IPv4 address on this machine: Options.VirtAPI needs one " +
		"(the aggregator dials virt-api's Service endpoints, which may not be loopback addresses)")
}

// HostIP is the address virt-api listens on with [Options.VirtAPI] (the
// machine's first non-loopback IPv4 address; "" without virt-api).
func (c *Cluster) HostIP() string { return c.hostIP }

// registerAPIService applies (creates, or after a restart updates) the
// selectorless Service virt-api in the KubeVirt namespace, its Endpoints
// and EndpointSlice at HostIP:port, and the APIService
// [SubresourcesAPIService] with caBundle caPEM.
func (c *Cluster) registerAPIService(ctx context.Context, port int, caPEM []byte) error {
	cfg := rest.CopyConfig(c.Admin)
	cfg.WarningHandler = rest.NoWarnings{} // v1 Endpoints is deprecated; the apiserver says so on every write
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	meta := func(labels map[string]any) map[string]any {
		m := map[string]any{"name": virtAPIService, "namespace": KubeVirtNamespace}
		if labels != nil {
			m["labels"] = labels
		}
		return m
	}
	gv := kubevirt.SubresourceGroupVersion
	objects := []struct {
		gvr schema.GroupVersionResource
		obj map[string]any
	}{
		{services, map[string]any{
			"apiVersion": "v1", "kind": "Service", "metadata": meta(nil),
			"spec": map[string]any{"ports": []any{map[string]any{
				"name": virtAPIPortName, "port": int64(virtAPIServicePort), "targetPort": int64(port), "protocol": "TCP",
			}}},
		}},
		{endpoints, map[string]any{
			"apiVersion": "v1", "kind": "Endpoints", "metadata": meta(nil),
			"subsets": []any{map[string]any{
				"addresses": []any{map[string]any{"ip": c.hostIP}},
				"ports":     []any{map[string]any{"name": virtAPIPortName, "port": int64(port), "protocol": "TCP"}},
			}},
		}},
		{endpointSlices, map[string]any{
			"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
			"metadata":    meta(map[string]any{"kubernetes.io/service-name": virtAPIService}),
			"addressType": "IPv4",
			"endpoints":   []any{map[string]any{"addresses": []any{c.hostIP}, "conditions": map[string]any{"ready": true}}},
			"ports":       []any{map[string]any{"name": virtAPIPortName, "port": int64(port), "protocol": "TCP"}},
		}},
		{apiServices, map[string]any{
			"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
			"metadata": map[string]any{"name": SubresourcesAPIService},
			"spec": map[string]any{
				"service":              map[string]any{"namespace": KubeVirtNamespace, "name": virtAPIService, "port": int64(virtAPIServicePort)},
				"group":                gv.Group,
				"version":              gv.Version,
				"groupPriorityMinimum": int64(1000),
				"versionPriority":      int64(15),
				"caBundle":             base64.StdEncoding.EncodeToString(caPEM),
			},
		}},
	}
	for _, o := range objects {
		body := &unstructured.Unstructured{Object: o.obj}
		api := dyn.Resource(o.gvr).Namespace(body.GetNamespace())
		if _, err := api.Apply(ctx, body.GetName(), body, metav1.ApplyOptions{FieldManager: "testcluster", Force: true}); err != nil {
			return fmt.Errorf("register virt-api's aggregated API: %s %s: %w", body.GetKind(), body.GetName(), err)
		}
	}
	return nil
}

// waitAPIServiceAvailable waits until the aggregator reports
// [SubresourcesAPIService] Available and a discovery request for it
// through kube-apiserver reaches virt-api (p, which must not exit
// meanwhile).
func (c *Cluster) waitAPIServiceAvailable(ctx context.Context, p *process) error {
	dyn, err := dynamic.NewForConfig(c.Admin)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	cs, err := kubernetes.NewForConfig(c.Admin)
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	return waitProcess(ctx, p, "APIService "+SubresourcesAPIService+" Available", func(ctx context.Context) error {
		svc, err := dyn.Resource(apiServices).Get(ctx, SubresourcesAPIService, metav1.GetOptions{})
		if err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(svc.Object, "status", "conditions")
		available := false
		for _, cond := range conds {
			m, _ := cond.(map[string]any)
			if m["type"] == "Available" {
				if m["status"] != "True" {
					return fmt.Errorf("condition Available %v: %v: %v", m["status"], m["reason"], m["message"])
				}
				available = true
			}
		}
		if !available {
			return errors.New("no Available condition yet")
		}
		_, err = cs.Discovery().RESTClient().Get().AbsPath(kubevirt.SubresourceDiscoveryPath()).DoRaw(ctx)
		return err
	})
}
