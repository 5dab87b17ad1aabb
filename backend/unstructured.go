package backend

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// Readers of unstructured maps without copying (the objects come from the
// informer cache and are only read): a missing or mistyped field reads as
// its zero value, because a VM written by anyone may lack any of them.

func mapAt(m map[string]any, path ...string) map[string]any {
	v, _, _ := unstructured.NestedFieldNoCopy(m, path...)
	out, _ := v.(map[string]any)
	return out
}

func sliceAt(m map[string]any, path ...string) []any {
	v, _, _ := unstructured.NestedFieldNoCopy(m, path...)
	out, _ := v.([]any)
	return out
}

func stringAt(m map[string]any, path ...string) string {
	v, _, _ := unstructured.NestedFieldNoCopy(m, path...)
	out, _ := v.(string)
	return out
}

func intAt(m map[string]any, def int, path ...string) int {
	v, _, _ := unstructured.NestedFieldNoCopy(m, path...)
	switch n := v.(type) {
	case int64:
		if n > 0 {
			return int(n)
		}
	case float64:
		if n > 0 {
			return int(n)
		}
	}
	return def
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
