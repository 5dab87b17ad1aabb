// Package ironicproc runs a standalone OpenStack Ironic as a child process
// for the e2e tests: Debian 12's python3-ironic (21.4, [Host]) or Debian
// unstable's Ironic 39 from the chroot hack/ironic-chroot.sh builds
// ([Chroot], run in a private mount namespace with /proc, /dev, a fresh
// /tmp and /run and its directory bind-mounted, sharing the host's
// loopback). Either runs as the all-in-one service (API and conductor in
// one process, rpc_transport none) on a sqlite database in a temp dir,
// noauth, the redfish hardware type only (redfish power, management,
// inspect and bios, redfish-virtual-media boot, and redfish-https on 39,
// ramdisk and custom-agent deploy, noop network, no Swift, Neutron or
// Glance), and a loopback HTTP server for its http_root. [Start] brings it
// up, [Ironic.Stop] ends its process group; [Client] drives its REST API.
package ironicproc
