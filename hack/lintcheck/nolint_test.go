package lintcheck

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// standard is golangci-lint v2's "default: standard" set.
var standard = []string{"errcheck", "govet", "ineffassign", "staticcheck", "unused"}

// directive matches a //nolint directive and captures its linter names.
var directive = regexp.MustCompile(`//nolint:([A-Za-z0-9_,-]+)`)

// lintConfig is the part of .golangci.yml that says which linters run.
type lintConfig struct {
	Linters struct {
		Default string   `json:"default"`
		Enable  []string `json:"enable"`
	} `json:"linters"`
}

// running returns the linters the configuration at path runs.
func running(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c lintConfig
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if c.Linters.Default != "standard" {
		t.Fatalf("%s: linters.default is %q; this test knows the standard set only", path, c.Linters.Default)
	}
	return append(slices.Clone(standard), c.Linters.Enable...)
}

// strayNames returns the linters a line's //nolint directives name that
// are not in enabled.
func strayNames(line string, enabled []string) []string {
	var out []string
	for _, m := range directive.FindAllStringSubmatch(line, -1) {
		for name := range strings.SplitSeq(m[1], ",") {
			if !slices.Contains(enabled, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

// TestNolintNamesRunningLinters fails for every //nolint directive in the
// module that names a linter .golangci.yml does not run.
func TestNolintNamesRunningLinters(t *testing.T) {
	root := filepath.Join("..", "..")
	enabled := running(t, filepath.Join(root, ".golangci.yml"))
	t.Run("control", func(t *testing.T) {
		if got := strayNames("x := y.(T) //no"+"lint:forcetypeassert // why", enabled); !slices.Equal(got, []string{"forcetypeassert"}) {
			t.Errorf("a directive naming forcetypeassert: stray %v, want [forcetypeassert]", got)
		}
		if got := strayNames("f() //no"+"lint:errcheck // why", enabled); len(got) != 0 {
			t.Errorf("a directive naming errcheck: stray %v, want none", got)
		}
	})
	eachGoLine(t, root, func(path string, n int, line string) {
		if stray := strayNames(line, enabled); len(stray) > 0 {
			t.Errorf("%s:%d: //nolint names %v, which .golangci.yml does not run: enable it or drop the directive", path, n, stray)
		}
	})
}

// eachGoLine calls f with every line (numbered from 1) of every Go file
// under root but vendor, testdata and hidden folders.
func eachGoLine(t *testing.T, root string, f func(path string, n int, line string)) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "vendor" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(raw), "\n") {
			f(path, i+1, line)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
