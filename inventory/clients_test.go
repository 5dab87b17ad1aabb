package inventory

import (
	"testing"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
)

// eachVariant runs f on a test cluster of each CRD variant.
func eachVariant(t *testing.T, f func(t *testing.T, c *testcluster.Cluster)) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs kube-apiserver")
	}
	for _, v := range crds.Variants {
		t.Run(string(v), func(t *testing.T) { f(t, testcluster.ForTest(t, v)) })
	}
}

// testClients are a test cluster's admin clients and the bridge's.
type testClients struct {
	admin, bridge         dynamic.Interface
	adminKube, bridgeKube kubernetes.Interface
}

func newTestClients(t *testing.T, c *testcluster.Cluster) testClients {
	t.Helper()
	var tc testClients
	var err error
	if tc.admin, err = dynamic.NewForConfig(c.Admin); err != nil {
		t.Fatal(err)
	}
	if tc.adminKube, err = kubernetes.NewForConfig(c.Admin); err != nil {
		t.Fatal(err)
	}
	if tc.bridge, err = dynamic.NewForConfig(c.Bridge); err != nil {
		t.Fatal(err)
	}
	if tc.bridgeKube, err = kubernetes.NewForConfig(c.Bridge); err != nil {
		t.Fatal(err)
	}
	return tc
}
