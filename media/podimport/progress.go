package podimport

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
)

// The bridge's side of the import pod's progress (importprogress.go): the
// last progress line of a Running import pod's log (pods/log, which the
// apiserver serves from the node's kubelet) becomes the slot's Task
// PercentComplete, as a CDI DataVolume's status.progress does. Bounded: only
// Running pods, at most one read per pod every [progressReadEvery] (a
// reconcile in between reuses the last read), the last few lines, a short
// timeout; a failed read leaves the progress as it was. A running import
// asks for another look after progressReadEvery.

const (
	// progressReadEvery is how often a running import pod's log is read at most.
	progressReadEvery = 3 * time.Second
	// progressReadTimeout bounds one read of a pod's log.
	progressReadTimeout = 2 * time.Second
	// progressTailLines are the lines of the log read: the progress lines
	// end it (the result line comes when the pod ends).
	progressTailLines = 4
	// progressLimitBytes bounds the bytes of one read.
	progressLimitBytes = 1024
)

// readPodLogs is switched off only by the negative control of the pod
// method's progress.
var readPodLogs = true

// podProgress remembers the last read of each running import pod's log.
type podProgress struct {
	mu    sync.Mutex
	reads map[types.UID]progressRead
	swept time.Time
}

type progressRead struct {
	at      time.Time
	percent int
}

// withProgress adds the progress of the Running import pod to its status
// st (podStatus) and asks for another look in progressReadEvery.
func (p *podImporter) withProgress(ctx context.Context, pod *corev1.Pod, st importer.Status) importer.Status {
	if st.State != importer.Running || pod.Status.Phase != corev1.PodRunning || pod.Spec.NodeName == "" || !readPodLogs {
		return st
	}
	st.Percent = p.progress.percent(ctx, p.d.Kube, pod)
	st.Recheck = progressReadEvery
	return st
}

// percent is the pod's progress as of its last read, read again when that
// is older than progressReadEvery.
func (pp *podProgress) percent(ctx context.Context, kube kubernetes.Interface, pod *corev1.Pod) int {
	now := time.Now()
	pp.mu.Lock()
	if pp.reads == nil {
		pp.reads = map[types.UID]progressRead{}
	}
	last, ok := pp.reads[pod.UID]
	if ok && now.Sub(last.at) < progressReadEvery {
		pp.mu.Unlock()
		return last.percent
	}
	pp.reads[pod.UID] = progressRead{at: now, percent: last.percent} // one reader at a time
	if now.Sub(pp.swept) > time.Minute {                             // pods long gone
		pp.swept = now
		for uid, rd := range pp.reads {
			if now.Sub(rd.at) > time.Minute {
				delete(pp.reads, uid)
			}
		}
	}
	pp.mu.Unlock()

	rctx, cancel := context.WithTimeout(ctx, progressReadTimeout)
	defer cancel()
	out, err := kube.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{
		Container: importer.ImporterContainer, TailLines: ptr.To[int64](progressTailLines), LimitBytes: ptr.To[int64](progressLimitBytes),
	}).DoRaw(rctx)
	if err != nil {
		logctx.From(ctx).DebugContext(ctx, "import pod's progress not read", "pod", pod.Namespace+"/"+pod.Name, "error", err)
		return last.percent
	}
	pct := last.percent
	if written, total, ok := download.ParseProgress(out); ok {
		pct = max(pct, download.ProgressPercent(written, total))
	}
	pp.mu.Lock()
	pp.reads[pod.UID] = progressRead{at: now, percent: pct}
	pp.mu.Unlock()
	return pct
}
