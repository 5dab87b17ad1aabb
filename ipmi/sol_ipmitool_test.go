package ipmi

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// solGuard bounds a wait for ipmitool: a failure guard, never what
// decides a result.
const solGuard = 2 * time.Minute

// TestIpmitoolSOL drives Debian's ipmitool 1.8.19 `sol activate` (stdin
// piped) against the endpoint with a console whose guest prints a login
// prompt and echoes: ipmitool shows the prompt and its own input echoed;
// a second sol activate is refused "payload already active"; sol info
// reads the configuration; ~. leaves, deactivates the payload and closes
// the console stream; a User-level session (IPMI's read-only role) is
// refused with "insufficient privilege".
func TestIpmitoolSOL(t *testing.T) {
	cons := newFakeConsoles()
	_, port := startServerWith(t, offBackend(), cons)
	c := testutil.StartSOL(t, port, "alice", "alice-ipmi-pw")
	c.WaitFor(t, "[SOL Session operational.  Use ~? for help]")
	c.WaitFor(t, fakeLoginPrompt)
	st := <-cons.opened
	c.Type(t, "root\r")
	c.WaitFor(t, fakeLoginPrompt+"root\r")

	t.Run("second activation refused", func(t *testing.T) {
		out, err := testutil.Ipmitool(t, port, "alice", "alice-ipmi-pw", nil, "sol", "activate")
		if err == nil || !strings.Contains(out, "Info: SOL payload already active on another session") {
			t.Errorf("second sol activate: err %v:\n%s", err, out)
		}
	})
	t.Run("sol info", func(t *testing.T) {
		out, err := testutil.Ipmitool(t, port, "alice", "alice-ipmi-pw", nil, "sol", "info")
		if err != nil || !strings.Contains(out, "Enabled                         : true") ||
			!strings.Contains(out, "Payload Port                    : "+strconv.Itoa(port)) {
			t.Errorf("sol info: err %v:\n%s", err, out)
		}
	})
	c.Type(t, "~.")
	if err := c.Wait(t); err != nil {
		t.Errorf("ipmitool after ~.: %v\n%s", err, c.Output())
	}
	if !strings.Contains(c.Output(), "[terminated ipmitool]") {
		t.Errorf("no termination message:\n%s", c.Output())
	}
	select {
	case <-st.Done():
	case <-time.After(solGuard):
		t.Fatal("the console stream stayed open after ~.")
	}

	t.Run("User-level session refused", func(t *testing.T) {
		out, err := testutil.Ipmitool(t, port, "alice", "alice-ipmi-pw", []string{"-L", "USER"}, "sol", "activate")
		if err == nil || !strings.Contains(out, "Insufficient privilege level") {
			t.Errorf("sol activate at User level: err %v:\n%s", err, out)
		}
	})
}
