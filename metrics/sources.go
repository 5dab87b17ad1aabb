package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/controller"
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
	// Controllers returns the reconcilers' engines' counters, cumulative
	// over leadership terms, and their queue depths while they run.
	Controllers func() []controller.Stats
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
	addsDesc = prometheus.NewDesc(namespace+"_controller_adds_total",
		"Keys (VMs) enqueued to a reconciler, by its events and its own requeues (adds of a waiting key collapse in the queue but count here).",
		[]string{"controller"}, nil)
	passesDesc = prometheus.NewDesc(namespace+"_controller_reconciles_total",
		"Reconcile passes by result: success, requeue_after (asked to look again later), error (requeued with backoff).",
		[]string{"controller", "result"}, nil)
	retriesDesc = prometheus.NewDesc(namespace+"_controller_retries_total",
		"Rate-limited requeues after a failed pass.",
		[]string{"controller"}, nil)
	durationDesc = prometheus.NewDesc(namespace+"_controller_reconcile_duration_seconds",
		"Duration of reconcile passes.",
		[]string{"controller"}, nil)
)

// Watch registers a collector reading src at scrape time.
func (m *Metrics) Watch(src Sources) {
	m.Registry.MustRegister(sourceCollector{src})
}

type sourceCollector struct{ src Sources }

func (c sourceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{appliesDesc, importsDesc, mediaDesc, fallbackDesc, queueDesc, addsDesc, passesDesc, retriesDesc, durationDesc} {
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
		counter(mediaDesc, s.FailedClaimsReleased, "failed_claim_released")
	}
	if c.src.Controllers != nil {
		for _, s := range c.src.Controllers() {
			if s.Running {
				ch <- prometheus.MustNewConstMetric(queueDesc, prometheus.GaugeValue, float64(s.Depth), s.Name)
			}
			counter(addsDesc, s.Adds, s.Name)
			counter(passesDesc, s.Successes, s.Name, "success")
			counter(passesDesc, s.Requeues, s.Name, "requeue_after")
			counter(passesDesc, s.Errors, s.Name, "error")
			counter(retriesDesc, s.Retries, s.Name)
			ch <- prometheus.MustNewConstHistogram(durationDesc, s.Duration.Count, s.Duration.Sum, s.Duration.Buckets, s.Name)
		}
	}
}
