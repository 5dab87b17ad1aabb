package deploy

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/media"
)

// TestImageCacheUninstall installs the chart with the image cache on a
// real apiserver: the generated key Secret survives an upgrade; then
// helm uninstall runs the pre-delete hook. The test cluster has no Job
// controller, so the test plays it: it runs the Job's container (the
// binary, with the Job's args, as the chart's ServiceAccount) and
// records the Job complete; helm then removes the release, and no image
// cache entry is left (the one an import pod reads is being deleted).
func TestImageCacheUninstall(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a test cluster")
	}
	ctx := t.Context()
	cluster := testcluster.ForTest(t, crds.Stock)
	for _, ns := range []string{releaseNS, vmNS} {
		if err := cluster.CreateNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
	admin := kubernetes.NewForConfigOrDie(cluster.Admin)
	env := &installed{cluster: cluster, admin: admin}
	helmArgs := []string{"--namespace", releaseNS, "--kubeconfig", cluster.Kubeconfig}
	mustHelm(t, append([]string{"install", release, chartDir, "--set", "imageCache.enabled=true", "--set", "watchNamespaces={" + vmNS + "}"}, helmArgs...)...)
	key := func() string {
		s, err := admin.CoreV1().Secrets(releaseNS).Get(ctx, fullname+"-image-cache-key", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return string(s.Data["image-cache-key"])
	}
	installed := key()
	if len(installed) < media.MinImageCacheKeyBytes {
		t.Fatalf("generated image cache key: %d bytes, want >= %d", len(installed), media.MinImageCacheKeyBytes)
	}
	mustHelm(t, append([]string{"upgrade", release, chartDir, "--reuse-values", "--set", "imageCache.size=10Gi"}, helmArgs...)...)
	if diff := cmp.Diff(installed, key()); diff != "" {
		t.Errorf("image cache key changed on upgrade (-installed +upgraded):\n%s", diff)
	}

	// Two entries, one of them read by an import pod.
	entries := []string{media.CacheClaimName(strings.Repeat("a", 32)), media.CacheClaimName(strings.Repeat("b", 32))}
	for _, name := range entries {
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: vmNS,
				Labels:      map[string]string{media.LabelComponent: media.ComponentImageCache, media.LabelPartOf: media.PartOf},
				Annotations: map[string]string{media.AnnotationCacheKey: strings.TrimPrefix(name, "redfish-image-")}},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}
		if _, err := admin.CoreV1().PersistentVolumeClaims(vmNS).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "import", Namespace: vmNS, Labels: map[string]string{media.LabelComponent: media.ComponentImporter, media.LabelPartOf: media.PartOf}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "import", Image: "redfish-bridge:test"}},
			Volumes: []corev1.Volume{{Name: "image-cache", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: entries[1]}}}}},
	}
	if _, err := admin.CoreV1().Pods(vmNS).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	bin := buildBinary(t, t.TempDir())
	kubeconfig := serviceAccountKubeconfig(t, env)
	uninstalled := make(chan string, 1)
	go func() {
		out, errOut, err := helm(t, append([]string{"uninstall", release, "--timeout", "5m"}, helmArgs...)...)
		if err != nil {
			out += errOut + err.Error()
		}
		uninstalled <- out
	}()
	var job *batchv1.Job
	testutil.Eventually(t, "the pre-delete hook Job", 2*time.Minute, 100*time.Millisecond, func(ctx context.Context) error {
		var err error
		job, err = admin.BatchV1().Jobs(releaseNS).Get(ctx, fullname+"-cache-prune", metav1.GetOptions{})
		return err
	})
	c := job.Spec.Template.Spec.Containers[0]
	if sa := job.Spec.Template.Spec.ServiceAccountName; sa != fullname {
		t.Errorf("hook Job runs as %q, want the bridge's ServiceAccount %q", sa, fullname)
	}
	out, err := exec.CommandContext(ctx, bin, append(c.Args, "--kubeconfig="+kubeconfig)...).CombinedOutput() // the Job's args
	t.Logf("the hook's container, %v:\n%s", c.Args, out)
	if err != nil {
		t.Fatalf("the hook's container failed: %v", err)
	}
	now := metav1.Now()
	job.Status = batchv1.JobStatus{StartTime: &now, CompletionTime: &now, Succeeded: 1, Conditions: []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
	}}
	if _, err := admin.BatchV1().Jobs(releaseNS).UpdateStatus(ctx, job, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("record the hook Job complete: %v", err)
	}
	select {
	case out := <-uninstalled:
		if !strings.Contains(out, "uninstalled") {
			t.Fatalf("helm uninstall:\n%s", out)
		}
	case <-time.After(5 * time.Minute):
		t.Fatal("helm uninstall did not return after the hook Job completed")
	}
	for _, name := range entries {
		p, err := admin.CoreV1().PersistentVolumeClaims(vmNS).Get(ctx, name, metav1.GetOptions{})
		if err == nil && p.DeletionTimestamp == nil {
			t.Errorf("image cache entry %s/%s left after helm uninstall", vmNS, name)
		}
	}
}

// serviceAccountKubeconfig writes a kubeconfig file for the chart's
// ServiceAccount (a TokenRequest token) and returns its path.
func serviceAccountKubeconfig(t *testing.T, env *installed) string {
	t.Helper()
	sa := serviceAccountConfig(t, env)
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: sa.Host, CertificateAuthorityData: sa.CAData}
	kc.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: sa.BearerToken}
	kc.Contexts["sa"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "sa"}
	kc.CurrentContext = "sa"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(path, 0o600)
	return path
}
