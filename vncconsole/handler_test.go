package vncconsole

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/redfish-bridge/redfish-bridge/harness/vncscreen"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// fleet plays KubeVirt's vnc subresource: each System's screen is a real
// RFB server (harness/vncscreen).
type fleet struct {
	screens map[string]*vncscreen.Screen
	opened  atomic.Int32
}

func (f *fleet) OpenScreen(ctx context.Context, key system.Key) (io.ReadWriteCloser, error) {
	s, ok := f.screens[key.ID()]
	if !ok {
		return nil, errors.New("no running VMI")
	}
	f.opened.Add(1)
	vm, bridge := net.Pipe()
	go func() { _ = s.Serve(context.WithoutCancel(ctx), vm) }()
	return bridge, nil
}

type revocations struct{ revoked sync.Map }

func (r *revocations) Revoked(_ context.Context, id string) (bool, error) {
	_, ok := r.revoked.Load(id)
	return ok, nil
}

// auditLog collects the handler's log lines and announces each "console
// closed" with its reason.
type auditLog struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	closed chan string
}

func (a *auditLog) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if line := string(p); strings.Contains(line, `msg="console closed"`) {
		a.closed <- line
	}
	return a.buf.Write(p)
}

type env struct {
	h      *Handler
	tokens *Tokens
	fleet  *fleet
	revs   *revocations
	audit  *auditLog
	srv    *httptest.Server
	now    atomic.Pointer[time.Time]
}

const (
	vm1 = "ns1.vm-1"
	vm2 = "ns1.vm-2"
)

func newEnv(t *testing.T, cfg Config) *env {
	t.Helper()
	e := &env{fleet: &fleet{screens: map[string]*vncscreen.Screen{
		vm1: vncscreen.New("vm-1", "Running"), vm2: vncscreen.New("vm-2", "Running"),
	}}, revs: &revocations{}, audit: &auditLog{closed: make(chan string, 1000)}}
	now := time.Now()
	e.now.Store(&now)
	var err error
	e.tokens, err = NewTokens(bytes.Repeat([]byte{1}, 32), time.Minute, func() time.Time { return *e.now.Load() })
	if err != nil {
		t.Fatal(err)
	}
	e.h = NewHandler(cfg, e.tokens, e.fleet, e.revs)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /console/{id}/vnc", func(w http.ResponseWriter, r *http.Request) { e.h.ServeVNC(w, r, r.PathValue("id")) })
	e.srv = httptest.NewUnstartedServer(mux)
	log := slog.New(slog.NewTextHandler(e.audit, nil))
	e.srv.Config.BaseContext = func(net.Listener) context.Context { return logctx.Into(context.Background(), log) }
	e.srv.Start()
	t.Cleanup(e.srv.Close)
	return e
}

