package kubevirt

import kubevirtv1 "kubevirt.io/api/core/v1"

// Phase is a VMI's status.phase.
type Phase = kubevirtv1.VirtualMachineInstancePhase

// VMI phases.
const (
	PhaseUnset      = kubevirtv1.VmPhaseUnset
	PhasePending    = kubevirtv1.Pending
	PhaseScheduling = kubevirtv1.Scheduling
	PhaseScheduled  = kubevirtv1.Scheduled
	PhaseRunning    = kubevirtv1.Running
	PhaseSucceeded  = kubevirtv1.Succeeded
	PhaseFailed     = kubevirtv1.Failed
)

// RunStrategyValue is a VM's spec.runStrategy.
type RunStrategyValue = kubevirtv1.VirtualMachineRunStrategy

// Run strategies the bridge writes or reads.
const (
	RunStrategyAlways         = kubevirtv1.RunStrategyAlways
	RunStrategyHalted         = kubevirtv1.RunStrategyHalted
	RunStrategyManual         = kubevirtv1.RunStrategyManual
	RunStrategyRerunOnFailure = kubevirtv1.RunStrategyRerunOnFailure
)

// StateChangeAction is the action of a status.stateChangeRequests entry.
type StateChangeAction = kubevirtv1.StateChangeRequestAction

// State change actions virt-controller understands.
const (
	StartRequest = kubevirtv1.StartRequest
	StopRequest  = kubevirtv1.StopRequest
)

// RebootPolicyTerminate is the rebootPolicy (v1.9, T.domain.rebootPolicy,
// feature gate RebootPolicy) that ends the VMI when the guest reboots,
// instead of rebooting the domain in place with the boot order it was
// started with.
const RebootPolicyTerminate = string(kubevirtv1.RebootPolicyTerminate)

// Condition types the bridge reads.
const (
	ConditionFailure         = string(kubevirtv1.VirtualMachineFailure)
	ConditionRestartRequired = string(kubevirtv1.VirtualMachineRestartRequired)
	ConditionPaused          = string(kubevirtv1.VirtualMachineInstancePaused)
	ConditionAgentConnected  = string(kubevirtv1.VirtualMachineInstanceAgentConnected)
	// ReasonPausedIOError is the Paused condition's reason when the guest
	// was paused on a storage I/O error.
	ReasonPausedIOError = "PausedIOError"
)

// ControllerFieldManager is the field manager of virt-controller's own
// writes to a VM (operation Update; its status writes too, on the status
// subresource).
const ControllerFieldManager = "virt-controller"

// Status is a VM's status.printableStatus.
type Status = kubevirtv1.VirtualMachinePrintableStatus

// Printable statuses of a VM virt-controller has synced: halted, running.
const (
	StatusStopped = kubevirtv1.VirtualMachineStatusStopped
	StatusRunning = kubevirtv1.VirtualMachineStatusRunning
)

// CriticalStatuses are the printable statuses of a VM that cannot run as
// asked.
var CriticalStatuses = []Status{
	kubevirtv1.VirtualMachineStatusCrashLoopBackOff,
	kubevirtv1.VirtualMachineStatusUnschedulable,
	kubevirtv1.VirtualMachineStatusErrImagePull,
	kubevirtv1.VirtualMachineStatusImagePullBackOff,
	kubevirtv1.VirtualMachineStatusPvcNotFound,
	kubevirtv1.VirtualMachineStatusDataVolumeError,
	kubevirtv1.VirtualMachineStatusUnknown,
}
