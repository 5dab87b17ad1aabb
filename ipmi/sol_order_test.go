package ipmi

import (
	"fmt"
	"testing"
)

// counterGuest prints numbered lines until its console closes: output in
// which each packet's characters say where in the stream they are.
func counterGuest(s *fakeStream) {
	for i := 0; ; i++ {
		if _, err := fmt.Fprintf(s.outW, "%07d\n", i); err != nil {
			return
		}
	}
}

// nextNew waits for the endpoint's next SOL packet under seq, skipping
// retransmissions of the packet before it.
func (r *solRig) nextNew(t *testing.T, seq byte) string {
	t.Helper()
	for {
		s, data := r.next(t)
		if s == seq {
			return data
		}
		if prev := (seq+13)%15 + 1; s != prev {
			t.Fatalf("SOL packet %d while waiting for %d", s, seq)
		}
	}
}

// TestSOLLateAckOfAnEarlierPacket: the network may deliver a client's
// acknowledgement after the ones it sent later (one session's packets are
// handled in the order they arrive, TestSOLPacketsHandledInArrivalOrder);
// SOL sequence numbers come round every 15 packets. An
// acknowledgement sent before a packet went out names an earlier packet
// under the same number: it must not count for this one. (Without the
// session sequence number check, BenchmarkConsole's 256 KiB echo through
// ipmitool repeated characters: "echo byte 255840 is 'g', want 'a'".)
func TestSOLLateAckOfAnEarlierPacket(t *testing.T) {
	r := newSOLRig(t, counterGuest)
	r.activated(t)
	first := r.nextNew(t, 1)
	late := r.c.solPacket(0, 1, 1, 0, "") // accepting 1 character of packet 1: handled only below
	r.ack(t, 1, byte(len(first)))
	for seq := byte(2); seq <= 15; seq++ {
		data := r.nextNew(t, seq)
		r.ack(t, seq, byte(len(data)))
	}
	again := r.nextNew(t, 1) // the 16th packet, under 1 again
	if out := r.c.send(late); out != nil {
		t.Fatalf("an acknowledgement was answered: %x", out)
	}
	r.ack(t, 1, 3) // the client's own: 3 of the 16th packet's characters
	if rest := r.nextNew(t, 2); rest != again[3:] {
		t.Errorf("after 3 of %q were accepted the next packet carried %q, want %q (the late acknowledgement of packet 1 counted for the 16th)",
			again, rest, again[3:])
	}
}

// TestSOLLateResendNotWritten: a client's packet resent (its
// acknowledgement was slow) and handled after the client's next packet is
// not written to the guest again.
func TestSOLLateResendNotWritten(t *testing.T) {
	r, g := newRecordingSOL(t)
	if n := r.typeIn(t, 3, "abc"); n != 3 {
		t.Fatalf("accepted %d of 3", n)
	}
	resend := r.c.solPacket(3, 0, 0, 0, "abc") // sent before the client saw the acknowledgement
	if n := r.typeIn(t, 4, "d"); n != 1 {
		t.Fatalf("accepted %d of 1", n)
	}
	if out := r.c.send(resend); out != nil {
		t.Errorf("a resend handled after the next packet was answered: %x", out)
	}
	if n := r.typeIn(t, 5, "e"); n != 1 {
		t.Fatalf("accepted %d of 1", n)
	}
	if got := g.waitFor(t, "e"); got != "abcde" {
		t.Errorf("the guest read %q, want %q", got, "abcde")
	}
}
