package sim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"

	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/media/download"
)

// RunDataVolumes plays CDI's DataVolume controller (and the garbage
// collector of the PVCs DataVolumes own) until ctx ends; the cluster must
// serve cdi.kubevirt.io/v1beta1 DataVolumes (testcluster's InstallCDI).
// For every DataVolume with an http source it creates the PVC of the same
// name (owned by the DataVolume, with its labels; the simulator binds it),
// downloads the URL into the PVC's image with the bridge's own download
// code (the secretRef's accessKeyId and secretKey as Basic credentials,
// every key of the certConfigMap as trusted CAs) up to the PVC's whole
// request (CDI adds its filesystem overhead to the PVC, so the request is
// usable; an image that does not fit fails with the message of CDI's
// qemu.go checkIfURLIsValid, "Virtual image size N is larger than the
// reported available storage M. A larger PVC is required."), and reports
// status.phase (ImportInProgress, Succeeded), status.progress ("NN.N%") and,
// like CDI's crashing importer, a failure as restartCount 1 with the error
// as the Running condition's message. A DataVolume with a pvc source is a
// clone (clone.go): the source PVC's bytes are copied.
func (s *Simulator) RunDataVolumes(ctx context.Context) error {
	namespaces := s.opts.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	d := &dataVolumes{s: s, queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		running: map[types.UID]context.CancelFunc{}}
	var synced []cache.InformerSynced
	for _, ns := range namespaces {
		inf := dynamicinformer.NewFilteredDynamicInformer(s.dyn, media.DataVolumeResource, ns, 0, cache.Indexers{}, nil)
		if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { d.queue.Add(key(obj)) },
			UpdateFunc: func(_, obj any) { d.queue.Add(key(obj)) },
			DeleteFunc: func(obj any) { d.queue.Add(key(obj)) },
		}); err != nil {
			return fmt.Errorf("sim: DataVolume handler: %w", err)
		}
		d.stores = append(d.stores, inf.Informer().GetStore())
		synced = append(synced, inf.Informer().HasSynced)
		go inf.Informer().RunWithContext(ctx)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return nil // stopped before it started
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			k, quit := d.queue.Get()
			if quit {
				return
			}
			after, err := d.sync(ctx, k)
			switch {
			case err != nil && ctx.Err() == nil:
				s.log.WarnContext(ctx, "DataVolume sync", "dataVolume", k, "error", err)
				d.queue.AddRateLimited(k)
			case after > 0:
				d.queue.AddAfter(k, after)
			default:
				d.queue.Forget(k)
			}
			d.queue.Done(k)
		}
	})
	<-ctx.Done()
	d.queue.ShutDown()
	wg.Wait()
	d.wg.Wait()
	return nil
}

type dataVolumes struct {
	s       *Simulator
	queue   workqueue.TypedRateLimitingInterface[string]
	stores  []cache.Store
	mu      sync.Mutex
	running map[types.UID]context.CancelFunc
	wg      sync.WaitGroup
}

func (d *dataVolumes) get(k string) *unstructured.Unstructured {
	for _, st := range d.stores {
		if obj, ok, _ := st.GetByKey(k); ok {
			u, _ := obj.(*unstructured.Unstructured)
			return u
		}
	}
	return nil
}

func (d *dataVolumes) sync(ctx context.Context, k string) (time.Duration, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(k)
	if err != nil {
		return 0, nil
	}
	dv := d.get(k)
	if dv == nil {
		return 0, d.collectClaim(ctx, ns, name)
	}
	phase, _, _ := unstructured.NestedString(dv.Object, "status", "phase")
	restarts, _, _ := unstructured.NestedInt64(dv.Object, "status", "restartCount")
	d.mu.Lock()
	_, busy := d.running[dv.GetUID()]
	d.mu.Unlock()
	if phase == "Succeeded" || phase == "Failed" || restarts > 0 || busy {
		return 0, nil
	}
	pvc, err := d.s.kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		pvc, err = d.s.kube.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claimOf(dv), metav1.CreateOptions{})
	}
	if err != nil {
		return 0, fmt.Errorf("PVC of DataVolume %s: %w", k, err)
	}
	if ref := metav1.GetControllerOf(pvc); ref != nil && ref.Kind == "DataVolume" && ref.UID != dv.GetUID() {
		// An older DataVolume's, not yet collected.
		if pvc.DeletionTimestamp == nil {
			err := d.s.kube.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pvc.UID}})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return 0, fmt.Errorf("delete PVC %s of an older DataVolume: %w", k, err)
			}
		}
		return 100 * time.Millisecond, nil
	}
	if ref := metav1.GetControllerOf(pvc); ref == nil || ref.UID != dv.GetUID() {
		return time.Second, d.status(ctx, dv, func(st map[string]any) {
			st["phase"] = "Pending"
			st["conditions"] = []any{dvCondition("Ready", "False", "ErrClaimNotValid", fmt.Sprintf("PVC %s already exists and is not owned by DataVolume %s", name, name))}
		})
	}
	if pvc.Status.Phase != corev1.ClaimBound {
		return 50 * time.Millisecond, nil
	}
	if src, ok := cloneSource(dv); ok {
		return d.startClone(ctx, dv, pvc, src)
	}
	return 0, d.start(ctx, dv, pvc)
}

