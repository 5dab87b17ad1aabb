package sim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/redfish-bridge/redfish-bridge/media/download"
)

// volumeRetry is how soon a pod whose Secret or ConfigMap is missing is
// looked at again (the kubelet retries mounts the same way).
const volumeRetry = time.Second

// mountVolumes plays the kubelet's Secret and ConfigMap volumes for the
// importer container: each mounted volume's keys are written as files
// under a per-pod directory, and the job's file paths (--ca-file,
// --credentials-dir) are rewritten from the container's mount paths to
// there; a second PVC (the image cache entry, --cache-dir) is its claim's
// data directory. It returns the per-pod directory.
func (s *Simulator) mountVolumes(ctx context.Context, pod *corev1.Pod, job *importJob) (string, error) {
	root := filepath.Join(s.opts.DataDir, ".pods", string(pod.UID))
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = v
	}
	for _, c := range pod.Spec.Containers {
		if c.Name != ImporterContainer {
			continue
		}
		for _, m := range c.VolumeMounts {
			v, ok := volumes[m.Name]
			if ok && v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName != job.claim {
				// Another PVC (the image cache entry): its data is where the
				// simulator keeps that claim's image, shared by every pod.
				dir := filepath.Dir(s.ImagePath(pod.Namespace, v.PersistentVolumeClaim.ClaimName))
				if err := os.MkdirAll(dir, 0o750); err != nil {
					_ = os.RemoveAll(root)
					return "", fmt.Errorf("mount volume %q: %w", v.Name, err)
				}
				job.req.CacheDir = remount(job.req.CacheDir, m.MountPath, dir)
				continue
			}
			if !ok || (v.Secret == nil && v.ConfigMap == nil) {
				continue
			}
			data, err := s.volumeData(ctx, pod.Namespace, v)
			if err != nil {
				_ = os.RemoveAll(root)
				return "", err
			}
			dir := filepath.Join(root, v.Name)
			if err := writeVolume(dir, data); err != nil {
				_ = os.RemoveAll(root)
				return "", err
			}
			job.req.CAFile = remount(job.req.CAFile, m.MountPath, dir)
			job.req.CredentialsDir = remount(job.req.CredentialsDir, m.MountPath, dir)
		}
	}
	return root, nil
}

// volumeData reads the keys of a Secret or ConfigMap volume.
func (s *Simulator) volumeData(ctx context.Context, ns string, v corev1.Volume) (map[string][]byte, error) {
	if v.Secret != nil {
		sec, err := s.kube.CoreV1().Secrets(ns).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("MountVolume.SetUp failed for volume %q: %w", v.Name, err)
		}
		return sec.Data, nil
	}
	cm, err := s.kube.CoreV1().ConfigMaps(ns).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("MountVolume.SetUp failed for volume %q: %w", v.Name, err)
	}
	data := map[string][]byte{}
	for k, val := range cm.Data {
		data[k] = []byte(val)
	}
	return data, nil
}

func writeVolume(dir string, data map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("mount volume: %w", err)
	}
	for k, v := range data {
		if err := os.WriteFile(filepath.Join(dir, k), v, 0o600); err != nil {
			return fmt.Errorf("mount volume: %w", err)
		}
	}
	return nil
}

// remount rewrites path under mountPath to the same path under dir.
func remount(path, mountPath, dir string) string {
	if path == "" {
		return ""
	}
	rel, err := filepath.Rel(mountPath, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return path
	}
	return filepath.Join(dir, rel)
}

// runImport runs the bridge's import job, with the image written where the
// simulator keeps the claim's image.
func (s *Simulator) runImport(ctx context.Context, ns string, job importJob) (download.ImportResult, error) {
	req := job.req
	if req.HeadOnly {
		return req.Run(ctx)
	}
	req.Dest = s.ImagePath(ns, job.claim)
	if err := os.MkdirAll(filepath.Dir(req.Dest), 0o750); err != nil {
		return download.ImportResult{}, fmt.Errorf("image dir: %w", err)
	}
	return req.Run(ctx)
}
