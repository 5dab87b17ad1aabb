package sim

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ReasonCorrupted is the reason of the Warning event on a corrupt VM.
const ReasonCorrupted = "DiskVolumeMismatch"

// Problems lists what is wrong with a VMI spec (or VM template spec) in
// the way KubeVirt really breaks: a volume with no disk is attached as a
// writable disk; a non-CD-ROM disk with no volume cannot start. An empty
// result means the spec is sound.
func Problems(spec map[string]any) []string {
	disks := names(spec, "domain", "devices", "disks")
	volumes := names(spec, "volumes")
	var out []string
	for name := range volumes {
		if _, ok := disks[name]; !ok {
			out = append(out, fmt.Sprintf("volume %s has no disk: attached as a writable disk", name))
		}
	}
	for name, disk := range disks {
		if _, ok := volumes[name]; ok {
			continue
		}
		if _, cdrom := disk["cdrom"]; !cdrom {
			out = append(out, fmt.Sprintf("disk %s has no volume", name))
		}
	}
	sort.Strings(out)
	return out
}

// names indexes the entries of the list at path by their name.
func names(obj map[string]any, path ...string) map[string]map[string]any {
	list, _, _ := unstructured.NestedSlice(obj, path...)
	out := make(map[string]map[string]any, len(list))
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		out[name] = m
	}
	return out
}

// observeVM watches a VM's template for corruption (the simulator never
// writes a VM: virt-controller runs it).
func (s *Simulator) observeVM(ctx context.Context, k string) (time.Duration, error) {
	if vm := s.getU(k, vmInformer); vm != nil {
		s.checkCorruption(ctx, vm)
	}
	return 0, nil
}

// checkCorruption records a VM the moment its template turns corrupt (or
// its problems change), once per episode, and tells the VM with a Warning
// event. A repaired template ends the episode.
func (s *Simulator) checkCorruption(ctx context.Context, vm *unstructured.Unstructured) {
	spec, _, _ := unstructured.NestedMap(vm.Object, "spec", "template", "spec")
	problems := Problems(spec)
	msg := strings.Join(problems, "; ")
	s.mu.Lock()
	fresh := msg != "" && s.corruptSeen[vm.GetUID()] != msg
	if msg == "" {
		delete(s.corruptSeen, vm.GetUID())
	} else {
		s.corruptSeen[vm.GetUID()] = msg
	}
	if fresh {
		s.corruptions = append(s.corruptions, Corruption{
			Time:       time.Now(),
			VM:         vm.GetNamespace() + "/" + vm.GetName(),
			UID:        vm.GetUID(),
			Generation: vm.GetGeneration(),
			Problems:   problems,
		})
	}
	s.mu.Unlock()
	if !fresh {
		return
	}
	s.log.WarnContext(ctx, "corrupt VM template", "vm", vm.GetNamespace()+"/"+vm.GetName(), "generation", vm.GetGeneration(), "problems", msg)
	s.event(ctx, ref(vm), eventWarning, ReasonCorrupted, msg, "sim")
}
