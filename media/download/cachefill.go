package download

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// The import pod's side of the image cache (see cache.go for the bridge's):
// with --cache-dir the pod mounts the namespace's cache entry for the
// insert's key besides its slot's PVC. Under an exclusive lock on the
// entry it revalidates what the entry holds with a conditional HEAD (the
// slot's own trust and credentials), downloads into the entry only when
// the entry is empty or the server's validators differ, then copies the
// entry's image into the slot's PVC. Concurrent pods of one key wait on
// the lock: one download, the others revalidate and copy. A namespace
// user who mounts the entry can rewrite its image and meta.json alike, so
// the bridge passes the digest it recorded of the entry's last download
// (--cache-sha256; --cache-refill when it has none of an entry it did not
// just create): an entry recording another digest is downloaded again, and
// every copy is checked against the digest of the bytes it copies.

// Files of a cache entry.
const (
	cacheImage = "disk.img"
	cacheMeta  = "meta.json"
	cacheLock  = ".lock"
	// cacheFailed records the last download that failed (see [failure]).
	cacheFailed = "failed.json"
)

// cacheLockPoll is how often a pod waiting for a cache entry's lock tries again.
const cacheLockPoll = 50 * time.Millisecond

// Validators are what a server says about the bytes of a URL; equal
// validators mean the same bytes.
type Validators struct {
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"lastModified,omitempty"`
	// Length is the Content-Length; -1: not sent.
	Length int64 `json:"length"`
}

func validatorsOf(resp *http.Response) Validators {
	return Validators{ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified"), Length: resp.ContentLength}
}

// Usable says whether an entry filled under v can ever be revalidated: a
// server that sends neither ETag nor Last-Modified gives nothing to
// compare, and its image is never served from the cache.
func (v Validators) Usable() bool { return v.ETag != "" || v.LastModified != "" }

// same reports whether a HEAD's validators got describe the bytes recorded
// as want: every validator the entry recorded must be sent unchanged.
func (want Validators) same(got Validators) bool {
	return want.Usable() && got.ETag == want.ETag && got.LastModified == want.LastModified &&
		(got.Length < 0 || got.Length == want.Length)
}

// entryMeta is a cache entry's meta.json: what its disk.img is.
type entryMeta struct {
	URL        string     `json:"url"`
	Validators Validators `json:"validators"`
	Bytes      int64      `json:"bytes"`
	SHA256     string     `json:"sha256"`
}

// RevalidateCache is the image cache's revalidation, a test hook for
// both import methods: switched off only by the negative controls of the
// image cache's tests, the import pod's cache serves a stale entry's old
// bytes (here) and the CDI cache clones any entry of the key (package
// media).
var RevalidateCache = true

// cacheArrived is called when an import has read the entry's failure
// record, before it waits for the lock (a test hook).
var cacheArrived = func() {}

// runCached is [ImportRequest.Run]'s import through the cache entry in
// r.CacheDir: see the comment at the top of this file.
func (r ImportRequest) runCached(ctx context.Context, client *http.Client, lim Limits) (ImportResult, error) {
	// A download that fails while this import waits for the lock fails it
	// too, with the same error; one that failed before it came is retried.
	before := readFailure(r.CacheDir).Attempt
	cacheArrived()
	stopEcho := echoProgress(ctx, r.CacheDir, r.Progress) // the filler's progress while waiting (importprogress.go)
	unlock, err := lockEntry(ctx, r.CacheDir)
	stopEcho()
	if err != nil {
		return ImportResult{}, err
	}
	defer unlock()
	if f := readFailure(r.CacheDir); f.Attempt > before {
		return ImportResult{}, &SharedDownloadError{Message: f.Error}
	}
	meta, fresh, err := r.revalidate(ctx, client)
	if err != nil {
		return ImportResult{}, err
	}
	if fresh && (r.CacheRefill || (r.CacheSHA256 != "" && meta.SHA256 != r.CacheSHA256)) {
		// The PVC is writable by whoever may mount it in the namespace:
		// only the bridge's record says what it should hold.
		fresh = false
	}
	if !fresh {
		if meta, err = r.fill(ctx, client, lim); err != nil {
			return ImportResult{}, err
		}
	}
	src, err := os.Open(filepath.Join(r.CacheDir, cacheImage))
	if err != nil {
		return ImportResult{}, fmt.Errorf("image cache: %w", err)
	}
	defer src.Close()
	// The open file stays the bytes meta describes: a later fill renames a
	// new file over the entry's, it never writes into this one.
	unlock()
	res, err := copyImage(src, r.Dest, meta)
	res.FromCache = fresh
	return res, err
}

// revalidate reads the entry's meta.json and asks the server (HEAD, with
// If-None-Match and If-Modified-Since) whether the bytes are still those:
// fresh when it answers 304 Not Modified or the same validators.
func (r ImportRequest) revalidate(ctx context.Context, client *http.Client) (entryMeta, bool, error) {
	var meta entryMeta
	b, err := os.ReadFile(filepath.Join(r.CacheDir, cacheMeta))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return meta, false, nil
	case err != nil:
		return meta, false, fmt.Errorf("image cache: %w", err)
	}
	if err := json.Unmarshal(b, &meta); err != nil || meta.URL != r.URL || !meta.Validators.Usable() {
		return meta, false, nil // refilled
	}
	if !RevalidateCache {
		return meta, true, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, r.URL, nil)
	if err != nil {
		return meta, false, fmt.Errorf("request %s: %w", r.URL, err)
	}
	req.Header.Set("Accept-Encoding", "identity")
	if meta.Validators.ETag != "" {
		req.Header.Set("If-None-Match", meta.Validators.ETag)
	}
	if meta.Validators.LastModified != "" {
		req.Header.Set("If-Modified-Since", meta.Validators.LastModified)
	}
	resp, err := client.Do(req)
	if err != nil {
		return meta, false, fmt.Errorf("HEAD %s: %w", r.URL, redactDoErr(err))
	}
	_ = resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusNotModified:
		return meta, true, nil
	case http.StatusOK:
		return meta, meta.Validators.same(validatorsOf(resp)), nil
	case http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return meta, false, nil // no HEAD: the GET decides
	}
	return meta, false, &HTTPStatusError{URL: r.URL, Status: resp.Status, Code: resp.StatusCode}
}

// fill downloads the image into the entry: meta.json goes first, so an
// interrupted fill leaves an entry that the next pod fills again.
func (r ImportRequest) fill(ctx context.Context, client *http.Client, lim Limits) (entryMeta, error) {
	if err := os.Remove(filepath.Join(r.CacheDir, cacheMeta)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return entryMeta{}, fmt.Errorf("image cache: %w", err)
	}
	progress, stopRecord := recordProgress(r.CacheDir, r.Progress) // for the waiting imports (importprogress.go)
	res, v, err := importValidated(ctx, client, r.URL, filepath.Join(r.CacheDir, cacheImage), lim, progress)
	stopRecord()
	_ = os.Remove(filepath.Join(r.CacheDir, cacheProgress))
	if err != nil {
		// Shared with the waiting imports: what the server did, not this
		// import's end (its pod deleted: an eject must not fail the other
		// VMs' inserts) nor its PVC's room (theirs may be larger).
		var nr *NeedRoomError
		if ctx.Err() == nil && !errors.As(err, &nr) {
			if rerr := recordFailure(r.CacheDir, err.Error()+r.hint(err)); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
		return entryMeta{}, err
	}
	if err := os.Remove(filepath.Join(r.CacheDir, cacheFailed)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return entryMeta{}, fmt.Errorf("image cache: %w", err)
	}
	meta := entryMeta{URL: r.URL, Validators: v, Bytes: res.Bytes, SHA256: res.SHA256}
	b, err := json.Marshal(meta)
	if err != nil {
		return entryMeta{}, fmt.Errorf("image cache: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(r.CacheDir, cacheMeta), b); err != nil {
		return entryMeta{}, fmt.Errorf("image cache: %w", err)
	}
	return meta, nil
}

// copyImage copies the entry's image src into dest (a temporary file,
// synced, renamed) and checks it is the image meta describes.
func copyImage(src io.Reader, dest string, meta entryMeta) (ImportResult, error) {
	tmp, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".part-*")
	if err != nil {
		return ImportResult{}, fmt.Errorf("create temporary file: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename: nothing
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), src)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return ImportResult{}, fmt.Errorf("copy from the image cache after %d bytes: %w", n, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if n != meta.Bytes || sum != meta.SHA256 {
		return ImportResult{}, fmt.Errorf("image cache entry is corrupt: %d bytes sha256 %s, recorded %d bytes sha256 %s", n, sum, meta.Bytes, meta.SHA256)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return ImportResult{}, fmt.Errorf("chmod %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return ImportResult{}, fmt.Errorf("rename to %s: %w", dest, err)
	}
	return ImportResult{Bytes: n, SHA256: sum}, nil
}

// SharedDownloadError fails an import that waited for another import's
// download of the same image (same cache key), which failed: Message is
// that import's error.
type SharedDownloadError struct{ Message string }

func (e *SharedDownloadError) Error() string { return e.Message }

// failure is a cache entry's failed.json: the last download into it
// failed. Attempt counts the failures, so an import tells one that
// happened while it waited from one it came to retry.
type failure struct {
	Attempt int64  `json:"attempt"`
	Error   string `json:"error"`
}

// readFailure reads the entry's failed.json (zero when there is none or
// it cannot be read: the import then downloads itself).
func readFailure(dir string) failure {
	var f failure
	if b, err := os.ReadFile(filepath.Join(dir, cacheFailed)); err == nil {
		_ = json.Unmarshal(b, &f)
	}
	return f
}

// recordFailure records msg as the entry's last failed download.
func recordFailure(dir, msg string) error {
	b, merr := json.Marshal(failure{Attempt: readFailure(dir).Attempt + 1, Error: msg})
	if merr != nil {
		return fmt.Errorf("image cache: %w", merr)
	}
	if werr := writeFileAtomic(filepath.Join(dir, cacheFailed), b); werr != nil {
		return fmt.Errorf("image cache: %w", werr)
	}
	return nil
}

// writeFileAtomic writes b to name through a synced temporary file.
func writeFileAtomic(name string, b []byte) error {
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

// lockEntry takes the entry's exclusive lock, waiting (as long as ctx
// allows) while another pod holds it. unlock may be called more than once.
func lockEntry(ctx context.Context, dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, cacheLock), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("image cache lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close()
			return nil, fmt.Errorf("image cache lock: %w", err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("waiting for the image cache: %w", ctx.Err())
		case <-time.After(cacheLockPoll):
		}
	}
	done := false
	return func() {
		if !done {
			done = true
			_ = f.Close() // closing the file releases the lock
		}
	}, nil
}
