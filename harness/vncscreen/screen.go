package vncscreen

import (
	"context"
	"image"
	"image/color"
	"image/draw"
	"slices"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Width and Height are the size of every simulated screen, in pixels.
const (
	Width  = 640
	Height = 200
)

// Scale is how many screen pixels one pixel of the 7x13 font takes, so a
// name is legible in a screenshot and large enough to find in a canvas.
const Scale = 3

var (
	// Background is the screen's colour behind the text.
	Background = color.RGBA{R: 0x10, G: 0x20, B: 0x40, A: 0xff}
	// Foreground is the colour of the text.
	Foreground = color.RGBA{R: 0xf0, G: 0xf0, B: 0x60, A: 0xff}
)

// Key is one key event a Screen received: an X11 keysym (RFC 6143 7.5.4)
// and whether it was pressed (Down) or released.
type Key struct {
	Sym  uint32
	Down bool
}

// Screen is one VM's simulated screen. Its methods are safe for
// concurrent use; every connection served shows the same framebuffer.
type Screen struct {
	mu      sync.Mutex
	name    string
	state   string
	frame   *image.RGBA
	keys    []Key
	clicks  int
	clip    []string
	changed chan struct{} // closed and replaced on every change
}

// New returns the screen of the VM name, showing state.
func New(name, state string) *Screen {
	return &Screen{name: name, state: state, frame: Render(name, state), changed: make(chan struct{})}
}

// SetState changes the boot state the screen shows; connected clients
// with an update pending receive the new frame.
func (s *Screen) SetState(state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if state == s.state {
		return
	}
	s.state = state
	s.frame = Render(s.name, state)
	s.notifyLocked()
}

// State is the boot state the screen shows.
func (s *Screen) State() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Name is the VM name the screen shows.
func (s *Screen) Name() string { return s.name }

// Keys returns a copy of every key event received, in order.
func (s *Screen) Keys() []Key {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.keys)
}

// Clicks is how many pointer events with a button pressed were received.
func (s *Screen) Clicks() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clicks
}

// Clipboard returns the clipboard texts (ClientCutText) received, in order.
func (s *Screen) Clipboard() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.clip)
}

// WaitKey waits until a press of sym was received, or ctx ends.
func (s *Screen) WaitKey(ctx context.Context, sym uint32) error {
	for {
		s.mu.Lock()
		got := slices.Contains(s.keys, Key{Sym: sym, Down: true})
		changed := s.changed
		s.mu.Unlock()
		if got {
			return nil
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-changed:
		}
	}
}

// snapshot returns the current frame (never modified once made) and the
// channel closed at the next change.
func (s *Screen) snapshot() (*image.RGBA, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frame, s.changed
}

func (s *Screen) key(k Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = append(s.keys, k)
	s.notifyLocked()
}

func (s *Screen) pointer(buttons byte) {
	if buttons == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clicks++
	s.notifyLocked()
}

func (s *Screen) cutText(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clip = append(s.clip, text)
	s.notifyLocked()
}

func (s *Screen) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Render draws a screen's frame: the VM's name on the first line and its
// boot state on the second, in the 7x13 font at [Scale]. Tests compare a
// framebuffer read through the bridge against it.
func Render(name, state string) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, Width, Height))
	draw.Draw(img, img.Bounds(), image.NewUniform(Background), image.Point{}, draw.Src)
	drawLine(img, name, 16, 16)
	drawLine(img, state, 16, 16+TextHeight+16)
	return img
}

// TextHeight is the height of one line of text on the screen, in pixels.
const TextHeight = 13 * Scale

// TextBounds is where Render draws the VM's name: the rectangle a test
// compares.
func TextBounds(name string) image.Rectangle {
	w := font.MeasureString(basicfont.Face7x13, name).Ceil() * Scale
	return image.Rect(16, 16, min(16+w, Width), 16+TextHeight)
}

// drawLine draws text at 1:1 into a strip, then copies it into img at
// (x, y), each font pixel as a Scale x Scale square.
func drawLine(img *image.RGBA, text string, x, y int) {
	face := basicfont.Face7x13
	w := font.MeasureString(face, text).Ceil()
	if w == 0 {
		return
	}
	strip := image.NewRGBA(image.Rect(0, 0, w, 13))
	draw.Draw(strip, strip.Bounds(), image.NewUniform(Background), image.Point{}, draw.Src)
	d := font.Drawer{Dst: strip, Src: image.NewUniform(Foreground), Face: face, Dot: fixed.P(0, face.Ascent)}
	d.DrawString(text)
	for sy := range 13 {
		for sx := range w {
			c := strip.RGBAAt(sx, sy)
			for dy := range Scale {
				for dx := range Scale {
					px, py := x+sx*Scale+dx, y+sy*Scale+dy
					if px < Width && py < Height {
						img.SetRGBA(px, py, c)
					}
				}
			}
		}
	}
}
