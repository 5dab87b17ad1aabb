package media_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testca"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// privateServer is an HTTPS image server on loopback with its own CA;
// with a user set it wants HTTP Basic credentials. GETs wait for gate.
type privateServer struct {
	*httptest.Server
	ca    *testca.CA
	image []byte
	gate  chan struct{}
	done  chan struct{} // closed at cleanup: frees GETs still held by gate
}

const (
	imageUser = "ironic"
	imagePass = "Str0ng-image-pass-7e1f"
)

func newPrivateServer(t *testing.T, basic bool) *privateServer {
	t.Helper()
	ca, err := testca.New("media test CA")
	if err != nil {
		t.Fatal(err)
	}
	p := &privateServer{ca: ca, image: bytes.Repeat([]byte("private image|"), 50000), gate: make(chan struct{}), done: make(chan struct{})}
	p.Server, err = ca.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, pw, ok := r.BasicAuth(); basic && (!ok || u != imageUser || pw != imagePass) {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if r.URL.Path == "/gated.iso" {
			select {
			case <-p.gate:
			case <-r.Context().Done():
				return
			case <-p.done:
				return
			}
		}
		_, _ = w.Write(p.image)
	}))
	if err != nil {
		t.Fatal(err)
	}
	// Close waits for every active request: free an import still held by
	// the gate (its slot ejected, its downloader not yet cancelled) first.
	t.Cleanup(func() {
		close(p.done)
		p.Close()
	})
	return p
}

// TestMediaTrust runs the TLS and credential scenarios on a real apiserver
// with the simulator (which runs the bridge's own import code), once per
// CRD variant.
func TestMediaTrust(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a test cluster")
	}
	for _, v := range []crds.Variant{crds.Stock, crds.MapList} {
		t.Run(string(v), func(t *testing.T) {
			e := newEnv(t, v)
			_, stop := e.startReconciler(t, nil)
			defer stop()
			t.Run("ImportSecretLifecycle", func(t *testing.T) { testImportSecretLifecycle(t, e) })
			t.Run("EjectDeletesImportSecret", func(t *testing.T) { testEjectDeletesImportSecret(t, e) })
			t.Run("UntrustedThenVerifyOff", func(t *testing.T) { testUntrustedThenVerifyOff(t, e) })
			t.Run("RedirectToUntrusted", func(t *testing.T) { testRedirectToUntrusted(t, e) })
			t.Run("BridgeBundle", func(t *testing.T) { testBridgeBundle(t, e) })
			t.Run("NoCredentials", func(t *testing.T) { testNoCredentials(t, e) })
		})
	}
}

