package testutil

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// ipmitoolGuard bounds a wait on ipmitool: a failure guard, never what
// decides a result.
const ipmitoolGuard = 2 * time.Minute

// ipmitoolPath is Debian's ipmitool, or [Missing] when it is not
// installed.
func ipmitoolPath(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("ipmitool")
	if err != nil {
		Missing(t, "ipmitool not installed (.ci/run installs it)")
	}
	return path
}

// ipmitoolArgs are ipmitool's arguments for an RMCP+ (lanplus) session
// as user at 127.0.0.1:port, then extra, then args.
func ipmitoolArgs(port int, user, password string, extra []string, args ...string) []string {
	argv := []string{"-I", "lanplus", "-H", "127.0.0.1", "-p", strconv.Itoa(port), "-U", user, "-P", password, "-N", "5", "-R", "4"}
	return append(append(argv, extra...), args...)
}

// Ipmitool runs Debian's ipmitool once, an RMCP+ (lanplus) session as
// user at 127.0.0.1:port with the options extra, for args (e.g. "chassis",
// "power", "status"), and returns its combined output.
func Ipmitool(t testing.TB, port int, user, password string, extra []string, args ...string) (string, error) {
	t.Helper()
	path := ipmitoolPath(t)
	ctx, cancel := context.WithTimeout(t.Context(), ipmitoolGuard)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, ipmitoolArgs(port, user, password, extra, args...)...).CombinedOutput()
	return string(out), err
}

// SOLClient is a running `ipmitool sol activate` (Debian's ipmitool, its
// stdin piped, [StartSOL]): the test types into it and waits for what it
// prints.
type SOLClient struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	mu    sync.Mutex
	out   bytes.Buffer
	grew  chan struct{} // a token each time out grew
	exit  chan error
}

// StartSOL starts `ipmitool sol activate`, an RMCP+ session as user at
// 127.0.0.1:port with the options extra. It ends with the test at the
// latest.
func StartSOL(t testing.TB, port int, user, password string, extra ...string) *SOLClient {
	t.Helper()
	path := ipmitoolPath(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*ipmitoolGuard)
	c := &SOLClient{cmd: exec.CommandContext(ctx, path, ipmitoolArgs(port, user, password, extra, "sol", "activate")...),
		grew: make(chan struct{}, 1), exit: make(chan error, 1)}
	c.cmd.Stdout, c.cmd.Stderr = c, c
	c.stdin = startPiped(t, c.cmd, cancel)
	go func() { c.exit <- c.cmd.Wait(); cancel() }()
	t.Cleanup(func() {
		_ = c.stdin.Close()
		cancel()
	})
	return c
}

// Write collects ipmitool's output (stdout and stderr).
func (c *SOLClient) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.out.Write(p)
	select {
	case c.grew <- struct{}{}:
	default:
	}
	return len(p), nil
}

// Output is what ipmitool printed (since the last [SOLClient.Take]).
func (c *SOLClient) Output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.String()
}

// WaitFor waits until the output holds want; it fails the test if
// ipmitool ends without it.
func (c *SOLClient) WaitFor(t testing.TB, want string) {
	t.Helper()
	c.until(t, want, false)
}

// Take waits until the output holds want, then forgets the output up to
// the end of want and returns it: the next wait looks only at what came
// after.
func (c *SOLClient) Take(t testing.TB, want string) string {
	t.Helper()
	return c.until(t, want, true)
}

// until waits for want in the output, taking it if take is set.
func (c *SOLClient) until(t testing.TB, want string, take bool) string {
	t.Helper()
	timer := time.NewTimer(ipmitoolGuard)
	defer timer.Stop()
	for {
		if got, ok := c.find(want, take); ok {
			return got
		}
		select {
		case <-c.grew:
		case err := <-c.exit:
			c.exit <- err
			// Wait returned: ipmitool's output is all written.
			if got, ok := c.find(want, take); ok {
				return got
			}
			t.Fatalf("ipmitool ended (%v) without %q:\n%s", err, want, c.Output())
		case <-timer.C:
			t.Fatalf("no %q from ipmitool:\n%s", want, c.Output())
		}
	}
}

// find reports whether the output holds want and returns it up to the end
// of want, forgetting that much if take is set.
func (c *SOLClient) find(want string, take bool) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	got := c.out.String()
	i := strings.Index(got, want)
	if i < 0 {
		return "", false
	}
	if take {
		c.out.Reset()
		c.out.WriteString(got[i+len(want):])
	}
	return got[:i+len(want)], true
}

// Type writes s to ipmitool's stdin, as a user typing it.
func (c *SOLClient) Type(t testing.TB, s string) {
	t.Helper()
	if _, err := io.WriteString(c.stdin, s); err != nil {
		t.Fatalf("type %q: %v", s, err)
	}
}

// Wait waits for ipmitool to end and returns how it ended.
func (c *SOLClient) Wait(t testing.TB) error {
	t.Helper()
	select {
	case err := <-c.exit:
		c.exit <- err
		return err
	case <-time.After(ipmitoolGuard):
		t.Fatalf("ipmitool did not end:\n%s", c.Output())
		return nil
	}
}

// FreeUDPPort is a UDP port of 127.0.0.1 free when asked (for an IPMI
// endpoint the test starts).
func FreeUDPPort() (int, error) {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return 0, fmt.Errorf("free UDP port: %w", err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port, nil
}

// startPiped starts cmd with a pipe to its stdin, which it returns; on
// failure it calls cancel (cmd's context) and fails t.
func startPiped(t testing.TB, cmd *exec.Cmd, cancel context.CancelFunc) io.WriteCloser {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	return stdin
}
