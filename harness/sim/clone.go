package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	cdiv1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
)

// CDI's clone of a PVC, as the simulator plays it: a DataVolume with
// spec.source.pvc {namespace, name} waits (phase CloneScheduled) until the
// source PVC exists and, when a DataVolume fills it, that DataVolume has
// Succeeded (CDI clones a populated source only); then the source's image
// is really copied into the DataVolume's PVC (CloneInProgress, progress
// "NN.NN%", Succeeded), counted in [Counters].Clones and CloneBytes. A
// source larger than the target's request fails the clone as CDI's
// validation does. Whether CDI would copy on the host or let the storage
// clone (smart or CSI clone) is the storage's business: the bytes are the
// same.

// cloneSource is the source PVC of a clone DataVolume.
func cloneSource(dv *unstructured.Unstructured) (cdiv1beta1.DataVolumeSourcePVC, bool) {
	ns, _, _ := unstructured.NestedString(dv.Object, "spec", "source", "pvc", "namespace")
	name, ok, _ := unstructured.NestedString(dv.Object, "spec", "source", "pvc", "name")
	if ns == "" {
		ns = dv.GetNamespace()
	}
	return cdiv1beta1.DataVolumeSourcePVC{Namespace: ns, Name: name}, ok && name != ""
}

// startClone starts the copy of src into pvc once src is ready; until then
// it reports CloneScheduled and asks to be looked at again.
func (d *dataVolumes) startClone(ctx context.Context, dv *unstructured.Unstructured, pvc *corev1.PersistentVolumeClaim, src cdiv1beta1.DataVolumeSourcePVC) (time.Duration, error) {
	ready, why, err := d.cloneSourceReady(ctx, src)
	if err != nil {
		return 0, err
	}
	if !ready {
		return 200 * time.Millisecond, d.status(ctx, dv, func(st map[string]any) {
			st["phase"], st["progress"], st["claimName"] = string(cdiv1beta1.CloneScheduled), "N/A", pvc.Name
			st["conditions"] = []any{dvCondition("Running", "False", "CloneScheduled", why)}
		})
	}
	from, to := d.s.ImagePath(src.Namespace, src.Name), d.s.ImagePath(pvc.Namespace, pvc.Name)
	info, err := os.Stat(from)
	if err != nil {
		return 0, d.fail(ctx, dv, fmt.Errorf("clone source %s/%s: %w", src.Namespace, src.Name, err))
	}
	room := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if info.Size() > room.Value() {
		return 0, d.fail(ctx, dv, fmt.Errorf("target resources requests storage size is smaller than the source: %d < %d", room.Value(), info.Size()))
	}
	dctx, cancel := context.WithCancel(ctx)
	d.mu.Lock()
	d.running[dv.GetUID()] = cancel
	d.mu.Unlock()
	if err := d.status(ctx, dv, func(st map[string]any) {
		st["phase"], st["progress"], st["claimName"] = string(cdiv1beta1.CloneInProgress), "0.00%", pvc.Name
		st["conditions"] = []any{dvCondition("Running", "True", "Pod is running", "")}
	}); err != nil {
		cancel()
		return 0, err
	}
	d.wg.Go(func() {
		defer cancel()
		if hold := d.s.cloneHold(); hold != nil {
			select { // CloneInProgress until released
			case <-hold:
			case <-dctx.Done():
				return
			}
		}
		last := -1
		n, err := copyFile(dctx, from, to, func(written int64) {
			pct := float64(written) * 100 / float64(max(info.Size(), 1))
			if int(pct) != last { // CDI reports about once per percent
				last = int(pct)
				_ = d.status(dctx, dv, func(st map[string]any) { st["progress"] = fmt.Sprintf("%.2f%%", pct) })
			}
		})
		if dctx.Err() != nil {
			return // the DataVolume went away
		}
		if err != nil {
			_ = d.fail(ctx, dv, err)
			return
		}
		d.s.clones.Add(1)
		d.s.cloneBytes.Add(n)
		_ = d.status(ctx, dv, func(st map[string]any) {
			st["phase"], st["progress"] = string(cdiv1beta1.Succeeded), "100.0%"
			st["conditions"] = []any{dvCondition("Ready", "True", "", ""), dvCondition("Running", "False", "Completed", "Clone Complete")}
		})
		d.s.log.InfoContext(ctx, "DataVolume clone done", "dataVolume", dv.GetNamespace()+"/"+dv.GetName(), "source", src.Namespace+"/"+src.Name, "bytes", n)
	})
	return 0, nil
}

// cloneSourceReady reports whether the source PVC exists and is populated
// (its DataVolume, if one controls it, Succeeded); why says what is awaited.
func (d *dataVolumes) cloneSourceReady(ctx context.Context, src cdiv1beta1.DataVolumeSourcePVC) (bool, string, error) {
	pvc, err := d.s.kube.CoreV1().PersistentVolumeClaims(src.Namespace).Get(ctx, src.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, fmt.Sprintf("source PVC %s/%s not found", src.Namespace, src.Name), nil
	}
	if err != nil {
		return false, "", fmt.Errorf("clone source PVC %s/%s: %w", src.Namespace, src.Name, err)
	}
	ref := metav1.GetControllerOf(pvc)
	if ref == nil || ref.Kind != "DataVolume" {
		return pvc.Status.Phase == corev1.ClaimBound, "source PVC not bound", nil
	}
	owner := d.get(src.Namespace + "/" + ref.Name)
	if owner == nil || owner.GetUID() != ref.UID {
		return false, "source DataVolume not found", nil
	}
	phase, _, _ := unstructured.NestedString(owner.Object, "status", "phase")
	return phase == string(cdiv1beta1.Succeeded), "source DataVolume is " + phase, nil
}

// copyFile copies from into to (a temporary file, synced, renamed),
// calling progress with the bytes copied so far.
func copyFile(ctx context.Context, from, to string, progress func(int64)) (int64, error) {
	in, err := os.Open(from)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(to), 0o750); err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(to), ".clone-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	var n int64
	buf := make([]byte, 1<<20)
	for {
		if ctx.Err() != nil {
			_ = tmp.Close()
			return n, ctx.Err()
		}
		k, rerr := in.Read(buf)
		if k > 0 {
			if _, err := tmp.Write(buf[:k]); err != nil {
				_ = tmp.Close()
				return n, err
			}
			n += int64(k)
			progress(n)
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			_ = tmp.Close()
			return n, rerr
		}
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return n, err
	}
	if err := tmp.Close(); err != nil {
		return n, err
	}
	return n, os.Rename(tmp.Name(), to)
}

// HoldClones keeps every clone that starts from now on in CloneInProgress,
// its bytes not copied, until release is called (a test's clone in
// progress).
func (s *Simulator) HoldClones() (release func()) {
	gate := make(chan struct{})
	s.mu.Lock()
	s.clonesHeld = gate
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			if s.clonesHeld == gate {
				s.clonesHeld = nil
			}
			s.mu.Unlock()
			close(gate)
		})
	}
}

// cloneHold is the gate clones wait on, nil when none.
func (s *Simulator) cloneHold() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clonesHeld
}
