package eventstream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/eventdelivery"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// ErrLimit is a stream refused because its user holds
// [Config.MaxPerUser] streams open on this replica.
var ErrLimit = errors.New("event stream limit reached")

// ErrSessionEnded ends the streams of a session that logged out.
var ErrSessionEnded = errors.New("the stream's session ended")

// ErrTooSlow ends a stream whose client did not read its events as fast
// as they came: [Config.Buffer] events waited.
var ErrTooSlow = errors.New("the stream's client fell behind: dropped")

// VMs are the cached VirtualMachines (inventory.Inventory), read for the
// labels a user's scope selects on.
type VMs interface {
	VM(key system.Key) (*unstructured.Unstructured, error)
}

// Sessions says whether a session was logged out on any replica
// (auth.Revocations).
type Sessions interface {
	Revoked(ctx context.Context, id string) (bool, error)
}

// Streams are this replica's Server-Sent Event streams.
type Streams struct {
	cfg      Config
	bus      *event.Bus
	vms      VMs
	sessions Sessions

	mu        sync.Mutex
	perUser   map[string]int
	bySession map[string]map[*Stream]struct{}
}

// New returns the streams of bus, scoped by vms' labels; sessions (nil:
// none) tells a stream that its session was logged out on another
// replica.
func New(cfg Config, bus *event.Bus, vms VMs, sessions Sessions) (*Streams, error) {
	if bus == nil || vms == nil {
		return nil, errors.New("event streams: bus and VMs are required")
	}
	return &Streams{cfg: cfg.withDefaults(), bus: bus, vms: vms, sessions: sessions,
		perUser: map[string]int{}, bySession: map[string]map[*Stream]struct{}{}}, nil
}

// WriteTimeout bounds writing one frame to a client.
func (ss *Streams) WriteTimeout() time.Duration { return ss.cfg.WriteTimeout }

// Frame is one thing to write on a stream: an event (ID and Data, the
// Redfish Event's JSON), or a comment (Data nil): Comment, or a
// keep-alive when Comment is "".
type Frame struct {
	ID      string
	Data    []byte
	Comment string
}

// NotHeld is the comment a stream opened with a Last-Event-ID this
// replica does not hold starts with: it receives events from its
// opening, and may have missed some before.
const NotHeld = "Last-Event-ID not held: events published before this stream may have been missed"

// maxLastEventID bounds the Last-Event-ID looked up (the bridge's are 32
// characters); a longer one is not held.
const maxLastEventID = 256

// Stream is one client's stream: the events published from its opening
// (or after its Last-Event-ID) that its filter lets through and its user
// may read.
type Stream struct {
	ss     *Streams
	p      auth.Principal
	filter Filter
	sub    *event.Subscription
	// missed are the events published after the client's Last-Event-ID
	// and before the stream opened, sent first; notHeld says the
	// Last-Event-ID was not held (one [NotHeld] comment is sent first).
	missed  []event.Event
	notHeld bool
	tick    *time.Ticker
	ended   chan error
	once    sync.Once
}

// Open opens a stream for p with $filter filter, resuming after the
// event lastEventID (the Last-Event-ID a reconnecting client sends; ""
// none): the events held that were published after it come first, then
// the live ones, none twice and none left out between them. A
// lastEventID not held starts the stream from now, its first frame the
// [NotHeld] comment. The error is a [*FilterError] for a filter refused,
// [ErrLimit] past the user's cap.
func (ss *Streams) Open(p auth.Principal, filter, lastEventID string) (*Stream, error) {
	f, err := ParseFilter(filter)
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if n := ss.perUser[p.User]; n >= ss.cfg.MaxPerUser {
		return nil, fmt.Errorf("user %q holds %d streams: %w (at most %d per user)", p.User, n, ErrLimit, ss.cfg.MaxPerUser)
	}
	ss.perUser[p.User]++
	st := &Stream{ss: ss, p: p, filter: f, tick: time.NewTicker(ss.cfg.KeepAlive), ended: make(chan error, 1)}
	if lastEventID == "" {
		st.sub = ss.bus.Subscribe(ss.cfg.Buffer)
	} else {
		held := false
		if len(lastEventID) <= maxLastEventID {
			st.sub, st.missed, held = ss.bus.SubscribeAfter(lastEventID, ss.cfg.Buffer)
		} else {
			st.sub = ss.bus.Subscribe(ss.cfg.Buffer)
		}
		st.notHeld = !held
	}
	if p.Session != "" {
		if ss.bySession[p.Session] == nil {
			ss.bySession[p.Session] = map[*Stream]struct{}{}
		}
		ss.bySession[p.Session][st] = struct{}{}
	}
	return st, nil
}

