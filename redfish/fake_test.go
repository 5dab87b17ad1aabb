package redfish

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/crypto/bcrypt"
	"k8s.io/apimachinery/pkg/labels"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/eventsub"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// fake is an in-memory backend: systems keyed by id, every write bumps the
// system's version, like a resourceVersion.
type fake struct {
	mu      sync.Mutex
	systems map[string]*SystemView
	rv      int
	inserts int
	// err, if set, is returned by every call; writeErr by every write.
	err, writeErr error
	// calls records the writes, e.g. "reset team-a.vm1 On".
	calls []string
	// lastInsert is the last InsertMedia request, credentials included.
	lastInsert system.MediaInsert
	// trust is each slot's trust, by "<system id>/<slot>".
	trust map[string]system.MediaTrust
	// membership is [Systems.Membership]; memberLists counts Members calls.
	membership  uint64
	memberLists int
	// gets counts Get calls.
	gets int
	// subs keeps event subscriptions (a Secret of a fake clientset);
	// testEvents records SubmitTestEvent calls as "<user> <event id>".
	subs       *eventsub.Store
	testEvents []string
	// switched are the protocols switched off, by system id.
	switched map[string]system.Protocols
}

func newFake() *fake {
	f := &fake{systems: map[string]*SystemView{}, trust: map[string]system.MediaTrust{}, switched: map[string]system.Protocols{},
		subs: eventsub.NewStore(kubefake.NewClientset(), "bridge", "events", eventsub.Limits{PerUser: fakeSubsPerUser})}
	f.add("team-a", "vm1", map[string]string{"tier": "gold"}, "52:54:00:00:00:01")
	f.add("team-a", "vm2", nil, "52:54:00:00:00:02")
	f.add("team-b", "vm3", nil, "")
	return f
}

// add adds a powered-off system (Membership changes).
func (f *fake) add(ns, name string, lbls map[string]string, mac string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v := &SystemView{
		Key:         system.Key{Namespace: ns, Name: name},
		UUID:        fmt.Sprintf("5f1c7d3e-0000-4000-8000-%012d", len(f.systems)+1),
		Labels:      lbls,
		PowerState:  system.PowerOff,
		BootMode:    system.BootUEFI,
		BootModes:   system.BootModes,
		Sockets:     2,
		Cores:       2,
		Threads:     1,
		MemoryBytes: 4 << 30,
		NICs:        []NIC{{Name: "default", MAC: mac}},
		Disks:       []Disk{{Name: "rootdisk", CapacityBytes: 10 << 30}, {Name: "media-cd0", CDROM: true, Slot: "cd0"}},
		Slots:       []system.MediaSlot{{Slot: "cd0"}},
	}
	f.systems[v.Key.ID()] = v
	f.bump(v)
	f.membership++
}

// remove deletes a system (Membership changes).
func (f *fake) remove(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.systems, id)
	f.membership++
}

// bump stands for a write moving the VM's resourceVersion (the view's
// Revision); an ETag is the digest of what a resource shows, so it must
// not follow it. Every change to a view must bump it (f.mu held).
func (f *fake) bump(v *SystemView) {
	f.rv++
	v.Revision = strconv.Itoa(f.rv)
}

func (f *fake) Revision(key system.Key) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if v, ok := f.systems[key.ID()]; ok && f.err == nil {
		return v.Revision
	}
	return ""
}

func (f *fake) List(_ context.Context, _ auth.Scope) ([]SystemView, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	var out []SystemView
	for _, id := range slices.Sorted(maps.Keys(f.systems)) {
		out = append(out, *f.systems[id])
	}
	return out, nil
}

func (f *fake) Membership() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.membership
}

func (f *fake) Members(_ context.Context, _ auth.Scope) ([]Member, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	f.memberLists++
	var out []Member
	for _, id := range slices.Sorted(maps.Keys(f.systems)) {
		out = append(out, Member{Key: f.systems[id].Key, Labels: f.systems[id].Labels})
	}
	return out, nil
}

func (f *fake) Get(_ context.Context, key system.Key) (SystemView, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	if f.err != nil {
		return SystemView{}, f.err
	}
	v, ok := f.systems[key.ID()]
	if !ok {
		return SystemView{}, fmt.Errorf("vm %s: %w", key, ErrNotFound)
	}
	return *v, nil
}

// write runs change on the system under lock, honouring f.err.
func (f *fake) write(key system.Key, call string, change func(v *SystemView) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	if f.writeErr != nil {
		return f.writeErr
	}
	v, ok := f.systems[key.ID()]
	if !ok {
		return fmt.Errorf("vm %s: %w", key, ErrNotFound)
	}
	if err := change(v); err != nil {
		return err
	}
	f.calls = append(f.calls, call)
	f.bump(v)
	return nil
}

