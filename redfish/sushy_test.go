package redfish

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// sushyPython is the interpreter that has python3-sushy (Debian's; a pyenv
// python3 on PATH may lack it).
const sushyPython = "/usr/bin/python3"

// TestSushy drives the service with the real sushy library through
// Ironic's virtual-media boot sequence.
func TestSushy(t *testing.T) {
	if err := exec.CommandContext(t.Context(), sushyPython, "-c", "import sushy").Run(); err != nil {
		testutil.Missing(t, "python3-sushy not available (%v)", err)
	}
	for _, mode := range []string{"session", "basic"} {
		t.Run(mode, func(t *testing.T) { sushyFlow(t, mode) })
	}
}

func sushyFlow(t *testing.T, mode string) {
	e := newEnv(t)
	srv := httptest.NewServer(e.e)
	t.Cleanup(srv.Close)
	cmd := exec.CommandContext(t.Context(), sushyPython, "testdata/sushy_flow.py")
	cmd.Env = append(os.Environ(), "RF_URL="+srv.URL, "RF_USER=alice", "RF_PASSWORD=alice-pw", "RF_AUTH="+mode)
	var stderr = &limitedBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sushy flow: %v\n%s", err, stderr)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("sushy output %q: %v", out, err)
	}
	want := map[string]any{
		"session":    mode == "session",
		"systems":    []any{"/redfish/v1/Systems/team-a.vm1", "/redfish/v1/Systems/team-a.vm2"},
		"uuid":       "5f1c7d3e-0000-4000-8000-000000000001",
		"power":      "Off",
		"memory_gib": 4.0,
		"cpus":       4.0,
		"macs":       []any{"52:54:00:00:00:01"},
		"disk_bytes": []any{float64(10 << 30)},
		"managers":   []any{"team-a.vm1"},
		// sushy's parse of the Manager's SerialConsole.
		"serial_console": []any{true, 1.0, []any{"IPMI", "SSH"}},
		"media_ids":      []any{"cd0"},
		"media_types":    []any{"CD", "DVD"},
		// Inserted from the moment the insert is accepted (its import still
		// Pending here), so a client's eject-if-inserted ejects it.
		"media_after_insert": []any{"https://img.example/boot-1.iso", true},
		"boot":               []any{"Cd", "Once", "UEFI"},
		"power_after":        "On",
		"bad_reset":          "InvalidParameterValueError",
		"nmi":                "InvalidParameterValueError",
		"nmi_sent":           []any{400.0, "Base.1.9.3.PropertyValueNotInList"},
		"other_tenant":       "ResourceNotFoundError",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what sushy saw (-want +got):\n%s", diff)
	}
	wantCalls := []string{
		"eject team-a.vm1 cd0",
		"insert team-a.vm1 cd0 https://img.example/boot-1.iso",
		"boot team-a.vm1 - - UEFI",
		"boot team-a.vm1 Cd Once -",
		"reset team-a.vm1 On",
	}
	if diff := cmp.Diff(wantCalls, e.fake.takeCalls()); diff != "" {
		t.Errorf("backend calls (-want +got):\n%s", diff)
	}
}

// limitedBuffer keeps the first 64 KiB written to it.
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := 64<<10 - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return string(l.b) }
