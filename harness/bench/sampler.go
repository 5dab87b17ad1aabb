package bench

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/redfish-bridge/redfish-bridge/harness/demo"
)

type sampler struct {
	env           *demo.Env
	start         time.Time
	cpu0          time.Duration
	cluster0      cpuMark // kube-apiserver's and virt-controller's CPU
	rss0, apiRSS0 int64
	mu            sync.Mutex
	peak, apiPeak int64
	done          chan struct{}
	finished      chan struct{}
	maxGoroutines int
}

// startSampler records RSS peaks every 500ms until stop.
func startSampler(ctx context.Context, env *demo.Env) *sampler {
	s := &sampler{env: env, start: time.Now(), done: make(chan struct{}), finished: make(chan struct{})}
	s.cpu0, _ = SelfCPU()
	s.rss0, _ = SelfRSS()
	s.apiRSS0, _ = env.Cluster.APIServerRSS()
	s.cluster0 = markCPU(env.Cluster)
	s.peak, s.apiPeak = s.rss0, s.apiRSS0
	go func() {
		defer close(s.finished)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			s.sample()
			select {
			case <-s.done:
				return
			case <-ctx.Done():
				<-s.done
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *sampler) sample() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, err := SelfRSS(); err == nil {
		s.peak = max(s.peak, r)
	}
	if r, err := s.env.Cluster.APIServerRSS(); err == nil {
		s.apiPeak = max(s.apiPeak, r)
	}
	s.maxGoroutines = max(s.maxGoroutines, runtime.NumGoroutine())
}

func (s *sampler) stop() ProcStats {
	close(s.done)
	<-s.finished
	s.sample()
	p := ProcStats{SelfRSSBefore: s.rss0, SelfRSSPeak: s.peak, APIRSSBefore: s.apiRSS0, APIRSSPeak: s.apiPeak,
		Wall: time.Since(s.start), Goroutines: s.maxGoroutines}
	p.SelfRSSAfter, _ = SelfRSS()
	if cpu, err := SelfCPU(); err == nil {
		p.SelfCPU = cpu - s.cpu0
	}
	p.Cluster = s.cluster0.since(s.env.Cluster)
	return p
}
