package kubeauth

import (
	"os"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
)

func TestMain(m *testing.M) { os.Exit(testcluster.RunMain(m)) }

// adminInNamespace returns an admin client of the shared cluster and a
// fresh namespace for the test.
func adminInNamespace(t *testing.T) (kubernetes.Interface, string) {
	t.Helper()
	c := testcluster.Shared(t, crds.Stock)
	kube, err := kubernetes.NewForConfig(c.Admin)
	if err != nil {
		t.Fatal(err)
	}
	return kube, c.TestNamespace(t)
}
