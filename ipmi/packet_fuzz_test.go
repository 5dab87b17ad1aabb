package ipmi

import (
	"io"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// FuzzHandle feeds any datagram to an endpoint holding an active session
// with an active SOL payload (the seeds are valid packets of every kind:
// ping, v1.5 and v2.0 session-less commands, Open Session, RAKP,
// in-session requests, the payload and SOL configuration commands, SOL
// data and acknowledgements). For any bytes: no panic, no power or boot
// write, and an answer, if any, no longer than the largest one the
// endpoint sends.
func FuzzHandle(f *testing.F) {
	b := offBackend()
	cons := newFakeConsoles()
	cons.guest = func(s *fakeStream) { _, _ = io.Copy(io.Discard, s.inR) }
	e := newEndpoint(NewServer(Config{}, testUsers(), b, auth.NewThrottle(), cons), testKey)
	c := newRawClient(f, e, "192.0.2.1:600")
	if st, _ := c.login("alice", "alice-ipmi-pw"); st != statusOK {
		f.Fatalf("login: %#x", st)
	}
	if cc, _, _ := c.answer(c.send(c.request(netFnApp, cmdActivatePayload, payloadSOL, 1, 0xC6, 0, 0, 0))); cc != ccOK {
		f.Fatalf("Activate Payload: %#x", cc)
	}
	f.Add([]byte{rmcpVersion, 0, rmcpNoAck, rmcpClassASF, 0, 0, 0x11, 0xBE, asfTypePing, 1, 0, 0})
	get := []byte{0x20, netFnApp << 2}
	get = append(get, checksum(get), 0x81, 0x04, cmdGetChannelAuthCaps, 0x8E, 0x04)
	get = append(get, checksum(get[3:]))
	f.Add(wrapV15(get))
	for _, p := range []struct {
		typ     byte
		payload []byte
	}{
		{payloadIPMI, get},
		{payloadOpenRequest, c.openRequest(authRAKPHMACSHA256, integrityHMACSHA256128, confAESCBC128)},
		{payloadRAKP1, make([]byte, 33)},
		{payloadRAKP3, make([]byte, 40)},
	} {
		pkt, err := wrapV2(p.typ, 0, 0, p.payload, nil, nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(pkt)
	}
	f.Add(c.request(netFnApp, cmdGetDeviceID))
	f.Add(c.request(netFnChassis, cmdGetChassisStatus))
	f.Add(c.request(netFnApp, cmdActivatePayload, payloadSOL, 1, 0xC6, 0, 0, 0))
	f.Add(c.request(netFnApp, cmdDeactivatePayload, payloadSOL, 1, 0, 0, 0, 0))
	f.Add(c.request(netFnApp, cmdGetPayloadActivationStatus, payloadSOL))
	f.Add(c.request(netFnTransport, cmdGetSOLConfig, 1, 8, 0, 0))
	f.Add(c.request(netFnTransport, cmdSetSOLConfig, 1, 0, 1))
	f.Add(c.solPacket(1, 0, 0, 0, "root\r"))
	f.Add(c.solPacket(2, 1, 13, solBreak, "x"))
	f.Add(c.solPacket(0, 1, 13, 0, ""))
	f.Add(c.solPacket(0, 1, 0, solNack, ""))
	f.Fuzz(func(t *testing.T, pkt []byte) {
		c.t = t
		out := e.handle(t.Context(), pkt, c.from)
		if len(out) > 200 {
			t.Fatalf("answer of %d bytes", len(out))
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		if len(b.resets) != 0 || len(b.boots) != 0 {
			t.Fatalf("a fuzzed packet wrote: resets %v boots %v", b.resets, b.boots)
		}
	})
}
