package ipmi

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// RMCP (DMTF ASF 2.0) header fields.
const (
	rmcpVersion   = 0x06
	rmcpNoAck     = 0xFF // sequence number of a message that wants no RMCP ACK
	rmcpClassASF  = 0x06
	rmcpClassIPMI = 0x07

	asfIANA        = 4542 // the ASF's IANA enterprise number
	asfTypePing    = 0x80
	asfTypePong    = 0x40
	rmcpHeaderSize = 4
)

// errShort is returned for a packet that ends before a field it must hold.
var errShort = errors.New("packet truncated")

// rmcpHeader splits an RMCP datagram into its class and body.
func rmcpHeader(b []byte) (class byte, body []byte, err error) {
	if len(b) < rmcpHeaderSize {
		return 0, nil, fmt.Errorf("rmcp header: %w", errShort)
	}
	if b[0] != rmcpVersion {
		return 0, nil, fmt.Errorf("rmcp version %#x, want %#x", b[0], rmcpVersion)
	}
	return b[3] & 0x1F, b[4:], nil
}

// asfPong answers an ASF presence ping (body is the ASF message after the
// RMCP header), or returns an error for any other ASF message.
func asfPong(body []byte) ([]byte, error) {
	if len(body) < 8 {
		return nil, fmt.Errorf("asf message: %w", errShort)
	}
	if binary.BigEndian.Uint32(body[0:4]) != asfIANA || body[4] != asfTypePing {
		return nil, fmt.Errorf("asf message type %#x: only the presence ping is served", body[4])
	}
	tag := body[5]
	out := []byte{rmcpVersion, 0, rmcpNoAck, rmcpClassASF}
	out = binary.BigEndian.AppendUint32(out, asfIANA)
	out = append(out, asfTypePong, tag, 0, 16)
	out = binary.BigEndian.AppendUint32(out, asfIANA) // OEM IANA
	out = append(out, 0, 0, 0, 0)                     // OEM defined
	out = append(out, 0x81)                           // supported entities: IPMI, ASF 1.0
	out = append(out, 0x00)                           // supported interactions
	out = append(out, make([]byte, 6)...)
	return out, nil
}
