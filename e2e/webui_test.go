package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/bcrypt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/browser"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/vncscreen"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// screenshotsEnv, set to 1, makes TestWebUI write its screenshots of the
// pages into docs/images (referenced by docs/web-ui.md) instead of a
// temp directory.
const screenshotsEnv = "REDFISH_BRIDGE_SCREENSHOTS"

// hiddenLabel marks the VM the web test's viewer is scoped away from.
const hiddenLabel = "webui-e2e/hidden"

// TestWebUI drives the web pages with Debian's headless chromium against
// the demo: the administrator logs in, the Systems page lists every demo
// VM with the power state the API reports, inserts an image into vm-15
// and sets its boot once to CD (the page shows both once the VM records
// them), powers it on (the page shows On once the bridge reports it, the
// VMI runs, and its screen's thumbnail shows); a viewer scoped away from
// vm-15 (a label selector), on a phone-sized screen, never sees it; the
// operator's console page of vm-15 shows the VM's name in noVNC's canvas,
// its typed key reaches the VM (the real virt-api's vnc), and logging out
// ends it; the demo's ReadOnly viewer sees every System and no action, its
// ForceOff is 403 and its console token view-only; logout returns to the
// login page and the session's token no longer works.
func TestWebUI(t *testing.T) {
	forEachVariant(t, func(t *testing.T, env *demo.Env) {
		a := adminFor(t, env)
		b := browser.Start(t, browser.Options{})
		ctx := t.Context()
		shots := t.TempDir()
		if os.Getenv(screenshotsEnv) == "1" && env.Cluster.Variant == crds.Stock {
			shots = filepath.Join("..", "docs", "images")
		}
		target := sysID(vmWebUI)

		// The bare URL leads to the login page.
		if err := b.Do(ctx, chromedp.Navigate(env.URL+"/"), chromedp.WaitVisible(chromedp.ID("login-submit"))); err != nil {
			t.Fatal(err)
		}
		if path := location(t, b); path != "/ui/" {
			t.Fatalf("%s/ led to %s, want /ui/", env.URL, path)
		}
		if err := b.Screenshot(ctx, filepath.Join(shots, "web-ui-login.png")); err != nil {
			t.Fatal(err)
		}
		loginAs(t, b, env.User, env.Password)

		// The page's first page lists the API's first webPageSize Systems
		// (other tests' VMs may bring the collection past it), each with
		// the power state the API reports.
		want := map[string]string{}
		rf := newRFClient(env)
		first := rf.get(t, fmt.Sprintf("/redfish/v1/Systems?$top=%d", webPageSize)).body
		total := int(first["Members@odata.count"].(float64))
		for _, m := range first["Members"].([]any) {
			uri := m.(map[string]any)["@odata.id"].(string)
			want[uri[strings.LastIndex(uri, "/")+1:]] = ""
		}
		if _, ok := want[target]; !ok {
			t.Fatalf("%s is not on the first page of the %d Systems: %v", target, total, want)
		}
		waitCards(t, b, total)
		for id := range want {
			want[id] = rf.get(t, "/redfish/v1/Systems/"+id).body["PowerState"].(string)
		}
		if want[target] != "Off" {
			t.Fatalf("%s is %s before the test, want Off", target, want[target])
		}
		// Other tests power their own VMs meanwhile: the target's state
		// is the one only this test changes.
		if err := b.Do(ctx, browser.WaitFor(fmt.Sprintf(`(c => c && c.dataset.power === 'Off')(%s)`, card(target)))); err != nil {
			t.Fatal(err)
		}
		listed, err := browser.Run(ctx, b, chromedp.Evaluate[map[string]string](
			`Object.fromEntries([...document.querySelectorAll('article.system')].map(c => [c.dataset.id, c.querySelector('.power').textContent]))`))
		if err != nil {
			t.Fatal(err)
		}
		for id := range want {
			if listed[id] == "" {
				t.Errorf("the Systems page lists no %s (lists %v)", id, listed)
			}
		}

		// Ironic's sequence through the page: insert an image, boot once
		// to CD, then power on.
		cardSel := fmt.Sprintf(`article.system[data-id=%q]`, target)
		image := imageURL(env, "boot.iso")
		if err := b.Do(ctx,
			chromedp.SendKeys(chromedp.CSS(cardSel+" input.image"), image),
			chromedp.Click(chromedp.CSS(cardSel+" form.insert button[type=submit]")),
		); err != nil {
			t.Fatal(err)
		}
		waitCard(t, b, target, "media", image+" (inserted)")
		if err := b.Do(ctx, chromedp.Click(chromedp.CSS(cardSel+" button.bootcd"))); err != nil {
			t.Fatal(err)
		}
		waitCard(t, b, target, "boot", "Cd (Once)")
		if sl := slot(t, a.vm(ctx, t, vmWebUI)); sl.Image != image || !sl.Inserted() {
			t.Errorf("the page shows %s inserted, the VM's slot %+v", image, sl)
		}
		boot := rf.get(t, "/redfish/v1/Systems/"+target).body["Boot"].(map[string]any)
		if boot["BootSourceOverrideTarget"] != "Cd" || boot["BootSourceOverrideEnabled"] != "Once" {
			t.Errorf("the page shows Cd (Once), the API %v", boot)
		}

		// Power on: the page shows On once the bridge reports it.
		if err := b.Do(ctx, chromedp.Click(chromedp.CSS(cardSel+` button[data-reset="On"]`))); err != nil {
			t.Fatal(err)
		}
		waitCard(t, b, target, "power", "On")
		if got := rf.get(t, "/redfish/v1/Systems/"+target).body["PowerState"]; got != "On" {
			t.Errorf("the page shows On, the API %v", got)
		}
		a.waitRunning(t, vmWebUI)
		// Its thumbnail: the screen through kube-apiserver, the real
		// virt-api's vnc/screenshot (its own SubjectAccessReview of the
		// bridge's identity) and the simulator's virt-handler.
		thumbCtx, cancel := context.WithTimeout(ctx, 2*time.Minute) // a bound on failure, not a wait
		defer cancel()
		if err := b.Do(thumbCtx, browser.WaitFor(fmt.Sprintf(
			`(c => c.dataset.thumbnail === 'shown' && c.querySelector('img.thumb').naturalWidth > 0)(%s)`, card(target)))); err != nil {
			t.Fatalf("the thumbnail of the running %s: %v", target, err)
		}
		if err := b.Screenshot(ctx, filepath.Join(shots, "web-ui-systems.png")); err != nil {
			t.Fatal(err)
		}

		t.Run("a viewer scoped away from the VM does not see it", func(t *testing.T) {
			hideFromViewer(t, env, a)
			phone := browser.Start(t, browser.Options{Phone: true})
			if err := phone.Do(ctx, chromedp.Navigate(env.URL+"/ui/"), chromedp.WaitVisible(chromedp.ID("login-submit"))); err != nil {
				t.Fatal(err)
			}
			loginAs(t, phone, viewerUser, viewerPass)
			waitCards(t, phone, total-1)
			hidden, err := browser.Run(ctx, phone, chromedp.Evaluate[bool](card(target)+` !== null`))
			if err != nil {
				t.Fatal(err)
			}
			if hidden {
				t.Errorf("the viewer's Systems page lists %s", target)
			}
			if err := phone.ScreenshotViewport(ctx, filepath.Join(shots, "web-ui-systems-phone.png")); err != nil {
				t.Fatal(err)
			}
			// Filtering for it finds nothing either.
			if err := phone.Do(ctx, chromedp.SendKeys(chromedp.ID("filter"), target),
				browser.WaitFor(`document.getElementById('range').textContent === 'no Systems'`)); err != nil {
				t.Fatal(err)
			}
			// Its console page gets the API's 404 for the VM.
			if err := phone.Do(ctx, chromedp.Navigate(env.URL+"/console/"+target),
				browser.WaitFor(`document.body.dataset.state === 'No such System'`)); err != nil {
				t.Fatalf("the scoped-away viewer's console page of %s: %v", target, err)
			}
			if err := phone.Do(ctx, chromedp.Navigate(env.URL+"/ui/systems.html")); err != nil {
				t.Fatal(err)
			}
			waitCards(t, phone, total-1)
			// Usable on a phone: nothing wider than the screen.
			overflow, err := browser.Run(ctx, phone, chromedp.Evaluate[int](
				`document.documentElement.scrollWidth - window.innerWidth`))
			if err != nil {
				t.Fatal(err)
			}
			if overflow > 0 {
				t.Errorf("the Systems page is %d px wider than a phone's screen", overflow)
			}
		})

		t.Run("the operator's console shows the VM's screen and takes a key", func(t *testing.T) {
			op := systemsPageAs(t, env, env.User, total)
			// Opened from the Systems page: noVNC through the bridge's relay,
			// kube-apiserver, the real virt-api's vnc and the simulator's
			// virt-handler to the VM's RFB server.
			if err := op.Do(ctx, chromedp.Click(chromedp.CSS(cardSel+" a.console")),
				browser.WaitFor(`['Connected', 'Closed', 'Disconnected', 'No such System'].includes(document.body.dataset.state)`)); err != nil {
				t.Fatal(err)
			}
			if state, err := browser.Run(ctx, op, chromedp.Evaluate[string](`document.body.dataset.state`)); err != nil || state != "Connected" {
				t.Fatalf("the operator's console page of %s: %q (%v), want Connected", target, state, err)
			}
			if err := op.Do(ctx, browser.WaitFor(browser.CanvasDrawn(consoleCanvas))); err != nil {
				t.Fatal(err)
			}
			got, err := browser.Canvas(ctx, op, consoleCanvas)
			if err != nil {
				t.Fatal(err)
			}
			name := vmName(vmWebUI)
			if d := vncscreen.Diff(got, vncscreen.Render(name, ""), vncscreen.TextBounds(name)); d != "" {
				t.Fatalf("the console's canvas does not show %s where the VM draws its name: %s", name, d)
			}
			if err := op.Screenshot(ctx, filepath.Join(shots, "web-console.png")); err != nil {
				t.Fatal(err)
			}
			screen, err := env.Sim.Screen(demo.VMNamespace, name)
			if err != nil {
				t.Fatal(err)
			}
			if err := op.Do(ctx, chromedp.Click(chromedp.CSS(consoleCanvas)), chromedp.KeyEvent("a")); err != nil {
				t.Fatal(err)
			}
			keyCtx, cancel := context.WithTimeout(ctx, 2*time.Minute) // a bound on failure, not a wait
			defer cancel()
			if err := screen.WaitKey(keyCtx, 'a'); err != nil {
				t.Fatalf("the VM never received the key typed in its console: %v (received %v)", err, screen.Keys())
			}
			if err := op.Do(ctx, chromedp.Click(chromedp.ID("disconnect")),
				browser.WaitFor(`document.body.dataset.state === 'Closed'`)); err != nil {
				t.Fatal(err)
			}
			// Opened again, it ends when its user logs out: the page only
			// deletes the session, the bridge closes the console. noVNC's
			// disconnect disables Ctrl-Alt-Del (enabled while an operator's
			// console is connected); the page's state may say Closed or,
			// once the DELETE has answered, Logged out, in either order.
			if err := op.Do(ctx, chromedp.Reload(),
				browser.WaitFor(`document.body.dataset.state === 'Connected' && !document.getElementById('cad').disabled`)); err != nil {
				t.Fatal(err)
			}
			logoutCtx, cancel := context.WithTimeout(ctx, 2*time.Minute) // a bound on failure, not a wait
			defer cancel()
			if err := op.Do(logoutCtx, chromedp.Click(chromedp.ID("logout")),
				browser.WaitFor(`document.getElementById('cad').disabled && !document.getElementById('login').hidden`)); err != nil {
				t.Fatalf("the console stayed open after its user logged out: %v", err)
			}
		})

		t.Run("a ReadOnly user sees the Systems and no action", func(t *testing.T) {
			ro := systemsPageAs(t, env, demo.ViewerUser, total)
			shown, err := browser.Run(ctx, ro, chromedp.Evaluate[int](
				`[...document.querySelectorAll('article.system button, article.system input')].filter(e => e.offsetParent !== null).length`))
			if err != nil {
				t.Fatal(err)
			}
			if shown != 0 {
				t.Errorf("the ReadOnly user's Systems page shows %d action controls, want 0", shown)
			}
			token, err := browser.Run(ctx, ro, chromedp.Evaluate[string](`sessionStorage.getItem('rf.token')`))
			if err != nil {
				t.Fatal(err)
			}
			viewer := &rfClient{env: env, token: token, http: rf.http}
			if got := viewer.do(t, http.MethodPost, "/redfish/v1/Systems/"+target+"/Actions/ComputerSystem.Reset", `{"ResetType":"ForceOff"}`, nil); got.status != http.StatusForbidden {
				t.Errorf("the ReadOnly user's ForceOff: %d %v, want 403", got.status, got.body)
			}
			if got := viewer.do(t, http.MethodPost, "/redfish/v1/Managers/"+target+"/Actions/Oem/RedfishBridge.ConsoleToken", `{}`, nil); got.status != http.StatusOK || got.body["ViewOnly"] != true {
				t.Errorf("the ReadOnly user's console token: %d %v, want 200 ViewOnly", got.status, got.body)
			}
			if got := rf.get(t, "/redfish/v1/Systems/"+target).body["PowerState"]; got != "On" {
				t.Errorf("%s after the ReadOnly user's ForceOff: %v, want On", target, got)
			}
			// Its console page, opened from its Systems page, is view-only
			// (the screen itself is vncconsole.TestConsolePageInChromium's).
			if err := ro.Do(ctx, chromedp.Click(chromedp.CSS(cardSel+" a.console")),
				browser.WaitFor(`document.getElementById('mode')?.textContent === 'View only'`)); err != nil {
				t.Fatalf("the ReadOnly user's console page of %s: %v", target, err)
			}
		})

		// Logout returns to the login page and ends the session.
		token, err := browser.Run(ctx, b, chromedp.Evaluate[string](`sessionStorage.getItem('rf.token')`))
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Do(ctx, chromedp.Click(chromedp.ID("logout")), chromedp.WaitVisible(chromedp.ID("login-submit"))); err != nil {
			t.Fatal(err)
		}
		if path := location(t, b); path != "/ui/" {
			t.Errorf("logout led to %s, want /ui/", path)
		}
		old := &rfClient{env: env, token: token, http: rf.http}
		if got := old.do(t, http.MethodGet, "/redfish/v1/Systems", "", nil); got.status != http.StatusUnauthorized {
			t.Errorf("the logged-out token reads Systems: %d, want 401", got.status)
		}
	})
}

