package browser

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"strings"

	"github.com/chromedp/chromedp"
)

// CanvasDrawn is a [WaitFor] expression: the canvas selector names has a
// size and every pixel drawn (noVNC draws a raw update line by line as it
// arrives: an undrawn pixel is transparent).
func CanvasDrawn(selector string) string {
	return fmt.Sprintf(`(c => { if (!c || !c.width) return false;
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  for (let i = 3; i < d.length; i += 4) if (d[i] !== 255) return false;
  return true; })(document.querySelector(%q))`, selector)
}

// Canvas reads the canvas selector names in b's page as an image.
func Canvas(ctx context.Context, b *Browser, selector string) (*image.RGBA, error) {
	url, err := Run(ctx, b, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q).toDataURL('image/png')`, selector)))
	if err != nil {
		return nil, fmt.Errorf("read canvas %s: %w", selector, err)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(url, "data:image/png;base64,"))
	if err != nil {
		return nil, fmt.Errorf("canvas %s: %w", selector, err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("canvas %s: %w", selector, err)
	}
	out := image.NewRGBA(img.Bounds())
	draw.Draw(out, out.Bounds(), img, img.Bounds().Min, draw.Src)
	return out, nil
}
