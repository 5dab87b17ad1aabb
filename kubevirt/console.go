package kubevirt

import (
	"fmt"

	kubevirtv1 "kubevirt.io/api/core/v1"
)

// A running VMI's serial port and screen, as KubeVirt v1.9 serves them:
// virt-api's aggregated API answers a WebSocket upgrade on the VMI's
// console or vnc subresource ([VMISubresourcePath]) by dialing
// virt-handler on the VMI's node (the one Pod labelled [AppLabel]=
// [HandlerAppName] whose spec.nodeName is the VMI's status.nodeName, at
// its status.podIP and virt-api's --console-server-port,
// [DefaultConsoleServerPort]) at [HandlerPath] over mutual TLS within
// KubeVirt's CA, then relays the two WebSockets' bytes unchanged. Frames
// are binary, the subprotocol [PlainStreamProtocol]. virt-handler keeps
// one serial connection per VMI: a new one closes the one before it.
const (
	// ConsoleSubresource is the serial console (raw bytes of the guest's
	// first serial port).
	ConsoleSubresource = "console"
	// VNCSubresource is the screen (RFB).
	VNCSubresource = "vnc"
	// ScreenshotSubresource is a PNG of the screen: a plain GET (no
	// WebSocket) that virt-api answers by GETting the same path on
	// virt-handler, which answers with the image's bytes and MIME type.
	ScreenshotSubresource = VNCSubresource + "/screenshot"
	// PlainStreamProtocol is the WebSocket subprotocol both hops speak:
	// binary messages carrying the stream's bytes.
	PlainStreamProtocol = "plain.kubevirt.io"
	// AppLabel marks KubeVirt's own pods; virt-handler's have
	// AppLabel=[HandlerAppName].
	AppLabel = kubevirtv1.AppLabel
	// HandlerAppName is virt-handler's [AppLabel] value.
	HandlerAppName = "virt-handler"
	// DefaultConsoleServerPort is virt-handler's console server port
	// (virt-api's and virt-handler's --console-server-port).
	DefaultConsoleServerPort = 8186
	// CAConfigMap (in KubeVirt's namespace) holds KubeVirt's CA bundle
	// under [CABundleKey]: virt-api and virt-handler verify each other
	// against it.
	CAConfigMap = "kubevirt-ca"
	// CABundleKey is the key of the CA bundle in [CAConfigMap].
	CABundleKey = "ca-bundle"
	// HandlerServerCertSecret (tls.crt, tls.key) is virt-handler's
	// serving certificate, common name [HandlerServerCommonName].
	HandlerServerCertSecret = "kubevirt-virt-handler-server-certs" //nolint:gosec // a Secret's name, no credential
	// HandlerServerCommonName is the common name virt-api requires of
	// virt-handler's certificate (ExtKeyUsageServerAuth).
	HandlerServerCommonName = "kubevirt.io:system:node:virt-handler"
	// HandlerClientCommonName is the common name virt-handler requires of
	// its clients' certificates (virt-api's --handler-cert-file;
	// ExtKeyUsageClientAuth).
	HandlerClientCommonName = "kubevirt.io:system:client:virt-handler"
)

// VMISubresourcePath is the URL path (on kube-apiserver, which proxies it
// to virt-api) of VirtualMachineInstance namespace/name's subresource sub
// ([ConsoleSubresource], [VNCSubresource]).
func VMISubresourcePath(namespace, name, sub string) string {
	return fmt.Sprintf("/apis/%s/namespaces/%s/%s/%s/%s", SubresourceGroupVersion, namespace, VirtualMachineInstances.Resource, name, sub)
}

// HandlerPath is the path virt-api dials on virt-handler's console server
// for VMI namespace/name's subresource sub.
func HandlerPath(namespace, name, sub string) string {
	return fmt.Sprintf("/v1/namespaces/%s/%s/%s/%s", namespace, VirtualMachineInstances.Resource, name, sub)
}

// HandlerPathPattern is [HandlerPath] as a net/http ServeMux pattern with
// wildcards {namespace}, {name} and {sub}.
func HandlerPathPattern() string {
	return "GET /v1/namespaces/{namespace}/" + VirtualMachineInstances.Resource + "/{name}/{sub}"
}
