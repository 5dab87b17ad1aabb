package ipmi

import (
	"context"
	"encoding/binary"
	"errors"

	"github.com/redfish-bridge/redfish-bridge/console"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Payload commands (netFn App, IPMI v2.0 section 24) and the SOL
// configuration commands (netFn Transport, section 26).
const (
	cmdActivatePayload            = 0x48
	cmdDeactivatePayload          = 0x49
	cmdGetPayloadActivationStatus = 0x4A
	cmdSetSOLConfig               = 0x21
	cmdGetSOLConfig               = 0x22
)

// Activate and Deactivate Payload completion codes (IPMI v2.0 24.1, 24.2).
const (
	ccPayloadInactive      = 0x80 // Deactivate Payload: already deactivated
	ccPayloadDisabled      = 0x81
	ccPayloadLimit         = 0x82
	ccPayloadNeedsEncrypt  = 0x84
	ccSOLParamReadOnly     = 0x82 // Set SOL Configuration Parameters
	solInstance            = 1
	solRevision            = 0x11 // parameter revision of the SOL configuration answers
	solEncryptAuthenticate = 0xC0 // Activate Payload aux data: encryption and authentication on
)

// Consoles opens serial consoles (console.Opener): one stream per VM, shared
// with the SSH console, with the same per-user limits, roles and audit.
type Consoles interface {
	Open(ctx context.Context, user console.User, key system.Key) (console.Stream, error)
}

// payloadCommand runs the payload commands; ok is false for any other.
func (e *endpoint) payloadCommand(ctx context.Context, sess *session, req request) (cc byte, data []byte, ok bool) {
	switch req.cmd {
	case cmdActivatePayload:
		cc, data = e.activatePayload(ctx, sess, req.data)
	case cmdDeactivatePayload:
		cc = e.deactivatePayload(ctx, sess, req.data)
	case cmdGetPayloadActivationStatus:
		cc, data = e.payloadStatus(req.data)
	default:
		return 0, nil, false
	}
	return cc, data, true
}

// activatePayload activates SOL instance 1: it opens the System's console
// as the session's user and answers the payload sizes and port. The
// delivery of the guest's output starts once the answer is sent.
func (e *endpoint) activatePayload(ctx context.Context, sess *session, d []byte) (byte, []byte) {
	if len(d) < 6 {
		return ccRequestLength, nil
	}
	if d[0]&0x3F != payloadSOL || d[1]&0x0F != solInstance {
		return ccInvalidData, nil
	}
	if d[2]&solEncryptAuthenticate != solEncryptAuthenticate {
		return ccPayloadNeedsEncrypt, nil // the session's confidentiality and integrity cover SOL too
	}
	if e.srv.consoles == nil {
		return ccPayloadDisabled, nil
	}
	sess.mu.Lock()
	user, priv := sess.user, sess.priv
	sess.mu.Unlock()
	peer := logctx.From(ctx).With("peer", sess.peer.String())
	log := peer.With("user", user.Name, "system", e.key.String())
	// An IPMI User-level session is IPMI's read-only role. The console's
	// audit lines name the user and System themselves.
	st, err := e.srv.consoles.Open(logctx.Into(ctx, peer), console.User{Name: user.Name, Scope: user.Scope, ReadOnly: priv < privOperator}, e.key)
	if err != nil {
		log.InfoContext(ctx, "ipmi: SOL activation refused", "reason", err.Error())
		return activateCode(err), nil
	}
	p := newSOLPayload(e, sess, st, log)
	e.solMu.Lock()
	e.sol = p
	e.solMu.Unlock()
	sess.sol.Store(p)
	sess.mu.Lock()
	sess.started = func() { p.start(ctx) }
	sess.mu.Unlock()
	log.InfoContext(ctx, "ipmi: SOL activated")
	out := make([]byte, 4, 12) // auxiliary data: none
	out = binary.LittleEndian.AppendUint16(out, solMaxData+4)
	out = binary.LittleEndian.AppendUint16(out, solMaxData+4)
	out = binary.LittleEndian.AppendUint16(out, e.port)
	return ccOK, binary.LittleEndian.AppendUint16(out, 0xFFFF) // no VLAN
}

// activateCode is the completion code of a console refusal.
func activateCode(err error) byte {
	switch {
	case errors.Is(err, console.ErrActive):
		return ccPayloadActive
	case errors.Is(err, console.ErrReadOnly):
		return ccInsufficientPriv
	case errors.Is(err, console.ErrLimit):
		return ccPayloadLimit
	case errors.Is(err, console.ErrNotRunning), errors.Is(err, console.ErrNotFound):
		return ccNotInPresentState
	}
	return ccUnspecified
}

// deactivatePayload ends the System's SOL payload, whichever session of
// this endpoint holds it; another session's needs Operator privilege.
func (e *endpoint) deactivatePayload(ctx context.Context, sess *session, d []byte) byte {
	if len(d) < 2 {
		return ccRequestLength
	}
	if d[0]&0x3F != payloadSOL || d[1]&0x0F != solInstance {
		return ccInvalidData
	}
	e.solMu.Lock()
	p := e.sol
	e.solMu.Unlock()
	if p == nil {
		return ccPayloadInactive
	}
	sess.mu.Lock()
	user, priv := sess.user.Name, sess.priv
	sess.mu.Unlock()
	if p.sess != sess && priv < privOperator {
		return ccInsufficientPriv
	}
	p.end(errDeactivated, p.sess != sess) // the holder is told when another session ends it
	logctx.From(ctx).InfoContext(ctx, "ipmi: SOL deactivated", "user", user, "system", e.key.String(), "peer", sess.peer.String())
	return ccOK
}

// payloadStatus answers Get Payload Activation Status: one SOL instance,
// active or not.
func (e *endpoint) payloadStatus(d []byte) (byte, []byte) {
	if len(d) < 1 {
		return ccRequestLength, nil
	}
	if d[0]&0x3F != payloadSOL {
		return ccInvalidData, nil
	}
	e.solMu.Lock()
	active := e.sol != nil
	e.solMu.Unlock()
	bits := byte(0)
	if active {
		bits = 1 << (solInstance - 1)
	}
	return ccOK, []byte{1, bits, 0}
}

// transportCommand runs the SOL configuration commands (what ipmitool's
// sol info reads); every other transport command is invalid.
func (e *endpoint) transportCommand(req request) (byte, []byte) {
	switch req.cmd {
	case cmdGetSOLConfig:
		return e.solConfig(req.data)
	case cmdSetSOLConfig:
		if len(req.data) < 3 {
			return ccRequestLength, nil
		}
		switch param := req.data[1] & 0x7F; {
		case param == 0:
			return ccOK, nil // set in progress: nothing is set, so nothing to commit
		case param <= 8:
			return ccSOLParamReadOnly, nil // the bridge's SOL is not configurable
		}
		return ccParamNotSupported, nil
	}
	return ccInvalidCommand, nil
}

// solConfig answers Get SOL Configuration Parameters (data: channel with
// bit 7 "revision only", parameter, set, block).
func (e *endpoint) solConfig(d []byte) (byte, []byte) {
	if len(d) < 4 {
		return ccRequestLength, nil
	}
	if d[0]&0x80 != 0 {
		return ccOK, []byte{solRevision}
	}
	var v []byte
	switch d[1] & 0x7F {
	case 0:
		v = []byte{0x00} // set complete
	case 1:
		v = []byte{0x01} // SOL enabled
	case 2:
		v = []byte{solEncryptAuthenticate | privOperator} // forced encryption and authentication; Operator to activate
	case 3:
		v = []byte{0x01, 0x01} // accumulate 5 ms, send at 1 character: the guest's bytes go as read
	case 4:
		v = []byte{solRetryCount, solRetryTicks}
	case 5, 6:
		v = []byte{0x0A} // 115.2 kbit/s: the VM's serial port
	case 7:
		v = []byte{lanChannel}
	case 8:
		v = binary.LittleEndian.AppendUint16(nil, e.port)
	default:
		return ccParamNotSupported, nil
	}
	return ccOK, append([]byte{solRevision}, v...)
}
