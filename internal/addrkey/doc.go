// Package addrkey names the client a peer address counts as, for every
// per-address count the bridge keeps (the connection shares, the login
// throttle): an IPv4 address stands for itself, an IPv6 address for its
// /64, the prefix one host or one customer is usually given, so that
// walking the addresses of a /64 does not make a client many clients.
package addrkey
