package download

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// ImportRequest is one import, as the import pod's arguments carry it
// ([ImportRequest.Args] and [ParseImportArgs] are inverses): the import
// pods and the simulator that plays them run the same code.
type ImportRequest struct {
	URL  string
	Dest string
	// Timeout gives up after this long; 0: never.
	Timeout time.Duration
	// Policy is checked on every connection.
	Policy AddrPolicy
	// CAFile is a PEM bundle trusted besides the system roots (the
	// bridge-wide CA bundle and the slot's Certificates).
	CAFile string
	// SkipVerify turns TLS certificate verification off (the slot's
	// VerifyCertificate was false).
	SkipVerify bool
	// CredentialsDir holds the files [CredentialUserKey] and
	// [CredentialPasswordKey] (the mounted import Secret): HTTP Basic
	// credentials for the image URL's host only.
	CredentialsDir string
	// MaxBytes is the maximum image size: a larger image fails the import
	// ([*TooLargeError]); 0: no limit.
	MaxBytes int64
	// ClaimSize is the PVC's requested size: an image larger than
	// [ClaimRoom] of it is not written but reported with its size
	// ([*NeedRoomError]); zero: no such bound.
	ClaimSize resource.Quantity
	// CacheDir, if set, is the mounted image cache entry of the insert's
	// key: the image is revalidated, downloaded into it only when it is
	// empty or changed, and copied from it into Dest (cachefill.go).
	CacheDir string
	// CacheSHA256, with CacheDir, is the entry image's digest as the
	// bridge recorded it (where no tenant writes): an entry whose
	// meta.json says otherwise was written by someone else and is
	// downloaded again, never copied (cachefill.go).
	CacheSHA256 string
	// CacheRefill, with CacheDir, downloads into the entry whatever it
	// holds: the bridge has no record of the entry (it did not create it,
	// or lost the record), so its content proves nothing.
	CacheRefill bool
	// HeadOnly sends a HEAD instead of the download and reports the
	// server's validators ([ImportResult].Validators; media/cdiimport/cachecheck.go): the
	// CDI image cache's revalidation. Dest is not written.
	HeadOnly bool
	// RoomBytes, if > 0, is what the destination holds, instead of
	// [ClaimRoom] of ClaimSize; not an argument (the simulator's CDI sets
	// it: CDI's PVCs hold their whole request).
	RoomBytes int64 `json:"-"`
	// Progress, if set, is called as the image is written with the bytes
	// so far and the announced size (-1: unknown); not an argument (the
	// simulator's CDI reports it).
	Progress func(written, total int64) `json:"-"`
}

// Args is the request as `redfish-bridge import` arguments (without the
// subcommand). Only file paths travel here, never a certificate or a
// credential.
func (r ImportRequest) Args() []string {
	args := []string{"--url=" + r.URL, "--dest=" + r.Dest}
	if pol := r.Policy.String(); pol != "" {
		args = append(args, "--addr-policy="+pol)
	}
	if r.Timeout > 0 {
		args = append(args, "--timeout="+r.Timeout.String())
	}
	if r.CAFile != "" {
		args = append(args, "--ca-file="+r.CAFile)
	}
	if r.SkipVerify {
		args = append(args, "--insecure-skip-verify")
	}
	if r.CredentialsDir != "" {
		args = append(args, "--credentials-dir="+r.CredentialsDir)
	}
	if r.MaxBytes > 0 {
		args = append(args, "--max-size="+FormatBytes(r.MaxBytes))
	}
	if !r.ClaimSize.IsZero() {
		args = append(args, "--claim-size="+r.ClaimSize.String())
	}
	if r.CacheDir != "" {
		args = append(args, "--cache-dir="+r.CacheDir)
	}
	if r.CacheSHA256 != "" {
		args = append(args, "--cache-sha256="+r.CacheSHA256)
	}
	if r.CacheRefill {
		args = append(args, "--cache-refill")
	}
	if r.HeadOnly {
		args = append(args, "--head-only")
	}
	return args
}

