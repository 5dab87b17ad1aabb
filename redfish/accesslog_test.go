package redfish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) take() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf.String()
	b.buf.Reset()
	return s
}

// TestAccessLogLevel checks who gets an access-log line at which level:
// successful reads at Debug only (an Info logger drops them), errors and
// writes at Info.
func TestAccessLogLevel(t *testing.T) {
	base := newEnv(t)
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		t.Run(level.String(), func(t *testing.T) {
			var sink lockedBuffer
			e, err := New(Config{ServiceUUID: "8a3d1f0e-1111-4222-8333-444455556666",
				Logger: slog.New(slog.NewTextHandler(&sink, &slog.HandlerOptions{Level: level}))},
				backendsOf(base.fake, base.auth))
			if err != nil {
				t.Fatal(err)
			}
			env := &env{fake: base.fake, e: e, auth: base.auth}
			for _, tc := range []struct {
				name string
				r    req
				want string // level of the line; "" for none
			}{
				{"GET 200", req{path: "/redfish/v1/Systems/team-a.vm1", user: "admin"}, "DEBUG"},
				{"HEAD 200", req{method: http.MethodHead, path: "/redfish/v1/Systems", user: "admin"}, "DEBUG"},
				{"GET 404", req{path: "/redfish/v1/Systems/team-a.nope", user: "admin"}, "INFO"},
				{"GET 401", req{path: "/redfish/v1/Systems/team-a.vm1"}, "INFO"},
				{"POST 204", req{method: http.MethodPost, path: "/redfish/v1/Systems/team-a.vm1/Actions/ComputerSystem.Reset",
					body: `{"ResetType":"On"}`, user: "admin"}, "INFO"},
				{"PATCH 400", req{method: http.MethodPatch, path: "/redfish/v1/Systems/team-a.vm1", body: `{"Boot":7}`, user: "admin"}, "INFO"},
			} {
				rec := env.do(t, tc.r)
				line := sink.take()
				want := tc.want
				if want == "DEBUG" && level > slog.LevelDebug {
					want = ""
				}
				got := ""
				if i := strings.Index(line, "level="); i >= 0 && strings.Contains(line, "msg=request") {
					got = strings.Fields(line[i+len("level="):])[0]
				}
				if got != want {
					t.Errorf("%s (status %d), logger at %s: access-log level %q, want %q; log: %q", tc.name, rec.Code, level, got, want, line)
				}
			}
		})
	}
}

// loggingPower is a backend that logs through the logger in its context.
type loggingPower struct{ Power }

func (p loggingPower) Reset(ctx context.Context, key system.Key, kind system.ResetType) error {
	logctx.From(ctx).Info("backend reset", "vm", key)
	return p.Power.Reset(ctx, key, kind)
}

// TestBackendLogsWithRequestID: what the backends log carries the request
// id, because the request's logger travels in the context (logctx).
func TestBackendLogsWithRequestID(t *testing.T) {
	base := newEnv(t)
	var sink lockedBuffer
	e, err := New(Config{ServiceUUID: "8a3d1f0e-1111-4222-8333-444455556666",
		Logger: slog.New(slog.NewTextHandler(&sink, nil))},
		func() Backends { b := backendsOf(base.fake, base.auth); b.Power = loggingPower{base.fake}; return b }())
	if err != nil {
		t.Fatal(err)
	}
	env := &env{fake: base.fake, e: e, auth: base.auth}
	rec := env.do(t, req{method: http.MethodPost, path: "/redfish/v1/Systems/team-a.vm1/Actions/ComputerSystem.Reset",
		body: `{"ResetType":"On"}`, user: "admin", header: map[string]string{HeaderRequestID: "req-42"}})
	if rec.Code/100 != 2 {
		t.Fatalf("reset: %d %s", rec.Code, rec.Body)
	}
	var line string
	for _, l := range strings.Split(sink.take(), "\n") {
		if strings.Contains(l, "backend reset") {
			line = l
		}
	}
	if !strings.Contains(line, "request=req-42") {
		t.Errorf("the backend's line lacks the request id: %q", line)
	}
}

