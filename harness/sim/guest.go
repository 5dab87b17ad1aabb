package sim

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// The simulated guest behind a running VMI's serial port (ttyS0). It
// echoes what it reads (a carriage return or line feed as "\r\n", then the
// login prompt [GuestLoginPrompt]), as a getty on a serial line does; the
// first console connection since the VMI started sees its boot log, which
// names the VM ([GuestBootBanner]), before the echo of its first input.

// GuestBootBanner is the boot log line that names VMI namespace/name.
func GuestBootBanner(namespace, name string) string {
	return fmt.Sprintf("redfish-bridge test guest %s/%s booting on ttyS0", namespace, name)
}

// GuestLoginPrompt is the guest's login prompt (after "\r\n").
func GuestLoginPrompt(name string) string { return name + " login: " }

// guest is the serial side of one VMI (by UID).
type guest struct {
	namespace, name string
	booted          bool // the boot log went out; guarded by consoleServer.mu
}

// guestFor is the guest of the VMI, created on its first connection.
func (cs *consoleServer) guestFor(vmi *unstructured.Unstructured) (*guest, bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	uid := vmi.GetUID()
	g, ok := cs.guests[uid]
	if !ok {
		g = &guest{namespace: vmi.GetNamespace(), name: vmi.GetName()}
		cs.guests[uid] = g
	}
	first := !g.booted
	g.booted = true
	return g, first
}

// forget drops the guest of a deleted VMI.
func (cs *consoleServer) forget(uid types.UID) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	delete(cs.guests, uid)
	delete(cs.screen, uid)
}

// bootLog is what the guest printed on ttyS0 while it booted.
func (g *guest) bootLog() string {
	lines := []string{
		"SeaBIOS (version 1.16.3-debian-1.16.3-2)",
		"Booting from Hard Disk...",
		"[    0.000000] Linux version 6.1.0-28-amd64 (debian-kernel@lists.debian.org)",
		"[    0.000000] Command line: BOOT_IMAGE=/boot/vmlinuz root=/dev/vda1 console=ttyS0,115200n8",
		"[    0.000000] " + GuestBootBanner(g.namespace, g.name),
		"[    1.204113] systemd[1]: Reached target multi-user.target - Multi-User System.",
		"",
		"Debian GNU/Linux 12 " + g.name + " ttyS0",
		"",
	}
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l + "\r\n")
	}
	return b.String()
}

// serveSerial is the console route: the guest's serial session on conn.
// The guest is silent until it reads: what it read first gets the boot log
// (on the VMI's first connection) before its echo. (virt-api relays
// virt-handler's side from the raw TCP connection under its WebSocket
// client, so bytes virt-handler sent together with its handshake answer
// would be lost in that client's buffer: a real serial port, too, shows
// nothing on connecting until the user presses Enter.)
func (cs *consoleServer) serveSerial(ctx context.Context, vmi *unstructured.Unstructured, conn io.ReadWriter) error {
	var g *guest
	buf := make([]byte, 32<<10)
	var prev byte
	for ctx.Err() == nil {
		n, err := conn.Read(buf)
		if n > 0 {
			var out []byte
			if g == nil {
				var first bool
				if g, first = cs.guestFor(vmi); first {
					out = append(out, g.bootLog()...)
				}
			}
			if _, werr := conn.Write(append(out, g.echo(buf[:n], &prev)...)); werr != nil {
				return werr
			}
		}
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// echo is what the guest answers to in: every byte back, a line end as
// "\r\n" and the prompt (a "\r\n" pair counts once). prev is the last byte
// of the previous read.
func (g *guest) echo(in []byte, prev *byte) []byte {
	out := make([]byte, 0, len(in)+32)
	for _, c := range in {
		switch {
		case c == '\n' && *prev == '\r':
		case c == '\r' || c == '\n':
			out = append(out, "\r\n"+GuestLoginPrompt(g.name)...)
		default:
			out = append(out, c)
		}
		*prev = c
	}
	return out
}
