package sim

import (
	"context"
	"crypto/tls"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/redfish-bridge/redfish-bridge/harness/testca"
)

// cdiProgressMetric is the metric CDI's importer reports its progress in
// (pkg/monitoring/metrics/cdi-importer), labelled with the OWNER_UID of
// its environment; cdi-controller reads it from the pod's port named
// "metrics" (8443) and writes it into the DataVolume's status.progress.
const (
	cdiProgressMetric = "kubevirt_cdi_import_progress_total"
	cdiMetricsPort    = "8443"
)

// serveMetrics serves the running imports' progress on podIP:8443 until
// ctx ends, over TLS (cdi-controller verifies no certificate).
func (n *cdiNode) serveMetrics(ctx context.Context, podIP string) error {
	ca, err := testca.New("sim CDI pods")
	if err != nil {
		return fmt.Errorf("sim: CDI metrics CA: %w", err)
	}
	cfg, err := ca.ServerTLS()
	if err != nil {
		return fmt.Errorf("sim: CDI metrics certificate: %w", err)
	}
	l, err := tls.Listen("tcp", net.JoinHostPort(podIP, cdiMetricsPort), cfg)
	if err != nil {
		return fmt.Errorf("sim: CDI pods' metrics: %w", err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(n.metrics), ReadHeaderTimeout: 10 * time.Second}
	context.AfterFunc(ctx, func() { _ = srv.Close() }) // ends Serve
	go func() { _ = srv.Serve(l) }()                   // ErrServerClosed at the end
	n.podIP = podIP
	return nil
}

// metrics answers GET /metrics with each running import's progress.
func (n *cdiNode) metrics(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/metrics" {
		http.NotFound(w, r)
		return
	}
	n.mu.Lock()
	var b strings.Builder
	for _, uid := range slices.Sorted(maps.Keys(n.progress)) {
		fmt.Fprintf(&b, "%s{ownerUID=%q} %.2f\n", cdiProgressMetric, uid, n.progress[uid])
	}
	n.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_, _ = w.Write([]byte(b.String()))
}

// setProgress records an import's progress; below 0 forgets it.
func (n *cdiNode) setProgress(owner string, pct float64) {
	if owner == "" {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if pct < 0 {
		delete(n.progress, owner)
		return
	}
	n.progress[owner] = pct
}
