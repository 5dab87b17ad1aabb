package reliability

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
)

const sys = "/redfish/v1/Systems/demo.vm-0"

// protectedGETs are every GET route but the public ones, with real ids.
var protectedGETs = []string{
	"/redfish/v1/Systems", sys, sys + "/ResetActionInfo", sys + "/Processors", sys + "/Processors/1",
	sys + "/EthernetInterfaces", sys + "/SimpleStorage", sys + "/Storage", sys + "/Bios", sys + "/Bios/Settings",
	sys + "/SecureBoot", sys + "/VirtualMedia", sys + "/VirtualMedia/cd0",
	"/redfish/v1/Managers", "/redfish/v1/Managers/demo.vm-0", "/redfish/v1/Managers/demo.vm-0/VirtualMedia",
	"/redfish/v1/Chassis", "/redfish/v1/Chassis/demo.vm-0",
	"/redfish/v1/SessionService", "/redfish/v1/SessionService/Sessions",
	"/redfish/v1/AccountService", "/redfish/v1/AccountService/Accounts", "/redfish/v1/AccountService/Accounts/admin",
	"/redfish/v1/TaskService", "/redfish/v1/TaskService/Tasks",
	"/redfish/v1/Registries", "/redfish/v1/Registries/Base",
}

var publicGETs = []string{"/redfish", "/redfish/v1", "/redfish/v1/", "/redfish/v1/odata", "/redfish/v1/$metadata"}

// protectedWrites are the mutating routes.
var protectedWrites = []struct{ method, path, body string }{
	{http.MethodPatch, sys, `{"Boot":{"BootSourceOverrideTarget":"Cd","BootSourceOverrideEnabled":"Once"}}`},
	{http.MethodPost, sys + "/Actions/ComputerSystem.Reset", `{"ResetType":"On"}`},
	{http.MethodPost, sys + "/VirtualMedia/cd0/Actions/VirtualMedia.InsertMedia", `{"Image":"http://127.0.0.1:1/x.iso"}`},
	{http.MethodPost, sys + "/VirtualMedia/cd0/Actions/VirtualMedia.EjectMedia", `{}`},
	{http.MethodPatch, sys + "/Bios/Settings", `{"Attributes":{}}`},
	{http.MethodPatch, sys + "/SecureBoot", `{"SecureBootEnable":false}`},
	{http.MethodDelete, "/redfish/v1/SessionService/Sessions/x", ""},
}

