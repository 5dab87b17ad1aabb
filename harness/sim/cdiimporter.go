package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/redfish-bridge/redfish-bridge/media/download"
)

// CDI's importer image, as the simulated kubelet runs it: its container's
// environment (cmd/cdi-importer reads IMPORTER_SOURCE, IMPORTER_ENDPOINT,
// IMPORTER_ACCESS_KEY_ID and IMPORTER_SECRET_KEY from the Secret CDI names,
// IMPORTER_CERT_DIR where the certConfigMap is mounted, IMPORTER_IMAGE_SIZE)
// says what to import; the bytes go into the PVC's simulated storage; the
// end is its termination message, JSON on success ("Import Complete"),
// plain text with exit code 1 on failure ("Unable to connect to http data
// source: ..." when the source does not open, else "Unable to process
// data: <error>"), and
// the pod's restartPolicy OnFailure restarts it, as cdi-controller sees it.
const (
	cdiEnvSource    = "IMPORTER_SOURCE"
	cdiEnvEndpoint  = "IMPORTER_ENDPOINT"
	cdiEnvAccessKey = "IMPORTER_ACCESS_KEY_ID"
	cdiEnvSecretKey = "IMPORTER_SECRET_KEY"
	cdiEnvCertDir   = "IMPORTER_CERT_DIR"
	cdiEnvImageSize = "IMPORTER_IMAGE_SIZE"
	cdiEnvOverhead  = "FILESYSTEM_OVERHEAD"
	cdiEnvOwnerUID  = "OWNER_UID"
	// cdiAlign is CDI's DefaultAlignBlockSize: usable space is rounded
	// down to it.
	cdiAlign = 1 << 20
	// cdiCompleteMessage is the importer's message on success.
	cdiCompleteMessage = "Import Complete"
)

// cdiImport is what an importer pod's environment asks for.
type cdiImport struct {
	source, endpoint     string
	accessKey, secretKey string
	certDir              string
	imageSize            int64
	overhead             float64
	ownerUID             string
}

// cdiImportOf reads the importer container's environment, resolving
// secretKeyRef values as the kubelet does.
func (s *Simulator) cdiImportOf(ctx context.Context, pod *corev1.Pod) (cdiImport, error) {
	var imp cdiImport
	for _, c := range pod.Spec.Containers {
		if c.Name != cdiImporterContainer {
			continue
		}
		for _, e := range c.Env {
			val := e.Value
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				ref := e.ValueFrom.SecretKeyRef
				sec, err := s.kube.CoreV1().Secrets(pod.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
				if err != nil {
					return imp, fmt.Errorf("env %s: secret %q: %w", e.Name, ref.Name, err)
				}
				val = string(sec.Data[ref.Key])
			}
			switch e.Name {
			case cdiEnvSource:
				imp.source = val
			case cdiEnvEndpoint:
				imp.endpoint = val
			case cdiEnvAccessKey:
				imp.accessKey = val
			case cdiEnvSecretKey:
				imp.secretKey = val
			case cdiEnvCertDir:
				imp.certDir = val
			case cdiEnvImageSize:
				if q, err := resource.ParseQuantity(val); err == nil {
					imp.imageSize = q.Value()
				}
			case cdiEnvOwnerUID:
				imp.ownerUID = val
			case cdiEnvOverhead:
				imp.overhead, _ = strconv.ParseFloat(val, 64)
			}
		}
	}
	return imp, nil
}

