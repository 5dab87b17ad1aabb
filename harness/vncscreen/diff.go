package vncscreen

import (
	"fmt"
	"image"
)

// Diff describes the first pixel of r whose colour (red, green, blue)
// differs between got and want, or r reaching outside either image; ""
// when they agree. Tests compare a frame or a browser's canvas with
// [Render] through it.
func Diff(got, want *image.RGBA, r image.Rectangle) string {
	if !r.In(got.Bounds()) || !r.In(want.Bounds()) {
		return fmt.Sprintf("%v is not inside both images (%v, want %v)", r, got.Bounds(), want.Bounds())
	}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			g, w := got.RGBAAt(x, y), want.RGBAAt(x, y)
			if g.R != w.R || g.G != w.G || g.B != w.B {
				return fmt.Sprintf("pixel (%d,%d) is %v, want %v", x, y, g, w)
			}
		}
	}
	return ""
}
