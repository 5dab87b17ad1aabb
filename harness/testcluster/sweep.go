package testcluster

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

const (
	tempDirPattern = "testcluster-"
	ownerFile      = "owner.pid"
)

// claimDir records this process as the owner of a temporary cluster dir.
func claimDir(dir string) error {
	return os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o600)
}

// sweepStaleDirs removes temporary cluster dirs whose owning process is
// gone: a test binary killed by SIGKILL (go test -timeout, OOM) cannot run
// Stop; Pdeathsig kills its etcd and kube-apiserver, this removes the rest.
// Errors are ignored: it is housekeeping.
func sweepStaleDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempDirPattern+"*"))
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue // not ours, or still being set up
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(dir)
		}
	}
}
