package sim

import (
	"k8s.io/apimachinery/pkg/types"
)

// importBusy reports whether the pod's import is running or done.
func (s *Simulator) importBusy(uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, running := s.downloads[uid]
	return running || s.finished[uid]
}

func (s *Simulator) cancelDownload(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cancel, ok := s.downloads[uid]; ok {
		cancel()
		delete(s.downloads, uid)
	}
}

// once reports whether uid was not yet in set, and adds it.
func (s *Simulator) once(set map[types.UID]bool, uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if set[uid] {
		return false
	}
	set[uid] = true
	return true
}

// forgetPod aborts a deleted pod's download and drops what is remembered
// about it.
func (s *Simulator) forgetPod(obj any) {
	pod := asPod(obj)
	if pod == nil {
		return
	}
	s.cancelDownload(pod.UID)
	s.mu.Lock()
	delete(s.finished, pod.UID)
	delete(s.refused, pod.UID)
	delete(s.missingPVC, pod.UID)
	delete(s.missingVolume, pod.UID)
	s.mu.Unlock()
}
