package testcluster

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const helperEnv = "TESTCLUSTER_PDEATHSIG_HELPER"

// TestPdeathsigHelper is not a test: run by TestChildDiesWithParent as the
// parent process, it starts a child and waits to be killed.
func TestPdeathsigHelper(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("helper process for TestChildDiesWithParent")
	}
	p, err := startProcess("sleep", "/bin/sleep", []string{"300"}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// Pdeathsig must survive goroutines moving between threads.
	for range 100 {
		go runtime.Gosched()
	}
	os.Stdout.WriteString("child " + strconv.Itoa(p.cmd.Process.Pid) + "\n") // pipe to the test
	select {}
}

// TestChildDiesWithParent kills a process that started a child through
// startProcess with SIGKILL (no cleanup can run) and checks the child dies
// too, so a crashed or timed-out test leaves no etcd or kube-apiserver.
func TestChildDiesWithParent(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Pdeathsig is Linux-only")
	}
	helper := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestPdeathsigHelper$", "-test.v")
	helper.Env = append(os.Environ(), helperEnv+"=1")
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	child := 0
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "child "); ok {
			if child, err = strconv.Atoi(rest); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if child == 0 {
		_ = helper.Process.Kill()
		t.Fatalf("helper did not report its child (scan: %v)", sc.Err())
	}
	if !alive(child) {
		t.Fatalf("child %d not running before the parent was killed", child)
	}
	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for alive(child) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(child, syscall.SIGKILL)
			t.Fatalf("child %d still running 10s after its parent was killed", child)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) S ...: the state follows the last ')'.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func TestSweepStaleDirs(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	mk := func(owner string) string {
		dir, err := os.MkdirTemp("", tempDirPattern)
		if err != nil {
			t.Fatal(err)
		}
		if owner != "" {
			if err := os.WriteFile(dir+"/"+ownerFile, []byte(owner), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	// A process that has exited: its pid is free (until reused).
	done := exec.Command("/bin/true")
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}
	dead := mk(strconv.Itoa(done.Process.Pid))
	live := mk(strconv.Itoa(os.Getpid()))
	unowned := mk("")
	sweepStaleDirs()
	for dir, wantKept := range map[string]bool{dead: false, live: true, unowned: true} {
		_, err := os.Stat(dir)
		if kept := err == nil; kept != wantKept {
			t.Errorf("%s kept = %v, want %v (stat: %v)", dir, kept, wantKept, err)
		}
	}
}
