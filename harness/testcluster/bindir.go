package testcluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// EnvBinDir overrides where the etcd and kube-apiserver binaries are found.
const EnvBinDir = "REDFISH_BRIDGE_BIN"

// Binary names looked up in the bin directory.
const (
	etcdBinary      = "etcd"
	apiserverBinary = "kube-apiserver"
	// helmBinary renders the chart's RBAC for the bridge's identity.
	helmBinary = "helm"
)

// ModuleRoot returns the nearest directory at or above the working
// directory that holds a go.mod.
func ModuleRoot() (string, error) { return testutil.FindModuleRoot() }

// resolveBinDir picks the bin directory: opts, then $REDFISH_BRIDGE_BIN,
// then <module root>/bin. It checks that the binaries are there.
func resolveBinDir(fromOpts string) (string, error) {
	dir := fromOpts
	if dir == "" {
		dir = os.Getenv(EnvBinDir)
	}
	if dir == "" {
		root, err := ModuleRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, "bin")
	}
	for _, name := range []string{etcdBinary, apiserverBinary, helmBinary} {
		if err := checkBinary(dir, name); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// checkBinary fails with [ErrMissingBinary] unless dir/name is executable.
func checkBinary(dir, name string) error {
	path := filepath.Join(dir, name)
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrMissingBinary, path, err)
	}
	if info.Mode()&0o111 == 0 || !info.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not an executable file", ErrMissingBinary, path)
	}
	return nil
}

// ErrMissingBinary means etcd, kube-apiserver, helm or virt-controller is
// not built: run `make tools`.
var ErrMissingBinary = errors.New("test cluster binary missing (run make tools)")
