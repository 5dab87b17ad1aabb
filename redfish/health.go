package redfish

import (
	"time"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// systemStatus is the System's Status: Health (and its rollup, the System
// having no sub-resource health of its own) as the backend derived it.
func systemStatus(v SystemView) obj {
	h := v.Health
	if h == "" {
		h = system.HealthOK
	}
	return obj{"State": "Enabled", "Health": h, "HealthRollup": h}
}

// bootProgress is the System's BootProgress; LastStateTime is null when
// unknown.
func bootProgress(v SystemView) obj {
	st := v.BootProgress.LastState
	if st == "" {
		st = system.BootProgressNone
	}
	out := obj{"LastState": st, "LastStateTime": nil}
	if t := v.BootProgress.LastStateTime; !t.IsZero() {
		out["LastStateTime"] = t.UTC().Format(time.RFC3339)
	}
	return out
}
