package testutil

import (
	"bufio"
	"context"
	"net"
	"testing"
	"time"
)

// FloodDialer dials from the loopback address src (each flood its own
// source address, as an attacker's would be).
func FloodDialer(src string) *net.Dialer {
	return &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
}

// HoldIdle opens n TCP connections from src to addr that send nothing and
// holds them until the test ends.
func HoldIdle(t testing.TB, addr, src string, n int) {
	t.Helper()
	d := FloodDialer(src)
	for range n {
		c, err := d.DialContext(t.Context(), "tcp", addr)
		if err != nil {
			t.Fatalf("idle connection from %s: %v", src, err)
		}
		t.Cleanup(func() { _ = c.Close() })
	}
}

// keepAliveEvery is how often a held keep-alive connection asks again:
// far inside any server's idle timeout (the bridge's is 60 s).
const keepAliveEvery = 10 * time.Second

// HoldKeepAlive opens n connections with dial, makes one unauthenticated
// GET of path on each (answered, the connection kept alive) and holds them
// until the test ends; it returns how many were answered. Every
// keepAliveEvery each answered connection asks again, so no idle timeout of
// the server ever frees one: while they are held, a connection cap they
// fill frees room only by closing one (as the bridge's listener does), and
// a client locked out stays locked out.
func HoldKeepAlive(t testing.TB, n int, dial func() (net.Conn, error), path string) int {
	t.Helper()
	answered := 0
	for range n {
		c, err := dial()
		if err != nil {
			t.Fatalf("keep-alive connection: %v", err)
		}
		t.Cleanup(func() { _ = c.Close() })
		r := bufio.NewReader(c)
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if ask(c, r, path, nil) != nil {
			continue
		}
		answered++
		_ = c.SetDeadline(time.Time{})
		go keepAsking(t.Context(), c, r, path)
	}
	return answered
}

// keepAsking asks path on c every keepAliveEvery until ctx ends (the test
// ends, and its cleanup closes c) or the server closes c.
func keepAsking(ctx context.Context, c net.Conn, r *bufio.Reader, path string) {
	tick := time.NewTicker(keepAliveEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if ask(c, r, path, nil) != nil {
			return
		}
	}
}
