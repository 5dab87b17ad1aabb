package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/harness/testca"
	"github.com/redfish-bridge/redfish-bridge/media/download"
)

// The kubelet's log endpoint: the simulator runs import pods in-process,
// and what their program prints (the import's progress lines, then its
// result: [download.RunImport]'s output) is served as the pods' logs the way
// a node does. An HTTPS server on 127.0.0.1 answers
// /containerLogs/{namespace}/{pod}/{container} (tailLines, limitBytes),
// and the Node [NodeName] gets status.addresses InternalIP 127.0.0.1 and
// status.daemonEndpoints.kubeletEndpoint.Port: kube-apiserver proxies
// pods/log there (it verifies no kubelet certificate without
// --kubelet-certificate-authority).

// maxPodLog bounds what is kept of one pod's output: its end.
const maxPodLog = 64 << 10

// kubelet holds the output of the import pods the simulator ran.
type kubelet struct {
	mu   sync.Mutex
	logs map[string]*podLog // by namespace/name
}

// podLog is one pod's output, of the pod with that UID.
type podLog struct {
	mu  sync.Mutex
	uid types.UID
	buf bytes.Buffer
}

func (l *podLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(b)
	if over := l.buf.Len() - maxPodLog; over > 0 {
		l.buf.Next(over)
	}
	return len(b), nil
}

func (l *podLog) bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.buf.Bytes())
}

// logOf is the output of the pod, a fresh one for a new pod of the name.
func (k *kubelet) logOf(pod *corev1.Pod) *podLog {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.logs == nil {
		k.logs = map[string]*podLog{}
	}
	key := pod.Namespace + "/" + pod.Name
	if l, ok := k.logs[key]; ok && l.uid == pod.UID {
		return l
	}
	l := &podLog{uid: pod.UID}
	k.logs[key] = l
	return l
}

// forget drops the output of a pod gone.
func (k *kubelet) forget(pod *corev1.Pod) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if l, ok := k.logs[pod.Namespace+"/"+pod.Name]; ok && l.uid == pod.UID {
		delete(k.logs, pod.Namespace+"/"+pod.Name)
	}
}

// runImportLogged is [Simulator.runImport] printing what `redfish-bridge
// import` prints into the pod's log: progress lines, then the result.
func (s *Simulator) runImportLogged(ctx context.Context, pod *corev1.Pod, job importJob) (download.ImportResult, error) {
	out := s.kubelet.logOf(pod)
	report, stop := download.PrintProgress(out)
	job.req.Progress = report
	res, err := s.runImport(ctx, pod.Namespace, job)
	stop()
	fmt.Fprintln(out, download.TerminationMessage(res, err))
	return res, err
}

// serveKubelet starts the log endpoint until ctx ends and points the Node
// at it.
func (s *Simulator) serveKubelet(ctx context.Context) error {
	ca, err := testca.New("sim kubelet")
	if err != nil {
		return fmt.Errorf("sim: kubelet CA: %w", err)
	}
	srv, err := ca.NewServer(http.HandlerFunc(s.containerLogs))
	if err != nil {
		return fmt.Errorf("sim: kubelet server: %w", err)
	}
	context.AfterFunc(ctx, srv.Close)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		return fmt.Errorf("sim: kubelet address: %w", err)
	}
	p, _ := strconv.Atoi(port)
	patch, err := json.Marshal(map[string]any{"status": map[string]any{
		"addresses":       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
		"daemonEndpoints": corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(p)}},
	}})
	if err != nil {
		return fmt.Errorf("sim: node status: %w", err)
	}
	_, err = s.kube.CoreV1().Nodes().Patch(ctx, NodeName, types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldManager: "kubelet"}, "status")
	if apierrors.IsNotFound(err) {
		s.log.InfoContext(ctx, "no node: pods' logs not served", "node", NodeName)
		return nil
	}
	if err != nil {
		return fmt.Errorf("sim: node %s kubelet endpoint: %w", NodeName, err)
	}
	return nil
}

// containerLogs serves GET /containerLogs/{namespace}/{pod}/{container}.
func (s *Simulator) containerLogs(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/containerLogs/"), "/")
	if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/containerLogs/") || len(parts) != 3 {
		http.NotFound(w, r)
		return
	}
	if parts[2] != ImporterContainer {
		http.Error(w, fmt.Sprintf("container %q in pod %q is not available", parts[2], parts[1]), http.StatusBadRequest)
		return
	}
	s.kubelet.mu.Lock()
	l := s.kubelet.logs[parts[0]+"/"+parts[1]]
	s.kubelet.mu.Unlock()
	if l == nil {
		http.Error(w, fmt.Sprintf("container %q in pod %q is waiting to start", parts[2], parts[1]), http.StatusBadRequest)
		return
	}
	out := l.bytes()
	if n, err := strconv.Atoi(r.URL.Query().Get("tailLines")); err == nil && n >= 0 {
		out = tail(out, n)
	}
	if n, err := strconv.Atoi(r.URL.Query().Get("limitBytes")); err == nil && n >= 0 && n < len(out) {
		out = out[:n]
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = io.Copy(w, bytes.NewReader(out))
}

// tail is the last n lines of out.
func tail(out []byte, n int) []byte {
	lines := bytes.SplitAfter(out, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return bytes.Join(lines, nil)
}
