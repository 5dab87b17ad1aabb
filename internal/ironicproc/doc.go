// Package ironicproc runs a standalone OpenStack Ironic (Debian 12's
// python3-ironic, 21.4) as a child process for the e2e tests: the
// all-in-one `ironic` service (API and conductor in one process,
// rpc_transport none) on a sqlite database in a temp dir, noauth, the
// redfish hardware type only (redfish power, management, inspect and bios,
// redfish-virtual-media boot, ramdisk and custom-agent deploy, noop
// network, no Swift, Neutron or Glance), and a loopback HTTP server for its
// http_root. [Start] brings it up, [Ironic.Stop] ends its process group;
// [Client] drives its REST API.
package ironicproc
