package fields

import (
	"regexp"
	"slices"
	"strings"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/ipmi"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// Paths as fieldpath renders them (Path.String: ".a.b", list elements
// `[name="x"]`), quoted for regular expressions and taken from KubeVirt's
// API types (package kubevirt) and apply's contract, never spelled here.
var (
	disks   = quote(kubevirt.Disks)
	ifaces  = quote(kubevirt.Interfaces)
	volumes = quote(kubevirt.Volumes)
	annots  = quote(kubevirt.Annotations) + `\.`
	loader  = quote(kubevirt.Bootloader) + `\.(` + kubevirt.KeyEFI + `|` + kubevirt.KeyBIOS + `)(\..+)?`
	smm     = quote(kubevirt.SMM.Child(kubevirt.KeyEnabled))
	reboot  = quote(kubevirt.RebootPolicy)
	run     = quote(kubevirt.RunStrategy)
	// stateRequests is in the status subresource (an atomic list).
	stateRequests = quote(kubevirt.StateChangeRequests)
	named         = `\[` + kubevirt.KeyName + `="[^"]+"\]`
	media         = `\[` + kubevirt.KeyName + `="` + regexp.QuoteMeta(apply.DiskPrefix) + `[^"]+"\]`

	mediaAnnotation = annots + regexp.QuoteMeta(apply.AnnotationMediaPrefix) + `.+`
	bootAnnotation  = annots + regexp.QuoteMeta(apply.AnnotationBoot)
	powerAnnotation = annots + regexp.QuoteMeta(apply.AnnotationPower)
	protoAnnotation = annots + regexp.QuoteMeta(apply.AnnotationProtocols)
	// annotationDomain is the bridge's annotations' prefix (before "/").
	annotationDomain, _, _ = strings.Cut(apply.AnnotationBoot, "/")
	// The fields of a media disk (a CD-ROM, or a usb disk) and volume.
	mediaDiskLeaves   = leaves(kubevirt.KeyName, kubevirt.KeyCDROM+"."+kubevirt.KeyBus, kubevirt.KeyCDROM+"."+kubevirt.KeyReadOnly, kubevirt.KeyDisk+"."+kubevirt.KeyBus, kubevirt.KeyDisk+"."+kubevirt.KeyReadOnly)
	mediaVolumeLeaves = leaves(kubevirt.KeyName, kubevirt.VolumeClaim.String(), kubevirt.VolumeClaimHotpluggable.String())
	ordered           = leaves(kubevirt.KeyName, kubevirt.KeyBootOrder)
)

// quote is p's fieldpath rendering as a regular expression.
func quote(p kubevirt.Path) string { return regexp.QuoteMeta("." + p.String()) }

// leaves matches the element itself or one of the dotted leaf paths in it.
func leaves(paths ...string) string {
	q := make([]string, len(paths))
	for i, p := range paths {
		q[i] = regexp.QuoteMeta("." + p)
	}
	return `(` + strings.Join(q, `|`) + `)?`
}

// Table is apply/doc.go's ownership table: per list mode, per bridge
// manager, the leaf paths (regular expressions over fieldpath.Path
// strings, anchored) the manager may own.
var Table = map[apply.Mode]map[string][]*regexp.Regexp{
	apply.ModeMap: {
		apply.ManagerMedia: compile(
			mediaAnnotation,
			disks+media+mediaDiskLeaves,
			volumes+media+mediaVolumeLeaves,
		),
		apply.ManagerBoot: compile(
			bootAnnotation,
			disks+named+ordered,
			ifaces+named+ordered,
			loader,
			smm,
			reboot,
		),
		apply.ManagerPower: compile(
			powerAnnotation,
			run,
			stateRequests,
		),
		apply.ManagerProtocols: compile(
			protoAnnotation,
		),
	},
	apply.ModeAtomic: {
		apply.ManagerMedia: compile(
			mediaAnnotation,
			disks,
			volumes,
		),
		apply.ManagerBoot: compile(
			bootAnnotation,
			disks,
			ifaces,
			loader,
			smm,
			reboot,
		),
		apply.ManagerPower: compile(
			powerAnnotation,
			run,
			stateRequests,
		),
		apply.ManagerProtocols: compile(
			protoAnnotation,
		),
	},
}

// IsBridge reports whether manager is one of the bridge's field managers.
func IsBridge(manager string) bool { return slices.Contains(apply.Managers, manager) }

// Allowed reports whether the bridge manager may own path in mode.
func Allowed(mode apply.Mode, manager, path string) bool {
	for _, re := range Table[mode][manager] {
		if re.MatchString(path) {
			return true
		}
	}
	return false
}

func compile(exprs ...string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(exprs))
	for i, e := range exprs {
		out[i] = regexp.MustCompile(`^` + e + `$`)
	}
	return out
}

// Patterns used by the "taken" checks.
var (
	bridgeAnnotation = regexp.MustCompile(`^` + annots + regexp.QuoteMeta(annotationDomain) + `/.+$`)
	// authorAnnotation is the one redfish-bridge.io/ annotation the VM's
	// author writes and the bridge only reads: the System's IPMI port.
	authorAnnotation = regexp.MustCompile(`^` + annots + regexp.QuoteMeta(ipmi.PortAnnotation) + `$`)
	mediaElement     = regexp.MustCompile(`^(` + disks + `|` + volumes + `)\[` + kubevirt.KeyName + `="` + regexp.QuoteMeta(apply.DiskPrefix) + `([^"]+)"\]`)
	bootOrder        = regexp.MustCompile(`^(` + disks + `|` + ifaces + `)` + named + regexp.QuoteMeta("."+kubevirt.KeyBootOrder) + `$`)
	runStrategy      = regexp.MustCompile(`^` + run + `$`)
	keyedDisks       = regexp.MustCompile(`^(` + disks + `|` + volumes + `)\[`)
	wholeDisks       = regexp.MustCompile(`^(` + disks + `|` + volumes + `)$`)
)
