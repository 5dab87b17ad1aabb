package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/redfish-bridge/redfish-bridge/harness/bridgeproc"
)

// replicaProcs are the bridge processes beyond the first of a
// [RSSScenario] with Replicas above 1.
type replicaProcs []replicaProc

type replicaProc struct {
	*bridgeproc.Proc
	base string
}

// startReplicas starts sc.Replicas-1 more bridges like first (its TLS
// files, kubeconfig and namespace), each on its own address with its own
// leader identity; they campaign for the Lease the first one holds.
func startReplicas(sc RSSScenario, first bridgeproc.Options, dir string) (replicaProcs, error) {
	var out replicaProcs
	for i := 1; i < sc.Replicas; i++ {
		addr, err := bridgeproc.FreeAddr()
		if err != nil {
			return out, err
		}
		o := first
		o.Listen, o.MetricsListen, o.PodName = addr, "", fmt.Sprintf("bridge-%d", i)
		o.Log = filepath.Join(dir, fmt.Sprintf("bridge-%d.log", i))
		p, err := bridgeproc.Start(o)
		if err != nil {
			return out, fmt.Errorf("replica %d: %w", i, err)
		}
		out = append(out, replicaProc{Proc: p, base: "https://" + addr})
	}
	return out, nil
}

func (rs replicaProcs) bases() []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.base
	}
	return out
}

// waitServing waits until every replica answers the Systems collection.
func (rs replicaProcs) waitServing(ctx context.Context, c *Client) error {
	for _, r := range rs {
		if err := r.WaitServing(ctx, r.base+"/redfish/v1/Systems", c.User, c.Password); err != nil {
			return fmt.Errorf("%w\nreplica log tail:\n%s", err, r.Tail())
		}
	}
	return nil
}

func (rs replicaProcs) kill() error {
	var err error
	for _, r := range rs {
		err = errors.Join(err, r.Kill())
	}
	return err
}
