// Package media owns virtual media: Redfish InsertMedia / EjectMedia on a
// KubeVirt VirtualMachine, and the import of the image into a PVC. Slots
// are a CD ([DefaultSlot]), a USB stick ([USBSlot]; its disk is on bus usb,
// see [system.KindOf]) and the image of Boot.HttpBootUri
// ([system.HTTPBootSlot], not virtual media); all go through the same
// state machine.
//
// State lives on Kubernetes objects only, so any replica can answer any
// request and a restart loses nothing:
//
//   - the slot (image URL, phase, InsertID, claim name) is a VM annotation
//     written by the redfish-media field manager through [apply.Writer];
//   - the image is a PVC named by [ClaimName] (deterministic per VM and
//     slot), filled by an [Importer]: an import pod named by [PodName]
//     (deterministic per insert) in a PVC the bridge makes, or, where CDI
//     is installed, a CDI DataVolume named like the PVC (CDI makes the
//     PVC); pods, PVCs and DataVolumes are owned by the VM
//     (ownerReferences, not controller).
//
// [Service.Insert] records the slot as Pending with a fresh InsertID before it
// returns, so power/ sees it Busy and defers a power-on that arrives 1 ms
// later. The CD-ROM disk and its volume are written by apply/, together in
// one apply, when the slot turns Ready (apply/ attaches only Ready slots, so
// no VM start can grab the ReadWriteOnce PVC from the import pod), and
// removed together when the slot is ejected or re-inserted.
//
// [Reconciler] drives the state machine from watches (VMs through
// [VMEvents], PVCs and each import method's objects through client-go
// informers); the import method makes, reads and deletes its objects,
// also on [Service.Eject], which deletes them through each registered
// method's ejector (read live: the verbs run on every replica). An import
// method is a package implementing [importer.Importer] that registers
// itself ([importer.Register]): [ImportMethodPod] (package podimport) and
// [ImportMethodCDI] (package cdiimport), imported by methods.go. A method
// gets only [importer.Deps] from the reconciler (deps.go), never the
// Reconciler. For the pod:
//
//	Pending   -> PVC + import pod created -> Importing
//	Importing -> pod Succeeded            -> Ready  (pod deleted)
//	          -> pod reports needBytes    -> SizeBytes recorded, pod deleted, PVC re-created larger, pod re-created
//	          -> pod Failed               -> Failed (termination message as Reason, pod deleted, PVC released: release.go)
//	          -> pod gone                 -> pod re-created
//	          -> older than ImportTimeout -> Failed "import timed out" (pod deleted)
//
// The bridge never contacts an image server: no network call on the
// reconcile path, so no tenant's URL can hold the shared workers. A PVC
// starts at DefaultSize; the import pod, which knows the image's size
// (Content-Length, or counted when the server sends none), reports an
// image that does not fit ([download.NeedRoomError]) and the PVC is re-created at
// [download.ClaimSize]. An image above MaxImageSize fails the import
// ([download.TooLargeError]). Only objects with the bridge's label and an
// ownerReference to the VM's UID are ever deleted; a PVC that merely has
// the slot's name fails the insert ([ForeignClaimError]).
//
// Every transition is guarded by the InsertID: a pod of an older insert
// never changes the current slot (it is deleted instead). The reconciler
// also heals a media volume that lost its disk entry (the production
// corruption where KubeVirt attached the ISO as a writable disk) by
// re-applying the complete media intent, and reports a media disk without
// its volume (slog, Warning event, counter).
//
// A CDI DataVolume reports its progress (the Task's PercentComplete),
// succeeds or fails (its importer's first failure fails the slot); see
// package cdiimport (importcdi.go) for what CDI cannot express. CDI's
// importer checks no address it dials, so where CDI may import, Insert also resolves the
// image URL's host name and refuses it when the address policy refuses
// any of its addresses ([Service.SetHostResolver]; a DNS lookup, still no
// request to the image server), and the DataVolume requests at most
// MaxImageSize.
//
// The import pod runs this binary's `import` subcommand
// ([download.RunImport], the downloader's package): a plain HTTP(S) GET with Accept-Encoding identity (a compressed response
// is refused, never inflated) streamed into the PVC up to the limits. The
// URL is passed as an argument, never through a shell; the reconciler
// builds the arguments with [download.ImportRequest.Args], the pod parses
// them with the same package.
//
// A slot's TLS trust (Redfish VerifyCertificate and Certificates, see
// [Service.Trust]) lives in a ConfigMap owned by the VM; the bridge-wide CA
// bundle in a ConfigMap of the bridge's namespace ([Service.SetCABundle]).
// What an insert needs besides its URL goes into its import ConfigMap
// (those CAs) and import Secret (InsertMedia's credentials), owned by the
// VM, mounted by the import pod (only file paths in its arguments) or
// named by the DataVolume, and deleted when the import ends or on eject.
//
// # Image cache: one download for N VMs of one image
//
// With [Service.SetImageCache] (serve --image-cache) an insert records a
// cache key ([system.MediaSlot.CacheKey], cachekey.go): an HMAC-SHA256,
// under the bridge's secret ([Service.SetImageCacheKey]; without it the
// key could be tested offline against guessed passwords), of the URL,
// VerifyCertificate, the CAs the import trusts and the credentials (the
// credentials stay in the import Secret). Entries are per
// namespace, so nothing crosses tenants, and a slot with other trust or
// credentials has another key: an image fetched with one user's
// credentials or CA is never handed to a slot that did not present them.
// The entry of a key is a PVC named by [CacheClaimName], labelled
// image-cache and annotated with the whole key (a PVC that merely has the
// name fails the insert: [ForeignClaimError]); it is owned by the VM whose
// insert created it, so the GC deletes it with that VM or the namespace.
//
// Pod method (package podimport, cache.go): it creates the entry beside the
// slot's PVC (at least as large) and mounts it into the insert's import
// pod at [CacheMountPath]. The pod (package [download]), under an exclusive
// lock on the entry, revalidates: a HEAD with If-None-Match and
// If-Modified-Since, sent with the slot's own trust and credentials, to
// the same address policy. Fresh (304, or the same ETag, Last-Modified
// and Content-Length as the entry's meta.json) means copy; an empty
// entry, a server that sends no ETag nor Last-Modified, or changed
// validators mean download into the entry (its meta.json first removed,
// then the image and the GET's validators written) and copy. The copy
// goes into the slot's own PVC (temporary file, synced, renamed) and is
// checked against the entry's recorded size and sha256. Concurrent
// inserts of one key wait on the lock: the first downloads, the others
// revalidate and copy, so the image server sends the image once (plus one
// HEAD per insert) and again only when it changed. The bridge itself still
// never contacts the image server.
//
// The entry's meta.json is no proof of its image: any namespace user who
// may mount the entry rewrites both. A pod that downloaded into the entry
// reports the image's sha256, and the bridge records it (podimport's
// cacherecord.go): an immutable ConfigMap named after the entry, owned by
// it, under the bridge's MAC over the namespace, the name, the entry's UID
// and the digest (keyed from the session key, [Options].ObjectSecret). A
// later import pod gets --cache-sha256 from a valid record (an entry whose
// meta.json says otherwise is downloaded again); with no valid record, an
// entry import pods are using is shared as it is and any other is
// refilled (--cache-refill). Every copy's reported sha256 must be the
// record's: a copy without a matching record waits while a download's
// record may still come, else its pod is deleted and the insert imports
// again with --cache-refill. A tenant can delete a record (a download
// follows), never forge one.
//
// A download into the entry that fails (the server's answer, not the
// downloading pod's own end: an eject of its VM fails no other insert) is
// recorded in the entry (failed.json); every import that was already
// waiting for it fails with the same error ([download.SharedDownloadError]) without
// a request of its own, and an insert after the failure downloads again.
//
// [Options.ImageCacheBudget] bounds each namespace's entries: before a
// new entry is created the import method deletes the least recently used
// others (when its import pods last started; the entries' creation before
// this leader's term) until it fits, never one an import pod that has not
// ended mounts (a live pod list; import pods with an entry are created
// under the same lock, so none appears between the check and the delete).
//
// CDI method (package cdiimport: cachecdi.go, cachecdientry.go,
// cachecheck.go): the entry is a CDI DataVolume with the image's http
// source, and every slot's DataVolume is a CDI clone of the entry's PVC
// (spec.source.pvc; CDI picks a smart or CSI clone where the storage
// offers one, else copies).
// CDI never tells what its importer's GET saw (no ETag, no Last-Modified
// in any status), and the bridge never contacts the image server itself,
// so revalidation is a check pod per insert: the import pod's image,
// address policy and trust, running `redfish-bridge import --head-only`,
// which sends one HEAD and reports ETag, Last-Modified and Content-Length
// in its termination message. The entry is named by the key and that
// version ([cdiEntryName]: redfish-image-<key>-<hash of the validators>)
// and annotated with both, so an entry is never replaced: a changed image
// is a new entry imported once (its own copy of the insert's CAs as
// certConfigMap, since the insert's import ConfigMap goes when the insert
// ends), the inserts that checked the old version keep cloning the old
// one, and no entry is deleted under a clone for being stale. The check
// precedes the entry's import, so an entry's bytes are what the URL
// served at or after the check that named it: an insert whose own check
// (made after it was accepted) matches an entry gets bytes the URL served
// after that insert was accepted, as a plain import would; when the image
// changes during an entry's import, the later checks see the new
// validators and import another entry. A server that sends neither ETag
// nor Last-Modified (or refuses HEAD) gives nothing to compare: that
// insert gets its own http DataVolume, uncached. The chosen alternative
// to re-importing the entry on every insert: N inserts at once cost N
// HEADs and one GET.
//
// Inserts waiting for an entry are enqueued when its phase or its progress
// changes (cdiimport's cacheprogress.go), so each shows the shared download's progress. An entry whose import failed
// fails every insert whose check pod was created before the failure (the
// Running condition's time) with the same error ([download.SharedDownloadError]);
// an insert checked after it deletes the failed entry and imports again.
// The budget evicts CDI entries like the pod method's PVCs (least
// recently used first, a live DataVolume list), never one still importing
// nor one that a slot DataVolume not yet Succeeded names as its
// source.pvc (cacheMu orders the clones' creates and the evictions); the
// GC of a VM that owns an entry is held off a CSI clone by the CSI
// provisioner's cloning-protection finalizer, and off a host-assisted one
// by pvc-protection (CDI's source pod mounts it). The CDI entries and the
// pod method's entries are bounded separately.
//
// [PruneCache] (`redfish-bridge cache prune`, the chart's uninstall hook)
// deletes a namespace's entries, those an unfinished import pod mounts
// only when asked.
//
// The pod method's progress is the import pods' log (download's
// importprogress.go, podimport's progress.go): the filling pod's progress lines, and each waiting
// pod's echo of the filler's progress file in the entry.
//
// Not yet: the pod method's entry must be mountable by the import pods of several VMs at
// once (ReadWriteMany storage, or one node).
package media
