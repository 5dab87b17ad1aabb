package fields

import (
	"regexp"

	"github.com/redfish-bridge/redfish-bridge/apply"
)

// Path prefixes as fieldpath renders them (Path.String).
const (
	tmpl    = `\.spec\.template\.spec`
	disks   = tmpl + `\.domain\.devices\.disks`
	ifaces  = tmpl + `\.domain\.devices\.interfaces`
	volumes = tmpl + `\.volumes`
	annots  = `\.metadata\.annotations\.`
	loader  = tmpl + `\.domain\.firmware\.bootloader\.(efi|bios)(\..+)?`
	smm     = tmpl + `\.domain\.features\.smm\.enabled`
	reboot  = tmpl + `\.domain\.rebootPolicy`
	// stateRequests is in the status subresource (an atomic list).
	stateRequests = `\.status\.stateChangeRequests`
	named         = `\[name="[^"]+"\]`
	media         = `\[name="media-[^"]+"\]`
)

// Table is apply/doc.go's ownership table: per list mode, per bridge
// manager, the leaf paths (regular expressions over fieldpath.Path
// strings, anchored) the manager may own.
var Table = map[apply.Mode]map[string][]*regexp.Regexp{
	apply.ModeMap: {
		apply.ManagerMedia: compile(
			annots+`redfish-bridge\.io/media\..+`,
			disks+media+`(\.name|\.cdrom\.bus|\.cdrom\.readonly|\.disk\.bus|\.disk\.readonly)?`,
			volumes+media+`(\.name|\.persistentVolumeClaim\.claimName)?`,
		),
		apply.ManagerBoot: compile(
			annots+`redfish-bridge\.io/boot`,
			disks+named+`(\.name|\.bootOrder)?`,
			ifaces+named+`(\.name|\.bootOrder)?`,
			loader,
			smm,
			reboot,
		),
		apply.ManagerPower: compile(
			annots+`redfish-bridge\.io/power`,
			`\.spec\.runStrategy`,
			stateRequests,
		),
	},
	apply.ModeAtomic: {
		apply.ManagerMedia: compile(
			annots+`redfish-bridge\.io/media\..+`,
			disks,
			volumes,
		),
		apply.ManagerBoot: compile(
			annots+`redfish-bridge\.io/boot`,
			disks,
			ifaces,
			loader,
			smm,
			reboot,
		),
		apply.ManagerPower: compile(
			annots+`redfish-bridge\.io/power`,
			`\.spec\.runStrategy`,
			stateRequests,
		),
	},
}

// IsBridge reports whether manager is one of the bridge's field managers.
func IsBridge(manager string) bool {
	switch manager {
	case apply.ManagerMedia, apply.ManagerBoot, apply.ManagerPower:
		return true
	}
	return false
}

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
	bridgeAnnotation = regexp.MustCompile(`^` + annots + `redfish-bridge\.io/.+$`)
	mediaElement     = regexp.MustCompile(`^(` + disks + `|` + volumes + `)\[name="media-([^"]+)"\]`)
	bootOrder        = regexp.MustCompile(`^(` + disks + `|` + ifaces + `)` + named + `\.bootOrder$`)
	runStrategy      = regexp.MustCompile(`^\.spec\.runStrategy$`)
	keyedDisks       = regexp.MustCompile(`^(` + disks + `|` + volumes + `)\[`)
	wholeDisks       = regexp.MustCompile(`^(` + disks + `|` + volumes + `)$`)
)
