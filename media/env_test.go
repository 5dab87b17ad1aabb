package media_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/inventory"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// waitTimeout bounds every wait in these tests but syncTimeout: a
// deadline for an event, generous for a loaded machine (a clean-clone CI
// run beside a benchmark took over 30 s for a restart).
const waitTimeout = 60 * time.Second

// syncTimeout bounds the wait for virt-controller's first sync of a new VM:
// longer, as virt-controller starts again when CDI is installed.
const syncTimeout = 90 * time.Second

// images serves test images; a gated path holds its GET bodies until the
// gate opens (HEAD answers at once).
type images struct {
	*httptest.Server
	mu        sync.Mutex
	files     map[string][]byte
	gates     map[string]chan struct{}
	chunked   map[string]bool  // served without Content-Length
	announced map[string]int64 // Content-Length announced, no body sent
}

func newImages(t *testing.T) *images {
	t.Helper()
	im := &images{files: map[string][]byte{}, gates: map[string]chan struct{}{}, chunked: map[string]bool{}, announced: map[string]int64{}}
	im.Server = httptest.NewServer(http.HandlerFunc(im.serve))
	t.Cleanup(func() {
		im.mu.Lock()
		for p, g := range im.gates {
			close(g)
			delete(im.gates, p)
		}
		im.mu.Unlock()
		im.Close()
	})
	return im
}

func (im *images) serve(w http.ResponseWriter, r *http.Request) {
	im.mu.Lock()
	data, ok := im.files[r.URL.Path]
	gate := im.gates[r.URL.Path]
	chunked := im.chunked[r.URL.Path]
	announced, lies := im.announced[r.URL.Path]
	im.mu.Unlock()
	if lies {
		w.Header().Set("Content-Length", fmt.Sprint(announced))
		w.WriteHeader(http.StatusOK)
		return
	}
	if !ok {
		http.NotFound(w, r)
		return
	}
	if gate != nil && r.Method == http.MethodGet {
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
	}
	if chunked {
		for b := data; len(b) > 0; b = b[min(len(b), 64<<10):] {
			if _, err := w.Write(b[:min(len(b), 64<<10)]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
		return
	}
	http.ServeContent(w, r, r.URL.Path, time.Time{}, bytes.NewReader(data))
}

// addChunked serves an image without Content-Length (its size is known
// only once all of it was read).
func (im *images) addChunked(path string, size int) (string, [32]byte) {
	url, sum := im.add(path, size, false)
	im.mu.Lock()
	defer im.mu.Unlock()
	im.chunked[path] = true
	return url, sum
}

// announce serves a path whose response claims n bytes and sends none.
func (im *images) announce(path string, n int64) string {
	im.mu.Lock()
	defer im.mu.Unlock()
	im.announced[path] = n
	return im.URL + path
}

// add serves a fresh random-ish image at path and returns its URL and sha256.
func (im *images) add(path string, size int, gated bool) (string, [32]byte) {
	unit := []byte(fmt.Sprintf("%s|%d|", path, time.Now().UnixNano()))
	data := bytes.Repeat(unit, size/len(unit)+1)[:size]
	im.mu.Lock()
	defer im.mu.Unlock()
	im.files[path] = data
	if gated {
		im.gates[path] = make(chan struct{})
	}
	return im.URL + path, sha256.Sum256(data)
}

// open releases the GETs of a gated path.
func (im *images) open(path string) {
	im.mu.Lock()
	defer im.mu.Unlock()
	if g, ok := im.gates[path]; ok {
		close(g)
		delete(im.gates, path)
	}
}

// env is a test cluster running KubeVirt's virt-controller with the
// simulator as its node side, the bridge's caches and writer.
type env struct {
	ns        string
	admin     dynamic.Interface
	adminKube kubernetes.Interface
	kube      kubernetes.Interface // as the bridge
	dyn       dynamic.Interface    // as the bridge
	cluster   *testcluster.Cluster
	inv       *inventory.Inventory
	w         *apply.Client
	svc       *media.Service
	sim       *sim.Simulator
	img       *images
	log       *slog.Logger
}

func newEnv(t *testing.T, v crds.Variant) *env {
	t.Helper()
	return newEnvWith(t, testcluster.Options{Variant: v, VirtController: true})
}

// newEnvWith is newEnv on a cluster started with opts.
func newEnvWith(t *testing.T, opts testcluster.Options) *env {
	t.Helper()
	c := testcluster.ForTestWith(t, opts)
	const ns = "media-test"
	ctx := t.Context()
	if err := c.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	level := slog.LevelWarn
	if os.Getenv("MEDIA_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: level}))
	s := sim.RunForTest(t, c.Admin, sim.Options{Namespaces: []string{ns}, Log: log})
	dyn := dynamic.NewForConfigOrDie(c.Bridge)
	kube := kubernetes.NewForConfigOrDie(c.Bridge)
	inv, err := inventory.Start(ctx, dyn, kube, []string{ns})
	if err != nil {
		t.Fatal(err)
	}
	mode, err := apply.DetectMode(ctx, dyn)
	if err != nil {
		t.Fatal(err)
	}
	w := apply.New(dyn, inv, mode, apply.Options{})
	return &env{
		ns:        ns,
		admin:     dynamic.NewForConfigOrDie(c.Admin),
		adminKube: kubernetes.NewForConfigOrDie(c.Admin),
		kube:      kube,
		dyn:       dyn,
		cluster:   c,
		inv:       inv,
		w:         w,
		svc:       newService(w, kube),
		sim:       s,
		img:       newImages(t),
		log:       log,
	}
}

// startReconciler runs a media reconciler until the returned stop is called
// (or the test ends); stop waits for Run to return.
func (e *env) startReconciler(t *testing.T, edit func(*media.Options)) (*media.Reconciler, func()) {
	t.Helper()
	opts := media.Options{
		Writer: e.w, Kube: e.kube, Dynamic: e.dyn, Events: e.inv, Namespaces: []string{e.ns},
		Options: importer.Options{ImporterImage: "redfish-bridge:test"}, OrphanGrace: time.Second, Log: e.log,
		ObjectSecret: testObjectSecret,
	}
	if edit != nil {
		edit(&opts)
	}
	r, err := media.NewReconciler(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("reconciler: %v", err)
				}
			case <-time.After(waitTimeout):
				t.Errorf("reconciler did not stop in %s", waitTimeout)
			}
		})
	}
	t.Cleanup(stop)
	return r, stop
}

