package dmtf

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/eventrecv"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// python is the interpreter the tools run on: Debian's, which has the
// packages .ci/run installs (a pyenv python3 on PATH may lack them).
const python = "/usr/bin/python3"

// debianModules are the tools' dependencies Debian packages (README.md of
// the tools; .ci/run installs them), by import name.
var debianModules = []string{"requests", "bs4", "lxml", "colorama", "openpyxl", "xlsxwriter",
	"requests_toolbelt", "requests_unixsocket", "pyasn1_modules", "jsonschema"}

// bundledModules are the dependencies the tools' folder brings (on
// PYTHONPATH, [tools.env]).
var bundledModules = []string{"redfish", "redfish_utilities", "aenum", "sseclient"}

// tools are the DMTF validators and what they need.
type tools struct {
	dir     string // ../shared/third_party/dmtf
	profile string // the OpenStack Ironic interoperability profile
}

// requireTools finds the tools and checks that they can run: skipped when
// they cannot, failed under CI=true.
func requireTools(t *testing.T) tools {
	t.Helper()
	tl := tools{
		dir:     testutil.SharedDir(t, "third_party", "dmtf"),
		profile: filepath.Join(testutil.SharedDir(t, "redfish", "profiles"), "OpenStackIronicProfile.v1_2_0.json"),
	}
	for _, f := range []string{tl.profile, tl.serviceValidator(), tl.interopValidator(), tl.protocolValidator()} {
		if _, err := os.Stat(f); err != nil {
			testutil.Missing(t, "DMTF validators: %v", err)
		}
	}
	imports := "import " + strings.Join(slices.Concat(debianModules, bundledModules), ", ")
	cmd := exec.CommandContext(t.Context(), python, "-c", imports)
	cmd.Env = tl.env()
	if out, err := cmd.CombinedOutput(); err != nil {
		testutil.Missing(t, "DMTF validators' Python modules %v (the Debian packages .ci/run installs): %v: %s",
			debianModules, err, bytes.TrimSpace(out))
	}
	return tl
}

func (tl tools) serviceValidator() string {
	return filepath.Join(tl.dir, "Redfish-Service-Validator", "RedfishServiceValidator.py")
}

func (tl tools) interopValidator() string {
	return filepath.Join(tl.dir, "Redfish-Interop-Validator", "RedfishInteropValidator.py")
}

func (tl tools) protocolValidator() string {
	return filepath.Join(tl.dir, "Redfish-Protocol-Validator", "rf_protocol_validator.py")
}

// env is the tools' environment: the bundled libraries on PYTHONPATH, and
// no CA bundle variables (python-requests lets them override the tools'
// verify=False against the demo's self-signed certificate).
func (tl tools) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name != "PYTHONPATH" && name != "REQUESTS_CA_BUNDLE" && name != "CURL_CA_BUNDLE" {
			env = append(env, kv)
		}
	}
	var path []string
	for _, p := range []string{"python-redfish-library/src", "Redfish-Tacklebox", "aenum", "sseclient"} {
		path = append(path, filepath.Join(tl.dir, p))
	}
	return append(env, "PYTHONPATH="+strings.Join(path, ":"))
}

// toolTimeout bounds one validator run (each takes well under a minute
// against the demo on an idle machine).
const toolTimeout = 10 * time.Minute

// run runs one validator with args in a fresh directory and returns that
// directory (its reports) and its output. A validator exits non-zero when
// it found a FAIL: the caller judges its report, not its status. Safe to
// call from several goroutines (it never stops the test).
func (tl tools) run(t *testing.T, name, script string, args ...string) (string, string, error) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, append([]string{script}, args...)...)
	cmd.Dir, cmd.Env = dir, tl.env()
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("TIMING %s: %s (exit: %v)", name, time.Since(start).Round(time.Millisecond), err)
	if ctx.Err() != nil {
		return "", "", fmt.Errorf("%s did not finish within %s: %w: %s", name, toolTimeout, ctx.Err(), tail(string(out)))
	}
	return dir, string(out), nil
}