// testImportSecretLifecycle: the slot's certificate and the credentials
// reach the import pod through a Secret owned by the VM (never its args or
// the VM), the image is imported, and the Secret is gone once it is.
func testImportSecretLifecycle(t *testing.T, e *env) {
	srv := newPrivateServer(t, true)
	key := e.createVM(t, vmName(t))
	if _, err := e.svc.AddCertificate(t.Context(), key, slot, srv.ca.PEM); err != nil {
		t.Fatal(err)
	}
	got, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: srv.URL + "/gated.iso", UserName: imageUser, Password: imagePass})
	if err != nil {
		t.Fatal(err)
	}
	if got.ImportSecret == "" || !got.CABundle || !got.Credentials || got.Insecure {
		t.Fatalf("slot %+v: want an import Secret with CAs and credentials, verifying", got)
	}
	vmObj, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(e.ns).Get(t.Context(), key.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sec, err := e.adminKube.CoreV1().Secrets(e.ns).Get(t.Context(), got.ImportSecret, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("import Secret: %v", err)
	}
	if len(sec.OwnerReferences) != 1 || sec.OwnerReferences[0].UID != vmObj.GetUID() || sec.OwnerReferences[0].Kind != "VirtualMachine" {
		t.Errorf("import Secret owners %+v, want the VM (UID %s)", sec.OwnerReferences, vmObj.GetUID())
	}
	if string(sec.Data[download.CredentialPasswordKey]) != imagePass || string(sec.Data[download.CredentialUserKey]) != imageUser {
		t.Errorf("import Secret keys %v: want the credentials", keys(sec.Data))
	}
	cm, err := e.adminKube.CoreV1().ConfigMaps(e.ns).Get(t.Context(), got.ImportSecret, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("import ConfigMap: %v", err)
	}
	if !strings.Contains(cm.Data[download.CAKey], strings.TrimSpace(srv.ca.PEM)) || len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].UID != vmObj.GetUID() {
		t.Errorf("import ConfigMap %+v: want the slot's CA, owned by the VM", cm)
	}
	// A namespace user cannot swap the CAs or credentials the import pod
	// is about to mount (issue 37 item 4): both objects are immutable.
	cm.Data[download.CAKey] = "planted CA"
	if _, err := e.adminKube.CoreV1().ConfigMaps(e.ns).Update(t.Context(), cm, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("update of the import ConfigMap's CA: err %v, want Invalid (immutable)", err)
	}
	sec.Data[download.CredentialPasswordKey] = []byte("planted")
	if _, err := e.adminKube.CoreV1().Secrets(e.ns).Update(t.Context(), sec, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("update of the import Secret's credentials: err %v, want Invalid (immutable)", err)
	}
	var pod corev1.Pod
	e.eventually(t, "import pod", func(ctx context.Context) error {
		pods, err := e.pods(ctx, key, slot)
		if err != nil || len(pods) == 0 {
			return fmt.Errorf("pods %d, err %w", len(pods), err)
		}
		pod = pods[0]
		return nil
	})
	podJSON, _ := json.Marshal(pod.Spec)
	vmJSON, _ := json.Marshal(vmObj.Object)
	for what, text := range map[string]string{"pod spec": string(podJSON), "VM": string(vmJSON)} {
		if strings.Contains(text, imagePass) {
			t.Errorf("the %s holds the password", what)
		}
	}
	if !strings.Contains(string(podJSON), `"secretName":"`+got.ImportSecret+`"`) || !strings.Contains(string(podJSON), "--credentials-dir="+media.ImportConfigPath) ||
		!strings.Contains(string(podJSON), `"configMap":{"name":"`+got.ImportSecret+`"`) || !strings.Contains(string(podJSON), "--ca-file="+media.ImportConfigPath) {
		t.Errorf("pod spec does not mount the import Secret and ConfigMap: %s", podJSON)
	}

	close(srv.gate)
	e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))
	data, err := os.ReadFile(e.sim.ImagePath(e.ns, got.ClaimName))
	if err != nil || sha256.Sum256(data) != sha256.Sum256(srv.image) {
		t.Fatalf("imported %d bytes (err %v): not the served image", len(data), err)
	}
	e.waitImportObjectsGone(t, got.ImportSecret)
}

// waitImportObjectsGone waits until the import Secret and ConfigMap named
// name are deleted.
func (e *env) waitImportObjectsGone(t *testing.T, name string) {
	t.Helper()
	e.eventually(t, "import Secret and ConfigMap deleted", func(ctx context.Context) error {
		_, err := e.adminKube.CoreV1().Secrets(e.ns).Get(ctx, name, metav1.GetOptions{})
		_, cmErr := e.adminKube.CoreV1().ConfigMaps(e.ns).Get(ctx, name, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) || !apierrors.IsNotFound(cmErr) {
			return fmt.Errorf("still there (Secret err %w, ConfigMap err %w)", err, cmErr)
		}
		return nil
	})
}

// testEjectDeletesImportSecret: ejecting while the import runs deletes the
// import Secret. The slot trusts the server's CA so the import stays in
// Importing (held by the gate) instead of failing on TLS before the poll
// sees it.
func testEjectDeletesImportSecret(t *testing.T, e *env) {
	srv := newPrivateServer(t, true)
	key := e.createVM(t, vmName(t))
	if _, err := e.svc.AddCertificate(t.Context(), key, slot, srv.ca.PEM); err != nil {
		t.Fatal(err)
	}
	got, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: srv.URL + "/gated.iso", UserName: imageUser, Password: imagePass})
	if err != nil {
		t.Fatal(err)
	}
	e.waitSlot(t, key, slot, "Importing", phaseIs(system.MediaImporting))
	if err := e.svc.Eject(t.Context(), key, slot); err != nil {
		t.Fatal(err)
	}
	if _, err := e.adminKube.CoreV1().Secrets(e.ns).Get(t.Context(), got.ImportSecret, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("import Secret after eject: err %v, want NotFound", err)
	}
	if _, err := e.adminKube.CoreV1().ConfigMaps(e.ns).Get(t.Context(), got.ImportSecret, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("import ConfigMap after eject: err %v, want NotFound", err)
	}
}

