package vncconsole

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/redfish-bridge/redfish-bridge/harness/browser"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/harness/vncscreen"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Keysyms the browser test types.
const (
	keyA      = 0x61   // 'a'
	keyB      = 0x62   // 'b'
	keyDelete = 0xffff // the last of Ctrl-Alt-Del
)

// servedFleet is a fleet whose screens' connections can be waited on: a
// console's bytes have all reached the screen once its Serve returned.
type servedFleet struct {
	*fleet
	mu     sync.Mutex
	served []chan struct{}
}

func (f *servedFleet) OpenScreen(ctx context.Context, key system.Key) (io.ReadWriteCloser, error) {
	s, ok := f.screens[key.ID()]
	if !ok {
		return nil, io.EOF
	}
	done := make(chan struct{})
	f.mu.Lock()
	f.served = append(f.served, done)
	f.mu.Unlock()
	vm, bridge := net.Pipe()
	go func() { defer close(done); _ = s.Serve(context.WithoutCancel(ctx), vm) }()
	return bridge, nil
}

// allServed waits until every screen connection opened so far has ended.
func (f *servedFleet) allServed(t *testing.T) {
	t.Helper()
	f.mu.Lock()
	served := append([]chan struct{}(nil), f.served...)
	f.mu.Unlock()
	for _, done := range served {
		select {
		case <-done:
		case <-t.Context().Done():
			t.Fatal("test ended before the screen connections ended")
		}
	}
}

