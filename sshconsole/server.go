package sshconsole

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/redfish-bridge/redfish-bridge/console"
	"github.com/redfish-bridge/redfish-bridge/internal/connshare"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Passwords checks a login (auth.Authenticator.Password: the users
// Secret, the scope, the throttle).
type Passwords interface {
	Password(ctx context.Context, ip, name, password string) (auth.Principal, error)
}

// Opener opens consoles (console.Opener).
type Opener interface {
	Open(ctx context.Context, user console.User, key system.Key) (console.Stream, error)
}

// Server is the SSH console on one listener.
type Server struct {
	hostKey   ssh.Signer
	passwords Passwords
	opener    Opener
	// handshake bounds a connection's SSH handshake and login.
	handshake time.Duration
}

// DefaultHandshakeTimeout is how long a connection may take from its
// first byte to a finished login: a client that stalls is closed.
const DefaultHandshakeTimeout = 30 * time.Second

// NewServer returns the SSH console with host key hostKey; handshake
// bounds each connection's handshake and login (0: the default).
func NewServer(hostKey ssh.Signer, passwords Passwords, opener Opener, handshake time.Duration) *Server {
	if handshake <= 0 {
		handshake = DefaultHandshakeTimeout
	}
	return &Server{hostKey: hostKey, passwords: passwords, opener: opener, handshake: handshake}
}

// config is the SSH server configuration of one connection: its password
// check hands the authenticated principal (with its scope) to *p.
func (s *Server) config(ctx context.Context, p *auth.Principal) *ssh.ServerConfig {
	cfg := &ssh.ServerConfig{
		PasswordCallback: func(meta ssh.ConnMetadata, password []byte) (*ssh.Permissions, error) {
			ip, _, _ := net.SplitHostPort(meta.RemoteAddr().String())
			got, err := s.passwords.Password(ctx, ip, meta.User(), string(password))
			if err != nil {
				return nil, fmt.Errorf("ssh console: login of %q: %w", meta.User(), err)
			}
			*p = got
			return &ssh.Permissions{}, nil
		},
		MaxAuthTries: 3,
	}
	cfg.AddHostKey(s.hostKey)
	return cfg
}

// Serve accepts connections on ln until it is closed.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("ssh console: accept: %w", err)
		}
		go s.serveConn(ctx, c)
	}
}

// serveConn serves one connection: a handshake and login within
// s.handshake, then its session channels. A connection from a
// [connshare.Listener] counts against its user once logged in, and is
// busy while a console is attached (the shares' eviction order).
func (s *Server) serveConn(ctx context.Context, c net.Conn) {
	defer c.Close()
	log := logctx.From(ctx).With("remote", c.RemoteAddr().String())
	var p auth.Principal
	_ = c.SetDeadline(time.Now().Add(s.handshake))
	conn, chans, reqs, err := ssh.NewServerConn(c, s.config(ctx, &p))
	if err != nil {
		log.InfoContext(ctx, "ssh console: handshake failed", "error", err)
		return
	}
	defer conn.Close()
	_ = c.SetDeadline(time.Time{})
	share := connshare.Of(c)
	if share != nil {
		share.Authenticated(p.User)
		share.SetStage(connshare.StageIdle)
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only session channels")
			continue
		}
		ch, requests, err := nc.Accept()
		if err != nil {
			return
		}
		go s.session(logctx.Into(ctx, log), p, share, ch, requests)
	}
}

