package sshconsole_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/redfish-bridge/redfish-bridge/console"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/internal/connshare"
	"github.com/redfish-bridge/redfish-bridge/sshconsole"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// echoStream is a console stream whose guest echoes what it reads.
type echoStream struct {
	r    *io.PipeReader
	w    *io.PipeWriter
	once sync.Once
	done chan struct{}
}

func (s *echoStream) Read(p []byte) (int, error)  { return s.r.Read(p) }
func (s *echoStream) Write(p []byte) (int, error) { return s.w.Write(p) }
func (s *echoStream) Done() <-chan struct{}       { return s.done }
func (s *echoStream) Close() error {
	s.once.Do(func() {
		_ = s.w.Close()
		_ = s.r.Close()
		close(s.done)
	})
	return nil
}
func (s *echoStream) Err() error {
	select {
	case <-s.done:
		return console.ErrClosed
	default:
		return nil
	}
}

// echoOpener opens echo streams and hands each to the test.
type echoOpener struct{ opened chan *echoStream }

func (o echoOpener) Open(context.Context, console.User, system.Key) (console.Stream, error) {
	r, w := io.Pipe()
	s := &echoStream{r: r, w: w, done: make(chan struct{})}
	o.opened <- s
	return s, nil
}

// countingListener counts the connections it accepted and has not seen
// closed, and the most at once.
type countingListener struct {
	net.Listener
	mu         sync.Mutex
	open, peak int
}

type countedConn struct {
	net.Conn
	l    *countingListener
	once sync.Once
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.open++
	l.peak = max(l.peak, l.open)
	l.mu.Unlock()
	return &countedConn{Conn: c, l: l}, nil
}

func (c *countedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		c.l.open--
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

func (l *countingListener) peakConns() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.peak
}

// serveConsole serves the SSH console with the echo opener on a loopback
// listener, capped at maxConns (0: uncapped), handshakes bounded by
// handshake.
func serveConsole(t *testing.T, maxConns int, handshake time.Duration) (string, *countingListener, echoOpener) {
	t.Helper()
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	counted := &countingListener{Listener: tcp}
	var ln net.Listener = counted
	if maxConns > 0 {
		ln = connshare.New(counted, maxConns)
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	opener := echoOpener{opened: make(chan *echoStream, 16)}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- sshconsole.NewServer(key, passwords{}, opener, handshake).Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		_ = ln.Close()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return tcp.Addr().String(), counted, opener
}

// consoleSession logs in as admin from src and attaches to a System's
// console; it returns the session's input, its output and the session.
func consoleSession(t *testing.T, addr, src string) (io.Writer, io.Reader, *ssh.Session) {
	t.Helper()
	c, err := testutil.FloodDialer(src).DialContext(t.Context(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	conn, chans, reqs, err := ssh.NewClientConn(c, addr, &ssh.ClientConfig{
		User: "admin", Auth: []ssh.AuthMethod{ssh.Password("secret")},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), // the test's own key
	})
	if err != nil {
		t.Fatalf("login from %s: %v", src, err)
	}
	client := ssh.NewClient(conn, chans, reqs)
	t.Cleanup(func() { _ = client.Close() })
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	in, err := sess.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := sess.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Start(ns + ".vm"); err != nil {
		t.Fatal(err)
	}
	return in, out, sess
}

// echoes types line and reads it back (the echo guest).
func echoes(t *testing.T, in io.Writer, out io.Reader, line string) {
	t.Helper()
	if _, err := io.WriteString(in, line); err != nil {
		t.Fatalf("type %q: %v", line, err)
	}
	got := make([]byte, len(line))
	if _, err := io.ReadFull(out, got); err != nil || string(got) != line {
		t.Fatalf("echo of %q: %q, %v", line, got, err)
	}
}

// TestConnectionFloodCapped performs the attack of docs/reliability.md row
// 198 on the SSH console: 400 TCP connections from four addresses that
// never send a byte (no handshake timeout within the test) while a user
// holds a console. The console must hold at most its cap, the user's
// attached console keep working, and a new login from the user's address
// still succeed. The control (uncapped, as the console was) holds all 400.
func TestConnectionFloodCapped(t *testing.T) {
	const limit, perAddr = 16, 100
	flood := func(t *testing.T, addr string) {
		for _, src := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"} {
			testutil.HoldIdle(t, addr, src, perAddr)
		}
	}
	t.Run("capped", func(t *testing.T) {
		addr, counted, opener := serveConsole(t, limit, time.Hour)
		in, out, _ := consoleSession(t, addr, "127.0.0.1")
		<-opener.opened
		echoes(t, in, out, "before\r")
		flood(t, addr)
		echoes(t, in, out, "during\r")
		in2, out2, _ := consoleSession(t, addr, "127.0.0.1")
		<-opener.opened
		echoes(t, in2, out2, "second\r")
		// The listener below the cap counts a new connection before the
		// shares close the one it replaces: at most one over.
		if n := counted.peakConns(); n > limit+1 {
			t.Errorf("the console held %d connections at once, cap %d", n, limit)
		}
		t.Logf("flood of %d silent connections: the console held at most %d (cap %d)", 4*perAddr, counted.peakConns(), limit)
	})
	t.Run("control uncapped", func(t *testing.T) {
		addr, counted, _ := serveConsole(t, 0, time.Hour)
		flood(t, addr)
		consoleSession(t, addr, "127.0.0.1") // accepted after every flood connection
		if n := counted.peakConns(); n <= 4*perAddr {
			t.Errorf("uncapped console held %d connections, want all %d and the login (the control must show the attack)", n, 4*perAddr+1)
		}
	})
}

// TestHandshakeTimeout: a connection that never finishes its handshake is
// closed after the handshake timeout (docs/reliability.md row 198), so a
// slow trickle of silent connections cannot hold the cap's places for
// ever. Without the deadline the connection stays open and the guard
// fails the test.
func TestHandshakeTimeout(t *testing.T) {
	addr, _, _ := serveConsole(t, 8, 200*time.Millisecond)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	closed := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, c) // the server's version line, then EOF when it closes
		closed <- err
	}()
	select {
	case err := <-closed:
		if err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
			t.Errorf("silent connection ended with %v, want closed by the server", err)
		}
	case <-time.After(guard):
		t.Fatalf("a connection silent for %v still open: no handshake timeout", guard)
	}
}

// TestSessionEndsWithItsStream: when the console stream ends by itself
// (the guest side closed it, the idle timeout), the SSH session
// ends with exit status 1, though the client is waiting on its own input.
// Without it the session stays until the user types.
func TestSessionEndsWithItsStream(t *testing.T) {
	addr, _, opener := serveConsole(t, 8, time.Minute)
	in, out, sess := consoleSession(t, addr, "127.0.0.1")
	st := <-opener.opened
	echoes(t, in, out, "hello\r")
	_ = st.Close()
	ended := make(chan error, 1)
	go func() { ended <- sess.Wait() }()
	select {
	case err := <-ended:
		var exit *ssh.ExitError
		if !errors.As(err, &exit) || exit.ExitStatus() != 1 {
			t.Errorf("session ended with %v, want exit status 1", err)
		}
	case <-time.After(guard):
		t.Fatalf("session still open %v after its console stream ended", guard)
	}
}
