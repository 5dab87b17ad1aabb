package ipmi

import (
	"fmt"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/system"
)

func offBackend() *fakeBackend {
	return &fakeBackend{state: State{PowerState: system.PowerOff, BootMode: system.BootUEFI}}
}

// TestRefusesWeakCipherSuites: cipher suite 0 (RAKP-none, the classic
// "any password" hole) and suites without integrity or confidentiality
// are refused at Open Session with the status naming the algorithm.
func TestRefusesWeakCipherSuites(t *testing.T) {
	for _, tc := range []struct {
		name              string
		auth, integ, conf byte
		want              byte
	}{
		{"suite 0", authRAKPNone, integrityNone, confNone, statusInvalidAuthAlg},
		{"suite 1 (no integrity)", authRAKPHMACSHA1, integrityNone, confNone, statusInvalidIntegrityAlg},
		{"suite 2 (no confidentiality)", authRAKPHMACSHA1, integrityHMACSHA196, confNone, statusInvalidConfAlg},
		{"mixed suite", authRAKPHMACSHA1, integrityHMACSHA256128, confAESCBC128, statusNoCipherSuiteMatch},
		{"unknown algorithm", 0x2A, integrityHMACSHA196, confAESCBC128, statusInvalidAuthAlg},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEndpoint(offBackend())
			c := newRawClient(t, e, "192.0.2.1:600")
			r := c.pre(payloadOpenRequest, c.openRequest(tc.auth, tc.integ, tc.conf))
			if len(r) < 2 || r[1] != tc.want {
				t.Fatalf("open session %x, want status %#x", r, tc.want)
			}
			if n := e.srv.Sessions(); n != 0 {
				t.Errorf("%d sessions left", n)
			}
		})
	}
}

// TestRefusesLogins: null and unknown user names, users without an IPMI
// password or without the System in scope (RAKP 2 "unauthorized name"),
// a wrong password (RAKP 4 "invalid integrity check value"), and IPMI
// v1.5 session commands (0xCC).
func TestRefusesLogins(t *testing.T) {
	for _, tc := range []struct {
		user, password string
		status         byte
		step           int
	}{
		{"", "", statusUnauthorizedName, 2},
		{"mallory", "x", statusUnauthorizedName, 2},
		{"bob", "", statusUnauthorizedName, 2},
		{"carol", "carol-ipmi-pw", statusUnauthorizedName, 2},
		{"alice", "wrong", statusInvalidICV, 4},
		{"alice", "alice-ipmi-pw", statusOK, 0},
	} {
		t.Run(fmt.Sprintf("%q", tc.user), func(t *testing.T) {
			e := newTestEndpoint(offBackend())
			c := newRawClient(t, e, "192.0.2.1:600")
			st, step := c.login(tc.user, tc.password)
			if st != tc.status || step != tc.step {
				t.Fatalf("login status %#x at RAKP %d, want %#x at %d", st, step, tc.status, tc.step)
			}
			if want := map[bool]int{true: 1, false: 0}[st == statusOK]; e.srv.Sessions() != want {
				t.Errorf("%d sessions, want %d", e.srv.Sessions(), want)
			}
		})
	}
	t.Run("IPMI v1.5 session", func(t *testing.T) {
		e := newTestEndpoint(offBackend())
		for _, cmd := range []byte{cmdGetSessionChallenge, cmdActivateSession} {
			msg := []byte{0x20, netFnApp << 2}
			msg = append(msg, checksum(msg), 0x81, 0x04, cmd, 0x02, 'a', 'l', 'i', 'c', 'e')
			msg = append(msg, checksum(msg[3:]))
			out := e.handle(t.Context(), wrapV15(msg), newRawClient(t, e, "192.0.2.1:600").from)
			if len(out) < 14+7 || out[14+6] != ccInvalidData {
				t.Errorf("v1.5 command %#x answered %x, want completion code 0xCC", cmd, out)
			}
		}
	})
}