// testUntrustedThenVerifyOff: a private CA nobody trusts is refused at the
// insert with the TLS reason and what to do, nothing recorded (no slot, no
// import Secret); VerifyCertificate false (kept in a ConfigMap owned by
// the VM) imports it.
func testUntrustedThenVerifyOff(t *testing.T, e *env) {
	srv := newPrivateServer(t, false)
	close(srv.gate)
	key := e.createVM(t, vmName(t))
	_, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: srv.URL + "/a.iso"})
	var bad *download.InvalidURLError
	if !errors.As(err, &bad) || !strings.Contains(bad.Reason, "x509: certificate signed by unknown authority") || !strings.Contains(bad.Reason, "POST its CA to the slot's Certificates") {
		t.Fatalf("insert from an untrusted server: %v; want refused with the TLS error and what to do", err)
	}
	if vm, err := e.liveVM(t.Context(), key); err != nil || vm.Slots[slot].InsertID != "" {
		t.Errorf("slot after the refused insert %+v (%v), want nothing recorded", vm.Slots[slot], err)
	}
	if err := e.svc.SetVerifyCertificate(t.Context(), key, slot, false); err != nil {
		t.Fatal(err)
	}
	cm, err := e.adminKube.CoreV1().ConfigMaps(e.ns).Get(t.Context(), media.TrustConfigMapName(key, slot), metav1.GetOptions{})
	if err != nil || !ownerIs(cm, key.Name) {
		t.Fatalf("trust ConfigMap: %v, owners %v", err, cm.OwnerReferences)
	}
	got, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: srv.URL + "/a.iso"})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Insecure || got.ImportSecret != "" {
		t.Errorf("slot %+v: want Insecure and no import Secret", got)
	}
	e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))
}

// testRedirectToUntrusted: what the insert's handshake cannot see, a
// trusted server redirecting to one whose CA nobody trusts, is accepted
// and fails in the import: Failed, with the TLS error and what to do.
func testRedirectToUntrusted(t *testing.T, e *env) {
	untrusted := newPrivateServer(t, false)
	close(untrusted.gate)
	ca, err := testca.New("redirecting server CA")
	if err != nil {
		t.Fatal(err)
	}
	redirect, err := ca.NewServer(http.RedirectHandler(untrusted.URL+"/a.iso", http.StatusFound))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(redirect.Close)
	key := e.createVM(t, vmName(t))
	if _, err := e.svc.AddCertificate(t.Context(), key, slot, ca.PEM); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: redirect.URL + "/r.iso"}); err != nil {
		t.Fatalf("insert from a trusted server: %v", err)
	}
	failed := e.waitSlot(t, key, slot, "Failed", phaseIs(system.MediaFailed))
	if !strings.Contains(failed.Reason, "x509: certificate signed by unknown authority") || !strings.Contains(failed.Reason, "POST its CA to the slot's Certificates") {
		t.Errorf("Failed reason %q: want the TLS error and what to do", failed.Reason)
	}
}

// testBridgeBundle: a CA in the bridge-wide bundle is trusted by every slot.
func testBridgeBundle(t *testing.T, e *env) {
	srv := newPrivateServer(t, false)
	close(srv.gate)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bridge-ca"}, Data: map[string]string{"bundle.pem": srv.ca.PEM}}
	if _, err := e.adminKube.CoreV1().ConfigMaps(e.ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := newService(e.w, e.kube)
	svc.SetCABundle(media.CABundle{Namespace: e.ns, ConfigMap: "bridge-ca", Key: "bundle.pem"})
	key := e.createVM(t, vmName(t))
	got, err := svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: srv.URL + "/a.iso"})
	if err != nil {
		t.Fatal(err)
	}
	if !got.CABundle || got.Credentials {
		t.Errorf("slot %+v: want the bundle and no credentials", got)
	}
	e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))
}

func testNoCredentials(t *testing.T, e *env) {
	srv := newPrivateServer(t, true)
	close(srv.gate)
	key := e.createVM(t, vmName(t))
	if err := e.svc.SetVerifyCertificate(t.Context(), key, slot, false); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: srv.URL + "/a.iso"}); err != nil {
		t.Fatal(err)
	}
	failed := e.waitSlot(t, key, slot, "Failed", phaseIs(system.MediaFailed))
	if !strings.Contains(failed.Reason, "401") || !strings.Contains(failed.Reason, "give UserName and Password in InsertMedia") {
		t.Errorf("Failed reason %q: want 401 and what to do", failed.Reason)
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
