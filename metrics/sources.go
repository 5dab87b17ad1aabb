package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/media"
)

// Sources are read at every scrape; any may be nil.
type Sources struct {
	// Applies returns the SSA writer's counters by field manager
	// (apply.Client.Stats).
	Applies func() map[string]apply.Counters
	// Media returns the media reconcilers' counters, cumulative over
	// leadership terms.
	Media func() media.Stats
	// Queues returns the reconcilers' queue depths by reconciler name
	// (empty while this replica does not lead).
	Queues func() map[string]int
	// RebootPolicyFallbacks returns how many Once boot overrides were armed
	// without rebootPolicy Terminate, by reason
	// (apply.Client.RebootPolicyFallbacks).
	RebootPolicyFallbacks func() map[string]int64
}

var (
	appliesDesc = prometheus.NewDesc(namespace+"_applies_total",
		"Server-side applies of VirtualMachines by field manager and outcome: applied, conflict (409, retried), retry, failed, refused (the decision wrote nothing, by choice).",
		[]string{"manager", "outcome"}, nil)
	importsDesc = prometheus.NewDesc(namespace+"_media_imports_total",
		"ISO imports by event: started (pod created), succeeded, failed, timed_out.",
		[]string{"event"}, nil)
	mediaDesc = prometheus.NewDesc(namespace+"_media_repairs_total",
		"Media reconciler repairs by kind.",
		[]string{"kind"}, nil)
	fallbackDesc = prometheus.NewDesc(namespace+"_reboot_policy_fallbacks_total",
		"Once boot overrides armed without rebootPolicy Terminate (a reboot the guest does itself boots the override's target again), by reason: RebootPolicyRefused (the cluster refused the field: KubeVirt's RebootPolicy feature gate is off), RebootPolicyAuthorOwned (the VM's author set another value).",
		[]string{"reason"}, nil)
	queueDesc = prometheus.NewDesc(namespace+"_reconciler_queue_depth",
		"VMs waiting in a reconciler's queue.",
		[]string{"reconciler"}, nil)
)

// Watch registers a collector reading src at scrape time.
func (m *Metrics) Watch(src Sources) {
	m.Registry.MustRegister(sourceCollector{src})
}

type sourceCollector struct{ src Sources }

func (c sourceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{appliesDesc, importsDesc, mediaDesc, fallbackDesc, queueDesc} {
		ch <- d
	}
}

func (c sourceCollector) Collect(ch chan<- prometheus.Metric) {
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	if c.src.Applies != nil {
		for manager, s := range c.src.Applies() {
			counter(appliesDesc, s.Applies, manager, "applied")
			counter(appliesDesc, s.Conflicts, manager, "conflict")
			counter(appliesDesc, s.Retries, manager, "retry")
			counter(appliesDesc, s.Failures, manager, "failed")
			counter(appliesDesc, s.Refusals, manager, "refused")
		}
	}
	if c.src.RebootPolicyFallbacks != nil {
		for reason, n := range c.src.RebootPolicyFallbacks() {
			counter(fallbackDesc, n, reason)
		}
	}
	if c.src.Media != nil {
		s := c.src.Media()
		counter(importsDesc, s.PodsCreated, "started")
		counter(importsDesc, s.ImportsReady, "succeeded")
		counter(importsDesc, s.ImportsFailed, "failed")
		counter(importsDesc, s.ImportsTimedOut, "timed_out")
		counter(mediaDesc, s.StalePodsDeleted, "stale_pod_deleted")
		counter(mediaDesc, s.VolumesHealed, "volume_healed")
		counter(mediaDesc, s.DisksWithoutVol, "disk_without_volume")
		counter(mediaDesc, s.OrphanClaimsFreed, "orphan_claim_freed")
	}
	if c.src.Queues != nil {
		for name, n := range c.src.Queues() {
			ch <- prometheus.MustNewConstMetric(queueDesc, prometheus.GaugeValue, float64(n), name)
		}
	}
}
