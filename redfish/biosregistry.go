package redfish

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
)

// The Bios attributes are described by the bridge's own attribute
// registry: the Bios names it (AttributeRegistry), the Registries
// collection lists it beside the Base message registry, and its file is
// served at the Location the MessageRegistryFile gives. Ironic reads it
// (sushy's Bios.get_attribute_registry) into each BIOS setting's
// attribute_type, allowable_values, read_only and reset_required.

const (
	biosRegistryID      = "RedfishBridgeBios.1.0.0"
	biosRegistryVersion = "1.0.0"
	resetBiosAction     = "Bios.ResetBios"
	resetBiosActionInfo = "ResetBiosActionInfo"
)

// biosRegistryAttributes are the registry's entries, one per attribute
// [biosAttributes] shows. CurrentValue is null: the registry is one for
// every system, each Bios resource holds its own values.
var biosRegistryAttributes = []obj{
	{
		"AttributeName": "BootMode",
		"DisplayName":   "Boot Mode",
		"HelpText": "The firmware the VirtualMachine boots: Uefi (KubeVirt's OVMF, spec.template.spec.domain.firmware.bootloader.efi) " +
			"or Bios (SeaBIOS, firmware.bootloader.bios). Written to the VirtualMachine at once, it takes effect at the next start " +
			"(a reset or a power on). Bios is refused while SecureBoot is Enabled: disable SecureBoot first.",
		"Type":          "Enumeration",
		"Value":         []obj{{"ValueName": "Uefi", "ValueDisplayName": "UEFI (OVMF)"}, {"ValueName": "Bios", "ValueDisplayName": "Legacy BIOS (SeaBIOS)"}},
		"CurrentValue":  nil,
		"ReadOnly":      false,
		"ResetRequired": true,
		"Immutable":     false,
	},
	{
		"AttributeName": "SecureBoot",
		"DisplayName":   "Secure Boot",
		"HelpText": "UEFI Secure Boot of the VirtualMachine's OVMF (firmware.bootloader.efi.secureBoot, with features.smm.enabled, " +
			"which KubeVirt's Secure Boot needs). Exists only under BootMode Uefi: Enabled is refused under Bios. " +
			"Takes effect at the next start.",
		"Type":          "Enumeration",
		"Value":         []obj{{"ValueName": "Enabled", "ValueDisplayName": "Enabled"}, {"ValueName": "Disabled", "ValueDisplayName": "Disabled"}},
		"CurrentValue":  nil,
		"ReadOnly":      false,
		"ResetRequired": true,
		"Immutable":     false,
	},
}

// biosRegistryURI is the MessageRegistryFile of the attribute registry.
const biosRegistryURI = registriesURI + "/" + biosRegistryID

// biosRegistryJSON is the attribute registry file (built once: it is the
// same for every system and request).
var biosRegistryJSON = func() []byte {
	raw, err := json.Marshal(obj{
		"@odata.type":     "#AttributeRegistry.v1_3_9.AttributeRegistry",
		"Id":              biosRegistryID,
		"Name":            "KubeVirt VirtualMachine BIOS Attribute Registry",
		"Description":     "The BIOS attributes of a KubeVirt VirtualMachine served by redfish-bridge: its firmware type and UEFI Secure Boot.",
		"Language":        "en",
		"OwningEntity":    "redfish-bridge",
		"RegistryVersion": biosRegistryVersion,
		"SupportedSystems": []obj{{
			"ProductName": "KubeVirt VirtualMachine",
			"SystemId":    "KubeVirt",
		}},
		"RegistryEntries": obj{"Attributes": biosRegistryAttributes},
	})
	if err != nil {
		panic(fmt.Sprintf("encode the bios attribute registry: %v", err))
	}
	return raw
}()

// registryFile is the MessageRegistryFile of the registry id.
func registryFile(id, name string) obj {
	uri := registriesURI + "/" + id
	return obj{
		"@odata.id":   uri,
		"@odata.type": "#MessageRegistryFile.v1_1_3.MessageRegistryFile",
		"Id":          id,
		"Name":        name,
		"Registry":    id,
		"Languages":   []string{"en"},
		"Location":    []obj{{"Language": "en", "Uri": uri + "/" + id + ".json"}},
	}
}

// biosActions is the Actions object of the Bios at uri.
func biosActions(uri string) obj {
	return obj{"#" + resetBiosAction: obj{
		"target":              uri + "/Actions/" + resetBiosAction,
		"@Redfish.ActionInfo": uri + "/" + resetBiosActionInfo,
	}}
}

func (s *Server) getResetBiosActionInfo(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	return send(c, http.StatusOK, obj{
		"@odata.id":   systemURI(v) + "/Bios/" + resetBiosActionInfo,
		"@odata.type": "#ActionInfo.v1_5_0.ActionInfo",
		"Id":          resetBiosActionInfo,
		"Name":        "Reset BIOS Action Info",
		"Parameters":  []obj{},
	})
}

// resetBios is Bios.ResetBios: the VM's default BIOS settings are the
// firmware its author wrote (or KubeVirt's default where none), so the
// bridge releases the firmware fields it wrote (BootMode, SecureBoot) and
// the next start boots that default. The pending settings (the VM spec)
// show it at once. The action has no parameters; an empty body or {} is
// accepted (sushy sends either).
func (s *Server) resetBios(c echo.Context) error {
	v, err := s.parameterless(c, resetBiosAction)
	if err != nil {
		return err
	}
	if err := s.b.Boot.ResetFirmware(c.Request().Context(), v.Key); err != nil {
		return fmt.Errorf("reset bios of %s: %w", v.Key, err)
	}
	return c.NoContent(http.StatusNoContent)
}

// parameterless is the System of an action that takes no parameters
// (ResetBios, ClearLog): an empty body or {} is accepted (sushy sends
// either), any parameter refused as the action's others are.
func (s *Server) parameterless(c echo.Context, action string) (SystemView, error) {
	v, err := s.system(c)
	if err != nil {
		return SystemView{}, err
	}
	body, err := readBody(c)
	if err != nil {
		return SystemView{}, err
	}
	p := newParams(c, action, body)
	p.done(nil)
	if err := p.err(); err != nil {
		return SystemView{}, err
	}
	return v, nil
}
