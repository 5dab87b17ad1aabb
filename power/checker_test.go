package power

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/harness/vmcheck"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// checker watches every version of every VM in the namespace and records
// invariant violations:
//
//  1. pairing: every media-* volume has a CD-ROM disk of the same name and
//     every media-* disk is a CD-ROM with a volume (bug 1: lost CD-ROM disk);
//  2. record and spec agree: a slot is Ready with a claim iff its disk and
//     volume exist, with that claim;
//  3. power-on only after import: in the version where runStrategy becomes
//     RerunOnFailure no slot is Pending or Importing (bug 2), and the boot
//     order is what the recorded override lays out (CD-ROM first for Cd);
//  4. no lost update: once the outside writer's data disk appeared, every
//     later version keeps it.
type checker struct {
	res    dynamic.ResourceInterface
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	bad      []string
	versions int
	starts   int
	withData int // VMs on which the outside writer's data disk appeared
	rewatch  int // watches re-opened after the server closed one
}

func startChecker(t *testing.T, e *env) *checker {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	c := &checker{res: e.admin.Resource(kubevirt.VirtualMachines).Namespace(e.ns), cancel: cancel, done: make(chan struct{})}
	list, err := c.res.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	go c.run(ctx, list.GetResourceVersion())
	return c
}

// events re-opens the watch from the last version seen whenever the server
// closes it, so no version is skipped; a watch that cannot resume (410
// Gone) is itself a violation: the check would have a gap.
func (c *checker) events(ctx context.Context, rv string, each func(*unstructured.Unstructured)) {
	for ctx.Err() == nil {
		w, err := c.res.Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
		if err != nil {
			if ctx.Err() == nil {
				c.violate("watch: " + err.Error())
			}
			return
		}
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				if ctx.Err() != nil {
					break // stopped: the stream ends with a cancellation
				}
				c.violate(fmt.Sprintf("watch error: %v", apierrors.FromObject(ev.Object)))
				w.Stop()
				return
			}
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			rv = u.GetResourceVersion()
			if ev.Type == watch.Added || ev.Type == watch.Modified {
				each(u)
			}
		}
		w.Stop()
		c.mu.Lock()
		c.rewatch++
		c.mu.Unlock()
	}
}

func (c *checker) violate(msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bad = append(c.bad, msg)
}

func (c *checker) run(ctx context.Context, rv string) {
	defer close(c.done)
	prevRun := map[string]kubevirt.RunStrategyValue{}
	hadData := map[string]bool{}
	c.events(ctx, rv, func(u *unstructured.Unstructured) {
		key := system.Key{Namespace: u.GetNamespace(), Name: u.GetName()}
		vm := apply.Decode(ctx, key, u, nil)
		where := fmt.Sprintf("%s@%s", key.Name, u.GetResourceVersion())
		var bad []string
		bad = append(bad, pairing(u)...)
		bad = append(bad, recordMatches(vm)...)
		rs := runStrategy(vm)
		if rs == runOn && prevRun[key.Name] != runOn {
			c.mu.Lock()
			c.starts++
			c.mu.Unlock()
			if s, busy := busySlot(vm); busy {
				bad = append(bad, fmt.Sprintf("started while slot %s is %s", s.Slot, s.Phase))
			}
			if !apply.Settled(vm) {
				bad = append(bad, fmt.Sprintf("started with boot orders %v not laid out for %+v", bootOrders(vm), vm.Boot))
			}
		}
		prevRun[key.Name] = rs
		if hasDisk(u, "data") {
			if !hadData[key.Name] {
				c.mu.Lock()
				c.withData++
				c.mu.Unlock()
			}
			hadData[key.Name] = true
		} else if hadData[key.Name] {
			bad = append(bad, "the outside writer's data disk or volume was lost")
		}
		c.mu.Lock()
		c.versions++
		for _, b := range bad {
			c.bad = append(c.bad, where+": "+b)
		}
		c.mu.Unlock()
	})
}

func pairing(u *unstructured.Unstructured) []string {
	var bad []string
	spec, err := vmcheck.TemplateSpec(u)
	if err != nil {
		return []string{err.Error()}
	}
	vols := vmcheck.Volumes(spec)
	cdrom := map[string]bool{}
	for _, d := range vmcheck.Disks(spec) {
		cdrom[d.Name] = d.CDROM
		_, has := vols[d.Name]
		// A CD slot's drive stays, empty, once it was in the template
		// (apply/build_hotplug.go): a CD-ROM without a volume is a drive,
		// not a corruption; any other media disk needs its volume.
		if strings.HasPrefix(d.Name, apply.DiskPrefix) && (!d.CDROM || (!has && !vmcheck.EmptyDrive(d, vols))) {
			bad = append(bad, fmt.Sprintf("disk %s: cdrom=%v, volume=%v", d.Name, d.CDROM, has))
		}
	}
	for name := range vols {
		if strings.HasPrefix(name, apply.DiskPrefix) && !cdrom[name] {
			bad = append(bad, fmt.Sprintf("volume %s has no CD-ROM disk", name))
		}
	}
	return bad
}

func recordMatches(vm *apply.VM) []string {
	var bad []string
	for slot, s := range vm.Slots {
		name := apply.DiskName(slot)
		want := s.Phase == system.MediaReady && s.ClaimName != ""
		if got := hasDisk(vm.Object, name); got != want {
			bad = append(bad, fmt.Sprintf("slot %s is %s but disk+volume present=%v", slot, s.Phase, got))
		}
	}
	for name := range bootOrders(vm) {
		// A bootable media disk with its volume needs a Ready slot (an
		// empty drive keeps its boot order and boots nothing).
		if slot, ok := strings.CutPrefix(name, apply.DiskPrefix); ok && hasDisk(vm.Object, name) {
			if s, has := vm.Slots[slot]; !has || s.Phase != system.MediaReady {
				bad = append(bad, fmt.Sprintf("disk %s present without a Ready slot", name))
			}
		}
	}
	return bad
}

func (c *checker) stop() {
	c.cancel()
	<-c.done
}

func (c *checker) violations() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.bad...)
}
