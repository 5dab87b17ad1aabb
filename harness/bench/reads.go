package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
)

// ReadScenario measures only the read path against the floor: the bridge
// in this process (as in [Run]) with VMs and no load.
type ReadScenario struct {
	Variant crds.Variant
	VMs     int
	Ratio   RatioOptions
	Log     *slog.Logger
}

// ReadResult is what [ReadRatios] measured.
type ReadResult struct {
	Scenario ReadScenario
	Started  time.Time
	Setup    time.Duration
	Rows     []RatioRow
}

// ReadRatios starts the product with sc.VMs VMs and runs [Ratios] on it.
func ReadRatios(ctx context.Context, sc ReadScenario) (res *ReadResult, err error) {
	if sc.Log == nil {
		sc.Log = slog.Default()
	}
	res = &ReadResult{Scenario: sc, Started: time.Now()}
	env, err := demo.Start(ctx, demo.Options{Variant: sc.Variant, Listen: "127.0.0.1:0", ImageSize: 64 << 10, Log: sc.Log})
	if err != nil {
		return nil, fmt.Errorf("start demo: %w", err)
	}
	defer func() { err = errors.Join(err, env.Stop()) }()
	dyn, err := dynamic.NewForConfig(env.Cluster.Admin)
	if err != nil {
		return nil, fmt.Errorf("admin dynamic client: %w", err)
	}
	keys, err := createVMs(ctx, env.Cluster, dyn, "reads", sc.VMs, 100)
	if err != nil {
		return nil, err
	}
	c := &Client{Base: env.URL, User: env.User, Password: env.Password, HTTP: NewHTTPClient(1)}
	if err := waitListed(ctx, c, len(keys)); err != nil {
		return nil, err
	}
	res.Setup = time.Since(res.Started)
	paths := make([]string, len(keys))
	for i, k := range keys {
		paths[i] = systemPath(k.ID())
	}
	res.Rows, err = Ratios(ctx, env.URL, env.User, env.Password, readOps(paths), sc.Ratio)
	return res, err
}

// Print writes the result.
func (r *ReadResult) Print(w io.Writer) {
	fmt.Fprintf(w, "\n=== reads only: %s CRDs, %d VMs, bridge in this process, started %s, setup %s ===\n",
		r.Scenario.Variant, r.Scenario.VMs, r.Started.UTC().Format(time.RFC3339), r.Setup.Round(time.Second))
	PrintRatios(w, r.Rows)
}
