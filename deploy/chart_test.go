package deploy

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from helm template")

// testHash is a bcrypt hash (of "test"), shaped as the schema demands.
const testHash = "$2a$10$9L492FSgxrXy6U/7KloSBOhwqRIPOAKg0MMrzYUd8xlFI93gUirxK"

// variants are the value sets golden-tested and linted.
var variants = []struct {
	name string
	args []string
}{
	{name: "default"},
	{name: "namespaced-certmanager-servicemonitor-imageca", args: []string{
		"--set", "imageCA.configMap=metal3-ironic-ca",
		"--set", "watchNamespaces={vms-a,vms-b}",
		"--set", "tls.certManager.enabled=true",
		"--set", "tls.certManager.issuerRef.name=ca-issuer",
		"--set", "tls.certManager.issuerRef.kind=ClusterIssuer",
		"--set", "metrics.serviceMonitor.enabled=true",
		"--set", "users.list[0].name=ironic",
		"--set", "users.list[0].passwordHash=" + testHash,
		"--set", "users.list[0].namespaces={vms-a}",
		"--set", "users.list[0].selector=role=ironic",
		"--set", "users.list[1].name=admin",
		"--set", "users.list[1].passwordHash=" + testHash,
		"--set", "users.list[1].namespaces={*}",
		"--set", "users.list[2].name=viewer",
		"--set", "users.list[2].passwordHash=" + testHash,
		"--set", "users.list[2].namespaces={vms-a,vms-b}",
		"--set", "users.list[2].role=ReadOnly",
		"--set", "ingress.enabled=true",
		"--set", "ingress.hosts={redfish.example.com}",
		"--set", "route.enabled=true",
		"--set", "cdiImporterNetworkPolicy.enabled=true",
		"--set", "cdiImporterNetworkPolicy.allow={192.168.10.0/24}",
		"--set", "sshConsole.enabled=true",
	}},
}

// generated matches values the chart makes up at render time (session key,
// self-signed certificate); the goldens hold a placeholder.
var generated = regexp.MustCompile(`(?m)^(  (?:session-key|image-cache-key|ssh_host_key|tls\.crt|tls\.key): )"[A-Za-z0-9+/=]+"$`)

func TestLint(t *testing.T) {
	for _, v := range variants {
		for _, strict := range []bool{false, true} {
			name := v.name
			args := append([]string{"lint", chartDir}, v.args...)
			if strict {
				name += "/strict"
				args = append(args, "--strict")
			}
			t.Run(name, func(t *testing.T) {
				out := mustHelm(t, args...)
				if !strings.Contains(out, "1 chart(s) linted, 0 chart(s) failed") {
					t.Errorf("helm lint output:\n%s", out)
				}
			})
		}
	}
}

func TestTemplateGolden(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			args := append([]string{"template", "rb", chartDir, "--namespace", "bm"}, v.args...)
			got := generated.ReplaceAllString(mustHelm(t, args...), `$1"GENERATED"`)
			golden := filepath.Join("testdata", v.name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("helm template %s (-golden +got):\n%s", v.name, diff)
			}
		})
	}
}

// TestValuesRejected checks that values.schema.json and the chart's own
// checks refuse bad values, naming the offending one.
func TestValuesRejected(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"replicas not a number", []string{"--set-string", "replicaCount=two"}, "replicaCount"},
		{"pull policy enum", []string{"--set", "image.pullPolicy=Sometimes"}, "pullPolicy"},
		{"unknown top-level key", []string{"--set", "replicas=2"}, "replicas"},
		{"plain password", []string{"--set", "users.list[0].name=ironic", "--set", "users.list[0].passwordHash=hunter2", "--set", "users.list[0].namespaces={vms}"}, "passwordHash"},
		{"user without namespaces", []string{"--set", "users.list[0].name=ironic", "--set", "users.list[0].passwordHash=" + testHash}, "namespaces"},
		{"unknown role", []string{"--set", "users.list[0].name=ironic", "--set", "users.list[0].passwordHash=" + testHash, "--set", "users.list[0].namespaces={vms}", "--set", "users.list[0].role=Administrator"}, "role"},
		{"bad namespace name", []string{"--set", "watchNamespaces={Not_A_Namespace}"}, "watchNamespaces"},
		{"root pod", []string{"--set", "podSecurityContext.runAsNonRoot=false"}, "runAsNonRoot"},
		{"bad service UUID", []string{"--set", "serviceUUID=not-a-uuid"}, "serviceUUID"},
		{"max image size not a quantity", []string{"--set", "maxImageSize=lots"}, "maxImageSize"},
		{"image claim size not a quantity", []string{"--set", "imageClaimSize=-8Gi"}, "imageClaimSize"},
		{"CDI import without watchNamespaces behind no NetworkPolicy", []string{"--set", "extraConfig.import-method=cdi"}, "extraConfig.import-method cdi needs watchNamespaces while cdiImporterNetworkPolicy.enabled"},
		{"auto import without watchNamespaces behind no NetworkPolicy", []string{"--set", "extraConfig.import-method=auto"}, "extraConfig.import-method auto needs watchNamespaces"},
		{"CDI importer NetworkPolicy CIDR", []string{"--set", "cdiImporterNetworkPolicy.allow={images.example}"}, "cdiImporterNetworkPolicy"},
		{"image cache key Secret name", []string{"--set", "imageCache.existingKeySecret=Not_A_Name"}, "existingKeySecret"},
		{"issuer kind enum", []string{"--set", "tls.certManager.issuerRef.kind=Vault"}, "kind"},
		{"cert-manager without issuer", []string{"--set", "tls.certManager.enabled=true"}, "issuerRef.name is required"},
		{"two TLS sources", []string{"--set", "tls.existingSecret=x", "--set", "tls.certManager.enabled=true", "--set", "tls.certManager.issuerRef.name=ca"}, "only one of tls.existingSecret"},
		{"replicas without leader election", []string{"--set", "replicaCount=3", "--set", "leaderElection.enabled=false"}, "replicaCount 3 needs leaderElection.enabled"},
		{"two user sources", []string{"--set", "users.existingSecret=x", "--set", "users.list[0].name=a", "--set", "users.list[0].passwordHash=" + testHash, "--set", "users.list[0].namespaces={*}"}, "only one of users.existingSecret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"template", "rb", chartDir, "--namespace", "bm"}, tt.args...)
			out, errOut, err := helm(t, args...)
			if err == nil {
				t.Fatalf("helm template accepted %v:\n%.400s", tt.args, out)
			}
			if !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("helm template error does not name %q:\n%s", tt.wantErr, errOut)
			}
		})
	}
}

