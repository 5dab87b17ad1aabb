package download

import (
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestAddrPolicyCheck(t *testing.T) {
	strict := AddrPolicy{DenyLoopback: true, DenyPrivate: true,
		Deny:  []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")},
		Allow: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("169.254.0.0/16")}}
	tests := []struct {
		addr           string
		dflt, strictly string // "" allowed, else the reason
	}{
		{"169.254.169.254", "cloud metadata address", "cloud metadata address"},
		{"::ffff:169.254.169.254", "cloud metadata address", "cloud metadata address"},
		{"fd00:ec2::254", "cloud metadata address", "cloud metadata address"},
		{"100.100.100.200", "cloud metadata address", "cloud metadata address"},
		{"169.254.1.1", "link-local address", ""}, // allowed explicitly
		{"fe80::1", "link-local address", "link-local address"},
		{"0.0.0.0", "unspecified address", "unspecified address"},
		{"::", "unspecified address", "unspecified address"},
		{"224.0.0.1", "multicast address", "multicast address"},
		{"ff02::1", "multicast address", "multicast address"},
		{"255.255.255.255", "broadcast address", "broadcast address"},
		{"127.0.0.1", "", "loopback address"},
		{"::1", "", "loopback address"},
		{"10.0.0.5", "", "private address"},
		{"10.1.2.3", "", ""},
		{"172.16.0.1", "", "private address"},
		{"192.168.1.1", "", "private address"},
		{"100.64.0.1", "", "private address"},
		{"fd12::1", "", "private address"},
		{"203.0.113.9", "", "address in refused range 203.0.113.0/24"},
		{"8.8.8.8", "", ""},
		{"2001:4860::8888", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			a := netip.MustParseAddr(tt.addr)
			got := []string{AddrPolicy{}.Check(a), strict.Check(a)}
			if diff := cmp.Diff([]string{tt.dflt, tt.strictly}, got); diff != "" {
				t.Errorf("Check(%s) default, strict (-want +got):\n%s", tt.addr, diff)
			}
		})
	}
}

func TestParseAddrPolicy(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{in: "", want: ""},
		{in: "deny-loopback, deny-private", want: "deny-loopback,deny-private"},
		{in: "deny=10.0.0.1/8,allow=fd00::/8", want: "deny=10.0.0.0/8,allow=fd00::/8"},
		{in: "deny=10.0.0.0", err: "no '/'"},
		{in: "allow-everything", err: "unknown item"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			p, err := ParseAddrPolicy(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseAddrPolicy(%q) = %v, want error containing %q", tt.in, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			again, err := ParseAddrPolicy(p.String())
			if err != nil || again.String() != p.String() {
				t.Errorf("round trip: %q, %v", again.String(), err)
			}
		})
	}
}

// TestValidateURLLiteralIPs: a literal refused IP is a clear 400 at insert.
func TestValidateURLLiteralIPs(t *testing.T) {
	strict := AddrPolicy{DenyLoopback: true, DenyPrivate: true}
	tests := []struct {
		url            string
		dflt, strictly bool // refused
	}{
		{"http://169.254.169.254/latest/meta-data/", true, true},
		{"http://[fd00:ec2::254]/latest", true, true},
		{"http://[::ffff:a9fe:a9fe]/latest", true, true},
		{"http://100.100.100.200/x", true, true},
		{"http://[fe80::1%25eth0]/x.iso", true, true},
		{"http://0.0.0.0:8080/x.iso", true, true},
		{"http://239.1.1.1/x.iso", true, true},
		{"http://127.0.0.1:8080/boot.iso", false, true},
		{"http://[::1]/boot.iso", false, true},
		{"https://10.0.0.4/boot.iso", false, true},
		{"https://images.example.com/boot.iso", false, false}, // names are checked at dial time
		{"https://8.8.8.8/boot.iso", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			var bad *InvalidURLError
			got := []bool{errors.As(AddrPolicy{}.ValidateURL(tt.url), &bad), errors.As(strict.ValidateURL(tt.url), &bad)}
			if diff := cmp.Diff([]bool{tt.dflt, tt.strictly}, got); diff != "" {
				t.Errorf("refused default, strict (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPolicyClientDial: the check applies to the dialed address, so a host
// name resolving to a refused address (DNS rebinding) and a redirect to the
// metadata service are both refused, while the default policy still lets the
// demo's loopback image server through.
func TestPolicyClientDial(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
			return
		}
		_, _ = w.Write([]byte("iso"))
	}))
	t.Cleanup(srv.Close)
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	tests := []struct {
		name    string
		policy  AddrPolicy
		url     string
		refused string // "" when the GET must succeed
	}{
		{"loopback allowed by default", AddrPolicy{}, srv.URL + "/a.iso", ""},
		{"name resolving to loopback, allowed", AddrPolicy{}, "http://localhost" + port + "/a.iso", ""},
		{"loopback refused", AddrPolicy{DenyLoopback: true}, srv.URL + "/a.iso", "loopback address"},
		{"name resolving to loopback, refused", AddrPolicy{DenyLoopback: true}, "http://localhost" + port + "/a.iso", "loopback address"},
		{"redirect to metadata", AddrPolicy{}, srv.URL + "/redirect", "cloud metadata address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := PolicyClient(tt.policy, 5*time.Second)
			c.Transport.(*http.Transport).Proxy = nil
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, tt.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Do(req)
			if err == nil {
				_ = resp.Body.Close()
			}
			var refused *RefusedAddrError
			switch {
			case tt.refused == "" && err != nil:
				t.Fatalf("GET %s: %v", tt.url, err)
			case tt.refused != "" && !errors.As(err, &refused):
				t.Fatalf("GET %s = %v, want a *RefusedAddrError", tt.url, err)
			case tt.refused != "" && refused.Reason != tt.refused:
				t.Fatalf("refused for %q, want %q", refused.Reason, tt.refused)
			}
		})
	}
}

// TestImportRefusesByPolicy: the import command refuses a literal address
// before any request and a resolved one at connect time, and writes nothing.
func TestImportRefusesByPolicy(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte("iso"))
	}))
	t.Cleanup(srv.Close)
	dest := t.TempDir() + "/disk.img"
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	for _, url := range []string{srv.URL + "/a.iso", "http://localhost" + port + "/a.iso"} {
		var out strings.Builder
		err := RunImport(t.Context(), flag.NewFlagSet("import", flag.ContinueOnError), []string{"--url=" + url, "--dest=" + dest, "--addr-policy=deny-loopback"}, &out)
		if err == nil || !strings.Contains(out.String(), "loopback") {
			t.Errorf("import %s under deny-loopback: err %v, output %q", url, err, out.String())
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("image server got %d requests, want 0", n)
	}
	var out strings.Builder
	if err := RunImport(t.Context(), flag.NewFlagSet("import", flag.ContinueOnError), []string{"--url=" + srv.URL + "/a.iso", "--dest=" + dest}, &out); err != nil {
		t.Fatalf("import under the default policy: %v (%s)", err, out.String())
	}
}
