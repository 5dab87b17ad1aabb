// Package backend is the glue between the Redfish service and the concern
// packages: it implements redfish.Systems, Power, Boot and Media on top of
// inventory/ (reads, from informer caches), apply/ (the VM read with the
// bridge's state decoded), media/ and power/ (the verbs), and translates
// their errors into the errors redfish/ classifies (ErrNotFound, ErrConflict,
// ErrUnavailable, ...).
//
// It holds no state of its own: everything it shows is derived from the
// VirtualMachine, its VirtualMachineInstance and PVCs.
package backend
