package bench_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/harness/testca"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/inventory"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// BenchmarkImageCache: BENCH_IMAGE_VMS (default 50) VMs insert one image
// (BENCH_IMAGE_MIB, default 8 MiB: 50 VM copies + the entry take ~410 MiB
// of disk) at once with the image cache on, with each import method
// (BENCH_IMAGE_METHODS, default "pod,cdi": the import pod copying from the
// entry; CDI importing the entry once and cloning it into every slot, the
// simulator playing CDI) on each CRD variant: it reports the bytes the
// image server sent against the image's size (target <= 1.05x), the time
// until every slot was Ready, and checks every VM's PVC holds the image;
// then the image changes at that URL and one VM re-inserts: it must get
// the new bytes.
func BenchmarkImageCache(b *testing.B) {
	n := envInt(b, "BENCH_IMAGE_VMS", 50)
	mib := envInt(b, "BENCH_IMAGE_MIB", 8)
	for b.Loop() {
		for _, method := range strings.Split(env("BENCH_IMAGE_METHODS", "pod,cdi"), ",") {
			method = strings.TrimSpace(method)
			for _, v := range strings.Split(env("BENCH_VARIANTS", "maplist,stock"), ",") {
				v = strings.TrimSpace(v)
				b.Run(method+"/"+v, func(b *testing.B) { runImageCache(b, crds.Variant(v), method, n, mib<<20) })
			}
		}
	}
}

