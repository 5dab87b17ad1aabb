package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// syncVMI plays virt-handler for the VMIs virt-controller handed to
// NodeName (phase Scheduled, status.nodeName set): start the domain (VMI
// Running, or Failed when its spec is corrupt) and stop the domain of a
// deleted VMI (Succeeded). Everything else about a VMI (creating it, the
// launcher pod, its conditions, deleting it) is virt-controller's.
func (s *Simulator) syncVMI(ctx context.Context, k string) (time.Duration, error) {
	vmi := s.getU(k, vmiInformer)
	if vmi == nil {
		return 0, nil
	}
	node, _, _ := unstructured.NestedString(vmi.Object, "status", "nodeName")
	if node != NodeName {
		return 0, nil // not (yet) handed to this node
	}
	phase := kubevirt.PhaseOf(vmi)
	if vmi.GetDeletionTimestamp() != nil {
		if phase == kubevirt.PhaseSucceeded || phase == kubevirt.PhaseFailed {
			return 0, nil
		}
		return s.stopVMI(ctx, vmi)
	}
	if phase == kubevirt.PhaseRunning {
		return 0, s.syncHotplug(ctx, vmi) // hotplug.go
	}
	if phase != kubevirt.PhaseScheduled {
		return 0, nil
	}
	if wait := s.opts.StartDelay - s.inPhaseFor(vmi); wait > 0 {
		return wait, nil
	}
	spec, _, _ := unstructured.NestedMap(vmi.Object, "spec")
	if problems := Problems(spec); len(problems) > 0 {
		s.vmisFailed.Add(1)
		return 0, s.setVMIPhase(ctx, vmi, kubevirt.PhaseFailed, map[string]any{"reason": strings.Join(problems, "; ")}, nil)
	}
	// selinuxContext "none": a node without SELinux, as virt-handler
	// reports it (virt-controller's hotplug attachment pods need it).
	running := map[string]any{"interfaces": interfaceStatus(vmi), "selinuxContext": "none"}
	if err := s.setVMIPhase(ctx, vmi, kubevirt.PhaseRunning, running, bootsAfterOne(vmi)); err != nil {
		return 0, err
	}
	s.vmisStarted.Add(1)
	return 0, nil
}

// stopVMI models the graceful stop of a deleted VMI's domain: it keeps
// running for StopDelay, then the VMI turns Succeeded (virt-handler's
// verdict for a domain that shut down), which lets virt-controller delete
// the launcher pod and drop its finalizer. Without the Succeeded phase
// virt-controller would see the pod vanish under a live VMI and mark it
// Failed, which the VM counts as a start failure.
//
// A forced delete cannot be told apart (a custom resource with a finalizer
// records deletionGracePeriodSeconds 0 whatever the request said); like
// virt-handler, the simulator goes by spec.terminationGracePeriodSeconds,
// which virt-api's forced stop (0) and restart (1) shorten: the guest
// stops when that grace period has passed, at once with 0.
func (s *Simulator) stopVMI(ctx context.Context, vmi *unstructured.Unstructured) (time.Duration, error) {
	if wait := s.stopWait(vmi); wait > 0 {
		return wait, nil
	}
	return 0, s.setVMIPhase(ctx, vmi, kubevirt.PhaseSucceeded, nil, nil)
}

// stopWait is how long the VMI's guest still takes to stop: StopDelay from
// the first time its stop was seen, at most its
// terminationGracePeriodSeconds (virt-handler kills the domain then).
func (s *Simulator) stopWait(vmi *unstructured.Unstructured) time.Duration {
	delay := s.stopDelay(vmi)
	s.mu.Lock()
	first, ok := s.stopSeen[vmi.GetUID()]
	if !ok {
		first = time.Now()
		s.stopSeen[vmi.GetUID()] = first
	}
	s.mu.Unlock()
	return delay - time.Since(first)
}

// stopDelay is how long the VMI's guest takes to stop from the first time
// its stop was seen: StopDelay, at most its terminationGracePeriodSeconds.
func (s *Simulator) stopDelay(vmi *unstructured.Unstructured) time.Duration {
	delay := s.opts.StopDelay
	if grace, found, _ := unstructured.NestedInt64(vmi.Object, "spec", "terminationGracePeriodSeconds"); found && time.Duration(grace)*time.Second < delay {
		delay = time.Duration(grace) * time.Second
	}
	return delay
}

