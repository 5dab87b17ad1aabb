package bench

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
)

// SetupStep is one bounded step of preparing the cluster for [BridgeRSS]
// (creating the VMs, waiting for virt-controller, starting VMs).
type SetupStep struct {
	Name       string
	Took       time.Duration
	Done, Want int    // e.g. VMs created of those asked for
	Err        string // why the step ended short; empty when complete
	Cluster    ClusterCPU
}

// ClusterCPU is the CPU time virt-controller and kube-apiserver used
// during a step or phase.
type ClusterCPU struct {
	VirtController, APIServer time.Duration
	// Restarted: virt-controller was restarted in between, so its figure
	// covers only part of the time.
	Restarted bool
}

// cpuMark is a reading of both processes' CPU so far.
type cpuMark struct {
	vcPid         int
	vc, api       time.Duration
	vcErr, apiErr error
	restarts      int64
}

func markCPU(c *testcluster.Cluster) cpuMark {
	m := cpuMark{vcPid: c.VirtControllerPID(), restarts: c.VirtControllerRestarts()}
	m.vc, m.vcErr = ProcCPU(m.vcPid)
	if pids := c.PIDs(); len(pids) > 0 {
		m.api, m.apiErr = ProcCPU(pids[0])
	}
	return m
}

// since is the CPU used from m until now.
func (m cpuMark) since(c *testcluster.Cluster) ClusterCPU {
	now := markCPU(c)
	var out ClusterCPU
	if m.apiErr == nil && now.apiErr == nil {
		out.APIServer = now.api - m.api
	}
	out.Restarted = now.restarts != m.restarts || now.vcPid != m.vcPid
	switch {
	case now.vcErr != nil:
	case out.Restarted:
		out.VirtController = now.vc // the new process's, from its start
	case m.vcErr == nil:
		out.VirtController = now.vc - m.vc
	}
	return out
}

// step runs one setup step bounded by timeout and records it; the step's
// error is kept as a note, not returned: the next step goes on with what
// this one did.
func (r *RSSResult) step(ctx context.Context, c *testcluster.Cluster, name string, want int, run func(context.Context) (int, error)) {
	timeout := r.Scenario.StepTimeout
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	m := markCPU(c)
	start := time.Now()
	done, err := run(ctx)
	s := SetupStep{Name: name, Took: time.Since(start), Done: done, Want: want, Cluster: m.since(c)}
	if err != nil {
		s.Err = err.Error()
	}
	r.Steps = append(r.Steps, s)
	r.progress("setup %s: %d/%d in %s %s", name, done, want, s.Took.Round(time.Second), cmp.Or(s.Err, "(complete)"))
}

// progress writes one line to Scenario.Progress, if set, with the time.
func (r *RSSResult) progress(format string, args ...any) {
	if w := r.Scenario.Progress; w != nil {
		fmt.Fprintf(w, "%s %s\n", time.Now().UTC().Format(time.TimeOnly), fmt.Sprintf(format, args...))
	}
}
