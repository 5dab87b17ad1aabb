package testcluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// stopGrace is how long a stopped child gets between SIGTERM and SIGKILL.
const stopGrace = 10 * time.Second

// restartRetryDelay is the pause before starting a child again whose port
// was still (or again) taken.
const restartRetryDelay = 200 * time.Millisecond

// StopAPIServer stops kube-apiserver (SIGTERM, SIGKILL after 10 s) and
// keeps its flags: port, etcd, certificates and tokens. Clients get
// "connection refused" until [Cluster.StartAPIServer]. Not safe to call
// concurrently with [Cluster.Stop] or the other restart methods.
func (c *Cluster) StopAPIServer() error {
	if c.apiserver == nil {
		return errors.New("stop kube-apiserver: the cluster was not started")
	}
	if err := c.apiserver.stop(stopGrace); err != nil {
		return fmt.Errorf("stop kube-apiserver: %w", err)
	}
	return nil
}

// StartAPIServer starts a stopped kube-apiserver again with the same flags
// (same port, etcd, certificates and tokens, so every rest.Config and
// kubeconfig of the cluster stays valid) and waits until /readyz answers.
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	p, err := c.restart(ctx, c.apiserver, func(ctx context.Context, p *process) error {
		c.apiserver = p
		return c.waitReady(ctx)
	})
	if err != nil {
		return fmt.Errorf("start kube-apiserver again: %w", err)
	}
	c.apiserver = p
	return nil
}

// RestartAPIServer stops kube-apiserver, calls down (if not nil) while it
// is down, and starts it again; see [Cluster.StopAPIServer] and
// [Cluster.StartAPIServer].
func (c *Cluster) RestartAPIServer(ctx context.Context, down func()) error {
	if err := c.StopAPIServer(); err != nil {
		return err
	}
	if down != nil {
		down()
	}
	return c.StartAPIServer(ctx)
}

// StopEtcd stops etcd (SIGTERM, SIGKILL after 10 s), keeping its data
// directory and ports. kube-apiserver keeps running: it serves what its
// watch cache holds and fails or times out on writes until
// [Cluster.StartEtcd].
func (c *Cluster) StopEtcd() error {
	if c.etcd == nil {
		return errors.New("stop etcd: the cluster was not started")
	}
	if err := c.etcd.stop(stopGrace); err != nil {
		return fmt.Errorf("stop etcd: %w", err)
	}
	return nil
}

// StartEtcd starts a stopped etcd again on the same data directory and
// ports and waits until it is healthy; kube-apiserver reconnects by itself.
func (c *Cluster) StartEtcd(ctx context.Context) error {
	health := ""
	if c.etcd != nil {
		url, ok := flagValue(c.etcd.cmd.Args, "--listen-client-urls")
		if !ok {
			return errors.New("start etcd again: no --listen-client-urls in its flags")
		}
		health = url + "/health"
	}
	p, err := c.restart(ctx, c.etcd, func(ctx context.Context, p *process) error {
		return waitProcess(ctx, p, "etcd health", func(ctx context.Context) error { return httpOK(ctx, health) })
	})
	if err != nil {
		return fmt.Errorf("start etcd again: %w", err)
	}
	c.etcd = p
	return nil
}

// RestartEtcd stops etcd, calls down (if not nil) while it is down, and
// starts it again; see [Cluster.StopEtcd] and [Cluster.StartEtcd].
func (c *Cluster) RestartEtcd(ctx context.Context, down func()) error {
	if err := c.StopEtcd(); err != nil {
		return err
	}
	if down != nil {
		down()
	}
	return c.StartEtcd(ctx)
}

// restart starts old's binary again with old's arguments and waits with
// ready. A port still held (by a lingering socket or another process that
// took it meanwhile) makes the child exit at once; it is retried until ctx
// ends.
func (c *Cluster) restart(ctx context.Context, old *process, ready func(context.Context, *process) error) (*process, error) {
	if old == nil {
		return nil, errors.New("the cluster was not started")
	}
	if !old.exited() {
		return nil, fmt.Errorf("%s is still running (pid %d): stop it first", old.name, old.cmd.Process.Pid)
	}
	for {
		p, err := startProcess(old.name, old.cmd.Path, old.cmd.Args[1:], c.Dir)
		if err != nil {
			return nil, err
		}
		err = ready(ctx, p)
		if err == nil {
			c.log.InfoContext(ctx, "test cluster process restarted", "process", old.name, "pid", p.cmd.Process.Pid)
			return p, nil
		}
		_ = p.stop(0)
		if !p.exited() || !strings.Contains(p.logTail(50), "address already in use") || ctx.Err() != nil {
			return nil, err
		}
		c.log.DebugContext(ctx, "port still taken, retrying", "process", old.name)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (port still taken)", err)
		case <-time.After(restartRetryDelay):
		}
	}
}

// flagValue returns the value of --name=value in args.
func flagValue(args []string, name string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v, true
		}
	}
	return "", false
}