// claimOf is the PVC CDI makes for dv: its name, labels and spec.storage.
func claimOf(dv *unstructured.Unstructured) *corev1.PersistentVolumeClaim {
	size, _, _ := unstructured.NestedString(dv.Object, "spec", "storage", "resources", "requests", "storage")
	class, hasClass, _ := unstructured.NestedString(dv.Object, "spec", "storage", "storageClassName")
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name: dv.GetName(), Namespace: dv.GetNamespace(), Labels: dv.GetLabels(),
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: media.DataVolumeResource.GroupVersion().String(), Kind: "DataVolume",
				Name: dv.GetName(), UID: dv.GetUID(), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			VolumeMode:  ptr.To(corev1.PersistentVolumeFilesystem),
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{}},
		},
	}
	if q, err := resource.ParseQuantity(size); err == nil {
		pvc.Spec.Resources.Requests[corev1.ResourceStorage] = q
	}
	if hasClass {
		pvc.Spec.StorageClassName = &class
	}
	return pvc
}

// start runs the import of dv into pvc in the background.
func (d *dataVolumes) start(ctx context.Context, dv *unstructured.Unstructured, pvc *corev1.PersistentVolumeClaim) error {
	req, dir, err := d.request(ctx, dv, pvc)
	if err != nil {
		return d.fail(ctx, dv, err)
	}
	dctx, cancel := context.WithCancel(ctx)
	d.mu.Lock()
	d.running[dv.GetUID()] = cancel
	d.mu.Unlock()
	if err := d.status(ctx, dv, func(st map[string]any) {
		st["phase"], st["progress"], st["claimName"] = "ImportInProgress", "N/A", pvc.Name
		st["conditions"] = []any{dvCondition("Running", "True", "Pod is running", "")}
	}); err != nil {
		cancel()
		return err
	}
	last := -1
	req.Progress = func(written, total int64) {
		pct := float64(written) * 100 / float64(total)
		if total <= 0 || int(pct) == last { // CDI reports about once per percent
			return
		}
		last = int(pct)
		_ = d.status(dctx, dv, func(st map[string]any) { st["progress"] = fmt.Sprintf("%.2f%%", pct) })
	}
	d.wg.Go(func() {
		defer cancel()
		defer os.RemoveAll(dir)
		if err := os.MkdirAll(filepath.Dir(req.Dest), 0o750); err != nil {
			_ = d.fail(ctx, dv, err)
			return
		}
		_, err := req.Run(dctx)
		if dctx.Err() != nil {
			return // the DataVolume went away
		}
		if nr := (*download.NeedRoomError)(nil); errors.As(err, &nr) {
			err = fmt.Errorf("Virtual image size %d is larger than the reported available storage %d. A larger PVC is required.", nr.Bytes, nr.Room) //nolint:staticcheck // CDI's words
		}
		if err != nil {
			_ = d.fail(ctx, dv, err)
			return
		}
		_ = d.status(ctx, dv, func(st map[string]any) {
			st["phase"], st["progress"] = "Succeeded", "100.0%"
			st["conditions"] = []any{dvCondition("Ready", "True", "", ""), dvCondition("Running", "False", "Completed", "Import Complete")}
		})
		d.s.log.InfoContext(ctx, "DataVolume import done", "dataVolume", dv.GetNamespace()+"/"+dv.GetName())
	})
	return nil
}

