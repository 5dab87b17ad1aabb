package redfish

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/system"
)

const (
	systemsURI  = "/redfish/v1/Systems"
	resetAction = "ComputerSystem.Reset"
)

func systemURI(v SystemView) string  { return systemsURI + "/" + v.Key.ID() }
func managerURI(v SystemView) string { return managersURI + "/" + v.Key.ID() }
func chassisURI(v SystemView) string { return chassisCollURI + "/" + v.Key.ID() }

func (s *Server) listSystems(c echo.Context) error {
	return s.sendMembers(c, systemsURI, "#ComputerSystemCollection.ComputerSystemCollection", "Computer System Collection")
}

// getSystem answers the body kept for the system's revision
// (systembodies.go) when there is one, else renders it and keeps it. A
// query (?pretty, a refused $top) is rendered afresh, never kept.
func (s *Server) getSystem(c echo.Context) error {
	if c.QueryString() != "" {
		v, err := s.system(c)
		if err != nil {
			return err
		}
		return send(c, http.StatusOK, s.renderSystem(v))
	}
	key, scope, err := systemKey(c)
	if err != nil {
		return err
	}
	if e, ok := s.systemBodies.get(key, s.b.Systems.Revision(key)); ok {
		if !scope.Allows(key, e.labels) {
			return errOutOfScope(key)
		}
		return sendEncoded(c, http.StatusOK, systemType, e.body, e.version)
	}
	v, err := s.systemInScope(c, key, scope)
	if errors.Is(err, ErrNotFound) {
		s.systemBodies.drop(key)
	}
	if err != nil {
		return err
	}
	body, version, err := encodeResource(s.renderSystem(v), false)
	if err != nil {
		return fmt.Errorf("encode system %s: %w", key, err)
	}
	s.systemBodies.sweep(s.b.Systems.Membership(), func(k system.Key) bool { return s.b.Systems.Revision(k) != "" })
	s.systemBodies.put(key, systemBody{revision: v.Revision, labels: v.Labels, body: body, version: version})
	return sendEncoded(c, http.StatusOK, systemType, body, version)
}

// systemType is the ComputerSystem's @odata.type.
const systemType = "#ComputerSystem.v1_27_0.ComputerSystem"

// bootView is the Boot object as shown: the recorded override, and the mode
// the VM boots next (a mode just set reads back at once: the write changed
// the spec). Each AllowableValues lists what a PATCH of that property alone
// (UefiHttp with its HttpBootUri) accepts on this system now; BiosSetup is
// not a target (see [system.BootTargets]).
func bootView(v SystemView) obj {
	target, enabled, mode := v.Boot.Target, v.Boot.Enabled, v.BootMode
	modes := v.BootModes
	if modes == nil {
		modes = []system.BootMode{} // an empty list, not null
	}
	if target == "" {
		target = system.BootNone
	}
	if enabled == "" {
		enabled = system.BootDisabled
	}
	b := obj{
		"BootSourceOverrideTarget":                          target,
		"BootSourceOverrideTarget@Redfish.AllowableValues":  bootTargets(mode),
		"BootSourceOverrideEnabled":                         enabled,
		"BootSourceOverrideEnabled@Redfish.AllowableValues": system.BootEnableds,
		"BootSourceOverrideMode@Redfish.AllowableValues":    modes,
		"BootSourceOverrideMode":                            nil,
	}
	if mode != "" {
		b["BootSourceOverrideMode"] = mode
	}
	b["HttpBootUri"] = nil
	if v.Boot.HTTPBootURI != "" {
		b["HttpBootUri"] = v.Boot.HTTPBootURI
	}
	b["BootOrder"] = bootOrder(v) // read-only (bootoptions.go)
	b[writeableProperties] = bootWriteable
	b["BootOptions"] = link(systemURI(v) + "/BootOptions")
	return b
}

// bootWrites are the Boot properties a PATCH of the System writes
// (patchSystem), each with how it is read and checked into the patch: the
// one place a writable Boot property is accepted (its value shows in
// [bootView]; [system.BootPatch] carries it to power).
var bootWrites = []struct {
	name string
	read func(b *props, name string, patch *system.BootPatch)
}{
	{"BootSourceOverrideTarget", func(b *props, name string, patch *system.BootPatch) {
		if t, ok := b.str(name, strs(system.BootTargets)); ok {
			patch.Target = new(system.BootTarget(t))
		}
	}},
	{"BootSourceOverrideEnabled", func(b *props, name string, patch *system.BootPatch) {
		if e, ok := b.str(name, strs(system.BootEnableds)); ok {
			patch.Enabled = new(system.BootEnabled(e))
		}
	}},
	{"BootSourceOverrideMode", func(b *props, name string, patch *system.BootPatch) {
		if m, ok := b.str(name, strs(system.BootModes)); ok {
			patch.Mode = new(system.BootMode(m))
		}
	}},
	{"HttpBootUri", func(b *props, name string, patch *system.BootPatch) { patch.HTTPBootURI = httpBootURI(b, name) }},
}

// bootWriteable are the names of [bootWrites]: Boot's
// @Redfish.WriteableProperties.
var bootWriteable = func() []string {
	names := make([]string, len(bootWrites))
	for i, w := range bootWrites {
		names[i] = w.name
	}
	return names
}()

