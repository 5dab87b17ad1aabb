package testutil

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// sshGuard bounds a wait on OpenSSH's client: a failure guard, never what
// decides a result.
const sshGuard = 2 * time.Minute

// SSHClient is OpenSSH's client (`ssh -T`) run against the bridge's SSH
// console: what it printed, and its input.
type SSHClient struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	chunks chan []byte
	buf    bytes.Buffer
	exited chan error

	mu     sync.Mutex
	stderr bytes.Buffer
}

// StartSSH runs OpenSSH's client as user at 127.0.0.1:port with command
// (a System's ID), the password answered through SSH_ASKPASS, no host key
// checked; it is killed when t ends. [Missing] when ssh is not installed.
func StartSSH(t testing.TB, port, user, password, command string) *SSHClient {
	t.Helper()
	sshBin, err := exec.LookPath("ssh")
	if err != nil {
		Missing(t, "OpenSSH's client is not installed (.ci/run installs openssh-client)")
	}
	askpass := filepath.Join(t.TempDir(), "askpass")
	if err := os.WriteFile(askpass, []byte("#!/bin/sh\nprintf '%s\\n' '"+strings.ReplaceAll(password, "'", `'\''`)+"'\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*sshGuard)
	c := &SSHClient{chunks: make(chan []byte, 64), exited: make(chan error, 1)}
	c.cmd = exec.CommandContext(ctx, sshBin, "-T", "-p", port,
		"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
		"-o", "PreferredAuthentications=password", "-o", "PubkeyAuthentication=no", "-o", "NumberOfPasswordPrompts=1",
		user+"@127.0.0.1", command)
	c.cmd.Env = append(os.Environ(), "SSH_ASKPASS="+askpass, "SSH_ASKPASS_REQUIRE=force", "DISPLAY=:0")
	c.cmd.Stderr = lockedWriter{mu: &c.mu, w: &c.stderr}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	c.stdin = startPiped(t, c.cmd, cancel)
	go func() {
		for {
			b := make([]byte, 4096)
			n, err := stdout.Read(b)
			if n > 0 {
				c.chunks <- b[:n]
			}
			if err != nil {
				break
			}
		}
		close(c.chunks)
		c.exited <- c.cmd.Wait() // once stdout is read to its end (exec's rule for StdoutPipe)
		cancel()
	}()
	t.Cleanup(func() { cancel(); _ = c.stdin.Close() })
	return c
}

// lockedWriter guards a buffer that a process writes while a test reads.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Type writes s to the client's input.
func (c *SSHClient) Type(t testing.TB, s string) {
	t.Helper()
	if _, err := c.stdin.Write([]byte(s)); err != nil {
		t.Fatalf("type %q: %v", s, err)
	}
}

// Until reads the client's output until it holds want, and returns it
// (what was read is then forgotten).
func (c *SSHClient) Until(t testing.TB, want string) string {
	t.Helper()
	timer := time.NewTimer(sshGuard)
	defer timer.Stop()
	for !strings.Contains(c.buf.String(), want) {
		select {
		case b, ok := <-c.chunks:
			if !ok {
				t.Fatalf("ssh output ended: %q (stderr %q), want %q", c.buf.String(), c.Stderr(), want)
			}
			c.buf.Write(b)
		case <-timer.C:
			t.Fatalf("ssh output %q (stderr %q), want %q", c.buf.String(), c.Stderr(), want)
		}
	}
	got := c.buf.String()
	c.buf.Reset()
	return got
}

// Wait waits for the client to exit and returns its error.
func (c *SSHClient) Wait() error {
	select {
	case err := <-c.exited:
		return err
	case <-time.After(sshGuard):
		return errors.New("ssh did not exit")
	}
}

// Stderr is what the client printed on its standard error so far.
func (c *SSHClient) Stderr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}
