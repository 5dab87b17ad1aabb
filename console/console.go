package console

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport/websocket"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Why Open refuses.
var (
	// ErrReadOnly: the user's role may not open a console.
	ErrReadOnly = errors.New("console: a ReadOnly user cannot open a console")
	// ErrNotFound: no such System, or not in the user's scope.
	ErrNotFound = errors.New("console: no such system")
	// ErrActive: the System's console is already open on this replica.
	ErrActive = errors.New("console: payload already active")
	// ErrLimit: the user, or the bridge, has as many consoles open as
	// allowed.
	ErrLimit = errors.New("console: too many open consoles")
	// ErrNotRunning: the System has no running guest (virt-api refused).
	ErrNotRunning = errors.New("console: the system is not running")
	// ErrDisabled: an Administrator switched the protocol the console is
	// asked over off for the System (its Manager's NetworkProtocol).
	ErrDisabled = errors.New("console: the protocol is switched off for this system")
)

// Config are the console stream's settings.
type Config struct {
	// IdleTimeout closes a stream with no byte either way for this long.
	IdleTimeout time.Duration
	// MaxPerUser bounds one user's open streams.
	MaxPerUser int
	// MaxSessions bounds the replica's open streams.
	MaxSessions int
}

// DefaultConfig is the configuration without flags.
func DefaultConfig() Config {
	return Config{IdleTimeout: 30 * time.Minute, MaxPerUser: 4, MaxSessions: 256}
}

// RegisterFlags registers the settings' flags on fs, defaults from c.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.DurationVar(&c.IdleTimeout, "console-idle-timeout", c.IdleTimeout, "close a serial console with no byte either way for this long")
	fs.IntVar(&c.MaxPerUser, "console-max-per-user", c.MaxPerUser, "open serial consoles allowed per user")
	fs.IntVar(&c.MaxSessions, "console-max-sessions", c.MaxSessions, "open serial consoles allowed per replica")
}

// User is who opens a console.
type User struct {
	Name     string
	Scope    auth.Scope
	ReadOnly bool
	// Protocol is the front end the console is asked over
	// (system.ProtocolSSH, system.ProtocolIPMI): refused while switched
	// off for the System ([Switches]). "": not switchable.
	Protocol string
}

// Switches says whether a protocol is switched on for a System
// (protocols.Switches, from the VM cache).
type Switches interface {
	ProtocolEnabled(key system.Key, protocol string) bool
}

// Systems tells whether a System exists and its VM's labels (for the
// scope's selector): the inventory's view, as the Redfish API reads it.
type Systems interface {
	Labels(ctx context.Context, key system.Key) (labels map[string]string, found bool)
}

// Opener opens consoles; one per replica, shared by every front end.
type Opener struct {
	cfg     Config
	rest    *rest.Config
	systems Systems
	// switches gates the protocols (nil: every protocol on).
	switches Switches

	mu     sync.Mutex
	open   map[system.Key]*stream
	byUser map[string]int
}

// New returns an Opener that dials virt-api as restCfg (the bridge's
// identity).
func New(restCfg *rest.Config, systems Systems, cfg Config) (*Opener, error) {
	if cfg.IdleTimeout <= 0 || cfg.MaxPerUser <= 0 || cfg.MaxSessions <= 0 {
		return nil, fmt.Errorf("console: idle timeout %v, max per user %d, max sessions %d: all must be positive", cfg.IdleTimeout, cfg.MaxPerUser, cfg.MaxSessions)
	}
	return &Opener{cfg: cfg, rest: rest.CopyConfig(restCfg), systems: systems, open: map[system.Key]*stream{}, byUser: map[string]int{}}, nil
}

// SetSwitches makes Open refuse a protocol switched off for a System
// (before the Opener serves).
func (o *Opener) SetSwitches(s Switches) { o.switches = s }

// Config is the Opener's configuration (the Manager shows MaxSessions).
func (o *Opener) Config() Config { return o.cfg }

