package webui_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/redfish-bridge/redfish-bridge/harness/browser"
	"github.com/redfish-bridge/redfish-bridge/webui"
)

// scaleSystems is how many Systems TestTenThousandSystems serves.
const scaleSystems = 10000

// scaleAPI answers the Redfish requests the Systems page makes, for
// scaleSystems Systems (ns.vm-0 ...), with $top/$skip on the collection
// as the bridge pages it; it counts the Systems read one by one.
type scaleAPI struct {
	systemReads atomic.Int64
	role        string // the RoleId of the caller's account ("": Operator)
}

func (a *scaleAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodPost && r.URL.Path == "/redfish/v1/SessionService/Sessions" {
		w.Header().Set("X-Auth-Token", "t")
		w.Header().Set("Location", "/redfish/v1/SessionService/Sessions/1")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{}`))
		return
	}
	if r.Header.Get("X-Auth-Token") != "t" {
		http.Error(w, `{}`, http.StatusUnauthorized)
		return
	}
	switch p := r.URL.Path; {
	case p == "/redfish/v1/Systems":
		skip, _ := strconv.Atoi(r.URL.Query().Get("$skip"))
		top, err := strconv.Atoi(r.URL.Query().Get("$top"))
		if err != nil {
			top = scaleSystems
		}
		members := []map[string]string{}
		for i := skip; i < min(skip+top, scaleSystems); i++ {
			members = append(members, map[string]string{"@odata.id": fmt.Sprintf("/redfish/v1/Systems/ns.vm-%d", i)})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"Members": members, "Members@odata.count": scaleSystems})
	case strings.HasPrefix(p, "/redfish/v1/Systems/"):
		a.systemReads.Add(1)
		id := strings.TrimPrefix(p, "/redfish/v1/Systems/")
		_ = json.NewEncoder(w).Encode(map[string]any{"@odata.id": p, "PowerState": "Off", "Status": map[string]string{"Health": "OK"},
			"Boot":  map[string]string{"BootSourceOverrideEnabled": "Disabled", "BootSourceOverrideMode": "UEFI"},
			"Links": map[string]any{"ManagedBy": []map[string]string{{"@odata.id": "/redfish/v1/Managers/" + id}}}})
	case strings.HasPrefix(p, "/redfish/v1/AccountService/Accounts/"):
		role := a.role
		if role == "" {
			role = "Operator"
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"@odata.id": p, "RoleId": role})
	case strings.HasPrefix(p, "/redfish/v1/Managers/"):
		// vm-1's Manager names a javascript: console page, which the
		// page must not link.
		id := strings.TrimPrefix(p, "/redfish/v1/Managers/")
		page := "/console/" + id
		if id == "ns.vm-1" {
			page = "javascript:document.title='pwned'"
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"@odata.id": p,
			"GraphicalConsole": map[string]any{"ServiceEnabled": true, "MaxConcurrentSessions": 4, "ConnectTypesSupported": []string{"KVMIP"}},
			"Oem":              map[string]any{"RedfishBridge": map[string]any{"GraphicalConsolePage": page}}})
	default:
		http.NotFound(w, r)
	}
}

// serveWith is a TLS server of the web console's pages, with api
// answering every other path (the Redfish service the pages call); it
// closes when the test ends.
func serveWith(t *testing.T, api http.Handler) *httptest.Server {
	t.Helper()
	pages := webui.Handler()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if webui.Serves(r.URL.Path) {
			pages.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestTenThousandSystems: with 10,000 Systems the page reads one page of
// links and the 20 Systems it shows, pages with $skip, and its filter
// finds one System among them; measured in real chromium. Each System
// links its Manager's console page, unless that is a javascript: URL.
func TestTenThousandSystems(t *testing.T) {
	api := &scaleAPI{}
	srv := serveWith(t, api)
	b := browser.Start(t, browser.Options{})
	ctx := t.Context()
	cards := `document.querySelectorAll('article.system[data-power]').length`
	began := time.Now()
	if err := b.Do(ctx, chromedp.Navigate(srv.URL+"/ui/"),
		chromedp.SendKeys(chromedp.ID("user"), "u"), chromedp.SendKeys(chromedp.ID("password"), "p"),
		chromedp.Click(chromedp.ID("login-submit")),
		browser.WaitFor(cards+` === 20`),
	); err != nil {
		t.Fatal(err)
	}
	t.Logf("TIMING login to the first page of %d Systems: %s", scaleSystems, time.Since(began).Round(time.Millisecond))
	text := func(id string) string {
		t.Helper()
		s, err := browser.Run(ctx, b, chromedp.Text(chromedp.ID(id)))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if got, want := text("range"), "1\u201320 of 10000"; got != want {
		t.Errorf("range %q, want %q", got, want)
	}
	if n := api.systemReads.Load(); n < 20 || n > 40 {
		t.Errorf("the first page read %d Systems, want the 20 it shows (twice at most, a refresh)", n)
	}
	// The console link: the Manager's page, never a javascript: URL.
	if err := b.Do(ctx, browser.WaitFor(`['ns.vm-0', 'ns.vm-1'].every(id => document.querySelector('article.system[data-id="' + id + '"][data-console]'))`)); err != nil {
		t.Fatal(err)
	}
	links, err := browser.Run(ctx, b, chromedp.Evaluate[map[string]string](`Object.fromEntries(['ns.vm-0', 'ns.vm-1'].map(id => {
		const a = document.querySelector('article.system[data-id="' + id + '"] a.console');
		return [id, a.hidden ? 'hidden' : a.getAttribute('href')];
	}))`))
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"ns.vm-0": "/console/ns.vm-0", "ns.vm-1": "hidden"}; !maps.Equal(links, want) {
		t.Errorf("console links %v, want %v", links, want)
	}
	if err := b.Do(ctx, chromedp.Click(chromedp.ID("next")),
		browser.WaitFor(`document.getElementById('range').textContent.startsWith('21')`),
		browser.WaitFor(fmt.Sprintf("%s === 20 && !!document.querySelector('article.system[data-id=\"ns.vm-39\"][data-power]')", cards)),
	); err != nil {
		t.Fatal(err)
	}
	began = time.Now()
	if err := b.Do(ctx, chromedp.SendKeys(chromedp.ID("filter"), "vm-9999"),
		browser.WaitFor(`document.getElementById('range').textContent === '1\u20131 of 1'`),
		browser.WaitFor(cards+` === 1 && !!document.querySelector('article.system[data-id="ns.vm-9999"]')`),
	); err != nil {
		t.Fatal(err)
	}
	t.Logf("TIMING filter over %d Systems: %s", scaleSystems, time.Since(began).Round(time.Millisecond))
}