func (f *fake) Reset(_ context.Context, key system.Key, kind system.ResetType) error {
	return f.write(key, "reset "+key.ID()+" "+string(kind), func(v *SystemView) error {
		switch kind {
		case system.ResetForceOff, system.ResetGracefulShutdown:
			v.PowerState = system.PowerOff
		default:
			v.PowerState = system.PowerOn
		}
		return nil
	})
}

func (f *fake) SetBoot(_ context.Context, key system.Key, p system.BootPatch) error {
	call := "boot " + key.ID()
	for _, s := range []*string{(*string)(p.Target), (*string)(p.Enabled), (*string)(p.Mode)} {
		if s == nil {
			call += " -"
		} else {
			call += " " + *s
		}
	}
	if p.HTTPBootURI != nil {
		call += " uri=" + *p.HTTPBootURI
	}
	return f.write(key, call, func(v *SystemView) error {
		if p.Target != nil {
			v.Boot.Target = *p.Target
		}
		if p.Enabled != nil {
			v.Boot.Enabled = *p.Enabled
		}
		if p.HTTPBootURI != nil {
			v.Boot.HTTPBootURI = *p.HTTPBootURI
		}
		if p.Mode != nil {
			if *p.Mode != system.BootUEFI && v.SecureBoot {
				return &RefusedValueError{Property: "Boot/BootSourceOverrideMode", Value: string(*p.Mode), ConflictsWith: "SecureBootEnable", Resolution: "Disable Secure Boot first."}
			}
			v.Boot.Mode, v.BootMode = *p.Mode, *p.Mode
		}
		return nil
	})
}

func (f *fake) SetSecureBoot(_ context.Context, key system.Key, enable bool) error {
	return f.write(key, fmt.Sprintf("secureboot %s %t", key.ID(), enable), func(v *SystemView) error {
		if enable && v.BootMode != system.BootUEFI {
			return &RefusedValueError{Property: "SecureBootEnable", Value: "true", ConflictsWith: "BootSourceOverrideMode", Resolution: "Set UEFI first."}
		}
		v.SecureBoot = enable
		return nil
	})
}

// ResetFirmware plays the VM whose author wrote no bootloader: its default
// is KubeVirt's, BIOS without Secure Boot.
func (f *fake) ResetFirmware(_ context.Context, key system.Key) error {
	return f.write(key, "resetbios "+key.ID(), func(v *SystemView) error {
		v.Boot.Mode, v.Boot.SecureBoot = "", ""
		v.BootMode, v.SecureBoot = system.BootLegacy, false
		return nil
	})
}

func (f *fake) Insert(_ context.Context, key system.Key, slot string, req system.MediaInsert) (system.MediaSlot, error) {
	var got system.MediaSlot
	image := req.Image
	err := f.write(key, "insert "+key.ID()+" "+slot+" "+image, func(v *SystemView) error {
		for i := range v.Slots {
			if v.Slots[i].Slot == slot {
				f.inserts++
				v.Slots[i] = system.MediaSlot{
					Slot: slot, Image: image, Phase: system.MediaPending,
					InsertID: fmt.Sprintf("ins-%d", f.inserts), Since: time.Unix(1700000000, 0),
					Credentials: req.HasCredentials(), ActionURI: req.ActionURI,
				}
				f.lastInsert = req
				got = v.Slots[i]
				return nil
			}
		}
		return fmt.Errorf("slot %s: %w", slot, ErrNotFound)
	})
	return got, err
}

func (f *fake) Eject(_ context.Context, key system.Key, slot string) error {
	return f.write(key, "eject "+key.ID()+" "+slot, func(v *SystemView) error {
		for i := range v.Slots {
			if v.Slots[i].Slot == slot {
				v.Slots[i] = system.MediaSlot{Slot: slot}
			}
		}
		return nil
	})
}

// setPhase moves a slot along the import state machine, as media/ would.
func (f *fake) setPhase(id, slot string, phase system.MediaPhase, reason string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v := f.systems[id]
	for i := range v.Slots {
		if v.Slots[i].Slot == slot {
			v.Slots[i].Phase, v.Slots[i].Reason = phase, reason
		}
	}
	f.bump(v)
}

func (f *fake) setErr(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

func (f *fake) failWrites(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writeErr = err
}

func (f *fake) takeCalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = nil
	return c
}

// Test users; passwords are the user name + "-pw".
var testUsers = []struct {
	name, namespaces, selector string
	readOnly                   bool
}{
	{"admin", "*", "", false},
	{"alice", "team-a", "", false},
	{"bob", "team-b", "", false},
	{"carol", "team-a", "tier=gold", false},
	{"rita", "team-a", "", true}, // ReadOnly
}

