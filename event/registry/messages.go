package registry

// ResourceEvent is DMTF's ResourceEvent 1.3.0, the messages the bridge
// uses.
var ResourceEvent = &Registry{
	Prefix: "ResourceEvent", Version: "1.3.0",
	Name:        "Resource Event Message Registry",
	Description: "This registry defines the messages to use for resource events.",
}

// TaskEvent is DMTF's TaskEvent 1.0.3, the messages the bridge uses.
var TaskEvent = &Registry{
	Prefix: "TaskEvent", Version: "1.0.3",
	Name:        "Task Event Message Registry",
	Description: "This registry defines the messages for task related events.",
}

const (
	str = "string"
	num = "number"
)

// The ResourceEvent messages, as published.
var (
	ResourceCreated = ResourceEvent.add(&Message{Key: "ResourceCreated", Severity: "OK",
		Description: "Indicates that all conditions of a successful creation operation have been met.",
		Message:     "The resource has been created successfully.", Resolution: "None"})
	ResourceRemoved = ResourceEvent.add(&Message{Key: "ResourceRemoved", Severity: "OK",
		Description: "Indicates that all conditions of a successful remove operation have been met.",
		Message:     "The resource has been removed successfully.", Resolution: "None"})
	ResourceChanged = ResourceEvent.add(&Message{Key: "ResourceChanged", Severity: "OK",
		Description: "Indicates that one or more resource properties have changed.  This is not used whenever there is another event message for that specific change, such as only the state has changed.",
		Message:     "One or more resource properties have changed.", Resolution: "None."})
	ResourceStateChanged = ResourceEvent.add(&Message{Key: "ResourceStateChanged", Severity: "OK",
		Description: "Indicates that the state of a resource has changed.",
		Message:     "The state of resource `%1` has changed to %2.", ParamTypes: []string{str, str}, Resolution: "None."})
	ResourceErrorsDetected = ResourceEvent.add(&Message{Key: "ResourceErrorsDetected", Severity: "Warning",
		Description: "Indicates that a specified resource property has detected errors.  Examples would be drive I/O errors, or network link errors.",
		Message:     "The resource property %1 has detected errors of type '%2'.", ParamTypes: []string{str, str},
		Resolution: "Resolution dependent upon error type."})
	ResourceStatusChangedOK = ResourceEvent.add(&Message{Key: "ResourceStatusChangedOK", Severity: "OK",
		Description: "Indicates that the health of a resource has changed to OK.",
		Message:     "The health of resource '%1' has changed to %2.", ParamTypes: []string{str, str}, Resolution: "None."})
	ResourceStatusChangedWarning = ResourceEvent.add(&Message{Key: "ResourceStatusChangedWarning", Severity: "Warning",
		Description: "Indicates that the health of a resource has changed to Warning.",
		Message:     "The health of resource `%1` has changed to %2.", ParamTypes: []string{str, str}, Resolution: "None."})
	ResourceStatusChangedCritical = ResourceEvent.add(&Message{Key: "ResourceStatusChangedCritical", Severity: "Critical",
		Description: "Indicates that the health of a resource has changed to Critical.",
		Message:     "The health of resource `%1` has changed to %2.", ParamTypes: []string{str, str}, Resolution: "None."})
	ResourcePoweredOn = ResourceEvent.add(&Message{Key: "ResourcePoweredOn", Severity: "OK",
		Description: "Indicates that the power state of a resource has changed to powered on.",
		Message:     "The resource `%1` has powered on.", ParamTypes: []string{str}, Resolution: "None."})
	ResourcePoweringOn = ResourceEvent.add(&Message{Key: "ResourcePoweringOn", Severity: "OK",
		Description: "Indicates that the power state of a resource has changed to powering on.",
		Message:     "The resource `%1` is powering on.", ParamTypes: []string{str}, Resolution: "None."})
	ResourcePoweredOff = ResourceEvent.add(&Message{Key: "ResourcePoweredOff", Severity: "OK",
		Description: "Indicates that the power state of a resource has changed to powered off.",
		Message:     "The resource `%1` has powered off.", ParamTypes: []string{str}, Resolution: "None."})
	ResourcePoweringOff = ResourceEvent.add(&Message{Key: "ResourcePoweringOff", Severity: "OK",
		Description: "Indicates that the power state of a resource has changed to powering off.",
		Message:     "The resource `%1` is powering off.", ParamTypes: []string{str}, Resolution: "None."})
	ResourcePaused = ResourceEvent.add(&Message{Key: "ResourcePaused", Severity: "OK",
		Description: "Indicates that the power state of a resource has changed to paused.",
		Message:     "The resource `%1` has been paused.", ParamTypes: []string{str}, Resolution: "None."})
)

// The TaskEvent messages, as published.
var (
	TaskStarted = TaskEvent.add(&Message{Key: "TaskStarted", Severity: "OK",
		Description: "A task has started.",
		Message:     "The task with Id '%1' has started.", ParamTypes: []string{str}, Resolution: "None."})
	TaskProgressChanged = TaskEvent.add(&Message{Key: "TaskProgressChanged", Severity: "OK",
		Description: "A task has changed progress.",
		Message:     "The task with Id '%1' has changed to progress %2 percent complete.", ParamTypes: []string{str, num}, Resolution: "None."})
	TaskCompletedOK = TaskEvent.add(&Message{Key: "TaskCompletedOK", Severity: "OK",
		Description: "A task has completed.",
		Message:     "The task with Id '%1' has completed.", ParamTypes: []string{str}, Resolution: "None."})
	TaskAborted = TaskEvent.add(&Message{Key: "TaskAborted", Severity: "Critical",
		Description: "A task has completed with errors.",
		Message:     "The task with Id '%1' has completed with errors.", ParamTypes: []string{str}, Resolution: "None."})
	TaskRemoved = TaskEvent.add(&Message{Key: "TaskRemoved", Severity: "Warning",
		Description: "A task has been removed.",
		Message:     "The task with Id '%1' has been removed.", ParamTypes: []string{str}, Resolution: "None."})
)
