package testcluster_test

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
)

func TestMain(m *testing.M) { os.Exit(testcluster.RunMain(m)) }

// TestStock runs the checks that need a cluster with the stock CRDs.
func TestStock(t *testing.T) {
	c := testcluster.Shared(t, crds.Stock)
	t.Run("bridge RBAC", func(t *testing.T) { testBridgeRBAC(t, c) })
	vms := vmClient(t, c, c.TestNamespace(t))
	t.Run("atomic lists", func(t *testing.T) { testAtomicLists(t, vms) })
	testStaleResourceVersion(t, vms)
	t.Run("policy", func(t *testing.T) { testPolicy(t, vmClient(t, c, c.TestNamespace(t))) })
}

// TestShared checks a second Shared call reuses the cluster and test
// namespaces do not collide.
func TestShared(t *testing.T) {
	a, b := testcluster.Shared(t, crds.Stock), testcluster.Shared(t, crds.Stock)
	if a != b {
		t.Errorf("Shared returned two clusters: %s and %s", a.Admin.Host, b.Admin.Host)
	}
	n1, n2 := a.TestNamespace(t), a.TestNamespace(t)
	if n1 == n2 || !strings.HasPrefix(n1, "testshared-") {
		t.Errorf("TestNamespace = %q, %q; want two distinct names starting testshared-", n1, n2)
	}
}

// TestMapList runs the checks that need the maplist CRDs, then stops the
// cluster and checks nothing is left behind.
func TestMapList(t *testing.T) {
	c := testcluster.ForTest(t, crds.MapList)
	vms := vmClient(t, c, "groundtruth")
	t.Run("map lists", func(t *testing.T) { testMapLists(t, vms) })
	testStaleResourceVersion(t, vms)
	t.Run("policy", func(t *testing.T) { testPolicy(t, vmClient(t, c, "policy")) })
	t.Run("kubeconfigs", func(t *testing.T) {
		for _, kc := range []string{c.Kubeconfig, c.BridgeKubeconfig} {
			cfg, err := clientcmd.BuildConfigFromFlags("", kc)
			if err != nil {
				t.Fatalf("load %s: %v", kc, err)
			}
			cs := kubernetes.NewForConfigOrDie(cfg)
			if _, err := cs.Discovery().ServerResourcesForGroupVersion("kubevirt.io/v1"); err != nil {
				t.Errorf("discovery through %s: %v", kc, err)
			}
		}
	})
	t.Run("stop", func(t *testing.T) {
		rss, err := c.APIServerRSS()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("ready after %s, kube-apiserver RSS %d MiB", c.ReadyAfter, rss>>20)
		if rss < 10<<20 {
			t.Errorf("APIServerRSS = %d bytes, want a running kube-apiserver's (>10 MiB)", rss)
		}
		pids := c.PIDs()
		if err := c.Stop(); err != nil {
			t.Fatalf("Stop: %v", err)
		}
		for _, pid := range pids {
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("process %d still exists after Stop (kill 0: %v)", pid, err)
			}
		}
		if _, err := os.Stat(c.Dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("dir %s still exists after Stop (stat: %v)", c.Dir, err)
		}
		if err := c.Stop(); err != nil {
			t.Errorf("second Stop: %v", err)
		}
	})
}

