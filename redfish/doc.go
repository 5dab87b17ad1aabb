// Package redfish is the bridge's DMTF Redfish service: HTTP and JSON only.
//
// It serves the resources OpenStack Ironic (through sushy) and other Redfish
// clients read and drive (service root, systems and their inventory and
// memory, boot override and boot options, BIOS and Secure Boot, managers,
// their network protocol and virtual media, chassis, sessions, accounts,
// tasks, the update service's firmware inventory, the Base message
// registry), authenticates
// callers (Basic or session token, see [auth]) and confines each one to the
// systems in its [auth.Scope]: a system outside it is answered 404, through
// every path that leads to it (Systems, Managers, Chassis, VirtualMedia,
// Tasks).
//
// It never touches Kubernetes. It calls the small interfaces in [Backends],
// which the glue layer implements on top of apply/, media/ and power/, and
// classifies their errors with errors.Is/As against the errors declared in
// errors.go ([ErrNotFound], [ErrConflict], [ErrUnavailable],
// [ErrPreconditionFailed], [ErrNotSupported], [*BadValueError],
// [*RefusedValueError]: a refusal names the property and value and says
// why in its Resolution, refusals.go). The one
// place that turns errors into HTTP statuses and Redfish error bodies with
// Base registry MessageIds is [Server.handleError].
//
// Reads Ironic polls are served from kept bytes: a ComputerSystem's
// encoded body while its [Systems.Revision] stays the same
// (systembodies.go), the Systems, Managers and Chassis collections while
// [Systems.Membership] does (members.go), and their $top/$skip pages from
// the kept member URIs (only the window's members are built). The caller's
// scope is checked on every request; any other query string renders
// afresh.
package redfish