// writeableProperties is the annotation that lists, in an object, the
// properties of it that a PATCH writes (DSP0266 @Redfish.WriteableProperties):
// served exactly where they are writable, so that clients and the Interop
// Validator need not guess from the schema's ReadWrite permissions, which
// are wider than what a VM can change.
const writeableProperties = "@Redfish.WriteableProperties"

// renderSystem is the ComputerSystem of v. It may show only what
// v.Revision covers (not Disks' capacities, which come from PVCs; their
// names and bootOrders are the VM spec's): GETs serve it kept per revision.
func (s *Server) renderSystem(v SystemView) obj {
	uri := systemURI(v)
	cores := v.Sockets * v.Cores
	body := obj{
		"@odata.id":    uri,
		"@odata.type":  systemType,
		"Id":           v.Key.ID(),
		"Name":         v.Key.Name,
		"Description":  "KubeVirt VirtualMachine " + v.Key.String(),
		"SystemType":   "Virtual",
		"UUID":         v.UUID,
		"Manufacturer": "KubeVirt",
		"Model":        "VirtualMachine",
		"SerialNumber": v.UUID,
		"BiosVersion":  s.cfg.Version,
		"PowerState":   v.PowerState,
		"Status":       systemStatus(v),
		"BootProgress": bootProgress(v),
		"MemorySummary": obj{
			"TotalSystemMemoryGiB": float64(v.MemoryBytes) / (1 << 30),
			"Status":               statusOK(),
		},
		"ProcessorSummary": obj{
			"Count":                 v.Sockets,
			"CoreCount":             cores,
			"LogicalProcessorCount": cores * v.Threads,
			"Status":                statusOK(),
		},
		"Boot":               bootView(v),
		"Bios":               link(uri + "/Bios"),
		"SecureBoot":         link(uri + "/SecureBoot"),
		"Processors":         link(uri + "/Processors"),
		"Memory":             link(uri + "/Memory"),
		"EthernetInterfaces": link(uri + "/EthernetInterfaces"),
		"SimpleStorage":      link(uri + "/SimpleStorage"),
		"Storage":            link(uri + "/Storage"),
		"VirtualMedia":       link(uri + "/VirtualMedia"),
		"Links": obj{
			"ManagedBy": []obj{link(managerURI(v))},
			"Chassis":   []obj{link(chassisURI(v))},
		},
		"Actions": obj{"#" + resetAction: obj{
			"target":                            uri + "/Actions/" + resetAction,
			"ResetType@Redfish.AllowableValues": system.ResetTypes,
			"@Redfish.ActionInfo":               uri + "/ResetActionInfo",
		}},
	}
	if s.b.Logs != nil {
		body["LogServices"] = link(uri + "/LogServices")
	}
	return body
}

func (s *Server) getResetActionInfo(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	return send(c, http.StatusOK, obj{
		"@odata.id":   systemURI(v) + "/ResetActionInfo",
		"@odata.type": "#ActionInfo.v1_5_0.ActionInfo",
		"Id":          "ResetActionInfo",
		"Name":        "Reset Action Info",
		"Parameters": []obj{{
			"Name":            "ResetType",
			"Required":        true,
			"DataType":        "String",
			"AllowableValues": system.ResetTypes,
		}},
	})
}

// patchSystem merges a partial Boot into the override; other fields keep
// their values.
func (s *Server) patchSystem(c echo.Context) error {
	v, body, err := s.patchTarget(c, s.renderSystem)
	if err != nil {
		return err
	}
	var patch system.BootPatch
	p := newProps(body)
	if b, ok := p.object("Boot"); ok {
		for _, w := range bootWrites {
			w.read(b, w.name, &patch)
		}
		checkUefiHttp(b, v, patch)
		b.done(bootView(v))
	}
	p.done(s.renderSystem(v))
	if err := p.err(); err != nil {
		return err
	}
	if patch.Empty() {
		return c.NoContent(http.StatusNoContent)
	}
	if err := s.b.Boot.SetBoot(c.Request().Context(), v.Key, patch); err != nil {
		return fmt.Errorf("set boot of %s: %w", v.Key, err)
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) resetSystem(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	body, err := readBody(c)
	if err != nil {
		return err
	}
	p := newParams(c, resetAction, body)
	kind, ok := p.str("ResetType", strs(system.ResetTypes))
	p.require("ResetType", ok)
	p.done(nil)
	if err := p.err(); err != nil {
		return err
	}
	if err := s.b.Power.Reset(c.Request().Context(), v.Key, system.ResetType(kind)); err != nil {
		return fmt.Errorf("reset %s (%s): %w", v.Key, kind, err)
	}
	return c.NoContent(http.StatusNoContent)
}

// patchTarget is the common start of a PATCH of a system's resource: the
// system in scope, the request body, and If-Match checked against the
// ETag of the resource as render shows it now.
func (s *Server) patchTarget(c echo.Context, render func(SystemView) obj) (SystemView, map[string]json.RawMessage, error) {
	v, err := s.system(c)
	if err != nil {
		return SystemView{}, nil, err
	}
	body, err := requireBody(c)
	if err != nil {
		return SystemView{}, nil, err
	}
	if err := checkIfMatch(c, bodyVersion(render(v))); err != nil {
		return SystemView{}, nil, err
	}
	return v, body, nil
}
