package vncscreen

import (
	"context"
	"encoding/binary"
	"errors"
	"image"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// serve starts screen's server on one end of a pipe and returns the other
// end and the server's result.
func serve(t *testing.T, screen *Screen) (net.Conn, <-chan error) {
	t.Helper()
	server, client := net.Pipe()
	done := make(chan error, 1)
	go func() { done <- screen.Serve(t.Context(), server) }()
	t.Cleanup(func() { client.Close() })
	return client, done
}

func dial(t *testing.T, screen *Screen, format *PixelFormat) *Client {
	t.Helper()
	conn, _ := serve(t, screen)
	c, err := Dial(conn, format)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// samePixels fails the test where got and want differ, naming the first
// differing pixel.
func samePixels(t *testing.T, got, want *image.RGBA) {
	t.Helper()
	if got.Rect != want.Rect {
		t.Fatalf("frame %v, want %v", got.Rect, want.Rect)
	}
	if d := Diff(got, want, want.Rect); d != "" {
		t.Fatal(d)
	}
}

func TestFrameShowsNameAndState(t *testing.T) {
	noVNC := PixelFormat{BitsPerPixel: 32, Depth: 24, TrueColour: true, RedMax: 255, GreenMax: 255, BlueMax: 255, RedShift: 0, GreenShift: 8, BlueShift: 16}
	bigEndian := ServerFormat
	bigEndian.BigEndian = true
	for name, format := range map[string]*PixelFormat{"server format": nil, "noVNC's format": &noVNC, "big-endian": &bigEndian} {
		t.Run(name, func(t *testing.T) {
			c := dial(t, New("vm-7", "Booting from CD-ROM"), format)
			if c.Name != "vm-7" {
				t.Errorf("desktop name %q, want vm-7", c.Name)
			}
			got, err := c.Frame(false)
			if err != nil {
				t.Fatal(err)
			}
			samePixels(t, got, Render("vm-7", "Booting from CD-ROM"))
		})
	}
}

// TestRenderDrawsTheName is the control for the pixel comparisons: two
// names render differently inside the name's bounds, and the text is
// drawn in the foreground colour.
func TestRenderDrawsTheName(t *testing.T) {
	a, b := Render("vm-1", "Running"), Render("vm-2", "Running")
	r := TextBounds("vm-1")
	differ, fg := false, 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			differ = differ || a.RGBAAt(x, y) != b.RGBAAt(x, y)
			if a.RGBAAt(x, y) == Foreground {
				fg++
			}
		}
	}
	if !differ || fg == 0 {
		t.Errorf("vm-1 and vm-2 differ in the name's bounds: %v; foreground pixels: %d", differ, fg)
	}
}

func TestStateChangeSendsAnUpdate(t *testing.T) {
	screen := New("vm-1", "Stopped")
	c := dial(t, screen, nil)
	if _, err := c.Frame(false); err != nil {
		t.Fatal(err)
	}
	go screen.SetState("Booting from disk")
	got, err := c.Frame(true) // answered only once the state changed
	if err != nil {
		t.Fatal(err)
	}
	samePixels(t, got, Render("vm-1", "Booting from disk"))
}

func TestInputIsRecorded(t *testing.T) {
	screen := New("vm-1", "Running")
	c := dial(t, screen, nil)
	const ctrl, alt, del = 0xffe3, 0xffe9, 0xffff
	for _, sym := range []uint32{'a', ctrl, alt, del} {
		if err := c.Key(sym); err != nil {
			t.Fatal(err)
		}
	}
	if err := screen.WaitKey(t.Context(), del); err != nil {
		t.Fatal(err)
	}
	if err := c.Click(10, 20); err != nil {
		t.Fatal(err)
	}
	if err := c.CutText("hello"); err != nil {
		t.Fatal(err)
	}
	// The server reads in order: once the update answers, all came in.
	if _, err := c.Frame(false); err != nil {
		t.Fatal(err)
	}
	want := []Key{{'a', true}, {'a', false}, {ctrl, true}, {ctrl, false}, {alt, true}, {alt, false}, {del, true}, {del, false}}
	if diff := cmp.Diff(want, screen.Keys()); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	if screen.Clicks() != 1 {
		t.Errorf("clicks %d, want 1", screen.Clicks())
	}
	if diff := cmp.Diff([]string{"hello"}, screen.Clipboard()); diff != "" {
		t.Errorf("clipboard (-want +got):\n%s", diff)
	}
}

func TestWaitKeyEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancelCause(t.Context())
	cause := errors.New("test over")
	cancel(cause)
	if err := New("vm-1", "Running").WaitKey(ctx, 'a'); !errors.Is(err, cause) {
		t.Errorf("WaitKey = %v, want %v", err, cause)
	}
}

// TestBadClients: a client that breaks the protocol ends its connection
// with an error that says how, and the screen records nothing of it.
func TestBadClients(t *testing.T) {
	for _, tc := range []struct {
		name string
		send []byte
		want string
	}{
		{"unknown message", []byte{99}, "unknown client message type 99"},
		{"huge clipboard", binary.BigEndian.AppendUint32([]byte{msgClientCutText, 0, 0, 0}, MaxCutText+1), "ClientCutText of 1048577 bytes"},
		{"colour map format", append([]byte{msgSetPixelFormat, 0, 0, 0}, PixelFormat{BitsPerPixel: 8, Depth: 8}.marshal()...), "colour-map pixel formats are not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			screen := New("vm-1", "Running")
			conn, done := serve(t, screen)
			c, err := Dial(conn, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Write(tc.send); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Serve = %v, want %q", err, tc.want)
			}
			if _, err := c.Frame(false); err == nil {
				t.Error("the connection is still served")
			}
			if len(screen.Clipboard()) != 0 {
				t.Errorf("clipboard %q recorded", screen.Clipboard())
			}
		})
	}
}

func TestSecurityTypeNotOffered(t *testing.T) {
	conn, done := serve(t, New("vm-1", "Running"))
	buf := make([]byte, 14)
	if _, err := io.ReadFull(conn, buf[:12]); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte(ProtocolVersion)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(conn, buf[:2]); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]byte{1, securityNone}, buf[:2]); diff != "" {
		t.Errorf("security types (-want +got):\n%s", diff)
	}
	if _, err := conn.Write([]byte{2}); err != nil { // VNC authentication
		t.Fatal(err)
	}
	reply, _ := io.ReadAll(conn)
	if len(reply) < 8 || binary.BigEndian.Uint32(reply) != 1 || !strings.Contains(string(reply[8:]), "security type 2 not offered") {
		t.Errorf("reply %q, want a failed SecurityResult with a reason", reply)
	}
	if err := <-done; err == nil {
		t.Error("Serve returned nil")
	}
}

func TestServeEndsWithContext(t *testing.T) {
	server, client := net.Pipe()
	defer client.Close()
	ctx, cancel := context.WithCancelCause(t.Context())
	done := make(chan error, 1)
	go func() { done <- New("vm-1", "Running").Serve(ctx, server) }()
	if _, err := Dial(client, nil); err != nil {
		t.Fatal(err)
	}
	cause := errors.New("vm stopped")
	cancel(cause)
	if err := <-done; !errors.Is(err, cause) {
		t.Errorf("Serve = %v, want %v", err, cause)
	}
	if _, err := client.Read(make([]byte, 1)); err == nil {
		t.Error("the connection is still open")
	}
}
