package media_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestMediaCDI runs the imports on a cluster with CDI v1.66.0's own
// cdi-controller, built from source (testcluster's Options.CDI), the
// simulator playing only the node side (the importer pods cdi-controller
// makes: sim.RunCDINode), once per CRD variant: a DataVolume owned by the
// VM imports the image, no pod of the bridge's.
func TestMediaCDI(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a test cluster")
	}
	if os.Geteuid() != 0 {
		testutil.Missing(t, "root, for cdi-controller's network and mount namespaces")
	}
	for _, v := range []crds.Variant{crds.Stock, crds.MapList} {
		t.Run(string(v), func(t *testing.T) {
			e := newEnvWith(t, testcluster.Options{Variant: v, VirtController: true, CDI: true})
			e.startCDINode(t)
			_, stop := e.startReconciler(t, func(o *media.Options) { o.MaxImageSize = cdiMaxImage })
			defer stop()
			t.Run("InsertReachesReady", func(t *testing.T) { testCDIControllerInsert(t, e) })
			t.Run("DataVolumeImportsWithProgress", func(t *testing.T) { testCDIImport(t, e) })
			t.Run("PrivateCA", func(t *testing.T) { testCDITrust(t, e) })
			t.Run("CredentialsUseThePod", func(t *testing.T) { testCDICredentials(t, e) })
			t.Run("EjectDeletesOwnedDataVolumeOnly", func(t *testing.T) { testCDIEject(t, e) })
			t.Run("FailureFailsTheSlot", func(t *testing.T) { testCDIFailure(t, e) })
			t.Run("VerifyOffUsesThePod", func(t *testing.T) { testCDIVerifyOff(t, e) })
			t.Run("HostNameResolvedAtInsert", func(t *testing.T) { testCDIHostPolicy(t, e) })
			t.Run("ImageAboveMaximumFails", func(t *testing.T) { testCDIMaxImage(t, e) })
		})
	}
}

// halfServer serves size bytes at /half.iso: the first half at once, the
// rest once release is closed.
func halfServer(t *testing.T, size int) (url string, image []byte, release chan struct{}) {
	t.Helper()
	image = []byte(strings.Repeat("cdi image|", size/10+1))[:size]
	release = make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(image)))
		_, _ = w.Write(image[:size/2])
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		_, _ = w.Write(image[size/2:])
	}))
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
		srv.Close()
	})
	return srv.URL + "/half.iso", image, release
}

// dataVolumes lists the live DataVolumes of the namespace.
func (e *env) dataVolumes(ctx context.Context) ([]unstructured.Unstructured, error) {
	l, err := e.admin.Resource(media.DataVolumeResource).Namespace(e.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// insertAsDataVolume inserts url in key's slot and waits for the
// insert's DataVolume, which must bear the slot's claim name and import
// url over HTTP; it returns the slot as Insert answered and the
// DataVolume.
func (e *env) insertAsDataVolume(t *testing.T, key system.Key, url string) (system.MediaSlot, *unstructured.Unstructured) {
	t.Helper()
	got, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: url})
	if err != nil {
		t.Fatal(err)
	}
	dv := e.dataVolumeOf(t, key, got.InsertID)
	if dv.GetName() != got.ClaimName {
		t.Errorf("DataVolume %s, want the slot's claim name %s", dv.GetName(), got.ClaimName)
	}
	if src, _, _ := unstructured.NestedString(dv.Object, "spec", "source", "http", "url"); src != url {
		t.Errorf("DataVolume http source %q, want %q", src, url)
	}
	return got, dv
}

// dataVolumeOf waits for the DataVolume of the slot's insert and returns it.
func (e *env) dataVolumeOf(t *testing.T, key system.Key, insertID string) *unstructured.Unstructured {
	t.Helper()
	var dv *unstructured.Unstructured
	e.eventually(t, "DataVolume of insert "+insertID, func(ctx context.Context) error {
		dvs, err := e.dataVolumes(ctx)
		if err != nil {
			return err
		}
		for i := range dvs {
			if dvs[i].GetLabels()[media.LabelInsertID] == insertID && ownerIs(&dvs[i], key.Name) {
				dv = &dvs[i]
				return nil
			}
		}
		return fmt.Errorf("%d DataVolumes, none of this insert", len(dvs))
	})
	return dv
}

