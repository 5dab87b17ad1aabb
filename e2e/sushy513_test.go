package e2e

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/redfish-bridge/redfish-bridge/harness/ironicproc"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// sushy513 is the directory [sushy513Dir] made, removed by TestMain.
var sushy513 struct {
	once sync.Once
	dir  string
}

// sushy513Dir is a directory holding only a link to the sushy package of
// the Ironic 39 chroot (hack/ironic-chroot.sh: Debian unstable's sushy
// 5.13.0, pure Python), to put first on PYTHONPATH: the host's python3 and
// its requests, dateutil and stevedore run it, the chroot's other modules
// (built for its python3.13) stay out of the way. Without the chroot it
// names a directory that is not there ([sushyLib.check] says so).
func sushy513Dir() string {
	sushy513.once.Do(func() {
		sushy513.dir = "/nonexistent/ironic-39-chroot"
		root, err := testutil.FindModuleRoot()
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		chroot, err := ironicproc.ChrootPath(ctx, root)
		if err != nil {
			return
		}
		pkg := filepath.Join(chroot, "usr", "lib", "python3", "dist-packages", "sushy")
		if _, err := os.Stat(pkg); err != nil {
			return
		}
		dir, err := os.MkdirTemp("", "redfish-bridge-sushy513-")
		if err != nil {
			return
		}
		if err := os.Symlink(pkg, filepath.Join(dir, "sushy")); err != nil {
			_ = os.RemoveAll(dir)
			return
		}
		sushy513.dir = dir
	})
	return sushy513.dir
}

// removeSushy513Dir removes what [sushy513Dir] made (not the chroot).
func removeSushy513Dir() {
	if d := sushy513.dir; d != "" && filepath.Dir(d) == filepath.Clean(os.TempDir()) {
		_ = os.RemoveAll(d)
	}
}
