package eventsub

import (
	"os"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
)

func TestMain(m *testing.M) { os.Exit(testcluster.RunMain(m)) }
