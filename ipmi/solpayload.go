package ipmi

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/redfish-bridge/redfish-bridge/console"
)

// SOL packets (IPMI v2.0 section 15.9): sequence number, acked sequence
// number, accepted character count, operation/status, then characters.
const (
	// solMaxData is the most characters one SOL packet carries either way
	// (the accepted character count is one byte).
	solMaxData = 240
	// solRetryInterval is how long an unacknowledged packet to the client
	// waits before it is sent again; solRetryCount is what SOL
	// configuration parameter 4 reports (the bridge keeps retrying, at
	// this interval, for as long as the session lives).
	solRetryInterval = 500 * time.Millisecond
	solRetryCount    = 7
	// solRetryTicks is solRetryInterval in SOL parameter 4's 10 ms units.
	solRetryTicks = byte(solRetryInterval / (10 * time.Millisecond))

	// solInboundQueue bounds the client's SOL packets waiting for their
	// turn ([solPayload.enqueue]); beyond it they are dropped, as a full
	// socket buffer drops them, and the client resends.
	solInboundQueue = 64

	solNack        = 0x40 // either way: the packet was not accepted
	solBreak       = 0x10 // client to BMC: generate a serial break
	solDeactivated = 0x10 // BMC to client: the SOL payload is deactivated
)

// Why a SOL payload ends.
var (
	errSessionEnded = errors.New("ipmi: the session ended")
	errDeactivated  = errors.New("ipmi: SOL payload deactivated")
)

// solPayload is an active SOL payload: one session's relay of one
// System's console stream. The guest's output goes one packet at a time:
// the stream is not read again until the client acknowledged the last
// packet, so a client that does not acknowledge holds the guest back (the
// console's backpressure) and the relay holds at most one packet.
type solPayload struct {
	e      *endpoint
	sess   *session
	stream console.Stream
	log    *slog.Logger
	retry  time.Duration

	// in holds the client's SOL packets in the order they arrived; one
	// goroutine handles them ([solPayload.handleInbound]). A client does
	// not always wait for a packet's acknowledgement before sending the
	// next: ipmitool stops waiting when the BMC's own data arrives first,
	// and never sends that packet again. Handled on goroutines of their
	// own, a later packet could pass an earlier one, and the earlier one's
	// characters were lost (BenchmarkConsole's SOL echo stalled at
	// 205,745 of 262,144 bytes) or written after the later ones.
	in chan solInbound

	mu sync.Mutex
	// outSeq is the sequence number of the packet waiting for its
	// acknowledgement (0: none); acked its accepted count once
	// acknowledged, -1 before.
	outSeq byte
	acked  int
	// The network may still reorder datagrams, and a SOL sequence number
	// comes round again every 15 packets. The client's session sequence
	// number orders them: high is the highest handled; outAfter was high
	// when outSeq's packet was sent (an acknowledgement of it came later);
	// inSess is the session sequence number of the data packet inSeq.
	high, outAfter, inSess uint32
	// inSeq is the client's last data packet, inCount how many of its
	// characters were accepted; inBusy while they are being written.
	inSeq, inCount byte
	inBusy         bool

	writeMu sync.Mutex    // one write to the guest at a time
	kick    chan struct{} // an acknowledgement arrived
	done    chan struct{} // closed when the payload ended
	stopped chan struct{} // closed when the delivery loop returned
	once    sync.Once
}

// solInbound is one datagram of the client's, as it arrived.
type solInbound struct {
	pkt  []byte
	from netip.AddrPort
}

func newSOLPayload(e *endpoint, sess *session, st console.Stream, log *slog.Logger) *solPayload {
	return &solPayload{
		e: e, sess: sess, stream: st, log: log, retry: e.srv.solRetry, acked: -1,
		in:   make(chan solInbound, solInboundQueue),
		kick: make(chan struct{}, 1), done: make(chan struct{}), stopped: make(chan struct{}),
	}
}

// start starts delivering the guest's output and handling the client's
// SOL packets (after Activate Payload's answer went out); ctx is the
// server's.
func (p *solPayload) start(ctx context.Context) {
	go p.run()
	go p.handleInbound(ctx)
}

// enqueue gives the payload a SOL datagram of its session, to be handled
// after those that arrived before it; a full queue drops it.
func (p *solPayload) enqueue(pkt []byte, from netip.AddrPort) {
	select {
	case p.in <- solInbound{pkt: pkt, from: from}:
	default:
	}
}

// handleInbound handles the queued datagrams one at a time, in the order
// they arrived, and answers each (its acknowledgement), until the payload
// ends.
func (p *solPayload) handleInbound(ctx context.Context) {
	for {
		select {
		case <-p.done:
			return
		case <-ctx.Done():
			return
		case in := <-p.in:
			if out := p.e.handle(ctx, in.pkt, in.from); out != nil {
				p.e.sendTo(out, in.from)
			}
		}
	}
}