// setVMIPhase writes status.phase, a phaseTransitionTimestamps entry for
// it (virt-controller reads the Running entry to tell a run from a start
// failure), extra status fields and annotations, as virt-handler does:
// through the VMI itself (KubeVirt's VMI CRD has no status subresource),
// guarded by the resourceVersion read so a stale cache never moves a VMI
// backwards.
func (s *Simulator) setVMIPhase(ctx context.Context, vmi *unstructured.Unstructured, phase kubevirt.Phase, extra, annotations map[string]any) error {
	status := map[string]any{"phase": string(phase), "phaseTransitionTimestamps": phaseTransitions(vmi, phase)}
	for k, v := range extra {
		status[k] = v
	}
	meta := map[string]any{"resourceVersion": vmi.GetResourceVersion()}
	if annotations != nil {
		meta["annotations"] = annotations
	}
	if err := s.patchVMI(ctx, vmi.GetNamespace(), vmi.GetName(), map[string]any{"metadata": meta, "status": status}); err != nil {
		return fmt.Errorf("set VMI %s/%s phase %s: %w", vmi.GetNamespace(), vmi.GetName(), phase, err)
	}
	s.mu.Lock()
	s.phaseSince[vmi.GetUID()] = phaseMark{phase: string(phase), at: time.Now()}
	s.mu.Unlock()
	return nil
}

func (s *Simulator) patchVMI(ctx context.Context, ns, name string, body map[string]any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("marshal VMI patch: %w", err)
	}
	_, err = s.dyn.Resource(VMIResource).Namespace(ns).Patch(ctx, name, types.MergePatchType, b, metav1.PatchOptions{FieldManager: "virt-handler"})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// phaseTransitions is the VMI's status.phaseTransitionTimestamps with an
// entry for entering phase now.
func phaseTransitions(vmi *unstructured.Unstructured, phase kubevirt.Phase) []any {
	out, _, _ := unstructured.NestedSlice(vmi.Object, "status", "phaseTransitionTimestamps")
	return append(out, map[string]any{
		"phase":                    string(phase),
		"phaseTransitionTimestamp": metav1.Now().UTC().Format(time.RFC3339),
	})
}

// inPhaseFor is how long the VMI has been in its current phase, as far as
// this simulator knows (it counts from the first sighting otherwise).
func (s *Simulator) inPhaseFor(vmi *unstructured.Unstructured) time.Duration {
	phase := string(kubevirt.PhaseOf(vmi))
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.phaseSince[vmi.GetUID()]
	if !ok || m.phase != phase {
		m = phaseMark{phase: phase, at: time.Now()}
		s.phaseSince[vmi.GetUID()] = m
	}
	return time.Since(m.at)
}

// forgetVMI drops what the simulator remembers about a deleted VMI.
func (s *Simulator) forgetVMI(obj any) {
	u := asUnstructured(obj)
	if u == nil {
		return
	}
	s.mu.Lock()
	delete(s.phaseSince, u.GetUID())
	delete(s.stopSeen, u.GetUID())
	delete(s.launcherHeld, u.GetUID())
	console := s.console
	s.mu.Unlock()
	if console != nil {
		console.forget(u.GetUID())
	}
}

// GuestShutdown makes the guest of VM key power itself off: virt-handler
// turns its VMI Succeeded. What follows is virt-controller's, by the VM's
// run strategy (Always starts a new VMI; RerunOnFailure, Manual and Once
// leave the VM Stopped).
func (s *Simulator) GuestShutdown(ctx context.Context, key system.Key) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		vmi, err := s.dyn.Resource(VMIResource).Namespace(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("guest shutdown of %s: %w", key, err)
		}
		if p := kubevirt.PhaseOf(vmi); p != kubevirt.PhaseRunning {
			return fmt.Errorf("guest shutdown of %s: VMI %s, not running", key, p)
		}
		return s.setVMIPhase(ctx, vmi, kubevirt.PhaseSucceeded, nil, nil)
	})
}

// interfaceStatus lists the VMI's interfaces with their MAC addresses, as
// virt-handler reports them from the domain.
func interfaceStatus(vmi *unstructured.Unstructured) []any {
	ifaces, _, _ := unstructured.NestedSlice(vmi.Object, "spec", "domain", "devices", "interfaces")
	out := make([]any, 0, len(ifaces))
	for i, e := range ifaces {
		m, _ := e.(map[string]any)
		name, _ := m["name"].(string)
		mac, _ := m["macAddress"].(string)
		if mac == "" {
			mac = MAC(vmi.GetNamespace(), vmi.GetName(), name)
		}
		out = append(out, map[string]any{
			"name": name, "mac": mac,
			"interfaceName": fmt.Sprintf("eth%d", i),
			"infoSource":    "domain",
		})
	}
	return out
}