// TestErrorLogLevel: the error handler logs at Error only what the service
// failed to do (5xx); what the client's request earned (4xx, and 501 for a
// query parameter or request the service does not implement) is Info, so
// an unsupported $filter does not trip alerting on Error lines.
func TestErrorLogLevel(t *testing.T) {
	base := newEnv(t)
	var sink lockedBuffer
	e, err := New(Config{ServiceUUID: "8a3d1f0e-1111-4222-8333-444455556666",
		Logger: slog.New(slog.NewTextHandler(&sink, &slog.HandlerOptions{Level: slog.LevelDebug}))},
		backendsOf(base.fake, base.auth))
	if err != nil {
		t.Fatal(err)
	}
	env := &env{fake: base.fake, e: e, auth: base.auth}
	for _, tc := range []struct {
		name       string
		r          req
		backendErr error
		wantStatus int
		want       string // the error handler's line: "INFO request rejected" or "ERROR request failed"
	}{
		{"unsupported query parameter", req{path: "/redfish/v1/Systems?$filter=Name", user: "admin"}, nil, http.StatusNotImplemented, "INFO request rejected"},
		{"not implemented", req{path: "/redfish/v1/Systems/team-a.vm1", user: "admin"}, ErrNotSupported, http.StatusNotImplemented, "INFO request rejected"},
		{"missing", req{path: "/redfish/v1/Systems/team-a.nope", user: "admin"}, nil, http.StatusNotFound, "INFO request rejected"},
		{"unauthenticated", req{path: "/redfish/v1/Systems/team-a.vm1"}, nil, http.StatusUnauthorized, "INFO request rejected"},
		{"bad body", req{method: http.MethodPatch, path: "/redfish/v1/Systems/team-a.vm1", body: `{"Boot":7}`, user: "admin"}, nil, http.StatusBadRequest, "INFO request rejected"},
		{"session limit", req{path: "/redfish/v1/Systems/team-a.vm1", user: "admin"}, fmt.Errorf("login: %w", auth.ErrSessionLimit), http.StatusServiceUnavailable, "INFO request rejected"},
		{"unavailable", req{path: "/redfish/v1/Systems/team-a.vm1", user: "admin"}, ErrUnavailable, http.StatusServiceUnavailable, "ERROR request failed"},
		{"internal", req{path: "/redfish/v1/Systems/team-a.vm1", user: "admin"}, errors.New("boom"), http.StatusInternalServerError, "ERROR request failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base.fake.setErr(tc.backendErr)
			t.Cleanup(func() { base.fake.setErr(nil) })
			rec := env.do(t, tc.r)
			log := sink.take()
			if rec.Code != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.wantStatus, rec.Body)
			}
			var got []string
			for _, l := range strings.Split(log, "\n") {
				if strings.Contains(l, "msg=\"request ") {
					f := strings.Fields(l)
					got = append(got, strings.TrimPrefix(f[1], "level=")+" "+strings.Trim(strings.TrimPrefix(f[2]+" "+f[3], "msg="), `"`))
				}
			}
			if d := cmp.Diff([]string{tc.want}, got); d != "" {
				t.Errorf("error handler's log lines (-want +got):\n%s\nlog: %s", d, log)
			}
			if strings.Contains(log, "level=ERROR") != strings.HasPrefix(tc.want, "ERROR") {
				t.Errorf("an Error line iff the service failed, want %q; log: %s", tc.want, log)
			}
		})
	}
}

// TestRequestLoggerFromContext: with no Config.Logger, a request logs
// through the logger its context carries (the server's BaseContext: the
// bridge's), not nowhere.
func TestRequestLoggerFromContext(t *testing.T) {
	base := newEnv(t)
	e, err := New(Config{ServiceUUID: "8a3d1f0e-1111-4222-8333-444455556666"},
		backendsOf(base.fake, base.auth))
	if err != nil {
		t.Fatal(err)
	}
	var sink lockedBuffer
	ctx := logctx.Into(t.Context(), slog.New(slog.NewTextHandler(&sink, nil)).With("server", "s1"))
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/redfish/v1/Systems/team-a.nope", nil)
	r.SetBasicAuth("admin", "admin-pw")
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, r)
	if log := sink.take(); rec.Code != http.StatusNotFound || !strings.Contains(log, "server=s1") || !strings.Contains(log, "msg=request ") {
		t.Errorf("status %d; the context's logger got no access line: %q", rec.Code, log)
	}
}
