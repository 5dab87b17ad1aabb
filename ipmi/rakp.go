package ipmi

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/binary"
	"net/netip"

	"github.com/redfish-bridge/redfish-bridge/internal/addrkey"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
)

// openSession answers an RMCP+ Open Session Request (IPMI v2.0 13.17).
func (e *endpoint) openSession(ctx context.Context, p []byte, from netip.AddrPort) []byte {
	if len(p) < 32 {
		return nil // too short to carry the tag and the console's id: nothing to answer
	}
	tag, role := p[0], p[1]&0x0F
	remoteID := binary.LittleEndian.Uint32(p[4:8])
	refuse := func(status byte) []byte {
		out := []byte{tag, status, 0, 0}
		return binary.LittleEndian.AppendUint32(out, remoteID)
	}
	// Each algorithm payload: type, 2 reserved, length 8, algorithm, 3 reserved.
	auth, integ, conf := p[8:16], p[16:24], p[24:32]
	if auth[0] != 0x00 || integ[0] != 0x01 || conf[0] != 0x02 || auth[3] != 8 || integ[3] != 8 || conf[3] != 8 {
		return refuse(statusIllegalParameter)
	}
	if role > privAdmin+1 {
		return refuse(statusInvalidRole)
	}
	if remoteID == 0 {
		return refuse(statusInvalidSessionID)
	}
	s, status := pickSuite(auth[4]&0x3F, integ[4]&0x3F, conf[4]&0x3F)
	if status != statusOK {
		logctx.From(ctx).InfoContext(ctx, "ipmi: open session refused", "system", e.key.String(),
			"peer", from.String(), "auth", auth[4], "integrity", integ[4], "confidentiality", conf[4], "status", status)
		return refuse(status)
	}
	sess := &session{remoteID: remoteID, key: e.key, peer: from, addrKey: addrkey.Of(from.Addr()), suite: s, last: e.srv.now()}
	if !e.srv.sessions.add(sess, e.srv.cfg.SessionsPerAddress, e.srv.cfg.MaxSessions, randomID) {
		logctx.From(ctx).WarnContext(ctx, "ipmi: open session refused: too many sessions", "system", e.key.String(), "peer", from.String())
		return refuse(statusNoResources)
	}
	out := []byte{tag, statusOK, privAdmin, 0}
	out = binary.LittleEndian.AppendUint32(out, remoteID)
	out = binary.LittleEndian.AppendUint32(out, sess.id)
	out = append(out, 0x00, 0, 0, 8, s.auth, 0, 0, 0)
	out = append(out, 0x01, 0, 0, 8, s.integrity, 0, 0, 0)
	return append(out, 0x02, 0, 0, 8, s.conf, 0, 0, 0)
}

// rakp1 answers RAKP Message 1 with RAKP Message 2: it looks the user up
// and signs the exchange with the user's IPMI password (K_UID).
func (e *endpoint) rakp1(ctx context.Context, p []byte, from netip.AddrPort) []byte {
	if len(p) < 28 {
		return nil
	}
	sess, refuse := e.rakpSession(p, from)
	if sess == nil {
		return nil // not this client's session: nothing to tell it
	}
	defer sess.mu.Unlock()
	if sess.active {
		return refuse(statusInvalidSessionID)
	}
	copy(sess.rm[:], p[8:24])
	sess.role = p[24]
	n := int(p[27])
	switch {
	case n > 16 || len(p) < 28+n:
		return refuse(statusInvalidNameLength)
	case n == 0:
		return refuse(statusUnauthorizedName) // anonymous and null user names are refused
	}
	sess.name = append([]byte(nil), p[28:28+n]...)
	priv := sess.role & 0x0F
	if priv > privAdmin {
		return refuse(statusUnauthorizedRole)
	}
	name := string(sess.name)
	if wait := e.srv.throttle.Check(from.Addr().String(), name, e.srv.now()); wait > 0 {
		logctx.From(ctx).WarnContext(ctx, "ipmi: login throttled", "user", name, "peer", from.String(), "retryAfter", wait.String())
		return refuse(statusNoResources)
	}
	user, ok := e.srv.userFor(ctx, name, e.key)
	if !ok {
		e.srv.throttle.Fail(from.Addr().String(), name, e.srv.now())
		return refuse(statusUnauthorizedName)
	}
	if priv > privLimit(user) {
		logctx.From(ctx).InfoContext(ctx, "ipmi: login refused: privilege above the user's limit", "user", name, "peer", from.String(),
			"requested", priv, "limit", privLimit(user))
		return refuse(statusUnauthorizedRole)
	}
	sess.user = user
	sess.priv = privUser
	if _, err := rand.Read(sess.rc[:]); err != nil {
		return refuse(statusNoResources)
	}
	sess.last = e.srv.now()
	out := []byte{p[0], statusOK, 0, 0} // the message tag
	out = binary.LittleEndian.AppendUint32(out, sess.remoteID)
	out = append(out, sess.rc[:]...)
	out = append(out, e.guid[:]...)
	return append(out, sess.suite.mac(kuid(user.IPMIPassword),
		le32(sess.remoteID), le32(sess.id), sess.rm[:], sess.rc[:], e.guid[:],
		sess.roleAndName())...)
}

