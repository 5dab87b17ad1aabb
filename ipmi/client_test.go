package ipmi

import (
	"context"
	"crypto/hmac"
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// rawClient speaks RMCP+ to an endpoint's handle directly (no socket), so
// a test can send what ipmitool never would: replays, forged codes,
// truncations.
type rawClient struct {
	t        testing.TB
	e        *endpoint
	from     netip.AddrPort
	suite    suite
	remoteID uint32
	id       uint32
	k        keys
	seq      uint32
	rqSeq    byte
	// udp, when set, carries the packets to a server's socket instead
	// (newUDPClient).
	udp *net.UDPConn
}

// newTestEndpoint is an endpoint for testKey on a server with the test
// users and b.
func newTestEndpoint(b Backend) *endpoint {
	return newEndpoint(NewServer(Config{}, testUsers(), b, auth.NewThrottle(), nil), testKey)
}

func newRawClient(t testing.TB, e *endpoint, from string) *rawClient {
	t.Helper()
	return &rawClient{t: t, e: e, from: netip.MustParseAddrPort(from), suite: suites[0], remoteID: 0xA0A1A2A3}
}

// send hands b to the endpoint and returns its answer. Over a socket it
// waits for the next datagram from the server (solGuard bounds a
// failure): only for requests that are answered.
func (c *rawClient) send(b []byte) []byte {
	c.t.Helper()
	if c.udp == nil {
		return c.e.handle(context.Background(), b, c.from)
	}
	c.post(b)
	if err := c.udp.SetReadDeadline(time.Now().Add(solGuard)); err != nil {
		c.t.Fatal(err)
	}
	buf := make([]byte, 2048)
	n, err := c.udp.Read(buf)
	if err != nil {
		c.t.Fatalf("no answer from the server: %v", err)
	}
	return buf[:n]
}

// post sends b to the server's socket without waiting for an answer.
func (c *rawClient) post(b []byte) {
	c.t.Helper()
	if _, err := c.udp.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

// newUDPClient is a raw client of the server's socket at 127.0.0.1:port.
func newUDPClient(t testing.TB, port int) *rawClient {
	t.Helper()
	conn, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(port))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	c := newRawClient(t, nil, conn.LocalAddr().String())
	c.udp = conn
	return c
}

// pre sends an out-of-session payload and returns the answer's payload
// (nil for no answer).
func (c *rawClient) pre(typ byte, payload []byte) []byte {
	c.t.Helper()
	pkt, err := wrapV2(typ, 0, 0, payload, nil, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	out := c.send(pkt)
	if out == nil {
		return nil
	}
	p, err := parsePacket(out[rmcpHeaderSize:])
	if err != nil {
		c.t.Fatalf("answer: %v", err)
	}
	return p.payload
}

// openRequest is an Open Session Request for the algorithms.
func (c *rawClient) openRequest(auth, integ, conf byte) []byte {
	out := []byte{0x01, privAdmin, 0, 0}
	out = binary.LittleEndian.AppendUint32(out, c.remoteID)
	out = append(out, 0x00, 0, 0, 8, auth, 0, 0, 0)
	out = append(out, 0x01, 0, 0, 8, integ, 0, 0, 0)
	return append(out, 0x02, 0, 0, 8, conf, 0, 0, 0)
}

// open sends Open Session and returns its status.
func (c *rawClient) open() byte {
	c.t.Helper()
	r := c.pre(payloadOpenRequest, c.openRequest(c.suite.auth, c.suite.integrity, c.suite.conf))
	if len(r) < 2 {
		c.t.Fatalf("open session answer %x", r)
	}
	if r[1] == statusOK {
		c.id = binary.LittleEndian.Uint32(r[8:12])
	}
	return r[1]
}

// login runs Open Session and RAKP 1-4 as user with password; it returns
// the first non-zero status (and the step: 2 or 4), or 0 when active.
func (c *rawClient) login(user, password string) (status byte, step int) {
	c.t.Helper()
	if st := c.open(); st != statusOK {
		return st, 1
	}
	rm := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	r1 := []byte{0x02, 0, 0, 0}
	r1 = binary.LittleEndian.AppendUint32(r1, c.id)
	r1 = append(r1, rm[:]...)
	r1 = append(r1, privAdmin|0x10, 0, 0, byte(len(user)))
	r1 = append(r1, user...)
	r2 := c.pre(payloadRAKP1, r1)
	if len(r2) < 8 || r2[1] != statusOK {
		if len(r2) < 2 {
			c.t.Fatalf("RAKP 2 %x", r2)
		}
		return r2[1], 2
	}
	rc, guid := r2[8:24], r2[24:40]
	k := kuid([]byte(password))
	role := []byte{privAdmin | 0x10, byte(len(user))}
	// RAKP 2's HMAC is not checked here (ipmitool does): the endpoint's
	// check of RAKP 3 is what the tests probe, with any password.
	r3 := []byte{0x03, 0, 0, 0}
	r3 = binary.LittleEndian.AppendUint32(r3, c.id)
	r3 = append(r3, c.suite.mac(k, rc, le32(c.remoteID), role, []byte(user))...)
	r4 := c.pre(payloadRAKP3, r3)
	if len(r4) < 2 || r4[1] != statusOK {
		if len(r4) < 2 {
			c.t.Fatalf("RAKP 4 %x", r4)
		}
		return r4[1], 4
	}
	sik := c.suite.mac(k, rm[:], rc, role, []byte(user))
	if !hmac.Equal(r4[8:], c.suite.mac(sik, rm[:], le32(c.id), guid)[:c.suite.rakp4Len]) {
		c.t.Fatalf("RAKP 4 accepted %q, a password the endpoint does not hold for %q", password, user)
	}
	c.k = c.suite.deriveKeys(sik)
	if cc, _, ok := c.answer(c.send(c.request(netFnApp, cmdSetSessionPrivilege, privAdmin))); !ok || cc != ccOK {
		c.t.Fatalf("set session privilege: %#x", cc)
	}
	return statusOK, 0
}

// request builds an in-session IPMI request packet (not sent).
func (c *rawClient) request(netFn, cmd byte, data ...byte) []byte {
	c.t.Helper()
	c.rqSeq++
	msg := []byte{0x20, netFn << 2}
	msg = append(msg, checksum(msg))
	start := len(msg)
	msg = append(msg, 0x81, c.rqSeq<<2, cmd)
	msg = append(msg, data...)
	msg = append(msg, checksum(msg[start:]))
	return c.wrap(msg)
}

// wrap wraps an IPMI message in the session under the next sequence
// number (not sent).
func (c *rawClient) wrap(msg []byte) []byte {
	c.t.Helper()
	c.seq++
	pkt, err := wrapV2(payloadIPMI, c.id, c.seq, msg, &c.suite, &c.k)
	if err != nil {
		c.t.Fatal(err)
	}
	return pkt
}

// answer decodes an in-session answer: its completion code and data.
func (c *rawClient) answer(out []byte) (cc byte, data []byte, ok bool) {
	c.t.Helper()
	if out == nil {
		return 0, nil, false
	}
	p, err := parsePacket(out[rmcpHeaderSize:])
	if err != nil {
		c.t.Fatalf("answer: %v", err)
	}
	if err := p.verify(c.suite, c.k.k1); err != nil {
		c.t.Fatalf("answer: %v", err)
	}
	msg, err := decrypt(c.k.aes, p.payload)
	if err != nil || len(msg) < 8 {
		c.t.Fatalf("answer: %v %x", err, msg)
	}
	return msg[6], msg[7 : len(msg)-1], true
}

// fixedClock is a clock a test moves by hand.
type fixedClock struct{ t time.Time }

func (f *fixedClock) now() time.Time { return f.t }
