package vncscreen

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"io"
)

// Client is a small RFB 3.8 client (security type None, raw encoding):
// what a test uses to read a framebuffer and type keys through virt-api
// or the bridge.
type Client struct {
	conn   io.ReadWriteCloser
	r      *bufio.Reader
	format PixelFormat
	frame  *image.RGBA

	// Name is the desktop name the server announced (a Screen's VM name).
	Name string
}

// Dial runs the client's side of the handshake over conn and asks for
// pixels in format (nil: the server's own).
func Dial(conn io.ReadWriteCloser, format *PixelFormat) (*Client, error) {
	c := &Client{conn: conn, r: bufio.NewReader(conn)}
	if err := c.handshake(); err != nil {
		return nil, errors.Join(fmt.Errorf("rfb client handshake: %w", err), conn.Close())
	}
	if format != nil {
		msg := append([]byte{msgSetPixelFormat, 0, 0, 0}, format.marshal()...)
		if _, err := conn.Write(msg); err != nil {
			return nil, errors.Join(fmt.Errorf("set pixel format: %w", err), conn.Close())
		}
		c.format = *format
	}
	return c, nil
}

func (c *Client) handshake() error {
	version, err := readN(c.r, 12)
	if err != nil {
		return fmt.Errorf("read server version: %w", err)
	}
	if string(version) != ProtocolVersion {
		return fmt.Errorf("server version %q, want %q", version, ProtocolVersion)
	}
	if _, err := io.WriteString(c.conn, ProtocolVersion); err != nil {
		return err
	}
	n, err := c.r.ReadByte()
	if err != nil {
		return fmt.Errorf("read security types: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("server refused: %s", c.readReason())
	}
	types, err := readN(c.r, int(n))
	if err != nil {
		return err
	}
	if types[0] != securityNone {
		return fmt.Errorf("server offers security types %v, not None", types)
	}
	if _, err := c.conn.Write([]byte{securityNone}); err != nil {
		return err
	}
	result, err := readN(c.r, 4)
	if err != nil {
		return fmt.Errorf("read security result: %w", err)
	}
	if binary.BigEndian.Uint32(result) != 0 {
		return fmt.Errorf("security failed: %s", c.readReason())
	}
	if _, err := c.conn.Write([]byte{1}); err != nil { // shared
		return err
	}
	init, err := readN(c.r, 24)
	if err != nil {
		return fmt.Errorf("read server init: %w", err)
	}
	w, h := binary.BigEndian.Uint16(init), binary.BigEndian.Uint16(init[2:])
	if c.format, err = parsePixelFormat(init[4:20]); err != nil {
		return fmt.Errorf("server pixel format: %w", err)
	}
	name, err := readN(c.r, int(binary.BigEndian.Uint32(init[20:])))
	if err != nil {
		return err
	}
	c.Name = string(name)
	c.frame = image.NewRGBA(image.Rect(0, 0, int(w), int(h)))
	return nil
}

func (c *Client) readReason() string {
	b, err := readN(c.r, 4)
	if err != nil {
		return "(no reason)"
	}
	reason, _ := readN(c.r, int(min(binary.BigEndian.Uint32(b), 4096)))
	return string(reason)
}

// Frame asks for an update of the whole screen (incremental: only when it
// changed) and returns the framebuffer once the update arrived.
func (c *Client) Frame(incremental bool) (*image.RGBA, error) {
	req := []byte{msgFramebufferUpdateReq, boolByte(incremental), 0, 0, 0, 0}
	req = binary.BigEndian.AppendUint16(req, uint16(c.frame.Rect.Dx()))
	req = binary.BigEndian.AppendUint16(req, uint16(c.frame.Rect.Dy()))
	if _, err := c.conn.Write(req); err != nil {
		return nil, fmt.Errorf("request update: %w", err)
	}
	for {
		kind, err := c.r.ReadByte()
		if err != nil {
			return nil, fmt.Errorf("read server message: %w", err)
		}
		switch kind {
		case 0:
			if err := c.readUpdate(); err != nil {
				return nil, err
			}
			out := image.NewRGBA(c.frame.Rect)
			copy(out.Pix, c.frame.Pix)
			return out, nil
		case 2: // Bell
		case 3: // ServerCutText
			b, err := readN(c.r, 7)
			if err != nil {
				return nil, err
			}
			if _, err := readN(c.r, int(min(binary.BigEndian.Uint32(b[3:]), MaxCutText))); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("server message type %d not supported", kind)
		}
	}
}

func (c *Client) readUpdate() error {
	head, err := readN(c.r, 3)
	if err != nil {
		return err
	}
	for range binary.BigEndian.Uint16(head[1:]) {
		rect, err := readN(c.r, 12)
		if err != nil {
			return err
		}
		x, y := int(binary.BigEndian.Uint16(rect)), int(binary.BigEndian.Uint16(rect[2:]))
		w, h := int(binary.BigEndian.Uint16(rect[4:])), int(binary.BigEndian.Uint16(rect[6:]))
		if enc := int32(binary.BigEndian.Uint32(rect[8:])); enc != 0 {
			return fmt.Errorf("rectangle encoding %d, want raw", enc)
		}
		if !image.Rect(x, y, x+w, y+h).In(c.frame.Rect) {
			return fmt.Errorf("rectangle %dx%d+%d+%d outside the screen", w, h, x, y)
		}
		pixels, err := readN(c.r, w*h*c.format.bytesPerPixel())
		if err != nil {
			return err
		}
		c.format.decode(c.frame, x, y, w, h, pixels)
	}
	return nil
}

// Key presses and releases the key sym (an X11 keysym).
func (c *Client) Key(sym uint32) error {
	for _, down := range []byte{1, 0} {
		msg := binary.BigEndian.AppendUint32([]byte{msgKeyEvent, down, 0, 0}, sym)
		if _, err := c.conn.Write(msg); err != nil {
			return fmt.Errorf("key %#x: %w", sym, err)
		}
	}
	return nil
}

// Click presses and releases the first pointer button at (x, y).
func (c *Client) Click(x, y uint16) error {
	for _, buttons := range []byte{1, 0} {
		msg := binary.BigEndian.AppendUint16([]byte{msgPointerEvent, buttons}, x)
		msg = binary.BigEndian.AppendUint16(msg, y)
		if _, err := c.conn.Write(msg); err != nil {
			return fmt.Errorf("click at %d,%d: %w", x, y, err)
		}
	}
	return nil
}

// CutText sends text as the client's clipboard.
func (c *Client) CutText(text string) error {
	msg := binary.BigEndian.AppendUint32([]byte{msgClientCutText, 0, 0, 0}, uint32(len(text)))
	if _, err := c.conn.Write(append(msg, text...)); err != nil {
		return fmt.Errorf("cut text: %w", err)
	}
	return nil
}

// Close ends the connection.
func (c *Client) Close() error { return c.conn.Close() }