// TestSecurity runs on one demo: unauthenticated crawl, bad passwords,
// logout, throttling per client address, tenant isolation, no caching.
func TestSecurity(t *testing.T) {
	env := startDemo(t, crds.Stock, 2)
	c := newClient(t, env.URL, "127.0.0.1")
	admin := auth{user: env.User, password: env.Password}
	ctx := t.Context()
	var sent, bad, checked int
	defer func() {
		t.Logf("RELIABILITY security: %d requests, %d bad credentials/inputs, %d responses checked", int(c.sent.Load())+sent, bad, checked)
	}()

	t.Run("throttling is per client", func(t *testing.T) {
		attacker := newClient(t, env.URL, "127.0.0.2")
		var throttled response
		for i := range 10 {
			r := attacker.do(ctx, t, http.MethodPost, "/redfish/v1/SessionService/Sessions", auth{},
				`{"UserName":"`+env.User+`","Password":"guess-`+strconv.Itoa(i)+`"}`)
			bad++
			checked++
			if r.status == http.StatusTooManyRequests {
				throttled = r
				break
			}
			if r.status != http.StatusUnauthorized {
				t.Fatalf("bad login %d: %d, want 401", i, r.status)
			}
			redfishError(t, "bad login", r)
		}
		sent += int(attacker.sent.Load())
		if throttled.status == 0 {
			t.Fatalf("10 bad logins from 127.0.0.2 never answered 429")
		}
		if ra, err := strconv.Atoi(throttled.header.Get("Retry-After")); err != nil || ra < 1 {
			t.Errorf("429 Retry-After %q", throttled.header.Get("Retry-After"))
		}
		redfishError(t, "throttled login", throttled)
		t.Logf("throttled after %d bad logins", attacker.sent.Load())
		// The right password from the attacker's address is still refused...
		r := attacker.do(ctx, t, http.MethodPost, "/redfish/v1/SessionService/Sessions", auth{},
			`{"UserName":"`+env.User+`","Password":"`+env.Password+`"}`)
		if r.status != http.StatusTooManyRequests {
			t.Errorf("right password from the throttled address: %d, want 429", r.status)
		}
		// ...but the operator at another address is not locked out.
		login(t, c, env.User, env.Password)
		checked += 2
	})

	t.Run("no route without credentials", func(t *testing.T) {
		throttled := 0
		defer func() { t.Logf("%d of the bad credentials were answered 429 with Retry-After", throttled) }()
		for _, p := range publicGETs {
			if r := c.do(ctx, t, http.MethodGet, p, auth{}, ""); r.status != http.StatusOK {
				t.Errorf("public GET %s: %d", p, r.status)
			}
			checked++
		}
		for _, p := range protectedGETs {
			if r := c.do(ctx, t, http.MethodGet, p, admin, ""); r.status >= 400 && r.status != http.StatusNotFound {
				t.Errorf("GET %s as admin: %d %s", p, r.status, r.body)
			}
			for _, a := range []auth{{}, {user: env.User, password: "wrong"}, {user: "nobody", password: "x"}, {token: "forged.token"}} {
				r := c.do(ctx, t, http.MethodGet, p, a, "")
				bad++
				checked++
				// 429 once the bad guesses of this client add up (throttling).
				if r.status == http.StatusTooManyRequests && r.header.Get("Retry-After") != "" {
					throttled++
				} else if r.status != http.StatusUnauthorized {
					t.Errorf("GET %s with %+v: %d, want 401", p, a, r.status)
					continue
				}
				redfishError(t, "GET "+p, r)
			}
		}
		for _, w := range protectedWrites {
			r := c.do(ctx, t, w.method, w.path, auth{}, w.body)
			bad++
			checked++
			if r.status != http.StatusUnauthorized {
				t.Errorf("%s %s without credentials: %d, want 401", w.method, w.path, r.status)
			}
			redfishError(t, w.method+" "+w.path, r)
		}
	})

	t.Run("logout revokes the token", func(t *testing.T) {
		tok, loc := login(t, c, env.User, env.Password)
		if r := c.do(ctx, t, http.MethodGet, sys, auth{token: tok}, ""); r.status != http.StatusOK {
			t.Fatalf("GET with a fresh token: %d", r.status)
		}
		if r := c.do(ctx, t, http.MethodDelete, loc, auth{token: tok}, ""); r.status/100 != 2 {
			t.Fatalf("DELETE %s: %d %s", loc, r.status, r.body)
		}
		r := c.do(ctx, t, http.MethodGet, sys, auth{token: tok}, "")
		checked += 3
		if r.status != http.StatusUnauthorized {
			t.Fatalf("GET with a logged-out token: %d, want 401", r.status)
		}
		redfishError(t, "logged-out token", r)
	})

	t.Run("image URLs pointing inside are refused", func(t *testing.T) {
		before := c.do(ctx, t, http.MethodGet, sys, admin, "")
		for _, u := range []string{
			"http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/latest", "http://100.100.100.200/x",
			"http://[::ffff:169.254.169.254]/x.iso", "http://169.254.10.10/x.iso", "http://[fe80::1]/x.iso",
			"http://0.0.0.0/x.iso", "http://224.0.0.1/x.iso", "ftp://127.0.0.1/x.iso", "file:///etc/passwd",
			"http://admin:pw@127.0.0.1/x.iso",
			// A name that does not resolve: the demo may import with CDI
			// (--import-method auto), whose importer checks no address, so
			// the insert resolves names and refuses what it cannot check.
			"http://metadata.invalid/latest/meta-data/",
		} {
			r := c.do(ctx, t, http.MethodPost, sys+"/VirtualMedia/cd0/Actions/VirtualMedia.InsertMedia", admin, `{"Image":"`+u+`"}`)
			bad++
			checked++
			if r.status != http.StatusBadRequest {
				t.Errorf("insert %s: %d, want 400: %s", u, r.status, r.body)
				continue
			}
			redfishError(t, "insert "+u, r)
		}
		after := c.do(ctx, t, http.MethodGet, sys, admin, "")
		if before.header.Get("ETag") != after.header.Get("ETag") {
			t.Errorf("refused inserts changed the system: ETag %s -> %s", before.header.Get("ETag"), after.header.Get("ETag"))
		}
	})

	t.Run("tenant isolation and no shared responses", func(t *testing.T) {
		addUser(t, env, "eve", "eve-password", "other")
		eve := auth{user: "eve", password: "eve-password"}
		waitLogin(t, c, eve)
		// A task of admin's to look for.
		r := c.do(ctx, t, http.MethodPost, sys+"/VirtualMedia/cd0/Actions/VirtualMedia.InsertMedia", admin,
			`{"Image":"`+env.Images.URL+"/boot.iso"+`"}`)
		if r.status != http.StatusAccepted {
			t.Fatalf("admin insert: %d %s", r.status, r.body)
		}
		task := r.header.Get("Location")
		var taskPaths []string
		if task != "" {
			id := task[strings.LastIndex(task, "/")+1:]
			taskPaths = []string{task, "/redfish/v1/TaskService/Tasks/" + id}
		}
		for _, p := range append([]string{sys, sys + "/VirtualMedia", sys + "/VirtualMedia/cd0", sys + "/Bios", sys + "/Processors",
			"/redfish/v1/Managers/demo.vm-0", "/redfish/v1/Managers/demo.vm-0/VirtualMedia", "/redfish/v1/Chassis/demo.vm-0"}, taskPaths...) {
			if a := c.do(ctx, t, http.MethodGet, p, admin, ""); a.status != http.StatusOK && a.status != http.StatusAccepted {
				t.Errorf("GET %s as admin: %d", p, a.status)
			}
			r := c.do(ctx, t, http.MethodGet, p, eve, "")
			bad++
			checked++
			if r.status != http.StatusNotFound {
				t.Errorf("GET %s as eve: %d, want 404: %s", p, r.status, r.body)
				continue
			}
			redfishError(t, "eve GET "+p, r)
		}
		before := c.do(ctx, t, http.MethodGet, sys, admin, "")
		for _, w := range protectedWrites[:6] {
			r := c.do(ctx, t, w.method, w.path, eve, w.body)
			bad++
			checked++
			if r.status != http.StatusNotFound {
				t.Errorf("%s %s as eve: %d, want 404", w.method, w.path, r.status)
			}
		}
		after := c.do(ctx, t, http.MethodGet, sys, admin, "")
		if before.header.Get("ETag") != after.header.Get("ETag") {
			t.Errorf("eve's refused writes changed the system: ETag %s -> %s", before.header.Get("ETag"), after.header.Get("ETag"))
		}
		// Same URL, different users, different bodies, never cacheable.
		for _, p := range []string{"/redfish/v1/Systems", "/redfish/v1/Managers", "/redfish/v1/TaskService/Tasks"} {
			a, e := c.do(ctx, t, http.MethodGet, p, admin, ""), c.do(ctx, t, http.MethodGet, p, eve, "")
			checked += 2
			if members(t, a) == 0 || members(t, e) != 0 {
				t.Errorf("GET %s: admin sees %d members, eve %d; want >0 and 0", p, members(t, a), members(t, e))
			}
			for _, r := range []response{a, e} {
				if cc := r.header.Get("Cache-Control"); !strings.Contains(cc, "no-store") {
					t.Errorf("GET %s: Cache-Control %q, want no-store", p, cc)
				}
			}
		}
	})
}

