package download

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// Limits bound what an import writes.
type Limits struct {
	// MaxBytes refuses a larger image with a [*TooLargeError]; <= 0: no limit.
	MaxBytes int64
	// RoomBytes is the largest image the destination was sized for
	// ([ClaimRoom] of its PVC); a larger one (up to MaxBytes) is answered
	// with a [*NeedRoomError] carrying its size, so the PVC can be
	// re-created larger. <= 0: no such bound.
	RoomBytes int64
}

// keep is how many bytes may be written to the destination; -1: no bound.
func (l Limits) keep() int64 {
	switch {
	case l.RoomBytes > 0 && (l.MaxBytes <= 0 || l.RoomBytes < l.MaxBytes):
		return l.RoomBytes
	case l.MaxBytes > 0:
		return l.MaxBytes
	}
	return -1
}

// TooLargeError reports an image above the maximum image size.
type TooLargeError struct {
	Bytes     int64 // the announced size, or how much was read before giving up
	Announced bool  // Bytes is the server's Content-Length
	Max       int64
}

func (e *TooLargeError) Error() string {
	if e.Announced {
		return fmt.Sprintf("image is %d bytes (%s), more than the maximum image size %s",
			e.Bytes, FormatBytes(e.Bytes), FormatBytes(e.Max))
	}
	return fmt.Sprintf("image is more than the maximum image size %s (stopped after %d bytes)",
		FormatBytes(e.Max), e.Bytes)
}

// NeedRoomError reports an image that fits the maximum image size but not
// the PVC it was to be written into.
type NeedRoomError struct {
	Bytes int64 // the image's size
	Room  int64 // what the PVC holds
}

func (e *NeedRoomError) Error() string {
	return fmt.Sprintf("image is %d bytes, the PVC holds %d", e.Bytes, e.Room)
}

// Import downloads url with a GET and streams it into dest: into a temporary
// file in dest's directory, synced, then renamed, so dest is either the whole
// image or absent/previous, never a partial one. It asks for the identity
// encoding and refuses any other (the bytes on the wire are the bytes
// written, never a decompressed multiple of them), and stops at lim.
func Import(ctx context.Context, client *http.Client, url, dest string, lim Limits) (ImportResult, error) {
	return importReporting(ctx, client, url, dest, lim, nil)
}

// importReporting is [Import] calling progress (if set) with the bytes
// written so far and the announced size (-1: unknown) as it writes.
func importReporting(ctx context.Context, client *http.Client, url, dest string, lim Limits, progress func(written, total int64)) (ImportResult, error) {
	res, _, err := importValidated(ctx, client, url, dest, lim, progress)
	return res, err
}

// importValidated is [importReporting] also returning what the server said
// about the bytes it sent (ETag, Last-Modified, Content-Length): the image
// cache records them to revalidate against.
func importValidated(ctx context.Context, client *http.Client, url, dest string, lim Limits, progress func(written, total int64)) (ImportResult, Validators, error) {
	var v Validators
	if err := ValidateURL(url); err != nil {
		return ImportResult{}, v, err
	}
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return ImportResult{}, v, fmt.Errorf("request %s: %w", url, err)
	}
	// An explicit Accept-Encoding also turns off net/http's transparent
	// gzip: a 200 KiB gzip body is never inflated into 200 MiB.
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := client.Do(req)
	if err != nil {
		return ImportResult{}, v, fmt.Errorf("GET %s: %w", url, redactDoErr(err))
	}
	defer resp.Body.Close()
	v = validatorsOf(resp)
	if resp.StatusCode != http.StatusOK {
		return ImportResult{}, v, &HTTPStatusError{URL: url, Status: resp.Status, Code: resp.StatusCode}
	}
	if ce := resp.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return ImportResult{}, v, fmt.Errorf("GET %s: the server sent Content-Encoding %q; the importer asks for identity and does not decompress", url, ce)
	}
	if err := checkAnnounced(resp.ContentLength, lim); err != nil {
		return ImportResult{}, v, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".part-*")
	if err != nil {
		return ImportResult{}, v, fmt.Errorf("create temporary file: %w", err)
	}
	keep := false
	defer func() {
		if !keep {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	h := newPipeHash(sha256.New())
	defer h.Close()
	w := io.MultiWriter(&writeBehind{f: tmp}, h)
	if progress != nil {
		w = &progressWriter{w: w, total: resp.ContentLength, report: progress}
	}
	n, err := copyLimited(w, resp.Body, lim)
	if err != nil {
		var tl *TooLargeError
		var nr *NeedRoomError
		if errors.As(err, &tl) || errors.As(err, &nr) {
			return ImportResult{}, v, err
		}
		return ImportResult{}, v, fmt.Errorf("GET %s: after %d bytes: %w", url, n, err)
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return ImportResult{}, v, fmt.Errorf("GET %s: got %d of %d bytes", url, n, resp.ContentLength)
	}
	if n == 0 {
		return ImportResult{}, v, fmt.Errorf("GET %s: empty image", url)
	}
	if err := tmp.Sync(); err != nil {
		return ImportResult{}, v, fmt.Errorf("sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return ImportResult{}, v, fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return ImportResult{}, v, fmt.Errorf("chmod %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return ImportResult{}, v, fmt.Errorf("rename to %s: %w", dest, err)
	}
	keep = true
	return ImportResult{Bytes: n, SHA256: hex.EncodeToString(h.Sum())}, v, nil
}

// checkAnnounced refuses a Content-Length (-1: unknown) above the limits
// before a byte is read.
func checkAnnounced(length int64, lim Limits) error {
	switch {
	case length < 0:
		return nil
	case lim.MaxBytes > 0 && length > lim.MaxBytes:
		return &TooLargeError{Bytes: length, Announced: true, Max: lim.MaxBytes}
	case lim.RoomBytes > 0 && length > lim.RoomBytes:
		return &NeedRoomError{Bytes: length, Room: lim.RoomBytes}
	}
	return nil
}

// copyLimited copies src to dst up to lim. Past the room (but within the
// maximum) it reads on without writing, to learn the image's real size for
// a [*NeedRoomError]; past the maximum it stops with a [*TooLargeError].
func copyLimited(dst io.Writer, src io.Reader, lim Limits) (int64, error) {
	keep := lim.keep()
	buf := make([]byte, copyBufferSize)
	if keep < 0 {
		return io.CopyBuffer(dst, src, buf)
	}
	n, err := io.CopyBuffer(dst, io.LimitReader(src, keep+1), buf)
	if err != nil || n <= keep {
		return n, err
	}
	if lim.MaxBytes > 0 && keep >= lim.MaxBytes {
		return n, &TooLargeError{Bytes: n, Max: lim.MaxBytes}
	}
	// Over the room: count the rest (up to just past the maximum).
	rest := io.Reader(src)
	if lim.MaxBytes > 0 {
		rest = io.LimitReader(src, lim.MaxBytes+1-n)
	}
	more, err := io.Copy(io.Discard, rest)
	total := n + more
	switch {
	case err != nil:
		return total, err
	case lim.MaxBytes > 0 && total > lim.MaxBytes:
		return total, &TooLargeError{Bytes: total, Max: lim.MaxBytes}
	}
	return total, &NeedRoomError{Bytes: total, Room: lim.RoomBytes}
}

// progressWriter reports the bytes written through it.
type progressWriter struct {
	w       io.Writer
	written int64
	total   int64
	report  func(written, total int64)
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.written += int64(n)
	p.report(p.written, p.total)
	return n, err
}
