package media

import (
	"github.com/redfish-bridge/redfish-bridge/media/cdiimport"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
)

// The import objects' vocabulary, shared with the import methods (package
// importer holds it; these are its names in media's API).

// Labels and annotations on import pods, PVCs and image cache entries.
const (
	LabelComponent = importer.LabelComponent
	LabelPartOf    = importer.LabelPartOf
	LabelInsertID  = importer.LabelInsertID
	LabelSlot      = importer.LabelSlot

	ComponentImporter = importer.ComponentImporter
	ComponentMedia    = importer.ComponentMedia
	PartOf            = importer.PartOf

	ComponentImageCache = importer.ComponentImageCache
	AnnotationCacheKey  = importer.AnnotationCacheKey
	CacheMountPath      = importer.CacheMountPath
	LabelImageCheck     = importer.LabelImageCheck
	// AnnotationCacheValidators is on a CDI cache entry (package cdiimport).
	AnnotationCacheValidators = cdiimport.AnnotationCacheValidators
)

// Import pod layout.
const (
	ImporterContainer = importer.ImporterContainer
	ImageMountPath    = importer.ImageMountPath
	ImageDest         = importer.ImageDest
	// ImportConfigPath is where the import pod mounts its import ConfigMap
	// (ImportConfigPath/ca) and Secret (ImportConfigPath/credentials).
	ImportConfigPath = importer.ImportConfigPath
)

// DataVolumeResource is CDI's DataVolume (package cdiimport).
var DataVolumeResource = cdiimport.DataVolumeResource

// DataVolumeKind is the kind of [DataVolumeResource].
const DataVolumeKind = importer.DataVolumeKind

// ForeignClaimError reports a PVC (or DataVolume) with the slot's claim
// name that the bridge did not create for this VM: it is neither used nor
// deleted.
type ForeignClaimError = importer.ForeignClaimError

// PrunedEntry is an image cache entry [PruneCache] found.
type PrunedEntry = importer.PrunedEntry

// owner is the VM an import object belongs to.
type owner = importer.Owner

// PodName is the deterministic name of the import pod of one insert.
func PodName(claim, insertID string) string { return importer.PodName(claim, insertID) }

// CacheClaimName is the PVC of the namespace's cache entry of key.
func CacheClaimName(key string) string { return importer.CacheClaimName(key) }
