package download

import "net/netip"

// IPv6 ranges whose addresses carry an IPv4 address that a translator,
// tunnel or dual-stack kernel may deliver packets to. The policy checks the
// embedded IPv4 address as well, so 64:ff9b::a9fe:a9fe is refused like
// 169.254.169.254.
var (
	// nat64 is the NAT64 well-known prefix (RFC 6052) and nat64Local the
	// local-use one (RFC 8215); both embed the IPv4 address in the last
	// 32 bits with a /96 prefix.
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	// compat is the deprecated IPv4-compatible range ::a.b.c.d (RFC 4291);
	// siit the IPv4-translated ::ffff:0:a.b.c.d (RFC 2765).
	compat = netip.MustParsePrefix("::/96")
	siit   = netip.MustParsePrefix("::ffff:0:0:0/96")
	// sixToFour is 6to4 (RFC 3056): 2002:AABB:CCDD::/48 for AA.BB.CC.DD.
	sixToFour = netip.MustParsePrefix("2002::/16")
	// teredo is Teredo (RFC 4380): 2001:0:SSSS:SSSS:flags:port:CCCC:CCCC
	// with the server's IPv4 in bits 32-63 and the client's, inverted, in
	// the last 32.
	teredo = netip.MustParsePrefix("2001::/32")
)

// embeddedIPv4 returns the IPv4 addresses an IPv6 address embeds (none for
// an IPv4 address or an IPv6 address outside the ranges above). An
// IPv4-mapped address (::ffff:a.b.c.d) is not listed: [AddrPolicy.Check]
// unmaps it first.
func embeddedIPv4(addr netip.Addr) []netip.Addr {
	if !addr.Is6() || addr.Is4In6() {
		return nil
	}
	b := addr.As16()
	last := func() netip.Addr { return netip.AddrFrom4([4]byte(b[12:16])) }
	switch {
	case nat64.Contains(addr), nat64Local.Contains(addr), siit.Contains(addr):
		return []netip.Addr{last()}
	case compat.Contains(addr):
		if addr.IsUnspecified() || addr.IsLoopback() { // :: and ::1 are IPv6's own
			return nil
		}
		return []netip.Addr{last()}
	case sixToFour.Contains(addr):
		return []netip.Addr{netip.AddrFrom4([4]byte(b[2:6]))}
	case teredo.Contains(addr):
		client := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
		return []netip.Addr{netip.AddrFrom4([4]byte(b[4:8])), netip.AddrFrom4(client)}
	}
	return nil
}
