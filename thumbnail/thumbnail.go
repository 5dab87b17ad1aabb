package thumbnail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/redfish-bridge/redfish-bridge/system"
	"github.com/redfish-bridge/redfish-bridge/virtapi"
)

// TTL is how long a System's thumbnail (or the failure to take it) is
// served from the cache before virt-api is asked again.
const TTL = 5 * time.Second

// MaxPixels bounds a thumbnail's width times height: a larger image is
// refused (a 4K screen is 8.3 Mpx).
const MaxPixels = 4096 * 4096

// maxEntries bounds the cache; past it, expired entries are dropped and,
// if none expired, the new one is not kept.
const maxEntries = 1024

// ErrNotRunning means the System has no running VMI, so no screen
// (virtapi.ErrNoScreen).
var ErrNotRunning = errors.New("the System is not running: it has no screen")

// ErrNotPNG means the screenshot read is not a PNG of at most MaxPixels.
var ErrNotPNG = errors.New("screenshot is not a PNG of a bounded size")

// Screenshots takes the PNG of a running System's screen
// (virtapi.Client).
type Screenshots interface {
	Screenshot(ctx context.Context, key system.Key) ([]byte, error)
}

// Cache serves thumbnails, one screenshot per System per [TTL]: callers
// asking for the same System while one is taken wait for it. Safe for
// concurrent use.
type Cache struct {
	src Screenshots
	now func() time.Time

	mu      sync.Mutex
	entries map[system.Key]*entry
}

// entry is one System's screenshot: done closes when img and err are set.
type entry struct {
	done    chan struct{}
	img     []byte
	err     error
	expires time.Time
}

// New returns a Cache over src.
func New(src Screenshots) *Cache {
	return &Cache{src: src, now: time.Now, entries: map[system.Key]*entry{}}
}

// Thumbnail returns the PNG of System key's screen, at most [TTL] old. Its
// error wraps [ErrNotRunning], [ErrNotPNG] or the screenshot's.
func (c *Cache) Thumbnail(ctx context.Context, key system.Key) ([]byte, error) {
	c.mu.Lock()
	e, ok := c.entries[key]
	if ok && e.expires.IsZero() || ok && c.now().Before(e.expires) {
		c.mu.Unlock()
		select {
		case <-e.done:
			return e.img, e.err
		case <-ctx.Done():
			return nil, fmt.Errorf("thumbnail of %s: %w", key, ctx.Err())
		}
	}
	e = &entry{done: make(chan struct{})}
	c.storeLocked(key, e)
	c.mu.Unlock()

	// The screenshot is taken for every waiter: one caller's end must not
	// fail the others.
	img, err := c.src.Screenshot(context.WithoutCancel(ctx), key)
	switch {
	case errors.Is(err, virtapi.ErrNoScreen), apierrors.IsBadRequest(err), apierrors.IsNotFound(err):
		err = fmt.Errorf("%w: %w", ErrNotRunning, err)
	case err == nil:
		err = checkPNG(img)
	}
	if err != nil {
		img, err = nil, fmt.Errorf("thumbnail of %s: %w", key, err)
	}
	c.mu.Lock()
	e.img, e.err, e.expires = img, err, c.now().Add(TTL)
	c.mu.Unlock()
	close(e.done)
	return img, err
}

// storeLocked keeps e for key, within maxEntries.
func (c *Cache) storeLocked(key system.Key, e *entry) {
	if len(c.entries) >= maxEntries {
		now := c.now()
		for k, old := range c.entries {
			if !old.expires.IsZero() && !now.Before(old.expires) {
				delete(c.entries, k)
			}
		}
	}
	if len(c.entries) < maxEntries {
		c.entries[key] = e
	}
}

// checkPNG accepts a PNG of at most [MaxPixels].
func checkPNG(img []byte) error {
	cfg, err := png.DecodeConfig(bytes.NewReader(img))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotPNG, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > MaxPixels {
		return fmt.Errorf("%w: %dx%d", ErrNotPNG, cfg.Width, cfg.Height)
	}
	return nil
}