func members(t *testing.T, r response) int {
	t.Helper()
	var doc struct {
		Count int `json:"Members@odata.count"`
	}
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Errorf("decode collection: %v", err)
	}
	return doc.Count
}

// login opens a session and returns its token and URI.
func login(t *testing.T, c *client, user, password string) (token, uri string) {
	t.Helper()
	r := c.do(t.Context(), t, http.MethodPost, "/redfish/v1/SessionService/Sessions", auth{},
		`{"UserName":"`+user+`","Password":"`+password+`"}`)
	if r.status != http.StatusCreated {
		t.Fatalf("login %s: %d %s", user, r.status, r.body)
	}
	return r.header.Get("X-Auth-Token"), r.header.Get("Location")
}

// addUser adds a user scoped to namespaces to the bridge's users Secret.
func addUser(t *testing.T, env *demo.Env, user, password, namespaces string) {
	t.Helper()
	kube, err := kubernetes.NewForConfig(env.Cluster.Admin)
	if err != nil {
		t.Fatal(err)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	secrets := kube.CoreV1().Secrets(env.Cluster.BridgeNamespace)
	s, err := secrets.Get(t.Context(), demo.UsersSecret, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Data[user] = hash
	s.Data[user+".namespaces"] = []byte(namespaces)
	if _, err := secrets.Update(t.Context(), s, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update users secret: %v", err)
	}
}

// waitLogin waits until the bridge has read a new user.
func waitLogin(t *testing.T, c *client, a auth) {
	t.Helper()
	deadline := time.Now().Add(settle)
	for {
		r := c.do(t.Context(), t, http.MethodGet, "/redfish/v1/Systems", a, "")
		if r.status == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("user %s not accepted after %s: %d %s", a.user, settle, r.status, r.body)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
