package bench

import (
	"context"
	"fmt"
	"os"

	"github.com/redfish-bridge/redfish-bridge/harness/bridgeproc"
)

// bridgeBuild is the bridge binary being built into a temporary
// directory (dir, the caller's to remove) while the caller starts a
// cluster: bin is set once done delivered nil.
type bridgeBuild struct {
	dir, bin string
	done     chan error
}

// buildBridge starts building the bridge binary into a new temporary
// directory named after prefix.
func buildBridge(ctx context.Context, prefix string) (*bridgeBuild, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	b := &bridgeBuild{dir: dir, done: make(chan error, 1)}
	go func() {
		bin, err := bridgeproc.Build(ctx, dir)
		b.bin = bin
		b.done <- err
	}()
	return b, nil
}
