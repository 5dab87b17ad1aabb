package media

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// ImportResult is what a finished import reports; the import command writes
// it as JSON into the container's termination message.
type ImportResult struct {
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// ParseImportResult decodes a termination message written by a successful
// import; ok is false when msg is not one.
func ParseImportResult(msg string) (ImportResult, bool) {
	var r ImportResult
	if err := json.Unmarshal([]byte(strings.TrimSpace(msg)), &r); err != nil || r.Bytes <= 0 {
		return ImportResult{}, false
	}
	return r, true
}

// Import downloads url with a GET and streams it into dest: into a temporary
// file in dest's directory, synced, then renamed, so dest is either the whole
// image or absent/previous, never a partial one.
func Import(ctx context.Context, client *http.Client, url, dest string) (ImportResult, error) {
	if err := ValidateURL(url); err != nil {
		return ImportResult{}, err
	}
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return ImportResult{}, fmt.Errorf("request %s: %w", url, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return ImportResult{}, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ImportResult{}, &HTTPStatusError{URL: url, Status: resp.Status, Code: resp.StatusCode}
	}
	tmp, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".part-*")
	if err != nil {
		return ImportResult{}, fmt.Errorf("create temporary file: %w", err)
	}
	keep := false
	defer func() {
		if !keep {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), resp.Body)
	if err != nil {
		return ImportResult{}, fmt.Errorf("GET %s: after %d bytes: %w", url, n, err)
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return ImportResult{}, fmt.Errorf("GET %s: got %d of %d bytes", url, n, resp.ContentLength)
	}
	if n == 0 {
		return ImportResult{}, fmt.Errorf("GET %s: empty image", url)
	}
	if err := tmp.Sync(); err != nil {
		return ImportResult{}, fmt.Errorf("sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return ImportResult{}, fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return ImportResult{}, fmt.Errorf("chmod %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return ImportResult{}, fmt.Errorf("rename to %s: %w", dest, err)
	}
	keep = true
	return ImportResult{Bytes: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// DefaultTerminationLog is where Kubernetes reads a container's termination
// message.
const DefaultTerminationLog = "/dev/termination-log"

// maxTerminationMessage is the kubelet's limit for one container.
const maxTerminationMessage = 4096

// RunImport is the `redfish-bridge import` subcommand: flags --url, --dest,
// --timeout (default 1h), --addr-policy (an [AddrPolicy], checked on every
// connection), --ca-file, --insecure-skip-verify, --credentials-dir (see
// [ImportRequest]) and --termination-log (default /dev/termination-log when
// it exists). It writes the [TerminationMessage] into the termination log
// and returns the error.
func RunImport(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stdout)
	done := importFlags(fs)
	termLog := fs.String("termination-log", "", "file for the termination message (default "+DefaultTerminationLog+" when present)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	if *termLog == "" {
		if _, err := os.Stat(DefaultTerminationLog); err == nil {
			*termLog = DefaultTerminationLog
		}
	}
	req, err := done()
	var res ImportResult
	if err != nil {
		err = fmt.Errorf("import: %w", err)
	} else {
		res, err = req.Run(ctx)
	}
	msg := TerminationMessage(res, err)
	fmt.Fprintln(stdout, msg)
	if *termLog != "" {
		if werr := os.WriteFile(*termLog, []byte(msg), 0o644); werr != nil {
			err = errors.Join(err, fmt.Errorf("write termination message: %w", werr))
		}
	}
	return err
}
