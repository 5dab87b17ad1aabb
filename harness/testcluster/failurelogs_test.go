package testcluster_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

const failureLogsHelperEnv = "TESTCLUSTER_FAILURE_LOGS_HELPER"

// started is the line virt-controller logs (with the VM's namespace) once
// it created VM name's VMI.
func started(name string) string {
	return "Started VM by creating the new virtual machine instance " + name
}

// TestFailureLogsHelper is not a test: run by TestFailureLogs in a child
// process, its subtest "failing" fails on purpose on the shared cluster
// while VMs start in its namespace and in another test's.
func TestFailureLogsHelper(t *testing.T) {
	if os.Getenv(failureLogsHelperEnv) != "1" {
		t.Skip("helper process for TestFailureLogs")
	}
	c := testcluster.SharedKubeVirt(t, crds.Stock)
	ours, theirs := os.Getenv("OURS"), os.Getenv("THEIRS")
	for _, ns := range []string{ours, theirs} {
		if err := c.CreateNamespace(t.Context(), ns); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("before", func(t *testing.T) {
		c.LogsOnFailure(t, theirs)
		testcluster.LoggerForTest(t, "quiet").Debug("a passing test's line")
		startVM(t, c, ours, "early")
	})
	t.Run("failing", func(t *testing.T) {
		c.LogsOnFailure(t, ours)
		log := testcluster.LoggerForTest(t, "component")
		log.Debug("a debug line of the failing test")
		startVM(t, c, theirs, "intruder")
		startVM(t, c, ours, "late")
		t.Error("fails on purpose")
	})
}

// TestFailureLogsHelperFallback is not a test either: a test that
// registers nothing but [testcluster.SharedKubeVirt] fails.
func TestFailureLogsHelperFallback(t *testing.T) {
	if os.Getenv(failureLogsHelperEnv) != "1" {
		t.Skip("helper process for TestFailureLogs")
	}
	c := testcluster.SharedKubeVirt(t, crds.Stock)
	ns := os.Getenv("OURS") + "-fallback"
	if err := c.CreateNamespace(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	startVM(t, c, ns, "fallback")
	t.Error("fails on purpose")
}

// startVM creates VM name running and waits until virt-controller logged
// that it started it.
func startVM(t *testing.T, c *testcluster.Cluster, ns, name string) {
	t.Helper()
	dyn, err := dynamic.NewForConfig(c.Admin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(testcluster.VirtualMachines).Namespace(ns).Create(t.Context(), testutil.VM(ns, name, "Always"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := [][]byte{[]byte(started(name)), []byte(`"namespace":"` + ns + `"`)}
	testutil.Eventually(t, "virt-controller logs "+started(name), time.Minute, 50*time.Millisecond, func(context.Context) error {
		data, err := os.ReadFile(filepath.Join(c.Dir, "virt-controller.log"))
		if err != nil {
			return err
		}
		for l := range bytes.SplitSeq(data, []byte("\n")) {
			if bytes.Contains(l, want[0]) && bytes.Contains(l, want[1]) {
				return nil
			}
		}
		return errors.New("not logged yet")
	})
}

// TestFailureLogs runs the helpers in a child `go test` process and checks
// what their failures show: the failing subtest gets virt-controller's
// lines since it started about its own namespace (not those of the other
// test's VM started meanwhile, nor those from before it started), and its
// component logger's every line; the passing subtest prints nothing, its
// parent no second copy; a test that registered nothing but the shared
// cluster gets every line since it started.
func TestFailureLogs(t *testing.T) {
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	ours, theirs := "logs-ours-"+hex.EncodeToString(suffix), "logs-theirs-"+hex.EncodeToString(suffix)
	helper := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestFailureLogsHelper", "-test.count=1") // this test binary
	helper.Env = append(os.Environ(), failureLogsHelperEnv+"=1", "OURS="+ours, "THEIRS="+theirs)
	outBytes, err := helper.CombinedOutput()
	out := string(outBytes)
	if err == nil || !strings.Contains(out, "fails on purpose") {
		t.Fatalf("helper did not fail on purpose (err %v):\n%s", err, out)
	}
	failing, ok := logBlock(out, "virt-controller log since TestFailureLogsHelper/failing started")
	if !ok {
		t.Fatalf("the failing subtest's output has no virt-controller log:\n%s", out)
	}
	for _, want := range []string{started("late"), `"namespace":"` + ours + `"`, "lines for namespace " + ours} {
		if !strings.Contains(failing, want) {
			t.Errorf("the failing subtest's virt-controller log lacks %q:\n%s", want, failing)
		}
	}
	for _, unwanted := range []string{theirs, started("intruder"), started("early")} {
		if strings.Contains(failing, unwanted) {
			t.Errorf("the failing subtest's virt-controller log has %q (another test's namespace, or from before it started):\n%s", unwanted, failing)
		}
	}
	if _, ok := logBlock(out, "kube-apiserver log since TestFailureLogsHelper/failing started"); !ok {
		t.Errorf("the failing subtest's output has no kube-apiserver log:\n%s", out)
	}
	if component, ok := logBlock(out, "component log (every level) since TestFailureLogsHelper/failing started"); !ok || !strings.Contains(component, "a debug line of the failing test") {
		t.Errorf("the failing subtest's output lacks its component logger's debug line:\n%s", out)
	}
	for _, quiet := range []string{"since TestFailureLogsHelper/before started", "since TestFailureLogsHelper started", "a passing test's line"} {
		if strings.Contains(out, quiet) {
			t.Errorf("output has %q: a passing test, or the parent of one that logged its tails, logged them", quiet)
		}
	}
	fallback, ok := logBlock(out, "virt-controller log since TestFailureLogsHelperFallback started, every line")
	if !ok {
		t.Fatalf("the failing test without namespaces has no virt-controller log:\n%s", out)
	}
	if !strings.Contains(fallback, started("fallback")) || strings.Contains(fallback, started("late")) {
		t.Errorf("the failing test without namespaces: virt-controller log without its own VM's start, or with one from before it started:\n%s", fallback)
	}
}

// logBlock returns the message a test logged that starts with header: its
// first line and the lines after it indented deeper (go test indents a
// message's further lines).
func logBlock(out, header string) (string, bool) {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if !strings.Contains(l, header) {
			continue
		}
		indent := len(l) - len(strings.TrimLeft(l, " "))
		end := i + 1
		for end < len(lines) && len(lines[end])-len(strings.TrimLeft(lines[end], " ")) > indent {
			end++
		}
		return strings.Join(lines[i:end], "\n"), true
	}
	return "", false
}
