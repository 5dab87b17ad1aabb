package deploy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/bcrypt"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/demo"
	"github.com/redfish-bridge/redfish-bridge/inventory"
	"github.com/redfish-bridge/redfish-bridge/service"
	"github.com/redfish-bridge/redfish-bridge/sim"
	"github.com/redfish-bridge/redfish-bridge/testcluster"
)

// The release under test: namespaced mode, one Redfish user.
const (
	release   = "rb"
	fullname  = "rb-redfish-bridge"
	releaseNS = "bm-system"
	vmNS      = "vms"
	vmName    = "node-0"
	user      = "ironic"
	password  = "install-test-password"
)

// installed is a cluster with the chart installed and clients for it.
type installed struct {
	cluster *testcluster.Cluster
	admin   kubernetes.Interface
	// sa is the chart's ServiceAccount, by a TokenRequest token.
	sa     *rest.Config
	config map[string]any // the chart's --config YAML
}

func TestInstall(t *testing.T) {
	began := time.Now()
	env := install(t)
	t.Logf("cluster up and chart installed in %s", time.Since(began).Round(time.Millisecond))

	t.Run("provisioning cycle with the chart's RBAC", func(t *testing.T) {
		start := time.Now()
		provisionCycle(t, env)
		t.Logf("cycle took %s", time.Since(start).Round(time.Millisecond))
	})
	t.Run("every granted verb is needed", func(t *testing.T) {
		start := time.Now()
		everyVerbNeeded(t, env)
		t.Logf("rule removals took %s", time.Since(start).Round(time.Millisecond))
	})
	t.Run("upgrade to all namespaces keeps the generated secrets", func(t *testing.T) {
		start := time.Now()
		upgradeClusterWide(t, env)
		t.Logf("upgrade took %s", time.Since(start).Round(time.Millisecond))
	})
}

