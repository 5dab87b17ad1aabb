package download

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestImportHeadOnly: `import --head-only` (the CDI image cache's check)
// sends one HEAD, never a GET, and reports the server's validators; a
// server without HEAD gives unusable validators (the insert is not
// cached); an error status fails the check; the address policy applies.
func TestImportHeadOnly(t *testing.T) {
	var gets int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodHead {
			gets++
		}
		switch r.URL.Path {
		case "/a.iso":
			w.Header().Set("ETag", `"v1"`)
			w.Header().Set("Last-Modified", "Sat, 05 Dec 2026 06:00:00 GMT")
			w.Header().Set("Content-Length", "12345")
		case "/nohead.iso":
			w.WriteHeader(http.StatusMethodNotAllowed)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name, path string
		policy     AddrPolicy
		want       *Validators
		wantErr    bool
		usable     bool
	}{
		{name: "validators", path: "/a.iso", want: &Validators{ETag: `"v1"`, LastModified: "Sat, 05 Dec 2026 06:00:00 GMT", Length: 12345}, usable: true},
		{name: "no HEAD: not cached", path: "/nohead.iso", want: &Validators{Length: -1}},
		{name: "404 fails", path: "/gone.iso", wantErr: true},
		{name: "address policy", path: "/a.iso", policy: AddrPolicy{DenyLoopback: true}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ImportRequest{URL: srv.URL + tc.path, HeadOnly: true, Policy: tc.policy}.Run(t.Context())
			if (err != nil) != tc.wantErr {
				t.Fatalf("Run: %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr {
				var se *HTTPStatusError
				if tc.path == "/gone.iso" && !errors.As(err, &se) {
					t.Errorf("error %v is no HTTPStatusError", err)
				}
				return
			}
			if diff := cmp.Diff(tc.want, res.Validators); diff != "" {
				t.Errorf("validators (-want +got):\n%s", diff)
			}
			if res.Validators.Usable() != tc.usable || res.Bytes != 0 {
				t.Errorf("result %+v: usable %v, want %v, and no bytes", res, res.Validators.Usable(), tc.usable)
			}
		})
	}
	if gets != 0 {
		t.Errorf("the check sent %d GETs", gets)
	}
}
