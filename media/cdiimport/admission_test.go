package cdiimport

import (
	"errors"
	"net"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	cdiv1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestCDIAdmitsTheBridgesDataVolumes dry-runs, as the bridge's own
// identity (the chart's RBAC), the three DataVolumes the bridge writes,
// built by its own builders, through CDI v1.66.0's own admission
// webhooks (cdi-apiserver built from source): an insert's import, an image
// cache entry's, and a slot's clone of the entry. CDI admits all three: its
// clone authorization admits a clone within one namespace without asking
// (CanUserClonePVC), and the bridge's clones never leave the VM's
// namespace, so the bridge needs no datavolumes/source grant. Control: the
// same clone from another namespace, by an identity that may create
// DataVolumes but holds no clone grant there, is refused by CDI's
// authorization. Bad input: CDI's webhook denies a DataVolume without a
// source and one with an ftp URL. Port 8443, which cdi-apiserver listens
// on in its own network namespace, is held on the host's loopback
// meanwhile where it is free: the namespace keeps the two apart
// (testcluster.RunCDIAPIServer).
func TestCDIAdmitsTheBridgesDataVolumes(t *testing.T) {
	if os.Geteuid() != 0 {
		testutil.Missing(t, "root, for CDI's network namespace")
	}
	if l, err := net.Listen("tcp", "127.0.0.1:8443"); err == nil {
		t.Cleanup(func() { _ = l.Close() })
	}
	c := testcluster.ForTestWith(t, testcluster.Options{Variant: crds.Stock, VirtAPI: true})
	if err := c.RunCDIAPIServer(t.Context()); errors.Is(err, testcluster.ErrMissingBinary) {
		testutil.Missing(t, "%v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	ns := c.TestNamespace(t)
	ctx := t.Context()
	admin := kubernetes.NewForConfigOrDie(c.Admin)
	entry := "entry-0"
	// The entry's PVC, which the clone reads (CDI made it in a real cluster).
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: entry},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if _, err := admin.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	o := importer.Owner{Key: system.Key{Namespace: ns, Name: "vm-0"}, UID: "3f1c2a9e-0000-4000-8000-000000000001"}
	slot := system.MediaSlot{
		Slot: "cd0", Image: "https://images.example/boot.iso", InsertID: "insert-1",
		ClaimName: "vm-0-cd0", ImportSecret: "vm-0-cd0-import", CABundle: true, CacheKey: "key-0",
	}
	size := resource.MustParse("1Gi")
	clone := slotDataVolume(o, slot, cdiv1beta1.DataVolumeSource{PVC: &cdiv1beta1.DataVolumeSourcePVC{Namespace: ns, Name: entry}}, size, "")
	dvs := map[string]*cdiv1beta1.DataVolume{
		"insert":      dataVolumeFor(o, slot, size, ""),
		"cache entry": entryDataVolume(o, slot, entry+"-new", download.Validators{ETag: `"v1"`, Length: 1 << 20}, "entry-0-ca", size, ""),
		"clone":       clone,
	}
	bridge := dynamic.NewForConfigOrDie(c.Bridge).Resource(DataVolumeResource).Namespace(ns)
	for name, dv := range dvs {
		t.Run(name, func(t *testing.T) {
			u, err := unstructuredDataVolume(dv)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := bridge.Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
				t.Fatalf("CDI refused the bridge's %s DataVolume: %v", name, err)
			}
		})
	}
	for _, tc := range []struct {
		name   string
		source *cdiv1beta1.DataVolumeSource
		denial string
	}{
		{"no source", nil, "Data volume should have either Source or SourceRef, or be externally populated"},
		{"ftp url", &cdiv1beta1.DataVolumeSource{HTTP: &cdiv1beta1.DataVolumeSourceHTTP{URL: "ftp://images.example/boot.iso"}},
			"Invalid source URL scheme: ftp://images.example/boot.iso"},
	} {
		t.Run("bad input: "+tc.name, func(t *testing.T) {
			dv := dataVolumeFor(o, slot, size, "")
			dv.Spec.Source = tc.source
			u, err := unstructuredDataVolume(dv)
			if err != nil {
				t.Fatal(err)
			}
			_, err = bridge.Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err == nil || !strings.Contains(err.Error(), `admission webhook "`+testcluster.CDIWebhookDataVolume+`" denied the request`) ||
				!strings.Contains(err.Error(), tc.denial) {
				t.Fatalf("got %v, want CDI's webhook to deny it with %q", err, tc.denial)
			}
		})
	}
	t.Run("control: clone from another namespace without a grant", func(t *testing.T) {
		user := "cdi-clone-control"
		other := c.TestNamespace(t)
		role := &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: user},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{cdiv1beta1.SchemeGroupVersion.Group}, Resources: []string{"datavolumes"}, Verbs: []string{"create"}}},
		}
		if _, err := admin.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		binding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: user},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
		}
		if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		cfg := rest.CopyConfig(c.Admin)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
		foreign := slotDataVolume(o, slot, cdiv1beta1.DataVolumeSource{PVC: &cdiv1beta1.DataVolumeSourcePVC{Namespace: other, Name: entry}}, size, "")
		u, err := unstructuredDataVolume(foreign)
		if err != nil {
			t.Fatal(err)
		}
		_, err = dynamic.NewForConfigOrDie(cfg).Resource(DataVolumeResource).Namespace(ns).Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		want := "User " + user + " has insufficient permissions in clone source namespace " + other
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("clone by %s: %v, want CDI's refusal %q", user, err, want)
		}
	})
}
