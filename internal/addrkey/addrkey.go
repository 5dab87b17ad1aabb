package addrkey

import (
	"net"
	"net/netip"
)

// IPv6Bits is the IPv6 prefix length counted as one client.
const IPv6Bits = 64

// Of is the key of ip: an IPv4 address (an IPv4-mapped IPv6 one too) as
// itself, an IPv6 address as its /64 in CIDR form ("2001:db8:1:2::/64").
// Zones are dropped: fe80::1%eth0 and fe80::1%eth1 are one client.
func Of(ip netip.Addr) string {
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		return ip.String()
	}
	return netip.PrefixFrom(ip, IPv6Bits).Masked().String()
}

// FromHost is the key of host, an IP address in text form, with or
// without a port ("192.0.2.1", "[2001:db8::1]:443"). Anything else is
// returned unchanged, so a key given again stays the same key.
func FromHost(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	return Of(ip)
}

// FromAddr is the key of a connection's remote address.
func FromAddr(a net.Addr) string {
	if tcp, ok := a.(*net.TCPAddr); ok {
		if ip, ok := netip.AddrFromSlice(tcp.IP); ok {
			return Of(ip)
		}
	}
	return FromHost(a.String())
}
