// Package testutil holds what the tests of several packages share and the
// product never links (cmd/redfish-bridge's deps test enforces it):
//
//   - prerequisites from outside the repository: [SharedDir] finds the
//     ../shared checkout, [Missing] skips a test that lacks one, or fails
//     it under CI=true.
package testutil
