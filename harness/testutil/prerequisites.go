package testutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// CI reports whether the tests run under CI=true, where .ci/run provides
// every prerequisite: the ../shared checkout beside the repository, Debian's
// sushy, redfishtool and Ironic.
func CI() bool { return os.Getenv("CI") == "true" }

// Missing skips the test for a prerequisite it cannot find, or fails it
// under CI=true: in CI a missing prerequisite is a broken setup, not a
// reason to pass.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if CI() {
		t.Fatalf("CI=true and a prerequisite is missing: "+format, args...)
		return
	}
	t.Skipf(format+" (skipped; CI=true fails instead)", args...)
}

// SharedDir returns <module root>/../shared/elem..., from the shared
// checkout beside the repository (DMTF schemas, KubeVirt's CRDs, sushy
// 5.8.0), or calls [Missing] when it is absent.
func SharedDir(t testing.TB, elem ...string) string {
	t.Helper()
	dir := filepath.Join(append([]string{ModuleRoot(t), "..", "shared"}, elem...)...)
	if _, err := os.Stat(dir); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("shared checkout: %v", err)
		}
		Missing(t, "%s not found (the ../shared checkout beside the repository)", dir)
	}
	return dir
}

// ModuleRoot returns the directory holding go.mod, found upwards from the
// test's working directory.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := FindModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// FindModuleRoot returns the nearest directory at or above the working
// directory that holds a go.mod.
func FindModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find module root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find module root: no go.mod at or above the working directory")
		}
		dir = parent
	}
}