// rakp3 checks RAKP Message 3 and answers RAKP Message 4: the session is
// active from then on, keyed by the SIK both sides derived.
func (e *endpoint) rakp3(ctx context.Context, p []byte, from netip.AddrPort) []byte {
	if len(p) < 8 {
		return nil
	}
	sess, refuse := e.rakpSession(p, from)
	if sess == nil {
		return nil // not this client's session: nothing to tell it
	}
	defer sess.mu.Unlock()
	if sess.active || sess.name == nil {
		return refuse(statusInvalidSessionID)
	}
	if p[1] != statusOK {
		e.srv.sessions.remove(sess) // the console gave up on RAKP 2
		return nil
	}
	k := kuid(sess.user.IPMIPassword)
	want := sess.suite.mac(k, sess.rc[:], le32(sess.remoteID), sess.roleAndName())
	name := string(sess.name)
	if !hmac.Equal(p[8:], want) {
		e.srv.throttle.Fail(from.Addr().String(), name, e.srv.now())
		logctx.From(ctx).WarnContext(ctx, "ipmi: login failed: wrong password", "user", name, "system", e.key.String(), "peer", from.String())
		return refuse(statusInvalidICV)
	}
	e.srv.throttle.Succeed(from.Addr().String(), name, e.srv.now())
	sik := sess.suite.mac(k, sess.rm[:], sess.rc[:], sess.roleAndName())
	sess.k = sess.suite.deriveKeys(sik)
	sess.active = true
	sess.last = e.srv.now()
	logctx.From(ctx).InfoContext(ctx, "ipmi: session opened", "user", name, "system", e.key.String(),
		"peer", from.String(), "cipherSuite", sess.suite.id)
	out := []byte{p[0], statusOK, 0, 0} // the message tag
	out = binary.LittleEndian.AppendUint32(out, sess.remoteID)
	return append(out, sess.suite.mac(sik, sess.rm[:], le32(sess.id), e.guid[:])[:sess.suite.rakp4Len]...)
}

// roleAndName is ROLEm, ULENGTHm and UNAMEm as the RAKP HMACs sign them.
func (s *session) roleAndName() []byte {
	return append([]byte{s.role, byte(len(s.name))}, s.name...) //nolint:gosec // rakp1 keeps names to 16 bytes
}

func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// randomID is a random session id (0 is retried by the caller).
func randomID() uint32 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint32(b[:])
}

// rakpSession is the session a RAKP message 1 or 3 (p) names, locked,
// and how to refuse it (the session is dropped and the client told the
// status, under the message's tag); nil when the session is not this
// client's on this endpoint (nothing is told).
func (e *endpoint) rakpSession(p []byte, from netip.AddrPort) (*session, func(status byte) []byte) {
	sess := e.srv.sessions.get(binary.LittleEndian.Uint32(p[4:8]))
	if sess == nil || sess.key != e.key || sess.peer != from {
		return nil, nil
	}
	sess.mu.Lock()
	tag := p[0]
	return sess, func(status byte) []byte {
		e.srv.sessions.remove(sess)
		out := []byte{tag, status, 0, 0}
		return binary.LittleEndian.AppendUint32(out, sess.remoteID)
	}
}