// upgradeClusterWide upgrades the release to serve every namespace: the
// workload rules move from Roles to a ClusterRole, and the session key and
// self-signed certificate the chart generated stay as they were.
func upgradeClusterWide(t *testing.T, env *installed) {
	ctx := t.Context()
	secrets := env.admin.CoreV1().Secrets(releaseNS)
	generated := func() map[string][]byte {
		out := map[string][]byte{}
		for _, name := range []string{fullname + "-session-key", fullname + "-tls"} {
			s, err := secrets.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range s.Data {
				out[name+"/"+k] = v
			}
		}
		return out
	}
	before := generated()
	mustHelm(t, "upgrade", release, chartDir, "--namespace", releaseNS, "--kubeconfig", env.cluster.Kubeconfig,
		"--reuse-values", "--set-json", "watchNamespaces=[]")
	if diff := cmp.Diff(before, generated()); diff != "" {
		t.Errorf("generated secrets changed on upgrade (-before +after):\n%s", diff)
	}
	if _, err := env.admin.RbacV1().Roles(vmNS).Get(ctx, fullname, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Role %s/%s after upgrade to all namespaces: %v, want NotFound", vmNS, fullname, err)
	}
	kube, err := kubernetes.NewForConfig(env.sa)
	if err != nil {
		t.Fatal(err)
	}
	listDefault := func(ctx context.Context) error {
		_, err := kube.CoreV1().Pods(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
		return err
	}
	waitAuthz(t, grant{"", "pods", "list"}, listDefault, false)
}

// install starts a test cluster, helm-installs the chart and returns a
// client acting as the chart's ServiceAccount.
func install(t *testing.T) *installed {
	t.Helper()
	ctx := t.Context()
	cluster := testcluster.ForTest(t, crds.Stock)
	for _, ns := range []string{releaseNS, vmNS} {
		if err := cluster.CreateNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	mustHelm(t, "install", release, chartDir, "--namespace", releaseNS, "--kubeconfig", cluster.Kubeconfig,
		"--set", "watchNamespaces={"+vmNS+"}",
		"--set", "users.list[0].name="+user,
		"--set", "users.list[0].passwordHash="+string(hash),
		"--set", "users.list[0].namespaces={"+vmNS+"}",
	)
	t.Logf("helm install took %s", time.Since(start).Round(time.Millisecond))
	admin, err := kubernetes.NewForConfig(cluster.Admin)
	if err != nil {
		t.Fatal(err)
	}
	env := &installed{cluster: cluster, admin: admin}
	checkObjects(t, env)
	env.sa = serviceAccountConfig(t, env)
	return env
}

// checkObjects asserts the release created what the chart renders.
func checkObjects(t *testing.T, env *installed) {
	t.Helper()
	ctx := t.Context()
	core, rbac := env.admin.CoreV1(), env.admin.RbacV1()
	get := map[string]func() error{
		"ServiceAccount " + fullname: func() error {
			_, err := core.ServiceAccounts(releaseNS).Get(ctx, fullname, metav1.GetOptions{})
			return err
		},
		"Deployment " + fullname: func() error {
			_, err := env.admin.AppsV1().Deployments(releaseNS).Get(ctx, fullname, metav1.GetOptions{})
			return err
		},
		"Service " + fullname: func() error { _, err := core.Services(releaseNS).Get(ctx, fullname, metav1.GetOptions{}); return err },
		"PodDisruptionBudget " + fullname: func() error {
			_, err := env.admin.PolicyV1().PodDisruptionBudgets(releaseNS).Get(ctx, fullname, metav1.GetOptions{})
			return err
		},
		"Secret " + fullname + "-users": func() error {
			_, err := core.Secrets(releaseNS).Get(ctx, fullname+"-users", metav1.GetOptions{})
			return err
		},
		"Secret " + fullname + "-tls": func() error {
			_, err := core.Secrets(releaseNS).Get(ctx, fullname+"-tls", metav1.GetOptions{})
			return err
		},
		"ClusterRole " + fullname + "-crd": func() error { _, err := rbac.ClusterRoles().Get(ctx, fullname+"-crd", metav1.GetOptions{}); return err },
		"ClusterRoleBinding " + fullname + "-crd": func() error {
			_, err := rbac.ClusterRoleBindings().Get(ctx, fullname+"-crd", metav1.GetOptions{})
			return err
		},
		"Role " + vmNS + "/" + fullname:        func() error { _, err := rbac.Roles(vmNS).Get(ctx, fullname, metav1.GetOptions{}); return err },
		"RoleBinding " + vmNS + "/" + fullname: func() error { _, err := rbac.RoleBindings(vmNS).Get(ctx, fullname, metav1.GetOptions{}); return err },
		"Role " + fullname + "-self": func() error {
			_, err := rbac.Roles(releaseNS).Get(ctx, fullname+"-self", metav1.GetOptions{})
			return err
		},
		"RoleBinding " + fullname + "-self": func() error {
			_, err := rbac.RoleBindings(releaseNS).Get(ctx, fullname+"-self", metav1.GetOptions{})
			return err
		},
	}
	for what, fn := range get {
		if err := fn(); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	// Namespaced mode: no cluster-wide grant on VMs.
	if _, err := rbac.ClusterRoles().Get(ctx, fullname, metav1.GetOptions{}); err == nil {
		t.Errorf("ClusterRole %s exists with watchNamespaces set", fullname)
	}
	key, err := core.Secrets(releaseNS).Get(ctx, fullname+"-session-key", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(key.Data["session-key"]); n < 16 {
		t.Errorf("session key holds %d bytes, want >= 16", n)
	}
	cm, err := core.ConfigMaps(releaseNS).Get(ctx, fullname, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(cm.Data["config.yaml"]), &env.config); err != nil {
		t.Fatalf("chart config.yaml: %v", err)
	}
}

// serviceAccountConfig returns a rest.Config authenticating as the chart's
// ServiceAccount with a TokenRequest token, and nothing else.
func serviceAccountConfig(t *testing.T, env *installed) *rest.Config {
	t.Helper()
	exp := int64(3600)
	tr, err := env.admin.CoreV1().ServiceAccounts(releaseNS).CreateToken(t.Context(), fullname,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for ServiceAccount %s/%s: %v", releaseNS, fullname, err)
	}
	cfg := rest.AnonymousClientConfig(env.cluster.Admin)
	cfg.BearerToken = tr.Status.Token
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("whoami with the ServiceAccount token: %v", err)
	}
	if got, want := review.Status.UserInfo.Username, "system:serviceaccount:"+releaseNS+":"+fullname; got != want {
		t.Fatalf("token authenticates as %q, want %q", got, want)
	}
	return cfg
}

// configString reads a string setting of the chart's --config YAML.
func (env *installed) configString(t *testing.T, key string) string {
	t.Helper()
	s, ok := env.config[key].(string)
	if !ok || s == "" {
		t.Fatalf("chart config.yaml: %q = %v, want a string", key, env.config[key])
	}
	return s
}

// provisionCycle runs the bridge in-process as the chart's ServiceAccount,
// configured from the chart's ConfigMap, and drives Ironic's virtual-media
// boot over HTTP: insert the ISO, boot from CD once, power on; then a
// session login and logout (which creates the revocations ConfigMap).
func provisionCycle(t *testing.T, env *installed) {
	ctx := t.Context()
	log, forbidden := watchForbidden(t)
	simulator, err := sim.New(env.cluster.Admin, sim.Options{Namespaces: []string{vmNS}, DataDir: t.TempDir(), Log: log})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	simDone := make(chan error, 1)
	go func() { simDone <- simulator.Run(runCtx) }()
	defer func() {
		stop()
		<-simDone
	}()

	adminDyn, err := dynamic.NewForConfig(env.cluster.Admin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adminDyn.Resource(inventory.VMResource).Namespace(vmNS).Create(ctx, demo.SampleVM(vmNS, vmName), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	images, err := demo.StartImageServer([]string{"boot.iso"}, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer images.Close()

	if got := env.configString(t, "namespaces"); got != vmNS {
		t.Fatalf("chart config namespaces = %q, want %q", got, vmNS)
	}
	bridge, err := service.Start(runCtx, service.Config{
		Kube:                 env.sa,
		Namespaces:           []string{vmNS},
		Namespace:            releaseNS,
		UsersSecret:          env.configString(t, "users-secret"),
		SessionKeySecret:     env.configString(t, "session-key-secret"),
		RevocationsConfigMap: env.configString(t, "sessions-configmap"),
		Listen:               "127.0.0.1:0",
		ServiceUUID:          env.configString(t, "service-uuid"),
		Version:              "chart-test",
		ImporterImage:        env.configString(t, "importer-image"),
		MetricsListen:        "127.0.0.1:0",
		Leader:               service.LeaderElection{LeaseName: env.configString(t, "lease-name"), Identity: "chart-test"},
		Log:                  log,
	})
	if err != nil {
		t.Fatalf("bridge as the chart's ServiceAccount: %v", err)
	}
	defer func() {
		stop()
		if err := bridge.Wait(); err != nil {
			t.Errorf("bridge: %v", err)
		}
	}()
	// The chart's probes: liveness /healthz, readiness /readyz.
	for _, path := range []string{"/healthz", "/readyz"} {
		waitHTTPOK(t, "http://"+bridge.MetricsAddr+path)
	}
	c := &client{base: "http://" + bridge.Addr}
	system := "/redfish/v1/Systems/" + vmNS + "." + vmName
	c.must(t, http.MethodPost, system+"/VirtualMedia/cd0/Actions/VirtualMedia.InsertMedia", map[string]any{"Image": images.URL + "/images/boot.iso"})
	c.must(t, http.MethodPatch, system, map[string]any{"Boot": map[string]any{"BootSourceOverrideTarget": "Cd", "BootSourceOverrideEnabled": "Once"}})
	c.must(t, http.MethodPost, system+"/Actions/ComputerSystem.Reset", map[string]any{"ResetType": "On"})

	type state struct{ Power, Media string }
	want := state{Power: "On", Media: "Enabled/OK"}
	var got state
	deadline := time.Now().Add(90 * time.Second)
	for got != want {
		if time.Now().After(deadline) {
			t.Fatalf("after insert, boot Cd once, power on: %+v, want %+v", got, want)
		}
		time.Sleep(100 * time.Millisecond)
		var sys, cd struct {
			PowerState string
			Status     struct{ State, Health string }
		}
		c.get(t, system, &sys)
		c.get(t, system+"/VirtualMedia/cd0", &cd)
		got = state{Power: sys.PowerState, Media: cd.Status.State + "/" + cd.Status.Health}
	}
	checkImported(t, adminDyn, simulator, images)
	// The reconcilers ran as the leader: the Lease exists.
	if _, err := env.admin.CoordinationV1().Leases(releaseNS).Get(ctx, env.configString(t, "lease-name"), metav1.GetOptions{}); err != nil {
		t.Errorf("leader Lease: %v", err)
	}

	// Logout records the session in the revocations ConfigMap (create).
	tok, loc := c.login(t)
	c.token = tok
	c.must(t, http.MethodDelete, loc, nil)
	if _, err := env.admin.CoreV1().ConfigMaps(releaseNS).Get(ctx, env.configString(t, "sessions-configmap"), metav1.GetOptions{}); err != nil {
		t.Errorf("sessions ConfigMap after logout: %v", err)
	}
	if seen := forbidden.seen(); len(seen) > 0 {
		t.Errorf("the bridge was refused %d call(s) under the chart's RBAC:\n%s", len(seen), strings.Join(seen, "\n"))
	}
}

// checkImported asserts the VM's CD-ROM volume is a PVC holding exactly the
// image served.
func checkImported(t *testing.T, dyn dynamic.Interface, simulator *sim.Simulator, images *demo.ImageServer) {
	t.Helper()
	vm, err := dyn.Resource(inventory.VMResource).Namespace(vmNS).Get(t.Context(), vmName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	volumes, _, _ := unstructured.NestedSlice(vm.Object, "spec", "template", "spec", "volumes")
	var claims []string
	for _, v := range volumes {
		if name, ok, _ := unstructured.NestedString(v.(map[string]any), "persistentVolumeClaim", "claimName"); ok {
			claims = append(claims, name)
		}
	}
	if len(claims) != 1 {
		t.Fatalf("VM volumes %v: want one PVC volume", volumes)
	}
	data, err := os.ReadFile(simulator.ImagePath(vmNS, claims[0]))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if diff := cmp.Diff(images.SHA256["boot.iso"], hex.EncodeToString(sum[:])); diff != "" {
		t.Errorf("imported image checksum (-served +imported):\n%s", diff)
	}
}

// waitHTTPOK polls url until it answers 200 (10 s at most).
func waitHTTPOK(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %v %v", url, resp, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// client speaks Redfish with Basic auth, or a session token once set.
type client struct {
	base  string
	token string
}

func (c *client) do(t *testing.T, method, path string, body any) (*http.Response, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, c.base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("X-Auth-Token", c.token)
	} else {
		req.SetBasicAuth(user, password)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp, out
}

// must fails the test unless the request succeeds (2xx).
func (c *client) must(t *testing.T, method, path string, body any) {
	t.Helper()
	resp, out := c.do(t, method, path, body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %s\n%s", method, path, resp.Status, out)
	}
}

func (c *client) get(t *testing.T, path string, into any) {
	t.Helper()
	resp, out := c.do(t, http.MethodGet, path, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", path, resp.Status, out)
	}
	if err := json.Unmarshal(out, into); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// login opens a session and returns its token and URI.
func (c *client) login(t *testing.T) (token, location string) {
	t.Helper()
	resp, out := c.do(t, http.MethodPost, "/redfish/v1/SessionService/Sessions", map[string]any{"UserName": user, "Password": password})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("login: %s\n%s", resp.Status, out)
	}
	token, location = resp.Header.Get("X-Auth-Token"), resp.Header.Get("Location")
	if token == "" || !strings.HasPrefix(location, "/redfish/v1/SessionService/Sessions/") {
		t.Fatalf("login: token %q, Location %q", token, location)
	}
	return token, location
}