func testCDIImport(t *testing.T, e *env) {
	key := e.createVM(t, vmName(t))
	const size = 4<<20 + 3
	url, image, release := halfServer(t, size)
	got, _ := e.insertAsDataVolume(t, key, url)
	// Half the image is in: CDI's progress reaches the slot (the Task's
	// PercentComplete, see redfish TestTaskPercentComplete).
	progress := e.waitSlot(t, key, slot, "Importing with progress", func(s system.MediaSlot) bool {
		return s.Phase == system.MediaImporting && s.Percent >= 45
	})
	if progress.Method != media.ImportMethodCDI || progress.Percent > 55 {
		t.Errorf("slot %+v: want method cdi at about 50%%", progress)
	}
	e.noImportPods(t, key)
	close(release)
	ready := e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))
	if ready.InsertID != got.InsertID || ready.Percent != 0 {
		t.Errorf("ready slot %+v", ready)
	}
	data, err := os.ReadFile(e.sim.ImagePath(e.ns, got.ClaimName))
	if err != nil || sha256.Sum256(data) != sha256.Sum256(image) {
		t.Fatalf("imported %d bytes (err %v): not the served image", len(data), err)
	}
	vm, err := e.liveVM(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if disk, volume, claim := mediaPair(vm, slot); !disk || !volume || claim != got.ClaimName {
		t.Errorf("VM media: disk %v volume %v claim %q, want the DataVolume's PVC %s", disk, volume, claim, got.ClaimName)
	}
	// The DataVolume stays: it owns the PVC holding the image.
	if _, err := e.admin.Resource(media.DataVolumeResource).Namespace(e.ns).Get(t.Context(), got.ClaimName, metav1.GetOptions{}); err != nil {
		t.Errorf("DataVolume of the Ready slot: %v", err)
	}
	e.noImportPods(t, key)
}

// testCDITrust: the slot's private CA reaches the DataVolume's
// certConfigMap, and the import succeeds with it.
func testCDITrust(t *testing.T, e *env) {
	srv := newPrivateServer(t, false)
	key := e.createVM(t, vmName(t))
	if _, err := e.svc.AddCertificate(t.Context(), key, slot, srv.ca.PEM); err != nil {
		t.Fatal(err)
	}
	got, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: srv.URL + "/gated.iso"})
	if err != nil {
		t.Fatal(err)
	}
	dv := e.dataVolumeOf(t, key, got.InsertID)
	source, _, _ := unstructured.NestedStringMap(dv.Object, "spec", "source", "http")
	if source["certConfigMap"] != got.ImportSecret || got.ImportSecret == "" || source["secretRef"] != "" {
		t.Fatalf("DataVolume http source %v, want certConfigMap %q and no secretRef", source, got.ImportSecret)
	}
	cm, err := e.adminKube.CoreV1().ConfigMaps(e.ns).Get(t.Context(), got.ImportSecret, metav1.GetOptions{})
	if err != nil || !strings.Contains(cm.Data[download.CAKey], strings.TrimSpace(srv.ca.PEM)) {
		t.Fatalf("certConfigMap %s (err %v): want the slot's CA", got.ImportSecret, err)
	}
	close(srv.gate)
	e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))
	data, err := os.ReadFile(e.sim.ImagePath(e.ns, got.ClaimName))
	if err != nil || sha256.Sum256(data) != sha256.Sum256(srv.image) {
		t.Fatalf("imported %d bytes (err %v): not the served image", len(data), err)
	}
	e.waitImportObjectsGone(t, got.ImportSecret)
}

// testCDICredentials: CDI's importer re-sends a DataVolume's secretRef
// credentials on every redirect, to any host, so an insert with UserName
// and Password is imported by the bridge's pod, even with CDI: no
// DataVolume is made, and the host the image server redirects to never
// sees the credentials.
func testCDICredentials(t *testing.T, e *env) {
	var leaked, elsewhereHits atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhereHits.Add(1)
		if r.Header.Get("Authorization") != "" {
			leaked.Add(1)
		}
		_, _ = w.Write([]byte(strings.Repeat("redirected image|", 4096)))
	}))
	t.Cleanup(elsewhere.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, pw, ok := r.BasicAuth(); !ok || u != imageUser || pw != imagePass {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		http.Redirect(w, r, elsewhere.URL+"/a.iso", http.StatusFound)
	}))
	t.Cleanup(srv.Close)
	key := e.createVM(t, vmName(t))
	got, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: srv.URL + "/redirect.iso", UserName: imageUser, Password: imagePass})
	if err != nil {
		t.Fatal(err)
	}
	ready := e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))
	if ready.InsertID != got.InsertID || ready.Method != media.ImportMethodPod {
		t.Errorf("slot %+v: want insert %s imported by the pod method", ready, got.InsertID)
	}
	dvs, err := e.dataVolumes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, dv := range dvs {
		if dv.GetLabels()[media.LabelInsertID] == got.InsertID {
			t.Errorf("DataVolume %s made for an insert with credentials (CDI hands them to every redirect)", dv.GetName())
		}
	}
	if elsewhereHits.Load() == 0 || leaked.Load() != 0 {
		t.Errorf("the host redirected to got %d requests, %d with credentials; want some, none with credentials", elsewhereHits.Load(), leaked.Load())
	}
}

