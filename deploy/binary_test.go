package deploy

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// serveBinary builds cmd/redfish-bridge and runs `redfish-bridge serve` the
// way the chart's Deployment does: args serve --config <the chart's
// ConfigMap>, POD_NAME/POD_NAMESPACE from the environment, the chart's TLS
// Secret, the ServiceAccount's token. Only the paths and ports differ
// (flags win over the file). It checks the readiness probe and that the
// generated certificate verifies for the Service name.
func serveBinary(t *testing.T, env *installed) {
	ctx := t.Context()
	dir := t.TempDir()
	bin := buildBinary(t, dir)
	core := env.admin.CoreV1()
	cm, err := core.ConfigMaps(releaseNS).Get(ctx, fullname, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tlsSecret, err := core.Secrets(releaseNS).Get(ctx, fullname+"-tls", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"config.yaml": []byte(cm.Data["config.yaml"]),
		"tls.crt":     tlsSecret.Data["tls.crt"],
		"tls.key":     tlsSecret.Data["tls.key"],
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: env.sa.Host, CertificateAuthorityData: env.sa.CAData}
	kc.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: env.sa.BearerToken}
	kc.Contexts["sa"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "sa"}
	kc.CurrentContext = "sa"
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		t.Fatal(err)
	}
	listen, metrics := freeAddr(t), freeAddr(t)
	cmd := exec.CommandContext(ctx, bin, "serve", "--config="+filepath.Join(dir, "config.yaml"),
		"--kubeconfig="+kubeconfig, "--tls-cert="+filepath.Join(dir, "tls.crt"), "--tls-key="+filepath.Join(dir, "tls.key"),
		"--listen="+listen, "--metrics-listen="+metrics)
	cmd.Env = append(os.Environ(), "POD_NAME=binary-test", "POD_NAMESPACE="+releaseNS)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("redfish-bridge serve after SIGINT: %v", err)
			}
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited //nolint:errcheck // killed: its exit status says nothing
			t.Errorf("redfish-bridge serve did not stop within 15s of SIGINT")
		}
		if t.Failed() {
			t.Logf("redfish-bridge serve output:\n%s", out.String())
		}
	}()
	waitReady(t, "http://"+metrics+"/readyz", exited)

	// The self-signed certificate verifies for the Service's DNS name.
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(files["tls.crt"]) {
		t.Fatal("chart tls.crt holds no PEM certificate")
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: roots, ServerName: fullname + "." + releaseNS + ".svc", MinVersion: tls.VersionTLS12,
	}}}
	resp := testutil.Redfish{Base: "https://" + listen, User: user, Password: password, HTTP: client}.DoContext(ctx, t, http.MethodGet, "/redfish/v1/Systems", nil)
	body := resp.Body
	var systems struct{ Members []member }
	if err := json.Unmarshal(body, &systems); err != nil || resp.Status != http.StatusOK {
		t.Fatalf("GET Systems: %d %v\n%s", resp.Status, err, body)
	}
	want := "/redfish/v1/Systems/" + vmNS + "." + vmName
	if !slices.Contains(systems.Members, member{ID: want}) {
		t.Errorf("Systems %s: no member %s", body, want)
	}
}

// member is an entry of a Redfish collection.
type member struct {
	ID string `json:"@odata.id"`
}

// buildBinary builds cmd/redfish-bridge into dir.
func buildBinary(t *testing.T, dir string) string {
	t.Helper()
	root, err := testcluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "redfish-bridge")
	start := time.Now()
	// The test binary's own build settings (no -trimpath, default cgo), so
	// the packages come from the build cache and only main links.
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./cmd/redfish-bridge")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/redfish-bridge: %v\n%s", err, out)
	}
	t.Logf("go build ./cmd/redfish-bridge took %s", time.Since(start).Round(time.Millisecond))
	return bin
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// waitReady polls the readiness probe URL until 200, failing early when the
// process exits.
func waitReady(t *testing.T, url string, exited chan error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case err := <-exited:
			exited <- err // for the caller's cleanup
			t.Fatalf("redfish-bridge serve exited before ready: %v", err)
		case <-ctx.Done():
			t.Fatalf("%s not ready within 60s", url)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
