package deploy

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/bcrypt"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
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
	t.Run("the binary serves with the chart's config", func(t *testing.T) {
		start := time.Now()
		serveBinary(t, env)
		t.Logf("build and serve took %s", time.Since(start).Round(time.Millisecond))
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
		// All namespaces: the per-namespace CDI importer NetworkPolicy
		// cannot follow, so it goes and the bridge imports with its pod.
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
	waitAuthz(t, grant{"", "pods", "list", metav1.NamespaceDefault}, listDefault, false)
}

// install starts a test cluster, helm-installs the chart and returns a
// client acting as the chart's ServiceAccount.
func install(t *testing.T) *installed {
	t.Helper()
	ctx := t.Context()
	cluster := testcluster.ForTestWith(t, testcluster.Options{Variant: crds.Stock, VirtController: true})
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
		"--set", "imageCA.configMap=metal3-ironic-ca",
		"--set", "cdiImporterNetworkPolicy.enabled=true",
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
		"NetworkPolicy " + vmNS + "/" + fullname + "-cdi-importer": func() error {
			_, err := env.admin.NetworkingV1().NetworkPolicies(vmNS).Get(ctx, fullname+"-cdi-importer", metav1.GetOptions{})
			return err
		},
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
