package redfish

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// BIOS attributes are the two firmware settings a VM has: boot mode and
// Secure Boot. Changes are written to the VM spec at once and take effect at
// the next boot (KubeVirt applies firmware changes on restart), which is
// Redfish's OnReset apply time.

var (
	biosBootModes = map[system.BootMode]string{system.BootUEFI: "Uefi", system.BootLegacy: "Bios"}
	onOff         = map[bool]string{true: "Enabled", false: "Disabled"}
)

func biosAttributes(v SystemView) obj {
	mode := v.Boot.Mode
	if mode == "" {
		mode = v.BootMode
	}
	attrs := obj{"SecureBoot": onOff[v.SecureBoot]}
	if m, ok := biosBootModes[mode]; ok {
		attrs["BootMode"] = m
	}
	return attrs
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
		"Attributes":  biosAttributes(v),
		"@Redfish.Settings": obj{
			"@odata.type":         "#Settings.v1_4_0.Settings",
			"SettingsObject":      link(uri + "/Settings"),
			"SupportedApplyTimes": []string{"OnReset"},
			"ETag":                etag(bodyVersion(renderBiosSettings(v))),
		},
	}, v.Version)
}

// renderBiosSettings is the Settings object of the Bios (pending values;
// they are the current ones, applied at the next boot).
func renderBiosSettings(v SystemView) obj {
	return obj{
		"@odata.id":   systemURI(v) + "/Bios/Settings",
		"@odata.type": "#Bios.v1_2_3.Bios",
		"Id":          "Settings",
		"Name":        "BIOS Pending Settings",
		"Attributes":  biosAttributes(v),
	}
}

func (s *Server) getBiosSettings(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	return send(c, http.StatusOK, renderBiosSettings(v), v.Version)
}

func (s *Server) patchBiosSettings(c echo.Context) error {
	v, body, err := s.patchTarget(c, renderBiosSettings)
	if err != nil {
		return err
	}
	p := newProps(body)
	patch := BootPatch{IfVersion: ifMatchVersion(c, v.Version)}
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
	if patch.Mode != nil {
		if err := s.b.Boot.SetBoot(ctx, v.Key, patch); err != nil {
			return fmt.Errorf("set boot mode of %s: %w", v.Key, err)
		}
	}
	if secure != nil {
		if err := s.b.Boot.SetSecureBoot(ctx, v.Key, *secure); err != nil {
			return fmt.Errorf("set secure boot of %s: %w", v.Key, err)
		}
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) renderSecureBoot(v SystemView) obj {
	return obj{
		"@odata.id":             systemURI(v) + "/SecureBoot",
		"@odata.type":           "#SecureBoot.v1_1_2.SecureBoot",
		"Id":                    "SecureBoot",
		"Name":                  "UEFI Secure Boot",
		"SecureBootEnable":      v.SecureBoot,
		"SecureBootCurrentBoot": onOff[v.SecureBoot],
		"SecureBootMode":        "DeployedMode",
	}
}

func (s *Server) getSecureBoot(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	return send(c, http.StatusOK, s.renderSecureBoot(v), v.Version)
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
