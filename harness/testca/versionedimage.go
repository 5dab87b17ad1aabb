package testca

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// VersionedImage serves one replaceable image at every path over plain
// HTTP, with an ETag (its sha256) and Last-Modified (a second's
// resolution: a change within it is told by the ETag), answering HEAD
// and conditional requests as net/http does. It counts the body bytes it
// sends and the HEADs it answers, for tests of the image cache's
// revalidation.
type VersionedImage struct {
	*httptest.Server
	// Served counts the body bytes sent, HEADs the HEAD requests.
	Served, HEADs atomic.Int64

	mu           sync.Mutex
	data         []byte
	mod          time.Time
	noValidators bool
	holds        map[string]chan struct{}
}

// NewVersionedImage starts the server, closed at the test's end; it
// serves an empty image until [VersionedImage.Set].
func NewVersionedImage(t testing.TB) *VersionedImage {
	t.Helper()
	im := &VersionedImage{}
	im.Server = httptest.NewServer(http.HandlerFunc(im.serve))
	t.Cleanup(im.Close)
	return im
}

// Set serves data from now on and returns its sha256.
func (im *VersionedImage) Set(data []byte) [32]byte {
	im.mu.Lock()
	defer im.mu.Unlock()
	im.data, im.mod = data, time.Now().Truncate(time.Second)
	return sha256.Sum256(data)
}

// SetFresh serves size bytes no image served before held and returns
// their sha256.
func (im *VersionedImage) SetFresh(size int) [32]byte {
	unit := fmt.Appendf(nil, "fleet|%d|", time.Now().UnixNano())
	return im.Set(bytes.Repeat(unit, size/len(unit)+1)[:size])
}

// Sum is the sha256 of the image served now.
func (im *VersionedImage) Sum() [32]byte {
	im.mu.Lock()
	defer im.mu.Unlock()
	return sha256.Sum256(im.data)
}

// WithoutValidators makes the server send neither ETag nor Last-Modified.
func (im *VersionedImage) WithoutValidators() {
	im.mu.Lock()
	defer im.mu.Unlock()
	im.noValidators = true
}

// Hold makes the GETs of path wait until release is called (or the
// request ends).
func (im *VersionedImage) Hold(path string) (release func()) {
	ch := make(chan struct{})
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.holds == nil {
		im.holds = map[string]chan struct{}{}
	}
	im.holds[path] = ch
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

func (im *VersionedImage) serve(w http.ResponseWriter, r *http.Request) {
	im.mu.Lock()
	data, mod, noValidators, hold := im.data, im.mod, im.noValidators, im.holds[r.URL.Path]
	im.mu.Unlock()
	if r.Method == http.MethodHead {
		im.HEADs.Add(1)
	}
	if hold != nil && r.Method == http.MethodGet {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	if noValidators {
		mod = time.Time{}
	} else {
		sum := sha256.Sum256(data)
		w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:8])+`"`)
	}
	http.ServeContent(&countingWriter{ResponseWriter: w, n: &im.Served}, r, "image.iso", mod, bytes.NewReader(data))
}

// countingWriter counts the body bytes written through it.
type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n.Add(int64(n))
	return n, err
}
