package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// sushyPython is the interpreter the sushy libraries run on (Debian's: it
// has python3-sushy and the dependencies the sushy 5.8 tree needs; a pyenv
// python3 on PATH may lack them).
const sushyPython = "/usr/bin/python3"

// sushyLib is one sushy library the e2e tests drive: Debian 12's
// python3-sushy, or a sushy source tree put first on PYTHONPATH.
type sushyLib struct {
	// Version names the library in subtest names and logs.
	Version string
	// Dir is the source tree put first on PYTHONPATH; "" is Debian's.
	Dir string
	// Missing says where Dir comes from, for the message when it is not
	// there.
	Missing string
}

// sushy58Env overrides where the sushy 5.8.0 tree is; by default it is
// ../shared/third_party/sushy-5.8.0 beside the repository.
const sushy58Env = "REDFISH_BRIDGE_SUSHY58"

// sushyLibs lists the sushy versions every sushy e2e runs with: Debian's
// 4.3.3 (what Ironic 21 drives BMCs with), 5.8.0 (Ironic 2025.x/2026.x)
// and the 5.13.0 of Debian unstable's Ironic 39 ([sushy513Dir]).
func sushyLibs() []sushyLib {
	dir := os.Getenv(sushy58Env)
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "third_party", "sushy-5.8.0")
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return []sushyLib{
		{Version: "4.3.3"},
		{Version: "5.8.0", Dir: dir, Missing: "set " + sushy58Env},
		{Version: "5.13.0", Dir: sushy513Dir(), Missing: "the Ironic 39 chroot: make ironic-chroot"},
	}
}

// sushy58Lib is the sushy 5.8.0 tree of [sushyLibs].
func sushy58Lib() sushyLib { return sushyLibs()[1] }

// forEachSushy runs f as a subtest per sushy library ([requireSushy]).
func forEachSushy(t *testing.T, f func(t *testing.T, lib sushyLib)) {
	t.Helper()
	for _, lib := range sushyLibs() {
		t.Run("sushy-"+lib.Version, func(t *testing.T) {
			requireSushy(t, lib)
			f(t, lib)
		})
	}
}

// requireSushy skips the test when lib cannot be imported, and fails it
// under CI=true, where .ci/run installs Debian's and the 5.8 tree must be
// checked out beside the repository.
func requireSushy(t *testing.T, lib sushyLib) {
	t.Helper()
	if err := lib.check(t.Context()); err != nil {
		testutil.Missing(t, "sushy %s unusable: %v", lib.Version, err)
	}
}

// sushyChecks caches lib.check per version: one import per test binary.
var sushyChecks sync.Map // Version -> error

// check imports the library and makes sure it is the one meant: the module
// file under Dir (PYTHONPATH wins over dist-packages), or Debian's.
func (l sushyLib) check(ctx context.Context) error {
	if err, ok := sushyChecks.Load(l.Version); ok {
		if err == nil {
			return nil
		}
		return err.(error)
	}
	err := l.checkNow(ctx)
	sushyChecks.Store(l.Version, err)
	return err
}

func (l sushyLib) checkNow(ctx context.Context) error {
	if l.Dir != "" {
		if _, err := os.Stat(filepath.Join(l.Dir, "sushy", "__init__.py")); err != nil {
			return &sushyLibError{what: "no sushy source tree (" + l.Missing + ")", err: err}
		}
	}
	out, err := l.command(ctx, "-c", "import sushy; print(sushy.__file__)").CombinedOutput()
	if err != nil {
		return &sushyLibError{what: "import sushy: " + strings.TrimSpace(string(out)), err: err}
	}
	file := strings.TrimSpace(string(out))
	want := "/usr/lib/python3/dist-packages/sushy/"
	if l.Dir != "" {
		want = l.Dir + "/sushy/"
	}
	if !strings.HasPrefix(file, want) {
		return &sushyLibError{what: "imported " + file + ", want it under " + want}
	}
	return nil
}

type sushyLibError struct {
	what string
	err  error
}

func (e *sushyLibError) Error() string {
	if e.err != nil {
		return e.what + ": " + e.err.Error()
	}
	return e.what
}

func (e *sushyLibError) Unwrap() error { return e.err }

// command runs sushyPython with args, the library first on PYTHONPATH, and
// the environment of [pythonEnviron].
func (l sushyLib) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, sushyPython, args...)
	cmd.Env = pythonEnviron()
	if l.Dir != "" {
		// pbr cannot read a version from a bare source tree.
		cmd.Env = append(cmd.Env, "PYTHONPATH="+l.Dir, "PBR_VERSION="+l.Version)
	}
	return cmd
}

// runSushyScript runs testdata/script with lib against env's bridge (RF_URL,
// RF_USER, RF_PASSWORD, plus extra "K=V" pairs) and decodes the JSON object
// it prints into out. A script that exits non-zero, or prints no JSON,
// fails the test with its stderr.
func runSushyScript(t *testing.T, lib sushyLib, env *demo.Env, script string, args, extra []string, out any) {
	t.Helper()
	cmd := lib.command(clientContext(t), append([]string{filepath.Join("testdata", script)}, args...)...)
	cmd.Env = append(cmd.Env, "RF_URL="+env.URL, "RF_USER="+env.User, "RF_PASSWORD="+env.Password)
	cmd.Env = append(cmd.Env, extra...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if jerr := json.Unmarshal(stdout, out); jerr != nil {
		t.Fatalf("sushy %s %s %v: %v; output %q: %v\nstderr:\n%s", lib.Version, script, args, err, stdout, jerr, tail(stderr.String()))
	}
	if err != nil {
		t.Errorf("sushy %s %s %v: %v\nstderr:\n%s", lib.Version, script, args, err, tail(stderr.String()))
	}
}

// pythonEnviron is os.Environ without REQUESTS_CA_BUNDLE and
// CURL_CA_BUNDLE: python-requests lets them override a session's
// verify=False, and the demo's certificate is self-signed.
func pythonEnviron() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "REQUESTS_CA_BUNDLE=") && !strings.HasPrefix(kv, "CURL_CA_BUNDLE=") {
			out = append(out, kv)
		}
	}
	return out
}

// tail is the last 4 KiB of s.
func tail(s string) string {
	if len(s) > 4096 {
		return "..." + s[len(s)-4096:]
	}
	return s
}
