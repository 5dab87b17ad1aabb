package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/testca"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/harness/vmcheck"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Image servers of the trust tests: HTTPS with a private CA, and HTTP
// Basic, both on loopback.
const (
	imageUser    = "ironic-images"
	imagePassEnv = "E2E_IMAGE_PASSWORD"
)

// trustServer serves one image; with a password it wants HTTP Basic; GETs
// of /gated.iso wait for gate.
type trustServer struct {
	url   string
	ca    *testca.CA // nil: plain HTTP
	image []byte
	gate  chan struct{}
}

func newTrustServer(t *testing.T, tlsCA bool, password string) *trustServer {
	t.Helper()
	s := &trustServer{image: bytes.Repeat([]byte(t.Name()+"|"), 300000), gate: make(chan struct{})}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); password != "" && (!ok || u != imageUser || p != password) {
			w.Header().Set("WWW-Authenticate", `Basic realm="images"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if r.URL.Path == "/gated.iso" {
			select {
			case <-s.gate:
			case <-r.Context().Done():
				return
			}
		}
		_, _ = w.Write(s.image)
	})
	var srv *httptest.Server
	if tlsCA {
		ca, err := testca.New("e2e image CA " + t.Name())
		if err != nil {
			t.Fatal(err)
		}
		if srv, err = ca.NewServer(h); err != nil {
			t.Fatal(err)
		}
		s.ca = ca
	} else {
		srv = httptest.NewServer(h)
	}
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		select {
		case <-s.gate:
		default:
			close(s.gate)
		}
	})
	s.url = srv.URL
	return s
}

func (s *trustServer) sha256() string {
	sum := sha256.Sum256(s.image)
	return hex.EncodeToString(sum[:])
}

// caFile writes the server's CA for sushy to post.
func (s *trustServer) caFile(t *testing.T) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(f, []byte(s.ca.PEM), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestImageTrust: images over HTTPS from a private CA and over HTTP Basic,
// through the real sushy library (Certificates, VerifyCertificate,
// InsertMedia with UserName/Password) on both CRD variants; the simulator
// runs the bridge's own import code against the import pod's Secret.
func TestImageTrust(t *testing.T) {
	if out, err := exec.CommandContext(t.Context(), sushyPython, "-c", "import sushy").CombinedOutput(); err != nil {
		testutil.Missing(t, "python3-sushy not importable by %s (%v: %s)", sushyPython, err, out)
	}
	forEachVariant(t, func(t *testing.T, env *demo.Env) {
		a := adminFor(t, env)
		t.Run("PrivateCA", func(t *testing.T) { testPrivateCA(t, env, a) })
		t.Run("BridgeBundle", func(t *testing.T) { testBridgeBundle(t, env, a) })
		t.Run("VerifyCertificateFalse", func(t *testing.T) { testVerifyOff(t, env, a) })
		t.Run("BasicAuth", func(t *testing.T) { testBasicAuth(t, env, a) })
	})
}

// trustVM creates a sample VM of its own for one test.
func trustVM(t *testing.T, env *demo.Env, a admin, name string) system.Key {
	t.Helper()
	key := system.Key{Namespace: demo.VMNamespace, Name: name}
	if _, err := a.dyn.Resource(kubevirt.VirtualMachines).Namespace(key.Namespace).Create(t.Context(), demo.SampleVM(key.Namespace, name), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create VM %s: %v", name, err)
	}
	client := redfishClient()
	waitFor(t, "system "+key.ID()+" served", func() (bool, string) {
		status, body := call(t, client, env, http.MethodGet, "/redfish/v1/Managers/"+key.ID()+"/VirtualMedia/cd0", "")
		return status == http.StatusOK, fmt.Sprintf("%d %s", status, body)
	})
	return key
}

type trustResult struct {
	Verify       bool     `json:"verify"`
	Certificates []string `json:"certificates"`
	Subjects     []string `json:"subjects"`
	Error        string   `json:"error"`
}

// runTrustSteps runs sushy_vmedia_trust.py on key's CD slot.
func runTrustSteps(t *testing.T, env *demo.Env, key system.Key, env2 []string, steps ...string) trustResult {
	t.Helper()
	cmd := clientCommand(t, sushyPython, append([]string{"testdata/sushy_vmedia_trust.py", key.ID()}, steps...)...)
	cmd.Env = append(append(pythonEnviron(), "RF_URL="+env.URL, "RF_USER="+env.User, "RF_PASSWORD="+env.Password), env2...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var res trustResult
	if jerr := json.Unmarshal(out, &res); jerr != nil || err != nil || res.Error != "" {
		t.Fatalf("sushy %v: %v %v\n%s\nstderr:\n%s", steps, err, jerr, res.Error, tail(stderr.String()))
	}
	return res
}

// runTrustStepsRefused runs steps with sushy, the last of which must fail,
// and returns sushy's error.
func runTrustStepsRefused(t *testing.T, env *demo.Env, key system.Key, steps ...string) string {
	t.Helper()
	cmd := clientCommand(t, sushyPython, append([]string{"testdata/sushy_vmedia_trust.py", key.ID()}, steps...)...)
	cmd.Env = append(pythonEnviron(), "RF_URL="+env.URL, "RF_USER="+env.User, "RF_PASSWORD="+env.Password)
	out, _ := cmd.Output()
	var res trustResult
	if err := json.Unmarshal(out, &res); err != nil || res.Error == "" {
		t.Fatalf("sushy %v: %v %s, want an error", steps, err, out)
	}
	return res.Error
}

// waitFinished waits until key's slot is Ready or Failed and returns it.
func waitFinished(t *testing.T, a admin, key system.Key) system.MediaSlot {
	t.Helper()
	var sl system.MediaSlot
	waitFor(t, key.String()+" import finished", func() (bool, string) {
		vm, err := a.dyn.Resource(kubevirt.VirtualMachines).Namespace(key.Namespace).Get(t.Context(), key.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		sl = vmcheck.MustSlot(t, vm, media.DefaultSlot)
		return sl.Phase == system.MediaReady || sl.Phase == system.MediaFailed, fmt.Sprintf("%+v", sl)
	})
	return sl
}

// taskResolution is the Resolution of the first message of the slot's task.
func taskResolution(t *testing.T, env *demo.Env, sl system.MediaSlot) (string, map[string]any) {
	t.Helper()
	task := getJSON(t, redfishClient(), env, "/redfish/v1/TaskService/Tasks/"+sl.InsertID)
	msgs, _ := task["Messages"].([]any)
	if len(msgs) == 0 {
		return "", task
	}
	m, _ := msgs[0].(map[string]any)
	r, _ := m["Resolution"].(string)
	return r, task
}

// wantImported checks the slot is Ready with the server's bytes.
func wantImported(t *testing.T, env *demo.Env, sl system.MediaSlot, srv *trustServer) {
	t.Helper()
	if sl.Phase != system.MediaReady {
		t.Fatalf("slot %+v, want Ready", sl)
	}
	if got := vmcheck.MustFileSHA256(t, env.Sim.ImagePath(demo.VMNamespace, sl.ClaimName)); got != srv.sha256() {
		t.Errorf("imported image sha256 %s, served %s", got, srv.sha256())
	}
}

func testPrivateCA(t *testing.T, env *demo.Env, a admin) {
	srv := newTrustServer(t, true, "")
	close(srv.gate)
	key := trustVM(t, env, a, "trust-ca-"+strings.ToLower(string(env.Cluster.Variant)))
	// Without the CA: InsertMedia is refused at once (sushy's
	// BadRequestError) with the TLS error and what to do; nothing recorded.
	if why := runTrustStepsRefused(t, env, key, "insert="+srv.url+"/a.iso"); !strings.Contains(why, "400") ||
		!strings.Contains(why, "x509: certificate signed by unknown authority") || !strings.Contains(why, "POST its CA to the slot's Certificates") {
		t.Fatalf("without the CA: sushy got %q; want 400 with the TLS error and what to do", why)
	}
	vm, err := a.dyn.Resource(kubevirt.VirtualMachines).Namespace(key.Namespace).Get(t.Context(), key.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sl := vmcheck.MustSlot(t, vm, media.DefaultSlot); sl.InsertID != "" {
		t.Fatalf("without the CA: slot %+v recorded, want nothing", sl)
	}
	got := runTrustSteps(t, env, key, nil, "addcert="+srv.caFile(t), "insert="+srv.url+"/a.iso")
	if !got.Verify || len(got.Certificates) != 1 || got.Subjects[0] != srv.ca.Cert.Subject.CommonName {
		t.Errorf("sushy saw %+v: want VerifyCertificate true and the CA posted", got)
	}
	wantImported(t, env, waitFinished(t, a, key), srv)
	cm, err := a.kube.CoreV1().ConfigMaps(key.Namespace).Get(t.Context(), media.TrustConfigMapName(key, media.DefaultSlot), metav1.GetOptions{})
	if err != nil || len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].Name != key.Name {
		t.Errorf("trust ConfigMap: err %v, owners %v; want owned by the VM", err, cm.OwnerReferences)
	}
	if got := runTrustSteps(t, env, key, nil, "delcerts"); len(got.Certificates) != 0 {
		t.Errorf("after deleting: certificates %v", got.Certificates)
	}
}

func testBridgeBundle(t *testing.T, env *demo.Env, a admin) {
	srv := newTrustServer(t, true, "")
	close(srv.gate)
	cms := a.kube.CoreV1().ConfigMaps(env.Cluster.BridgeNamespace)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: demo.ImageCAConfigMap}, Data: map[string]string{media.DefaultCABundleKey: srv.ca.PEM}}
	if _, err := cms.Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cms.Delete(t.Context(), demo.ImageCAConfigMap, metav1.DeleteOptions{}) })
	key := trustVM(t, env, a, "trust-bundle-"+strings.ToLower(string(env.Cluster.Variant)))
	runTrustSteps(t, env, key, nil, "insert="+srv.url+"/a.iso")
	wantImported(t, env, waitFinished(t, a, key), srv)
}

func testVerifyOff(t *testing.T, env *demo.Env, a admin) {
	srv := newTrustServer(t, true, "")
	close(srv.gate)
	key := trustVM(t, env, a, "trust-insecure-"+strings.ToLower(string(env.Cluster.Variant)))
	got := runTrustSteps(t, env, key, nil, "verify=false", "insert="+srv.url+"/a.iso")
	if got.Verify {
		t.Errorf("sushy reads VerifyCertificate %v after setting false", got.Verify)
	}
	wantImported(t, env, waitFinished(t, a, key), srv)
}

// testBasicAuth: without credentials the import fails saying so; with
// UserName/Password it imports, and the password is in no VM, pod spec,
// task or log line while and after it does.
func testBasicAuth(t *testing.T, env *demo.Env, a admin) {
	password := "e2e-S3cret-" + strings.ToLower(string(env.Cluster.Variant)) + "-9d1c4b"
	srv := newTrustServer(t, false, password)
	key := trustVM(t, env, a, "trust-auth-"+strings.ToLower(string(env.Cluster.Variant)))
	runTrustSteps(t, env, key, nil, "insert="+srv.url+"/a.iso")
	failed := waitFinished(t, a, key)
	if res, _ := taskResolution(t, env, failed); failed.Phase != system.MediaFailed || !strings.Contains(res, "401") || !strings.Contains(res, "give UserName and Password") {
		t.Fatalf("without credentials: slot %+v, task resolution %q", failed, res)
	}

	runTrustSteps(t, env, key, []string{imagePassEnv + "=" + password}, "eject", "insert="+srv.url+"/gated.iso,"+imageUser+","+imagePassEnv)
	var pods []corev1.Pod
	waitFor(t, "import pod of "+key.String(), func() (bool, string) {
		l, err := a.kube.CoreV1().Pods(key.Namespace).List(t.Context(), metav1.ListOptions{LabelSelector: media.LabelComponent + "=" + media.ComponentImporter})
		if err != nil {
			return false, err.Error()
		}
		pods = nil
		for _, p := range l.Items {
			if strings.HasPrefix(p.Name, media.ClaimName(key, media.DefaultSlot)+"-") {
				pods = append(pods, p)
			}
		}
		return len(pods) > 0, fmt.Sprintf("%d pods", len(l.Items))
	})
	importing := vmcheck.MustSlot(t, mustVM(t, a, key), media.DefaultSlot)
	if importing.ImportSecret == "" || !importing.Credentials {
		t.Fatalf("importing slot %+v: want an import Secret with credentials", importing)
	}
	sec, err := a.kube.CoreV1().Secrets(key.Namespace).Get(t.Context(), importing.ImportSecret, metav1.GetOptions{})
	if err != nil || string(sec.Data[download.CredentialPasswordKey]) != password {
		t.Fatalf("import Secret: err %v; want it to hold the password", err)
	}
	_, task := taskResolution(t, env, importing)
	podJSON, _ := json.Marshal(pods)
	taskJSON, _ := json.Marshal(task)

	close(srv.gate)
	done := waitFinished(t, a, key)
	wantImported(t, env, done, srv)
	if _, err := a.kube.CoreV1().Secrets(key.Namespace).Get(t.Context(), importing.ImportSecret, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("import Secret after the import: err %v, want NotFound", err)
	}
	after := mustVM(t, a, key)
	annotations, _ := json.Marshal(after.GetAnnotations())
	_, doneTask := taskResolution(t, env, done)
	doneTaskJSON, _ := json.Marshal(doneTask)
	if !strings.Contains(string(doneTaskJSON), `\"Password\":\"******\"`) {
		t.Errorf("task payload %s: want the password redacted", doneTaskJSON)
	}
	if !strings.Contains(capturedLogs.String(), srv.url+"/gated.iso") {
		t.Fatalf("the captured logs lack the insert of %s/gated.iso: the log check below would prove nothing", srv.url)
	}
	for what, text := range map[string]string{
		"import pod spec": string(podJSON), "task while importing": string(taskJSON), "task when done": string(doneTaskJSON),
		"VM annotations": string(annotations), "logs": capturedLogs.String(),
	} {
		if strings.Contains(text, password) {
			t.Errorf("the %s hold the password", what)
		}
	}
}

func mustVM(t *testing.T, a admin, key system.Key) *unstructured.Unstructured {
	t.Helper()
	vm, err := a.dyn.Resource(kubevirt.VirtualMachines).Namespace(key.Namespace).Get(t.Context(), key.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return vm
}
