package eventdelivery

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/eventsub"
	"github.com/redfish-bridge/redfish-bridge/media/download"
)

// TestHangingReceiverDelaysNoOtherTenant: bob's receiver hangs on every
// request; alice's events are delivered while bob's first POST is still
// held.
func TestHangingReceiverDelaysNoOtherTenant(t *testing.T) {
	te := newTestEnv()
	held, release := make(chan struct{}, 10), make(chan struct{})
	hang := newReceiver(t, 204, func(*http.Request) {
		held <- struct{}{}
		<-release
	})
	defer close(release)
	ra := newReceiver(t, 204, nil)
	te.subscribe(t, "bob", hang.URL, nil)
	te.subscribe(t, "alice", ra.URL, nil)
	te.start(t, Config{})
	te.bus.Publish(ev("b1", "team-b", "vm3"))
	<-held // bob's receiver holds the first POST
	for _, id := range []string{"a1", "a2", "a3"} {
		te.bus.Publish(ev(id, "team-a", "vm1"))
	}
	for _, want := range []string{"a1", "a2", "a3"} {
		if got := ra.next(t); got != want {
			t.Fatalf("alice got %s, want %s", got, want)
		}
	}
	select {
	case <-hang.got:
		t.Fatal("the hanging receiver answered: the test proves nothing")
	default:
	}
}

// TestRedirectIsNotFollowed: a receiver answering 307 to another address
// (the metadata service, here a second receiver the policy allows) is a
// failed delivery: the target is never contacted, and after its retries
// the subscription is suspended.
func TestRedirectIsNotFollowed(t *testing.T) {
	te := newTestEnv()
	var targetHits atomic.Int32
	target := newReceiver(t, 204, func(*http.Request) { targetHits.Add(1) })
	redirector := newReceiver(t, 0, nil)
	redirector.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/latest/meta-data/", http.StatusTemporaryRedirect)
	})
	s := te.subscribe(t, "alice", redirector.URL, nil)
	te.start(t, Config{RetryAttempts: 2})
	te.bus.Publish(ev("a1", "team-a", "vm1"))
	var last error
	for range 3 {
		a := <-te.attempts
		if a.err == nil || !strings.Contains(a.err.Error(), "307") {
			t.Fatalf("attempt %v, want a 307 failure", a)
		}
		last = a.err
	}
	awaitState(t, te, s.ID, eventsub.StateDisabled)
	if n := targetHits.Load(); n != 0 {
		t.Errorf("the redirect target was contacted %d times", n)
	}
	t.Logf("last attempt: %v", last)
}

// awaitState waits until subscription id has state ("" for deleted).
func awaitState(t *testing.T, te *testEnv, id, state string) {
	t.Helper()
	w, err := eventsub.Watch(t.Context(), te.kube, "bridge", "events")
	if err != nil {
		t.Fatal(err)
	}
	for {
		changed := w.Changed()
		got := ""
		for _, s := range w.Subscriptions() {
			if s.ID == id {
				got = s.State
			}
		}
		if got == state {
			return
		}
		select {
		case <-changed:
		case <-t.Context().Done():
			t.Fatalf("subscription %s stayed %q, want %q", id, got, state)
		}
	}
}

// TestRetryPolicies: a receiver that keeps failing gets the service's
// retries, then its subscription is suspended (SuspendRetries) or
// deleted (TerminateAfterRetries); a suspended one is sent nothing more.
func TestRetryPolicies(t *testing.T) {
	for _, c := range []struct{ policy, state string }{
		{eventsub.RetrySuspend, eventsub.StateDisabled},
		{eventsub.RetryTerminate, ""},
	} {
		t.Run(c.policy, func(t *testing.T) {
			te := newTestEnv()
			var hits atomic.Int32
			bad := newReceiver(t, http.StatusInternalServerError, func(*http.Request) { hits.Add(1) })
			s := te.subscribe(t, "alice", bad.URL, func(r *eventsub.Request) { r.RetryPolicy = c.policy })
			te.start(t, Config{RetryAttempts: 3})
			te.bus.Publish(ev("a1", "team-a", "vm1"))
			awaitState(t, te, s.ID, c.state)
			if n := hits.Load(); n != 4 {
				t.Errorf("%d attempts, want 1 + 3 retries", n)
			}
		})
	}
}

// TestFullQueueSuspends: a receiver that hangs while events keep coming
// fills its bounded queue; the subscription is suspended rather than
// holding more.
func TestFullQueueSuspends(t *testing.T) {
	te := newTestEnv()
	held, release := make(chan struct{}, 10), make(chan struct{})
	hang := newReceiver(t, 204, func(*http.Request) {
		held <- struct{}{}
		<-release
	})
	defer close(release)
	s := te.subscribe(t, "alice", hang.URL, nil)
	te.start(t, Config{QueueSize: 2})
	te.bus.Publish(ev("a0", "team-a", "vm1"))
	<-held
	for _, id := range []string{"a1", "a2", "a3"} { // a1, a2 fill the queue; a3 overflows
		te.bus.Publish(ev(id, "team-a", "vm1"))
	}
	awaitState(t, te, s.ID, eventsub.StateDisabled)
}

// TestDestinationPolicyAtDial: a host name that resolves to a refused
// address (localhost under the default policy) passes Validate (a name
// is not resolved there) but every connection to it is refused.
func TestDestinationPolicyAtDial(t *testing.T) {
	te := newTestEnv()
	var hits atomic.Int32
	rc := newReceiver(t, 204, func(*http.Request) { hits.Add(1) })
	dest := strings.Replace(rc.URL, "127.0.0.1", "localhost", 1)
	te.subscribe(t, "alice", dest, nil)
	te.start(t, Config{AddrPolicy: download.AddrPolicy{DenyLoopback: true}, RetryAttempts: 1})
	te.bus.Publish(ev("a1", "team-a", "vm1"))
	a := <-te.attempts
	var refused *download.RefusedAddrError
	if !errors.As(a.err, &refused) {
		t.Fatalf("attempt error %v, want a refused address", a.err)
	}
	if hits.Load() != 0 {
		t.Error("the receiver on loopback was contacted")
	}
}
