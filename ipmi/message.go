package ipmi

import (
	"fmt"
)

// Network functions (even: requests).
const (
	netFnChassis   = 0x00
	netFnApp       = 0x06
	netFnTransport = 0x0C
)

// Completion codes (IPMI v2.0 table 5-2).
const (
	ccOK                 = 0x00
	ccInvalidCommand     = 0xC1
	ccRequestLength      = 0xC7
	ccOutOfRange         = 0xC9
	ccInvalidData        = 0xCC
	ccInsufficientPriv   = 0xD4
	ccNotInPresentState  = 0xD5
	ccUnspecified        = 0xFF
	ccParamNotSupported  = 0x80 // Get/Set System Boot Options
	ccPayloadActive      = 0x80 // Activate Payload: already active
	ccInvalidSessionCode = 0x87 // Close Session: invalid session ID
)

// request is an IPMI request message (IPMI v2.0 section 13.8).
type request struct {
	rsAddr, netFn, rsLUN byte
	rqAddr, rqSeq, rqLUN byte
	cmd                  byte
	data                 []byte
}

// checksum is the two's complement checksum of b.
func checksum(b []byte) byte {
	var c byte
	for _, x := range b {
		c += x
	}
	return -c
}

// parseRequest reads an IPMI request message and checks both checksums.
func parseRequest(b []byte) (request, error) {
	if len(b) < 7 {
		return request{}, fmt.Errorf("ipmi message of %d bytes: %w", len(b), errShort)
	}
	if checksum(b[:2]) != b[2] || checksum(b[3:len(b)-1]) != b[len(b)-1] {
		return request{}, fmt.Errorf("ipmi message checksum mismatch")
	}
	return request{
		rsAddr: b[0], netFn: b[1] >> 2, rsLUN: b[1] & 3,
		rqAddr: b[3], rqSeq: b[4] >> 2, rqLUN: b[4] & 3,
		cmd: b[5], data: b[6 : len(b)-1],
	}, nil
}

// response builds the response message to r with completion code cc.
func (r request) response(cc byte, data []byte) []byte {
	out := []byte{r.rqAddr, (r.netFn|1)<<2 | r.rqLUN}
	out = append(out, checksum(out))
	start := len(out)
	out = append(out, r.rsAddr, r.rqSeq<<2|r.rsLUN, r.cmd, cc)
	out = append(out, data...)
	return append(out, checksum(out[start:]))
}