// testCDIEject: eject deletes the slot's DataVolume (and with it its PVC);
// a DataVolume with the bridge's labels that this VM does not own stays.
func testCDIEject(t *testing.T, e *env) {
	key := e.createVM(t, vmName(t))
	foreign := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
		"metadata": map[string]any{"name": "foreign-dv", "namespace": e.ns, "labels": map[string]any{
			media.LabelPartOf: media.PartOf, media.LabelSlot: slot, media.LabelComponent: media.ComponentMedia}},
		"spec": map[string]any{"source": map[string]any{"http": map[string]any{"url": "http://127.0.0.1:1/none.iso"}}},
	}}
	if _, err := e.admin.Resource(media.DataVolumeResource).Namespace(e.ns).Create(t.Context(), foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	url, _ := e.img.add("/eject-cdi.iso", 1<<20, false)
	got, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: url})
	if err != nil {
		t.Fatal(err)
	}
	e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))
	e.dataVolumeOf(t, key, got.InsertID)
	if err := e.svc.Eject(t.Context(), key, slot); err != nil {
		t.Fatal(err)
	}
	e.eventually(t, "DataVolume and PVC of the ejected slot deleted", func(ctx context.Context) error {
		_, err := e.admin.Resource(media.DataVolumeResource).Namespace(e.ns).Get(ctx, got.ClaimName, metav1.GetOptions{})
		_, pvcErr := e.adminKube.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, got.ClaimName, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) || !apierrors.IsNotFound(pvcErr) {
			return fmt.Errorf("DataVolume err %w, PVC err %w", err, pvcErr)
		}
		return nil
	})
	if _, err := e.admin.Resource(media.DataVolumeResource).Namespace(e.ns).Get(t.Context(), "foreign-dv", metav1.GetOptions{}); err != nil {
		t.Errorf("the DataVolume the bridge does not own: %v, want it kept", err)
	}
}

// testCDIFailure: an import CDI fails fails the slot with CDI's message
// as soon as the importer container ends (before the kubelet restarts
// it, when CDI clears that message), and its DataVolume goes.
func testCDIFailure(t *testing.T, e *env) {
	key := e.createVM(t, vmName(t))
	got, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: e.img.URL + "/missing-cdi.iso"})
	if err != nil {
		t.Fatal(err)
	}
	want := "CDI DataVolume " + got.ClaimName + " failed: Unable to connect to http data source: expected status code 200, got 404. Status: 404 Not Found"
	e.waitFailed(t, key, want)
	// A 404 is not a size problem: no word of the maximum image size.
	if failed := e.waitSlot(t, key, slot, "Failed", phaseIs(system.MediaFailed)); failed.Reason != want {
		t.Errorf("Reason %q, want exactly %q", failed.Reason, want)
	}
	e.eventually(t, "failed DataVolume deleted", func(ctx context.Context) error {
		_, err := e.admin.Resource(media.DataVolumeResource).Namespace(e.ns).Get(ctx, got.ClaimName, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("err %w", err)
		}
		return nil
	})
}

// testCDIVerifyOff: CDI's http source always verifies TLS, so an insert
// with VerifyCertificate false is imported by the pod, even with CDI.
func testCDIVerifyOff(t *testing.T, e *env) {
	srv := newPrivateServer(t, false)
	key := e.createVM(t, vmName(t))
	if err := e.svc.SetVerifyCertificate(t.Context(), key, slot, false); err != nil {
		t.Fatal(err)
	}
	close(srv.gate)
	got, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: srv.URL + "/gated.iso"})
	if err != nil {
		t.Fatal(err)
	}
	ready := e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))
	if ready.Method != media.ImportMethodPod {
		t.Errorf("slot %+v: want the pod method", ready)
	}
	dvs, err := e.dataVolumes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, dv := range dvs {
		if dv.GetLabels()[media.LabelInsertID] == got.InsertID {
			t.Errorf("DataVolume %s made for an insert that does not verify TLS", dv.GetName())
		}
	}
}
