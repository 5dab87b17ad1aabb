package redfish

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// TestRoles checks the predefined roles and their privileges (DMTF
// privilege model), that every privilege is one the Privileges schema
// defines, and that each account's RoleId and Links.Role follow the
// user's rights: every system is Administrator, a narrower scope Operator.
func TestRoles(t *testing.T) {
	e := newEnv(t)
	coll := e.get(t, "alice", "/redfish/v1/AccountService/Roles")
	var ids []string
	for _, m := range coll["Members"].([]any) {
		role := e.get(t, "alice", m.(map[string]any)["@odata.id"].(string))
		if role["IsPredefined"] != true || role["RoleId"] != role["Id"] {
			t.Errorf("role %v: IsPredefined %v, RoleId %v", role["Id"], role["IsPredefined"], role["RoleId"])
		}
		ids = append(ids, role["Id"].(string))
		var privs []string
		for _, p := range role["AssignedPrivileges"].([]any) {
			privs = append(privs, p.(string))
		}
		want := map[string][]string{
			"Administrator": {"Login", "ConfigureManager", "ConfigureUsers", "ConfigureSelf", "ConfigureComponents"},
			"Operator":      {"Login", "ConfigureSelf", "ConfigureComponents"},
			"ReadOnly":      {"Login", "ConfigureSelf"},
		}[role["Id"].(string)]
		if diff := cmp.Diff(want, privs); diff != "" {
			t.Errorf("%s privileges (-want +got):\n%s", role["Id"], diff)
		}
		checkPrivilegeNames(t, privs)
	}
	if diff := cmp.Diff([]string{"Administrator", "Operator", "ReadOnly"}, ids); diff != "" {
		t.Errorf("roles (-want +got):\n%s", diff)
	}
	if rec := e.do(t, req{path: "/redfish/v1/AccountService/Roles/Root", user: "admin"}); rec.Code != http.StatusNotFound {
		t.Errorf("unknown role: %d", rec.Code)
	}
	if svc := e.get(t, "alice", "/redfish/v1/AccountService"); svc["Roles"] == nil {
		t.Error("AccountService does not link Roles")
	}
	for user, role := range map[string]string{"admin": "Administrator", "alice": "Operator", "carol": "Operator"} {
		acct := e.get(t, user, "/redfish/v1/AccountService/Accounts/"+user)
		link := acct["Links"].(map[string]any)["Role"].(map[string]any)["@odata.id"]
		if acct["RoleId"] != role || link != "/redfish/v1/AccountService/Roles/"+role {
			t.Errorf("%s: RoleId %v, Links.Role %v; want %s", user, acct["RoleId"], link, role)
		}
	}
}

// checkPrivilegeNames checks privileges against the PrivilegeType enum of
// the DMTF Privileges schema (the Role schema itself is not in
// ../shared/redfish).
func checkPrivilegeNames(t *testing.T, privs []string) {
	t.Helper()
	dir := testutil.SharedDir(t, "redfish", "json-schema")
	raw, err := os.ReadFile(filepath.Join(dir, "Privileges.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Definitions struct {
			PrivilegeType struct{ Enum []string }
		}
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	for _, p := range privs {
		if !slices.Contains(schema.Definitions.PrivilegeType.Enum, p) {
			t.Errorf("privilege %q is not a DMTF PrivilegeType", p)
		}
	}
}
