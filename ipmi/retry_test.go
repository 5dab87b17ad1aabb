package ipmi

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// gatedBackend holds its first Reset until released, telling when it
// entered; later ones run at once.
type gatedBackend struct {
	*fakeBackend
	calls            atomic.Int32
	entered, release chan struct{}
}

func (g *gatedBackend) Reset(ctx context.Context, key system.Key, kind system.ResetType) error {
	if g.calls.Add(1) == 1 {
		g.entered <- struct{}{}
		<-g.release
	}
	return g.fakeBackend.Reset(ctx, key, kind)
}

// TestRetryRunsOnce: ipmitool resends a request it got no answer to under
// a new session sequence number. A resend while the command runs gets no
// answer; one after it gets the first answer; the command runs once.
func TestRetryRunsOnce(t *testing.T) {
	g := &gatedBackend{fakeBackend: offBackend(), entered: make(chan struct{}), release: make(chan struct{})}
	e := newTestEndpoint(g)
	c := newRawClient(t, e, "192.0.2.1:600")
	if st, step := c.login("alice", "alice-ipmi-pw"); st != statusOK {
		t.Fatalf("login: %#x at %d", st, step)
	}
	msg := []byte{0x20, netFnChassis << 2}
	msg = append(msg, checksum(msg), 0x81, 0x30<<2, cmdChassisControl, controlPowerUp)
	msg = append(msg, checksum(msg[3:]))
	first := make(chan []byte, 1)
	go func() { first <- e.handle(context.Background(), c.wrap(msg), c.from) }()
	<-g.entered
	if out := c.send(c.wrap(msg)); out != nil {
		t.Error("a resend while the command runs was answered")
	}
	close(g.release)
	if cc, _, ok := c.answer(<-first); !ok || cc != ccOK {
		t.Fatalf("first: cc %#x answered %v", cc, ok)
	}
	if cc, _, ok := c.answer(c.send(c.wrap(msg))); !ok || cc != ccOK {
		t.Fatalf("resend after: cc %#x answered %v", cc, ok)
	}
	if len(g.resets) != 1 {
		t.Fatalf("resets %v, want one On", g.resets)
	}
}
