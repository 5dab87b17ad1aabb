package kubeauth

import (
	"os"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/testcluster"
)

func TestMain(m *testing.M) { os.Exit(testcluster.RunMain(m)) }
