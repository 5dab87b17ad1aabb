package ipmi

import (
	"bytes"
	"io"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// solRig is an endpoint with fake consoles and a raw client logged in;
// what the endpoint sends outside answers (SOL data) arrives on sent.
type solRig struct {
	e    *endpoint
	c    *rawClient
	cons *fakeConsoles
	sent chan []byte
}

func newSOLRig(t *testing.T, guest func(*fakeStream)) *solRig {
	t.Helper()
	cons := newFakeConsoles()
	cons.guest = guest
	srv := NewServer(Config{}, testUsers(), offBackend(), auth.NewThrottle(), cons)
	srv.solRetry = 5 * time.Millisecond // a retransmission is an event the tests wait for
	e := newEndpoint(srv, testKey)
	r := &solRig{e: e, cons: cons, sent: make(chan []byte, 1024)}
	e.sendTo = func(b []byte, _ netip.AddrPort) {
		select {
		case r.sent <- append([]byte(nil), b...):
		default: // a test that reads none: dropped, as a lost datagram
		}
	}
	r.c = newRawClient(t, e, "192.0.2.1:600")
	if st, step := r.c.login("alice", "alice-ipmi-pw"); st != statusOK {
		t.Fatalf("login: %#x at %d", st, step)
	}
	t.Cleanup(srv.sessions.removeAll)
	return r
}

// activate sends Activate Payload (SOL 1, encrypted and authenticated,
// as ipmitool does) and returns its completion code.
func (r *solRig) activate(t *testing.T) byte {
	t.Helper()
	cc, _, ok := r.c.answer(r.c.send(r.c.request(netFnApp, cmdActivatePayload, payloadSOL, 1, 0xC6, 0, 0, 0)))
	if !ok {
		t.Fatal("Activate Payload not answered")
	}
	return cc
}

// activated activates SOL, failing the test unless it is granted.
func (r *solRig) activated(t *testing.T) {
	t.Helper()
	if cc := r.activate(t); cc != ccOK {
		t.Fatalf("Activate Payload: %#x", cc)
	}
}

// solPacket wraps a SOL payload from the client in its session.
func (c *rawClient) solPacket(seq, ackSeq, accepted, op byte, data string) []byte {
	c.t.Helper()
	c.seq++
	pkt, err := wrapV2(payloadSOL, c.id, c.seq, append([]byte{seq, ackSeq, accepted, op}, data...), &c.suite, &c.k)
	if err != nil {
		c.t.Fatal(err)
	}
	return pkt
}

// openSOL checks and decrypts a SOL packet from the endpoint: its
// sequence number, acked number, accepted count, status and characters.
func (c *rawClient) openSOL(out []byte) (seq, ackSeq, accepted, status byte, data string) {
	c.t.Helper()
	p, err := parsePacket(out[rmcpHeaderSize:])
	if err != nil || p.payloadType != payloadSOL {
		c.t.Fatalf("SOL packet: type %#x, %v", p.payloadType, err)
	}
	if err := p.verify(c.suite, c.k.k1); err != nil {
		c.t.Fatalf("SOL packet: %v", err)
	}
	msg, err := decrypt(c.k.aes, p.payload)
	if err != nil || len(msg) < 4 {
		c.t.Fatalf("SOL packet: %v %x", err, msg)
	}
	return msg[0], msg[1], msg[2], msg[3], string(msg[4:])
}

// next waits for the endpoint's next SOL packet.
func (r *solRig) next(t *testing.T) (seq byte, data string) {
	t.Helper()
	select {
	case b := <-r.sent:
		seq, _, _, _, data = r.c.openSOL(b)
		return seq, data
	case <-time.After(solGuard):
		t.Fatal("no SOL packet from the endpoint")
		return 0, ""
	}
}

// ack acknowledges seq with accepted characters; no answer is expected.
func (r *solRig) ack(t *testing.T, seq, accepted byte) {
	t.Helper()
	if out := r.c.send(r.c.solPacket(0, seq, accepted, 0, "")); out != nil {
		t.Errorf("an acknowledgement was answered: %x", out)
	}
}

// typeIn sends characters under seq and returns the acknowledgement's
// accepted count.
func (r *solRig) typeIn(t *testing.T, seq byte, s string) byte {
	t.Helper()
	out := r.c.send(r.c.solPacket(seq, 0, 0, 0, s))
	if out == nil {
		t.Fatalf("characters under %d not acknowledged", seq)
	}
	_, ackSeq, accepted, status, _ := r.c.openSOL(out)
	if ackSeq != seq || status != 0 {
		t.Fatalf("acknowledgement of %d: acked %d, status %#x", seq, ackSeq, status)
	}
	return accepted
}

// TestSOLLostAckRetransmits: a packet of the guest's output whose
// acknowledgement does not come is sent again, the same sequence number
// and the same bytes, until acknowledged; then the next output goes under
// the next sequence number.
func TestSOLLostAckRetransmits(t *testing.T) {
	r := newSOLRig(t, nil)
	r.activated(t)
	seq, first := r.next(t)
	if seq != 1 || !strings.HasSuffix(first, fakeLoginPrompt) {
		t.Fatalf("first packet: seq %d %q", seq, first)
	}
	// The acknowledgement is lost: the client sent none.
	seq2, again := r.next(t)
	if seq2 != seq || again != first {
		t.Fatalf("after a lost acknowledgement: seq %d %q, want the retransmission of %d %q", seq2, again, seq, first)
	}
	r.ack(t, seq, byte(len(first)))
	if n := r.typeIn(t, 1, "x"); n != 1 {
		t.Fatalf("typed 1 character, %d accepted", n)
	}
	for {
		s, data := r.next(t)
		if s == seq && data == first {
			continue // a retransmission sent before the acknowledgement arrived
		}
		if s != 2 || data != "x" {
			t.Fatalf("the echo: seq %d %q, want 2 %q", s, data, "x")
		}
		break
	}
}

// TestSOLPartialAck: a client accepting part of a packet gets the rest
// under the next sequence number, nothing repeated, nothing skipped.
func TestSOLPartialAck(t *testing.T) {
	r := newSOLRig(t, nil)
	r.activated(t)
	seq, first := r.next(t)
	r.ack(t, seq, 4)
	var rest string
	for {
		s, data := r.next(t)
		if s == seq {
			continue // a retransmission sent before the acknowledgement arrived
		}
		if s != seq+1 {
			t.Fatalf("after a partial acknowledgement: seq %d, want %d", s, seq+1)
		}
		rest = data
		break
	}
	if first[:4]+rest != first {
		t.Errorf("partial acknowledgement of 4: then %q, want %q", rest, first[4:])
	}
}

// recordingGuest prints nothing and records what it reads.
type recordingGuest struct {
	mu  sync.Mutex
	got bytes.Buffer
	in  chan struct{} // a token each time got grew
}

func (g *recordingGuest) run(s *fakeStream) {
	buf := make([]byte, 512)
	for {
		n, err := s.inR.Read(buf)
		g.mu.Lock()
		g.got.Write(buf[:n])
		g.mu.Unlock()
		select {
		case g.in <- struct{}{}:
		default:
		}
		if err != nil {
			return
		}
	}
}

// newRecordingSOL is a rig whose guest records what it reads, its SOL
// payload active.
func newRecordingSOL(t *testing.T) (*solRig, *recordingGuest) {
	t.Helper()
	g := &recordingGuest{in: make(chan struct{}, 1)}
	r := newSOLRig(t, g.run)
	r.activated(t)
	return r, g
}

func (g *recordingGuest) waitFor(t *testing.T, want string) string {
	t.Helper()
	guard := time.After(solGuard)
	for {
		g.mu.Lock()
		got := g.got.String()
		g.mu.Unlock()
		if strings.Contains(got, want) {
			return got
		}
		select {
		case <-g.in:
		case <-guard:
			t.Fatalf("the guest read %q, never %q", got, want)
		}
	}
}

// TestSOLDuplicateWrittenOnce: a client packet sent again (its
// acknowledgement was lost) is acknowledged again and not written to the
// guest a second time.
func TestSOLDuplicateWrittenOnce(t *testing.T) {
	r, g := newRecordingSOL(t)
	if n := r.typeIn(t, 3, "abc"); n != 3 {
		t.Fatalf("accepted %d of 3", n)
	}
	if n := r.typeIn(t, 3, "abc"); n != 3 {
		t.Fatalf("the resend: accepted %d, want the first acknowledgement's 3", n)
	}
	if n := r.typeIn(t, 4, "d"); n != 1 {
		t.Fatalf("accepted %d of 1", n)
	}
	if got := g.waitFor(t, "d"); got != "abcd" {
		t.Errorf("the guest read %q, want %q", got, "abcd")
	}
}

// TestSOLNeverAckedHoldsOnePacket: a client that never acknowledges gets
// the same packet again and again, and the guest's output is not read
// further (the console's backpressure): the relay holds one packet, however
// much the guest has to print.
func TestSOLNeverAckedHoldsOnePacket(t *testing.T) {
	var st *fakeStream
	flood := func(s *fakeStream) {
		chunk := []byte(strings.Repeat("boot log line\r\n", 64))
		for {
			if _, err := s.outW.Write(chunk); err != nil {
				return
			}
		}
	}
	r := newSOLRig(t, flood)
	r.activated(t)
	st = <-r.cons.opened
	seq, first := r.next(t)
	other := 0
	for range 50 {
		if s, data := r.next(t); s != seq || data != first {
			other++
		}
	}
	if n := st.reads.Load(); n != 1 {
		t.Errorf("the guest's output was read %d times with no acknowledgement, want once (one packet held)", n)
	}
	if other != 0 {
		t.Errorf("%d of 50 packets sent with no acknowledgement were not the retransmission of packet %d", other, seq)
	}
}

// TestSOLSessionEndClosesStream: Close Session ends the payload and closes
// the console stream; the System's console can be activated again.
func TestSOLSessionEndClosesStream(t *testing.T) {
	r := newSOLRig(t, nil)
	r.activated(t)
	st := <-r.cons.opened
	if cc := r.activate(t); cc != ccPayloadActive {
		t.Errorf("second Activate Payload: %#x, want %#x", cc, ccPayloadActive)
	}
	id := []byte{byte(r.c.id), byte(r.c.id >> 8), byte(r.c.id >> 16), byte(r.c.id >> 24)}
	if cc, _, ok := r.c.answer(r.c.send(r.c.request(netFnApp, cmdCloseSession, id...))); !ok || cc != ccOK {
		t.Fatalf("Close Session: %#x", cc)
	}
	select {
	case <-st.Done():
	case <-time.After(solGuard):
		t.Fatal("the console stream stayed open after Close Session")
	}
	r2 := &solRig{e: r.e, cons: r.cons, sent: r.sent, c: newRawClient(t, r.e, "192.0.2.2:600")}
	if st, step := r2.c.login("alice", "alice-ipmi-pw"); st != statusOK {
		t.Fatalf("login: %#x at %d", st, step)
	}
	if cc := r2.activate(t); cc != ccOK {
		t.Errorf("Activate Payload after the holder's session closed: %#x", cc)
	}
}

// TestSOLDeactivateFromAnotherSession: `ipmitool sol deactivate` (another
// session) ends the holder's payload; the holder is told (status SOL
// deactivated); a second Deactivate answers 0x80.
func TestSOLDeactivateFromAnotherSession(t *testing.T) {
	r := newSOLRig(t, func(s *fakeStream) { _, _ = io.Copy(io.Discard, s.inR) })
	r.activated(t)
	st := <-r.cons.opened
	other := newRawClient(t, r.e, "192.0.2.3:600")
	if s, step := other.login("alice", "alice-ipmi-pw"); s != statusOK {
		t.Fatalf("login: %#x at %d", s, step)
	}
	deactivate := func() byte {
		cc, _, ok := other.answer(other.send(other.request(netFnApp, cmdDeactivatePayload, payloadSOL, 1, 0, 0, 0, 0)))
		if !ok {
			t.Fatal("Deactivate Payload not answered")
		}
		return cc
	}
	if cc := deactivate(); cc != ccOK {
		t.Fatalf("Deactivate Payload: %#x", cc)
	}
	<-st.Done()
	select {
	case b := <-r.sent:
		if _, _, _, status, _ := r.c.openSOL(b); status&solDeactivated == 0 {
			t.Errorf("the holder was sent status %#x, want SOL deactivated", status)
		}
	case <-time.After(solGuard):
		t.Fatal("the holder was not told")
	}
	if cc := deactivate(); cc != ccPayloadInactive {
		t.Errorf("second Deactivate Payload: %#x, want %#x", cc, ccPayloadInactive)
	}
}

// TestSOLSessionTimeoutClosesStream: a session that goes idle past its
// timeout (a client gone without Close Session) ends its payload and
// closes the console stream.
func TestSOLSessionTimeoutClosesStream(t *testing.T) {
	r := newSOLRig(t, nil)
	r.activated(t)
	st := <-r.cons.opened
	srv := r.e.srv
	if n := srv.sessions.expire(srv.now().Add(srv.cfg.SessionTimeout+time.Second), SetupTimeout, srv.cfg.SessionTimeout); n != 1 {
		t.Fatalf("%d sessions expired, want 1", n)
	}
	select {
	case <-st.Done():
	case <-time.After(solGuard):
		t.Fatal("the console stream stayed open after the session timed out")
	}
}