// pageAPI plays the two Redfish requests the console page makes (a
// session, the Manager's token action) and the logout, as package redfish
// answers them: user "away" is scoped away from every System (404),
// "reader" is ReadOnly (a view-only token).
func pageAPI(c *Console) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /redfish/v1/SessionService/Sessions", func(w http.ResponseWriter, r *http.Request) {
		var body struct{ UserName string }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("X-Auth-Token", "tok-"+body.UserName)
		w.Header().Set("Location", "/redfish/v1/SessionService/Sessions/s-"+body.UserName)
		w.WriteHeader(http.StatusCreated)
	})
	mux.HandleFunc("POST /redfish/v1/Managers/{id}/Actions/Oem/RedfishBridge.ConsoleToken", func(w http.ResponseWriter, r *http.Request) {
		user, ok := strings.CutPrefix(r.Header.Get("X-Auth-Token"), "tok-")
		if !ok {
			http.Error(w, "{}", http.StatusUnauthorized)
			return
		}
		if user == "away" {
			http.Error(w, "{}", http.StatusNotFound)
			return
		}
		viewOnly := user == "reader"
		tok, err := c.Issue("s-"+user, user, r.PathValue("id"), viewOnly)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"Token": tok, "ViewOnly": viewOnly})
	})
	mux.HandleFunc("DELETE /redfish/v1/SessionService/Sessions/{sid}", func(w http.ResponseWriter, r *http.Request) {
		c.SessionEnded(r.PathValue("sid"))
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}

// TestConsolePageInChromium drives the console page in Debian's chromium
// with Debian's noVNC (its real JavaScript) through the relay to the
// simulated VM's RFB server: the page logs in, noVNC connects, the
// canvas holds the VM's screen pixel for pixel (its name), a typed key
// and Ctrl-Alt-Del reach the VM, Close ends the console; a ReadOnly user's
// console is view-only (its key never reaches the VM), a scoped-away user
// is told there is no such System, and logging out ends an open console.
func TestConsolePageInChromium(t *testing.T) {
	if _, err := os.Stat(DefaultNoVNCDir + "/core/rfb.js"); err != nil {
		testutil.Missing(t, "Debian's novnc is not installed (.ci/run installs it)")
	}
	f := &servedFleet{fleet: &fleet{screens: map[string]*vncscreen.Screen{vm1: vncscreen.New("vm-1", "Running")}}}
	audit := &auditLog{closed: make(chan string, 100)}
	c, err := New(Config{}, bytes.Repeat([]byte{2}, 32), f, &revocations{})
	if err != nil {
		t.Fatal(err)
	}
	api := pageAPI(c)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, PathPrefix) {
			c.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	}))
	log := slog.New(slog.NewTextHandler(audit, nil))
	srv.Config.BaseContext = func(net.Listener) context.Context { return logctx.Into(context.Background(), log) }
	srv.Start()
	t.Cleanup(srv.Close)
	b := browser.Start(t, browser.Options{})
	screen := f.screens[vm1]

	// open logs user in on a new tab's console page of vm1 and waits for
	// the page's state (Connected, No such System, ...).
	open := func(t *testing.T, user, state string) *browser.Browser {
		t.Helper()
		tab := b.Tab(t)
		if err := tab.Do(t.Context(), chromedp.Navigate(srv.URL+PathPrefix+vm1),
			chromedp.WaitVisible(chromedp.ID("user")),
			chromedp.SendKeys(chromedp.ID("user"), user), chromedp.SendKeys(chromedp.ID("password"), "pw"),
			chromedp.Click(chromedp.CSS("#login button[type=submit]")),
			browser.WaitFor(`['Connected', 'Closed', 'Disconnected', 'No such System'].includes(document.body.dataset.state) || document.getElementById('loginError').textContent !== ''`),
		); err != nil {
			t.Fatal(err)
		}
		if got := pageState(t, tab); got != state {
			t.Fatalf("%s's console page: %q, want %q", user, got, state)
		}
		return tab
	}
	typeKey := func(t *testing.T, tab *browser.Browser, key string) {
		t.Helper()
		if err := tab.Do(t.Context(), chromedp.Click(chromedp.CSS(screenCanvas)), chromedp.KeyEvent(key)); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("operator", func(t *testing.T) {
		tab := open(t, "alice", "Connected")
		want := vncscreen.Render("vm-1", "Running")
		if err := tab.Do(t.Context(), browser.WaitFor(browser.CanvasDrawn(screenCanvas))); err != nil {
			t.Fatal(err)
		}
		got, err := browser.Canvas(t.Context(), tab, screenCanvas)
		if err != nil {
			t.Fatal(err)
		}
		if d := vncscreen.Diff(got, want, vncscreen.TextBounds("vm-1")); d != "" {
			t.Fatalf("the canvas does not show the VM's name where the VM draws it: %s", d)
		}
		if d := vncscreen.Diff(got, want, want.Bounds()); d != "" || got.Bounds() != want.Bounds() {
			t.Errorf("the canvas (%v) is not the VM's screen (%v): %s", got.Bounds(), want.Bounds(), d)
		}
		typeKey(t, tab, "a")
		if err := screen.WaitKey(t.Context(), keyA); err != nil {
			t.Fatalf("the VM never received the key typed: %v", err)
		}
		if err := tab.Do(t.Context(), chromedp.Click(chromedp.ID("cad"))); err != nil {
			t.Fatal(err)
		}
		if err := screen.WaitKey(t.Context(), keyDelete); err != nil {
			t.Fatalf("the VM never received Ctrl-Alt-Del: %v", err)
		}
		if err := tab.Do(t.Context(), chromedp.Click(chromedp.ID("disconnect")),
			browser.WaitFor(`document.body.dataset.state === 'Closed'`)); err != nil {
			t.Fatal(err)
		}
		closedWith(t, audit, "user=alice")
	})
	t.Run("scoped away", func(t *testing.T) {
		open(t, "away", "No such System")
	})
	t.Run("ReadOnly is view-only", func(t *testing.T) {
		tab := open(t, "reader", "Connected")
		if mode, err := browser.Run(t.Context(), tab, chromedp.Text(chromedp.ID("mode"))); err != nil || mode != "View only" {
			t.Errorf("mode %q (%v), want View only", mode, err)
		}
		typeKey(t, tab, "b")
		if err := tab.Do(t.Context(), chromedp.Click(chromedp.ID("disconnect")),
			browser.WaitFor(`document.body.dataset.state === 'Closed'`)); err != nil {
			t.Fatal(err)
		}
		closedWith(t, audit, "user=reader")
		f.allServed(t)
		for _, k := range screen.Keys() {
			if k.Sym == keyB {
				t.Fatalf("the ReadOnly user's key reached the VM: %v", screen.Keys())
			}
		}
	})
	t.Run("logout ends the open console", func(t *testing.T) {
		tab := open(t, "alice", "Connected")
		if err := tab.Do(t.Context(), chromedp.Click(chromedp.ID("logout"))); err != nil {
			t.Fatal(err)
		}
		closedWith(t, audit, "user=alice")
		if n := c.Open(); n != 0 {
			t.Errorf("%d consoles open after the logout", n)
		}
	})
}

// screenCanvas selects noVNC's canvas on the console page.
const screenCanvas = "#screen canvas"

func pageState(t *testing.T, tab *browser.Browser) string {
	t.Helper()
	s, err := browser.Run(t.Context(), tab, chromedp.Evaluate[string](`document.body.dataset.state || document.getElementById('loginError').textContent`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// closedWith waits for the next console's audit line and checks it names want.
func closedWith(t *testing.T, audit *auditLog, want string) {
	t.Helper()
	select {
	case line := <-audit.closed:
		if !strings.Contains(line, want) {
			t.Errorf("audit line %q, want %q", line, want)
		}
	case <-t.Context().Done():
		t.Fatal("test ended before the console closed")
	}
}
