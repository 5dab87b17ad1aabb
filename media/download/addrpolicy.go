package download

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// AddrPolicy decides which addresses an image URL may point at, so a
// Redfish user cannot make an import pod (the only one that contacts an
// image server) reach the cloud metadata service or other internal
// endpoints (SSRF).
//
// Literal IPs in a URL are checked at insert ([ValidateURL], a 400); every
// address actually dialed is checked again by [AddrPolicy.Control], so a
// host name that resolves (or re-resolves: DNS rebinding) to a refused
// address is refused at connect time too.
type AddrPolicy struct {
	// DenyLoopback refuses 127.0.0.0/8 and ::1 (allowed by default: the demo
	// serves its ISOs on 127.0.0.1).
	DenyLoopback bool
	// DenyPrivate refuses 10/8, 172.16/12, 192.168/16, 100.64/10 (CGNAT)
	// and fc00::/7 (allowed by default: image servers usually live there).
	DenyPrivate bool
	// Deny lists further refused prefixes.
	Deny []netip.Prefix
	// Allow lists prefixes allowed even if a rule above refuses them; it
	// never opens the metadata addresses.
	Allow []netip.Prefix
}

// metadataAddrs are the cloud instance-metadata services: AWS/GCP/Azure/
// OpenStack, AWS IPv6, Alibaba. Always refused.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"),
	netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("100.100.100.200"),
}

var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// ParseAddrPolicy reads a comma-separated policy: "deny-loopback",
// "deny-private", "deny=<prefix>", "allow=<prefix>"; "" is the default.
func ParseAddrPolicy(s string) (AddrPolicy, error) {
	var p AddrPolicy
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		key, val, _ := strings.Cut(item, "=")
		switch key {
		case "":
		case "deny-loopback":
			p.DenyLoopback = true
		case "deny-private":
			p.DenyPrivate = true
		case "deny", "allow":
			pfx, err := netip.ParsePrefix(val)
			if err != nil {
				return AddrPolicy{}, fmt.Errorf("address policy %q: %w", item, err)
			}
			if key == "deny" {
				p.Deny = append(p.Deny, pfx.Masked())
			} else {
				p.Allow = append(p.Allow, pfx.Masked())
			}
		default:
			return AddrPolicy{}, fmt.Errorf("address policy: unknown item %q", item)
		}
	}
	return p, nil
}

// String is the inverse of [ParseAddrPolicy].
func (p AddrPolicy) String() string {
	var items []string
	if p.DenyLoopback {
		items = append(items, "deny-loopback")
	}
	if p.DenyPrivate {
		items = append(items, "deny-private")
	}
	for _, d := range p.Deny {
		items = append(items, "deny="+d.String())
	}
	for _, a := range p.Allow {
		items = append(items, "allow="+a.String())
	}
	return strings.Join(items, ",")
}

// Check returns why addr is refused, or "" if it is allowed. An IPv6
// address embedding an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64,
// 6to4, Teredo: see [embeddedIPv4]) is refused when the embedded address
// is, so the metadata service cannot be reached through a translator.
func (p AddrPolicy) Check(addr netip.Addr) string {
	addr = addr.Unmap()
	if why := p.check(addr); why != "" {
		return why
	}
	for _, v4 := range embeddedIPv4(addr) {
		if why := p.check(v4); why != "" {
			return why + " " + v4.String() + " embedded in " + addr.String()
		}
	}
	return ""
}

// check is [AddrPolicy.Check] of addr alone.
func (p AddrPolicy) check(addr netip.Addr) string {
	for _, m := range metadataAddrs {
		if addr == m {
			return "cloud metadata address"
		}
	}
	for _, a := range p.Allow {
		if a.Contains(addr) {
			return ""
		}
	}
	switch {
	case !addr.IsValid():
		return "invalid address"
	case addr.IsUnspecified():
		return "unspecified address"
	case addr.IsLinkLocalUnicast():
		return "link-local address"
	case addr.IsMulticast(), addr.IsInterfaceLocalMulticast(), addr.IsLinkLocalMulticast():
		return "multicast address"
	case addr == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "broadcast address"
	case p.DenyLoopback && addr.IsLoopback():
		return "loopback address"
	case p.DenyPrivate && (addr.IsPrivate() || cgnat.Contains(addr)):
		return "private address"
	}
	for _, d := range p.Deny {
		if d.Contains(addr) {
			return "address in refused range " + d.String()
		}
	}
	return ""
}

// checkHost refuses a URL host that is a literal IP the policy refuses; a
// host name is left to [AddrPolicy.Control] at connect time.
func (p AddrPolicy) checkHost(host string) string {
	addr, err := netip.ParseAddr(strings.TrimSuffix(host, "."))
	if err != nil {
		return ""
	}
	if why := p.Check(addr); why != "" {
		return "host " + host + " is a refused " + why
	}
	return ""
}

// Control is a [net.Dialer] Control hook refusing every connection to an
// address the policy refuses; it sees the resolved address of each dial.
func (p AddrPolicy) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("address policy: dial %s %s: %w", network, address, err)
	}
	if why := p.Check(ap.Addr()); why != "" {
		return &RefusedAddrError{Addr: ap.Addr(), Reason: why}
	}
	return nil
}

// RefusedAddrError reports a dial the address policy refused.
type RefusedAddrError struct {
	Addr   netip.Addr
	Reason string
}

func (e *RefusedAddrError) Error() string {
	return fmt.Sprintf("address policy refuses %s: %s", e.Addr, e.Reason)
}

// PolicyClient returns an HTTP client whose every connection, redirects
// included, is checked by p. It takes no proxy from the environment
// (HTTP_PROXY, HTTPS_PROXY): through a proxy the dialed address is the
// proxy's, and the destination would go unchecked. It follows at most 10
// redirects and refuses one from https to http ([*DowngradeError]).
func PolicyClient(p AddrPolicy, timeout time.Duration) *http.Client {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: p.Control}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = d.DialContext
	t.Proxy = nil
	return &http.Client{Transport: t, Timeout: timeout, CheckRedirect: checkRedirect}
}
