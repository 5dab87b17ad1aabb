package apply

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

var eventResource = schema.GroupVersionResource{Version: "v1", Resource: "events"}

// fallbackCounters count Once overrides armed without rebootPolicy
// Terminate, by reason.
type fallbackCounters struct{ refused, author atomic.Int64 }

// RebootPolicyFallbacks returns how many boot applies armed a Once override
// without rebootPolicy Terminate, by reason ([FallbackRefused],
// [FallbackAuthor]): on those VMs a reboot the guest does itself boots the
// override's target again (KubeVirt reboots the domain in place).
func (c *Client) RebootPolicyFallbacks() map[string]int64 {
	return map[string]int64{FallbackRefused: c.fallbacks.refused.Load(), FallbackAuthor: c.fallbacks.author.Load()}
}

// noteUnarmed reports a boot apply that left a Once override without
// rebootPolicy Terminate: refused by the cluster (the body had it), or kept
// out because the author owns another value.
func (c *Client) noteUnarmed(ctx context.Context, read *VM, sent *unstructured.Unstructured, out *VM, refusal error) {
	if refusal != nil {
		c.fallbacks.refused.Add(1)
		c.fallback(ctx, read.Key, out.Object, FallbackRefused, fmt.Sprintf(
			"the cluster refused spec.template.spec.domain.rebootPolicy: Terminate (%v); the Once boot override is reverted when the next VMI runs, and a reboot the guest does itself boots %s again (enable KubeVirt's RebootPolicy feature gate)",
			refusal, out.Boot.Target))
		return
	}
	if out.Boot.Enabled != system.BootOnce || !Active(out.Boot) || hasRebootPolicy(sent) {
		return
	}
	if v := kubevirt.RebootPolicyOf(out.Object); v != kubevirt.RebootPolicyTerminate {
		c.fallbacks.author.Add(1)
		c.fallback(ctx, read.Key, out.Object, FallbackAuthor, fmt.Sprintf(
			"the VM's author owns spec.template.spec.domain.rebootPolicy: %s; the Once boot override is reverted when the next VMI runs, and a reboot the guest does itself boots %s again",
			v, out.Boot.Target))
	}
}

// fallback logs a warning and records a Warning event on the VM (a failed
// event is only logged).
func (c *Client) fallback(ctx context.Context, key system.Key, vm *unstructured.Unstructured, reason, msg string) {
	logctx.From(ctx).Warn("Once boot override armed without rebootPolicy Terminate", "vm", key, "reason", reason, "detail", msg)
	now := metav1.NewTime(time.Now())
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: vm.GetName() + ".", Namespace: vm.GetNamespace()},
		InvolvedObject: kubevirt.Reference(vm),
		Reason:         reason, Message: msg, Type: corev1.EventTypeWarning,
		Source:              corev1.EventSource{Component: "redfish-bridge"},
		ReportingController: "redfish-bridge.io/boot", ReportingInstance: "redfish-bridge", Action: "Apply",
		FirstTimestamp: now, LastTimestamp: now, EventTime: metav1.NewMicroTime(now.Time), Count: 1,
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ev)
	if err == nil {
		u := &unstructured.Unstructured{Object: obj}
		u.SetAPIVersion("v1")
		u.SetKind("Event")
		_, err = c.dyn.Resource(eventResource).Namespace(vm.GetNamespace()).Create(ctx, u, metav1.CreateOptions{})
	}
	if err != nil {
		logctx.From(ctx).Warn("record event", "vm", key, "reason", reason, "err", err)
	}
}
