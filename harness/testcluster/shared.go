package testcluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/crds"
)

// shared holds the clusters [Shared] started in this test binary.
var shared struct {
	mu       sync.Mutex
	main     bool // RunMain is running
	clusters map[sharedKey]*sharedCluster
}

// sharedKey tells the shared clusters apart.
type sharedKey struct {
	variant        crds.Variant
	virtController bool
	virtAPI        bool
}

type sharedCluster struct {
	once sync.Once
	c    *Cluster
	err  error
}

// RunMain runs the tests and then stops the clusters [Shared] started. Use
// it from TestMain: func TestMain(m *testing.M) { os.Exit(testcluster.RunMain(m)) }.
func RunMain(m *testing.M) int {
	shared.mu.Lock()
	shared.main = true
	shared.mu.Unlock()
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	for k, sc := range shared.clusters {
		if sc.c == nil {
			continue
		}
		if err := sc.c.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop shared %s test cluster: %v\n", k.variant, err)
			code = 1
		}
	}
	return code
}

// Shared returns one cluster with CRD variant v for the whole test binary,
// started by the first caller (~2-30 s depending on load) and stopped by
// [RunMain], which the package's TestMain must call. Tests sharing it must
// keep to their own namespaces ([Cluster.TestNamespace]). When t fails, it
// logs what the cluster's processes logged since this call, unless t or a
// subtest logged its own tails ([Cluster.LogsOnFailure]).
func Shared(t testing.TB, v crds.Variant) *Cluster {
	t.Helper()
	return sharedFor(t, sharedKey{variant: v})
}

// SharedKubeVirt is [Shared] with KubeVirt's virt-controller running
// ([Options.VirtController]): one per variant for the whole test binary,
// for tests whose VMs run (with package sim as the node side).
func SharedKubeVirt(t testing.TB, v crds.Variant) *Cluster {
	t.Helper()
	return sharedFor(t, sharedKey{variant: v, virtController: true})
}

// SharedVirtAPI is [SharedKubeVirt] with virt-api's admission webhooks
// ([Options.VirtAPI]) instead of the admission policy that imitates them.
func SharedVirtAPI(t testing.TB, v crds.Variant) *Cluster {
	t.Helper()
	return sharedFor(t, sharedKey{variant: v, virtController: true, virtAPI: true})
}

func sharedFor(t testing.TB, k sharedKey) *Cluster {
	t.Helper()
	shared.mu.Lock()
	if !shared.main {
		shared.mu.Unlock()
		t.Fatal("testcluster.Shared needs TestMain to call testcluster.RunMain")
	}
	if shared.clusters == nil {
		shared.clusters = map[sharedKey]*sharedCluster{}
	}
	sc := shared.clusters[k]
	if sc == nil {
		sc = &sharedCluster{}
		shared.clusters[k] = sc
	}
	shared.mu.Unlock()
	sc.once.Do(func() {
		log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		sc.c, sc.err = Start(context.Background(), Options{Variant: k.variant, Log: log, VirtController: k.virtController, VirtAPI: k.virtAPI}) //nolint:forbidigo // outlives the test that starts it
	})
	if sc.err != nil {
		t.Fatal(sc.err)
	}
	sc.c.fallbackLogsOnFailure(t, sc.c.logSizes())
	return sc.c
}

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// TestNamespace creates a namespace named after the test plus a random
// suffix and returns its name. It is not deleted: without a namespace
// controller a deleted namespace stays Terminating with its objects. A
// failure of t shows the cluster's log lines about it
// ([Cluster.LogsOnFailure]).
func (c *Cluster) TestNamespace(t testing.TB) string {
	t.Helper()
	base := strings.Trim(notDNS.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(base) > 50 {
		base = strings.TrimRight(base[:50], "-")
	}
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	name := base + "-" + hex.EncodeToString(suffix)
	if err := c.CreateNamespace(t.Context(), name); err != nil {
		t.Fatal(err)
	}
	c.LogsOnFailure(t, name)
	return name
}
