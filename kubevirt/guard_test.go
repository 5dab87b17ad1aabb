package kubevirt

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// spelledHere are KubeVirt words the product spells only in this package:
// elsewhere they come from its names.
var spelledHere = []string{
	"kubevirt.io", "kubevirt.io/v1", "virtualmachines", "virtualmachineinstances",
	"virtualmachines.kubevirt.io", "stateChangeRequests", "rebootPolicy", "bootloader",
	"RerunOnFailure", "Halted", "printableStatus", "phaseTransitionTimestamps",
	"bootOrder", "cdrom", "persistentVolumeClaim", "claimName", "readonly",
}

// notProduct are the folders whose Go files are not the served product:
// the test wing (simulator, test cluster, demo, test helpers), generators.
var notProduct = []string{"kubevirt", "harness", "hack", ".git"}

// TestOneVocabulary: no product Go file (tests aside) outside this package
// imports kubevirt.io/api or spells a KubeVirt resource, path or value as a
// string literal.
func TestOneVocabulary(t *testing.T) {
	root := ".."
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel, _ := filepath.Rel(root, path); slices.Contains(notProduct, rel) || d.Name() == "testdata" || d.Name() == "bin" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(p, "kubevirt.io/api") {
				t.Errorf("%s imports %s: use package kubevirt", fset.Position(imp.Pos()), p)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if _, ok := n.(*ast.ImportSpec); ok {
				return false
			}
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && slices.Contains(spelledHere, s) {
				t.Errorf("%s spells %q: use package kubevirt", fset.Position(lit.Pos()), s)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSpeaksOnlyKubeVirt: this package is KubeVirt's vocabulary and imports
// none of the module's packages (system/ and redfish/ hold Redfish's
// words; apply translates between the two).
func TestSpeaksOnlyKubeVirt(t *testing.T) {
	const module = "github.com/redfish-bridge/redfish-bridge/"
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(p, module) {
				t.Errorf("%s imports %s", fset.Position(imp.Pos()), p)
			}
		}
	}
}