// cdiRequest is the download the import asks for, its credentials and
// certConfigMap written as files under dir: every key of the mounted
// ConfigMap is trusted, as CDI's importer trusts every file in its cert
// directory.
func (s *Simulator) cdiRequest(ctx context.Context, pod *corev1.Pod, imp cdiImport, claim, dir string) (download.ImportRequest, error) {
	req := download.ImportRequest{URL: imp.endpoint, Dest: s.ImagePath(pod.Namespace, claim), RoomBytes: max(cdiUsableSpace(imp.overhead, imp.imageSize), 1)}
	if imp.accessKey != "" || imp.secretKey != "" {
		req.CredentialsDir = filepath.Join(dir, "credentials")
		if err := writeVolume(req.CredentialsDir, map[string][]byte{
			download.CredentialUserKey: []byte(imp.accessKey), download.CredentialPasswordKey: []byte(imp.secretKey),
		}); err != nil {
			return req, err
		}
	}
	if imp.certDir == "" {
		return req, nil
	}
	var bundle []byte
	for _, v := range cdiMountedAt(pod, imp.certDir) {
		data, err := s.volumeData(ctx, pod.Namespace, v)
		if err != nil {
			return req, err
		}
		for _, pem := range data {
			bundle = append(bundle, pem...)
			bundle = append(bundle, '\n')
		}
	}
	req.CAFile = filepath.Join(dir, "certs", "bundle.pem")
	return req, writeVolume(filepath.Dir(req.CAFile), map[string][]byte{"bundle.pem": bundle})
}

// cdiUsableSpace is the room CDI's importer finds in a filesystem PVC of
// size bytes (its util.GetUsableSpace): the filesystem overhead
// cdi-controller added to the request taken off again, rounded down to
// cdiAlign.
func cdiUsableSpace(overhead float64, size int64) int64 {
	space := int64(math.Ceil(float64(size) / (1 + overhead)))
	return space / cdiAlign * cdiAlign
}

