package deploy

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// role is one of the chart's live (Cluster)Roles, read and written by the
// admin.
type role struct {
	kind, namespace, name string
}

func (r role) String() string { return r.kind + " " + r.namespace + "/" + r.name }

func (r role) rules(ctx context.Context, admin kubernetes.Interface) ([]rbacv1.PolicyRule, error) {
	if r.kind == "ClusterRole" {
		cr, err := admin.RbacV1().ClusterRoles().Get(ctx, r.name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return cr.Rules, nil
	}
	ro, err := admin.RbacV1().Roles(r.namespace).Get(ctx, r.name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return ro.Rules, nil
}

func (r role) setRules(ctx context.Context, admin kubernetes.Interface, rules []rbacv1.PolicyRule) error {
	if r.kind == "ClusterRole" {
		cr, err := admin.RbacV1().ClusterRoles().Get(ctx, r.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cr.Rules = rules
		_, err = admin.RbacV1().ClusterRoles().Update(ctx, cr, metav1.UpdateOptions{})
		return err
	}
	ro, err := admin.RbacV1().Roles(r.namespace).Get(ctx, r.name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	ro.Rules = rules
	_, err = admin.RbacV1().Roles(r.namespace).Update(ctx, ro, metav1.UpdateOptions{})
	return err
}

// withoutVerb returns rules with verb removed from rules[i] (and the rule
// dropped when it has no verb left).
func withoutVerb(rules []rbacv1.PolicyRule, i int, verb string) []rbacv1.PolicyRule {
	out := make([]rbacv1.PolicyRule, 0, len(rules))
	for j, r := range rules {
		if j == i {
			r = *r.DeepCopy()
			r.Verbs = slices.DeleteFunc(r.Verbs, func(v string) bool { return v == verb })
			if len(r.Verbs) == 0 {
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

// everyVerbNeeded removes, one at a time, each verb of each rule of the
// chart's (Cluster)Roles and asserts that the call needing it becomes
// Forbidden; it then restores the rule and asserts the call is allowed
// again. It also checks that name-restricted rules refuse other names.
func everyVerbNeeded(t *testing.T, env *installed) {
	ctx := t.Context()
	kube, err := kubernetes.NewForConfig(env.sa)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(env.sa)
	if err != nil {
		t.Fatal(err)
	}
	table := probes(env, kube, dyn, t)
	used := map[grant]bool{}
	roles := []role{
		{"ClusterRole", "", fullname + "-crd"},
		{"Role", vmNS, fullname},
		{"Role", releaseNS, fullname + "-self"},
	}
	for _, r := range roles {
		orig, err := r.rules(ctx, env.admin)
		if err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		for i, rule := range orig {
			for _, verb := range rule.Verbs {
				var checks []grant
				for _, g := range rule.APIGroups {
					for _, res := range rule.Resources {
						checks = append(checks, grant{g, res, verb, r.namespace})
					}
				}
				t.Run(fmt.Sprintf("%s/rule%d/%s", r.name, i, verb), func(t *testing.T) {
					for _, g := range checks {
						if table[g] == nil {
							t.Fatalf("%s grants %s, which no operation of the bridge needs", r, g)
						}
						used[g] = true
					}
					if err := r.setRules(ctx, env.admin, withoutVerb(orig, i, verb)); err != nil {
						t.Fatalf("remove %s from %s: %v", verb, r, err)
					}
					for _, g := range checks {
						waitAuthz(t, g, table[g], true)
					}
					if err := r.setRules(ctx, env.admin, orig); err != nil {
						t.Fatalf("restore %s: %v", r, err)
					}
					for _, g := range checks {
						waitAuthz(t, g, table[g], false)
					}
				})
			}
		}
	}
	for g := range table {
		if !used[g] {
			t.Errorf("the bridge needs %s but the chart does not grant it", g)
		}
	}
	t.Run("names outside resourceNames are refused", func(t *testing.T) {
		for what, call := range map[string]probe{
			"get the TLS Secret": func(ctx context.Context) error {
				_, err := kube.CoreV1().Secrets(releaseNS).Get(ctx, fullname+"-tls", metav1.GetOptions{})
				return err
			},
			"list all Secrets": func(ctx context.Context) error {
				_, err := kube.CoreV1().Secrets(releaseNS).List(ctx, metav1.ListOptions{})
				return err
			},
			"patch the chart's ConfigMap": func(ctx context.Context) error {
				_, err := kube.CoreV1().ConfigMaps(releaseNS).Patch(ctx, fullname, types.MergePatchType, []byte(`{"data":{"x":"y"}}`), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
				return err
			},
			"get another CRD": func(ctx context.Context) error {
				_, err := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}).Get(ctx, "virtualmachineinstances.kubevirt.io", metav1.GetOptions{})
				return err
			},
			"get a ConfigMap of the release other than the CA bundle": func(ctx context.Context) error {
				_, err := kube.CoreV1().ConfigMaps(releaseNS).Get(ctx, fullname, metav1.GetOptions{})
				return err
			},
			"read a Secret where VMs live": func(ctx context.Context) error {
				_, err := kube.CoreV1().Secrets(vmNS).Get(ctx, "anything", metav1.GetOptions{})
				return err
			},
			"list Secrets where VMs live": func(ctx context.Context) error {
				_, err := kube.CoreV1().Secrets(vmNS).List(ctx, metav1.ListOptions{})
				return err
			},
			"list pods outside the watched namespaces": func(ctx context.Context) error {
				_, err := kube.CoreV1().Pods(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
				return err
			},
		} {
			if err := call(ctx); !apierrors.IsForbidden(err) {
				t.Errorf("%s: got %v, want Forbidden", what, err)
			}
		}
	})
}

// waitAuthz polls call until it is Forbidden (forbidden) or anything but
// Forbidden (!forbidden). RBAC changes reach the authorizer through its
// informers, usually within moments; the deadline is a safety net for a
// loaded machine, not a window the change must fit in.
func waitAuthz(t *testing.T, g grant, call probe, forbidden bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err := call(t.Context())
		if apierrors.IsForbidden(err) == forbidden {
			return
		}
		if time.Now().After(deadline) {
			if forbidden {
				t.Errorf("%s still allowed without its grant (err %v): the grant is not what allows it", g, err)
			} else {
				t.Errorf("%s forbidden with the chart's rules: %v", g, err)
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