// run reads the guest's output and delivers it until the payload ends.
func (p *solPayload) run() {
	defer close(p.stopped)
	buf := make([]byte, solMaxData)
	var seq byte
	for {
		n, err := p.stream.Read(buf)
		for data := buf[:n]; len(data) > 0; {
			seq = seq%15 + 1 // 1..15: 0 marks a packet without characters
			k, ok := p.deliver(seq, data)
			if !ok {
				return
			}
			data = data[k:]
		}
		if err != nil {
			p.end(err, true)
			return
		}
	}
}

// deliver sends data under seq and sends it again each retry interval
// until the client accepts some of it; it returns how many characters were
// accepted (the rest goes under the next sequence number), false when the
// payload ended first.
func (p *solPayload) deliver(seq byte, data []byte) (int, bool) {
	p.mu.Lock()
	p.outSeq, p.acked, p.outAfter = seq, -1, p.high
	p.mu.Unlock()
	pkt := append([]byte{seq, 0, 0, 0}, data...)
	t := time.NewTimer(p.retry)
	defer t.Stop()
	p.send(pkt)
	for {
		select {
		case <-p.done:
			return 0, false
		case <-t.C:
			p.send(pkt) // the packet or its acknowledgement was lost: the same sequence number, the same bytes
			t.Reset(p.retry)
		case <-p.kick:
			p.mu.Lock()
			k := p.acked
			p.mu.Unlock()
			if k > 0 {
				return min(k, len(data)), true
			}
		}
	}
}

// receive handles a SOL packet from the client: an acknowledgement of the
// packet in flight, characters for the guest, or both. It returns the
// acknowledgement to answer with, nil for none (a packet without a
// sequence number, a resend of one still being written, or a packet the
// client sent before the last one handled: sessSeq, its session sequence
// number, tells). An acknowledgement counts only when the client sent it
// after the packet it names went out: one handled late, naming an earlier
// packet under the same SOL sequence number, would skip or repeat
// characters.
func (p *solPayload) receive(ctx context.Context, sessSeq uint32, msg []byte) []byte {
	if len(msg) < 4 {
		return nil
	}
	seq, ackSeq, accepted, op := msg[0]&0x0F, msg[1]&0x0F, msg[2], msg[3]
	p.mu.Lock()
	p.high = max(p.high, sessSeq)
	if ackSeq != 0 && op&solNack == 0 && accepted > 0 && ackSeq == p.outSeq && p.acked < 0 && sessSeq > p.outAfter {
		p.acked = int(accepted)
		select {
		case p.kick <- struct{}{}:
		default:
		}
	}
	p.mu.Unlock()
	if seq == 0 {
		return nil // an acknowledgement only: not acknowledged in turn
	}
	select {
	case <-p.done:
		return []byte{0, seq, 0, solDeactivated}
	default:
	}
	p.mu.Lock()
	if sessSeq < p.inSess {
		p.mu.Unlock()
		return nil // sent before the data packet taken last: a resend the client no longer waits on
	}
	if seq == p.inSeq {
		busy, n := p.inBusy, p.inCount
		p.mu.Unlock()
		if busy {
			return nil // still being written: the client sends it again
		}
		return []byte{0, seq, n, 0} // a resend: acknowledged again, written once
	}
	p.inSeq, p.inBusy, p.inSess = seq, true, sessSeq
	p.mu.Unlock()
	if op&solBreak != 0 {
		p.log.InfoContext(ctx, "ipmi: SOL break not sent: KubeVirt's console carries bytes only")
	}
	data := msg[4:]
	data = data[:min(len(data), solMaxData)] // the rest is not accepted: the client sends it again
	var n int
	var err error
	if len(data) > 0 {
		p.writeMu.Lock()
		n, err = p.stream.Write(data)
		p.writeMu.Unlock()
	}
	p.mu.Lock()
	p.inBusy, p.inCount = false, byte(n)
	p.mu.Unlock()
	if err != nil {
		p.end(err, false) // the answer below tells the client
		return []byte{0, seq, byte(n), solDeactivated}
	}
	return []byte{0, seq, byte(n), 0}
}

// send sends a SOL packet to the session's client.
func (p *solPayload) send(payload []byte) {
	if out := p.e.sealSOL(p.sess, payload); out != nil {
		p.e.sendTo(out, p.sess.peer)
	}
}

// end ends the payload once: the console stream closes (its audit line
// counts the bytes) and the endpoint's SOL instance is free again. With
// notify the client is told the payload is deactivated (not when it asked
// for it: its Deactivate Payload's answer must be the next packet).
func (p *solPayload) end(why error, notify bool) {
	p.once.Do(func() {
		close(p.done)
		_ = p.stream.Close()
		p.e.solMu.Lock()
		if p.e.sol == p {
			p.e.sol = nil
		}
		p.e.solMu.Unlock()
		p.sess.sol.CompareAndSwap(p, nil)
		if notify {
			p.send([]byte{0, 0, 0, solDeactivated})
		}
		p.log.Info("ipmi: SOL ended", "reason", why.Error())
	})
}
