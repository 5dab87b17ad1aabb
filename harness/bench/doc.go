// Package bench measures the whole product under an Ironic-like load: a
// real etcd + kube-apiserver with the KubeVirt CRDs, the KubeVirt simulator
// and the bridge (all from [demo.Start]), driven over HTTPS by K concurrent
// clients that each run Ironic's virtual-media provisioning cycle
// (GET System, ForceOff, InsertMedia, PATCH Boot Cd/Once + UEFI, Reset On,
// poll PowerState until On, EjectMedia, PATCH Boot Hdd/Continuous) on their
// share of the VMs.
//
// It reports, per Redfish operation, latency percentiles; Kubernetes API
// requests per operation (counted by a RoundTripper wrapped around the
// bridge's rest.Config, cross-checked against the apiserver's
// apiserver_request_total); applies, conflicts and retries per field
// manager; failed requests; process RSS and CPU (the bridge runs inside the
// benchmark process, together with the simulator and the clients); the
// apiserver's RSS and CPU; and the time until every VM converged. Beside them
// it measures the floor in the same run: the raw SSA apply latency of the
// redfish-boot body and a GET from the informer cache against a live GET.
//
// [BridgeRSS] measures the bridge's own memory instead: the real
// redfish-bridge binary as a separate process against a cluster with 1000
// VMs (half running), its VmRSS sampled from outside while idle, under reads
// and under writes; at 10,000 and 100,000 VMs (make bench-10k, bench-100k)
// also its start-up against the apiserver's bare list of the same objects,
// GETs and $top pages against the floor server and Ironic cycles while
// systems are power-polled, each target of [RSSResult.Targets] printed as
// REACHED or NOT reached. With [RSSScenario.StatusByBench] (100,000 VMs)
// virt-controller is left out and the bench writes each VM's status.
// With [RSSScenario.Subscriptions] (make bench-10k: 100) its events phase
// subscribes that many receivers, starts halted VMs out of band and
// measures the records delivered per second and the latency from the
// bench's own watch seeing each VMI Running to each subscription's
// ResourcePoweredOn; its poll phase reads every System once in a minute,
// as Ironic's power sync does instead, for the GETs/s and bridge CPU.
//
// BenchmarkImageCache measures the image cache (media's --image-cache)
// with each import method (the import pod; CDI, played by the simulator,
// cloning the entry): N >= 50 VMs insert one image at once, the bytes the
// image server sent against the image's size, then a changed image
// re-inserted.
//
// [Console] (BenchmarkConsole) measures the serial console: the bridge
// binary as a process serving the SSH console against a cluster with
// KubeVirt's virt-api and the simulator's guests; the bytes per second
// one console carries from an SSH client, and from Debian's ipmitool over
// IPMI Serial-over-LAN, to the guest and back (every byte checked in
// order) and the bridge's RSS growth per open console, printed as open
// console sessions per GiB.
//
// BenchmarkImageDownload measures the import pod's downloader
// (`redfish-bridge import`) against `curl -o` on one large image over
// loopback to the same disk: MB/s of both (target: >= 80% of curl) and
// the downloader's peak RSS; it needs no cluster.
//
// Run it with `make bench` (see docs/bench.md); it prints a table and writes
// a CSV. Nothing here asserts on timings.
package bench
