package apply

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// env is one test's view of a running cluster: the bridge's dynamic
// client, an admin one for outside writers, and a namespace of its own.
type env struct {
	cluster *testcluster.Cluster
	bridge  dynamic.Interface
	admin   dynamic.Interface
	mode    Mode
	ns      string
}

var nsSeq atomic.Int64

// forEachVariant starts one cluster per CRD variant and runs f in it.
func forEachVariant(t *testing.T, f func(t *testing.T, c *testcluster.Cluster)) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs kube-apiserver")
	}
	for _, v := range crds.Variants {
		t.Run(string(v), func(t *testing.T) {
			f(t, testcluster.ForTest(t, v))
		})
	}
}

// newEnv makes a fresh namespace and clients; the mode is detected the way
// the server does it.
func newEnv(t *testing.T, c *testcluster.Cluster) *env {
	t.Helper()
	e := &env{cluster: c, ns: fmt.Sprintf("t%d", nsSeq.Add(1))}
	if err := c.CreateNamespace(t.Context(), e.ns); err != nil {
		t.Fatal(err)
	}
	var err error
	if e.bridge, err = dynamic.NewForConfig(c.Bridge); err != nil {
		t.Fatal(err)
	}
	if e.admin, err = dynamic.NewForConfig(c.Admin); err != nil {
		t.Fatal(err)
	}
	if e.mode, err = DetectMode(t.Context(), e.bridge); err != nil {
		t.Fatal(err)
	}
	return e
}

// createVM creates the fixture VM as its author would (manager test-author).
func (e *env) createVM(t *testing.T, name string) system.Key {
	t.Helper()
	u := baseVM(t)
	u.SetName(name)
	u.SetNamespace(e.ns)
	u.SetResourceVersion("")
	if _, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(e.ns).Create(t.Context(), u, metav1.CreateOptions{FieldManager: "test-author"}); err != nil {
		t.Fatalf("create VM: %v", err)
	}
	return system.Key{Namespace: e.ns, Name: name}
}

// get reads the VM live.
func (e *env) get(t *testing.T, key system.Key) *unstructured.Unstructured {
	t.Helper()
	u, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(key.Namespace).Get(t.Context(), key.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get VM: %v", err)
	}
	return u
}

// ownedBy returns a manager's leaf paths on the live VM.
func (e *env) ownedBy(t *testing.T, key system.Key, manager string) []string {
	t.Helper()
	owned, err := Owned(e.get(t, key))
	if err != nil {
		t.Fatal(err)
	}
	return Paths(owned[manager])
}

// diskOrders returns name -> bootOrder (0 = unset) and whether each disk is
// a CD-ROM, from the live VM.
func (e *env) disks(t *testing.T, key system.Key) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range list(e.get(t, key), kubevirt.Disks) {
		kind := "disk"
		if _, ok := d["cdrom"]; ok {
			kind = "cdrom"
		}
		out[kubevirt.NameOf(d)] = fmt.Sprintf("%s/%d", kind, kubevirt.BootOrderOf(d))
	}
	return out
}

func (e *env) volumes(t *testing.T, key system.Key) []string {
	t.Helper()
	var out []string
	for _, v := range list(e.get(t, key), kubevirt.Volumes) {
		out = append(out, kubevirt.NameOf(v))
	}
	return out
}

// annotationPath is how Paths spells an annotation leaf.
func annotationPath(key string) string {
	return ".metadata.annotations." + key
}

func elem(listPath []string, name string, field ...string) string {
	p := "." + strings.Join(listPath, ".") + fmt.Sprintf(`[name="%s"]`, name)
	for _, f := range field {
		p += "." + f
	}
	return p
}

func path(p []string) string { return "." + strings.Join(p, ".") }

