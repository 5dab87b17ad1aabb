package sim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/types"
)

// download fetches url into path atomically (temporary file, then rename)
// and returns the size and sha256 of what it wrote.
func (s *Simulator) download(ctx context.Context, url, path string) (int64, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", fmt.Errorf("GET %s: %w", url, err)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, "", fmt.Errorf("GET %s: HTTP %s", url, resp.Status)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return 0, "", fmt.Errorf("image dir: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".disk.img.*")
	if err != nil {
		return 0, "", fmt.Errorf("image temp file: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), resp.Body)
	if err != nil {
		tmp.Close()
		return n, "", fmt.Errorf("GET %s: after %d bytes: %w", url, n, err)
	}
	if err := tmp.Close(); err != nil {
		return n, "", fmt.Errorf("write image: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return n, "", fmt.Errorf("write image: %w", err)
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// importBusy reports whether the pod's import is running or done.
func (s *Simulator) importBusy(uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, running := s.downloads[uid]
	return running || s.finished[uid]
}

func (s *Simulator) cancelDownload(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cancel, ok := s.downloads[uid]; ok {
		cancel()
		delete(s.downloads, uid)
	}
}

// once reports whether uid was not yet in set, and adds it.
func (s *Simulator) once(set map[types.UID]bool, uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if set[uid] {
		return false
	}
	set[uid] = true
	return true
}

// forgetPod aborts a deleted pod's download and drops what is remembered
// about it.
func (s *Simulator) forgetPod(obj any) {
	pod := asPod(obj)
	if pod == nil {
		return
	}
	s.cancelDownload(pod.UID)
	s.mu.Lock()
	delete(s.finished, pod.UID)
	delete(s.refused, pod.UID)
	delete(s.missingPVC, pod.UID)
	s.mu.Unlock()
}
