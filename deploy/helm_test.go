package deploy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
)

// chartDir is the chart under test, relative to this package.
const chartDir = "redfish-bridge"

// helmBinary returns bin/helm ($REDFISH_BRIDGE_BIN, else <module root>/bin).
// A missing helm is a failure: `make test` builds it first.
func helmBinary(t *testing.T) string {
	t.Helper()
	dir := os.Getenv(testcluster.EnvBinDir)
	if dir == "" {
		root, err := testcluster.ModuleRoot()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(root, "bin")
	}
	path := filepath.Join(dir, "helm")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("helm: %v: run make tools", err)
	}
	return path
}

// helm runs bin/helm with args in an isolated HOME and returns stdout and
// stderr; it does not fail the test on a non-zero exit.
func helm(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), helmBinary(t), args...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(),
		"HOME="+home,
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
	)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// mustHelm is helm that fails the test on error.
func mustHelm(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := helm(t, args...)
	if err != nil {
		t.Fatalf("helm %v: %v\n%s%s", args, err, out, errOut)
	}
	return out
}
