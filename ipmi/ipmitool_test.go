package ipmi

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// fakeBackend records what the endpoint asked and answers from state.
type fakeBackend struct {
	mu     sync.Mutex
	state  State
	resets []system.ResetType
	boots  []system.BootPatch
}

func (f *fakeBackend) State(context.Context, system.Key) (State, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state, nil
}

func (f *fakeBackend) Reset(_ context.Context, _ system.Key, kind system.ResetType) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resets = append(f.resets, kind)
	switch kind {
	case system.ResetOn:
		f.state.PowerState = system.PowerOn
	case system.ResetForceOff, system.ResetGracefulShutdown:
		f.state.PowerState = system.PowerOff
	}
	return nil
}

func (f *fakeBackend) SetBoot(_ context.Context, _ system.Key, p system.BootPatch) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.boots = append(f.boots, p)
	p.MergeInto(&f.state.Boot)
	if p.Mode != nil {
		f.state.BootMode = *p.Mode
	}
	return nil
}

var testKey = system.Key{Namespace: "ns1", Name: "vm1"}

// testUsers: alice may use ns1 over IPMI, bob has no IPMI password,
// carol has ns2 only, rita is ReadOnly in ns1.
func testUsers() auth.StaticUsers {
	return auth.StaticUsers{
		"rita":  {Name: "rita", IPMIPassword: []byte("rita-ipmi-pw"), Scope: auth.Scope{Namespaces: []string{"ns1"}}, ReadOnly: true},
		"alice": {Name: "alice", IPMIPassword: []byte("alice-ipmi-pw"), Scope: auth.Scope{Namespaces: []string{"ns1"}}},
		"bob":   {Name: "bob", Scope: auth.Scope{Namespaces: []string{"ns1"}}},
		"carol": {Name: "carol", IPMIPassword: []byte("carol-ipmi-pw"), Scope: auth.Scope{Namespaces: []string{"ns2"}}},
	}
}

// startServer runs a Server for testKey on a free UDP port of 127.0.0.1.
func startServer(t *testing.T, b Backend) (*Server, int) {
	t.Helper()
	return startServerWith(t, b, nil)
}

// startServerWith is startServer with consoles for SOL.
func startServerWith(t *testing.T, b Backend, consoles Consoles) (*Server, int) {
	t.Helper()
	port, err := testutil.FreeUDPPort()
	if err != nil {
		t.Fatal(err)
	}
	th := auth.NewThrottle()
	s := NewServer(Config{Address: "127.0.0.1", FirstPort: port, LastPort: port}, testUsers(), b, th, consoles)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	})
	if err := s.Sync(ctx, map[int]system.Key{port: testKey}); err != nil {
		t.Fatal(err)
	}
	return s, port
}

