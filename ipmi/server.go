package ipmi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Defaults of [Config].
const (
	DefaultSessionTimeout = 60 * time.Second
	// SetupTimeout is how long a session may stay between Open Session
	// and RAKP 3 (ipmitool takes milliseconds).
	SetupTimeout = 10 * time.Second
	// MaxSessionsPerAddress bounds the sessions (set up or active) of
	// one client address ([addrkey]: an IPv6 /64 is one).
	MaxSessionsPerAddress = 8
	// DefaultMaxSessions bounds all sessions of the bridge replica.
	DefaultMaxSessions = 4096
	// maxInFlight bounds the datagrams handled at once; beyond it they
	// are dropped (the client retries), so a flood holds bounded memory.
	maxInFlight = 256
)

// ErrRefused is wrapped by a [Backend] error for a request the system
// refuses in its present state (completion code 0xD5).
var ErrRefused = errors.New("refused in the present state")

// State is what the IPMI commands read of a System.
type State struct {
	// Labels are the VM's labels, matched against the user's scope.
	Labels     map[string]string
	PowerState system.PowerState
	Boot       system.BootOverride
	// BootMode is the firmware of the next boot.
	BootMode system.BootMode
}

// Backend is what the endpoint needs of the bridge: the same verbs the
// Redfish backend calls (reads from the caches, writes through the power
// and boot concern writers).
type Backend interface {
	// State reads the System.
	State(ctx context.Context, key system.Key) (State, error)
	// Reset is #ComputerSystem.Reset.
	Reset(ctx context.Context, key system.Key, kind system.ResetType) error
	// SetBoot is a PATCH of the System's Boot.
	SetBoot(ctx context.Context, key system.Key, patch system.BootPatch) error
}

// Server is the IPMI part: one UDP socket per System with a port, all
// sharing one session table.
type Server struct {
	cfg      Config
	users    auth.Users
	backend  Backend
	consoles Consoles
	throttle *auth.Throttle
	sessions *sessions
	now      func() time.Time
	inFlight chan struct{}
	// solRetry is how long a SOL packet waits for its acknowledgement
	// before it is sent again.
	solRetry time.Duration
	// unorderedSOL hands SOL packets to goroutines of their own like any
	// other datagram: only the negative control of
	// TestSOLPacketsHandledInArrivalOrder sets it.
	unorderedSOL atomic.Bool

	mu    sync.Mutex
	socks map[int]*socket // by port
	ctx   context.Context //nolint:containedctx // the part's context, for sockets opened by Sync after Start
	wg    sync.WaitGroup
}

type socket struct {
	conn *net.UDPConn
	ep   *endpoint
}

// NewServer builds the server; it serves nothing until Start and Sync.
// consoles opens the serial consoles Serial-over-LAN relays (nil: SOL is
// disabled, Activate Payload answers 0x81).
func NewServer(cfg Config, users auth.Users, backend Backend, throttle *auth.Throttle, consoles Consoles) *Server {
	cfg.defaults()
	return &Server{
		cfg: cfg, users: users, backend: backend, throttle: throttle, consoles: consoles,
		sessions: newSessions(), now: time.Now, solRetry: solRetryInterval,
		inFlight: make(chan struct{}, maxInFlight),
		socks:    map[int]*socket{},
	}
}

// userFor returns the user called name if it has an IPMI password and
// key is in its scope.
func (s *Server) userFor(ctx context.Context, name string, key system.Key) (auth.User, bool) {
	u, err := s.users.Lookup(ctx, name)
	if err != nil || len(u.IPMIPassword) == 0 {
		return auth.User{}, false
	}
	st, err := s.backend.State(ctx, key)
	if err != nil || !u.Scope.Allows(key, st.Labels) {
		return auth.User{}, false
	}
	return u, true
}

// Start serves until ctx ends, expiring idle sessions.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	s.ctx = ctx
	for _, sk := range s.socks {
		s.serve(ctx, sk)
	}
	s.mu.Unlock()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			s.mu.Lock()
			for port, sk := range s.socks {
				_ = sk.conn.Close()
				delete(s.socks, port)
			}
			s.mu.Unlock()
			s.wg.Wait()
			s.sessions.removeAll() // and the SOL payloads they hold: their streams close
			return nil
		case <-tick.C:
			s.sessions.expire(s.now(), SetupTimeout, s.cfg.SessionTimeout)
		}
	}
}

