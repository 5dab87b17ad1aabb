package ipmi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"net/netip"
	"sync"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// endpoint is the BMC of one System: what arrives on its UDP port.
type endpoint struct {
	srv  *Server
	key  system.Key
	guid [16]byte
	// port is the UDP port served (Activate Payload reports it); sendTo
	// sends a datagram from it (SOL data, outside any request's answer).
	port   uint16
	sendTo func(b []byte, to netip.AddrPort)

	solMu sync.Mutex
	sol   *solPayload // the active SOL payload (instance 1), nil: none
}

func newEndpoint(srv *Server, key system.Key) *endpoint {
	sum := sha256.Sum256([]byte("ipmi-guid/" + key.String()))
	e := &endpoint{srv: srv, key: key, sendTo: func([]byte, netip.AddrPort) {}}
	copy(e.guid[:], sum[:16])
	return e
}

// handle is [endpoint.handleThen] with what the request started run at
// once (tests, which read the answer from the return value).
func (e *endpoint) handle(ctx context.Context, b []byte, from netip.AddrPort) []byte {
	out, then := e.handleThen(ctx, b, from)
	if then != nil {
		then()
	}
	return out
}

// handleThen answers one datagram from client from; nil means no answer
// (malformed, replayed, unauthenticated in a session, or not this
// client's session): a BMC drops such packets, and answering them would
// let anybody probe sessions or amplify traffic. then, when not nil, is
// to run once the answer is sent (a SOL payload's delivery).
func (e *endpoint) handleThen(ctx context.Context, b []byte, from netip.AddrPort) (out []byte, then func()) {
	class, body, err := rmcpHeader(b)
	if err != nil {
		return nil, nil
	}
	switch class {
	case rmcpClassASF:
		out, err := asfPong(body)
		if err != nil {
			return nil, nil
		}
		return out, nil
	case rmcpClassIPMI:
	default:
		return nil, nil
	}
	p, err := parsePacket(body)
	if err != nil {
		logctx.From(ctx).DebugContext(ctx, "ipmi: malformed packet dropped", "peer", from.String(), "error", err.Error())
		return nil, nil
	}
	if p.v15 {
		return e.v15(ctx, p), nil
	}
	if p.sessionID != 0 && (p.payloadType == payloadIPMI || p.payloadType == payloadSOL) {
		return e.inSession(ctx, p, from)
	}
	return e.outside(ctx, p, from), nil
}

// outside answers a packet outside any session: session setup and the
// session-less commands.
func (e *endpoint) outside(ctx context.Context, p packet, from netip.AddrPort) []byte {
	if p.payloadType != payloadIPMI && p.payloadType != payloadSOL && (p.sessionID != 0 || p.authenticated || p.encrypted) {
		return nil // session setup travels outside any session
	}
	var reply []byte
	var replyType byte
	switch p.payloadType {
	case payloadOpenRequest:
		reply, replyType = e.openSession(ctx, p.payload, from), payloadOpenReply
	case payloadRAKP1:
		reply, replyType = e.rakp1(ctx, p.payload, from), payloadRAKP2
	case payloadRAKP3:
		reply, replyType = e.rakp3(ctx, p.payload, from), payloadRAKP4
	case payloadIPMI:
		if p.authenticated || p.encrypted {
			return nil
		}
		reply, replyType = e.outsideSession(p.payload), payloadIPMI
	default:
		return nil
	}
	if reply == nil {
		return nil
	}
	out, err := wrapV2(replyType, 0, 0, reply, nil, nil)
	if err != nil {
		return nil
	}
	return out
}

// v15 answers an IPMI v1.5 packet: Get Channel Authentication
// Capabilities outside a session (how ipmitool starts lanplus), and a
// refusal of the v1.5 session commands. Nothing inside a v1.5 session.
func (e *endpoint) v15(ctx context.Context, p packet) []byte {
	if p.sessionID != 0 || p.authType != authTypeNone {
		return nil
	}
	req, err := parseRequest(p.payload)
	if err != nil || req.netFn != netFnApp {
		return nil
	}
	switch req.cmd {
	case cmdGetChannelAuthCaps:
		return wrapV15(req.response(ccOK, channelAuthCaps()))
	case cmdGetSessionChallenge, cmdActivateSession:
		logctx.From(ctx).InfoContext(ctx, "ipmi: IPMI v1.5 session refused", "system", e.key.String())
		return wrapV15(req.response(ccInvalidData, nil))
	}
	return wrapV15(req.response(ccInvalidCommand, nil))
}

