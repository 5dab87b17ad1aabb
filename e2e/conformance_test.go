package e2e

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/bcrypt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// rfClient talks to one env's bridge with Basic auth (or a session token)
// and lets a test set and read headers.
type rfClient struct {
	env   *demo.Env
	http  *http.Client
	user  string
	pass  string
	token string
}

func newRFClient(env *demo.Env) *rfClient {
	return &rfClient{env: env, user: env.User, pass: env.Password, http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the demo's self-signed certificate
	}}}
}

// answer is one response, its body decoded when it is a JSON object.
type answer struct {
	status int
	header http.Header
	body   map[string]any
}

// messageID is the first MessageId of an error answer, without the registry.
func (a answer) messageID() string {
	e, _ := a.body["error"].(map[string]any)
	infos, _ := e["@Message.ExtendedInfo"].([]any)
	if len(infos) == 0 {
		return ""
	}
	id, _ := infos[0].(map[string]any)["MessageId"].(string)
	if !strings.HasPrefix(id, "Base.") {
		return "not a Base message: " + id
	}
	return id[strings.LastIndex(id, ".")+1:]
}

func (c *rfClient) do(t *testing.T, method, path, body string, header map[string]string) answer {
	t.Helper()
	status, h, raw := exchange(t, c.http, c.env.URL, method, path, body, func(req *http.Request) {
		if c.token != "" {
			req.Header.Set("X-Auth-Token", c.token)
		} else if c.user != "" {
			req.SetBasicAuth(c.user, c.pass)
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
	})
	a := answer{status: status, header: h}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &a.body); err != nil {
			t.Fatalf("%s %s: %d, body not JSON: %q", method, path, status, raw)
		}
	}
	return a
}

// get is a GET that must answer 200.
func (c *rfClient) get(t *testing.T, path string) answer {
	t.Helper()
	a := c.do(t, http.MethodGet, path, "", nil)
	if a.status != http.StatusOK {
		t.Fatalf("GET %s: %d %v", path, a.status, a.body)
	}
	return a
}

