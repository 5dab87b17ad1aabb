// Package importer owns the seam between the media reconciler and its
// import methods: the [Importer] interface a method implements (and the
// [Ejector] the Redfish verbs use), what it works on and reports
// ([Target], [Status]), what it gets from the reconciler ([Deps]: clients,
// options, the PVC cache, the image cache's lock and recency, counters)
// and the registry ([Register]) the reconciler reads. It also holds the
// vocabulary the reconciler and every method share: the [Owner] of an
// import object and what the bridge may delete of it, the labels and
// names of import pods, PVCs and image cache entries, and the import pod
// itself ([PodFor]), which the CDI method's check pod reuses.
//
// The methods are packages of their own (media/podimport,
// media/cdiimport); none imports media, media imports them.
package importer
