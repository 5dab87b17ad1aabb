// Package cdiimport owns the CDI import method ([Method], "cdi"): where
// CDI's DataVolume CRD is served, a slot's image is imported by a CDI
// DataVolume with an http source (importcdi.go says what CDI cannot do
// safely, which the pod method imports instead). It also owns the CDI
// side of the image cache: the check pod that revalidates an insert
// (cachecheck.go), the entry DataVolumes named by key and version that
// slots clone (cachecdi.go, cachecdientry.go), their eviction under the
// budget, and their prune ([PruneEntries]).
//
// It implements [importer.Importer] and registers itself in its init; it
// gets only [importer.Deps] from the media reconciler, and keeps its own
// per-insert plan in [importer.Status.Next].
package cdiimport
