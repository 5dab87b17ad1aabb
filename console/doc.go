// Package console is the bridge's side of a VM's serial console: it opens
// the running VMI's console through virt-api's subresource
// (subresources.kubevirt.io, [kubevirt.VMISubresourcePath]) with the
// bridge's own client configuration and hands the byte stream to the
// console front ends (IPMI Serial-over-LAN, the SSH console).
//
// The rules every front end gets from [Opener.Open]:
//
//   - who: a ReadOnly user is refused ([ErrReadOnly]); a System outside
//     the user's scope, or not there, is not found ([ErrNotFound]), exactly
//     as the Redfish API answers it;
//   - one stream per VM: KubeVirt serves one console connection per VMI
//     (virt-handler closes the older one when a newer one opens), so a
//     replica refuses a second opener of the same System while one is open
//     ([ErrActive]: IPMI's "payload already active", the SSH console's
//     "console in use"); nothing is shared or split between two readers;
//   - limits: at most Config.MaxPerUser open streams per user and
//     Config.MaxSessions in all ([ErrLimit]);
//   - bytes: a [Stream] reads and writes the WebSocket directly, one
//     message at a time, in order: nothing is buffered beyond one message
//     in either direction, so a client that does not read holds the guest
//     back (TCP backpressure through virt-api) instead of growing memory,
//     and nothing is lost or reordered;
//   - an idle stream (no byte either way for Config.IdleTimeout) is closed;
//   - an audit line for every open (who, which System) and close (who,
//     which System, bytes each way, why), on the opener's logger.
package console
