// Package sim is a small KubeVirt and kubelet simulator for test clusters
// that run a real kube-apiserver but no KubeVirt and no controller-manager.
//
// It plays, against the apiserver, the parts of the cluster the bridge
// depends on:
//
//   - virt-controller: a VirtualMachine's spec.runStrategy (or the
//     deprecated spec.running) creates, deletes and recreates its
//     VirtualMachineInstance; the VMI walks Pending -> Scheduling ->
//     Scheduled -> Running; the VM's status (printableStatus, ready,
//     created, conditions Ready and RestartRequired) follows.
//   - guests: [Simulator.GuestShutdown] powers one off (VMI Succeeded);
//     [Simulator.GuestReboot] reboots one as KubeVirt v1.9 does under the
//     VMI's rebootPolicy (Reboot: in place, the same boot order again;
//     Terminate: the VMI ends Succeeded). Every VMI records what it booted
//     ([AnnotationBoots]).
//   - the corruption KubeVirt really suffers: a template with a volume that
//     has no disk (or a non-CD-ROM disk with no volume) makes the VMI fail
//     and the VM crash-loop; every such VM is recorded as a [Corruption]
//     and gets a Warning event.
//   - the kubelet for the bridge's import pods: a pod refused with
//     Multi-Attach while a live VMI holds its ReadWriteOnce PVC, a pod
//     whose Secret or ConfigMap volume is missing left waiting
//     (FailedMount), otherwise the bridge's own import job
//     ([media.ImportJob], parsed from the pod's args) run against the
//     pod's Secret and ConfigMap volumes, the image really downloaded into
//     [Simulator.ImagePath].
//   - the PV binder and pvc-protection controller: every PVC is Bound at
//     once and released when nothing uses it any more.
//   - the garbage collector for VMIs whose VM is gone.
//
// Everything is watch-driven (informers and workqueues). The simulator
// writes only status subresources, VMIs, pod bindings, finalizers it owns
// and events: never a VirtualMachine's spec or metadata.
package sim