func mustPath(t *testing.T, s string) fieldpath.Path {
	t.Helper()
	var parts []any
	for _, f := range strings.Split(strings.TrimPrefix(s, "."), ".") {
		parts = append(parts, f)
	}
	p, err := fieldpath.MakePath(parts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSecureBoot turns Secure Boot on then off through redfish-boot on a
// real kube-apiserver, once per CRD variant, and checks the VM's firmware
// and SMM fields and that redfish-boot owns exactly what the ownership
// table in doc.go says.
func TestSecureBoot(t *testing.T) {
	forEachVariant(t, func(t *testing.T, c *testcluster.Cluster) {
		t.Run("on then off", func(t *testing.T) { testSecureBootOnOff(t, newEnv(t, c)) })
		t.Run("author's SMM stays", func(t *testing.T) { testSecureBootAuthorSMM(t, newEnv(t, c)) })
	})
}

var (
	secureBootPath = append(append([]string(nil), kubevirt.Bootloader...), "efi", "secureBoot")
	smmEnabledPath = append(append([]string(nil), kubevirt.SMM...), "enabled")
)

// firmwareFields returns efi.secureBoot and features.smm.enabled of the
// live VM, "-" for absent.
func (e *env) firmwareFields(t *testing.T, key system.Key) [2]string {
	t.Helper()
	u := e.get(t, key)
	var out [2]string
	for i, p := range [][]string{secureBootPath, smmEnabledPath} {
		out[i] = "-"
		if v, ok, _ := unstructured.NestedBool(u.Object, p...); ok {
			out[i] = fmt.Sprint(v)
		}
	}
	return out
}

func testSecureBootOnOff(t *testing.T, e *env) {
	ctx := t.Context()
	w := New(e.bridge, nil, e.mode, Options{})
	key := e.createVM(t, "vm-sb")
	bootAnn := annotationPath(AnnotationBoot)
	steps := []struct {
		name      string
		o         system.BootOverride
		wantErr   bool
		wantFW    [2]string // efi.secureBoot, smm.enabled
		wantOwned []string
	}{
		{"UEFI mode", system.BootOverride{Mode: system.BootUEFI},
			false, [2]string{"false", "-"}, []string{bootAnn, path(secureBootPath)}},
		{"secure boot on", system.BootOverride{Mode: system.BootUEFI, SecureBoot: system.SecureBootEnabled},
			false, [2]string{"true", "true"}, []string{bootAnn, path(smmEnabledPath), path(secureBootPath)}},
		{"secure boot off", system.BootOverride{Mode: system.BootUEFI, SecureBoot: system.SecureBootDisabled},
			false, [2]string{"false", "-"}, []string{bootAnn, path(secureBootPath)}},
	}
	for _, s := range steps {
		_, err := w.Boot(ctx, key, setBoot(s.o))
		if s.wantErr != errors.Is(err, ErrInvalid) || (!s.wantErr && err != nil) {
			t.Fatalf("%s: error %v, want ErrInvalid: %v", s.name, err, s.wantErr)
		}
		if got := e.firmwareFields(t, key); got != s.wantFW {
			t.Errorf("%s: efi.secureBoot, smm.enabled = %v, want %v", s.name, got, s.wantFW)
		}
		if diff := cmp.Diff(sorted(s.wantOwned), e.ownedBy(t, key, ManagerBoot)); diff != "" {
			t.Errorf("%s: fields of %s (-want +got):\n%s", s.name, ManagerBoot, diff)
		}
	}
	if _, found, _ := unstructured.NestedMap(e.get(t, key).Object, "spec", "template", "spec", "domain", "features"); found {
		t.Errorf("features left behind after secure boot off")
	}
}

// testSecureBootAuthorSMM: an author who set smm.enabled true keeps it
// after secure boot goes off; redfish-boot only shared it.
func testSecureBootAuthorSMM(t *testing.T, e *env) {
	ctx := t.Context()
	w := New(e.bridge, nil, e.mode, Options{})
	u := baseVM(t)
	u.SetName("vm-smm")
	u.SetNamespace(e.ns)
	u.SetResourceVersion("")
	if err := unstructured.SetNestedField(u.Object, true, smmEnabledPath...); err != nil {
		t.Fatal(err)
	}
	if _, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(e.ns).Create(ctx, u, metav1.CreateOptions{FieldManager: "test-author"}); err != nil {
		t.Fatalf("create VM: %v", err)
	}
	key := system.Key{Namespace: e.ns, Name: "vm-smm"}
	for _, sb := range []system.SecureBoot{system.SecureBootEnabled, system.SecureBootDisabled} {
		noErr(t)(w.Boot(ctx, key, setBoot(system.BootOverride{Mode: system.BootUEFI, SecureBoot: sb})))
	}
	if got, want := e.firmwareFields(t, key), [2]string{"false", "true"}; got != want {
		t.Errorf("efi.secureBoot, smm.enabled = %v, want %v", got, want)
	}
	if !slices.Contains(e.ownedBy(t, key, "test-author"), path(smmEnabledPath)) {
		t.Errorf("test-author lost %s: owns %v", path(smmEnabledPath), e.ownedBy(t, key, "test-author"))
	}
}