// createVM creates a stopped minimal VM (containerDisk root disk, one
// masquerade interface) as an outside author would, and waits until
// virt-controller synced it (printableStatus Stopped): the media writes of
// every test then meet virt-controller's own writes on the VM, and a
// virt-controller that stopped syncing fails the test.
func (e *env) createVM(t *testing.T, name string) system.Key {
	t.Helper()
	vm := testutil.VM(e.ns, name, "Halted")
	if _, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(e.ns).Create(t.Context(), vm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create VM %s: %v", name, err)
	}
	key := system.Key{Namespace: e.ns, Name: name}
	testutil.Eventually(t, "VM "+name+" synced by virt-controller", syncTimeout, 25*time.Millisecond, func(ctx context.Context) error {
		vm, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := kubevirt.PrintableStatusOf(vm); got != kubevirt.StatusStopped {
			return fmt.Errorf("printableStatus %q, want %q", got, kubevirt.StatusStopped)
		}
		return nil
	})
	e.eventually(t, "VM "+name+" in the bridge's cache", func(context.Context) error {
		_, err := e.inv.VM(key)
		return err
	})
	return key
}

// liveVM reads the VM from the apiserver (not a cache).
func (e *env) liveVM(ctx context.Context, key system.Key) (*apply.VM, error) {
	obj, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return apply.Decode(ctx, key, obj, nil), nil
}

// waitSlot waits until the live slot satisfies cond.
func (e *env) waitSlot(t *testing.T, key system.Key, slot, what string, cond func(system.MediaSlot) bool) system.MediaSlot {
	t.Helper()
	var got system.MediaSlot
	e.eventually(t, fmt.Sprintf("%s slot %s %s", key, slot, what), func(ctx context.Context) error {
		vm, err := e.liveVM(ctx, key)
		if err != nil {
			return err
		}
		got = vm.Slots[slot]
		if !cond(got) {
			return fmt.Errorf("slot is %+v", got)
		}
		return nil
	})
	return got
}

func phaseIs(p system.MediaPhase) func(system.MediaSlot) bool {
	return func(s system.MediaSlot) bool { return s.Phase == p }
}

// pods lists the import pods of the VM's slot (live).
func (e *env) pods(ctx context.Context, key system.Key, slot string) ([]corev1.Pod, error) {
	l, err := e.adminKube.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{
		LabelSelector: media.LabelComponent + "=" + media.ComponentImporter + "," + media.LabelSlot + "=" + slot,
	})
	if err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range l.Items {
		if ownerIs(&p, key.Name) {
			out = append(out, p)
		}
	}
	return out, nil
}

// eventually polls cond until it returns nil; the test fails with the last
// error after waitTimeout.
func (e *env) eventually(t *testing.T, what string, cond func(ctx context.Context) error) {
	t.Helper()
	testutil.Eventually(t, what, waitTimeout, 25*time.Millisecond, cond)
}

// mediaPair returns whether the VM template holds the slot's disk and volume
// and the volume's claim.
func mediaPair(vm *apply.VM, slot string) (disk, volume bool, claim string) {
	name := apply.DiskName(slot)
	disks, _, _ := unstructured.NestedSlice(vm.Object.Object, "spec", "template", "spec", "domain", "devices", "disks")
	for _, d := range disks {
		if m, _ := d.(map[string]any); m["name"] == name {
			bus, _, _ := unstructured.NestedString(m, "cdrom", "bus")
			disk = bus == "sata"
		}
	}
	vols, _, _ := unstructured.NestedSlice(vm.Object.Object, "spec", "template", "spec", "volumes")
	for _, v := range vols {
		if m, _ := v.(map[string]any); m["name"] == name {
			volume = true
			claim, _, _ = unstructured.NestedString(m, "persistentVolumeClaim", "claimName")
		}
	}
	return disk, volume, claim
}

// testObjectSecret is the secret the tests' bridge signs its objects with.
var testObjectSecret = []byte("media test object secret 32 byte")

// newService is [media.NewService] with the tests' object secret.
func newService(w apply.Writer, kube kubernetes.Interface) *media.Service {
	s := media.NewService(w, kube)
	s.SetObjectSecret(testObjectSecret)
	return s
}
