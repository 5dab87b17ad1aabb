package testcluster

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	cdiv1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
	"sigs.k8s.io/yaml"
)

// cdi-controller as its Deployment runs it (cdi/deployment-cdi-deployment.yaml,
// what CDI's operator installs): the Deployment's environment, and its
// volumes at the fixed paths the program reads, bind-mounted from the
// cluster's directory in a mount namespace of its own.
const (
	// cdiSigningKeySecret is the Secret cdi-apiserver signs clone tokens
	// with (CDI's APISigningKeySecretName) and cdi-controller verifies them
	// with, mounted at /var/run/cdi/token/keys.
	cdiSigningKeySecret = "cdi-api-signing-key"
	// cdiConfigName is the CDIConfig every CDI program reads.
	cdiConfigName = "config"
	// cdiCRName is the CDI custom resource CDI's operator reconciles;
	// cdi-controller reads its workload placement before it makes a pod.
	cdiCRName = "cdi"
)

// cdiConfigs and cdiCRs are CDI's cluster-scoped configuration resources.
var (
	cdiConfigs = cdiv1beta1.SchemeGroupVersion.WithResource("cdiconfigs")
	cdiCRs     = cdiv1beta1.SchemeGroupVersion.WithResource("cdis")
)

// RunCDIController installs CDI's own CRDs ([crds.LoadCDI]), the CDI
// resource its operator would have made, and runs CDI v1.66.0's
// cdi-controller (bin/cdi-controller, built from source) as its
// Deployment runs it: its environment, the signing key cdi-apiserver
// shares with it, the upload signers, in a network namespace (its metrics
// port 8443 is fixed) and a mount namespace of its own (the paths it reads
// are fixed: /var/run/cdi/token/keys, /var/run/certs/..., its namespace at
// /var/run/secrets/kubernetes.io/serviceaccount; /tmp holds its ready
// file). It waits until the controller leads and has reconciled the
// CDIConfig (status.filesystemOverhead written). The node side (importer
// pods) is package sim's. It needs root; it runs as the cluster's admin,
// as cdi-apiserver does here. [Cluster.Stop] stops it.
func (c *Cluster) RunCDIController(ctx context.Context) error {
	cs, err := c.prepareCDI(ctx, cdiControllerBinary)
	if err != nil {
		return fmt.Errorf("run cdi-controller: %w", err)
	}
	dyn, err := dynamic.NewForConfig(c.Admin)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	cr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": cdiv1beta1.SchemeGroupVersion.String(), "kind": "CDI",
		"metadata": map[string]any{"name": cdiCRName}, "spec": map[string]any{},
	}}
	if _, err := dyn.Resource(cdiCRs).Create(ctx, cr, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create the CDI resource: %w", err)
	}
	root, err := c.cdiControllerRoot(ctx, cs)
	if err != nil {
		return err
	}
	env, err := cdiDeploymentEnv()
	if err != nil {
		return err
	}
	np, err := startInNetNS(cdiControllerBinary, c.binDir+"/"+cdiControllerBinary,
		[]string{"--kubeconfig=/run/kubeconfig", "-v=1"}, env, c.Dir, []int{c.apiserverPort()},
		map[string]string{"/run": filepath.Join(root, "run"), "/tmp": filepath.Join(root, "tmp")})
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.cdiProcs = append(c.cdiProcs, np.process)
	c.mu.Unlock()
	podIP, err := linkToHost(np.pid())
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.cdiPodIP = podIP
	c.mu.Unlock()
	return waitNetNSReady(ctx, np, "cdi-controller to reconcile the CDIConfig", func(ctx context.Context) error {
		cfg, err := dyn.Resource(cdiConfigs).Get(ctx, cdiConfigName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if _, ok, _ := unstructured.NestedString(cfg.Object, "status", "filesystemOverhead", "global"); !ok {
			return errors.New("CDIConfig status.filesystemOverhead not written yet")
		}
		return nil
	})
}

