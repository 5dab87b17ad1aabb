package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// DefaultPath is where Debian installs chromium; $CHROMIUM overrides it.
const DefaultPath = "/usr/bin/chromium"

// Options shape a [Browser].
type Options struct {
	// Width and Height are the viewport's size in CSS pixels (default
	// 1280x800).
	Width, Height int
	// Phone emulates a phone's screen of Width x Height (390x844 when
	// zero): a mobile, touch viewport, as a phone's browser lays out.
	Phone bool
}

// Browser is one headless chromium process, its profile a temp directory
// removed when the test ends. Its tabs ([Browser.Tab]) share the
// profile's cookies but not their sessionStorage.
type Browser struct {
	ctx    context.Context //nolint:containedctx // chromedp's handle on the browser is a context
	cancel context.CancelFunc
	view   chromedp.Action[chromedp.Void] // sizes each tab's viewport
}

// Path returns the chromium binary the tests run, or calls
// [testutil.Missing] when it is not installed.
func Path(t testing.TB) string {
	t.Helper()
	p := DefaultPath
	if env := os.Getenv("CHROMIUM"); env != "" {
		p = env
	}
	if _, err := exec.LookPath(p); err != nil {
		testutil.Missing(t, "chromium not found at %s (Debian's chromium; $CHROMIUM names another)", p)
	}
	return p
}

// Start launches chromium for t and stops it when t ends. The browser
// trusts any certificate (the bridge's tests serve self-signed ones).
func Start(t testing.TB, o Options) *Browser {
	t.Helper()
	switch {
	case o.Width > 0 && o.Height > 0:
	case o.Phone:
		o.Width, o.Height = 390, 844
	default:
		o.Width, o.Height = 1280, 800
	}
	view := chromedp.EmulateViewport(int64(o.Width), int64(o.Height))
	if o.Phone {
		view = chromedp.EmulateViewport(int64(o.Width), int64(o.Height), chromedp.EmulateMobile, chromedp.EmulateTouch)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(Path(t)),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(o.Width, o.Height),
		chromedp.Flag("ignore-certificate-errors", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	if os.Geteuid() == 0 {
		// chromium refuses to run as root with its sandbox.
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, acancel := chromedp.NewExecAllocator(context.WithoutCancel(t.Context()), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf), chromedp.WithErrorf(t.Logf))
	b := &Browser{ctx: ctx, cancel: func() { cancel(); acancel() }, view: view}
	t.Cleanup(b.cancel)
	// The first Run starts the process: fail here, not in the first step.
	if err := chromedp.Do(ctx, view); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return b
}

// Tab opens a new tab of b (its own sessionStorage, so its own Redfish
// session), closed when t ends.
func (b *Browser) Tab(t testing.TB) *Browser {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, b.view); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	return &Browser{ctx: ctx, cancel: cancel, view: b.view}
}

// StepBound bounds a [Run] or [Browser.Do] whose ctx has no deadline: a
// bound on failure, never a wait. A page that never shows what a step
// waits for (or a chromium that hangs) fails that step, naming it, rather
// than running into go test's -timeout, whose goroutine dump names no
// step.
const StepBound = 3 * time.Minute

// Do runs steps in b's tab, in order, bounded by ctx, or by [StepBound]
// when ctx has no deadline.
func (b *Browser) Do(ctx context.Context, steps ...chromedp.Action[chromedp.Void]) error {
	_, err := Run(ctx, b, chromedp.Steps(steps...))
	return err
}

// Run runs a in b's tab and returns its value, bounded by ctx, or by
// [StepBound] when ctx has no deadline.
func Run[T any](ctx context.Context, b *Browser, a chromedp.Action[T]) (T, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancelBound context.CancelFunc
		ctx, cancelBound = context.WithTimeout(ctx, StepBound)
		defer cancelBound()
	}
	tctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	v, err := chromedp.Run(tctx, a)
	if err != nil {
		if ctx.Err() != nil {
			return v, fmt.Errorf("browser: %w (%w)", err, ctx.Err())
		}
		return v, fmt.Errorf("browser: %w", err)
	}
	return v, nil
}

// WaitFor waits until the JavaScript expression is truthy in b's tab,
// re-evaluated at every animation frame, for as long as ctx lives. A
// navigation meanwhile (a login that moves to the next page) starts the
// wait again on the new document.
func WaitFor(expression string) chromedp.Action[chromedp.Void] {
	poll := chromedp.Poll[chromedp.Void](expression, chromedp.WithPollingTimeout(0))
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		for {
			v, err := poll(ctx, t)
			if err == nil || !navigatedAway(err) || ctx.Err() != nil {
				return v, err
			}
		}
	}
}

// navigatedAway reports whether err is the DevTools protocol's answer to
// an evaluation whose document went away.
func navigatedAway(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "navigated or closed") || strings.Contains(msg, "context was destroyed") ||
		strings.Contains(msg, "Cannot find context")
}

// Screenshot writes a PNG of the whole page of b's tab to path.
func (b *Browser) Screenshot(ctx context.Context, path string) error {
	return b.screenshot(ctx, path, chromedp.FullScreenshot(100))
}

// ScreenshotViewport writes a PNG of what b's viewport shows to path
// (a phone's screen, not the whole page).
func (b *Browser) ScreenshotViewport(ctx context.Context, path string) error {
	return b.screenshot(ctx, path, chromedp.CaptureScreenshot())
}

func (b *Browser) screenshot(ctx context.Context, path string, capture chromedp.Action[[]byte]) error {
	png, err := Run(ctx, b, capture)
	if err != nil {
		return fmt.Errorf("screenshot %s: %w", path, err)
	}
	if len(png) == 0 {
		return errors.New("screenshot " + path + ": empty")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	if err := os.WriteFile(path, png, 0o600); err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	return nil
}
