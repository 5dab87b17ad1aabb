package main

import (
	"os/exec"
	"strings"
	"testing"
)

// harnessPackages are what the served binary must not link: the standard
// library's testing package and everything under the module's harness/
// wing (the demo, the KubeVirt simulator, the local cluster, the benches
// and the test helpers).
var harnessPackages = []string{"testing", module + "/harness"}

const module = "github.com/redfish-bridge/redfish-bridge"

// TestServedBinaryLinksNoHarness fails when `go list -deps
// ./cmd/redfish-bridge` (the image's binary) contains a harness package or
// one below it; the demo lives in cmd/redfish-bridge-demo for that reason.
func TestServedBinaryLinksNoHarness(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", module+"/cmd/redfish-bridge").Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/redfish-bridge: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list -deps ./cmd/redfish-bridge printed no packages")
	}
	for _, dep := range deps {
		if harness(dep) {
			t.Errorf("the served binary links %s", dep)
		}
	}
}

// harness reports whether the package path is, or is below, a harness package.
func harness(pkg string) bool {
	for _, h := range harnessPackages {
		if pkg == h || strings.HasPrefix(pkg, h+"/") {
			return true
		}
	}
	return false
}
