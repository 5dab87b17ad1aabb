package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

const namespace = "redfish_bridge"

// Metrics is one bridge's registry and the metrics it updates directly.
type Metrics struct {
	Registry *prometheus.Registry

	requests       *prometheus.CounterVec
	latency        *prometheus.HistogramVec
	importDuration *prometheus.HistogramVec
	leader         prometheus.Gauge
}

// New returns a registry holding the Go and process collectors and the
// bridge's own metrics.
func New() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "http_requests_total",
			Help: "Redfish requests by method, route template and status code.",
		}, []string{"method", "route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "http_request_duration_seconds",
			Help:    "Redfish request latency by method and route template.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"method", "route"}),
		importDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "media_import_duration_seconds",
			Help:    "Duration of ISO import pods, from creation to completion, by result.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 12), // 1 s .. ~34 min
		}, []string{"result"}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "leader",
			Help: "1 while this replica holds the Lease and runs the reconcilers.",
		}),
	}
	m.Registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.latency, m.importDuration, m.leader,
	)
	return m
}

// ObserveRequest is the redfish.Config.Observe hook. Labels come from
// closed sets, whatever the client sends: a method other than the nine of
// RFC 9110 and RFC 5789 is reported as "other" (the method is the
// client's, e.g. 8 KiB of random letters); an empty route (no route
// matched; redfish reports only its route templates) as "unmatched".
func (m *Metrics) ObserveRequest(method, route string, status int, d time.Duration) {
	if !knownMethods[method] {
		method = otherMethod
	}
	if route == "" {
		route = "unmatched"
	}
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(method, route).Observe(d.Seconds())
}

// otherMethod is the method label of every method not in knownMethods.
const otherMethod = "other"

// knownMethods are the method label's values besides otherMethod.
var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true, http.MethodPatch: true,
	http.MethodDelete: true, http.MethodOptions: true, http.MethodConnect: true, http.MethodTrace: true,
}

// ObserveImport is the media.Options.ObserveImport hook.
func (m *Metrics) ObserveImport(result string, d time.Duration) {
	m.importDuration.WithLabelValues(result).Observe(d.Seconds())
}

// SetLeader records whether this replica leads.
func (m *Metrics) SetLeader(leading bool) {
	v := 0.0
	if leading {
		v = 1
	}
	m.leader.Set(v)
}
