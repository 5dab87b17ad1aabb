package webui_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/redfish-bridge/redfish-bridge/harness/browser"
)

// TestReadOnlyNoActions: the Systems page shows a ReadOnly user (its
// account's RoleId) its Systems and no action (power, boot, media), in
// real chromium; an Operator, the control, sees them (docs/reliability.md
// row 215: the API refuses the writes in any case).
func TestReadOnlyNoActions(t *testing.T) {
	b := browser.Start(t, browser.Options{})
	for _, tc := range []struct {
		role    string
		visible int // action controls shown on the page's 20 cards
	}{{"ReadOnly", 0}, {"Operator", 20 * 8}} {
		t.Run(tc.role, func(t *testing.T) {
			srv := serveWith(t, &scaleAPI{role: tc.role})
			ctx := t.Context()
			if err := b.Do(ctx, chromedp.Navigate(srv.URL+"/ui/"),
				chromedp.SendKeys(chromedp.ID("user"), "u"), chromedp.SendKeys(chromedp.ID("password"), "p"),
				chromedp.Click(chromedp.ID("login-submit")),
				browser.WaitFor(`document.querySelectorAll('article.system[data-power]').length === 20`),
			); err != nil {
				t.Fatal(err)
			}
			// Buttons and inputs of the cards that are displayed: an
			// element with no offsetParent is not.
			shown, err := browser.Run(ctx, b, chromedp.Evaluate[int](
				`[...document.querySelectorAll('article.system button, article.system input')].filter(e => e.offsetParent !== null).length`))
			if err != nil {
				t.Fatal(err)
			}
			if shown != tc.visible {
				t.Errorf("%s sees %d action controls on 20 Systems, want %d", tc.role, shown, tc.visible)
			}
		})
	}
}