// request is the import dv asks for, with its secretRef and certConfigMap
// written as files into a fresh directory (removed by the caller).
func (d *dataVolumes) request(ctx context.Context, dv *unstructured.Unstructured, pvc *corev1.PersistentVolumeClaim) (download.ImportRequest, string, error) {
	ns := dv.GetNamespace()
	url, _, _ := unstructured.NestedString(dv.Object, "spec", "source", "http", "url")
	secret, _, _ := unstructured.NestedString(dv.Object, "spec", "source", "http", "secretRef")
	certs, _, _ := unstructured.NestedString(dv.Object, "spec", "source", "http", "certConfigMap")
	size := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	req := download.ImportRequest{URL: url, Dest: d.s.ImagePath(ns, pvc.Name), RoomBytes: max(size.Value(), 1)}
	dir := filepath.Join(d.s.opts.DataDir, ".datavolumes", string(dv.GetUID()))
	if secret != "" {
		sec, err := d.s.kube.CoreV1().Secrets(ns).Get(ctx, secret, metav1.GetOptions{})
		if err != nil {
			return req, dir, fmt.Errorf("secretRef %s: %w", secret, err)
		}
		req.CredentialsDir = filepath.Join(dir, "secret")
		if err := writeVolume(req.CredentialsDir, sec.Data); err != nil {
			return req, dir, err
		}
	}
	if certs != "" {
		cm, err := d.s.kube.CoreV1().ConfigMaps(ns).Get(ctx, certs, metav1.GetOptions{})
		if err != nil {
			return req, dir, fmt.Errorf("certConfigMap %s: %w", certs, err)
		}
		var bundle []byte
		for _, pem := range cm.Data { // CDI trusts every key
			bundle = append(bundle, []byte(pem+"\n")...)
		}
		req.CAFile = filepath.Join(dir, "certs", "bundle.pem")
		if err := writeVolume(filepath.Dir(req.CAFile), map[string][]byte{"bundle.pem": bundle}); err != nil {
			return req, dir, err
		}
	}
	return req, dir, nil
}

// fail records err as CDI records a crashed importer pod.
func (d *dataVolumes) fail(ctx context.Context, dv *unstructured.Unstructured, err error) error {
	d.s.log.InfoContext(ctx, "DataVolume import failed", "dataVolume", dv.GetNamespace()+"/"+dv.GetName(), "error", err)
	return d.status(ctx, dv, func(st map[string]any) {
		st["phase"], st["restartCount"] = "ImportInProgress", int64(1)
		st["conditions"] = []any{dvCondition("Ready", "False", "", ""), dvCondition("Running", "False", "Error", err.Error())}
	})
}

// status edits the live DataVolume's status (same UID) through the status
// subresource.
func (d *dataVolumes) status(ctx context.Context, dv *unstructured.Unstructured, edit func(map[string]any)) error {
	api := d.s.dyn.Resource(media.DataVolumeResource).Namespace(dv.GetNamespace())
	for range 5 {
		live, err := api.Get(ctx, dv.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && live.GetUID() != dv.GetUID()) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("get DataVolume: %w", err)
		}
		st, _, _ := unstructured.NestedMap(live.Object, "status")
		if st == nil {
			st = map[string]any{}
		}
		edit(st)
		live.Object["status"] = st
		_, err = api.UpdateStatus(ctx, live, metav1.UpdateOptions{FieldManager: "cdi-controller"})
		if !apierrors.IsConflict(err) {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
	}
	return fmt.Errorf("update status of DataVolume %s/%s: conflicts", dv.GetNamespace(), dv.GetName())
}

// collectClaim plays the garbage collector for a DataVolume gone: its
// download stops and the PVC it controlled is deleted.
func (d *dataVolumes) collectClaim(ctx context.Context, ns, name string) error {
	pvc, err := d.s.kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get PVC %s/%s: %w", ns, name, err)
	}
	ref := metav1.GetControllerOf(pvc)
	if ref == nil || ref.Kind != "DataVolume" {
		return nil
	}
	d.mu.Lock()
	if cancel, ok := d.running[ref.UID]; ok {
		cancel()
		delete(d.running, ref.UID)
	}
	d.mu.Unlock()
	if pvc.DeletionTimestamp != nil {
		return nil
	}
	err = d.s.kube.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pvc.UID}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete PVC %s/%s of a deleted DataVolume: %w", ns, name, err)
	}
	return nil
}

func dvCondition(typ, status, reason, message string) map[string]any {
	now := metav1.Now().UTC().Format(time.RFC3339)
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": message,
		"lastTransitionTime": now, "lastHeartbeatTime": now}
}