// session waits for the exec request naming the System (pty and window
// requests are accepted and ignored: the guest's serial line has no size).
func (s *Server) session(ctx context.Context, p auth.Principal, share *connshare.Conn, ch ssh.Channel, requests <-chan *ssh.Request) {
	defer ch.Close()
	for req := range requests {
		switch req.Type {
		case "pty-req", "env", "window-change":
			_ = req.Reply(true, nil)
		case "exec":
			var cmd struct{ Command string }
			if err := ssh.Unmarshal(req.Payload, &cmd); err != nil {
				_ = req.Reply(false, nil)
				return
			}
			_ = req.Reply(true, nil)
			go ssh.DiscardRequests(requests)
			if share != nil {
				share.SetStage(connshare.StageBusy)
			}
			code := s.attach(ctx, p, ch, strings.TrimSpace(cmd.Command))
			if share != nil {
				share.SetStage(connshare.StageIdle)
			}
			_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{code}))
			return
		case "shell":
			_ = req.Reply(true, nil)
			fmt.Fprint(ch.Stderr(), "name the System: ssh -t -p <port> <user>@<bridge> <namespace>.<name>\r\n")
			_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{2}))
			return
		default:
			_ = req.Reply(false, nil)
		}
	}
}

// attach relays the console of System id to ch until either side ends or
// the user types "~." at the start of a line. It returns the exit status.
func (s *Server) attach(ctx context.Context, p auth.Principal, ch ssh.Channel, id string) uint32 {
	key, err := system.ParseID(id)
	if err != nil {
		fmt.Fprintf(ch.Stderr(), "no such system %q\r\n", id)
		return 1
	}
	st, err := s.opener.Open(ctx, console.User{Name: p.User, Scope: p.Scope, ReadOnly: p.ReadOnly, Protocol: system.ProtocolSSH}, key)
	if err != nil {
		fmt.Fprintf(ch.Stderr(), "%s\r\n", message(ctx, err, id))
		return 1
	}
	defer st.Close()
	fmt.Fprintf(ch.Stderr(), "connected to the serial console of %s; ~. at the start of a line leaves\r\n", id)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(ch, st) // the guest's output; ch's window is the backpressure
	}()
	leaving := make(chan struct{})
	go endWithStream(st, ch, leaving)
	copyUntilEscape(st, ch)
	close(leaving)
	_ = st.Close()
	<-done
	return 0
}

// endWithStream ends the session when the console stream ends by itself
// (the guest side closed, the idle timeout) rather
// than by the user leaving (leaving closed first): exit status 1 and the
// channel closed, so a client waiting on its own input is not left
// holding a session whose console is gone.
func endWithStream(st console.Stream, ch ssh.Channel, leaving <-chan struct{}) {
	select {
	case <-st.Done():
		select {
		case <-leaving:
			return
		default:
		}
		_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{1}))
		_ = ch.Close()
	case <-leaving:
	}
}

// copyUntilEscape copies what the user types to the guest until "~." at
// the start of a line (the "~." itself is not sent) or the channel ends.
func copyUntilEscape(dst io.Writer, src io.Reader) {
	buf := make([]byte, 4096)
	lineStart, tilde := true, false
	for {
		n, err := src.Read(buf)
		out := make([]byte, 0, n+1)
		for _, c := range buf[:n] {
			switch {
			case tilde && c == '.':
				_, _ = dst.Write(out)
				return
			case tilde:
				out = append(out, '~', c)
				tilde = false
			case lineStart && c == '~':
				tilde = true
				continue
			default:
				out = append(out, c)
			}
			lineStart = c == '\r' || c == '\n'
		}
		if len(out) > 0 {
			if _, werr := dst.Write(out); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// message is what the user reads when the console cannot open.
func message(ctx context.Context, err error, id string) string {
	switch {
	case errors.Is(err, console.ErrNotFound):
		return fmt.Sprintf("no such system %q", id)
	case errors.Is(err, console.ErrActive):
		return fmt.Sprintf("the console of %s is in use", id)
	case errors.Is(err, console.ErrReadOnly):
		return "a ReadOnly user cannot open a console"
	case errors.Is(err, console.ErrLimit):
		return "too many open consoles"
	case errors.Is(err, console.ErrDisabled):
		return fmt.Sprintf("the SSH console of %s is switched off (its Manager's NetworkProtocol SSH ProtocolEnabled is false)", id)
	case errors.Is(err, console.ErrNotRunning):
		return fmt.Sprintf("%s is not running", id)
	default:
		logctx.From(ctx).WarnContext(ctx, "ssh console: open", "system", id, "error", err)
		return "the console could not be opened"
	}
}
