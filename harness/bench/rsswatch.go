package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// rssWatch samples another process's VmRSS until stop, keeping the peak
// since the last mark and the error of the last sample.
type rssWatch struct {
	pid            int
	mu             sync.Mutex
	peak, last     int64
	err            error
	done, finished chan struct{}
}

func watchRSS(pid int, every time.Duration) *rssWatch {
	w := &rssWatch{pid: pid, done: make(chan struct{}), finished: make(chan struct{})}
	w.sample()
	go func() {
		defer close(w.finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-t.C:
				w.sample()
			}
		}
	}()
	return w
}

func (w *rssWatch) sample() {
	r, err := ProcRSS(w.pid)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.err = err
	if err == nil {
		w.last, w.peak = r, max(w.peak, r)
	}
}

// mark starts a new peak from the current RSS.
func (w *rssWatch) mark() {
	w.sample()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.peak = w.last
}

// read samples once more and returns the peak since mark and the RSS now.
func (w *rssWatch) read() (peak, now int64, err error) {
	w.sample()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.peak, w.last, w.err
}

func (w *rssWatch) stop() {
	close(w.done)
	<-w.finished
}

// Gauges are the bridge's Go runtime numbers from its /metrics.
type Gauges struct {
	HeapAlloc, HeapInuse, GoSys int64
	Goroutines                  int
}

// gaugeNames are the unlabelled samples [ParseGauges] reads.
var gaugeNames = []string{"go_memstats_heap_alloc_bytes", "go_memstats_heap_inuse_bytes", "go_memstats_sys_bytes", "go_goroutines"}

// ScrapeGauges reads [Gauges] from a Prometheus endpoint (the bridge's
// --metrics-listen address + /metrics).
func ScrapeGauges(ctx context.Context, url string) (Gauges, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Gauges{}, fmt.Errorf("scrape %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Gauges{}, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close() // read-only
	if resp.StatusCode != http.StatusOK {
		return Gauges{}, fmt.Errorf("scrape %s: %s", url, resp.Status)
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return Gauges{}, fmt.Errorf("scrape %s: %w", url, err)
	}
	return ParseGauges(raw)
}

// ParseGauges extracts [Gauges] from a Prometheus text exposition; every
// one of them must be there.
func ParseGauges(raw []byte) (Gauges, error) {
	vals := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		for _, want := range gaugeNames {
			if name != want {
				continue
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			if err != nil {
				return Gauges{}, fmt.Errorf("parse %s %q: %w", name, value, err)
			}
			vals[name] = v
		}
	}
	if err := sc.Err(); err != nil {
		return Gauges{}, fmt.Errorf("read metrics: %w", err)
	}
	for _, want := range gaugeNames {
		if _, ok := vals[want]; !ok {
			return Gauges{}, fmt.Errorf("metrics: no %s", want)
		}
	}
	return Gauges{
		HeapAlloc: int64(vals["go_memstats_heap_alloc_bytes"]), HeapInuse: int64(vals["go_memstats_heap_inuse_bytes"]),
		GoSys: int64(vals["go_memstats_sys_bytes"]), Goroutines: int(vals["go_goroutines"]),
	}, nil
}