// Open opens the serial console of System key for user. The Stream is the
// caller's to Close; ctx carries the logger the audit lines go to and
// bounds only the dial.
func (o *Opener) Open(ctx context.Context, user User, key system.Key) (Stream, error) {
	log := logctx.From(ctx).With("user", user.Name, "system", key.String())
	if user.ReadOnly {
		log.InfoContext(ctx, "console refused", "reason", ErrReadOnly.Error())
		return nil, ErrReadOnly
	}
	labels, found := o.systems.Labels(ctx, key)
	if !found || !user.Scope.Allows(key, labels) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, key.ID())
	}
	if user.Protocol != "" && o.switches != nil && !o.switches.ProtocolEnabled(key, user.Protocol) {
		log.InfoContext(ctx, "console refused", "reason", ErrDisabled.Error(), "protocol", user.Protocol)
		return nil, fmt.Errorf("%w: %s over %s", ErrDisabled, key.ID(), user.Protocol)
	}
	s, err := o.reserve(user.Name, key)
	if err != nil {
		log.InfoContext(ctx, "console refused", "reason", err.Error())
		return nil, err
	}
	conn, err := o.dial(ctx, key)
	if err != nil {
		o.release(s)
		log.WarnContext(ctx, "console open failed", "error", err)
		return nil, err
	}
	s.start(conn, log, o.cfg.IdleTimeout)
	log.InfoContext(ctx, "console opened")
	return s, nil
}

// reserve counts a new stream for user on key, or refuses it.
func (o *Opener) reserve(user string, key system.Key) (*stream, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, busy := o.open[key]; busy {
		return nil, ErrActive
	}
	if o.byUser[user] >= o.cfg.MaxPerUser || len(o.open) >= o.cfg.MaxSessions {
		return nil, ErrLimit
	}
	s := &stream{opener: o, user: user, key: key}
	o.open[key] = s
	o.byUser[user]++
	return s, nil
}

// release forgets a stream.
func (o *Opener) release(s *stream) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.open[s.key] == s {
		delete(o.open, s.key)
	}
	if o.byUser[s.user]--; o.byUser[s.user] <= 0 {
		delete(o.byUser, s.user)
	}
}

// OpenCount counts the streams open on this replica.
func (o *Opener) OpenCount() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.open)
}

// dial opens the WebSocket of key's console through kube-apiserver and
// virt-api.
func (o *Opener) dial(ctx context.Context, key system.Key) (*websocketConn, error) {
	rt, holder, err := websocket.RoundTripperFor(o.rest)
	if err != nil {
		return nil, fmt.Errorf("console: client for %s: %w", key, err)
	}
	u, err := url.Parse(o.rest.Host)
	if err != nil {
		return nil, fmt.Errorf("console: apiserver address: %w", err)
	}
	u.Path = kubevirt.VMISubresourcePath(key.Namespace, key.Name, kubevirt.ConsoleSubresource)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("console: request for %s: %w", key, err)
	}
	conn, err := websocket.Negotiate(rt, holder, req, kubevirt.PlainStreamProtocol)
	if u := (*httpstream.UpgradeFailureError)(nil); errors.As(err, &u) {
		err = u.Cause // the apiserver's or virt-api's Status, if it sent one
	}
	if err != nil {
		if isNotRunning(err) {
			return nil, fmt.Errorf("%w: %s: %w", ErrNotRunning, key.ID(), err)
		}
		return nil, fmt.Errorf("console: open %s: %w", key, err)
	}
	return &websocketConn{conn: conn}, nil
}

// VMs is a cache of the served VirtualMachines (the inventory): VM
// returns an error when key is not served.
type VMs interface {
	VM(key system.Key) (*unstructured.Unstructured, error)
}

// FromVMs is the [Systems] of a VM cache: a System exists when its VM is
// served, with the VM's labels.
func FromVMs(vms VMs) Systems { return vmSystems{vms} }

type vmSystems struct{ vms VMs }

func (s vmSystems) Labels(_ context.Context, key system.Key) (map[string]string, bool) {
	vm, err := s.vms.VM(key)
	if err != nil {
		return nil, false
	}
	return vm.GetLabels(), true
}