// testBridgeRBAC checks the bridge identity gets what the chart grants it
// (rendered from deploy/redfish-bridge) and no more.
func testBridgeRBAC(t *testing.T, c *testcluster.Cluster) {
	cs := kubernetes.NewForConfigOrDie(c.Bridge)
	tests := []struct {
		name string
		attr authorizationv1.ResourceAttributes
		want bool
	}{
		{"apply VMs", authorizationv1.ResourceAttributes{Namespace: "vms", Group: "kubevirt.io", Resource: "virtualmachines", Verb: "patch"}, true},
		{"watch VMs", authorizationv1.ResourceAttributes{Group: "kubevirt.io", Resource: "virtualmachines", Verb: "watch"}, true},
		{"no VM update", authorizationv1.ResourceAttributes{Namespace: "vms", Group: "kubevirt.io", Resource: "virtualmachines", Verb: "update"}, false},
		{"no VM delete", authorizationv1.ResourceAttributes{Namespace: "vms", Group: "kubevirt.io", Resource: "virtualmachines", Verb: "delete"}, false},
		{"apply VM status", authorizationv1.ResourceAttributes{Namespace: "vms", Group: "kubevirt.io", Resource: "virtualmachines", Subresource: "status", Verb: "patch"}, true},
		{"no VM status update", authorizationv1.ResourceAttributes{Namespace: "vms", Group: "kubevirt.io", Resource: "virtualmachines", Subresource: "status", Verb: "update"}, false},
		{"no VMI delete", authorizationv1.ResourceAttributes{Namespace: "vms", Group: "kubevirt.io", Resource: "virtualmachineinstances", Verb: "delete"}, false},
		{"force stop", authorizationv1.ResourceAttributes{Namespace: "vms", Group: "subresources.kubevirt.io", Resource: "virtualmachines", Subresource: "stop", Verb: "update"}, true},
		{"force restart", authorizationv1.ResourceAttributes{Namespace: "vms", Group: "subresources.kubevirt.io", Resource: "virtualmachines", Subresource: "restart", Verb: "update"}, true},
		{"no other virt-api subresources", authorizationv1.ResourceAttributes{Namespace: "vms", Group: "subresources.kubevirt.io", Resource: "virtualmachines", Subresource: "start", Verb: "update"}, false},
		{"no VMI create", authorizationv1.ResourceAttributes{Namespace: "vms", Group: "kubevirt.io", Resource: "virtualmachineinstances", Verb: "create"}, false},
		{"create PVCs", authorizationv1.ResourceAttributes{Namespace: "vms", Resource: "persistentvolumeclaims", Verb: "create"}, true},
		{"create pods", authorizationv1.ResourceAttributes{Namespace: "vms", Resource: "pods", Verb: "create"}, true},
		{"create events", authorizationv1.ResourceAttributes{Namespace: "vms", Resource: "events", Verb: "create"}, true},
		{"read the VM CRD", authorizationv1.ResourceAttributes{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Verb: "get", Name: "virtualmachines.kubevirt.io"}, true},
		{"no other CRDs", authorizationv1.ResourceAttributes{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Verb: "get", Name: "virtualmachineinstances.kubevirt.io"}, false},
		{"no CRD writes", authorizationv1.ResourceAttributes{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Verb: "update"}, false},
		{"own lease", authorizationv1.ResourceAttributes{Namespace: c.BridgeNamespace, Group: "coordination.k8s.io", Resource: "leases", Verb: "update", Name: "redfish-bridge"}, true},
		{"no other leases", authorizationv1.ResourceAttributes{Namespace: c.BridgeNamespace, Group: "coordination.k8s.io", Resource: "leases", Verb: "update", Name: "other"}, false},
		{"no leases elsewhere", authorizationv1.ResourceAttributes{Namespace: "vms", Group: "coordination.k8s.io", Resource: "leases", Verb: "update"}, false},
		{"users Secret", authorizationv1.ResourceAttributes{Namespace: c.BridgeNamespace, Resource: "secrets", Verb: "get", Name: "redfish-bridge-users"}, true},
		{"no other own secrets", authorizationv1.ResourceAttributes{Namespace: c.BridgeNamespace, Resource: "secrets", Verb: "get", Name: "other"}, false},
		{"no secrets elsewhere", authorizationv1.ResourceAttributes{Namespace: "vms", Resource: "secrets", Verb: "get"}, false},
		{"no secret lists elsewhere", authorizationv1.ResourceAttributes{Namespace: "vms", Resource: "secrets", Verb: "list"}, false},
		{"create import Secrets", authorizationv1.ResourceAttributes{Namespace: "vms", Resource: "secrets", Verb: "create"}, true},
		{"delete import Secrets", authorizationv1.ResourceAttributes{Namespace: "vms", Resource: "secrets", Verb: "delete"}, true},
		{"update trust ConfigMaps", authorizationv1.ResourceAttributes{Namespace: "vms", Resource: "configmaps", Verb: "update"}, true},
		{"no namespaces", authorizationv1.ResourceAttributes{Resource: "namespaces", Verb: "create"}, false},
	}
	got := map[string]bool{}
	want := map[string]bool{}
	for _, tt := range tests {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &tt.attr}}
		res, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(t.Context(), review, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got[tt.name] = res.Status.Allowed
		want[tt.name] = tt.want
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bridge permissions (-want +got):\n%s", diff)
	}
}