// outsideSession answers the commands served without a session: Get
// Channel Authentication Capabilities and Get Channel Cipher Suites;
// any other is "insufficient privilege".
func (e *endpoint) outsideSession(msg []byte) []byte {
	req, err := parseRequest(msg)
	if err != nil {
		return nil
	}
	if req.netFn == netFnApp {
		switch req.cmd {
		case cmdGetChannelAuthCaps:
			return req.response(ccOK, channelAuthCaps())
		case cmdGetChannelCipherSuites:
			cc, data := channelCipherSuites(req.data)
			return req.response(cc, data)
		}
	}
	return req.response(ccInsufficientPriv, nil)
}

// inSession answers a packet of an active session: it must be this
// client's, signed with the session's K1, encrypted, and carry a
// sequence number not seen before.
func (e *endpoint) inSession(ctx context.Context, p packet, from netip.AddrPort) (out []byte, then func()) {
	sess := e.srv.sessions.get(p.sessionID)
	if sess == nil || sess.key != e.key || sess.peer != from {
		return nil, nil
	}
	sess.mu.Lock()
	if !sess.active || !p.encrypted || p.verify(sess.suite, sess.k.k1) != nil || !sess.accept(p.seq) {
		sess.mu.Unlock()
		return nil, nil
	}
	msg, err := decrypt(sess.k.aes, p.payload)
	if err != nil {
		sess.mu.Unlock()
		return nil, nil
	}
	sess.last = e.srv.now()
	if p.payloadType == payloadSOL {
		sess.mu.Unlock()
		sol := sess.sol.Load()
		if sol == nil {
			return nil, nil // no payload active in this session: nothing to acknowledge
		}
		if ack := sol.receive(ctx, p.seq, msg); ack != nil {
			return e.sealSOL(sess, ack), nil
		}
		return nil, nil
	}
	return e.inSessionIPMI(ctx, sess, msg, from)
}

// inSessionIPMI runs an IPMI request of sess (sess.mu held on entry,
// released here). A retried request (the same message under a new
// session sequence number) is not run twice.
func (e *endpoint) inSessionIPMI(ctx context.Context, sess *session, msg []byte, from netip.AddrPort) (out []byte, then func()) {
	req, err := parseRequest(msg)
	if err != nil {
		sess.mu.Unlock()
		return nil, nil
	}
	var resp []byte
	if sess.lastReq != nil && bytes.Equal(sess.lastReq, msg) {
		if sess.lastResp == nil {
			sess.mu.Unlock()
			return nil, nil // a retry while the command still runs: the client retries again
		}
		resp = sess.lastResp // a retry: the command ran once
	}
	sess.lastReq, sess.lastResp = msg, nil
	sess.mu.Unlock()
	closing := false
	if resp == nil {
		var cc byte
		var data []byte
		cc, data, closing = e.command(ctx, sess, req)
		resp = req.response(cc, data)
	}
	sess.mu.Lock()
	sess.lastReq, sess.lastResp = msg, resp
	out, err = wrapV2(payloadIPMI, sess.remoteID, sess.nextOut(), resp, &sess.suite, &sess.k)
	then, sess.started = sess.started, nil
	sess.mu.Unlock()
	if closing {
		e.srv.sessions.remove(sess)
		logctx.From(ctx).InfoContext(ctx, "ipmi: session closed", "user", sess.user.Name, "system", e.key.String(), "peer", from.String())
	}
	if err != nil {
		return nil, then
	}
	return out, then
}

// sealSOL wraps a SOL payload in sess (encrypted and signed) under its
// next outbound sequence number; nil if it cannot.
func (e *endpoint) sealSOL(sess *session, payload []byte) []byte {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	out, err := wrapV2(payloadSOL, sess.remoteID, sess.nextOut(), payload, &sess.suite, &sess.k)
	if err != nil {
		return nil
	}
	return out
}