func (e *env) token(t *testing.T, g Grant) string {
	t.Helper()
	tok, err := e.tokens.Issue(g)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// open dials System id's console WebSocket with token from origin ("":
// this server's).
func (e *env) open(id, token, origin string) (*websocket.Conn, *http.Response, error) {
	u := "ws" + strings.TrimPrefix(e.srv.URL, "http") + "/console/" + id + "/vnc?" + TokenParam + "=" + token
	if origin == "" {
		origin = e.srv.URL
	}
	ws, resp, err := websocket.DefaultDialer.Dial(u, http.Header{"Origin": {origin}})
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	return ws, resp, err
}

func (e *env) rfb(t *testing.T, id string, g Grant) *vncscreen.Client {
	t.Helper()
	ws, _, err := e.open(id, e.token(t, g), "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := vncscreen.Dial(vncscreen.NewWebSocketStream(ws), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedWith waits for the next console's end and checks its reason.
func (e *env) closedWith(t *testing.T, reason string) {
	t.Helper()
	select {
	case line := <-e.audit.closed:
		if !strings.Contains(line, reason) {
			t.Errorf("audit line %q, want reason %q", line, reason)
		}
	case <-t.Context().Done():
		t.Fatal("test ended before the console closed")
	}
}

func alice(system string) Grant { return Grant{Session: "s-alice", User: "alice", System: system} }

func TestConsoleShowsTheScreenAndTypes(t *testing.T) {
	e := newEnv(t, Config{})
	c := e.rfb(t, vm1, alice(vm1))
	frame, err := c.Frame(false)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(frame.Pix, vncscreen.Render("vm-1", "Running").Pix) {
		t.Error("the frame through the console is not vm-1's screen")
	}
	if err := c.Key('x'); err != nil {
		t.Fatal(err)
	}
	if err := e.fleet.screens[vm1].WaitKey(t.Context(), 'x'); err != nil {
		t.Fatal(err)
	}
	c.Close()
	e.closedWith(t, "user=alice session=s-alice system=ns1.vm-1 viewOnly=false")
	if e.h.Open() != 0 {
		t.Errorf("%d consoles counted open after close", e.h.Open())
	}
}

func TestViewOnlyGrant(t *testing.T) {
	e := newEnv(t, Config{})
	g := alice(vm1)
	g.ViewOnly = true
	c := e.rfb(t, vm1, g)
	if err := c.Key('x'); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Frame(false); err != nil { // answered after the key was read
		t.Fatal(err)
	}
	if keys := e.fleet.screens[vm1].Keys(); len(keys) != 0 {
		t.Errorf("a view-only console typed %v", keys)
	}
}

// TestRefused: each attack is refused before the VM's screen is opened,
// with nothing left counted open.
func TestRefused(t *testing.T) {
	e := newEnv(t, Config{})
	replayed := e.token(t, alice(vm1))
	ws, _, err := e.open(vm1, replayed, "")
	if err != nil {
		t.Fatal(err)
	}
	ws.Close()
	e.closedWith(t, "alice")
	opened := e.fleet.opened.Load()
	other, err := NewTokens(bytes.Repeat([]byte{2}, 32), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	forged, _ := other.Issue(alice(vm1))
	expired := e.token(t, alice(vm1))
	for _, tc := range []struct {
		name, system, token, origin string
		before                      func()
		status                      int
	}{
		{"forged token", vm1, forged, "", nil, http.StatusUnauthorized},
		{"replayed token", vm1, replayed, "", nil, http.StatusUnauthorized},
		{"token for another System", vm2, e.token(t, alice(vm1)), "", nil, http.StatusUnauthorized},
		{"no token", vm1, "", "", nil, http.StatusUnauthorized},
		{"cross-origin", vm1, e.token(t, alice(vm1)), "https://evil.example", nil, http.StatusForbidden},
		{"logged-out session", vm1, e.token(t, Grant{Session: "s-gone", User: "alice", System: vm1}), "", func() { e.revs.revoked.Store("s-gone", true) }, http.StatusUnauthorized},
		{"expired token", vm1, expired, "", func() { later := time.Now().Add(2 * time.Minute); e.now.Store(&later) }, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.before != nil {
				tc.before()
			}
			_, resp, err := e.open(tc.system, tc.token, tc.origin)
			if err == nil || resp == nil || resp.StatusCode != tc.status {
				t.Errorf("err %v, response %v, want status %d", err, resp, tc.status)
			}
		})
	}
	if n := e.fleet.opened.Load(); n != opened {
		t.Errorf("%d screens opened by refused consoles", n-opened)
	}
	if e.h.Open() != 0 {
		t.Errorf("%d consoles counted open", e.h.Open())
	}
}

// TestManySessionsFromOneUser: past MaxSessionsPerUser every console of
// the user is refused (429) without a screen opened; another user is not.
func TestManySessionsFromOneUser(t *testing.T) {
	e := newEnv(t, Config{MaxSessionsPerUser: 3, MaxSessionsPerSystem: 100})
	for range 3 {
		e.rfb(t, vm1, alice(vm1))
	}
	for i := range 200 {
		_, resp, err := e.open(vm2, e.token(t, alice(vm2)), "")
		if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("console %d: err %v, response %v, want 429", 4+i, err, resp)
		}
	}
	if n := e.fleet.opened.Load(); n != 3 {
		t.Errorf("%d screens opened, want 3", n)
	}
	e.rfb(t, vm2, Grant{Session: "s-bob", User: "bob", System: vm2})
}

func TestLogoutEndsTheConsole(t *testing.T) {
	t.Run("logout through this replica", func(t *testing.T) {
		e := newEnv(t, Config{})
		e.rfb(t, vm1, alice(vm1))
		e.rfb(t, vm2, Grant{Session: "s-bob", User: "bob", System: vm2})
		e.h.SessionEnded("s-alice")
		e.closedWith(t, "user=alice session=s-alice system=ns1.vm-1 viewOnly=false")
		if e.h.Open() != 1 {
			t.Errorf("%d consoles open, want bob's 1", e.h.Open())
		}
	})
	t.Run("logout through another replica", func(t *testing.T) {
		e := newEnv(t, Config{SessionCheck: 10 * time.Millisecond})
		e.rfb(t, vm1, alice(vm1))
		e.revs.revoked.Store("s-alice", true)
		e.closedWith(t, "reason=\"redfish session ended\"")
	})
}

func TestIdleConsoleEnds(t *testing.T) {
	e := newEnv(t, Config{IdleTimeout: 50 * time.Millisecond})
	e.rfb(t, vm1, alice(vm1))
	e.closedWith(t, "idle timeout")
}

// TestBrowserThatNeverReads: a client asking for frames and reading none
// is dropped once one write to it blocks for WriteTimeout; the bridge
// holds one screen buffer for it meanwhile.
func TestBrowserThatNeverReads(t *testing.T) {
	e := newEnv(t, Config{WriteTimeout: 100 * time.Millisecond})
	ws, _, err := e.open(vm1, e.token(t, alice(vm1)), "")
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	handshake := append([]byte(vncscreen.ProtocolVersion), 1, 1)
	if err := ws.WriteMessage(websocket.BinaryMessage, handshake); err != nil {
		t.Fatal(err)
	}
	fullUpdate := []byte{3, 0, 0, 0, 0, 0, 2, 0x80, 0, 200}
	go func() {
		for ws.WriteMessage(websocket.BinaryMessage, fullUpdate) == nil {
		}
	}()
	e.closedWith(t, "browser did not read the screen")
}