// TestProtocolConformance checks, on the bridge of each CRD variant, what
// the DMTF Protocol and Interop validators test of the protocol: Allow,
// Link (describedby), ETag and If-None-Match on resources, OData-Version,
// query parameters, roles, the virtual-media ActionInfo, the TargetUri of
// a task created under the manager, and the answers about the indicator
// LED a VM does not have.
func TestProtocolConformance(t *testing.T) {
	forEachVariant(t, func(t *testing.T, env *demo.Env) {
		a := adminFor(t, env)
		c := newRFClient(env)
		sys := "/redfish/v1/Systems/" + sysID(vmConformance)
		mgrMedia := "/redfish/v1/Managers/" + sysID(vmConformance) + "/VirtualMedia/cd0"

		t.Run("headers", func(t *testing.T) {
			for uri, want := range map[string]struct{ allow, schema string }{
				sys:                   {"OPTIONS, GET, HEAD, PATCH", "ComputerSystem.v1_27_0.json"},
				"/redfish/v1/Systems": {"OPTIONS, GET, HEAD", "ComputerSystemCollection.json"},
				mgrMedia:              {"OPTIONS, GET, HEAD, PATCH", "VirtualMedia.v1_6_5.json"},
				"/redfish/v1/AccountService/Accounts/" + env.User: {"OPTIONS, GET, HEAD", "ManagerAccount.v1_14_1.json"},
				"/redfish/v1/SessionService/Sessions":             {"OPTIONS, GET, HEAD, POST", "SessionCollection.json"},
			} {
				for _, method := range []string{http.MethodGet, http.MethodHead} {
					got := c.do(t, method, uri, "", nil)
					link := "<http://redfish.dmtf.org/schemas/v1/" + want.schema + ">; rel=describedby"
					if got.status != http.StatusOK || got.header.Get("Allow") != want.allow || got.header.Get("Link") != link || got.header.Get("ETag") == "" {
						t.Errorf("%s %s: %d, Allow %q (want %q), Link %q (want %q), ETag %q", method, uri, got.status,
							got.header.Get("Allow"), want.allow, got.header.Get("Link"), link, got.header.Get("ETag"))
					}
					if method == http.MethodGet && got.body["@odata.etag"] != got.header.Get("ETag") {
						t.Errorf("GET %s: @odata.etag %v, ETag %q", uri, got.body["@odata.etag"], got.header.Get("ETag"))
					}
				}
				tag := c.get(t, uri).header.Get("ETag")
				if got := c.do(t, http.MethodGet, uri, "", map[string]string{"If-None-Match": tag}); got.status != http.StatusNotModified {
					t.Errorf("GET %s If-None-Match its ETag: %d", uri, got.status)
				}
			}
		})

		t.Run("OData-Version", func(t *testing.T) {
			got := c.do(t, http.MethodGet, sys, "", map[string]string{"OData-Version": "4.1"})
			if got.status != http.StatusPreconditionFailed || got.messageID() != "GeneralError" {
				t.Errorf("OData-Version 4.1: %d %s", got.status, got.messageID())
			}
			if got := c.do(t, http.MethodGet, sys, "", map[string]string{"OData-Version": "4.0"}); got.status != http.StatusOK {
				t.Errorf("OData-Version 4.0: %d", got.status)
			}
		})

		t.Run("query", func(t *testing.T) {
			for _, q := range []string{"$expand=.($levels=2)", "$select=Name", "$filter=Id", "only", "$levels=1"} {
				if got := c.do(t, http.MethodGet, "/redfish/v1/Systems?"+q, "", nil); got.status != http.StatusNotImplemented || got.messageID() != "QueryNotSupported" {
					t.Errorf("?%s: %d %s", q, got.status, got.messageID())
				}
			}
			all := c.get(t, "/redfish/v1/Systems").body["Members"].([]any)
			var paged []any
			for next := "/redfish/v1/Systems?$top=5"; next != ""; {
				page := c.get(t, next).body
				paged = append(paged, page["Members"].([]any)...)
				next, _ = page["Members@odata.nextLink"].(string)
			}
			if len(all) < numVMs || !cmp.Equal(all, paged) {
				t.Errorf("paging by 5 gave %d members, the collection has %d", len(paged), len(all))
			}
			features := c.get(t, "/redfish/v1").body["ProtocolFeaturesSupported"].(map[string]any)
			expand := features["ExpandQuery"].(map[string]any)
			if features["TopSkipQuery"] != true || expand["ExpandAll"] != true || expand["MaxLevels"] != float64(1) || features["OnlyMemberQuery"] != false {
				t.Errorf("ProtocolFeaturesSupported %v", features)
			}
		})

		t.Run("roles", func(t *testing.T) {
			acct := c.get(t, "/redfish/v1/AccountService/Accounts/"+env.User).body
			if acct["RoleId"] != "Administrator" {
				t.Errorf("the admin's RoleId %v", acct["RoleId"])
			}
			role := c.get(t, "/redfish/v1/AccountService/Roles/Administrator").body
			if privs, _ := role["AssignedPrivileges"].([]any); !slices.Contains(privs, any("ConfigureManager")) {
				t.Errorf("Administrator privileges %v", privs)
			}
			if n := len(c.get(t, "/redfish/v1/AccountService/Roles").body["Members"].([]any)); n != 3 {
				t.Errorf("%d roles, want Administrator, Operator, ReadOnly", n)
			}
		})

		t.Run("indicator LED", func(t *testing.T) {
			before := a.vm(t.Context(), t, vmConformance)
			if _, ok := c.get(t, sys).body["IndicatorLED"]; ok {
				t.Error("the system shows an IndicatorLED")
			}
			got := c.do(t, http.MethodPatch, sys, `{"IndicatorLED":"Lit"}`, nil)
			if got.status != http.StatusBadRequest || got.messageID() != "PropertyUnknown" {
				t.Errorf("PATCH IndicatorLED: %d %s", got.status, got.messageID())
			}
			got = c.do(t, http.MethodPatch, "/redfish/v1/Chassis/"+sysID(vmConformance), `{"IndicatorLED":"Lit"}`, nil)
			msg, _ := got.body["error"].(map[string]any)["message"].(string)
			if got.status != http.StatusMethodNotAllowed || msg != "The action PATCH is not supported by the resource." {
				t.Errorf("PATCH Chassis: %d %q", got.status, msg)
			}
			forEachSushy(t, func(t *testing.T, lib sushyLib) {
				var got struct {
					Session        bool
					SystemLED      *string  `json:"system_led"`
					ChassisWithLED []string `json:"chassis_with_led"`
					SetError       *string  `json:"set_error"`
					SetStatus      int      `json:"set_status"`
				}
				runSushyScript(t, lib, env, "sushy_indicator.py", []string{sysID(vmConformance)}, nil, &got)
				if !got.Session || got.SystemLED != nil || len(got.ChassisWithLED) != 0 {
					t.Errorf("sushy %s: session %t, system LED %v, chassis with an LED %v; want a session and no LED",
						lib.Version, got.Session, got.SystemLED, got.ChassisWithLED)
				}
				if got.SetError == nil || *got.SetError != "BadRequestError" || got.SetStatus != http.StatusBadRequest {
					t.Errorf("sushy %s set_indicator_led: error %v (status %d), want BadRequestError 400", lib.Version, got.SetError, got.SetStatus)
				}
			})
			after := a.vm(t.Context(), t, vmConformance)
			if !cmp.Equal(before.GetAnnotations(), after.GetAnnotations()) || !cmp.Equal(templateSpec(t, before), templateSpec(t, after)) {
				t.Errorf("refused PATCHes changed the VM")
			}
		})
		t.Run("sessions", func(t *testing.T) { checkSessionPrivileges(t, env, a) })

		t.Run("media action info", func(t *testing.T) {
			acts := c.get(t, mgrMedia).body["Actions"].(map[string]any)
			uri, _ := acts["#VirtualMedia.InsertMedia"].(map[string]any)["@Redfish.ActionInfo"].(string)
			info := c.get(t, uri).body
			allowed := map[string]any{}
			for _, p := range info["Parameters"].([]any) {
				p := p.(map[string]any)
				allowed[p["Name"].(string)] = p["AllowableValues"]
			}
			if got := allowed["TransferProtocolType"]; !cmp.Equal(got, []any{"HTTP", "HTTPS"}) {
				t.Errorf("TransferProtocolType AllowableValues %v", got)
			}
			if _, ok := allowed["Image"]; !ok {
				t.Errorf("InsertMedia ActionInfo lacks Image: %v", allowed)
			}
			eject, _ := acts["#VirtualMedia.EjectMedia"].(map[string]any)["@Redfish.ActionInfo"].(string)
			c.get(t, eject)
		})

		t.Run("task target under the manager", func(t *testing.T) {
			target := mgrMedia + "/Actions/VirtualMedia.InsertMedia"
			got := c.do(t, http.MethodPost, target, `{"Image":"`+imageURL(env, "boot.iso")+`"}`, nil)
			if got.status != http.StatusAccepted {
				t.Fatalf("insert: %d %v", got.status, got.body)
			}
			taskURI := got.body["@odata.id"].(string)
			var task map[string]any
			waitFor(t, "the import task to complete", func() (bool, string) {
				task = c.get(t, taskURI).body
				return task["TaskState"] == "Completed", "TaskState " + task["TaskState"].(string)
			})
			for what, body := range map[string]map[string]any{"202 answer": got.body, "completed task": task} {
				if tu := body["Payload"].(map[string]any)["TargetUri"]; tu != target {
					t.Errorf("%s: TargetUri %v, want %s", what, tu, target)
				}
			}
			if got := c.do(t, http.MethodPost, mgrMedia+"/Actions/VirtualMedia.EjectMedia", `{}`, nil); got.status != http.StatusNoContent {
				t.Errorf("eject: %d %v", got.status, got.body)
			}
		})

	})
}

