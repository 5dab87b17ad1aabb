package rfb_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/harness/vncscreen"
	"github.com/redfish-bridge/redfish-bridge/rfb"
)

// viewer connects an RFB client to screen's real server through
// ViewOnly (or straight, viewOnly false) and returns the client.
func viewer(t *testing.T, screen *vncscreen.Screen, viewOnly bool) *vncscreen.Client {
	t.Helper()
	serverEnd, proxyEnd := net.Pipe()
	clientEnd, proxyClient := net.Pipe()
	go func() { _ = screen.Serve(t.Context(), serverEnd) }()
	go func() { _, _ = io.Copy(proxyClient, proxyEnd) }() // server to client: untouched
	go func() {
		var dst io.Writer = proxyEnd
		if viewOnly {
			dst = rfb.ViewOnly(proxyEnd)
		}
		_, _ = io.Copy(dst, proxyClient)
		proxyEnd.Close()
	}()
	t.Cleanup(func() { clientEnd.Close(); proxyClient.Close() })
	c, err := vncscreen.Dial(clientEnd, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestViewOnlyDropsInput: through ViewOnly the viewer sees the screen, and
// the VM receives none of its keys, clicks or clipboard; the control
// (viewOnly false, the same client) shows that the VM would have.
func TestViewOnlyDropsInput(t *testing.T) {
	for _, viewOnly := range []bool{true, false} {
		screen := vncscreen.New("vm-1", "Running")
		c := viewer(t, screen, viewOnly)
		if err := c.Key('a'); err != nil {
			t.Fatal(err)
		}
		if err := c.Click(3, 4); err != nil {
			t.Fatal(err)
		}
		if err := c.CutText("secret"); err != nil {
			t.Fatal(err)
		}
		// The server reads in order: the update answers after the input.
		got, err := c.Frame(false)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Pix, vncscreen.Render("vm-1", "Running").Pix) {
			t.Errorf("viewOnly %v: the viewer does not see the screen", viewOnly)
		}
		input := len(screen.Keys()) + screen.Clicks() + len(screen.Clipboard())
		if viewOnly && input != 0 {
			t.Errorf("view-only: the VM received keys %v, %d clicks, clipboard %q", screen.Keys(), screen.Clicks(), screen.Clipboard())
		}
		if !viewOnly && input != 4 {
			t.Errorf("control: the VM received %d input events, want 4 (key down, up, click, clipboard)", input)
		}
	}
}

// stream is a client's side of a 3.8 session: handshake, then msgs.
func stream(msgs ...[]byte) []byte {
	b := append([]byte("RFB 003.008\n"), 1, 0) // None, ClientInit exclusive
	for _, m := range msgs {
		b = append(b, m...)
	}
	return b
}

func TestViewOnlyFraming(t *testing.T) {
	update := []byte{3, 0, 0, 0, 0, 0, 0, 10, 0, 10}
	format := append([]byte{0, 0, 0, 0}, make([]byte, 16)...)
	encodings := []byte{2, 0, 0, 2, 0, 0, 0, 0, 0xff, 0xff, 0xfe, 0xfe}
	fence := []byte{248, 0, 0, 0, 0, 0, 0, 0, 3, 'a', 'b', 'c'}
	key := []byte{4, 1, 0, 0, 0, 0, 0, 'a'}
	pointer := []byte{5, 1, 0, 1, 0, 1}
	cut := binary.BigEndian.AppendUint32([]byte{6, 0, 0, 0}, 70000)
	cut = append(cut, bytes.Repeat([]byte{'x'}, 70000)...)
	extCut := binary.BigEndian.AppendUint32([]byte{6, 0, 0, 0}, uint32(0x100000000-4))
	extCut = append(extCut, 1, 2, 3, 4)
	resize := []byte{251, 0, 1, 0, 3, 0, 1, 0}
	resize = append(resize, make([]byte, 16)...)
	qemuKey := []byte{255, 0, 0, 1, 0, 0, 0, 'a', 0, 0, 0, 30}
	audio := []byte{255, 1, 0, 2, 3, 2, 0, 0, 0xac, 0x44}

	in := stream(format, encodings, key, update, pointer, cut, fence, extCut, resize, qemuKey, audio, update)
	want := append([]byte("RFB 003.008\n"), 1, 1) // shared forced on
	for _, m := range [][]byte{format, encodings, update, fence, update} {
		want = append(want, m...)
	}
	for _, chunk := range []int{1, 3, 7, len(in)} {
		var out bytes.Buffer
		w := rfb.ViewOnly(&out)
		for b := in; len(b) > 0; b = b[min(chunk, len(b)):] {
			if _, err := w.Write(b[:min(chunk, len(b))]); err != nil {
				t.Fatalf("chunks of %d: %v", chunk, err)
			}
		}
		if diff := cmp.Diff(want, out.Bytes()); diff != "" {
			t.Errorf("chunks of %d: forwarded (-want +got):\n%s", chunk, diff)
		}
	}
}

func TestViewOnlyUnknownMessage(t *testing.T) {
	for name, msg := range map[string][]byte{"type 99": {99}, "QEMU message 7": {255, 7}} {
		var out bytes.Buffer
		_, err := rfb.ViewOnly(&out).Write(stream(msg))
		if !errors.Is(err, rfb.ErrUnknownMessage) {
			t.Errorf("%s: %v, want ErrUnknownMessage", name, err)
		}
	}
}
