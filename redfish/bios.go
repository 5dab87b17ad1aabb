package redfish

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// BIOS attributes are the two firmware settings a VM has: boot mode and
// Secure Boot. Changes are written to the VM spec at once and take effect at
// the next boot (KubeVirt applies firmware changes on restart), which is
// Redfish's OnReset apply time. So the Bios resource shows what the running
// system booted (its VMI's firmware) and its @Redfish.Settings object, the
// Settings resource, what the next boot uses (the VM spec): the pending
// values. With no VMI nothing booted and nothing is pending: both show the
// spec, which the next power-on boots.

var (
	biosBootModes = map[system.BootMode]string{system.BootUEFI: "Uefi", system.BootLegacy: "Bios"}
	onOff         = map[bool]string{true: "Enabled", false: "Disabled"}
)

// biosAttributes are the attributes of firmware f.
func biosAttributes(f Firmware) obj {
	attrs := obj{"SecureBoot": onOff[f.SecureBoot]}
	if m, ok := biosBootModes[f.Mode]; ok {
		attrs["BootMode"] = m
	}
	return attrs
}

// nextBoot is the firmware v's next boot uses: its spec.
func nextBoot(v SystemView) Firmware { return Firmware{Mode: v.BootMode, SecureBoot: v.SecureBoot} }

// currentBoot is the firmware v booted, or (no VMI) the one it boots next.
func currentBoot(v SystemView) Firmware {
	if v.Booted != nil {
		return *v.Booted
	}
	return nextBoot(v)
}

func (s *Server) getBios(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	uri := systemURI(v) + "/Bios"
	return send(c, http.StatusOK, obj{
		"@odata.id":   uri,
		"@odata.type": "#Bios.v1_2_3.Bios",
		"Id":          "Bios",
		"Name":        "BIOS Configuration",
		// What the attributes mean, their types and values: the
		// registry (biosregistry.go).
		"AttributeRegistry": biosRegistryID,
		"Attributes":        biosAttributes(currentBoot(v)),
		"Actions":           biosActions(uri),
		"@Redfish.Settings": obj{
			"@odata.type":         "#Settings.v1_4_0.Settings",
			"SettingsObject":      link(uri + "/Settings"),
			"SupportedApplyTimes": []string{"OnReset"},
			"ETag":                etag(bodyVersion(renderBiosSettings(v))),
		},
	})
}

// renderBiosSettings is the Settings object of the Bios: the pending
// values, those the next boot uses.
func renderBiosSettings(v SystemView) obj {
	return obj{
		"@odata.id":   systemURI(v) + "/Bios/Settings",
		"@odata.type": "#Bios.v1_2_3.Bios",
		"Id":          "Settings",
		"Name":        "BIOS Pending Settings",
		"Attributes":  biosAttributes(nextBoot(v)),
		// BootMode and SecureBoot, the attributes there are
		writeableProperties: []string{"Attributes"},
	}
}

func (s *Server) getBiosSettings(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	return send(c, http.StatusOK, renderBiosSettings(v))
}

func (s *Server) patchBiosSettings(c echo.Context) error {
	v, body, err := s.patchTarget(c, renderBiosSettings)
	if err != nil {
		return err
	}
	p := newProps(body)
	var patch system.BootPatch
	var secure *bool
	if a, ok := p.object("Attributes"); ok {
		if m, ok := a.str("BootMode", []string{"Uefi", "Bios"}); ok {
			for mode, name := range biosBootModes {
				if name == m {
					patch.Mode = new(mode)
				}
			}
		}
		if sb, ok := a.str("SecureBoot", []string{"Enabled", "Disabled"}); ok {
			secure = new(sb == "Enabled")
		}
		a.done(nil)
	}
	p.done(obj{"Id": nil, "Name": nil})
	if err := p.err(); err != nil {
		return err
	}
	ctx := c.Request().Context()
	// Secure Boot exists only under UEFI: turn it off before a switch to
	// Bios, turn it on after a switch to Uefi. If-Match was checked once,
	// against the Bios settings as they were before the first write.
	disableFirst := secure != nil && !*secure
	if disableFirst {
		if err := s.setBiosSecureBoot(c, v.Key, false); err != nil {
			return err
		}
	}
	if patch.Mode != nil {
		if err := s.b.Boot.SetBoot(ctx, v.Key, patch); err != nil {
			return fmt.Errorf("set boot mode of %s: %w", v.Key, asAttribute(err, "BootMode", biosBootModes[*patch.Mode]))
		}
	}
	if secure != nil && !disableFirst {
		if err := s.setBiosSecureBoot(c, v.Key, true); err != nil {
			return err
		}
	}
	return c.NoContent(http.StatusNoContent)
}

// setBiosSecureBoot sets Secure Boot for the Bios attribute.
func (s *Server) setBiosSecureBoot(c echo.Context, key system.Key, enable bool) error {
	if err := s.b.Boot.SetSecureBoot(c.Request().Context(), key, enable); err != nil {
		return fmt.Errorf("set secure boot of %s: %w", key, asAttribute(err, "SecureBoot", onOff[enable]))
	}
	return nil
}

// biosAttributeOf names the Bios attribute of a property the backend
// names.
var biosAttributeOf = map[string]string{
	"SecureBootEnable": "Attributes/SecureBoot", "BootSourceOverrideMode": "Attributes/BootMode",
}

// asAttribute reports a value the backend refused against the Bios
// attribute name (Related #/Attributes/<name>), not the property of the
// resource the backend names.
func asAttribute(err error, name, value string) error {
	if refused, ok := errors.AsType[*RefusedValueError](err); ok {
		other := biosAttributeOf[refused.ConflictsWith]
		return fmt.Errorf("%w: %w", &RefusedValueError{Property: "Attributes/" + name, Value: value, ConflictsWith: other, Resolution: refused.Resolution}, err)
	}
	if bad, ok := errors.AsType[*BadValueError](err); ok {
		return fmt.Errorf("%w: %w", &BadValueError{Property: "Attributes/" + name, Value: value, Reason: bad.Reason}, err)
	}
	return err
}

// renderSecureBoot shows SecureBootEnable as set for the next boot and
// SecureBootCurrentBoot as the running system booted (null with no VMI: no
// boot is current).
func (s *Server) renderSecureBoot(v SystemView) obj {
	var current any
	if v.Booted != nil {
		current = onOff[v.Booted.SecureBoot]
	}
	return obj{
		"@odata.id":             systemURI(v) + "/SecureBoot",
		"@odata.type":           "#SecureBoot.v1_1_2.SecureBoot",
		"Id":                    "SecureBoot",
		"Name":                  "UEFI Secure Boot",
		"SecureBootEnable":      v.SecureBoot,
		"SecureBootCurrentBoot": current,
		"SecureBootMode":        "DeployedMode",
		writeableProperties:     []string{"SecureBootEnable"},
	}
}

func (s *Server) getSecureBoot(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	return send(c, http.StatusOK, s.renderSecureBoot(v))
}

func (s *Server) patchSecureBoot(c echo.Context) error {
	v, body, err := s.patchTarget(c, s.renderSecureBoot)
	if err != nil {
		return err
	}
	p := newProps(body)
	enable, ok := p.boolean("SecureBootEnable")
	p.done(s.renderSecureBoot(v))
	if err := p.err(); err != nil {
		return err
	}
	if ok {
		if err := s.b.Boot.SetSecureBoot(c.Request().Context(), v.Key, enable); err != nil {
			return fmt.Errorf("set secure boot of %s: %w", v.Key, err)
		}
	}
	return c.NoContent(http.StatusNoContent)
}
