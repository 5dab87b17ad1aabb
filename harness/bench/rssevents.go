package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// EventArgs are the bridge's flags when [RSSScenario.Subscriptions] is set:
// the receivers listen on 127.0.0.1, and one user (the bench's admin)
// holds every subscription.
func EventArgs(subscriptions int) []string {
	return []string{"--event-destination-policy=deny-loopback,allow=127.0.0.1/32",
		"--event-subscriptions-per-user=" + strconv.Itoa(subscriptions), "--event-subscriptions-max=" + strconv.Itoa(max(subscriptions, 500))}
}

// EventFigures are what the events phase measured: every subscription's
// ResourcePoweredOn for every VM the phase started.
type EventFigures struct {
	Subscriptions, Started int
	// Delivered counts every EventRecord the receivers got during the
	// phase (every message, not only ResourcePoweredOn); Span is the time
	// from the first record received to the last.
	Delivered int
	Span      time.Duration
	// Latency is, per (subscription, VM), from the moment the bench's own
	// watch saw the VMI Running to that subscription's receipt of the
	// VM's ResourcePoweredOn; Missing counts the pairs never received.
	LatencyP50, LatencyP99, LatencyMax time.Duration
	Missing                            int
}

// Rate is the records delivered per second over the span.
func (f EventFigures) Rate() float64 {
	if f.Span <= 0 {
		return 0
	}
	return float64(f.Delivered) / f.Span.Seconds()
}

// eventSink receives every subscription's POSTs on one listener: path
// /s/<subscription> records the receipt time of each (origin, MessageId).
type eventSink struct {
	srv         *http.Server
	addr        string
	mu          sync.Mutex
	n           int
	first, last time.Time
	// on is, per subscription, when it first got ResourcePoweredOn about
	// each System path.
	on      []map[string]time.Time
	changed chan struct{}
}

