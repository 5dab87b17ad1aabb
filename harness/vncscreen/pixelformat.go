package vncscreen

import (
	"encoding/binary"
	"errors"
	"fmt"
	"image"
)

// PixelFormat is RFB's PIXEL_FORMAT (RFC 6143 7.4): how a pixel's colour
// is packed on the wire. Only true colour is supported (QEMU's server
// also refuses colour maps from modern clients).
type PixelFormat struct {
	BitsPerPixel, Depth             uint8
	BigEndian, TrueColour           bool
	RedMax, GreenMax, BlueMax       uint16
	RedShift, GreenShift, BlueShift uint8
}

// ServerFormat is the format a Screen announces in ServerInit: 32 bits,
// depth 24, little-endian, 8 bits per channel.
var ServerFormat = PixelFormat{
	BitsPerPixel: 32, Depth: 24, TrueColour: true,
	RedMax: 255, GreenMax: 255, BlueMax: 255,
	RedShift: 16, GreenShift: 8, BlueShift: 0,
}

// marshal returns the 16 bytes of the format.
func (f PixelFormat) marshal() []byte {
	b := make([]byte, 16)
	b[0], b[1] = f.BitsPerPixel, f.Depth
	b[2], b[3] = boolByte(f.BigEndian), boolByte(f.TrueColour)
	binary.BigEndian.PutUint16(b[4:], f.RedMax)
	binary.BigEndian.PutUint16(b[6:], f.GreenMax)
	binary.BigEndian.PutUint16(b[8:], f.BlueMax)
	b[10], b[11], b[12] = f.RedShift, f.GreenShift, f.BlueShift
	return b
}

// parsePixelFormat reads the 16 bytes of a format and checks it can be
// served.
func parsePixelFormat(b []byte) (PixelFormat, error) {
	f := PixelFormat{
		BitsPerPixel: b[0], Depth: b[1], BigEndian: b[2] != 0, TrueColour: b[3] != 0,
		RedMax:   binary.BigEndian.Uint16(b[4:]),
		GreenMax: binary.BigEndian.Uint16(b[6:]),
		BlueMax:  binary.BigEndian.Uint16(b[8:]),
		RedShift: b[10], GreenShift: b[11], BlueShift: b[12],
	}
	switch {
	case !f.TrueColour:
		return f, errors.New("colour-map pixel formats are not supported")
	case f.BitsPerPixel != 8 && f.BitsPerPixel != 16 && f.BitsPerPixel != 32:
		return f, fmt.Errorf("%d bits per pixel: want 8, 16 or 32", f.BitsPerPixel)
	}
	return f, nil
}

func (f PixelFormat) bytesPerPixel() int { return int(f.BitsPerPixel) / 8 }

// encode appends the raw encoding of img's rectangle r in format f. The
// bits no colour uses are sent as ones, as an opaque alpha: Debian's
// noVNC 1.3.0 (its raw decoder sets the alpha of the wrong bytes, at the
// start of its queue rather than the rectangle's) otherwise shows every
// raw line after a rectangle's first chunk transparent.
func (f PixelFormat) encode(dst []byte, img *image.RGBA, r image.Rectangle) []byte {
	n := f.bytesPerPixel()
	var px [4]byte
	unused := ^(uint32(f.RedMax)<<f.RedShift | uint32(f.GreenMax)<<f.GreenShift | uint32(f.BlueMax)<<f.BlueShift)
	if f.BitsPerPixel < 32 {
		unused &= 1<<f.BitsPerPixel - 1
	}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := img.RGBAAt(x, y)
			v := uint32(c.R)*uint32(f.RedMax)/255<<f.RedShift |
				uint32(c.G)*uint32(f.GreenMax)/255<<f.GreenShift |
				uint32(c.B)*uint32(f.BlueMax)/255<<f.BlueShift | unused
			f.put(px[:n], v)
			dst = append(dst, px[:n]...)
		}
	}
	return dst
}

// decode reads the raw encoding of a w x h rectangle in format f into img
// at (x0, y0).
func (f PixelFormat) decode(img *image.RGBA, x0, y0, w, h int, b []byte) {
	n := f.bytesPerPixel()
	for y := range h {
		for x := range w {
			v := f.get(b[(y*w+x)*n:][:n])
			img.Pix[img.PixOffset(x0+x, y0+y)+0] = channel(v, f.RedShift, f.RedMax)
			img.Pix[img.PixOffset(x0+x, y0+y)+1] = channel(v, f.GreenShift, f.GreenMax)
			img.Pix[img.PixOffset(x0+x, y0+y)+2] = channel(v, f.BlueShift, f.BlueMax)
			img.Pix[img.PixOffset(x0+x, y0+y)+3] = 0xff
		}
	}
}

func channel(v uint32, shift uint8, maxV uint16) byte {
	if maxV == 0 {
		return 0
	}
	return byte((v >> shift & uint32(maxV)) * 255 / uint32(maxV))
}

func (f PixelFormat) put(b []byte, v uint32) {
	switch {
	case len(b) == 1:
		b[0] = byte(v)
	case len(b) == 2 && f.BigEndian:
		binary.BigEndian.PutUint16(b, uint16(v))
	case len(b) == 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case f.BigEndian:
		binary.BigEndian.PutUint32(b, v)
	default:
		binary.LittleEndian.PutUint32(b, v)
	}
}

func (f PixelFormat) get(b []byte) uint32 {
	switch {
	case len(b) == 1:
		return uint32(b[0])
	case len(b) == 2 && f.BigEndian:
		return uint32(binary.BigEndian.Uint16(b))
	case len(b) == 2:
		return uint32(binary.LittleEndian.Uint16(b))
	case f.BigEndian:
		return binary.BigEndian.Uint32(b)
	default:
		return binary.LittleEndian.Uint32(b)
	}
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}
