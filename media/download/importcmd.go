package download

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// ImportResult is what a finished import reports; the import command writes
// it as JSON into the container's termination message. NeedBytes is set
// instead when the image did not fit the PVC (a [*NeedRoomError]).
type ImportResult struct {
	Bytes     int64  `json:"bytes,omitempty"`
	SHA256    string `json:"sha256,omitempty"`
	NeedBytes int64  `json:"needBytes,omitempty"`
	// FromCache: the image was copied from the image cache, not downloaded.
	FromCache bool `json:"fromCache,omitempty"`
	// Validators are what the server said about the image's bytes (an
	// import with --head-only reports only these).
	Validators *Validators `json:"validators,omitempty"`
}

// ParseImportResult decodes a termination message written by an import
// that succeeded (or checked the image: --head-only) or needs a larger
// PVC; ok is false when msg is not one.
func ParseImportResult(msg string) (ImportResult, bool) {
	var r ImportResult
	if err := json.Unmarshal([]byte(strings.TrimSpace(msg)), &r); err != nil || (r.Bytes <= 0 && r.NeedBytes <= 0 && r.Validators == nil) {
		return ImportResult{}, false
	}
	return r, true
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
// it exists). It prints progress lines ([FormatProgress]) while it
// downloads, then the [TerminationMessage], which it also writes into the
// termination log, and returns the error. The flags are declared on fs, the caller's: its
// name, output and Usage are what --help and a flag error print.
func RunImport(ctx context.Context, fs *flag.FlagSet, args []string, stdout io.Writer) error {
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
		report, stop := PrintProgress(stdout) // progress lines (importprogress.go)
		req.Progress = report
		res, err = req.Run(ctx)
		stop()
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
