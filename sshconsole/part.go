package sshconsole

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/redfish-bridge/redfish-bridge/internal/connshare"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/manager"
)

// Config are the SSH console's settings.
type Config struct {
	// Listen is the TCP address the SSH console listens on; "" turns it
	// off.
	Listen string
	// HostKeyFile names the host's private key (PEM, as ssh-keygen writes
	// it). Every replica must be given the same one (the chart mounts it
	// from a Secret), or a client that reaches another replica sees a
	// changed host key. "": a key made at start, logged as a warning.
	HostKeyFile string
	// MaxConnections caps the console's open connections, handshakes
	// included, shared out by user and address as the HTTPS service's
	// (internal/connshare).
	MaxConnections int
	// HandshakeTimeout bounds each connection's handshake and login (0:
	// [DefaultHandshakeTimeout]).
	HandshakeTimeout time.Duration
}

// DefaultMaxConnections is [Config.MaxConnections]'s default: what the
// per-user console limits leave room for, and a bound on the goroutines
// and buffers a flood of connections can hold.
const DefaultMaxConnections = 128

// RegisterFlags registers the settings on fs.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Listen, "ssh-console-listen", "", "TCP address of the SSH serial console (ssh -t -p <port> <user>@<bridge> <namespace>.<vm>); empty: no SSH console")
	fs.StringVar(&c.HostKeyFile, "ssh-console-host-key", "", "the SSH console's private host key (PEM); the same file on every replica; empty: a new key at every start")
	fs.IntVar(&c.MaxConnections, "ssh-console-max-connections", DefaultMaxConnections, "most open SSH console connections (handshakes included), shared out by user and address")
	fs.DurationVar(&c.HandshakeTimeout, "ssh-console-handshake-timeout", DefaultHandshakeTimeout, "close an SSH console connection that has not logged in within this long")
}

// Part is the SSH console as a part of the bridge's manager (its Servers
// group): it listens when it starts, so a taken port fails the bridge's
// start, and serves until the bridge stops.
type Part struct {
	cfg       Config
	passwords Passwords
	opener    Opener
	listening chan struct{} // closed once ln is set
	ln        net.Listener
}

// Add adds the SSH console to mgr's Servers group; nil and nothing added
// when cfg.Listen is "". The host key is read here, so a bad file fails
// the bridge's start with its name.
func Add(mgr *manager.Manager, cfg Config, passwords Passwords, opener Opener) (*Part, error) {
	if cfg.Listen == "" {
		return nil, nil
	}
	p := &Part{cfg: cfg, passwords: passwords, opener: opener, listening: make(chan struct{})}
	if cfg.HostKeyFile != "" {
		if _, err := readHostKey(cfg.HostKeyFile); err != nil {
			return nil, err
		}
	}
	if err := mgr.Add(p, manager.Servers); err != nil {
		return nil, fmt.Errorf("ssh console: %w", err)
	}
	return p, nil
}

// Start listens on cfg.Listen and serves until ctx ends.
func (p *Part) Start(ctx context.Context) error {
	key, err := p.hostKey(ctx)
	if err != nil {
		return err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", p.cfg.Listen)
	if err != nil {
		return fmt.Errorf("ssh console: listen: %w", err)
	}
	if p.cfg.MaxConnections > 0 {
		ln = connshare.New(ln, p.cfg.MaxConnections)
	}
	p.ln = ln
	close(p.listening)
	stop := context.AfterFunc(ctx, func() { _ = ln.Close() })
	defer stop()
	logctx.From(ctx).InfoContext(ctx, "ssh console listening", "addr", ln.Addr().String())
	return NewServer(key, p.passwords, p.opener, p.cfg.HandshakeTimeout).Serve(ctx, ln)
}

// WaitReady returns once the console listens ([manager.Readier]).
func (p *Part) WaitReady(ctx context.Context) error {
	select {
	case <-p.listening:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Addr is the address the console listens on, once WaitReady returned
// nil; "" for no console (nil).
func (p *Part) Addr() string {
	if p == nil {
		return ""
	}
	return p.ln.Addr().String()
}

// Port is the console's TCP port, once it listens (ok false before, and
// for no console).
func (p *Part) Port() (int, bool) {
	if p == nil {
		return 0, false
	}
	select {
	case <-p.listening:
	default:
		return 0, false
	}
	a, ok := p.ln.Addr().(*net.TCPAddr)
	if !ok {
		return 0, false
	}
	return a.Port, true
}

// hostKey reads cfg.HostKeyFile, or makes a key when none is named.
func (p *Part) hostKey(ctx context.Context) (ssh.Signer, error) {
	if p.cfg.HostKeyFile != "" {
		return readHostKey(p.cfg.HostKeyFile)
	}
	logctx.From(ctx).WarnContext(ctx, "ssh console: no --ssh-console-host-key: a new host key for this start only (clients will see it change)")
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("ssh console: host key: %w", err)
	}
	return ssh.NewSignerFromKey(priv)
}

func readHostKey(path string) (ssh.Signer, error) {
	raw, err := os.ReadFile(filepath.Clean(path)) // the operator's --ssh-console-host-key
	if err != nil {
		return nil, fmt.Errorf("ssh console: host key: %w", err)
	}
	s, err := ssh.ParsePrivateKey(raw)
	if err != nil {
		var missing *ssh.PassphraseMissingError
		if errors.As(err, &missing) {
			return nil, fmt.Errorf("ssh console: host key %s is encrypted: give it without a passphrase", path)
		}
		return nil, fmt.Errorf("ssh console: host key %s: %w", path, err)
	}
	return s, nil
}
