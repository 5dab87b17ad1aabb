package download

import (
	"context"
	"errors"
	"net/netip"
	"testing"
)

// fixedResolver answers from a map and counts its lookups.
type fixedResolver struct {
	addrs   map[string][]string
	lookups int
}

func (f *fixedResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	f.lookups++
	list, ok := f.addrs[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	var out []netip.Addr
	for _, a := range list {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

// TestValidateResolved: a host name is refused when any address it
// resolves to is refused (the metadata service even through an
// IPv4-mapped or NAT64 answer, loopback under deny-loopback) or when it
// does not resolve; a literal IP is checked without a lookup.
func TestValidateResolved(t *testing.T) {
	r := &fixedResolver{addrs: map[string][]string{
		"images.example":   {"203.0.113.7", "2001:db8::7"},
		"mixed.example":    {"203.0.113.7", "169.254.169.254"},
		"mapped.example":   {"::ffff:169.254.169.254"},
		"nat64.example":    {"64:ff9b::a9fe:a9fe"},
		"loopback.example": {"127.0.0.1"},
		"empty.example":    {},
		"images.tenant":    {"10.96.0.5"},
		"images":           {"203.0.113.7"},
		"mirror.tenant":    {},
		"mirror":           {"10.0.0.9"},
	}}
	denyPrivate := AddrPolicy{DenyPrivate: true}
	denyLoopback := AddrPolicy{DenyLoopback: true}
	for _, tc := range []struct {
		url    string
		policy AddrPolicy
		want   string // the reason, "" when allowed
	}{
		// A single-label name is the importer namespace's Service first.
		{"http://images/boot.iso", denyPrivate, "host images resolves to 10.96.0.5, a refused private address"},
		{"http://images/boot.iso", AddrPolicy{}, ""},
		{"http://mirror/boot.iso", denyPrivate, "host mirror resolves to 10.0.0.9, a refused private address"},
		{"http://images./boot.iso", denyPrivate, "host images. does not resolve, so the address policy cannot be checked (no such host)"},
		{"https://images.example/boot.iso", AddrPolicy{}, ""},
		{"https://mixed.example/boot.iso", AddrPolicy{}, "host mixed.example resolves to 169.254.169.254, a refused cloud metadata address"},
		{"https://mapped.example/boot.iso", AddrPolicy{}, "host mapped.example resolves to 169.254.169.254, a refused cloud metadata address"},
		{"https://nat64.example/boot.iso", AddrPolicy{}, "host nat64.example resolves to 64:ff9b::a9fe:a9fe, a refused cloud metadata address 169.254.169.254 embedded in 64:ff9b::a9fe:a9fe"},
		{"http://loopback.example:8080/boot.iso", AddrPolicy{}, ""},
		{"http://loopback.example:8080/boot.iso", denyLoopback, "host loopback.example resolves to 127.0.0.1, a refused loopback address"},
		{"https://unknown.example/boot.iso", AddrPolicy{}, "host unknown.example does not resolve, so the address policy cannot be checked (no such host)"},
		{"https://empty.example/boot.iso", AddrPolicy{}, "host empty.example does not resolve, so the address policy cannot be checked (<nil>)"},
	} {
		t.Run(tc.url+" "+tc.policy.String(), func(t *testing.T) {
			err := tc.policy.ValidateResolved(t.Context(), r, tc.url, "tenant")
			var bad *InvalidURLError
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (!errors.As(err, &bad) || bad.Reason != tc.want):
				t.Fatalf("got %v, want an InvalidURLError with reason %q", err, tc.want)
			}
		})
	}
	t.Run("literal IPs are not looked up", func(t *testing.T) {
		before := r.lookups
		if err := (AddrPolicy{}).ValidateResolved(t.Context(), r, "http://169.254.169.254/latest", "tenant"); err == nil {
			t.Error("metadata IP accepted")
		}
		if err := (AddrPolicy{}).ValidateResolved(t.Context(), r, "http://[2001:db8::1]/boot.iso", "tenant"); err != nil {
			t.Error(err)
		}
		if r.lookups != before {
			t.Errorf("%d lookups for literal IPs", r.lookups-before)
		}
	})
}
