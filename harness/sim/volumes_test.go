package sim_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/redfish-bridge/redfish-bridge/harness/testca"
	"github.com/redfish-bridge/redfish-bridge/media/download"
)

// testMountedSecret: the import pod's Secret volume (private CA and Basic
// credentials, the way media/ builds it) reaches the bridge's downloader;
// a pod whose Secret is missing waits with FailedMount until it appears.
func (k *kubeletTest) testMountedSecret(t *testing.T) {
	ca, err := testca.New("sim test CA")
	if err != nil {
		t.Fatal(err)
	}
	image := []byte(strings.Repeat("private image ", 4096))
	srv, err := ca.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "ironic" || p != "pa55" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write(image)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)

	k.createPVC(t, "iso-tls", corev1.ReadWriteOnce)
	k.createSecretPod(t, "import-tls", "iso-tls", "import-tls-config", srv.URL+"/a.iso")
	eventually(t, "FailedMount event", func(ctx context.Context) error {
		evs, err := k.kube.CoreV1().Events(k.ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=import-tls"})
		if err != nil {
			return err
		}
		for _, ev := range evs.Items {
			if ev.Reason == "FailedMount" && strings.Contains(ev.Message, "import-tls-config") {
				return nil
			}
		}
		return fmt.Errorf("%d events, none FailedMount naming the Secret", len(evs.Items))
	})
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "import-tls-config"},
		Data:       map[string][]byte{download.CAKey: []byte(ca.PEM), download.CredentialUserKey: []byte("ironic"), download.CredentialPasswordKey: []byte("pa55")},
	}
	if _, err := k.kube.CoreV1().Secrets(k.ns).Create(t.Context(), sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	end := k.podEnds(t, "import-tls")
	if end.Phase != corev1.PodSucceeded {
		t.Fatalf("pod ended %+v, want Succeeded", end)
	}
	data, err := os.ReadFile(k.sim.ImagePath(k.ns, "iso-tls"))
	if err != nil || string(data) != string(image) {
		t.Fatalf("imported %d bytes (err %v), want the %d bytes served", len(data), err, len(image))
	}
}

// createSecretPod creates an import pod that mounts Secret secret at
// /etc/import and reads its CA and credentials from there.
func (k *kubeletTest) createSecretPod(t *testing.T, name, claim, secret, url string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/component": "importer", "app.kubernetes.io/part-of": "redfish-bridge"}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "importer", Image: "registry.example/importer:v1",
				Args: []string{"import", "--url=" + url, "--dest=/data/disk.img",
					"--ca-file=/etc/import/ca.pem", "--credentials-dir=/etc/import"},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "config", MountPath: "/etc/import", ReadOnly: true}},
			}},
			Volumes: []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}},
				{Name: "config", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}},
			},
		},
	}
	if _, err := k.kube.CoreV1().Pods(k.ns).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
