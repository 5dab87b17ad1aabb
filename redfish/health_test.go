package redfish

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestSystemHealthAndBootProgress: the System shows the backend's Health
// (Status.Health and HealthRollup) and BootProgress, the documents validate
// against the DMTF ComputerSystem schema.
func TestSystemHealthAndBootProgress(t *testing.T) {
	e := newEnv(t)
	v := newValidator(t)
	const path = "/redfish/v1/Systems/team-a.vm1"
	at := time.Date(2026, 12, 3, 10, 0, 5, 0, time.FixedZone("CET", 3600))
	tests := []struct {
		name     string
		health   system.Health
		progress system.BootProgress
		status   map[string]any
		boot     map[string]any
	}{
		{"nothing derived yet", "", system.BootProgress{},
			map[string]any{"State": "Enabled", "Health": "OK", "HealthRollup": "OK"},
			map[string]any{"LastState": "None", "LastStateTime": nil}},
		{"booting", system.HealthOK, system.BootProgress{LastState: system.BootProgressOSBootStarted, LastStateTime: at},
			map[string]any{"State": "Enabled", "Health": "OK", "HealthRollup": "OK"},
			map[string]any{"LastState": "OSBootStarted", "LastStateTime": "2026-12-03T09:00:05Z"}},
		{"import failed", system.HealthWarning, system.BootProgress{LastState: system.BootProgressNone},
			map[string]any{"State": "Enabled", "Health": "Warning", "HealthRollup": "Warning"},
			map[string]any{"LastState": "None", "LastStateTime": nil}},
		{"guest crashed", system.HealthCritical, system.BootProgress{LastState: system.BootProgressNone, LastStateTime: at},
			map[string]any{"State": "Enabled", "Health": "Critical", "HealthRollup": "Critical"},
			map[string]any{"LastState": "None", "LastStateTime": "2026-12-03T09:00:05Z"}},
		{"OS running", system.HealthOK, system.BootProgress{LastState: system.BootProgressOSRunning, LastStateTime: at},
			map[string]any{"State": "Enabled", "Health": "OK", "HealthRollup": "OK"},
			map[string]any{"LastState": "OSRunning", "LastStateTime": "2026-12-03T09:00:05Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_ = e.fake.write(system.Key{Namespace: "team-a", Name: "vm1"}, "test", func(s *SystemView) error {
				s.Health, s.BootProgress = tt.health, tt.progress
				return nil
			})
			e.fake.takeCalls()
			rec := e.do(t, req{path: path, user: "alice"})
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
			}
			body := decode(t, rec)
			v.validate(t, path, body)
			if diff := cmp.Diff(tt.status, body["Status"]); diff != "" {
				t.Errorf("Status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.boot, body["BootProgress"]); diff != "" {
				t.Errorf("BootProgress (-want +got):\n%s", diff)
			}
		})
	}
}
