package apply

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Cache is the read side the Writer uses (inventory.Inventory implements
// it). Both return apierrors NotFound when the object is absent.
type Cache interface {
	VM(key system.Key) (*unstructured.Unstructured, error)
	VMI(key system.Key) (*unstructured.Unstructured, error)
}

// TrimmedCache is a [Cache] whose VMs carry no managedFields (trimmed to
// save memory) and that keeps them aside per VM version; the Writer's
// ownership decisions read them from there. When a version's are not
// known the Writer reads the VM live.
type TrimmedCache interface {
	Cache
	VMManagedFields(key system.Key, resourceVersion string) ([]metav1.ManagedFieldsEntry, bool)
}

// DecisionCache keeps a decision made from a VM version's managedFields
// beside them, as long as a [TrimmedCache] keeps them (the inventory is
// both): [ValidateLegacy]'s answer, which every render of a System asks,
// is decided once per VM version, however many VMs there are.
type DecisionCache interface {
	VMOwnersDecision(key system.Key, resourceVersion string, decide func() any) (any, bool)
}

// Options tune the Writer.
type Options struct {
	// Backoff is the first retry delay after a 409; it doubles per attempt,
	// with full jitter, up to MaxBackoff. Default 10ms.
	Backoff time.Duration
	// MaxBackoff caps one delay. Default 500ms.
	MaxBackoff time.Duration
	// MaxAttempts bounds read-decide-apply attempts per call. Default 20.
	MaxAttempts int
}

func (o Options) withDefaults() Options {
	if o.Backoff <= 0 {
		o.Backoff = 10 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 500 * time.Millisecond
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 20
	}
	return o
}

// Counters count one manager's work.
type Counters struct {
	Applies   int64 // successful applies
	Conflicts int64 // 409s (stale precondition or field conflict)
	Retries   int64 // attempts after the first
	Failures  int64 // calls that failed: a read, an apply or the retries
	Refusals  int64 // calls whose decision returned an error of its own: nothing written, by choice
}

type counters struct{ applies, conflicts, retries, failures, refusals atomic.Int64 }

// Client is the [Writer]. Safe for concurrent use.
type Client struct {
	// misses rate-limits the live reads that confirm a cache miss.
	misses flowcontrol.RateLimiter
	// seen: VMs a live read found that the cache did not have yet.
	seen  *seenLive
	dyn   dynamic.Interface
	cache Cache
	mode  Mode
	opts  Options
	stats sync.Map // manager -> *counters
	// recent: the Client's own writes the cache may not show yet (nil in
	// tests that measure without it).
	recent *recent
	// fallbacks: Once overrides armed without rebootPolicy Terminate.
	fallbacks fallbackCounters
}

var _ Writer = (*Client)(nil)

// New returns a Writer. cache may be nil: every read is then a live GET.
func New(dyn dynamic.Interface, cache Cache, mode Mode, opts Options) *Client {
	return &Client{dyn: dyn, cache: cache, mode: mode, opts: opts.withDefaults(), recent: newRecent(),
		misses: flowcontrol.NewTokenBucketRateLimiter(missQPS, missBurst), seen: newSeenLive()}
}

// Mode returns the list mode the Client writes in.
func (c *Client) Mode() Mode { return c.mode }

// Stats returns a snapshot of the counters by manager.
func (c *Client) Stats() map[string]Counters {
	out := map[string]Counters{}
	c.stats.Range(func(k, v any) bool {
		s := v.(*counters)
		out[k.(string)] = Counters{
			Applies: s.applies.Load(), Conflicts: s.conflicts.Load(),
			Retries: s.retries.Load(), Failures: s.failures.Load(), Refusals: s.refusals.Load(),
		}
		return true
	})
	return out
}

func (c *Client) counters(manager string) *counters {
	v, _ := c.stats.LoadOrStore(manager, &counters{})
	return v.(*counters)
}

// Live reads confirming cache misses: enough for VMs just created (their
// watch event follows within milliseconds), too few to load the apiserver.
const (
	missQPS   = 5
	missBurst = 10
)

// Resolved is obj (a cached VM) or, while the cache is behind the
// Client's own last write of it, the object that write returned: lists
// built from the cache read the Client's own writes like Read does.
func (c *Client) Resolved(key system.Key, obj *unstructured.Unstructured) *unstructured.Unstructured {
	return c.recent.resolve(key, obj)
}

// Read returns the VM from the cache (live when the Client has none).
func (c *Client) Read(ctx context.Context, key system.Key) (*VM, error) {
	return c.read(ctx, key, c.cache == nil)
}

func (c *Client) read(ctx context.Context, key system.Key, live bool) (*VM, error) {
	var obj *unstructured.Unstructured
	var err error
	missed := false
	if !live {
		var r cachedRead
		r, err = c.cached(key)
		switch {
		case err != nil:
			// A VM created a moment ago may not be in the cache yet, so a
			// miss is confirmed live, but at most missQPS a second: beyond
			// that the synced informer's NotFound stands, so misses cannot
			// load the apiserver (nor, beyond the budget, be timed). A VM a
			// live read found a moment ago is read live again, free: it
			// exists, and must not answer 404 because others spent the budget.
			missed = apierrors.IsNotFound(err)
			live = missed && (c.seen.has(key) || c.misses.TryAccept())
		case r.obj == nil:
			live = true // the cache is about to show a newer version
		case r.managedAside:
			vm := Decode(ctx, key, r.obj, c.vmi(ctx, key))
			vm.managed, vm.managedAside = r.managed, true
			vm.decisions, _ = c.cache.(DecisionCache)
			return vm, nil
		default:
			obj = r.obj
		}
	}
	if live {
		obj, err = c.dyn.Resource(kubevirt.VirtualMachines).Namespace(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
		if missed && (err == nil || apierrors.IsNotFound(err)) {
			c.seen.record(key, err == nil)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("read VM %s: %w", key, err)
	}
	return Decode(ctx, key, obj, c.vmi(ctx, key)), nil
}

// cachedRead is what the cache offers [Client.Read] for one VM.
type cachedRead struct {
	// obj is the object to decode; nil when Read must read live.
	obj *unstructured.Unstructured
	// managed are obj's managedFields kept aside by a [TrimmedCache].
	managed      []metav1.ManagedFieldsEntry
	managedAside bool
}

// cached is the cache side of Read: the cached VM, or the Client's own
// later write of it while the cache is behind (an error when the cache
// has none). A trimmed cache whose kept managedFields are not those of
// the cached version is about to show a newer one: no object, read live.
func (c *Client) cached(key system.Key) (cachedRead, error) {
	obj, err := c.cache.VM(key)
	if err != nil {
		return cachedRead{}, err // the caller classifies it (NotFound)
	}
	if resolved := c.recent.resolve(key, obj); resolved != obj {
		return cachedRead{obj: resolved}, nil // the Writer's own apply answer: managedFields and all
	}
	tc, ok := c.cache.(TrimmedCache)
	if !ok {
		return cachedRead{obj: obj}, nil
	}
	managed, known := tc.VMManagedFields(key, obj.GetResourceVersion())
	if !known {
		return cachedRead{}, nil
	}
	return cachedRead{obj: obj, managed: managed, managedAside: true}, nil
}

// vmi returns the VMI (cache, or live without a cache), nil when absent.
func (c *Client) vmi(ctx context.Context, key system.Key) *unstructured.Unstructured {
	var vmi *unstructured.Unstructured
	var err error
	if c.cache != nil {
		vmi, err = c.cache.VMI(key)
	} else {
		vmi, err = c.dyn.Resource(kubevirt.VirtualMachineInstances).Namespace(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	}
	if err != nil {
		if !apierrors.IsNotFound(err) {
			logctx.From(ctx).Warn("read VMI", "vm", key, "err", err)
		}
		return nil
	}
	return vmi
}

// step decides one attempt: given a read it returns the body to apply, or
// ErrNoChange. It may apply other managers' bodies itself through apply.
type step func(ctx context.Context, vm *VM) (*Body, error)

// run is the read-decide-apply loop: cache read first, and after a 409 a
// live read, with bounded jittered exponential backoff.
func (c *Client) run(ctx context.Context, key system.Key, manager string, decide step) (*VM, error) {
	st := c.counters(manager)
	live := c.cache == nil
	var last error
	for attempt := range c.opts.MaxAttempts {
		if attempt > 0 {
			st.retries.Add(1)
			if err := c.sleep(ctx, attempt); err != nil {
				st.failures.Add(1)
				return nil, fmt.Errorf("%s apply to %s: %w (last: %w)", manager, key, err, last)
			}
		}
		vm, err := c.read(ctx, key, live)
		if err != nil {
			st.failures.Add(1)
			return nil, err
		}
		body, err := decide(ctx, vm)
		if errors.Is(err, ErrNoChange) && !live {
			// "Nothing to do" decided on a cached read may be stale (a
			// write of a moment ago not seen yet): confirm on a live read.
			vm, err = c.read(ctx, key, true)
			if err != nil {
				st.failures.Add(1)
				return nil, err
			}
			body, err = decide(ctx, vm)
		}
		if errors.Is(err, ErrNoChange) {
			return vm, nil
		}
		if err != nil && refusal(err) {
			st.refusals.Add(1)
			return nil, err
		}
		if err == nil {
			var out *VM
			out, err = c.apply(ctx, manager, vm, body)
			if err == nil {
				return out, nil
			}
		}
		if !retryable(err) {
			st.failures.Add(1)
			return nil, err
		}
		last, live = err, true
		logctx.From(ctx).Debug("apply conflict, retrying from a live read", "vm", key, "manager", manager, "attempt", attempt+1, "err", err)
	}
	st.failures.Add(1)
	return nil, fmt.Errorf("%s apply to %s: gave up after %d attempts: %w", manager, key, c.opts.MaxAttempts, last)
}

// retryable: a stale precondition (409 without field-manager causes). A
// field-manager conflict (non-forced apply) is reported, not retried.
func retryable(err error) bool {
	return apierrors.IsConflict(err) && !IsFieldConflict(err)
}

// refusal reports whether a decision's error is the decision's own (a
// refused value, a layout that moved under a power-on), not the
// apiserver's (a step may apply other managers' bodies itself) or the
// request's end.
func refusal(err error) bool {
	var status apierrors.APIStatus
	return !errors.As(err, &status) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// IsFieldConflict reports whether err is an SSA field-manager conflict.
func IsFieldConflict(err error) bool {
	var se apierrors.APIStatus
	if !errors.As(err, &se) || se.Status().Details == nil {
		return false
	}
	for _, cause := range se.Status().Details.Causes {
		if cause.Type == metav1.CauseTypeFieldManagerConflict {
			return true
		}
	}
	return false
}

func (c *Client) sleep(ctx context.Context, attempt int) error {
	return Backoff(ctx, attempt, c.opts.Backoff, c.opts.MaxBackoff)
}

// Backoff sleeps before retry number attempt (1-based): base doubled per
// attempt, capped at max, with full jitter; it returns early with ctx's
// cause. The Writer's 409 retries and power's start rounds share it.
func Backoff(ctx context.Context, attempt int, base, max time.Duration) error {
	d := base << min(attempt-1, 16)
	d = min(d, max)
	d = time.Duration(rand.Int64N(int64(d)) + 1) //nolint:gosec // G404: full jitter of a retry, not a secret
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// apply sends one body under manager and decodes the result.
func (c *Client) apply(ctx context.Context, manager string, read *VM, b *Body) (*VM, error) {
	st := c.counters(manager)
	obj := b.Object
	var sub []string
	if b.Subresource != "" {
		sub = []string{b.Subresource}
	}
	send := func(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return c.dyn.Resource(kubevirt.VirtualMachines).Namespace(read.Key.Namespace).Apply(ctx, read.Key.Name, obj,
			metav1.ApplyOptions{FieldManager: manager, Force: b.Force}, sub...)
	}
	out, err := send(obj)
	var refusal error
	if err != nil && hasRebootPolicy(obj) && RebootPolicyRefused(err) {
		// The cluster does not take rebootPolicy (feature gate off): the
		// same intent without it (today's revert on the next VMI).
		refusal, obj = err, withoutRebootPolicy(obj)
		out, err = send(obj)
	}
	if err != nil {
		if apierrors.IsConflict(err) {
			st.conflicts.Add(1)
		}
		return nil, fmt.Errorf("%s apply to %s: %w", manager, read.Key, err)
	}
	st.applies.Add(1)
	c.recent.remember(read.Key, obj.GetResourceVersion(), out)
	vm := Decode(ctx, read.Key, out, read.VMI)
	if manager == ManagerBoot {
		c.noteUnarmed(ctx, read, obj, vm, refusal)
	}
	return vm, nil
}
