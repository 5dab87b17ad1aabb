package redfish

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestMediaActionInfo checks that both virtual-media actions, under the
// system and under the manager, name an ActionInfo, and that InsertMedia's
// ActionInfo says what the action accepts: a body with every listed
// parameter at an allowed value is accepted, each listed value outside
// AllowableValues is refused, a Boolean parameter has no AllowableValues
// (strings a boolean never matches) and false for it is refused, and a
// parameter it does not list is refused.
func TestMediaActionInfo(t *testing.T) {
	e := newEnv(t)
	for _, base := range []string{sysMedia, mgrMedia} {
		slot := e.get(t, "admin", base)
		actions := slot["Actions"].(map[string]any)
		infos := map[string]map[string]any{}
		for _, a := range []string{"#VirtualMedia.InsertMedia", "#VirtualMedia.EjectMedia"} {
			uri, _ := actions[a].(map[string]any)["@Redfish.ActionInfo"].(string)
			if uri == "" {
				t.Fatalf("%s %s: no @Redfish.ActionInfo", base, a)
			}
			infos[a] = e.get(t, "admin", uri)
		}
		insert := actions["#VirtualMedia.InsertMedia"].(map[string]any)
		for _, name := range []string{"Inserted", "WriteProtected"} {
			// The Interop Validator's "Missing ActionInfo" warning goes
			// without it; Ansible, which reads the ActionInfo while one is
			// named, never compares its boolean with these strings.
			if got, _ := insert[name+"@Redfish.AllowableValues"].([]any); len(got) != 1 || got[0] != "true" {
				t.Errorf("%s InsertMedia action: %s@Redfish.AllowableValues %v, want [true]", base, name, got)
			}
		}
		if ps := infos["#VirtualMedia.EjectMedia"]["Parameters"].([]any); len(ps) != 0 {
			t.Errorf("EjectMedia lists parameters %v; it takes none", ps)
		}
		body := map[string]any{}
		var refused []map[string]any
		for _, raw := range infos["#VirtualMedia.InsertMedia"]["Parameters"].([]any) {
			p := raw.(map[string]any)
			name := p["Name"].(string)
			switch allowed, _ := p["AllowableValues"].([]any); {
			case p["DataType"] == "Boolean":
				// AllowableValues are strings: a client that checks its
				// boolean against them (Ansible's VirtualMediaInsert) finds
				// true not in ["true"] and refuses its own insert.
				if allowed != nil {
					t.Errorf("%s: Boolean parameter %s lists AllowableValues %v; a boolean client finds its true not in them", base, name, allowed)
				}
				body[name] = true
				refused = append(refused, map[string]any{name: false})
			case allowed != nil:
				body[name] = allowed[0]
				refused = append(refused, map[string]any{name: "NotAllowed"})
			case name == "Image":
				body[name] = "http://img.example/a.iso"
			default:
				body[name] = "x"
			}
		}
		if len(body) != 7 || len(refused) != 4 {
			t.Errorf("InsertMedia ActionInfo lists %d parameters (%d refusable), want 7 (4)", len(body), len(refused))
		}
		post := func(b map[string]any) int {
			raw, _ := json.Marshal(b)
			return e.do(t, req{method: http.MethodPost, path: base + "/Actions/VirtualMedia.InsertMedia", user: "admin", body: string(raw)}).Code
		}
		if code := post(body); code != http.StatusAccepted {
			t.Errorf("%s: InsertMedia with every listed parameter: %d", base, code)
		}
		for _, r := range refused {
			b := map[string]any{"Image": "http://img.example/a.iso"}
			for k, v := range r {
				b[k] = v
			}
			if code := post(b); code != http.StatusBadRequest {
				t.Errorf("%s: InsertMedia with %v, which it does not accept: %d", base, r, code)
			}
		}
		if code := post(map[string]any{"Image": "http://img.example/a.iso", "MediaType": "CD"}); code != http.StatusBadRequest {
			t.Errorf("%s: InsertMedia with an unlisted parameter: %d", base, code)
		}
	}
}

// TestTaskTargetFollowsThePath checks that the task of an insert posted
// under the manager names that action as its TargetUri, in the 202 answer
// and later through the TaskService, and one under the system names the
// system's.
func TestTaskTargetFollowsThePath(t *testing.T) {
	e := newEnv(t)
	for _, base := range []string{mgrMedia, sysMedia} {
		target := base + "/Actions/VirtualMedia.InsertMedia"
		rec := e.do(t, req{method: http.MethodPost, path: target, user: "admin", body: `{"Image":"http://img.example/a.iso"}`})
		if rec.Code != http.StatusAccepted {
			t.Fatalf("insert via %s: %d %s", base, rec.Code, rec.Body)
		}
		task := decode(t, rec)
		later := e.get(t, "admin", task["@odata.id"].(string))
		for what, body := range map[string]map[string]any{"202 answer": task, "task": later} {
			if got := body["Payload"].(map[string]any)["TargetUri"]; got != target {
				t.Errorf("%s of the insert via %s: TargetUri %v, want %s", what, base, got, target)
			}
		}
		if rec := e.do(t, req{method: http.MethodPost, path: base + "/Actions/VirtualMedia.EjectMedia", user: "admin", body: `{}`}); rec.Code != http.StatusNoContent {
			t.Fatalf("eject: %d", rec.Code)
		}
	}
}