// env is a service over a fake backend.
type env struct {
	fake  *fake
	srv   *Server
	e     *echo.Echo
	auth  *auth.Authenticator
	revs  *memorySessions
	clock *testutil.Clock
}

var hashes = sync.OnceValue(func() map[string][]byte {
	out := map[string][]byte{}
	for _, u := range testUsers {
		h, err := bcrypt.GenerateFromPassword([]byte(u.name+"-pw"), bcrypt.MinCost)
		if err != nil {
			panic(err)
		}
		out[u.name] = h
	}
	return out
})

// backendsOf is every backend served by f, with authenticator a: the one
// place the tests name each backend.
func backendsOf(f *fake, a *auth.Authenticator) Backends {
	return Backends{Systems: f, Power: f, Boot: f, Media: f, Trust: f, Events: f, EventPatches: f, Auth: a, Logs: oneEntryLogs{}, Protocols: f}
}

// oneEntryLogs is an event log holding one power-on event of every System.
type oneEntryLogs struct{}

func (oneEntryLogs) Entries(key system.Key) []event.Event {
	return []event.Event{{ID: "e1", System: key, MessageID: "ResourceEvent.1.3.0.ResourcePoweredOn",
		Message: "The resource `" + key.ID() + "` has powered on.", MessageArgs: []string{key.ID()},
		Severity: event.SeverityOK, Origin: "/redfish/v1/Systems/" + key.ID(), ResourceType: "ComputerSystem",
		Time: time.Unix(1800000000, 0)}}
}
func (oneEntryLogs) Clear(system.Key) {}
func (oneEntryLogs) PerSystem() int   { return 1 }

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, nil)
}

// newEnvWith is newEnv with the backends edited by edit (nil: as they are).
func newEnvWith(t *testing.T, edit func(*Backends)) *env {
	t.Helper()
	users := auth.StaticUsers{}
	for _, u := range testUsers {
		sel := labels.Everything()
		if u.selector != "" {
			var err error
			if sel, err = labels.Parse(u.selector); err != nil {
				t.Fatal(err)
			}
		}
		users[u.name] = auth.User{Name: u.name, PasswordHash: hashes()[u.name],
			Scope: auth.Scope{Namespaces: []string{u.namespaces}, Selector: sel}, ReadOnly: u.readOnly}
	}
	clk := testutil.NewClock(time.Unix(1800000000, 0))
	revs := &memorySessions{MemoryRevocations: testutil.MemoryRevocations{Now: clk.Now}}
	a, err := auth.New(auth.Config{
		Users: users, Revocations: revs, Sessions: revs, Key: []byte("0123456789abcdef0123456789abcdef"),
		SessionTTL: time.Hour, Now: clk.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	f := newFake()
	bs := backendsOf(f, a)
	if edit != nil {
		edit(&bs)
	}
	srv, e, err := newServer(Config{ServiceUUID: "8a3d1f0e-1111-4222-8333-444455556666", Version: "1.0.0",
		Logger: slog.New(slog.DiscardHandler), Now: clk.Now}, bs)
	if err != nil {
		t.Fatal(err)
	}
	return &env{fake: f, srv: srv, e: e, auth: a, revs: revs, clock: clk}
}

// fakeIPMIPorts are the fake's IPMI ports (team-a.vm1 only); every
// System's SSH console is on fakeSSHPort.
var fakeIPMIPorts = map[string]int{"team-a.vm1": 6231}

const fakeSSHPort = 2222

// Protocols serves IPMI on fakeIPMIPorts and SSH, as switched.
func (f *fake) Protocols(_ context.Context, key system.Key) (ManagerProtocols, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return ManagerProtocols{}, f.err
	}
	p := f.switched[key.ID()]
	port, ok := fakeIPMIPorts[key.ID()]
	return ManagerProtocols{
		IPMI: Protocol{Served: true, Enabled: ok && !p.IPMIOff, Port: port},
		SSH:  Protocol{Served: true, Enabled: !p.SSHOff, Port: fakeSSHPort},
	}, nil
}

func (f *fake) SwitchProtocols(_ context.Context, key system.Key, sw system.ProtocolSwitch) error {
	call := "protocols " + key.ID()
	if sw.IPMI != nil {
		call += fmt.Sprintf(" IPMI=%t", *sw.IPMI)
	}
	if sw.SSH != nil {
		call += fmt.Sprintf(" SSH=%t", *sw.SSH)
	}
	return f.write(key, call, func(*SystemView) error {
		p := f.switched[key.ID()]
		sw.MergeInto(&p)
		f.switched[key.ID()] = p
		return nil
	})
}
