package system

import "testing"

// TestInserted: an accepted insert is Inserted until it is ejected or its
// import fails, so a client's eject-if-inserted ejects a running import.
func TestInserted(t *testing.T) {
	for _, tc := range []struct {
		phase MediaPhase
		want  bool
	}{
		{MediaEmpty, false},
		{MediaPending, true},
		{MediaImporting, true},
		{MediaReady, true},
		{MediaFailed, false},
	} {
		t.Run(string(tc.phase), func(t *testing.T) {
			if got := (MediaSlot{Slot: "cd0", Image: "http://x/a.iso", Phase: tc.phase}).Inserted(); got != tc.want {
				t.Errorf("Inserted() of a %q slot = %v, want %v", tc.phase, got, tc.want)
			}
		})
	}
}
