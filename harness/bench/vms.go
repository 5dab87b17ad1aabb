package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// createWorkers is how many VM creates are in flight at once: a create is
// one apiserver round trip (CRD schema validation, the admission policy,
// one etcd write), so the rate is the apiserver's, not a client's.
const createWorkers = 32

// createVMs creates n sample VMs as [createAll] does and waits until
// virt-controller synced every one (its printableStatus is set): a
// benchmark that started earlier would race virt-controller's first writes
// on them (annotations, finalizer, status).
func createVMs(ctx context.Context, cluster *testcluster.Cluster, dyn dynamic.Interface, prefix string, n, per int) ([]system.Key, error) {
	vms, err := watchVMs(ctx, dyn)
	if err != nil {
		return nil, err
	}
	defer vms.stop()
	keys, err := createAll(ctx, cluster, dyn, prefix, n, per)
	if err != nil {
		return keys, err
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute+time.Duration(n)*60*time.Millisecond)
	defer cancel()
	if _, err := vms.wait(wctx, keys, ""); err != nil {
		return keys, fmt.Errorf("wait for virt-controller: %w", err)
	}
	return keys, nil
}

// createAll creates n sample VMs ([demo.SampleVM], field manager
// demo-author) in namespaces <prefix>-0, <prefix>-1, ... of at most per VMs
// each, createWorkers at a time. It returns the keys of the VMs created,
// in namespace and name order, also when it stops early (ctx ended, or
// creates failed: the error says which).
func createAll(ctx context.Context, cluster *testcluster.Cluster, dyn dynamic.Interface, prefix string, n, per int) ([]system.Key, error) {
	return createAllThen(ctx, cluster, dyn, prefix, n, per, nil)
}

// createAllThen is [createAll] with then, when set, run on each VM right
// after its create by the same worker (a VM counts as created when then
// succeeded too).
func createAllThen(ctx context.Context, cluster *testcluster.Cluster, dyn dynamic.Interface, prefix string, n, per int,
	then func(context.Context, system.Key) error) ([]system.Key, error) {
	var want []system.Key
	for i := 0; i*per < n; i++ {
		ns := fmt.Sprintf("%s-%d", prefix, i)
		if err := cluster.CreateNamespace(ctx, ns); err != nil {
			return nil, err
		}
		for j := range min(per, n-i*per) {
			want = append(want, system.Key{Namespace: ns, Name: fmt.Sprintf("vm-%d", j)})
		}
	}
	var mu sync.Mutex
	created := make([]bool, len(want))
	index := make(map[system.Key]int, len(want))
	for i, k := range want {
		index[k] = i
	}
	err := forEach(ctx, want, createWorkers, func(ctx context.Context, k system.Key) error {
		vm := demo.SampleVM(k.Namespace, k.Name)
		_, err := dyn.Resource(kubevirt.VirtualMachines).Namespace(k.Namespace).Create(ctx, vm, metav1.CreateOptions{FieldManager: "demo-author"})
		if err != nil {
			return fmt.Errorf("create VM %s: %w", k, err)
		}
		if then != nil {
			if err := then(ctx, k); err != nil {
				return err
			}
		}
		mu.Lock()
		created[index[k]] = true
		mu.Unlock()
		return nil
	})
	var keys []system.Key
	for i, ok := range created {
		if ok {
			keys = append(keys, want[i])
		}
	}
	if err != nil {
		return keys, fmt.Errorf("%d of %d VMs created: %w", len(keys), n, firstErrors(err, 3))
	}
	return keys, nil
}

// firstErrors keeps the first n errors of a joined error (a bounded create
// of 10,000 VMs may fail thousands of times for one reason).
func firstErrors(err error, n int) error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return err
	}
	errs := j.Unwrap()
	if len(errs) <= n {
		return err
	}
	return fmt.Errorf("%w (and %d more errors)", errors.Join(errs[:n]...), len(errs)-n)
}

// forEach runs f on every key with workers goroutines and joins the errors.
// When ctx ends it hands out no more keys; the error says how many were
// not started, with ctx's error.
func forEach(ctx context.Context, keys []system.Key, workers int, f func(context.Context, system.Key) error) error {
	started, errs := startEach(ctx, keys, workers, f)
	if started < len(keys) {
		errs = append(errs, fmt.Errorf("%d of %d not started: %w", len(keys)-started, len(keys), ctx.Err()))
	}
	return errors.Join(errs...)
}

// startEach hands keys in order to workers goroutines running f until
// every key was handed out or ctx ended, waits for them, and returns how
// many keys were started and f's errors.
func startEach(ctx context.Context, keys []system.Key, workers int, f func(context.Context, system.Key) error) (int, []error) {
	work := make(chan system.Key)
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for k := range work {
				if err := f(ctx, k); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	started := 0
feed:
	for _, k := range keys {
		select {
		case work <- k:
			started++
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	return started, errs
}
