// Package reliability holds end-to-end tests of the bridge under hostile or
// broken conditions, run against the whole demo (real apiserver, simulator,
// bridge over HTTPS) or, for a crash, the bridge binary as a child process:
//
//   - security: authentication on every route, session logout, login
//     throttling per client, tenant isolation between users, no response
//     shared between users, image URLs pointing inside refused;
//   - faults: kube-apiserver and etcd stopped mid-cycle and started again
//     (writes answer 503 ServiceTemporarilyUnavailable meanwhile, the
//     bridge recovers by itself), the bridge SIGKILLed mid-import (the
//     import and the deferred power-on complete under a new process), the
//     leader of three replicas SIGKILLed mid-import (another replica takes
//     the Lease and completes both; the others serve meanwhile), and
//     outside writers (kubectl edit, client-side kubectl apply, another
//     Server-Side Apply manager) interleaved with provisioning cycles.
//
// After every fault, full provisioning cycles (ForceOff, InsertMedia, boot
// override Cd Once, On, Running with the image Ready, EjectMedia) must
// complete with disks and volumes paired, the image's checksum right, the
// fields the bridge does not own unchanged, and no import pod or PVC left.
// Each test logs what it tried (faults, requests, objects checked) in a
// RELIABILITY line; docs/reliability.md lists each attack, its defence and
// its test.
package reliability