// tail is the end of a tool's output, for a failure message.
func tail(out string) string {
	const n = 4000
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// parseReport parses the one file matching pattern under dir with parse.
func parseReport(dir, pattern, out string, parse func(*os.File) (report, error)) (report, error) {
	matches, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return report{}, fmt.Errorf("find report file %s: %w", pattern, err)
	}
	if len(matches) != 1 {
		return report{}, fmt.Errorf("want one report file %s, found %v; tool output: %s", pattern, matches, tail(out))
	}
	f, err := os.Open(matches[0])
	if err != nil {
		return report{}, fmt.Errorf("open report: %w", err)
	}
	defer f.Close()
	rep, err := parse(f)
	if err != nil {
		return rep, fmt.Errorf("%w; tool output: %s", err, tail(out))
	}
	return rep, nil
}

// service runs the Service Validator against env with the CSDL of the
// tools' Redfish-Publications (never downloading schemas).
func (tl tools) service(t *testing.T, env *demo.Env) (report, error) {
	t.Helper()
	dir, out, err := tl.run(t, "Service Validator", tl.serviceValidator(),
		"--user", env.User, "--password", env.Password, "--rhost", env.URL, "--authtype", "Session",
		"--logdir", "reports", "--schema_directory", filepath.Join(tl.dir, "Redfish-Publications", "csdl"), "--skipschema")
	if err != nil {
		return report{}, err
	}
	return parseReport(dir, "reports/*/RedfishServiceValidatorDebug_*.log", out, func(f *os.File) (report, error) { return parseService(f) })
}

// interop runs the Interop Validator with the OpenStack Ironic profile,
// with Basic authentication: it runs beside the Service Validator, which
// would see a session the Interop Validator opened in the Sessions
// collection and then answer 404 once it closed it.
func (tl tools) interop(t *testing.T, env *demo.Env) (report, error) {
	t.Helper()
	dir, out, err := tl.run(t, "Interop Validator", tl.interopValidator(),
		"--ip", env.URL, "--username", env.User, "--password", env.Password, "--authtype", "Basic",
		"--logdir", "reports", "--no_online_profiles", tl.profile)
	if err != nil {
		return report{}, err
	}
	return parseReport(dir, "reports/ConformanceLog_*.txt", out, func(f *os.File) (report, error) { return parseInterop(f, out) })
}

// protocol runs the Protocol Validator.
func (tl tools) protocol(t *testing.T, env *demo.Env) (report, error) {
	t.Helper()
	dir, out, err := tl.run(t, "Protocol Validator", tl.protocolValidator(),
		"--user", env.User, "--password", env.Password, "--rhost", env.URL, "--no-cert-check",
		"--report-dir", "reports", "--report-type", "tsv")
	if err != nil {
		return report{}, err
	}
	return parseReport(dir, "reports/RedfishProtocolValidationReport_*.tsv", out, func(f *os.File) (report, error) { return parseProtocol(f) })
}

// judge fails t for every FAIL of tool's report that is not a tool
// limitation, and for a run that reached too little to mean anything:
// fewer than minPassed passes or not every URI of mustReach.
func judge(t *testing.T, tool string, rep report, minPassed int, mustReach []string) {
	t.Helper()
	for _, f := range rep.Fails {
		if limitation(tool, f) {
			t.Logf("%s: tool limitation (README.md): %s", tool, f)
			continue
		}
		t.Errorf("%s FAIL: %s", tool, f)
	}
	if rep.Passed < minPassed {
		t.Errorf("%s passed %d checks, want at least %d: it did not validate the service", tool, rep.Passed, minPassed)
	}
	for _, uri := range mustReach {
		if !slices.Contains(rep.Reached, uri) {
			t.Errorf("%s never validated %s (reached %d resources)", tool, uri, len(rep.Reached))
		}
	}
	counts := map[string]int{}
	for _, w := range rep.Warnings {
		// The Service Validator's name the property and its value
		// first: "/Prop (value): Class Warning: text".
		msg := w.Message
		if tool == "service" {
			if i := strings.LastIndex(msg, "): "); i >= 0 {
				msg = msg[i+3:]
			}
		}
		counts[msg]++
	}
	for _, msg := range slices.Sorted(func(yield func(string) bool) {
		for m := range counts {
			if !yield(m) {
				return
			}
		}
	}) {
		t.Logf("%s WARN x%d: %s", tool, counts[msg], msg)
	}
	t.Logf("%s: %d passed, %d FAIL, %d WARN", tool, rep.Passed, len(rep.Fails), len(rep.Warnings))
}