// importMethodPod is the config line making the bridge import with its pod.
var importMethodPod = regexp.MustCompile(`(?m)^    import-method: pod$`)

// TestCDIImportsBehindNetworkPolicy: by default no CDI importer pod the
// bridge starts runs without the chart's NetworkPolicy (CDI's importer
// checks no address policy: DNS rebinding and redirects reach the metadata
// service): with watchNamespaces each gets one, without them the bridge
// imports with its own pod; enabled=false opts out.
func TestCDIImportsBehindNetworkPolicy(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		policies  int  // NetworkPolicies rendered
		importPod bool // import-method: pod in the config
	}{
		{"default: every namespace, the pod imports", nil, 0, true},
		{"watchNamespaces: a NetworkPolicy in each", []string{"--set", "watchNamespaces={vms-a,vms-b}"}, 2, false},
		{"every namespace, import-method pod given", []string{"--set", "extraConfig.import-method=pod"}, 0, true},
		{"opted out, every namespace", []string{"--set", "cdiImporterNetworkPolicy.enabled=false"}, 0, false},
		{"opted out, watchNamespaces", []string{"--set", "cdiImporterNetworkPolicy.enabled=false", "--set", "watchNamespaces={vms-a}"}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := mustHelm(t, append([]string{"template", "rb", chartDir, "--namespace", "bm"}, tt.args...)...)
			got := struct {
				Policies  int
				ImportPod bool
			}{strings.Count(out, "\nkind: NetworkPolicy\n"), importMethodPod.MatchString(out)}
			want := struct {
				Policies  int
				ImportPod bool
			}{tt.policies, tt.importPod}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("helm template %v (-want +got):\n%s", tt.args, diff)
			}
		})
	}
}

// TestReplicas: replicas run under leader election (one replica may run
// without it), and a PodDisruptionBudget keeps one of several serving
// through a drain; with one replica there is none (it would block every
// node drain).
func TestReplicas(t *testing.T) {
	tests := []struct {
		name string
		args []string
		pdbs int  // PodDisruptionBudgets rendered
		elec bool // leader-elect: true in the config
	}{
		{"default: two", nil, 1, true},
		{"three", []string{"--set", "replicaCount=3"}, 1, true},
		{"one", []string{"--set", "replicaCount=1"}, 0, true},
		{"one without leader election", []string{"--set", "replicaCount=1", "--set", "leaderElection.enabled=false"}, 0, false},
		{"three, PDB off", []string{"--set", "replicaCount=3", "--set", "podDisruptionBudget.enabled=false"}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := mustHelm(t, append([]string{"template", "rb", chartDir, "--namespace", "bm"}, tt.args...)...)
			type rendered struct {
				PDBs        int
				LeaderElect bool
			}
			got := rendered{strings.Count(out, "\nkind: PodDisruptionBudget\n"), leaderElect.MatchString(out)}
			if diff := cmp.Diff(rendered{tt.pdbs, tt.elec}, got); diff != "" {
				t.Errorf("helm template %v (-want +got):\n%s", tt.args, diff)
			}
		})
	}
}

// leaderElect is the config line turning leader election on.
var leaderElect = regexp.MustCompile(`(?m)^    leader-elect: true$`)