func TestIpmitool(t *testing.T) {
	b := &fakeBackend{state: State{PowerState: system.PowerOff, BootMode: system.BootUEFI}}
	_, port := startServer(t, b)
	run := func(t *testing.T, extra []string, args ...string) string {
		t.Helper()
		out, err := testutil.Ipmitool(t, port, "alice", "alice-ipmi-pw", extra, args...)
		if err != nil {
			t.Fatalf("ipmitool %v: %v\n%s", args, err, out)
		}
		return out
	}
	for _, cs := range []string{"17", "3"} {
		t.Run("cipher suite "+cs, func(t *testing.T) {
			out := run(t, []string{"-C", cs}, "mc", "info")
			if !strings.Contains(out, "IPMI Version              : 2.0") {
				t.Errorf("mc info:\n%s", out)
			}
		})
	}
	t.Run("power", func(t *testing.T) {
		if out := run(t, nil, "chassis", "power", "status"); !strings.Contains(out, "Chassis Power is off") {
			t.Errorf("status: %s", out)
		}
		run(t, nil, "chassis", "power", "on")
		if out := run(t, nil, "chassis", "power", "status"); !strings.Contains(out, "Chassis Power is on") {
			t.Errorf("status after on: %s", out)
		}
		run(t, nil, "chassis", "power", "reset")
		run(t, nil, "chassis", "power", "soft")
		run(t, nil, "chassis", "power", "on")
		run(t, nil, "chassis", "power", "off")
		b.mu.Lock()
		got := append([]system.ResetType(nil), b.resets...)
		b.mu.Unlock()
		want := []system.ResetType{system.ResetOn, system.ResetForceRestart, system.ResetGracefulShutdown, system.ResetOn, system.ResetForceOff}
		if strings.Join(asStrings(got), ",") != strings.Join(asStrings(want), ",") {
			t.Errorf("resets %v, want %v", got, want)
		}
	})
	t.Run("bootdev", func(t *testing.T) {
		run(t, nil, "chassis", "bootdev", "cdrom", "options=efiboot")
		b.mu.Lock()
		st := b.state
		b.mu.Unlock()
		if st.Boot.Target != system.BootCd || st.Boot.Enabled != system.BootOnce || st.BootMode != system.BootUEFI {
			t.Errorf("boot after bootdev cdrom efiboot: %+v mode %s", st.Boot, st.BootMode)
		}
		out := run(t, nil, "chassis", "bootparam", "get", "5")
		if !strings.Contains(out, "Force Boot from CD/DVD") || !strings.Contains(out, "BIOS EFI boot") {
			t.Errorf("bootparam get 5:\n%s", out)
		}
		run(t, nil, "chassis", "bootdev", "pxe", "options=persistent")
		b.mu.Lock()
		st = b.state
		b.mu.Unlock()
		if st.Boot.Target != system.BootPxe || st.Boot.Enabled != system.BootContinuous || st.BootMode != system.BootLegacy {
			t.Errorf("boot after bootdev pxe persistent: %+v mode %s", st.Boot, st.BootMode)
		}
		// ipmitool exits 0 on a refused parameter: its message says it.
		if out, _ := testutil.Ipmitool(t, port, "alice", "alice-ipmi-pw", nil, "chassis", "bootdev", "bios"); !strings.Contains(out, "Invalid data field in request") {
			t.Errorf("bootdev bios not refused with 0xCC:\n%s", out)
		}
	})
	// The classic holes, tried with the real client: each fails at once
	// with the BMC's refusal, and nothing runs.
	t.Run("refusals", func(t *testing.T) {
		// ipmitool names the RAKP status only with -v; the raw tests
		// (attacks_test.go) check each status.
		const noSession = "Unable to establish IPMI v2 / RMCP+ session"
		b.mu.Lock()
		before := len(b.resets)
		b.mu.Unlock()
		for _, tc := range []struct {
			name, user, password string
			extra                []string
			want                 string
		}{
			{"cipher suite 0", "alice", "alice-ipmi-pw", []string{"-C", "0"}, "invalid authentication algorithm"},
			{"wrong password", "alice", "wrong", nil, noSession},
			{"user without an IPMI password", "bob", "x", nil, noSession},
			{"user without the System in scope", "carol", "carol-ipmi-pw", nil, noSession},
			{"null user", "", "", nil, noSession},
		} {
			t.Run(tc.name, func(t *testing.T) {
				out, err := testutil.Ipmitool(t, port, tc.user, tc.password, tc.extra, "chassis", "power", "on")
				if err == nil || !strings.Contains(out, tc.want) {
					t.Errorf("ipmitool %s: err %v, want a failure saying %q:\n%s", tc.name, err, tc.want, out)
				}
			})
		}
		t.Run("IPMI v1.5", func(t *testing.T) {
			path, _ := exec.LookPath("ipmitool")
			out, err := exec.CommandContext(t.Context(), path, "-I", "lan", "-H", "127.0.0.1", "-p", strconv.Itoa(port),
				"-U", "alice", "-P", "alice-ipmi-pw", "-N", "1", "-R", "1", "chassis", "power", "on").CombinedOutput()
			if err == nil || !strings.Contains(string(out), "Unable to establish IPMI v1.5 / RMCP session") {
				t.Errorf("ipmitool -I lan: err %v, want no v1.5 session:\n%s", err, out)
			}
		})
		b.mu.Lock()
		defer b.mu.Unlock()
		if len(b.resets) != before {
			t.Errorf("a refused login ran %v", b.resets[before:])
		}
	})
	t.Run("other commands are invalid", func(t *testing.T) {
		out, err := testutil.Ipmitool(t, port, "alice", "alice-ipmi-pw", nil, "sdr", "list")
		if err == nil && !strings.Contains(out, "Invalid command") {
			t.Logf("sdr list:\n%s", out)
		}
		out, _ = testutil.Ipmitool(t, port, "alice", "alice-ipmi-pw", nil, "raw", "0x06", "0x04")
		if !strings.Contains(out, "rsp=0xc1") {
			t.Errorf("raw 0x06 0x04 (self test) answered:\n%s", out)
		}
	})
}

func asStrings(r []system.ResetType) []string {
	out := make([]string, len(r))
	for i, x := range r {
		out[i] = string(x)
	}
	return out
}