// TestDropsForgedPackets: inside a session, a replayed packet, a packet
// with a wrong AuthCode, an unauthenticated or unencrypted one, one from
// another address and every truncation of a valid one get no answer and
// run nothing; the valid one then still runs once.
func TestDropsForgedPackets(t *testing.T) {
	b := offBackend()
	e := newTestEndpoint(b)
	c := newRawClient(t, e, "192.0.2.1:600")
	if st, step := c.login("alice", "alice-ipmi-pw"); st != statusOK {
		t.Fatalf("login: %#x at %d", st, step)
	}
	on := c.request(netFnChassis, cmdChassisControl, controlPowerUp)
	t.Run("truncated", func(t *testing.T) {
		for i := range on {
			if out := c.send(on[:i]); out != nil {
				t.Fatalf("a truncation to %d bytes answered", i)
			}
		}
	})
	t.Run("wrong AuthCode", func(t *testing.T) {
		bad := append([]byte(nil), on...)
		bad[len(bad)-1] ^= 1
		if out := c.send(bad); out != nil {
			t.Fatal("a packet with a wrong AuthCode answered")
		}
	})
	t.Run("from another address", func(t *testing.T) {
		other := newRawClient(t, e, "192.0.2.9:600")
		if out := other.send(on); out != nil {
			t.Fatal("another address's packet answered")
		}
	})
	t.Run("unencrypted", func(t *testing.T) {
		plain := append([]byte(nil), on...)
		plain[rmcpHeaderSize+1] &^= flagEncrypted
		if out := c.send(plain); out != nil {
			t.Fatal("an unencrypted packet answered")
		}
	})
	if len(b.resets) != 0 {
		t.Fatalf("forged packets ran %v", b.resets)
	}
	if cc, _, ok := c.answer(c.send(on)); !ok || cc != ccOK {
		t.Fatalf("the valid packet: cc %#x answered %v", cc, ok)
	}
	t.Run("replayed", func(t *testing.T) {
		if out := c.send(on); out != nil {
			t.Fatal("a replayed packet answered")
		}
	})
	if len(b.resets) != 1 {
		t.Fatalf("resets %v, want one On", b.resets)
	}
}

// TestSessionFlood: one address holds at most MaxSessionsPerAddress
// sessions (Open Session then answers "insufficient resources"); another
// address still opens one; set-up sessions expire after SetupTimeout.
func TestSessionFlood(t *testing.T) {
	e := newTestEndpoint(offBackend())
	clock := &fixedClock{t: time.Unix(1_000_000, 0)}
	e.srv.now = clock.now
	// Every address of an IPv6 /64 counts as one client (addrkey).
	for i := range MaxSessionsPerAddress {
		c := newRawClient(t, e, fmt.Sprintf("[2001:db8::%x]:1000", i+1))
		if st := c.open(); st != statusOK {
			t.Fatalf("session %d: status %#x", i, st)
		}
	}
	flood := newRawClient(t, e, "[2001:db8::ffff]:2000")
	if st := flood.open(); st != statusNoResources {
		t.Fatalf("session %d from one address: status %#x, want %#x", MaxSessionsPerAddress+1, st, statusNoResources)
	}
	if st := newRawClient(t, e, "[2001:db8:0:1::1]:1000").open(); st != statusOK {
		t.Fatalf("another address: status %#x", st)
	}
	clock.t = clock.t.Add(SetupTimeout + time.Second)
	if n := e.srv.sessions.expire(clock.now(), SetupTimeout, e.srv.cfg.SessionTimeout); n != MaxSessionsPerAddress+1 {
		t.Fatalf("expired %d, want %d", n, MaxSessionsPerAddress+1)
	}
	if st := flood.open(); st != statusOK {
		t.Fatalf("after expiry: status %#x", st)
	}
}

// TestLoginThrottle: failed RAKP 3s from one address slow that address
// down like the HTTP login throttle: RAKP 2 then answers "insufficient
// resources" even with the right password.
func TestLoginThrottle(t *testing.T) {
	e := newTestEndpoint(offBackend())
	for i := range e.srv.throttle.FreeFailures + 1 {
		c := newRawClient(t, e, "192.0.2.1:600")
		if st, step := c.login("alice", fmt.Sprintf("guess%d", i)); st != statusInvalidICV || step != 4 {
			t.Fatalf("guess %d: %#x at %d", i, st, step)
		}
	}
	c := newRawClient(t, e, "192.0.2.1:600")
	if st, step := c.login("alice", "alice-ipmi-pw"); st != statusNoResources || step != 2 {
		t.Fatalf("after %d failures: %#x at RAKP %d, want %#x at 2", e.srv.throttle.FreeFailures+1, st, step, statusNoResources)
	}
	if st, _ := newRawClient(t, e, "192.0.2.7:600").login("alice", "alice-ipmi-pw"); st != statusOK {
		t.Fatalf("another address: %#x", st)
	}
}
