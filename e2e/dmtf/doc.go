// Package dmtf runs the DMTF's own Redfish conformance tools against the
// demo of each CRD variant (TestValidators): the Redfish Service Validator
// (every resource against the CSDL schemas), the Redfish Interop Validator
// with the OpenStack Ironic profile (../shared/redfish/profiles) and the
// Redfish Protocol Validator (DSP0266's protocol rules), each on a fresh
// demo and again after a virtual-media insert and a power-on. A FAIL fails
// the test unless it is one of the tool limitations
// ../shared/third_party/dmtf/README.md lists.
//
// The tools are the unmodified copies in ../shared/third_party/dmtf, run on
// Debian's python3 with the Debian packages .ci/run installs; without them
// the test skips, and fails under CI=true. It is its own package so that
// it runs beside the other e2e tests.
//
// The package has no non-test code.
package dmtf
