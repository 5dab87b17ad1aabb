package testcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// What virt-operator leaves for virt-api to reach virt-handler's console
// server (package sim plays virt-handler's side of it, see
// harness/sim/consoleserver.go), installed before virt-api starts:
//
//   - KubeVirt's CA ("kubevirt.io"): its bundle in ConfigMap
//     kubevirt/kubevirt-ca (key ca-bundle), which virt-api watches;
//   - virt-api's client certificate for virt-handler (common name
//     kubevirt.io:system:client:virt-handler, client auth), passed as its
//     --handler-cert-file and --handler-key-file;
//   - virt-handler's serving certificate (common name
//     kubevirt.io:system:node:virt-handler, server auth) in Secret
//     kubevirt/kubevirt-virt-handler-server-certs;
//   - the DaemonSet kubevirt/virt-handler, whose container's
//     --console-server-port is the port virt-api is started with
//     (--console-server-port): the node side serves there.
//
// virt-api verifies virt-handler's certificate against the CA and its
// common name, and virt-handler virt-api's, exactly as in a cluster.

// HandlerDaemonSet is the name of the virt-handler DaemonSet in
// [KubeVirtNamespace]; its container's args carry --console-server-port.
const HandlerDaemonSet = "virt-handler"

// ConsoleServerPortFlag is the flag of virt-handler's (and virt-api's)
// console server port.
const ConsoleServerPortFlag = "--console-server-port"

// handlerPKI is where installHandlerPKI put virt-api's side.
type handlerPKI struct {
	clientCertFile, clientKeyFile string
	port                          int
}

// installHandlerPKI makes KubeVirt's CA and the two certificates, writes
// the CA bundle, virt-handler's serving certificate and the virt-handler
// DaemonSet (with a free console server port) into the cluster.
func (c *Cluster) installHandlerPKI(ctx context.Context, cs kubernetes.Interface) (*handlerPKI, error) {
	dir := filepath.Join(c.Dir, "kubevirt-ca")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create KubeVirt CA dir: %w", err)
	}
	ca, err := writeCert(filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key"), certSpec{cn: "kubevirt.io"})
	if err != nil {
		return nil, err
	}
	pki := &handlerPKI{clientCertFile: filepath.Join(dir, "handler-client.crt"), clientKeyFile: filepath.Join(dir, "handler-client.key")}
	if _, err := writeCert(pki.clientCertFile, pki.clientKeyFile, certSpec{cn: kubevirt.HandlerClientCommonName, client: true, parent: ca}); err != nil {
		return nil, err
	}
	serverCert, serverKey := filepath.Join(dir, "handler-server.crt"), filepath.Join(dir, "handler-server.key")
	if _, err := writeCert(serverCert, serverKey, certSpec{cn: kubevirt.HandlerServerCommonName, hosts: []string{"127.0.0.1"}, parent: ca}); err != nil {
		return nil, err
	}
	certPEM, err := os.ReadFile(serverCert)
	if err != nil {
		return nil, fmt.Errorf("read virt-handler certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(serverKey)
	if err != nil {
		return nil, fmt.Errorf("read virt-handler key: %w", err)
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	pki.port = ports[0]
	if err := c.CreateNamespace(ctx, KubeVirtNamespace); err != nil {
		return nil, err
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: kubevirt.CAConfigMap, Namespace: KubeVirtNamespace},
		Data:       map[string]string{kubevirt.CABundleKey: string(ca.pem)},
	}
	if _, err := cs.CoreV1().ConfigMaps(KubeVirtNamespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create ConfigMap %s: %w", kubevirt.CAConfigMap, err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: kubevirt.HandlerServerCertSecret, Namespace: KubeVirtNamespace},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM},
	}
	if _, err := cs.CoreV1().Secrets(KubeVirtNamespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create Secret %s: %w", kubevirt.HandlerServerCertSecret, err)
	}
	labels := map[string]string{kubevirt.AppLabel: kubevirt.HandlerAppName}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: HandlerDaemonSet, Namespace: KubeVirtNamespace, Labels: labels},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:    HandlerDaemonSet,
					Image:   "quay.io/kubevirt/virt-handler:v1.9.0",
					Command: []string{"virt-handler"},
					Args:    []string{ConsoleServerPortFlag, strconv.Itoa(pki.port)},
				}}},
			},
		},
	}
	if _, err := cs.AppsV1().DaemonSets(KubeVirtNamespace).Create(ctx, ds, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create DaemonSet %s: %w", HandlerDaemonSet, err)
	}
	return pki, nil
}
