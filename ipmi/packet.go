package ipmi

import (
	"crypto/hmac"
	"encoding/binary"
	"errors"
	"fmt"
)

// Session header fields.
const (
	authTypeNone  = 0x00
	authTypeRMCPP = 0x06 // the IPMI v2.0 RMCP+ session header

	payloadIPMI        = 0x00
	payloadSOL         = 0x01
	payloadOpenRequest = 0x10
	payloadOpenReply   = 0x11
	payloadRAKP1       = 0x12
	payloadRAKP2       = 0x13
	payloadRAKP3       = 0x14
	payloadRAKP4       = 0x15

	flagEncrypted     = 0x80
	flagAuthenticated = 0x40
	nextHeaderRMCP    = 0x07

	v2HeaderSize = 12
	// maxPayload bounds a payload: an IPMI message is at most a few
	// hundred bytes, so anything longer is malformed, not read.
	maxPayload = 1024
)

// errIntegrity is returned for a packet whose AuthCode does not match.
var errIntegrity = errors.New("integrity check failed")

// packet is one IPMI session-wrapped message as read from the wire.
type packet struct {
	// v15 is an IPMI v1.5 session header (auth type != 6): served only
	// for session-less Get Channel Authentication Capabilities.
	v15                      bool
	authType                 byte
	payloadType              byte // low six bits
	encrypted, authenticated bool
	sessionID, seq           uint32
	payload                  []byte
	// raw is the session header onwards (from the auth type byte), what
	// the AuthCode signs; trailer is what follows the payload.
	raw, trailer []byte
}

// parsePacket reads the session wrapper of an RMCP class-IPMI body. It
// checks lengths only: integrity and decryption need the session.
func parsePacket(b []byte) (packet, error) {
	if len(b) < 1 {
		return packet{}, fmt.Errorf("session header: %w", errShort)
	}
	if b[0] != authTypeRMCPP {
		return parseV15(b)
	}
	if len(b) < v2HeaderSize {
		return packet{}, fmt.Errorf("v2.0 session header: %w", errShort)
	}
	p := packet{
		authType:      b[0],
		payloadType:   b[1] & 0x3F,
		encrypted:     b[1]&flagEncrypted != 0,
		authenticated: b[1]&flagAuthenticated != 0,
		raw:           b,
	}
	if p.payloadType == 0x02 {
		return packet{}, errors.New("OEM explicit payloads are not served")
	}
	p.sessionID = binary.LittleEndian.Uint32(b[2:6])
	p.seq = binary.LittleEndian.Uint32(b[6:10])
	n := int(binary.LittleEndian.Uint16(b[10:12]))
	if n > maxPayload {
		return packet{}, fmt.Errorf("payload length %d over %d", n, maxPayload)
	}
	if len(b) < v2HeaderSize+n {
		return packet{}, fmt.Errorf("payload of %d bytes: %w", n, errShort)
	}
	p.payload = b[v2HeaderSize : v2HeaderSize+n]
	p.trailer = b[v2HeaderSize+n:]
	if !p.authenticated && len(p.trailer) != 0 {
		return packet{}, fmt.Errorf("%d bytes after an unauthenticated payload", len(p.trailer))
	}
	return p, nil
}

// parseV15 reads an IPMI v1.5 session header.
func parseV15(b []byte) (packet, error) {
	p := packet{v15: true, authType: b[0]}
	if len(b) < 10 {
		return packet{}, fmt.Errorf("v1.5 session header: %w", errShort)
	}
	p.seq = binary.LittleEndian.Uint32(b[1:5])
	p.sessionID = binary.LittleEndian.Uint32(b[5:9])
	rest := b[9:]
	if p.authType != authTypeNone {
		if len(rest) < 17 {
			return packet{}, fmt.Errorf("v1.5 auth code: %w", errShort)
		}
		rest = rest[16:]
	}
	n := int(rest[0])
	if len(rest) < 1+n {
		return packet{}, fmt.Errorf("v1.5 message of %d bytes: %w", n, errShort)
	}
	p.payload = rest[1 : 1+n]
	return p, nil
}

// verify checks an authenticated packet's trailer and AuthCode with the
// session's integrity key.
func (p packet) verify(s suite, k1 []byte) error {
	if !p.authenticated {
		return fmt.Errorf("%w: packet not authenticated", errIntegrity)
	}
	if len(p.trailer) < 2+s.icvLen {
		return fmt.Errorf("trailer: %w", errShort)
	}
	signed := p.raw[:len(p.raw)-s.icvLen]
	code := p.raw[len(p.raw)-s.icvLen:]
	padLen := int(signed[len(signed)-2])
	if signed[len(signed)-1] != nextHeaderRMCP || len(p.trailer) != padLen+2+s.icvLen || len(signed)%4 != 0 {
		return fmt.Errorf("%w: malformed trailer", errIntegrity)
	}
	if !hmac.Equal(s.mac(k1, signed)[:s.icvLen], code) {
		return errIntegrity
	}
	return nil
}

// wrapV2 builds an RMCP datagram with a v2.0 session header around
// payload; with s non-nil the payload is encrypted with k and the packet
// signed with its K1.
func wrapV2(payloadType byte, sessionID, seq uint32, payload []byte, s *suite, k *keys) ([]byte, error) {
	flags := payloadType
	if s != nil {
		enc, err := encrypt(k.aes, payload)
		if err != nil {
			return nil, err
		}
		payload = enc
		flags |= flagEncrypted | flagAuthenticated
	}
	out := []byte{rmcpVersion, 0, rmcpNoAck, rmcpClassIPMI, authTypeRMCPP, flags}
	out = binary.LittleEndian.AppendUint32(out, sessionID)
	out = binary.LittleEndian.AppendUint32(out, seq)
	out = binary.LittleEndian.AppendUint16(out, uint16(len(payload))) //nolint:gosec // at most maxPayload plus padding
	out = append(out, payload...)
	if s == nil {
		return out, nil
	}
	pad := (4 - (len(out)-rmcpHeaderSize+2)%4) % 4
	for range pad {
		out = append(out, 0xFF)
	}
	out = append(out, byte(pad), nextHeaderRMCP)
	return append(out, s.mac(k.k1, out[rmcpHeaderSize:])[:s.icvLen]...), nil
}

// wrapV15 builds an RMCP datagram with a v1.5 session header (auth type
// none, no session) around an IPMI message.
func wrapV15(msg []byte) []byte {
	out := []byte{rmcpVersion, 0, rmcpNoAck, rmcpClassIPMI, authTypeNone}
	out = append(out, make([]byte, 8)...) // sequence number and session id: 0
	out = append(out, byte(len(msg)))     //nolint:gosec // responses are short
	return append(out, msg...)
}
