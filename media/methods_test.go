package media

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEveryMethodPackageIsLinked: an import method registers itself in
// its package's init, so a method package media does not import is
// silently never available. Every package under media/ that calls
// importer.Register must be among media's dependencies (methods.go).
func TestEveryMethodPackageIsLinked(t *testing.T) {
	const module = "github.com/redfish-bridge/redfish-bridge"
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", module+"/media").Output()
	if err != nil {
		t.Fatalf("go list -deps ./media: %v", err)
	}
	deps := strings.Fields(string(out))
	dirs, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var methods []string
	for _, d := range dirs {
		if !d.IsDir() || !registers(t, d.Name()) {
			continue
		}
		methods = append(methods, d.Name())
		if !slices.Contains(deps, module+"/media/"+d.Name()) {
			t.Errorf("package media/%s registers an import method, but media does not import it (add it to media/methods.go)", d.Name())
		}
	}
	if len(methods) < 2 {
		t.Errorf("found the import method packages %v, want at least podimport and cdiimport", methods)
	}
}

// registers reports whether a non-test file of the directory calls
// importer.Register.
func registers(t *testing.T, dir string) bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "importer.Register(") {
			return true
		}
	}
	return false
}
