package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/metrics"
)

// LeaderElection configures which replica runs the watch-driven
// reconcilers. Every replica serves Redfish (requests write the VMs
// directly); only the holder of a coordination.k8s.io Lease in
// Config.Namespace runs the reconcilers. The zero value elects with the
// defaults below.
type LeaderElection struct {
	// Disabled runs the reconcilers unconditionally (one replica only).
	Disabled bool
	// LeaseName defaults to "redfish-bridge".
	LeaseName string
	// Identity is this replica's holder identity (the chart's pod name);
	// default the hostname with a random suffix ([DefaultIdentity]).
	Identity string
	// LeaseDuration (default 15s), RenewDeadline (10s) and RetryPeriod (2s)
	// are client-go's leader election timings.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// DefaultLeaseName is the Lease the replicas compete for.
const DefaultLeaseName = "redfish-bridge"

func (l LeaderElection) withDefaults() LeaderElection {
	if l.LeaseName == "" {
		l.LeaseName = DefaultLeaseName
	}
	if l.Identity == "" {
		l.Identity = DefaultIdentity()
	}
	if l.LeaseDuration <= 0 {
		l.LeaseDuration = 15 * time.Second
	}
	if l.RenewDeadline <= 0 {
		l.RenewDeadline = 10 * time.Second
	}
	if l.RetryPeriod <= 0 {
		l.RetryPeriod = 2 * time.Second
	}
	return l
}

// DefaultIdentity is the hostname with a random suffix (two processes on
// one host must not share an identity).
func DefaultIdentity() string {
	host, err := os.Hostname()
	if err != nil {
		host = "redfish-bridge"
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return host + "_" + hex.EncodeToString(b)
}

// campaign calls lead for every term in which this replica holds the Lease,
// with a ctx that ends when the term ends, until ctx ends. After losing the
// Lease it waits for lead to return and campaigns again. The Lease is
// released on shutdown only after lead returned, so that the next leader
// never overlaps with this one's reconcilers.
func campaign(ctx context.Context, kube kubernetes.Interface, namespace string, l LeaderElection,
	leading func(bool), lead func(ctx context.Context)) error {
	if l.Disabled {
		leading(true)
		defer leading(false)
		lead(ctx)
		return nil
	}
	// The elector's ctx outlives ctx until the current term has finished.
	elCtx, elCancel := context.WithCancel(context.WithoutCancel(ctx))
	defer elCancel()
	busy := make(chan struct{}, 1) // held while a term runs
	stop := context.AfterFunc(ctx, func() {
		busy <- struct{}{} // wait for the term to finish
		elCancel()
		<-busy
	})
	defer stop()
	log := logctx.From(ctx).With("lease", namespace+"/"+l.LeaseName, "identity", l.Identity)
	for elCtx.Err() == nil {
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: &resourcelock.LeaseLock{
				LeaseMeta:  metav1.ObjectMeta{Namespace: namespace, Name: l.LeaseName},
				Client:     kube.CoordinationV1(),
				LockConfig: resourcelock.ResourceLockConfig{Identity: l.Identity},
			},
			LeaseDuration: l.LeaseDuration, RenewDeadline: l.RenewDeadline, RetryPeriod: l.RetryPeriod,
			ReleaseOnCancel: true,
			Name:            l.LeaseName,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(termCtx context.Context) {
					runCtx, cancel := context.WithCancel(termCtx)
					defer cancel()
					defer context.AfterFunc(ctx, cancel)()
					select {
					case busy <- struct{}{}:
					case <-runCtx.Done():
						return
					}
					defer func() { <-busy }()
					if runCtx.Err() != nil {
						return
					}
					log.InfoContext(runCtx, "leading: reconcilers started")
					leading(true)
					defer leading(false)
					lead(runCtx)
					log.InfoContext(ctx, "reconcilers stopped")
				},
				OnStoppedLeading: func() {},
				OnNewLeader: func(id string) {
					log.InfoContext(ctx, "lease holder", "holder", id)
				},
			},
		})
		if err != nil {
			return fmt.Errorf("leader election on lease %s/%s: %w", namespace, l.LeaseName, err)
		}
		le.Run(elCtx)
		// Lost the Lease (or shutting down): wait for the term to end.
		busy <- struct{}{}
		<-busy
		if elCtx.Err() == nil {
			log.WarnContext(ctx, "lost the lease; campaigning again")
		}
	}
	return nil
}

// elect is the manager's [manager.Options.Elect]: the Lease campaign of
// cfg.Leader in cfg.Namespace, which also sets the leader gauge of m.
func elect(kube kubernetes.Interface, cfg Config, m *metrics.Metrics) func(context.Context, func(bool), func(context.Context)) error {
	l := cfg.Leader.withDefaults()
	return func(ctx context.Context, leading func(bool), lead func(context.Context)) error {
		return campaign(ctx, kube, cfg.Namespace, l, func(v bool) { leading(v); m.SetLeader(v) }, lead)
	}
}
