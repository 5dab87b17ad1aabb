package testutil

import (
	"github.com/redfish-bridge/redfish-bridge/kubevirt"

	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// WithoutPrecondition returns dyn with metadata.resourceVersion stripped
// from every Server-Side Apply body: a NEGATIVE CONTROL that brings back the
// lost-update races the Writer's precondition exists to prevent (two
// writers of an atomic list each forcing the list they read).
func WithoutPrecondition(dyn dynamic.Interface) dynamic.Interface {
	return applyRewriter{Interface: dyn, rewrite: func(obj *unstructured.Unstructured, _ metav1.ApplyOptions) *unstructured.Unstructured {
		obj = obj.DeepCopy()
		unstructured.RemoveNestedField(obj.Object, "metadata", "resourceVersion")
		return obj
	}}
}

// rebootPolicyPath is where KubeVirt reads a VM's reboot policy.
var rebootPolicyPath = kubevirt.RebootPolicy

// WithoutRebootPolicy returns dyn with rebootPolicy stripped from every
// apply body that sets it: a NEGATIVE CONTROL that brings back the install
// loop rebootPolicy Terminate exists to prevent (a guest that reboots
// itself after a Once Cd boot boots the CD again). Parents left empty are
// stripped too (an empty map in an apply body would claim it).
func WithoutRebootPolicy(dyn dynamic.Interface) dynamic.Interface {
	return applyRewriter{Interface: dyn, rewrite: func(obj *unstructured.Unstructured, _ metav1.ApplyOptions) *unstructured.Unstructured {
		if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object, rebootPolicyPath...); !found {
			return obj
		}
		obj = obj.DeepCopy()
		for n := len(rebootPolicyPath); n >= 1; n-- {
			path := rebootPolicyPath[:n]
			if n < len(rebootPolicyPath) {
				if m, _, _ := unstructured.NestedMap(obj.Object, path...); len(m) > 0 {
					break
				}
			}
			unstructured.RemoveNestedField(obj.Object, path...)
		}
		return obj
	}}
}

// rewriteFunc returns the body to send in place of obj (obj itself, or a
// modified copy: obj belongs to the caller).
type rewriteFunc func(obj *unstructured.Unstructured, opts metav1.ApplyOptions) *unstructured.Unstructured

// applyRewriter is a dynamic.Interface whose Apply calls send a rewritten
// body; every other call goes through unchanged.
type applyRewriter struct {
	dynamic.Interface
	rewrite rewriteFunc
}

func (a applyRewriter) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return namespaceableRewriter{NamespaceableResourceInterface: a.Interface.Resource(gvr), rewrite: a.rewrite}
}

type namespaceableRewriter struct {
	dynamic.NamespaceableResourceInterface
	rewrite rewriteFunc
}

func (n namespaceableRewriter) Namespace(ns string) dynamic.ResourceInterface {
	return resourceRewriter{ResourceInterface: n.NamespaceableResourceInterface.Namespace(ns), rewrite: n.rewrite}
}

func (n namespaceableRewriter) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, subresources ...string) (*unstructured.Unstructured, error) {
	return n.NamespaceableResourceInterface.Apply(ctx, name, n.rewrite(obj, opts), opts, subresources...)
}

type resourceRewriter struct {
	dynamic.ResourceInterface
	rewrite rewriteFunc
}

func (r resourceRewriter) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, subresources ...string) (*unstructured.Unstructured, error) {
	return r.ResourceInterface.Apply(ctx, name, r.rewrite(obj, opts), opts, subresources...)
}
