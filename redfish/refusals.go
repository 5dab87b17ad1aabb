package redfish

import "strings"

// A refusal names the property and the value sent (MessageArgs,
// RelatedProperties) and says why in its Resolution, where the bridge
// knows more than the Base registry's generic resolution.

// whyNotInList says why a Redfish value the bridge does not accept is not
// one of its values, by property and value ("" value: any value).
var whyNotInList = map[[2]string]string{
	{"BootSourceOverrideTarget", "BiosSetup"}: "Entering the firmware setup menu is not supported: KubeVirt has no switch for it, and OVMF opens it only on a key press at the console.",
	{"ResetType", "Nmi"}:                      "KubeVirt cannot inject an NMI into a VM.",
	{"TransferProtocolType", ""}:              "The bridge fetches the image itself from its HTTP or HTTPS URL.",
	{"TransferMethod", ""}:                    "The bridge streams the image from its URL; a client does not upload it.",
}

// notInList is PropertyValueNotInList for value of name (at pointer
// path+name), its Resolution the values name accepts, and why value is not
// one of them when the bridge knows.
func notInList(path, name, value string, allowed []string) Message {
	m := msg("PropertyValueNotInList", []string{path + name}, value, name)
	why, ok := whyNotInList[[2]string{name, value}]
	if !ok {
		why = whyNotInList[[2]string{name, ""}]
	}
	use := name + " accepts " + strings.Join(allowed, ", ") + "."
	if why != "" {
		use = why + " " + use
	}
	m.Resolution = use
	return m
}

// badValueResolution is the Resolution of a [BadValueError]: why the value
// is refused, or "" (the registry's) when the error does not say.
func badValueResolution(bad *BadValueError) string {
	if bad.Reason == "" {
		return ""
	}
	return "The value of " + bad.Property + " is refused: " + strings.TrimSuffix(bad.Reason, ".") + "."
}

// Resolutions of refusals the service decides where the request enters.
const (
	resolveURLFormat  = "Send an absolute http or https URL with a host."
	resolveInsertTrue = "InsertMedia always inserts the image, write-protected (a VM's virtual CD or USB stick is read-only): send true or leave the parameter out."
	resolveCredPair   = "UserName and Password are the image server's Basic credentials: send both, or neither."
)