// validateAll runs the three validators against env: the Service and the
// Interop Validators (reads only) at once, then the Protocol Validator,
// which writes (sessions, PATCHes, wrong passwords).
func validateAll(t *testing.T, tl tools, env *demo.Env, system string, extra ...string) {
	t.Helper()
	var service, interop report
	var serviceErr, interopErr error
	var wg sync.WaitGroup
	wg.Go(func() { service, serviceErr = tl.service(t, env) })
	wg.Go(func() { interop, interopErr = tl.interop(t, env) })
	wg.Wait()
	protocol, protocolErr := tl.protocol(t, env)
	for tool, err := range map[string]error{"service": serviceErr, "interop": interopErr, "protocol": protocolErr} {
		if err != nil {
			t.Errorf("%s validator: %v", tool, err)
		}
	}
	if t.Failed() {
		return
	}
	sys := "/redfish/v1/Systems/" + system
	judge(t, "service", service, 1000, append([]string{sys, sys + "/VirtualMedia/cd0", "/redfish/v1/Managers/" + system, "/redfish/v1/Chassis/" + system, "/redfish/v1/EventService"}, extra...))
	judge(t, "interop", interop, 100, []string{sys, sys + "/Bios", "/redfish/v1/Managers/" + system})
	judge(t, "protocol", protocol, 100, []string{"/redfish/v1/SessionService/Sessions"})
	for _, a := range eventAssertions {
		if !slices.Contains(protocol.Assertions, a) {
			t.Errorf("protocol validator: %s did not pass (not tested?)", a)
		}
	}
}

// eventAssertions are the Protocol Validator's EventService checks, which
// must pass: a subscription POST answers 201 with a Location (then the
// validator deletes it), and one with Protocol FTP answers 400. Its SSE
// checks need a ServerSentEventUri, which the EventService does not show.
var eventAssertions = []string{"SERV_EVENT_POST_RESP", "SERV_EVENT_ERROR_ON_BAD_REQUEST"}

// TestValidators runs the DMTF Service, Interop (OpenStack Ironic
// profile) and Protocol Validators against the demo of each CRD variant,
// fresh and after a virtual-media insert and a power-on, and fails on any
// FAIL that is not a tool limitation of ../shared/third_party/dmtf/README.md.
// The variants run at once.
func TestValidators(t *testing.T) {
	tl := requireTools(t)
	for _, v := range crds.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			env := startDemo(t, v)
			t.Logf("TIMING demo (%s) ready in %s", v, time.Since(start).Round(time.Millisecond))
			system := demo.VMNamespace + "." + demo.SampleVMNames(1)[0]
			t.Run("fresh", func(t *testing.T) { validateAll(t, tl, env, system) })
			t.Run("inserted and on, subscribed", func(t *testing.T) {
				insertAndPowerOn(t, env, system)
				sub := subscribe(t, env, eventrecv.Start(t).URL())
				validateAll(t, tl, env, system, sub)
			})
			t.Logf("TIMING %s: %s", t.Name(), time.Since(start).Round(time.Millisecond))
		})
	}
}

// startDemo runs a demo of variant v on a free port: a sample VM and a
// firmware VM (both kinds of boot firmware; every system adds some 45
// resources to what the validators read), warnings logged.
func startDemo(t *testing.T, v crds.Variant) *demo.Env {
	t.Helper()
	env, err := demo.Start(t.Context(), demo.Options{
		Variant: v, VMs: 1, FirmwareVMs: 1, Listen: "127.0.0.1:0",
		StartDelay: 200 * time.Millisecond, StopDelay: 200 * time.Millisecond, ImageSize: 4 << 20,
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		t.Fatalf("start demo (%s): %v", v, err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stop demo (%s): %v", v, err)
		}
	})
	return env
}
