package cdiimport

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// entryProgress is a CDI cache entry's status.progress ("45.20%"): its
// change wakes the entry's waiters too ([cdiImporter.wake]), so that every
// slot waiting for the shared download shows its progress as the Task's
// PercentComplete, not only at its phase changes. The wakes are as many
// as CDI's writes of the progress (about one per percent); a waiter writes
// its slot only when the whole percentage grew (the media reconciler).
func entryProgress(u *unstructured.Unstructured) string {
	p, _, _ := unstructured.NestedString(u.Object, "status", "progress")
	return p
}
