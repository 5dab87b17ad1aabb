package system

import "time"

// Health is Status.Health of a resource: only Redfish enum values.
type Health string

// Redfish Health values, in increasing severity.
const (
	HealthOK       Health = "OK"
	HealthWarning  Health = "Warning"
	HealthCritical Health = "Critical"
)

// Worse returns the more severe of h and o.
func (h Health) Worse(o Health) Health {
	rank := map[Health]int{HealthOK: 0, HealthWarning: 1, HealthCritical: 2}
	if rank[o] > rank[h] {
		return o
	}
	return h
}

// BootProgressState is ComputerSystem BootProgress.LastState; the bridge
// uses only the values a VirtualMachine can honestly show.
type BootProgressState string

// The BootProgressTypes values the bridge reports (DMTF ComputerSystem
// v1_13_0 and later).
const (
	// BootProgressNone: the system is not booting (off, or not yet placed
	// on a node).
	BootProgressNone BootProgressState = "None"
	// BootProgressOSBootStarted: the virtual firmware is running and boots
	// the OS (the VMI is Running; without a guest agent the bridge cannot
	// see further).
	BootProgressOSBootStarted BootProgressState = "OSBootStarted"
	// BootProgressOSRunning: the guest agent is connected, so the OS runs.
	BootProgressOSRunning BootProgressState = "OSRunning"
)

// BootProgress is ComputerSystem.BootProgress.
type BootProgress struct {
	LastState BootProgressState
	// LastStateTime is when LastState was entered; zero when unknown.
	LastStateTime time.Time
}