const viewerUser, viewerPass = "webui-viewer", "viewer-pw"

// consoleCanvas selects noVNC's canvas on the console page.
const consoleCanvas = "#screen canvas"

// hideFromViewer labels vm-15 and adds viewerUser, who sees the demo
// namespace but not VMs with that label, and waits until the viewer can
// log in.
func hideFromViewer(t *testing.T, env *demo.Env, a admin) {
	t.Helper()
	label, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{hiddenLabel: "true"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.dyn.Resource(kubevirt.VirtualMachines).Namespace(demo.VMNamespace).Patch(t.Context(), vmName(vmWebUI), types.MergePatchType, label, metav1.PatchOptions{}); err != nil {
		t.Fatalf("label %s: %v", vmName(vmWebUI), err)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(viewerPass), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	patch, err := json.Marshal(map[string]any{"data": map[string][]byte{
		viewerUser: hash, viewerUser + auth.SuffixNamespaces: []byte(demo.VMNamespace),
		viewerUser + auth.SuffixSelector: []byte("!" + hiddenLabel),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.kube.CoreV1().Secrets(env.Cluster.BridgeNamespace).Patch(t.Context(), demo.UsersSecret, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("add the viewer: %v", err)
	}
	viewer := &rfClient{env: env, user: viewerUser, pass: viewerPass, http: newRFClient(env).http}
	waitFor(t, "the viewer is scoped away from "+sysID(vmWebUI), func() (bool, string) {
		got := viewer.do(t, http.MethodGet, "/redfish/v1/Systems/"+sysID(vmWebUI), "", nil)
		return got.status == http.StatusNotFound, fmt.Sprint(got.status)
	})
}

// systemsPageAs starts a browser, logs user (the demo's password) in and
// waits until its Systems page shows the first page of total Systems.
func systemsPageAs(t *testing.T, env *demo.Env, user string, total int) *browser.Browser {
	t.Helper()
	b := browser.Start(t, browser.Options{})
	if err := b.Do(t.Context(), chromedp.Navigate(env.URL+"/ui/"), chromedp.WaitVisible(chromedp.ID("login-submit"))); err != nil {
		t.Fatal(err)
	}
	loginAs(t, b, user, env.Password)
	waitCards(t, b, total)
	return b
}

// loginAs logs in on b's login page and waits for the Systems page.
func loginAs(t *testing.T, b *browser.Browser, user, password string) {
	t.Helper()
	if err := b.Do(t.Context(),
		chromedp.SendKeys(chromedp.ID("user"), user),
		chromedp.SendKeys(chromedp.ID("password"), password),
		chromedp.Click(chromedp.ID("login-submit")),
		browser.WaitFor(`location.pathname === '/ui/systems.html' || !document.getElementById('login-error')?.hidden`),
	); err != nil {
		t.Fatal(err)
	}
	if path := location(t, b); path != "/ui/systems.html" {
		msg, _ := browser.Run(t.Context(), b, chromedp.Text(chromedp.ID("login-error")))
		t.Fatalf("%s's login stayed on %s: %s", user, path, msg)
	}
}

// webPageSize is how many Systems the Systems page shows at once
// (webui/static/systems.js's pageSize).
const webPageSize = 20

// waitCards waits until the Systems page shows the first page of a
// collection of total Systems, each with its power state read.
func waitCards(t *testing.T, b *browser.Browser, total int) {
	t.Helper()
	n := min(total, webPageSize)
	if err := b.Do(t.Context(), browser.WaitFor(fmt.Sprintf(
		`(cs => cs.length === %d && cs.every(c => c.dataset.power))([...document.querySelectorAll('article.system')])`, n))); err != nil {
		shown, _ := browser.Run(t.Context(), b, chromedp.Evaluate[string](
			`document.querySelectorAll('article.system').length + ' cards, range ' + document.getElementById('range')?.textContent`))
		t.Fatalf("the Systems page of %d Systems: want %d cards: %v (the page shows %s)", total, n, err, shown)
	}
}

// waitCard waits until the card of id shows want in its field (a class:
// power, media, boot), or its last action's message says it failed,
// which fails t with that message.
func waitCard(t *testing.T, b *browser.Browser, id, field, want string) {
	t.Helper()
	c := card(id)
	if err := b.Do(t.Context(), browser.WaitFor(fmt.Sprintf(
		`%[1]s.querySelector('.%[2]s').textContent === %[3]q || %[1]s.querySelector('.message.bad') !== null`, c, field, want))); err != nil {
		t.Fatal(err)
	}
	got, err := browser.Run(t.Context(), b, chromedp.Evaluate[[]string](fmt.Sprintf(
		`[%[1]s.querySelector('.%[2]s').textContent, %[1]s.querySelector('.message').textContent]`, c, field)))
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != want {
		t.Fatalf("%s's %s shows %q, want %q; the page says %q", id, field, got[0], want, got[1])
	}
}

// card is the JavaScript expression of the Systems page's card of id.
func card(id string) string {
	return fmt.Sprintf("document.querySelector('article.system[data-id=%q]')", id)
}

func location(t *testing.T, b *browser.Browser) string {
	t.Helper()
	path, err := browser.Run(t.Context(), b, chromedp.Evaluate[string](`location.pathname`))
	if err != nil {
		t.Fatal(err)
	}
	return path
}
