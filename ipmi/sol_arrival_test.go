package ipmi

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

// TestSOLPacketsHandledInArrivalOrder: a client that sends its next SOL
// packets before the last one's acknowledgement came (ipmitool does when
// the BMC's own data arrives first, and then never sends the last one
// again) gets every character to the guest, in order, through the
// server's socket: one session's SOL packets are handled in the order
// they arrive. Handled each on a goroutine of its own (the control), a
// packet passed by the next one was taken for a stale resend and dropped:
// BenchmarkConsole's SOL echo stalled for good at 205,745 of 262,144
// bytes.
func TestSOLPacketsHandledInArrivalOrder(t *testing.T) {
	const bursts, perBurst = 25, 8
	// burst sends packets of burst b back to back and returns all the
	// characters sent so far and what the guest has read once it read
	// the burst's last packet.
	type rig struct {
		srv  *Server
		c    *rawClient
		g    *recordingGuest
		seq  byte
		want strings.Builder
	}
	start := func(t *testing.T, unordered bool) *rig {
		t.Helper()
		g := &recordingGuest{in: make(chan struct{}, 1)}
		cons := newFakeConsoles()
		cons.guest = g.run
		srv, port := startServerWith(t, offBackend(), cons)
		srv.unorderedSOL.Store(unordered)
		c := newUDPClient(t, port)
		if st, step := c.login("alice", "alice-ipmi-pw"); st != statusOK {
			t.Fatalf("login: %#x at %d", st, step)
		}
		if cc, _, ok := c.answer(c.send(c.request(netFnApp, cmdActivatePayload, payloadSOL, 1, 0xC6, 0, 0, 0))); !ok || cc != ccOK {
			t.Fatalf("Activate Payload: %#x (answered %v)", cc, ok)
		}
		return &rig{srv: srv, c: c, g: g}
	}
	burst := func(t *testing.T, r *rig, b int) (want, got string) {
		t.Helper()
		var last string
		for i := range perBurst {
			r.seq = r.seq%15 + 1
			last = fmt.Sprintf("<%03d.%d>", b, i)
			r.want.WriteString(last)
			r.c.post(r.c.solPacket(r.seq, 0, 0, 0, last)) // not waiting for its acknowledgement
		}
		return r.want.String(), r.g.waitFor(t, last)
	}

	r := start(t, false)
	for b := range bursts {
		if want, got := burst(t, r, b); got != want {
			t.Fatalf("after burst %d the guest read\n%q\nwant\n%q", b, got, want)
		}
	}

	// Another sender that knows the session ID (it travels in clear)
	// cannot fill the payload's queue and crowd out the client's packets:
	// its datagrams are not queued.
	t.Run("another sender's datagrams are not queued", func(t *testing.T) {
		pkt := r.c.solPacket(0, 0, 0, 0, "")
		if r.srv.solPayloadOf(pkt, r.c.from) == nil {
			t.Fatal("the client's own SOL datagram is not queued")
		}
		other := netip.AddrPortFrom(r.c.from.Addr(), r.c.from.Port()+1)
		if r.srv.solPayloadOf(pkt, other) != nil {
			t.Errorf("a SOL datagram of the session from %s (the client is %s) goes to the payload's queue", other, r.c.from)
		}
	})

	t.Run("control: each packet on a goroutine of its own", func(t *testing.T) {
		r := start(t, true)
		for b := range bursts {
			if want, got := burst(t, r, b); got != want {
				t.Logf("after burst %d the guest read %q, want %q", b, got, want)
				return
			}
		}
		t.Errorf("%d bursts of %d reached the guest whole and in order with the ordering off: this test cannot tell", bursts, perBurst)
	})
}