// importFlags declares the import flags on fs; done turns them into a
// request once fs is parsed.
func importFlags(fs *flag.FlagSet) (done func() (ImportRequest, error)) {
	var r ImportRequest
	fs.StringVar(&r.URL, "url", "", "image URL (http or https)")
	fs.StringVar(&r.Dest, "dest", "", "destination file")
	fs.DurationVar(&r.Timeout, "timeout", time.Hour, "give up after this long")
	policy := fs.String("addr-policy", "", "address policy for the download (see download.ParseAddrPolicy)")
	fs.StringVar(&r.CAFile, "ca-file", "", "PEM bundle trusted besides the system roots")
	fs.BoolVar(&r.SkipVerify, "insecure-skip-verify", false, "do not verify the image server's TLS certificate")
	fs.StringVar(&r.CredentialsDir, "credentials-dir", "", "directory with files "+CredentialUserKey+" and "+CredentialPasswordKey+" (HTTP Basic)")
	maxSize := fs.String("max-size", FormatBytes(DefaultMaxImageSize), "refuse a larger image")
	fs.StringVar(&r.CacheDir, "cache-dir", "", "image cache entry to revalidate, fill and copy from (shared by the imports of one image)")
	fs.StringVar(&r.CacheSHA256, "cache-sha256", "", "the cache entry's image digest as the bridge recorded it: an entry recording another is downloaded again")
	fs.BoolVar(&r.CacheRefill, "cache-refill", false, "download into the cache entry whatever it holds (the bridge has no record of it)")
	fs.BoolVar(&r.HeadOnly, "head-only", false, "send a HEAD and report the server's ETag, Last-Modified and Content-Length; write nothing")
	claimSize := fs.String("claim-size", "", "size of the destination PVC; a larger image is reported with its size, not written")
	return func() (ImportRequest, error) {
		if r.URL == "" || (r.Dest == "" && !r.HeadOnly) {
			return r, errors.New("--url and --dest are required")
		}
		var err error
		if r.Policy, err = ParseAddrPolicy(*policy); err != nil {
			return r, err
		}
		if r.MaxBytes, err = ParseImageSize(*maxSize); err != nil {
			return r, fmt.Errorf("--max-size: %w", err)
		}
		if *claimSize != "" {
			if r.ClaimSize, err = resource.ParseQuantity(*claimSize); err != nil {
				return r, fmt.Errorf("--claim-size: %w", err)
			}
		}
		return r, nil
	}
}

// ParseImportArgs reads `redfish-bridge import` arguments (see [RunImport]).
func ParseImportArgs(args []string) (ImportRequest, error) {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	done := importFlags(fs)
	if err := fs.Parse(args); err != nil {
		return ImportRequest{}, fmt.Errorf("import: %w", err)
	}
	if fs.NArg() > 0 {
		return ImportRequest{}, fmt.Errorf("import: unexpected arguments %q", fs.Args())
	}
	r, err := done()
	if err != nil {
		return ImportRequest{}, fmt.Errorf("import: %w", err)
	}
	return r, nil
}

// Run performs the import under the request's policy, trust, credentials
// and timeout.
func (r ImportRequest) Run(ctx context.Context) (ImportResult, error) {
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.Timeout)
		defer cancel()
	}
	if err := r.Policy.ValidateURL(r.URL); err != nil {
		return ImportResult{}, fmt.Errorf("import: %w", err)
	}
	client, err := r.Client()
	if err != nil {
		return ImportResult{}, fmt.Errorf("import: %w", err)
	}
	lim := Limits{MaxBytes: r.MaxBytes}
	if !r.ClaimSize.IsZero() {
		// A PVC too small for any image still gets a room of one byte: the
		// image is reported with its size instead of written.
		lim.RoomBytes = max(ClaimRoom(r.ClaimSize), 1)
	}
	if r.RoomBytes > 0 {
		lim.RoomBytes = r.RoomBytes
	}
	var res ImportResult
	switch {
	case r.HeadOnly:
		res, err = r.head(ctx, client)
	case r.CacheDir != "":
		res, err = r.runCached(ctx, client, lim)
	default:
		res, err = importReporting(ctx, client, r.URL, r.Dest, lim, r.Progress)
	}
	var nr *NeedRoomError
	switch {
	case err == nil, errors.As(err, &nr):
		return res, err
	case errors.Is(err, context.DeadlineExceeded):
		return ImportResult{}, fmt.Errorf("import timed out after %s: %w", r.Timeout, err)
	}
	return ImportResult{}, fmt.Errorf("import: %w%s", err, r.hint(err))
}

// TerminationMessage is what an import with this outcome leaves for the
// reconciler: the [ImportResult] JSON (with only NeedBytes for a
// [*NeedRoomError]), or the error text, cut to the kubelet's limit.
func TerminationMessage(res ImportResult, err error) string {
	var nr *NeedRoomError
	msg := ""
	switch {
	case errors.As(err, &nr):
		b, _ := json.Marshal(ImportResult{NeedBytes: nr.Bytes})
		msg = string(b)
	case err != nil:
		msg = err.Error()
	default:
		b, _ := json.Marshal(res)
		msg = string(b)
	}
	if len(msg) > maxTerminationMessage {
		msg = msg[:maxTerminationMessage]
	}
	return msg
}
