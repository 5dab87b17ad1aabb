// Package sim is the node side of a test cluster: it plays, against a real
// kube-apiserver where KubeVirt's own virt-controller v1.9.0 runs
// (testcluster.Options.VirtController), what virt-handler, the scheduler
// and the kubelet would do on the cluster's one node ([NodeName]).
// virt-controller does everything a VM controller does: it follows
// spec.runStrategy and status.stateChangeRequests, creates and deletes
// VMIs and their virt-launcher pods, and writes the VM's and the VMI's
// status (printableStatus, ready, conditions, startFailure...). The
// simulator:
//
//   - scheduler and kubelet for virt-launcher pods ([LauncherSelector]):
//     binds each to NodeName, runs it (phase Running, every container
//     running and ready, so virt-controller hands the VMI over: phase
//     Scheduled), ends it when its VMI is final or gone (virt-launcher
//     exits with the domain) and confirms its deletion (virt-controller
//     deletes it with a grace period only a kubelet ends) once its guest
//     has stopped: virt-launcher, sent SIGTERM, shuts the domain down
//     within the VMI's grace period first, whoever deleted the pod
//     ([Simulator.LauncherHeld] tells that a stop is so in progress);
//   - virt-handler for the VMIs handed to NodeName: Scheduled -> Running
//     after [Options.StartDelay], with a phaseTransitionTimestamps entry
//     (virt-controller reads it to tell a run from a start failure) and the
//     interfaces' MACs ([MAC]); a deleted VMI turns Succeeded after
//     [Options.StopDelay] or its spec.terminationGracePeriodSeconds,
//     whichever is shorter, re-read on every change (its domain shut down;
//     virt-api's forced stop and restart shorten the grace period to 0 and
//     1); guests:
//     [Simulator.GuestShutdown] powers one off (VMI Succeeded);
//     [Simulator.GuestReboot] reboots one as KubeVirt v1.9 does under the
//     VMI's rebootPolicy (Reboot: in place, the same boot order again;
//     Terminate: the VMI ends Succeeded). Every VMI records what it booted
//     ([AnnotationBoots]).
//   - virt-handler's console server (consoleserver.go, guest.go) when the
//     cluster runs virt-api (its DaemonSet testcluster.HandlerDaemonSet
//     names the port): virt-api's console subresource dials it over
//     mutual TLS within KubeVirt's CA, at the Pod it finds on NodeName,
//     exactly as in a cluster; each running VMI's serial port is a guest
//     that echoes what it reads, shows its boot log naming the VM on its
//     first connection and a login prompt ([GuestBootBanner],
//     [GuestLoginPrompt]); a new connection closes the one before it;
//   - the node side of volume hotplug (hotplug.go): virt-controller's
//     attachment pods bound and run (their PVCs held until they are gone),
//     a hotplugged volume attached (volumeStatus Ready), an unplugged one
//     unmounted (UnMountedFromPod, then virt-controller deletes the pod);
//     a running VMI reports selinuxContext "none" (virt-controller renders
//     attachment pods only then), and a mutating webhook plays the
//     ServiceAccount admission plugin for attachment pods (satoken.go: the
//     test cluster runs without it; virt-controller counts on the token
//     volume);
//   - the corruption KubeVirt really suffers: a VMI whose spec has a volume
//     without a disk (or a non-CD-ROM disk without a volume) fails on the
//     node (virt-launcher cannot define the domain) and the VM crash-loops
//     under virt-controller's backoff; every VM whose template turns so is
//     recorded as a [Corruption] and gets a Warning event.
//   - the kubelet for the bridge's import pods: a pod refused with
//     Multi-Attach while a live VMI holds its ReadWriteOnce PVC, a pod
//     whose Secret or ConfigMap volume is missing left waiting
//     (FailedMount), otherwise the bridge's own import job
//     ([download.ImportRequest], parsed from the pod's args) run against the
//     pod's Secret and ConfigMap volumes, the image really downloaded into
//     [Simulator.ImagePath]; a second PVC volume (media's image cache
//     entry, --cache-dir) is that claim's data directory, shared by every
//     pod that mounts it, so a copy from the cache really reads and writes
//     the bytes ([Counters].ImportsFromCache counts them); a pod with
//     --head-only (media's CDI image cache check) runs its HEAD, mounts
//     no PVC and counts as [Counters].ImageChecks; what the import
//     prints (its progress lines, then its result) is the pod's log,
//     served as a kubelet serves it (kubelet.go: an HTTPS endpoint on
//     127.0.0.1 set as the Node's kubeletEndpoint and InternalIP, where
//     kube-apiserver proxies pods/log);
//   - the node side of CDI, when [Simulator.RunCDINode] runs beside CDI's
//     own cdi-controller (testcluster.Options.CDI): the importer pods
//     cdi-controller makes, run as the kubelet's processes reading their
//     environment as CDI's importer image does, the bytes written into
//     the PVC's storage, CDI's termination messages, a failed container
//     restarted (restartPolicy OnFailure), the progress served on the pod
//     IP's metrics port where cdi-controller reads it; and the garbage
//     collector of a deleted DataVolume's PVCs and a gone PVC's pods;
//   - an imitation of CDI's DataVolume controller, when
//     [Simulator.RunDataVolumes] runs (the image cache's CDI clones and
//     its benchmark still use it):
//     an http source really downloaded into the DataVolume's PVC, a pvc
//     source (a clone) really copied from the source PVC once it is
//     populated (CloneScheduled, CloneInProgress, Succeeded;
//     [Counters].Clones and CloneBytes; [Simulator.HoldClones] keeps
//     clones in progress).
//   - the PV binder and pvc-protection controller: every PVC is Bound at
//     once and released when nothing uses it any more.
//
// [Simulator.Run] refuses to start when no virt-controller holds its leader
// lease: the simulator never plays virt-controller (start the test cluster
// with testcluster.Options.VirtController). Everything is watch-driven
// (informers and workqueues). The simulator writes VMI status (as
// virt-handler, through the VMI: KubeVirt's VMI CRD has no status
// subresource), pod bindings and pod status, PVC status, finalizers it
// owns, events and its own MutatingWebhookConfiguration (deleted when it
// stops): never a VirtualMachine.
package sim