// checkSessionPrivileges adds an Operator (the demo namespace only) to the
// users Secret and checks, through the bridge, that the Administrator lists
// and ends the Operator's session while the Operator sees only its own and
// cannot end the Administrator's; sessions are opened by POST to
// Sessions/Members, as the Protocol Validator does.
func checkSessionPrivileges(t *testing.T, env *demo.Env, a admin) {
	t.Helper()
	const opUser, opPass = "conformance-operator", "operator-pw"
	hash, err := bcrypt.GenerateFromPassword([]byte(opPass), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	patch, err := json.Marshal(map[string]any{"data": map[string][]byte{opUser: hash, opUser + auth.SuffixNamespaces: []byte(demo.VMNamespace)}})
	if err != nil {
		t.Fatal(err)
	}
	secrets := a.kube.CoreV1().Secrets(env.Cluster.BridgeNamespace)
	if _, err := secrets.Patch(t.Context(), demo.UsersSecret, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("add the operator: %v", err)
	}
	login := func(user, pass string) (*rfClient, string) {
		t.Helper()
		c := newRFClient(env)
		c.user = ""
		body, _ := json.Marshal(map[string]string{"UserName": user, "Password": pass})
		var got answer
		waitFor(t, user+" logs in", func() (bool, string) {
			got = c.do(t, http.MethodPost, "/redfish/v1/SessionService/Sessions/Members", string(body), nil)
			return got.status == http.StatusCreated, fmt.Sprint(got.status, got.body)
		})
		c.token = got.header.Get("X-Auth-Token")
		return c, got.header.Get("Location")
	}
	adm, admLoc := login(env.User, env.Password)
	op, opLoc := login(opUser, opPass)
	sessions := func(c *rfClient) []string {
		var out []string
		for _, m := range c.get(t, "/redfish/v1/SessionService/Sessions").body["Members"].([]any) {
			out = append(out, m.(map[string]any)["@odata.id"].(string))
		}
		return out
	}
	if got := sessions(adm); !slices.Contains(got, opLoc) || !slices.Contains(got, admLoc) {
		t.Errorf("the Administrator lists %v, want its session %s and the Operator's %s", got, admLoc, opLoc)
	}
	if got := sessions(op); !cmp.Equal(got, []string{opLoc}) {
		t.Errorf("the Operator lists %v, want only %s", got, opLoc)
	}
	if role := op.get(t, "/redfish/v1/AccountService/Accounts/"+opUser).body["RoleId"]; role != "Operator" {
		t.Errorf("the Operator's RoleId %v", role)
	}
	if got := op.do(t, http.MethodDelete, admLoc, "", nil); got.status != http.StatusNotFound {
		t.Errorf("the Operator deletes the Administrator's session: %d", got.status)
	}
	if got := adm.do(t, http.MethodDelete, opLoc, "", nil); got.status != http.StatusNoContent {
		t.Fatalf("the Administrator deletes the Operator's session: %d %v", got.status, got.body)
	}
	if got := op.do(t, http.MethodGet, "/redfish/v1/Systems", "", nil); got.status != http.StatusUnauthorized {
		t.Errorf("the Operator's ended session: %d", got.status)
	}
	if got := adm.do(t, http.MethodDelete, admLoc, "", nil); got.status != http.StatusNoContent {
		t.Errorf("the Administrator logs out: %d", got.status)
	}
}
