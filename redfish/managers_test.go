package redfish

import "testing"

// TestManagerEthernetInterfaces: each Manager links an EthernetInterfaces
// collection, empty (the bridge has no interface of any one system's
// BMC), so Ansible's GetManagerNicInventory finds the key and reads no
// NICs instead of failing on a missing one; confined to the caller's
// scope.
func TestManagerEthernetInterfaces(t *testing.T) {
	e := newEnv(t)
	v := newValidator(t)
	const mgr = "/redfish/v1/Managers/team-a.vm1"
	checkServed(t, e, v, mgr, "", map[string]any{"EthernetInterfaces": map[string]any{"@odata.id": mgr + "/EthernetInterfaces"}})
	checkServed(t, e, v, mgr+"/EthernetInterfaces", "", map[string]any{"Members": []any{}, "Members@odata.count": 0.0})
	checkScoped(t, e, "/redfish/v1/Managers/", "/EthernetInterfaces")
}
