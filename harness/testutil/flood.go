package testutil

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
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

// HoldKeepAlive opens n connections with dial, makes one unauthenticated
// GET of path on each (answered, the connection kept alive) and holds them
// until the test ends; it returns how many were answered.
func HoldKeepAlive(t testing.TB, n int, dial func() (net.Conn, error), path string) int {
	t.Helper()
	answered := 0
	for range n {
		c, err := dial()
		if err != nil {
			t.Fatalf("keep-alive connection: %v", err)
		}
		t.Cleanup(func() { _ = c.Close() })
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: bridge\r\n\r\n", path); err != nil {
			continue
		}
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			_ = resp.Body.Close()
			answered++
		}
		_ = c.SetDeadline(time.Time{})
	}
	return answered
}
