package sim

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const eventWarning = corev1.EventTypeWarning

func ref(u *unstructured.Unstructured) corev1.ObjectReference {
	return corev1.ObjectReference{
		APIVersion: u.GetAPIVersion(), Kind: u.GetKind(),
		Namespace: u.GetNamespace(), Name: u.GetName(),
		UID: u.GetUID(), ResourceVersion: u.GetResourceVersion(),
	}
}

func podRef(p *corev1.Pod) corev1.ObjectReference {
	return corev1.ObjectReference{
		APIVersion: "v1", Kind: "Pod",
		Namespace: p.Namespace, Name: p.Name,
		UID: p.UID, ResourceVersion: p.ResourceVersion,
	}
}

// event records a core/v1 Event synchronously (tests read them right
// after); a failure is only logged.
func (s *Simulator) event(ctx context.Context, obj corev1.ObjectReference, typ, reason, msg, component string) {
	now := metav1.NewTime(time.Now())
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%s.%x", obj.Name, now.UnixNano()),
			Namespace: obj.Namespace,
		},
		InvolvedObject: obj,
		Reason:         reason,
		Message:        msg,
		Type:           typ,
		Source:         corev1.EventSource{Component: component, Host: NodeName},
		FirstTimestamp: now,
		LastTimestamp:  now,
		Count:          1,
	}
	if _, err := s.kube.CoreV1().Events(obj.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		s.log.WarnContext(ctx, "record event", "object", obj.Namespace+"/"+obj.Name, "reason", reason, "error", err)
	}
}
