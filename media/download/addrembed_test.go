package download

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAddrPolicyEmbeddedIPv4: every IPv6 form that carries 169.254.169.254
// (or another refused IPv4 address) is refused as the IPv4 address would
// be, at insert ([AddrPolicy.ValidateURL]) and at dial ([AddrPolicy.Control]);
// the same forms around a public IPv4 address stay allowed.
func TestAddrPolicyEmbeddedIPv4(t *testing.T) {
	strict := AddrPolicy{DenyLoopback: true, DenyPrivate: true}
	const metadata = "cloud metadata address 169.254.169.254 embedded in "
	tests := []struct {
		addr           string
		dflt, strictly string // "" allowed, else the reason's start
	}{
		{"::ffff:169.254.169.254", "cloud metadata address", "cloud metadata address"}, // IPv4-mapped
		{"64:ff9b::169.254.169.254", metadata, metadata},                               // NAT64 well-known
		{"64:ff9b::a9fe:a9fe", metadata, metadata},
		{"64:ff9b:1::a9fe:a9fe", metadata, metadata},                 // NAT64 local-use
		{"::169.254.169.254", metadata, metadata},                    // IPv4-compatible
		{"::ffff:0:169.254.169.254", metadata, metadata},             // IPv4-translated (SIIT)
		{"2002:a9fe:a9fe::", metadata, metadata},                     // 6to4
		{"2002:a9fe:a9fe:1:2:3:4:5", metadata, metadata},             // 6to4, any host
		{"2001:0:4136:e378:8000:63bf:5601:5601", metadata, metadata}, // Teredo client 169.254.169.254 (inverted)
		{"64:ff9b::100.100.100.200", "cloud metadata address 100.100.100.200 embedded", "cloud metadata address 100.100.100.200 embedded"},
		{"64:ff9b::169.254.1.1", "link-local address 169.254.1.1 embedded", "link-local address 169.254.1.1 embedded"},
		{"2002:e000:1::", "multicast address 224.0.0.1 embedded", "multicast address 224.0.0.1 embedded"},
		{"::127.0.0.1", "", "loopback address 127.0.0.1 embedded"},
		{"2002:7f00:1::", "", "loopback address 127.0.0.1 embedded"},
		{"64:ff9b::10.0.0.5", "", "private address 10.0.0.5 embedded"},
		{"2002:c0a8:101::", "", "private address 192.168.1.1 embedded"},
		// Public IPv4 addresses behind the same forms are fine.
		{"64:ff9b::8.8.8.8", "", ""},
		{"2002:808:808::1", "", ""},
		{"2001:0:4136:e378:8000:63bf:f7f7:f7f7", "", ""}, // Teredo client 8.8.8.8
		{"2001:4860::8888", "", ""},                      // not Teredo (2001:0::/32 only)
		{"::1", "", "loopback address"},                  // IPv6's own loopback, not ::0.0.0.1
		{"::", "unspecified address", "unspecified address"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			a := netip.MustParseAddr(tt.addr)
			var got, dialed, inserted []string
			for _, p := range []AddrPolicy{{}, strict} {
				why := p.Check(a)
				got = append(got, why)
				// At dial: the Control hook sees the resolved address.
				var refused *RefusedAddrError
				if err := p.Control("tcp6", netip.AddrPortFrom(a, 80).String(), nil); errors.As(err, &refused) {
					dialed = append(dialed, refused.Reason)
				} else {
					dialed = append(dialed, "")
				}
				// At insert: a literal in the URL is a 400.
				var bad *InvalidURLError
				url := "http://" + net.JoinHostPort(tt.addr, "80") + "/latest/meta-data/"
				inserted = append(inserted, map[bool]string{true: "refused", false: ""}[errors.As(p.ValidateURL(url), &bad)])
			}
			for i, want := range []string{tt.dflt, tt.strictly} {
				if want == "" && got[i] != "" || !strings.HasPrefix(got[i], want) {
					t.Errorf("Check(%s) policy %d = %q, want %q...", tt.addr, i, got[i], want)
				}
				wantInsert := map[bool]string{true: "refused", false: ""}[want != ""]
				if diff := cmp.Diff([]string{got[i], wantInsert}, []string{dialed[i], inserted[i]}); diff != "" {
					t.Errorf("%s policy %d: dial and insert disagree with Check (-want +got):\n%s", tt.addr, i, diff)
				}
			}
		})
	}
}