func runImageCache(b *testing.B, v crds.Variant, method string, n, size int) {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx := logctx.Into(b.Context(), log)
	c := testcluster.ForTestWith(b, testcluster.Options{Variant: v, VirtController: true})
	const ns = "image-cache"
	if err := c.CreateNamespace(ctx, ns); err != nil {
		b.Fatal(err)
	}
	if method == media.ImportMethodCDI {
		if err := c.InstallCDI(ctx); err != nil {
			b.Fatal(err)
		}
	}
	data := b.TempDir()
	s, err := sim.New(c.Admin, sim.Options{Namespaces: []string{ns}, DataDir: data, Log: log})
	if err != nil {
		b.Fatal(err)
	}
	simCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(simCtx) }()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Errorf("simulator: %v", err)
		}
	})
	if method == media.ImportMethodCDI {
		cdiCtx, cdiCancel := context.WithCancel(ctx)
		cdiDone := make(chan error, 1)
		go func() { cdiDone <- s.RunDataVolumes(cdiCtx) }()
		b.Cleanup(func() {
			cdiCancel()
			if err := <-cdiDone; err != nil {
				b.Errorf("simulated CDI: %v", err)
			}
		})
	}
	dyn, kube := dynamic.NewForConfigOrDie(c.Bridge), kubernetes.NewForConfigOrDie(c.Bridge)
	admin := dynamic.NewForConfigOrDie(c.Admin)
	inv, err := inventory.Start(ctx, dyn, kube, []string{ns})
	if err != nil {
		b.Fatal(err)
	}
	mode, err := apply.DetectMode(ctx, dyn)
	if err != nil {
		b.Fatal(err)
	}
	w := apply.New(dyn, inv, mode, apply.Options{})
	svc := media.NewService(w, kube)
	svc.SetImageCache(true)
	svc.SetImageCacheKey([]byte("BenchmarkImageCache image cache secret, 0123456789"))
	r, err := media.NewReconciler(media.Options{
		Writer: w, Kube: kube, Dynamic: dyn, Events: inv, Namespaces: []string{ns},
		ImportMethod: method, Options: importer.Options{ImporterImage: "redfish-bridge:bench"}, Log: log, Workers: 4,
		ObjectSecret: []byte("BenchmarkImageCache object secret, 0123456789"), // signs the entries' digest records
	})
	if err != nil {
		b.Fatal(err)
	}
	rctx, rcancel := context.WithCancel(ctx)
	rdone := make(chan error, 1)
	go func() { rdone <- r.Run(rctx) }()
	b.Cleanup(func() {
		rcancel()
		if err := <-rdone; err != nil {
			b.Errorf("reconciler: %v", err)
		}
	})

	srv := testca.NewVersionedImage(b)
	url := srv.URL + "/fleet.iso"
	sum := srv.SetFresh(size)
	keys := make([]system.Key, n)
	for i := range keys {
		keys[i] = system.Key{Namespace: ns, Name: fmt.Sprintf("fleet-%03d", i)}
		if _, err := admin.Resource(kubevirt.VirtualMachines).Namespace(ns).Create(ctx, testutil.VM(ns, keys[i].Name, "Halted"), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	testutil.Eventually(b, fmt.Sprintf("%d VMs synced and cached", n), 10*time.Minute, 200*time.Millisecond, func(ctx context.Context) error {
		l, err := admin.Resource(kubevirt.VirtualMachines).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for i := range l.Items {
			if got := kubevirt.PrintableStatusOf(&l.Items[i]); got != kubevirt.StatusStopped {
				return fmt.Errorf("%s: printableStatus %q", l.Items[i].GetName(), got)
			}
		}
		for _, key := range keys {
			if _, err := inv.VM(key); err != nil {
				return err
			}
		}
		return nil
	})

	began := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, key := range keys {
		wg.Go(func() { _, errs[i] = svc.Insert(ctx, key, media.DefaultSlot, system.MediaInsert{Image: url}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			b.Fatalf("Insert %s: %v", keys[i], err)
		}
	}
	claims := waitReady(b, admin, keys, nil)
	took := time.Since(began)
	for _, claim := range claims {
		checkBenchImage(b, s.ImagePath(ns, claim), sum)
	}
	served := srv.Served.Load()
	ratio := float64(served) / float64(size)
	reached := "REACHED"
	if ratio > 1.05 {
		reached = "NOT reached"
		b.Errorf("%d inserts: the image server sent %.2fx the image", n, ratio)
	}

	// The image changes at that URL; one VM re-inserts.
	before := served
	newSum := srv.SetFresh(size + 4096)
	again, err := svc.Insert(ctx, keys[0], media.DefaultSlot, system.MediaInsert{Image: url})
	if err != nil {
		b.Fatal(err)
	}
	claim := waitReady(b, admin, keys[:1], map[system.Key]string{keys[0]: again.InsertID})[0]
	checkBenchImage(b, s.ImagePath(ns, claim), newSum)
	changed := srv.Served.Load() - before

	sc := s.Counters()
	fmt.Printf("\n=== image cache, %s CRDs, %d VMs, one %d MiB image, import method %s ===\n", v, n, size>>20, method)
	fmt.Printf("%-52s %s\n", "every slot Ready after", took.Round(time.Millisecond))
	fmt.Printf("%-52s %d (%.3fx the image; target <= 1.05x: %s)\n", "body bytes the image server sent", served, ratio, reached)
	if method == media.ImportMethodCDI {
		fmt.Printf("%-52s %d (%d bytes), HEAD checks %d\n", "CDI clones of the entry (sim)", sc.Clones, sc.CloneBytes, sc.ImageChecks)
	} else {
		fmt.Printf("%-52s %d of %d\n", "imports copied from the cache (sim)", sc.ImportsFromCache, n)
	}
	fmt.Printf("%-52s %d bytes (the new image: %d), new bytes in the VM's PVC\n", "image changed, one re-insert: the server sent", changed, size+4096)
	b.ReportMetric(ratio, "served/image")
	b.ReportMetric(float64(served), "bytes-fetched")
	b.ReportMetric(took.Seconds(), "s-to-ready")
}

// waitReady waits until each VM's cd0 is Ready (of the given InsertID when
// one is given) and returns the slots' claims.
func waitReady(b *testing.B, admin dynamic.Interface, keys []system.Key, ids map[system.Key]string) []string {
	claims := make([]string, len(keys))
	testutil.Eventually(b, fmt.Sprintf("%d slots Ready", len(keys)), 15*time.Minute, 250*time.Millisecond, func(ctx context.Context) error {
		for i, key := range keys {
			obj, err := admin.Resource(kubevirt.VirtualMachines).Namespace(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			slot := apply.Decode(ctx, key, obj, nil).Slots[media.DefaultSlot]
			if slot.Phase == system.MediaFailed {
				b.Fatalf("%s: import failed: %s", key, slot.Reason)
			}
			if slot.Phase != system.MediaReady || (ids != nil && slot.InsertID != ids[key]) {
				return fmt.Errorf("%s: slot %s %s", key, slot.Phase, slot.Reason)
			}
			claims[i] = slot.ClaimName
		}
		return nil
	})
	return claims
}

func checkBenchImage(b *testing.B, path string, sum [32]byte) {
	got, err := os.ReadFile(path)
	if err != nil {
		b.Fatalf("%s: %v", filepath.Base(filepath.Dir(path)), err)
	}
	if sha256.Sum256(got) != sum {
		b.Errorf("%s holds %d bytes that are not the image served", path, len(got))
	}
}
