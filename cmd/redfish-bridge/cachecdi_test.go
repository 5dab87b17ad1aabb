package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/media"
)

// TestCachePruneCDI: where CDI imports, `cache prune` deletes the CDI
// method's entries (DataVolumes with the cache's labels and key, their PVC
// going with them) and their CA ConfigMaps, keeps an entry a clone that
// has not finished reads unless --include-in-use, and never touches a
// slot's DataVolume.
func TestCachePruneCDI(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a test cluster")
	}
	c := testcluster.ForTest(t, crds.Stock)
	ctx := t.Context()
	if err := c.InstallCDI(ctx); err != nil {
		t.Fatal(err)
	}
	const ns = "vms-c"
	if err := c.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	admin := kubernetes.NewForConfigOrDie(c.Admin)
	dvs := dynamic.NewForConfigOrDie(c.Admin).Resource(media.DataVolumeResource).Namespace(ns)
	dataVolume := func(name string, labels, annotations map[string]string, source map[string]any) {
		t.Helper()
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"spec": map[string]any{
				"source":  source,
				"storage": map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}},
			},
		}}
		u.SetLabels(labels)
		u.SetAnnotations(annotations)
		if _, err := dvs.Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	entryLabels := map[string]string{media.LabelComponent: media.ComponentImageCache, media.LabelPartOf: media.PartOf}
	entry := func(name string) {
		t.Helper()
		dataVolume(name, entryLabels, map[string]string{media.AnnotationCacheKey: strings.Repeat("k", 32)},
			map[string]any{"http": map[string]any{"url": "https://images.example/" + name + ".iso"}})
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name + "-ca", Namespace: ns, Labels: entryLabels}}
		if _, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	entry("redfish-image-idle")
	entry("redfish-image-busy")
	// A slot's clone of the busy entry, not finished (no phase yet).
	dataVolume("vm-0-media-cd0", map[string]string{media.LabelComponent: media.ComponentMedia, media.LabelPartOf: media.PartOf}, nil,
		map[string]any{"pvc": map[string]any{"namespace": ns, "name": "redfish-image-busy"}})
	// Labelled like an entry but without a key: not an entry.
	dataVolume("labelled-no-key", entryLabels, nil, map[string]any{"http": map[string]any{"url": "https://images.example/x.iso"}})

	left := func() []string {
		t.Helper()
		l, err := dvs.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, u := range l.Items {
			if u.GetDeletionTimestamp() == nil {
				out = append(out, u.GetName())
			}
		}
		for _, cm := range []string{"redfish-image-idle-ca", "redfish-image-busy-ca"} {
			if _, err := admin.CoreV1().ConfigMaps(ns).Get(ctx, cm, metav1.GetOptions{}); err == nil {
				out = append(out, "ConfigMap "+cm)
			} else if !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
		}
		slices.Sort(out)
		return out
	}
	prune := func(args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(t, false, nil, append([]string{"cache", "prune", "--kubeconfig", c.BridgeKubeconfig, "--namespaces", ns}, args...)...)
		if code != 0 {
			t.Fatalf("cache prune %q: exit %d\n%s%s", args, code, out, errOut)
		}
		return out
	}
	out := prune()
	want := []string{"ConfigMap redfish-image-busy-ca", "labelled-no-key", "redfish-image-busy", "vm-0-media-cd0"}
	if diff := cmp.Diff(want, left()); diff != "" {
		t.Errorf("after prune, left (-want +got):\n%s\noutput:\n%s", diff, out)
	}
	if !strings.Contains(out, ns+"/redfish-image-busy  1Gi  kept (in use)") {
		t.Errorf("output does not say the busy entry is kept:\n%s", out)
	}
	out = prune("--include-in-use")
	want = []string{"labelled-no-key", "vm-0-media-cd0"}
	if diff := cmp.Diff(want, left()); diff != "" {
		t.Errorf("after prune --include-in-use, left (-want +got):\n%s\noutput:\n%s", diff, out)
	}
}
