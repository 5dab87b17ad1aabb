package addrkey

import (
	"net"
	"testing"
)

func TestKeys(t *testing.T) {
	tests := []struct{ in, want string }{
		{"192.0.2.1", "192.0.2.1"},
		{"192.0.2.1:5555", "192.0.2.1"},
		{"::ffff:192.0.2.1", "192.0.2.1"},
		{"2001:db8:1:2::1", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff:ffff:ffff:ffff]:443", "2001:db8:1:2::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"2001:db8:1:2::/64", "2001:db8:1:2::/64"}, // a key stays itself
		{"not an address", "not an address"},
	}
	for _, tt := range tests {
		if got := FromHost(tt.in); got != tt.want {
			t.Errorf("FromHost(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	a := &net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:3:4:5:6"), Port: 1}
	if got, want := FromAddr(a), "2001:db8:1:2::/64"; got != want {
		t.Errorf("FromAddr(%v) = %q, want %q", a, got, want)
	}
	a = &net.TCPAddr{IP: net.ParseIP("198.51.100.7"), Port: 1}
	if got, want := FromAddr(a), "198.51.100.7"; got != want {
		t.Errorf("FromAddr(%v) = %q, want %q", a, got, want)
	}
}
