package rfb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Client message types (RFC 6143 7.5 and the registered extensions a VNC
// client such as noVNC sends to QEMU).
const (
	msgSetPixelFormat          = 0
	msgSetEncodings            = 2
	msgFramebufferUpdateReq    = 3
	msgKeyEvent                = 4
	msgPointerEvent            = 5
	msgClientCutText           = 6
	msgEnableContinuousUpdates = 150
	msgClientFence             = 248
	msgSetDesktopSize          = 251
	msgQEMU                    = 255
)

// ErrUnknownMessage ends a view-only stream whose client sent a message
// it cannot frame: past it nothing can be told apart.
var ErrUnknownMessage = errors.New("rfb: unknown client message")

// maxHeader is the longest message header ViewOnly reads before it knows
// a message's length (ClientFence's 9 bytes; QEMU's are at most 12).
const maxHeader = 12

type stage int

const (
	stageVersion stage = iota
	stageSecurity
	stageVNCAuth
	stageClientInit
	stageMessages
)

// viewOnly is the state of one client stream (see ViewOnly).
type viewOnly struct {
	dst   io.Writer
	stage stage
	hdr   []byte // the current message's bytes read so far, up to its header's end
	body  int    // bytes of the current message's body still to pass or drop
	pass  bool   // whether the current message is forwarded
}

// ViewOnly returns a writer taking a client's bytes of an RFB stream and
// writing to dst only what a viewer may send. The handshake passes, with
// ClientInit's shared flag forced on (an exclusive viewer would
// disconnect everybody else); after it SetPixelFormat, SetEncodings,
// FramebufferUpdateRequest, EnableContinuousUpdates and ClientFence pass
// and KeyEvent, PointerEvent, ClientCutText, SetDesktopSize and QEMU's
// messages are dropped. Bytes may arrive split anywhere: a message is
// decided from its header, its body is streamed (a dropped clipboard is
// never buffered). A write holding a message it cannot frame fails with
// [ErrUnknownMessage]; the stream must end then.
func ViewOnly(dst io.Writer) io.Writer {
	return &viewOnly{dst: dst, hdr: make([]byte, 0, maxHeader)}
}

func (v *viewOnly) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if v.body > 0 {
			k := min(v.body, len(p))
			if v.pass {
				if _, err := v.dst.Write(p[:k]); err != nil {
					return n - len(p), err
				}
			}
			v.body -= k
			p = p[k:]
			continue
		}
		v.hdr = append(v.hdr, p[0])
		p = p[1:]
		need, body, pass, err := v.frame()
		if err != nil {
			return n - len(p), err
		}
		if len(v.hdr) < need {
			continue
		}
		if pass {
			if _, err := v.dst.Write(v.hdr); err != nil {
				return n - len(p), err
			}
		}
		v.body, v.pass, v.hdr = body, pass, v.hdr[:0]
	}
	return n, nil
}

// frame looks at the header read so far: need is the header's length
// (more bytes are wanted while len(v.hdr) < need), body the length of
// what follows it, pass whether the message is forwarded. It advances the
// handshake and may rewrite the header (ClientInit).
func (v *viewOnly) frame() (need, body int, pass bool, err error) {
	h := v.hdr
	switch v.stage {
	case stageVersion:
		if len(h) < 12 {
			return 12, 0, true, nil
		}
		v.stage = stageSecurity
		if string(h) == "RFB 003.003\n" { // the server chose the security type
			v.stage = stageClientInit
		}
		return 12, 0, true, nil
	case stageSecurity:
		switch h[0] {
		case 1: // None
			v.stage = stageClientInit
		case 2: // VNC authentication: a 16-byte response follows
			v.stage = stageVNCAuth
		default:
			return 0, 0, false, fmt.Errorf("%w: security type %d", ErrUnknownMessage, h[0])
		}
		return 1, 0, true, nil
	case stageVNCAuth:
		if len(h) < 16 {
			return 16, 0, true, nil
		}
		v.stage = stageClientInit
		return 16, 0, true, nil
	case stageClientInit:
		h[0] = 1 // shared: a viewer never disconnects the others
		v.stage = stageMessages
		return 1, 0, true, nil
	}
	return message(h)
}

// message frames one client message from its header h.
func message(h []byte) (need, body int, pass bool, err error) {
	switch h[0] {
	case msgSetPixelFormat:
		return 20, 0, true, nil
	case msgSetEncodings:
		if len(h) < 4 {
			return 4, 0, true, nil
		}
		return 4, 4 * int(binary.BigEndian.Uint16(h[2:])), true, nil
	case msgFramebufferUpdateReq, msgEnableContinuousUpdates:
		return 10, 0, true, nil
	case msgKeyEvent:
		return 8, 0, false, nil
	case msgPointerEvent:
		return 6, 0, false, nil
	case msgClientCutText:
		if len(h) < 8 {
			return 8, 0, false, nil
		}
		// a negative length marks Extended Clipboard: its absolute value
		return 8, cutTextLength(binary.BigEndian.Uint32(h[4:])), false, nil
	case msgClientFence:
		if len(h) < 9 {
			return 9, 0, true, nil
		}
		return 9, int(h[8]), true, nil
	case msgSetDesktopSize:
		if len(h) < 8 {
			return 8, 0, false, nil
		}
		return 8, 16 * int(h[6]), false, nil
	case msgQEMU:
		if len(h) < 2 {
			return 2, 0, false, nil
		}
		switch h[1] {
		case 0: // extended key event
			return 12, 0, false, nil
		case 1: // audio: enable, disable (4 bytes) or set format (10)
			if len(h) < 4 {
				return 4, 0, false, nil
			}
			if binary.BigEndian.Uint16(h[2:]) == 2 {
				return 10, 0, false, nil
			}
			return 4, 0, false, nil
		}
		return 0, 0, false, fmt.Errorf("%w: QEMU message %d", ErrUnknownMessage, h[1])
	}
	return 0, 0, false, fmt.Errorf("%w: type %d", ErrUnknownMessage, h[0])
}

// cutTextLength is the body length of a ClientCutText whose length field
// is n: an int32 whose negative values (Extended Clipboard) count bytes
// by their absolute value.
func cutTextLength(n uint32) int {
	if n&0x80000000 != 0 {
		return int(^n + 1)
	}
	return int(n)
}
