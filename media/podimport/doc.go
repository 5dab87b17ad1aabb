// Package podimport owns the pod import method ([Method], "pod"): the
// bridge's own image runs `redfish-bridge import` (package download) in an
// import pod with the slot's PVC, which this method makes, and the
// insert's import ConfigMap and Secret mounted; the PVC is re-created
// larger when the pod reports an image that does not fit. It also owns
// the pod method's side of the image cache (cache.go: the entry PVC
// mounted into the import pod, its eviction under the budget) and the
// import pod's progress read from its log (progress.go).
//
// It implements [importer.Importer] and registers itself in its init; it
// gets only [importer.Deps] from the media reconciler. Always available.
package podimport
