package ipmi

import (
	"context"
	"encoding/binary"
)

// Application commands (netFn App).
const (
	cmdGetDeviceID            = 0x01
	cmdGetChannelAuthCaps     = 0x38
	cmdGetSessionChallenge    = 0x39
	cmdActivateSession        = 0x3A
	cmdSetSessionPrivilege    = 0x3B
	cmdCloseSession           = 0x3C
	cmdGetChannelCipherSuites = 0x54
)

// lanChannel is the channel number the endpoint reports for itself.
const lanChannel = 0x01

// command runs one request of session sess and returns its completion
// code and data; closing is set when the session ends with the answer.
func (e *endpoint) command(ctx context.Context, sess *session, req request) (cc byte, data []byte, closing bool) {
	switch req.netFn {
	case netFnApp:
		if cc, data, ok := e.payloadCommand(ctx, sess, req); ok {
			return cc, data, false
		}
		return e.appCommand(sess, req)
	case netFnChassis:
		cc, data = e.chassisCommand(ctx, sess, req)
		return cc, data, false
	case netFnTransport:
		cc, data = e.transportCommand(req)
		return cc, data, false
	}
	return ccInvalidCommand, nil, false
}

// appCommand runs an application command inside a session.
func (e *endpoint) appCommand(sess *session, req request) (cc byte, data []byte, closing bool) {
	switch req.cmd {
	case cmdGetDeviceID:
		return ccOK, deviceID(), false
	case cmdGetChannelAuthCaps:
		return ccOK, channelAuthCaps(), false
	case cmdGetChannelCipherSuites:
		cc, data = channelCipherSuites(req.data)
		return cc, data, false
	case cmdSetSessionPrivilege:
		if len(req.data) != 1 {
			return ccRequestLength, nil, false
		}
		sess.mu.Lock()
		defer sess.mu.Unlock()
		switch lvl := req.data[0] & 0x0F; {
		case lvl == 0:
		case lvl < privUser || lvl > privAdmin:
			return 0x80, nil, false // requested level not available for this user
		default:
			sess.priv = lvl
		}
		return ccOK, []byte{sess.priv}, false
	case cmdCloseSession:
		if len(req.data) < 4 {
			return ccRequestLength, nil, false
		}
		if id := binary.LittleEndian.Uint32(req.data[:4]); id != sess.id {
			return ccInvalidSessionCode, nil, false
		}
		return ccOK, nil, true
	}
	return ccInvalidCommand, nil, false
}

// deviceID is the Get Device ID answer: device 0x20, IPMI 2.0, a chassis
// device, no manufacturer.
func deviceID() []byte {
	return []byte{
		0x20,       // device id
		0x01,       // device revision, no SDRs
		0x01, 0x00, // firmware 1.00, device available
		0x02,             // IPMI version 2.0
		0x80,             // additional device support: chassis device
		0x00, 0x00, 0x00, // manufacturer id
		0x00, 0x00, // product id
	}
}

// channelAuthCaps is the Get Channel Authentication Capabilities answer:
// IPMI v2.0 extended capabilities only (no v1.5 authentication type),
// non-null user names only.
func channelAuthCaps() []byte {
	return []byte{
		lanChannel,
		0x80,             // v2.0 extended data; no v1.5 auth types
		0x04,             // per-message and user-level auth on; non-null user names only
		0x02,             // channel supports IPMI v2.0 connections only
		0x00, 0x00, 0x00, // OEM id
		0x00, // OEM auxiliary data
	}
}

// channelCipherSuites answers Get Channel Cipher Suites (data: channel,
// payload type, list index): 16 bytes of the records per index.
func channelCipherSuites(data []byte) (byte, []byte) {
	if len(data) < 3 {
		return ccRequestLength, nil
	}
	if data[1] != payloadIPMI && data[1] != payloadSOL {
		return ccInvalidData, nil
	}
	recs := suiteRecords()
	start := int(data[2]&0x3F) * 16
	if start > len(recs) {
		return ccOutOfRange, nil
	}
	end := min(start+16, len(recs))
	return ccOK, append([]byte{lanChannel}, recs[start:end]...)
}
