package download

import (
	"context"
	"fmt"
	"net/http"
)

// The check pod's side of the CDI image cache (media/cdiimport/cachecdi.go is the
// bridge's): `redfish-bridge import --head-only` sends one HEAD to the
// image URL, under the same address policy and with the same trust as a
// download, and reports what the server says about the bytes (ETag,
// Last-Modified, Content-Length) in its termination message. It writes
// nothing.

// head asks the server what the bytes at r.URL are: validators with
// neither ETag nor Last-Modified when it gives none (or answers HEAD with
// 405 or 501): such an image is never served from the cache.
func (r ImportRequest) head(ctx context.Context, client *http.Client) (ImportResult, error) {
	if err := ValidateURL(r.URL); err != nil {
		return ImportResult{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, r.URL, nil)
	if err != nil {
		return ImportResult{}, fmt.Errorf("request %s: %w", r.URL, err)
	}
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := client.Do(req)
	if err != nil {
		return ImportResult{}, fmt.Errorf("HEAD %s: %w", r.URL, redactDoErr(err))
	}
	_ = resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		v := validatorsOf(resp)
		return ImportResult{Validators: &v}, nil
	case http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return ImportResult{Validators: &Validators{Length: -1}}, nil
	}
	return ImportResult{}, &HTTPStatusError{URL: r.URL, Status: resp.Status, Code: resp.StatusCode}
}
