// Package apply is the only package that writes KubeVirt VirtualMachines.
//
// Every write is a Kubernetes Server-Side Apply under one of four field
// managers, one per concern, but one: redfish-boot's removal of another
// writer's firmware.bootloader.efi for Legacy (a preconditioned merge
// patch, see the table). Each manager's builder turns the concern's
// complete intent (never a delta: in SSA omission deletes) into a minimal
// unstructured apply body. Concern packages (media/, power/) decide WHAT the
// intent is through a change function; this package reads the VM, calls the
// change function, builds the body, applies it and retries on conflict.
//
// # Field managers and what they own
//
// T below is spec.template.spec; <slot> is a slot id (virtual media cd0,
// usb0, or httpboot for Boot.HttpBootUri) and its disk and volume are both
// named "media-<slot>". A usb slot's disk is {disk: {bus: usb, readonly:
// true}}, every other slot's a CD-ROM {cdrom: {bus: sata, readonly: true}}.
//
//	manager        map mode (disks/volumes/interfaces are list-type map)             atomic mode (stock KubeVirt CRD)
//	-------------  ----------------------------------------------------------------  ----------------------------------------------
//	redfish-media  metadata.annotations[redfish-bridge.io/media.<slot>]              same annotations
//	                 (while the slot records anything)
//	               T.domain.devices.disks[name=media-<slot>]: name, cdrom.bus,       T.domain.devices.disks (whole list) and
//	                 cdrom.readonly, or disk.bus, disk.readonly for usb slots        T.volumes (whole list), when media wrote
//	                 (from the first time the slot is Ready: a Pending or            them last; sent when media changes them
//	                 Importing PVC is never referenced, so no VMI can hold it;         or owns them (omission would delete)
//	                 a CD slot's drive then stays, empty, while the slot
//	                 holds nothing Ready; usb and httpboot disks go with
//	                 their volume)
//	               T.volumes[name=media-<slot>]: name,
//	                 persistentVolumeClaim.claimName, and .hotpluggable (true)
//	                 when written into the drive of a VM with a live VMI
//	                 (KubeVirt's declarative hotplug; the flag is kept
//	                 until the volume goes); only while the slot is Ready
//	redfish-boot   metadata.annotations[redfish-bridge.io/boot]                      same annotation
//	               T.domain.devices.disks[name=*]: name, bootOrder for every disk,   T.domain.devices.disks (whole list) when boot
//	                 while an override (Once/Continuous, target Cd/Hdd/Pxe/          wrote it last; when the override stops,
//	                 UefiHttp) is set
//	               T.domain.devices.interfaces[name=*]: name, bootOrder for the        every bootOrder is removed from the list
//	                 first interface (target Pxe) and for any interface that         T.domain.devices.interfaces (whole list) when
//	                 already carried one (renumbered after the disks: unique)          an interface is numbered
//	               T.domain.firmware.bootloader.efi.secureBoot (true only while      same
//	                 Secure Boot is Enabled) or .bios, once a mode was set
//	                 (Legacy where another writer owns efi: efi removed
//	                 first, below); Bios.ResetBios forgets the mode and
//	                 releases both, but an efi.secureBoot it alone owns
//	                 under another writer's efi stays, false
//	                 ([ResetOverride])
//	redfish-boot   removes T.domain.firmware.bootloader.efi when a client sets     same
//	  (Update:       Legacy and another writer owns (part of) it: a JSON merge
//	  merge patch)   patch {efi: null} carrying the resourceVersion read
//	                 (Client.releaseEFI, ErrForeignEFI); it sets no field, so
//	                 this entry owns nothing and is not recorded
//	               T.domain.features.smm.enabled (true) while Secure Boot is         same
//	                 Enabled (KubeVirt's secure boot needs SMM); dropped when
//	                 it is not (an author who also set it true keeps it)
//	               T.domain.rebootPolicy (Terminate) while a Once override         same
//	                 lays out a boot, so that a reboot the guest does itself
//	                 ends the VMI; dropped when the override ends. Never
//	                 taken from an author who set a value: then, and where
//	                 the cluster refuses the field (KubeVirt's RebootPolicy
//	                 feature gate off), the override is applied without it
//	                 (a Warning event, RebootPolicyFallbacks)
//	redfish-power  metadata.annotations[redfish-bridge.io/power]                     same
//	                 (while a power-on is held or was dropped)
//	               spec.runStrategy                                                  same
//	               status.stateChangeRequests (status subresource; the whole         same
//	                 atomic list, while a Start or Stop request is pending:
//	                 virt-controller removes each one it acted on)
//	redfish-       metadata.annotations[redfish-bridge.io/protocols]                 same
//	  protocols      (while an administrator has IPMI or SSH switched off
//	                 on the System's Manager: NetworkProtocol PATCH; every
//	                 replica's IPMI endpoint and SSH console read it from
//	                 the VM cache)
//
// Nothing else is ever written: not labels, not other disks' fields, no
// status field but the state change requests. Fields of other writers (the
// VM's author, kubectl edit, client-side kubectl apply, virt-api, another SSA
// manager) stay theirs.
//
// # Objects besides the VM
//
//	object                            written by                           owner, lifetime
//	--------------------------------  -----------------------------------  ----------------------------------------------
//	image PVC <claim> (import pod     media's reconciler: created, never   ownerReference (not controller) to the VM;
//	  method; <claim> is ClaimName:     updated (a create without a          deleted on eject, when too small for the
//	  <vm>-media-<slot>; labels         fieldManager: the apiserver records  image (then re-created larger), by the
//	  component media, part-of          the manager "redfish-bridge", the    reconciler once its slot is gone and it is
//	  redfish-bridge, redfish-bridge.   bridge's user agent)                 older than OrphanGrace, or by the GC with the
//	  io/media-slot)                                                         VM; its data is written by import pods only
//	DataVolume <claim> (CDI method;   media's reconciler: created, never   ownerReference (not controller) to the VM;
//	  labels as above and redfish-      updated (as above); CDI writes its   deleted once its slot does not hold it Ready
//	  bridge.io/insert-id; annotation   status and creates its PVC (same     (a failed import, eject, re-insert), as
//	  cdi.kubevirt.io/storage.delete-   name, controller: the DataVolume)    orphans (as above) or by the GC with the VM
//	  AfterCompletion false)
//	import pod <claim>-<insertID>     media's reconciler: created, never   ownerReference (not controller) to the VM;
//	  (labels component importer,       updated (as above; kubelet writes    deleted when its import ends or times out, on
//	  part-of, media-slot, insert-id)   its status)                          eject, when its slot holds another insert, as
//	                                                                         orphans (as above) or by the GC with the VM
//	import Secret (credentials) and   media's Service (InsertMedia):       ownerReference (not controller) to the VM;
//	  ConfigMap (CAs) <claim>-          created, never updated, field        deleted before the import is recorded as over
//	  <insertID> (labels component      manager "redfish-media"              (imported, failed, refused, timed out), on
//	  import-secret, part-of, media-                                         eject, when the insert is not recorded, or by
//	  slot, insert-id)                                                       the GC with the VM
//	trust ConfigMap <claim>-tls (a    media's Service (a Redfish edit of   ownerReference (not controller) to the VM;
//	  slot's Certificates and Verify-   the slot's Certificates or           never deleted by the bridge (it outlives
//	  Certificate; labels component     VerifyCertificate): created and      ejects and inserts): the GC deletes it with
//	  media-tls, part-of, media-slot)   updated, field manager               the VM
//	                                    "redfish-media"
//	image cache entry: PVC            media's reconciler: created, never   ownerReference (not controller) to the VM whose
//	  redfish-image-<key> (labels       updated (a create without a          insert created it; deleted by the GC with that
//	  component image-cache, part-of    fieldManager: the apiserver records  VM or the namespace, or by the reconciler when
//	  redfish-bridge; annotation        the manager "redfish-bridge", the    too small (pvc-protection keeps it while an
//	  redfish-bridge.io/image-cache-    bridge's user agent)                 import pod reads it); its data (disk.img,
//	  key)                                                                   meta.json) is written by import pods only
//	CDI image cache entry: DataVolume media's reconciler: created, never   ownerReference (not controller) to the VM whose
//	  redfish-image-<key>-<version>     updated (as above); CDI writes its   insert created it; deleted by the GC with that
//	  (labels as above; annotations     status and creates its PVC (same     VM or the namespace, or by the reconciler for
//	  the key, redfish-bridge.io/       name, controller: the DataVolume)    the budget (never while a clone reads it or it
//	  image-cache-validators)                                                imports) or to retry a failed import
//	  and its ConfigMap <name>-ca       media's reconciler: created, never   the same VM; deleted with the entry
//	  (the insert's CAs, when any)      updated
//	check pod <claim>-<insertID>-check media's reconciler: created          ownerReference to the VM; deleted when the
//	  (import --head-only; label        (kubelet writes its status)          insert ends, is ejected or re-inserted
//	  redfish-bridge.io/image-check)
//
// `redfish-bridge cache prune` (media.PruneCache; the chart's pre-delete
// hook) deletes image cache entries too: it writes none of their fields.
//
// # What KubeVirt itself writes on the VM
//
// virt-controller v1.9.0 (the first three measured in the test cluster,
// harness/sim/node_test.go; the fourth read in its pkg/virt-controller/watch/vm)
// writes the VM's spec and metadata too, under the field manager
// "virt-controller" (operation Update, not Apply), none of it a field of
// the table above:
//
//   - its first sync of every VM PUTs the typed VM back to add the
//     annotations kubevirt.io/latest-observed-api-version and
//     kubevirt.io/storage-observed-api-version; the typed round trip
//     serializes the struct T.domain.resources as {}, so virt-controller
//     owns T.domain.resources (an empty map) from then on; the VM's
//     generation moves;
//   - it adds the finalizer kubevirt.io/virtualMachineControllerFinalize;
//   - it persists T.domain.firmware.uuid (JSON patch) when the template
//     has none (a VM virt-api's mutator did not default, below): uuid v5
//     of the VM's NAME only (two VMs of one name in two namespaces get the
//     same UUID); before that write the bridge shows the same UUID
//     (kubevirt.LegacyFirmwareUUID), so a VM's Redfish UUID is its guest's
//     SMBIOS UUID from creation on and never changes;
//   - on a Start request against a Halted VM without a VMI it PUTs
//     spec.runStrategy Always (spec.running true for the deprecated field),
//     taking spec.runStrategy from redfish-power (which forces it back on
//     its next power write; power-off withdraws a pending Start for this
//     reason).
//
// virt-api v1.9.0's admission webhooks (measured with testcluster's
// Options.VirtAPI: TestVirtAPI here, sim's TestNodeSideVirtAPI):
//
//   - its VM mutator replaces the whole spec and metadata of every VM
//     create and update it admits, the bridge's applies included, with
//     defaults filled in: T.architecture (amd64) and T.domain.machine.type
//     (q35) when missing, and on create only T.domain.firmware.uuid
//     (random) and T.domain.firmware.serial. The apiserver records no
//     field manager for a mutating webhook's changes: these fields belong
//     to nobody, not the VM's creator and not redfish-boot when its apply
//     triggered the defaults on an older VM, so no apply of the bridge
//     removes or conflicts on them and [Owned] never lists them. With
//     virt-api a VM's firmware UUID is the random one from its creation;
//     virt-controller's uuid v5 applies only to VMs its mutator never saw;
//   - its VM validator rejects a template disk that is not a CD-ROM
//     without a volume of its name ("spec.template.spec.domain.devices.
//     disks[i].Name 'x' not found."), so the map-mode orphan
//     {name: media-<slot>, bootOrder} is an admission error; it admits a
//     CD-ROM without a volume (an empty drive: DeclarativeHotplugVolumes,
//     Beta, on by default) and rebootPolicy (RebootPolicy, Beta);
//   - its VMI mutator reverts VMI status changes by anyone but KubeVirt's
//     service accounts (the write still answers 200); the bridge never
//     writes a VMI.
//
// status.observedGeneration is the generation the running VMI was started
// from, so after these writes it stays below metadata.generation until the
// next restart; the bridge does not read it.
//
// # State change requests
//
// Under runStrategy RerunOnFailure virt-controller starts a VMI only when the
// strategy just changed or on a Start request in status.stateChangeRequests,
// and it acts on the first request only. So, like virt-api's start and
// restart subresources, power-on appends Start (when the VM was not already
// on), a restart appends Stop(uid of the running VMI) + Start, and power-off
// withdraws a pending Start (a Start on a Halted VM would make virt-controller
// switch it to Always). [Client.StateChange] applies the list to the status
// subresource: preconditioned, forced (virt-controller owns the list after it
// removed an entry it handled), computed from the list read, so nobody's
// request is lost.
//
// virt-api writes the list too, when power's ForceOff and ForceRestart call
// its stop and restart subresources (package virtapi): a JSON patch of the
// status subresource under virt-api's own field manager (operation Update)
// that tests the list read, then replaces it with Stop(uid) (stop) or adds
// Stop(uid)+Start to an empty list (restart). That write owns the list
// until the next redfish-power apply forces it back; neither side loses a
// request (virt-api's test op, the bridge's precondition).
//
// # Preconditions, force and retries
//
// An apply body that carries metadata.resourceVersion is a precondition: the
// apiserver answers 409 if the VM changed since the read, even with force.
//
//   - Every apply carries the precondition: all redfish-media and
//     redfish-boot applies (state machine transitions, the boot-order
//     rewrite that numbers every disk it saw) and all redfish-power applies
//     (power-on checked that no import is in flight and that the boot order
//     is settled; an empty RunStrategy re-sends the value read). On 409 the
//     whole read-decide-apply step is retried from a live read with bounded,
//     jittered exponential backoff (Options.Backoff, MaxAttempts). An SSA
//     field-manager conflict (only possible for media in map mode, which
//     does not force) is returned, not retried. The race suite's negative
//     control strips the precondition outside the Writer, in the client it
//     applies through (harness/testutil.WithoutPrecondition).
//   - Reads come from the informer cache; after a 409, and when the cache
//     says NotFound (a VM created a moment ago), from a live GET. A cached
//     VM whose resourceVersion is exactly one this Client's own apply
//     replaced is provably behind: the object that apply returned is used
//     instead (apply/recent.go; equality only, versions are opaque; any
//     other cached version is trusted, so an outside write is never hidden).
//     The inventory's cached VMs carry no managedFields (trimmed to save
//     memory, inventory/trim.go); ownership decisions (owns, [ValidateLegacy])
//     read the managedFields the inventory kept aside for exactly the cached
//     version ([TrimmedCache]), and read live when it has none for it;
//     [ValidateLegacy]'s answer is kept beside them, once per version
//     ([DecisionCache]). [Owned] is for live objects only.
//   - Read-your-own-write for the next reader: [Client.AwaitVersion] (and
//     [Client.Await] for any condition on the read) returns once a read
//     shows the write or newer, bounded by [CacheWait]; it reads again only
//     when the cache reports a change of that VM ([Notifier]:
//     inventory.Inventory.Changed, fed by the informers' events), never
//     polls. backend/ waits so before answering a Redfish write.
//   - Force: redfish-boot forces (bootOrder and bootloader usually belong to
//     the VM's author, and the Redfish client has explicitly asked to change
//     exactly those fields; force takes a value, it never removes another
//     manager's field: an author's firmware.bootloader.efi survives any
//     apply and KubeVirt boots UEFI while it is set, so Legacy has it
//     removed first by the one non-apply write of redfish-boot, a merge
//     patch preconditioned like an apply ([ValidateLegacy],
//     [ErrForeignEFI]; refused while that efi boots Secure Boot); what the
//     VM boots is read from the spec alone ([Firmware])); redfish-power forces spec.runStrategy (the VM's
//     author and virt-api own it; the Redfish power request is the authority
//     on power). redfish-media never forces in map mode: its entries are its
//     own, and a conflict there means someone else edited the bridge's
//     CD-ROM, which is reported, not overwritten. In atomic mode every
//     manager that writes a list forces, because the only way to change one
//     entry of an atomic list is to take the whole list; the precondition
//     guarantees the list written is the one just read plus this concern's
//     change, so nobody's concurrent edit is lost.
//
// # Shared elements (map mode)
//
// redfish-boot owns bootOrder on media-<slot> disks. A CD slot's drive
// stays (empty) when its slot detaches, so its bootOrder stays with it.
// When a media change detaches a USB stick's or the HttpBootUri slot's
// disk carrying a boot-owned bootOrder, [Client.Media]
// first re-applies redfish-boot's layout without that disk (preconditioned),
// then the media intent preconditioned on the result: no orphan
// {name: media-<slot>, bootOrder: N} is left (KubeVirt would reject it as a
// disk without a volume). [Client.Relayout] re-applies the layout when disks
// changed under a pending override (a CD-ROM inserted after a Cd override).
// An author's disk removed while redfish-boot owns its bootOrder has the
// same problem and is NOT handled (the bridge cannot see the author's intent).
//
// # List mode
//
// [DetectMode] reads the installed VirtualMachine CRD: if
// T.domain.devices.disks and T.volumes declare x-kubernetes-list-type: map
// keyed by name, the bridge runs in map mode, otherwise atomic mode.
package apply