// cdiMountedAt is the ConfigMap or Secret volumes the importer container
// mounts at path.
func cdiMountedAt(pod *corev1.Pod, path string) []corev1.Volume {
	var out []corev1.Volume
	for _, c := range pod.Spec.Containers {
		if c.Name != cdiImporterContainer {
			continue
		}
		for _, m := range c.VolumeMounts {
			if filepath.Clean(m.MountPath) != filepath.Clean(path) {
				continue
			}
			for _, v := range pod.Spec.Volumes {
				if v.Name == m.Name && (v.ConfigMap != nil || v.Secret != nil) {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// startImporter runs the importer container of pod into claim's storage
// in the background, its container Running meanwhile.
func (n *cdiNode) startImporter(ctx context.Context, pod *corev1.Pod, claim string) error {
	s := n.s
	dctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	s.downloads[pod.UID] = cancel
	s.mu.Unlock()
	restarts := cdiRestarts(pod)
	now := metav1.Now()
	err := s.updatePodStatus(ctx, pod, func(st *corev1.PodStatus) {
		var last corev1.ContainerState
		if len(st.ContainerStatuses) > 0 && st.ContainerStatuses[0].State.Terminated != nil {
			last = st.ContainerStatuses[0].State // the run before, restarted
		}
		st.Phase = corev1.PodRunning
		if st.StartTime == nil {
			st.StartTime = &now
		}
		st.HostIP, st.PodIP = "10.0.0.1", n.podIP
		st.ContainerStatuses = containerStatuses(pod, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}})
		for i := range st.ContainerStatuses {
			st.ContainerStatuses[i].RestartCount = restarts
			st.ContainerStatuses[i].LastTerminationState = last
		}
	})
	if err != nil {
		s.cancelDownload(pod.UID)
		return err
	}
	s.importsStarted.Add(1)
	s.downloadWG.Go(func() {
		defer cancel()
		dir := filepath.Join(s.opts.DataDir, ".pods", string(pod.UID))
		defer os.RemoveAll(dir) // the kubelet unmounts the volumes of a finished run
		err := n.runImporter(dctx, pod, claim, dir)
		if dctx.Err() != nil {
			s.log.InfoContext(ctx, "CDI importer aborted", "pod", pod.Namespace+"/"+pod.Name)
			return
		}
		n.finishImporter(ctx, pod, restarts, err)
	})
	return nil
}

// runImporter is the importer image's work.
func (n *cdiNode) runImporter(ctx context.Context, pod *corev1.Pod, claim, dir string) error {
	s := n.s
	imp, err := s.cdiImportOf(ctx, pod)
	if err != nil {
		return err
	}
	if imp.source != "http" {
		return fmt.Errorf("Unknown data source: %s", imp.source) //nolint:staticcheck // CDI's words
	}
	req, err := s.cdiRequest(ctx, pod, imp, claim, dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(req.Dest), 0o750); err != nil {
		return fmt.Errorf("image dir: %w", err)
	}
	s.log.InfoContext(ctx, "CDI importer started", "pod", pod.Namespace+"/"+pod.Name, "url", imp.endpoint, "claim", claim)
	req.Progress = func(written, total int64) {
		if total > 0 {
			n.setProgress(imp.ownerUID, float64(written)*100/float64(total))
		}
	}
	defer n.setProgress(imp.ownerUID, -1)
	_, err = req.Run(ctx)
	if st := (*download.HTTPStatusError)(nil); errors.As(err, &st) {
		// CDI's http data source fails to open: cmd/cdi-importer's words.
		return fmt.Errorf("Unable to connect to http data source: expected status code 200, got %d. Status: %s", st.Code, st.Status) //nolint:staticcheck // CDI's words
	}
	if nr := (*download.NeedRoomError)(nil); errors.As(err, &nr) {
		err = fmt.Errorf("Virtual image size %d is larger than the reported available storage %d. A larger PVC is required.", nr.Bytes, nr.Room) //nolint:staticcheck // CDI's words
	}
	if err != nil {
		return fmt.Errorf("Unable to process data: %w", err) //nolint:staticcheck // CDI's words
	}
	return nil
}

// finishImporter ends the importer container's run: exit 0 with CDI's
// JSON termination message, or exit 1 with the error as plain text
// (the pod stays Running: restartPolicy OnFailure restarts it, see sync).
func (n *cdiNode) finishImporter(ctx context.Context, pod *corev1.Pod, restarts int32, importErr error) {
	s := n.s
	term := corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", FinishedAt: metav1.Now()}
	phase := corev1.PodSucceeded
	if importErr == nil {
		msg, _ := json.Marshal(map[string]any{"scratchSpaceRequired": false, "preallocationApplied": false, "message": cdiCompleteMessage})
		term.Message = string(msg)
		s.importsOK.Add(1)
	} else {
		term.ExitCode, term.Reason, phase = 1, "Error", corev1.PodRunning
		term.Message = strings.ReplaceAll(importErr.Error(), "\n", " ")
		s.importsFailed.Add(1)
	}
	s.mu.Lock()
	delete(s.downloads, pod.UID)
	if importErr == nil {
		s.finished[pod.UID] = true
	}
	s.mu.Unlock()
	err := s.updatePodStatus(ctx, pod, func(st *corev1.PodStatus) {
		st.Phase = phase
		if st.StartTime != nil {
			term.StartedAt = *st.StartTime
		}
		last := corev1.ContainerState{}
		if len(st.ContainerStatuses) > 0 {
			last = st.ContainerStatuses[0].LastTerminationState
		}
		st.ContainerStatuses = containerStatuses(pod, corev1.ContainerState{Terminated: &term})
		for i := range st.ContainerStatuses {
			st.ContainerStatuses[i].RestartCount = restarts
			st.ContainerStatuses[i].LastTerminationState = last
		}
	})
	if err != nil {
		s.log.WarnContext(ctx, "finish CDI importer", "pod", pod.Namespace+"/"+pod.Name, "error", err)
		return
	}
	s.log.InfoContext(ctx, "CDI importer ended", "pod", pod.Namespace+"/"+pod.Name, "exitCode", term.ExitCode, "message", term.Message)
}

// cdiRestarts is the restart count of the pod's next run: one more than
// now when its container last terminated with an error.
func cdiRestarts(pod *corev1.Pod) int32 {
	if len(pod.Status.ContainerStatuses) == 0 {
		return 0
	}
	cs := pod.Status.ContainerStatuses[0]
	if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
		return cs.RestartCount + 1
	}
	return cs.RestartCount
}