// Sync makes the server listen on exactly the ports of want, each for its
// System: it opens the new ones and closes the ones gone. A port it
// cannot bind is reported and the others are served.
func (s *Server) Sync(ctx context.Context, want map[int]system.Key) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for port, sk := range s.socks {
		if key, ok := want[port]; !ok || key != sk.ep.key {
			_ = sk.conn.Close()
			delete(s.socks, port)
		}
	}
	var errs []error
	for port, key := range want {
		if _, ok := s.socks[port]; ok {
			continue
		}
		addr, err := net.ResolveUDPAddr("udp", net.JoinHostPort(s.cfg.Address, strconv.Itoa(port)))
		if err != nil {
			errs = append(errs, fmt.Errorf("ipmi port %d for %s: %w", port, key, err))
			continue
		}
		conn, err := net.ListenUDP("udp", addr)
		if err != nil {
			errs = append(errs, fmt.Errorf("ipmi port %d for %s: %w", port, key, err))
			continue
		}
		sk := &socket{conn: conn, ep: newEndpoint(s, key)}
		sk.ep.port = uint16(port) //nolint:gosec // a port of the validated range
		sk.ep.sendTo = func(b []byte, to netip.AddrPort) {
			if _, err := conn.WriteToUDPAddrPort(b, to); err != nil && !errors.Is(err, net.ErrClosed) {
				logctx.From(ctx).DebugContext(ctx, "ipmi: SOL packet not sent", "peer", to.String(), "error", err.Error())
			}
		}
		s.socks[port] = sk
		if s.ctx != nil {
			s.serve(s.ctx, sk)
		}
	}
	if err := errors.Join(errs...); err != nil {
		logctx.From(ctx).WarnContext(ctx, "ipmi: ports not served", "error", err.Error())
		return err
	}
	return nil
}

// serve reads sk until its socket closes. Called with s.mu held.
func (s *Server) serve(ctx context.Context, sk *socket) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		buf := make([]byte, 2048)
		for {
			n, from, err := sk.conn.ReadFromUDPAddrPort(buf)
			if err != nil {
				if !errors.Is(err, net.ErrClosed) {
					logctx.From(ctx).WarnContext(ctx, "ipmi: read failed, port closed", "system", sk.ep.key.String(), "error", err.Error())
				}
				return
			}
			select {
			case s.inFlight <- struct{}{}:
			default:
				continue // saturated: dropped, the client retries
			}
			pkt := append([]byte(nil), buf[:n]...)
			if sol := s.solPayloadOf(pkt, from); sol != nil && !s.unorderedSOL.Load() {
				<-s.inFlight
				sol.enqueue(pkt, from) // handled in the order the client's SOL packets arrived
				continue
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer func() { <-s.inFlight }()
				s.answer(ctx, sk, pkt, from)
			}()
		}
	}()
}

// solPayloadOf is the active SOL payload whose session pkt's SOL
// payload names, when it comes from the session's client; nil for any
// other datagram (each handled on its own goroutine). Only the session ID
// and the sender are read here (another sender cannot fill the payload's
// queue); the payload's handler checks the packet as any other.
func (s *Server) solPayloadOf(pkt []byte, from netip.AddrPort) *solPayload {
	class, body, err := rmcpHeader(pkt)
	if err != nil || class != rmcpClassIPMI {
		return nil
	}
	p, err := parsePacket(body)
	if err != nil || p.v15 || p.sessionID == 0 || p.payloadType != payloadSOL {
		return nil
	}
	sess := s.sessions.get(p.sessionID)
	if sess == nil || sess.peer != from {
		return nil
	}
	return sess.sol.Load()
}

// answer handles one datagram and sends its reply, if any, then runs
// what the request started (a SOL payload's first packet must follow the
// Activate Payload answer, never pass it).
func (s *Server) answer(ctx context.Context, sk *socket, pkt []byte, from netip.AddrPort) {
	out, then := sk.ep.handleThen(ctx, pkt, from)
	if out != nil {
		if _, err := sk.conn.WriteToUDPAddrPort(out, from); err != nil && !errors.Is(err, net.ErrClosed) {
			logctx.From(ctx).DebugContext(ctx, "ipmi: reply not sent", "peer", from.String(), "error", err.Error())
		}
	}
	if then != nil {
		then()
	}
}

// Sessions is the number of sessions (set up or active).
func (s *Server) Sessions() int { return s.sessions.count() }
