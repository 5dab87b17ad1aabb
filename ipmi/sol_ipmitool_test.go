package ipmi

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// solGuard bounds a wait for ipmitool: a failure guard, never what
// decides a result.
const solGuard = 2 * time.Minute

// solClient is a running `ipmitool sol activate` with its stdin piped.
type solClient struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	mu    sync.Mutex
	out   bytes.Buffer
	grew  chan struct{} // a token each time out grew
	exit  chan error
}

func (c *solClient) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.out.Write(p)
	select {
	case c.grew <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (c *solClient) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.String()
}

// startSOL starts ipmitool's sol activate against port.
func startSOL(t *testing.T, port int, user, password string, extra ...string) *solClient {
	t.Helper()
	path, err := exec.LookPath("ipmitool")
	if err != nil {
		testutil.Missing(t, "ipmitool not installed (.ci/run installs it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*solGuard)
	argv := append([]string{"-I", "lanplus", "-H", "127.0.0.1", "-p", strconv.Itoa(port), "-U", user, "-P", password, "-N", "5", "-R", "4"}, extra...)
	c := &solClient{cmd: exec.CommandContext(ctx, path, append(argv, "sol", "activate")...), grew: make(chan struct{}, 1), exit: make(chan error, 1)}
	c.cmd.Stdout, c.cmd.Stderr = c, c
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.exit <- c.cmd.Wait(); cancel() }()
	t.Cleanup(func() {
		_ = c.stdin.Close()
		cancel()
	})
	return c
}

// readUntil waits until the output holds want.
func (c *solClient) readUntil(t *testing.T, want string) {
	t.Helper()
	guard := time.After(solGuard)
	for !strings.Contains(c.output(), want) {
		select {
		case <-c.grew:
		case err := <-c.exit:
			c.exit <- err
			if !strings.Contains(c.output(), want) {
				t.Fatalf("ipmitool ended (%v) without %q:\n%s", err, want, c.output())
			}
		case <-guard:
			t.Fatalf("no %q from ipmitool:\n%s", want, c.output())
		}
	}
}

func (c *solClient) typeIn(t *testing.T, s string) {
	t.Helper()
	if _, err := io.WriteString(c.stdin, s); err != nil {
		t.Fatalf("type %q: %v", s, err)
	}
}

// wait waits for ipmitool to end.
func (c *solClient) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-c.exit:
		return err
	case <-time.After(solGuard):
		t.Fatalf("ipmitool did not end:\n%s", c.output())
		return nil
	}
}

// TestIpmitoolSOL drives Debian's ipmitool 1.8.19 `sol activate` (stdin
// piped) against the endpoint with a console whose guest prints a login
// prompt and echoes: ipmitool shows the prompt and its own input echoed;
// a second sol activate is refused "payload already active"; sol info
// reads the configuration; ~. leaves, deactivates the payload and closes
// the console stream; a User-level session (IPMI's read-only role) is
// refused with "insufficient privilege".
func TestIpmitoolSOL(t *testing.T) {
	cons := newFakeConsoles()
	_, port := startServerWith(t, offBackend(), cons)
	c := startSOL(t, port, "alice", "alice-ipmi-pw")
	c.readUntil(t, "[SOL Session operational.  Use ~? for help]")
	c.readUntil(t, fakeLoginPrompt)
	st := <-cons.opened
	c.typeIn(t, "root\r")
	c.readUntil(t, fakeLoginPrompt+"root\r")

	t.Run("second activation refused", func(t *testing.T) {
		out, err := ipmitool(t, port, "alice", "alice-ipmi-pw", nil, "sol", "activate")
		if err == nil || !strings.Contains(out, "Info: SOL payload already active on another session") {
			t.Errorf("second sol activate: err %v:\n%s", err, out)
		}
	})
	t.Run("sol info", func(t *testing.T) {
		out, err := ipmitool(t, port, "alice", "alice-ipmi-pw", nil, "sol", "info")
		if err != nil || !strings.Contains(out, "Enabled                         : true") ||
			!strings.Contains(out, "Payload Port                    : "+strconv.Itoa(port)) {
			t.Errorf("sol info: err %v:\n%s", err, out)
		}
	})
	c.typeIn(t, "~.")
	if err := c.wait(t); err != nil {
		t.Errorf("ipmitool after ~.: %v\n%s", err, c.output())
	}
	if !strings.Contains(c.output(), "[terminated ipmitool]") {
		t.Errorf("no termination message:\n%s", c.output())
	}
	select {
	case <-st.Done():
	case <-time.After(solGuard):
		t.Fatal("the console stream stayed open after ~.")
	}

	t.Run("User-level session refused", func(t *testing.T) {
		out, err := ipmitool(t, port, "alice", "alice-ipmi-pw", []string{"-L", "USER"}, "sol", "activate")
		if err == nil || !strings.Contains(out, "Insufficient privilege level") {
			t.Errorf("sol activate at User level: err %v:\n%s", err, out)
		}
	})
}