// cdiControllerRoot writes what cdi-controller's pod would find mounted,
// under <Dir>/cdi-controller-root: run/ (bound on /run, which /var/run
// names) holding its kubeconfig, the token signing keys, the upload
// signers and its service account's namespace; tmp/ (bound on /tmp).
func (c *Cluster) cdiControllerRoot(ctx context.Context, cs kubernetes.Interface) (string, error) {
	root := filepath.Join(c.Dir, "cdi-controller-root")
	run := filepath.Join(root, "run")
	keys, err := cdiSigningKey(ctx, cs)
	if err != nil {
		return "", err
	}
	kubeconfig, err := os.ReadFile(c.Kubeconfig)
	if err != nil {
		return "", fmt.Errorf("read kubeconfig: %w", err)
	}
	files := map[string][]byte{
		"kubeconfig": kubeconfig,
		"secrets/kubernetes.io/serviceaccount/namespace": []byte(CDINamespace),
	}
	for name, data := range keys {
		files["cdi/token/keys/"+name] = data
	}
	for _, dir := range []string{"tmp", "run/certs/cdi-uploadserver-signer", "run/certs/cdi-uploadserver-client-signer"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o700); err != nil {
			return "", fmt.Errorf("cdi-controller root: %w", err)
		}
	}
	for _, signer := range []string{"cdi-uploadserver-signer", "cdi-uploadserver-client-signer"} {
		dir := filepath.Join(run, "certs", signer)
		if _, err := writeCert(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), certSpec{cn: signer}); err != nil {
			return "", fmt.Errorf("%s: %w", signer, err)
		}
	}
	for name, data := range files {
		path := filepath.Join(run, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return "", fmt.Errorf("cdi-controller root: %w", err)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return "", fmt.Errorf("cdi-controller root: %w", err)
		}
	}
	return root, nil
}

// cdiSigningKey returns the files of the Secret cdiSigningKeySecret
// (id_rsa, id_rsa.pub), creating it as cdi-apiserver does
// (pkg/keys.GetOrCreatePrivateKey) when it is missing: whichever CDI
// program starts first makes it, the other uses it.
func cdiSigningKey(ctx context.Context, cs kubernetes.Interface) (map[string][]byte, error) {
	api := cs.CoreV1().Secrets(CDINamespace)
	sec, err := api.Get(ctx, cdiSigningKeySecret, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		key, kerr := rsa.GenerateKey(rand.Reader, 2048)
		if kerr != nil {
			return nil, fmt.Errorf("CDI signing key: %w", kerr)
		}
		pub, kerr := x509.MarshalPKIXPublicKey(&key.PublicKey)
		if kerr != nil {
			return nil, fmt.Errorf("CDI signing key: %w", kerr)
		}
		sec = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: cdiSigningKeySecret, Labels: map[string]string{"cdi.kubevirt.io": "keystore"}},
			Type:       corev1.SecretTypeOpaque,
			Data: map[string][]byte{
				"id_rsa":     pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
				"id_rsa.pub": pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}),
			},
		}
		sec, err = api.Create(ctx, sec, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			sec, err = api.Get(ctx, cdiSigningKeySecret, metav1.GetOptions{})
		}
	}
	if err != nil {
		return nil, fmt.Errorf("secret %s/%s: %w", CDINamespace, cdiSigningKeySecret, err)
	}
	return map[string][]byte{"id_rsa": sec.Data["id_rsa"], "id_rsa.pub": sec.Data["id_rsa.pub"]}, nil
}

// cdiDeploymentEnv is the literal environment of cdi-controller's
// container in the Deployment CDI's operator installs (the images it
// names for the pods it makes, the pull policy); the two taken from the
// pod's labels are empty there.
func cdiDeploymentEnv() ([]string, error) {
	const name = "cdi/deployment-cdi-deployment.yaml"
	data, err := cdiFiles.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	var d appsv1.Deployment
	if err := yaml.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("decode %s: %w", name, err)
	}
	var env []string
	for _, ctr := range d.Spec.Template.Spec.Containers {
		for _, e := range ctr.Env {
			if e.ValueFrom == nil {
				env = append(env, e.Name+"="+e.Value)
			}
		}
	}
	if len(env) == 0 {
		return nil, fmt.Errorf("%s: no environment for cdi-controller", name)
	}
	return env, nil
}

// CDIPodIP is the address cdi-controller reaches the simulated node's CDI
// pods at ("" before [Cluster.RunCDIController]): a host address at the
// end of a veth pair from cdi-controller's network namespace. The node
// side gives CDI's pods this pod IP and serves their metrics
// (https://<pod IP>:8443/metrics, where cdi-controller reads an import's
// progress) on it.
func (c *Cluster) CDIPodIP() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cdiPodIP
}

// prepareCDI is what every CDI program needs before it runs: network
// namespaces (root), its binary, CDI's CRDs and namespace; it returns the
// admin client.
func (c *Cluster) prepareCDI(ctx context.Context, binary string) (kubernetes.Interface, error) {
	if err := canNetNS(); err != nil {
		return nil, err
	}
	if err := checkBinary(c.binDir, binary); err != nil {
		return nil, err
	}
	if err := c.installCDICRDs(ctx); err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(c.Admin)
	if err != nil {
		return nil, fmt.Errorf("admin client: %w", err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: CDINamespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create namespace %s: %w", CDINamespace, err)
	}
	return cs, nil
}
