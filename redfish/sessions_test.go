package redfish

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

func login(t *testing.T, e *env, user, password string) (token, location string) {
	t.Helper()
	rec := e.do(t, req{method: http.MethodPost, path: "/redfish/v1/SessionService/Sessions",
		body: `{"UserName":"` + user + `","Password":"` + password + `"}`})
	if rec.Code != http.StatusCreated {
		t.Fatalf("login %s: %d %s", user, rec.Code, rec.Body)
	}
	body := decode(t, rec)
	token, location = rec.Header().Get(HeaderAuthToken), rec.Header().Get("Location")
	if token == "" || location == "" || body["@odata.id"] != location || body["UserName"] != user {
		t.Fatalf("login answer: token %q, Location %q, body %v", token, location, body)
	}
	return token, location
}

func TestSessionLifecycle(t *testing.T) {
	e := newEnv(t)
	tok, loc := login(t, e, "alice", "alice-pw")
	// The token works, shows alice's scope, and lists only its own session.
	if got := members(t, decode(t, e.do(t, req{path: "/redfish/v1/Systems", token: tok}))); len(got) != 2 {
		t.Errorf("alice's systems with a token: %v", got)
	}
	if diff := cmp.Diff([]string{loc}, members(t, decode(t, e.do(t, req{path: "/redfish/v1/SessionService/Sessions", token: tok})))); diff != "" {
		t.Errorf("sessions (-want +got):\n%s", diff)
	}
	if rec := e.do(t, req{path: loc, token: tok}); rec.Code != http.StatusOK {
		t.Errorf("GET own session: %d", rec.Code)
	}
	// Another user's token cannot see or delete it (an Administrator can:
	// TestAdministratorSessions).
	bobTok, _ := login(t, e, "bob", "bob-pw")
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		if rec := e.do(t, req{method: m, path: loc, token: bobTok}); rec.Code != http.StatusNotFound {
			t.Errorf("%s alice's session as bob: %d, want 404", m, rec.Code)
		}
		if rec := e.do(t, req{method: m, path: loc, user: "carol"}); rec.Code != http.StatusNotFound {
			t.Errorf("%s alice's session with Basic carol: %d, want 404", m, rec.Code)
		}
	}
	// A second replica with the same key and revocation store accepts it.
	other := newEnv(t)
	a2, err := auth.New(auth.Config{Users: usersOf(t, e), Revocations: e.revs, Sessions: e.revs,
		Key: []byte("0123456789abcdef0123456789abcdef"), Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	other.auth = a2
	if other.e, err = New(Config{ServiceUUID: "u"}, backendsOf(other.fake, a2)); err != nil {
		t.Fatal(err)
	}
	if rec := other.do(t, req{path: "/redfish/v1/Systems/team-a.vm1", token: tok}); rec.Code != http.StatusOK {
		t.Errorf("other replica: %d %s", rec.Code, rec.Body)
	}
	// Logout on one replica ends it on both.
	if rec := e.do(t, req{method: http.MethodDelete, path: loc + "/", token: tok}); rec.Code != http.StatusNoContent {
		t.Fatalf("DELETE session: %d %s", rec.Code, rec.Body)
	}
	for name, x := range map[string]*env{"this": e, "other": other} {
		got := errInfo(t, x.do(t, req{path: "/redfish/v1/Systems", token: tok}))
		if diff := cmp.Diff(errorInfo{Status: 401, IDs: []string{"NoValidSession"}}, got); diff != "" {
			t.Errorf("%s replica after logout (-want +got):\n%s", name, diff)
		}
	}
	// Bob's session is unaffected.
	if rec := e.do(t, req{path: "/redfish/v1/Systems", token: bobTok}); rec.Code != http.StatusOK {
		t.Errorf("bob after alice's logout: %d", rec.Code)
	}
}

func usersOf(t *testing.T, e *env) auth.Users {
	t.Helper()
	users := auth.StaticUsers{}
	for _, u := range testUsers {
		users[u.name] = auth.User{Name: u.name, PasswordHash: hashes()[u.name], Scope: auth.Scope{Namespaces: []string{u.namespaces}}}
	}
	return users
}

// TestSessionExpires: SessionTimeout is an inactivity timeout (Redfish;
// issue #41: Ironic got a 401 mid-deploy 30 minutes after its login): a
// session used within it stays open past it, and ends once unused for it
// (within a tenth of it more).
func TestSessionExpires(t *testing.T) {
	e := newEnv(t)
	tok, _ := login(t, e, "bob", "bob-pw")
	for _, after := range []time.Duration{59 * time.Minute, 2 * 59 * time.Minute} {
		e.clock.Add(59 * time.Minute)
		if rec := e.do(t, req{path: "/redfish/v1/Systems", token: tok}); rec.Code != http.StatusOK {
			t.Fatalf("in use, %s after the login: %d", after, rec.Code)
		}
	}
	e.clock.Add(time.Hour + time.Hour/10 + time.Second)
	if got := errInfo(t, e.do(t, req{path: "/redfish/v1/Systems", token: tok})); got.Status != 401 {
		t.Errorf("after expiry: %+v", got)
	}
	if ttl := e.get(t, "bob", "/redfish/v1/SessionService")["SessionTimeout"]; ttl != 3600.0 {
		t.Errorf("SessionTimeout %v", ttl)
	}
}

func TestLoginErrors(t *testing.T) {
	tests := []struct {
		name string
		r    req
		want errorInfo
	}{
		{"wrong password", req{body: `{"UserName":"alice","Password":"nope"}`}, errorInfo{Status: 401, IDs: []string{"AccessDenied"}}},
		{"unknown user", req{body: `{"UserName":"mallory","Password":"x"}`}, errorInfo{Status: 401, IDs: []string{"AccessDenied"}}},
		{"missing both", req{body: `{}`}, errorInfo{Status: 400, IDs: []string{"CreateFailedMissingReqProperties", "CreateFailedMissingReqProperties"}, Related: []string{"#/UserName", "#/Password"}}},
		{"wrong type", req{body: `{"UserName":"alice","Password":5}`}, errorInfo{Status: 400, IDs: []string{"PropertyValueTypeError"}, Related: []string{"#/Password"}}},
		{"form", req{body: `UserName=alice`, ctype: echo.MIMEApplicationForm}, errorInfo{Status: 415, IDs: []string{"UnrecognizedRequestBody"}}},
		{"bad token", req{method: http.MethodGet, token: "rb1.e30.AAAA"}, errorInfo{Status: 401, IDs: []string{"NoValidSession"}}},
		{"bad basic", req{method: http.MethodGet, header: map[string]string{"Authorization": "Basic YWxpY2U6bm9wZQ=="}}, errorInfo{Status: 401, IDs: []string{"AccessDenied"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			tt.r.path = "/redfish/v1/SessionService/Sessions"
			if tt.r.method == "" {
				tt.r.method = http.MethodPost
			}
			if diff := cmp.Diff(tt.want, errInfo(t, e.do(t, tt.r))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestLoginThrottle: failures from one address slow that address down for
// that user, with 429 and Retry-After, while the same user from another
// address and another user from the same address still log in.
func TestLoginThrottle(t *testing.T) {
	e := newEnv(t)
	const attacker, victim = "198.51.100.7:5555", "203.0.113.9:4444"
	bad := req{method: http.MethodPost, path: "/redfish/v1/SessionService/Sessions", body: `{"UserName":"alice","Password":"guess"}`, remote: attacker}
	var codes []int
	for range 5 {
		codes = append(codes, e.do(t, bad).Code)
	}
	if diff := cmp.Diff([]int{401, 401, 401, 401, 429}, codes); diff != "" {
		t.Errorf("statuses of repeated failures (-want +got):\n%s", diff)
	}
	rec := e.do(t, bad)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
		t.Errorf("throttled answer %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	// Even the right password is refused from the throttled address...
	good := bad
	good.body = `{"UserName":"alice","Password":"alice-pw"}`
	if got := e.do(t, good).Code; got != http.StatusTooManyRequests {
		t.Errorf("right password from throttled address: %d, want 429", got)
	}
	// ...but not from the real user's address, nor for another user, nor
	// through X-Forwarded-For games.
	good.remote = victim
	if got := e.do(t, good).Code; got != http.StatusCreated {
		t.Errorf("alice from her own address: %d", got)
	}
	bob := req{method: http.MethodPost, path: "/redfish/v1/SessionService/Sessions", body: `{"UserName":"bob","Password":"bob-pw"}`, remote: attacker}
	if got := e.do(t, bob).Code; got != http.StatusCreated {
		t.Errorf("bob from the attacker's address: %d", got)
	}
	spoof := bad
	spoof.header = map[string]string{"X-Forwarded-For": "10.9.9.9", "X-Real-Ip": "10.9.9.9"}
	if got := e.do(t, spoof).Code; got != http.StatusTooManyRequests {
		t.Errorf("attacker with X-Forwarded-For: %d, want 429", got)
	}
	// Basic auth is throttled the same way.
	basic := req{path: "/redfish/v1/Systems", remote: attacker, header: map[string]string{"Authorization": "Basic YWxpY2U6Z3Vlc3M="}}
	if got := e.do(t, basic).Code; got != http.StatusTooManyRequests {
		t.Errorf("Basic from throttled address: %d, want 429", got)
	}
	// The delay passes.
	e.clock.Add(10 * time.Minute)
	good.remote = attacker
	if got := e.do(t, good).Code; got != http.StatusCreated {
		t.Errorf("after the delay: %d", got)
	}
}

// TestConcurrentClients runs several users' clients at once (Basic and
// sessions), as many Ironic conductors do; run with -race.
func TestConcurrentClients(t *testing.T) {
	e := newEnv(t)
	want := map[string]int{"admin": 3, "alice": 2, "bob": 1, "carol": 1}
	var wg sync.WaitGroup
	errs := make(chan string, 400)
	for user, n := range want {
		for i := range 5 {
			wg.Go(func() {
				r := req{path: "/redfish/v1/Systems", user: user}
				if i%2 == 1 {
					rec := e.do(t, req{method: http.MethodPost, path: "/redfish/v1/SessionService/Sessions",
						body: `{"UserName":"` + user + `","Password":"` + user + `-pw"}`})
					r = req{path: "/redfish/v1/Systems", token: rec.Header().Get(HeaderAuthToken)}
				}
				for range 10 {
					rec := e.do(t, r)
					var body struct{ Members []any }
					if err := json.Unmarshal(rec.Body.Bytes(), &body); rec.Code != http.StatusOK || err != nil || len(body.Members) != n {
						errs <- fmt.Sprintf("%s: %d, %d members", user, rec.Code, len(body.Members))
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestLoginAtSessionLimit: a login the session store cannot record is
// refused with 503 SessionLimitExceeded and a Retry-After, opens nothing,
// and succeeds again once a session ended.
func TestLoginAtSessionLimit(t *testing.T) {
	e := newEnv(t)
	e.revs.limit = 1
	tok, loc := login(t, e, "alice", "alice-pw")
	rec := e.do(t, req{method: http.MethodPost, path: "/redfish/v1/SessionService/Sessions", body: `{"UserName":"bob","Password":"bob-pw"}`})
	if diff := cmp.Diff(errorInfo{Status: 503, IDs: []string{"SessionLimitExceeded"}}, errInfo(t, rec)); diff != "" {
		t.Errorf("login at the limit (-want +got):\n%s", diff)
	}
	if rec.Header().Get("Retry-After") == "" || rec.Header().Get(HeaderAuthToken) != "" {
		t.Errorf("login at the limit: Retry-After %q, X-Auth-Token %q", rec.Header().Get("Retry-After"), rec.Header().Get(HeaderAuthToken))
	}
	if rec := e.do(t, req{method: http.MethodDelete, path: loc, token: tok}); rec.Code != http.StatusNoContent {
		t.Fatalf("logout: %d %s", rec.Code, rec.Body)
	}
	login(t, e, "bob", "bob-pw")
}

// TestLogoutRefused is docs/reliability.md row 18 seen by the client: a logout the
// session store refuses is 503 with Retry-After and a Redfish body saying
// the session stays valid (it was 500 InternalError), the token still
// works, and the retry ends it.
func TestLogoutRefused(t *testing.T) {
	e := newEnv(t)
	tok, loc := login(t, e, "alice", "alice-pw")
	e.revs.mu.Lock()
	e.revs.revokeErr = errors.New("configmaps \"redfish-bridge-sessions\" is invalid: field is immutable")
	e.revs.mu.Unlock()
	rec := e.do(t, req{method: http.MethodDelete, path: loc, token: tok})
	if diff := cmp.Diff(errorInfo{Status: 503, IDs: []string{"ServiceTemporarilyUnavailable"}}, errInfo(t, rec)); diff != "" {
		t.Errorf("refused logout (-want +got):\n%s", diff)
	}
	if got := rec.Header().Get("Retry-After"); got != "5" {
		t.Errorf("refused logout: Retry-After %q, want 5", got)
	}
	if !strings.Contains(rec.Body.String(), "stays valid") || strings.Contains(rec.Body.String(), "immutable") {
		t.Errorf("refused logout body: %s", rec.Body)
	}
	if rec := e.do(t, req{path: sessionServiceURI, token: tok}); rec.Code != http.StatusOK {
		t.Errorf("token after a refused logout: %d, want 200", rec.Code)
	}
	e.revs.mu.Lock()
	e.revs.revokeErr = nil
	e.revs.mu.Unlock()
	if rec := e.do(t, req{method: http.MethodDelete, path: loc, token: tok}); rec.Code != http.StatusNoContent {
		t.Fatalf("retried logout: %d %s", rec.Code, rec.Body)
	}
	if rec := e.do(t, req{path: sessionServiceURI, token: tok}); rec.Code != http.StatusUnauthorized {
		t.Errorf("token after the logout: %d, want 401", rec.Code)
	}
}
