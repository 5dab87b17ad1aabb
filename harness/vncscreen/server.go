package vncscreen

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"io"
	"sync"
)

// ProtocolVersion is the RFB version a Screen announces, as QEMU does.
const ProtocolVersion = "RFB 003.008\n"

// Security types and client message types of RFC 6143 a Screen knows.
const (
	securityNone = 1

	msgSetPixelFormat       = 0
	msgSetEncodings         = 2
	msgFramebufferUpdateReq = 3
	msgKeyEvent             = 4
	msgPointerEvent         = 5
	msgClientCutText        = 6
)

// MaxCutText is the longest clipboard text a Screen accepts; a longer one
// ends the connection (QEMU's server also bounds it).
const MaxCutText = 1 << 20

// ErrUnknownMessage is returned by Serve when the client sends a message
// type the server never offered.
var ErrUnknownMessage = errors.New("unknown client message type")

// clientMsg is what the reader hands the writer: a new pixel format or an
// update request, in the order the client sent them.
type clientMsg struct {
	format      *PixelFormat
	incremental bool
}

// Serve speaks RFB 3.8 with security type None to one client over conn
// until the client leaves (nil), ctx ends (ctx's cause) or the client
// breaks the protocol (an error saying how). It closes conn when done.
func (s *Screen) Serve(ctx context.Context, conn io.ReadWriteCloser) error {
	defer conn.Close()
	r := bufio.NewReader(conn)
	if err := s.handshake(r, conn); err != nil {
		return fmt.Errorf("rfb handshake for %s: %w", s.name, err)
	}
	msgs := make(chan clientMsg)
	readErr := make(chan error, 1)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { readErr <- s.readClient(r, msgs, done) })
	err := s.writeUpdates(ctx, conn, msgs, readErr)
	close(done)
	conn.Close() // unblocks the reader
	wg.Wait()
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// handshake runs ProtocolVersion, Security, SecurityResult, ClientInit
// and ServerInit (RFC 6143 7.1-7.3). Versions 3.7 and 3.8 are accepted
// (3.7 sends no SecurityResult for None), 3.3 gets the type as a word.
func (s *Screen) handshake(r *bufio.Reader, w io.Writer) error {
	if _, err := io.WriteString(w, ProtocolVersion); err != nil {
		return err
	}
	var version [12]byte
	if _, err := io.ReadFull(r, version[:]); err != nil {
		return fmt.Errorf("read client version: %w", err)
	}
	var minor int
	if _, err := fmt.Sscanf(string(version[:]), "RFB 003.%03d\n", &minor); err != nil {
		return fmt.Errorf("client version %q: %w", version, err)
	}
	if minor >= 7 {
		if _, err := w.Write([]byte{1, securityNone}); err != nil {
			return err
		}
		chosen, err := r.ReadByte()
		if err != nil {
			return fmt.Errorf("read security type: %w", err)
		}
		if chosen != securityNone {
			reason := fmt.Sprintf("security type %d not offered", chosen)
			_, _ = w.Write(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 1), uint32(len(reason))))
			_, _ = io.WriteString(w, reason)
			return errors.New(reason)
		}
		if minor >= 8 {
			if _, err := w.Write([]byte{0, 0, 0, 0}); err != nil {
				return err
			}
		}
	} else if _, err := w.Write([]byte{0, 0, 0, securityNone}); err != nil {
		return err
	}
	if _, err := r.ReadByte(); err != nil { // ClientInit: shared flag
		return fmt.Errorf("read client init: %w", err)
	}
	init := binary.BigEndian.AppendUint16(nil, Width)
	init = binary.BigEndian.AppendUint16(init, Height)
	init = append(init, ServerFormat.marshal()...)
	init = binary.BigEndian.AppendUint32(init, uint32(len(s.name)))
	init = append(init, s.name...)
	_, err := w.Write(init)
	return err
}

// readClient reads client messages until an error, recording input on the
// screen and handing formats and update requests to the writer.
func (s *Screen) readClient(r *bufio.Reader, msgs chan<- clientMsg, done <-chan struct{}) error {
	hand := func(m clientMsg) error {
		select {
		case msgs <- m:
			return nil
		case <-done:
			return io.EOF
		}
	}
	for {
		kind, err := r.ReadByte()
		if err != nil {
			return err
		}
		switch kind {
		case msgSetPixelFormat:
			b, err := readN(r, 19)
			if err != nil {
				return err
			}
			f, err := parsePixelFormat(b[3:])
			if err != nil {
				return fmt.Errorf("SetPixelFormat: %w", err)
			}
			if err := hand(clientMsg{format: &f}); err != nil {
				return err
			}
		case msgSetEncodings:
			b, err := readN(r, 3)
			if err != nil {
				return err
			}
			if _, err := readN(r, 4*int(binary.BigEndian.Uint16(b[1:]))); err != nil {
				return err // only raw is ever sent: every client accepts it
			}
		case msgFramebufferUpdateReq:
			b, err := readN(r, 9)
			if err != nil {
				return err
			}
			if err := hand(clientMsg{incremental: b[0] != 0}); err != nil {
				return err
			}
		case msgKeyEvent:
			b, err := readN(r, 7)
			if err != nil {
				return err
			}
			s.key(Key{Sym: binary.BigEndian.Uint32(b[3:]), Down: b[0] != 0})
		case msgPointerEvent:
			b, err := readN(r, 5)
			if err != nil {
				return err
			}
			s.pointer(b[0])
		case msgClientCutText:
			b, err := readN(r, 7)
			if err != nil {
				return err
			}
			n := binary.BigEndian.Uint32(b[3:])
			if n > MaxCutText {
				return fmt.Errorf("ClientCutText of %d bytes: more than %d", n, MaxCutText)
			}
			text, err := readN(r, int(n))
			if err != nil {
				return err
			}
			s.cutText(string(text))
		default:
			return fmt.Errorf("%w %d", ErrUnknownMessage, kind)
		}
	}
}

// writeUpdates answers update requests with the whole frame in raw
// encoding: a full request at once, an incremental one when the frame
// differs from the last one sent (at once, or at the next change).
func (s *Screen) writeUpdates(ctx context.Context, w io.Writer, msgs <-chan clientMsg, readErr <-chan error) error {
	format := ServerFormat
	var sent *image.RGBA
	pending := false
	for {
		frame, changed := s.snapshot()
		if pending && frame != sent {
			if err := writeFrame(w, format, frame); err != nil {
				return err
			}
			sent, pending = frame, false
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case err := <-readErr:
			return err
		case <-changed:
		case m := <-msgs:
			switch {
			case m.format != nil:
				format = *m.format
			case !m.incremental:
				sent, pending = nil, true
			default:
				pending = true
			}
		}
	}
}

// writeFrame sends one FramebufferUpdate holding the whole frame.
func writeFrame(w io.Writer, f PixelFormat, frame *image.RGBA) error {
	b := make([]byte, 0, 16+Width*Height*f.bytesPerPixel())
	b = append(b, 0, 0)                     // FramebufferUpdate, padding
	b = binary.BigEndian.AppendUint16(b, 1) // one rectangle
	b = binary.BigEndian.AppendUint16(b, 0)
	b = binary.BigEndian.AppendUint16(b, 0)
	b = binary.BigEndian.AppendUint16(b, Width)
	b = binary.BigEndian.AppendUint16(b, Height)
	b = binary.BigEndian.AppendUint32(b, 0) // raw encoding
	b = f.encode(b, frame, frame.Bounds())
	_, err := w.Write(b)
	return err
}

func readN(r io.Reader, n int) ([]byte, error) {
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return b, err
}