// SessionEnded ends the open streams of session id at once (the logout
// hook of this replica; another replica's logout is seen at the next
// keep-alive).
func (ss *Streams) SessionEnded(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for st := range ss.bySession[id] {
		select {
		case st.ended <- ErrSessionEnded:
		default:
		}
	}
}

// Count reports how many streams are open on this replica.
func (ss *Streams) Count() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	n := 0
	for _, c := range ss.perUser {
		n += c
	}
	return n
}

// Close ends the stream and gives back its place under the user's cap.
func (st *Stream) Close() {
	st.once.Do(func() {
		st.sub.Close()
		st.tick.Stop()
		ss := st.ss
		ss.mu.Lock()
		defer ss.mu.Unlock()
		if ss.perUser[st.p.User]--; ss.perUser[st.p.User] <= 0 {
			delete(ss.perUser, st.p.User)
		}
		if m := ss.bySession[st.p.Session]; m != nil {
			delete(m, st)
			if len(m) == 0 {
				delete(ss.bySession, st.p.Session)
			}
		}
	})
}

// Next waits for the next frame: an event that passes, or a keep-alive
// once KeepAlive passed without one. The error ends the stream: ctx's,
// [ErrSessionEnded] or [ErrTooSlow].
func (st *Stream) Next(ctx context.Context) (Frame, error) {
	if st.notHeld {
		st.notHeld = false
		return Frame{Comment: NotHeld}, nil
	}
	for len(st.missed) > 0 {
		e := st.missed[0]
		st.missed = st.missed[1:]
		if f, ok, err := st.frame(e); ok || err != nil {
			return f, err
		}
	}
	for {
		select {
		case <-ctx.Done():
			return Frame{}, ctx.Err()
		case err := <-st.ended:
			return Frame{}, err
		case <-st.tick.C:
			if st.revoked(ctx) {
				return Frame{}, ErrSessionEnded
			}
			return Frame{}, nil
		case e, ok := <-st.sub.C:
			if !ok {
				return Frame{}, fmt.Errorf("%w: %w", ErrTooSlow, st.sub.Err())
			}
			if f, ok, err := st.frame(e); ok || err != nil {
				return f, err
			}
		}
	}
}

// frame is e's frame if the stream's filter lets it through and its
// user may read it (ok false: skip it).
func (st *Stream) frame(e event.Event) (f Frame, ok bool, err error) {
	if !st.filter.Matches(e, eventdelivery.EventType) || !st.mayRead(e.System) {
		return Frame{}, false, nil
	}
	data, err := eventdelivery.Body(e, eventdelivery.EventType, "")
	if err != nil {
		return Frame{}, false, err
	}
	st.tick.Reset(st.ss.cfg.KeepAlive)
	return Frame{ID: e.ID, Data: data}, true, nil
}

// revoked reports whether the stream's session was logged out on any
// replica.
func (st *Stream) revoked(ctx context.Context) bool {
	if st.p.Session == "" || st.ss.sessions == nil {
		return false
	}
	revoked, err := st.ss.sessions.Revoked(ctx, st.p.Session)
	return err == nil && revoked
}

// mayRead reports whether the stream's user may read sys: an event of
// the service itself only an unrestricted user, one of a System whose
// labels are unknown only a user whose scope needs none.
func (st *Stream) mayRead(sys system.Key) bool {
	sc := st.p.Scope
	if sys == (system.Key{}) {
		return sc.Unrestricted()
	}
	vm, err := st.ss.vms.VM(sys)
	if err != nil {
		return sc.AllowsNamespace(sys.Namespace) && (sc.Selector == nil || sc.Selector.Empty())
	}
	return sc.Allows(sys, vm.GetLabels())
}
