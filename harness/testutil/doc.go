// Package testutil holds what the tests of several packages share and the
// product never links (cmd/redfish-bridge's deps test enforces it):
//
//   - prerequisites from outside the repository: [SharedDir] finds the
//     ../shared checkout, [Missing] skips a test that lacks one, or fails
//     it under CI=true;
//   - the negative controls' faults, applied from outside the code under
//     test: [WithoutPrecondition] and [WithoutRebootPolicy] wrap the
//     dynamic client a Writer applies through and strip the protection
//     from every apply body;
//   - [MemoryRevocations], an in-process session revocation store.
package testutil
