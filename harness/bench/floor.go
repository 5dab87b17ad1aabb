package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Floor operation names.
const (
	FloorApply    = "floor: raw SSA apply (redfish-boot body)"
	FloorCacheGET = "floor: VM read from informer cache"
	FloorLiveGET  = "floor: live GET VM"
)

// floorOverrides alternate so every apply changes the object (boot orders
// move between the root disk and the NIC); the last one is the cycle's
// final Hdd/Continuous.
var floorOverrides = []system.BootOverride{
	{Target: system.BootPxe, Enabled: system.BootContinuous, Mode: system.BootUEFI},
	{Target: system.BootHdd, Enabled: system.BootContinuous, Mode: system.BootUEFI},
}

// RawApply measures the apiserver's SSA apply of the body the bridge sends
// for a boot override (built by [apply.BuildBoot] from a live read, sent
// under redfish-boot with the bridge's identity), rounds times over keys
// with workers in parallel. Only the apply is timed. 409s (a background
// writer moved the object between read and apply) are recorded as failures.
func RawApply(ctx context.Context, dyn dynamic.Interface, mode apply.Mode, keys []system.Key, workers, rounds int, rec *Recorder) error {
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds * len(floorOverrides) {
				for i := w; i < len(keys); i += workers {
					o := floorOverrides[r%len(floorOverrides)]
					if err := rawApplyOnce(ctx, dyn, mode, keys[i], o, rec); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func rawApplyOnce(ctx context.Context, dyn dynamic.Interface, mode apply.Mode, key system.Key, o system.BootOverride, rec *Recorder) error {
	vms := dyn.Resource(kubevirt.VirtualMachines).Namespace(key.Namespace)
	obj, err := vms.Get(ctx, key.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("floor read %s: %w", key, err)
	}
	body, err := apply.BuildBoot(mode, apply.Decode(ctx, key, obj, nil), o, nil)
	if err != nil {
		return fmt.Errorf("floor build boot body for %s: %w", key, err)
	}
	start := time.Now()
	_, err = vms.Apply(ctx, key.Name, body.Object, metav1.ApplyOptions{FieldManager: apply.ManagerBoot, Force: body.Force})
	d := time.Since(start)
	switch {
	case apierrors.IsConflict(err):
		rec.Add(FloorApply, d, "409")
	case err != nil:
		return fmt.Errorf("floor apply %s: %w", key, err)
	default:
		rec.Add(FloorApply, d, "")
	}
	return nil
}

// Reads measures n sequential VM reads from the bridge's informer cache
// (what serves GET System) and n live GETs of the same VMs.
func Reads(ctx context.Context, w *apply.Client, dyn dynamic.Interface, keys []system.Key, n int, rec *Recorder) error {
	for i := range n {
		key := keys[i%len(keys)]
		start := time.Now()
		_, err := w.Read(ctx, key)
		rec.Add(FloorCacheGET, time.Since(start), "")
		if err != nil {
			return fmt.Errorf("floor cache read %s: %w", key, err)
		}
		start = time.Now()
		_, err = dyn.Resource(kubevirt.VirtualMachines).Namespace(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
		rec.Add(FloorLiveGET, time.Since(start), "")
		if err != nil {
			return fmt.Errorf("floor live GET %s: %w", key, err)
		}
	}
	return nil
}
