package eventlog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/manager"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// PerSystem is how many entries a System's log keeps (the newest).
const PerSystem = 64

// busBuffer is how many events the log may fall behind the bus before it
// loses some (the bus ends its subscription; the log subscribes again).
const busBuffer = 4096

// Log is every System's event log. Safe for concurrent use.
type Log struct {
	bus  *event.Bus
	keep int
	mu   sync.Mutex
	logs map[system.Key][]event.Event // oldest first, at most keep
	sub  *event.Subscription
}

// New builds the log of the events published on bus from now on, keeping
// keep entries per System (PerSystem when keep < 1).
func New(bus *event.Bus, keep int) *Log {
	if keep < 1 {
		keep = PerSystem
	}
	return &Log{bus: bus, keep: keep, logs: map[system.Key][]event.Event{}, sub: bus.Subscribe(busBuffer)}
}

// Add adds l to mgr's Servers group (every replica keeps its own log);
// the Redfish LogServices read it, built before the parts are added.
func Add(mgr *manager.Manager, l *Log) error {
	if err := mgr.Add(l, manager.Servers); err != nil {
		return fmt.Errorf("event log: %w", err)
	}
	return nil
}

// PerSystem is how many entries each System's log keeps.
func (l *Log) PerSystem() int { return l.keep }

// Start records the bus's events until ctx ends. Fallen behind (the bus
// ended its subscription), it logs how and subscribes again: the events
// in between are not in the log.
func (l *Log) Start(ctx context.Context) error {
	sub := l.sub
	defer func() { sub.Close() }()
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-sub.C:
			if ok {
				l.record(e)
				continue
			}
			if errors.Is(sub.Err(), event.ErrClosed) {
				<-ctx.Done()
				return nil
			}
			logctx.From(ctx).WarnContext(ctx, "event log fell behind the events: some are not logged", "err", sub.Err())
			sub = l.bus.Subscribe(busBuffer)
		}
	}
}

// record appends e to its System's log; an event of no System (a test
// event) is logged nowhere.
func (l *Log) record(e event.Event) {
	if e.System == (system.Key{}) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	log := l.logs[e.System]
	if len(log) >= l.keep {
		log = slices.Delete(log, 0, len(log)-l.keep+1)
	}
	l.logs[e.System] = append(log, e)
}

// Entries is key's log, oldest first (a copy).
func (l *Log) Entries(key system.Key) []event.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.logs[key])
}

// Clear empties key's log on this replica.
func (l *Log) Clear(key system.Key) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.logs, key)
}