func startEventSink(subscriptions int) (*eventSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("event receivers: %w", err)
	}
	s := &eventSink{addr: ln.Addr().String(), on: make([]map[string]time.Time, subscriptions), changed: make(chan struct{})}
	for i := range s.on {
		s.on[i] = map[string]time.Time{}
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *eventSink) serve(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/s/"))
	var body struct {
		Events []struct {
			MessageID string `json:"MessageId"`
			Origin    struct {
				ID string `json:"@odata.id"`
			} `json:"OriginOfCondition"`
		} `json:"Events"`
	}
	if err == nil {
		err = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body)
	}
	if err != nil || i < 0 || i >= len(s.on) {
		http.Error(w, "not an event of a subscription", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	for _, e := range body.Events {
		if s.n == 0 {
			s.first = now
		}
		s.n++
		s.last = now
		if strings.HasSuffix(e.MessageID, ".ResourcePoweredOn") {
			if _, seen := s.on[i][e.Origin.ID]; !seen {
				s.on[i][e.Origin.ID] = now
			}
		}
	}
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// waitAll waits until every subscription got ResourcePoweredOn about every
// one of paths, or ctx ends.
func (s *eventSink) waitAll(ctx context.Context, paths []string) error {
	for {
		s.mu.Lock()
		missing := 0
		for _, got := range s.on {
			for _, p := range paths {
				if _, ok := got[p]; !ok {
					missing++
				}
			}
		}
		changed := s.changed
		s.mu.Unlock()
		if missing == 0 {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("%d (subscription, VM) ResourcePoweredOn not delivered: %w", missing, ctx.Err())
		}
	}
}

func (s *eventSink) close() error { return s.srv.Close() }

// vmiRunning follows the VMIs (an informer cut down to key and phase) and
// records when each was first seen Running.
type vmiRunning struct {
	mu   sync.Mutex
	seen map[system.Key]time.Time
	stop context.CancelFunc
}

func watchVMIsRunning(ctx context.Context, dyn dynamic.Interface) (*vmiRunning, error) {
	w := &vmiRunning{seen: map[system.Key]time.Time{}}
	inf := dynamicinformer.NewFilteredDynamicInformer(dyn, kubevirt.VirtualMachineInstances, metav1.NamespaceAll, 0, cache.Indexers{}, nil).Informer()
	record := func(obj any) {
		vmi, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		if phase, _, _ := unstructured.NestedString(vmi.Object, "status", "phase"); phase != "Running" {
			return
		}
		k := system.Key{Namespace: vmi.GetNamespace(), Name: vmi.GetName()}
		now := time.Now()
		w.mu.Lock()
		if _, ok := w.seen[k]; !ok {
			w.seen[k] = now
		}
		w.mu.Unlock()
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: record, UpdateFunc: func(_, obj any) { record(obj) }}); err != nil {
		return nil, fmt.Errorf("VMI watch: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	w.stop = cancel
	go inf.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		cancel()
		return nil, fmt.Errorf("VMI watch: cache not synced: %w", context.Cause(ctx))
	}
	return w, nil
}

// runningSince is when k's VMI was first seen Running (zero: not yet).
func (w *vmiRunning) runningSince(k system.Key) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen[k]
}

// events subscribes sc.Subscriptions receivers, starts the halted VMs of
// start out of band (runStrategy Always, as another tool would) and waits
// until every subscription got every one's ResourcePoweredOn.
func (m *meter) events(ctx context.Context, sc RSSScenario, c *Client, start []system.Key) error {
	sink, err := startEventSink(sc.Subscriptions)
	if err != nil {
		return err
	}
	defer sink.close() // best effort
	dyn, err := dynamic.NewForConfig(m.cluster.Admin)
	if err != nil {
		return fmt.Errorf("admin dynamic client: %w", err)
	}
	vmis, err := watchVMIsRunning(ctx, dyn)
	if err != nil {
		return err
	}
	defer vmis.stop()
	var subs []string
	defer func() {
		// The later phases run without subscriptions, as before this one.
		for _, uri := range subs {
			_ = c.Do(ctx, OpUnsubscribe, http.MethodDelete, uri, nil, nil)
		}
	}()
	for i := range sc.Subscriptions {
		body := map[string]any{"Destination": fmt.Sprintf("http://%s/s/%d", sink.addr, i), "Protocol": "Redfish", "Context": strconv.Itoa(i)}
		var created struct {
			ID string `json:"@odata.id"`
		}
		if err := c.Do(ctx, OpSubscribe, http.MethodPost, "/redfish/v1/EventService/Subscriptions", body, &created); err != nil {
			return err
		}
		subs = append(subs, created.ID)
	}
	patch := []byte(`{"spec":{"runStrategy":"` + string(kubevirt.RunStrategyAlways) + `"}}`)
	if err := forEach(ctx, start, 8, func(ctx context.Context, k system.Key) error {
		_, err := dyn.Resource(kubevirt.VirtualMachines).Namespace(k.Namespace).Patch(ctx, k.Name, types.MergePatchType, patch,
			metav1.PatchOptions{FieldManager: "bench-out-of-band"})
		if err != nil {
			return fmt.Errorf("start %s: %w", k, err)
		}
		return nil
	}); err != nil {
		return firstErrors(err, 3)
	}
	paths := make([]string, len(start))
	for i, k := range start {
		paths[i] = systemPath(k.ID())
	}
	waitErr := sink.waitAll(ctx, paths)
	f := EventFigures{Subscriptions: sc.Subscriptions, Started: len(start)}
	var lat []time.Duration
	sink.mu.Lock()
	f.Delivered, f.Span = sink.n, sink.last.Sub(sink.first)
	for _, got := range sink.on {
		for i, p := range paths {
			at, ok := got[p]
			run := vmis.runningSince(start[i])
			if !ok || run.IsZero() {
				f.Missing++
				continue
			}
			lat = append(lat, at.Sub(run))
		}
	}
	sink.mu.Unlock()
	slices.Sort(lat)
	if len(lat) > 0 {
		f.LatencyP50, f.LatencyP99, f.LatencyMax = Percentile(lat, 50), Percentile(lat, 99), lat[len(lat)-1]
	}
	m.res.Events = f
	return waitErr
}

// poll reads every System once per [PowerPollInterval] for one whole
// interval, as Ironic's power-state sync does for the whole fleet.
func (m *meter) poll(ctx context.Context, c *Client, keys []system.Key) error {
	stop := powerPoll(ctx, c, keys)
	select {
	case <-ctx.Done():
	case <-time.After(PowerPollInterval):
	}
	polls, failed := stop()
	m.res.FleetPolls, m.res.FleetPollFailures = polls, failed
	if failed > 0 {
		return fmt.Errorf("%d of %d polls failed", failed, polls)
	}
	return errors.Join(ctx.Err())
}

// printEvents writes the events and poll phases side by side.
func (r *RSSResult) printEvents(w io.Writer) {
	f := r.Events
	if f.Subscriptions == 0 {
		return
	}
	ev, poll := r.Phase("events"), r.Phase("poll")
	fmt.Fprintf(w, "events: %d subscriptions, %d VMs started out of band: %d records delivered in %s (%.0f/s), VMI Running to ResourcePoweredOn received p50=%sms p99=%sms max=%sms, %d (subscription, VM) missing; bridge CPU %.1f s\n",
		f.Subscriptions, f.Started, f.Delivered, f.Span.Round(100*time.Millisecond), f.Rate(), ms(f.LatencyP50), ms(f.LatencyP99), ms(f.LatencyMax), f.Missing, ev.CPU.Seconds())
	if poll.Took > 0 {
		fmt.Fprintf(w, "polling instead (every System once per %s, Ironic's power sync): %d GETs in %s (%.0f/s), %d failed; bridge CPU %.1f s (%.2f CPU s per s)\n",
			PowerPollInterval, r.FleetPolls, poll.Took.Round(100*time.Millisecond), float64(r.FleetPolls)/poll.Took.Seconds(), r.FleetPollFailures,
			poll.CPU.Seconds(), poll.CPU.Seconds()/poll.Took.Seconds())
	}
}
