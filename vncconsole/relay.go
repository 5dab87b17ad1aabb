package vncconsole

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/redfish-bridge/redfish-bridge/rfb"
)

// maxClientMessage bounds one WebSocket message from the browser: an RFB
// client's messages are small but for a clipboard text.
const maxClientMessage = 1 << 20

// screenBuffer is the one buffer of the screen's bytes a console holds.
const screenBuffer = 64 << 10

// Errors that end a console (the audit log's reason).
var (
	ErrIdle          = errors.New("idle timeout")
	ErrSessionEnded  = errors.New("redfish session ended")
	ErrSlowBrowser   = errors.New("browser did not read the screen")
	ErrScreenClosed  = errors.New("the VM's screen closed")
	ErrBrowserClosed = errors.New("browser closed the console")
	ErrShutdown      = errors.New("the bridge is stopping")
)

// relayed counts a console's bytes each way.
type relayed struct{ in, out atomic.Int64 }

// relay carries RFB between browser and screen until one side ends, the
// browser idles, the session ends (ended) or ctx ends; it returns why.
// Input passes through [rfb.ViewOnly] when viewOnly.
func (h *Handler) relay(ctx context.Context, browser *websocket.Conn, screen io.ReadWriteCloser, viewOnly bool, ended <-chan error, n *relayed) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	wg.Go(func() { cancel(h.fromBrowser(browser, screen, viewOnly, n)) })
	wg.Go(func() { cancel(h.toBrowser(screen, browser, n)) })
	select {
	case <-ctx.Done():
	case err := <-ended:
		cancel(err)
	}
	_ = browser.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, closeReason(context.Cause(ctx))), time.Now().Add(time.Second))
	_ = browser.Close()
	_ = screen.Close()
	wg.Wait()
	return context.Cause(ctx)
}

// closeReason is the close frame's text (at most 123 bytes).
func closeReason(err error) string {
	s := err.Error()
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}

// fromBrowser copies the browser's messages to the screen.
func (h *Handler) fromBrowser(browser *websocket.Conn, screen io.Writer, viewOnly bool, n *relayed) error {
	browser.SetReadLimit(maxClientMessage)
	dst := screen
	if viewOnly {
		dst = rfb.ViewOnly(screen)
	}
	for {
		if err := browser.SetReadDeadline(time.Now().Add(h.cfg.IdleTimeout)); err != nil {
			return err
		}
		kind, r, err := browser.NextReader()
		var ne interface{ Timeout() bool }
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			return fmt.Errorf("%w: nothing from the browser for %s", ErrIdle, h.cfg.IdleTimeout)
		case websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway):
			return ErrBrowserClosed
		case err != nil:
			return fmt.Errorf("read browser: %w", err)
		case kind != websocket.BinaryMessage:
			return fmt.Errorf("browser sent a text message: RFB is binary")
		}
		c, err := io.Copy(dst, r)
		n.in.Add(c)
		if err != nil {
			return fmt.Errorf("to the screen: %w", err)
		}
	}
}

// toBrowser copies the screen's bytes to the browser, one buffer at a
// time, each write bounded by WriteTimeout.
func (h *Handler) toBrowser(screen io.Reader, browser *websocket.Conn, n *relayed) error {
	buf := make([]byte, screenBuffer)
	for {
		k, err := screen.Read(buf)
		if k > 0 {
			if err := browser.SetWriteDeadline(time.Now().Add(h.cfg.WriteTimeout)); err != nil {
				return err
			}
			if err := browser.WriteMessage(websocket.BinaryMessage, buf[:k]); err != nil {
				var ne interface{ Timeout() bool }
				if errors.As(err, &ne) && ne.Timeout() {
					return fmt.Errorf("%w within %s", ErrSlowBrowser, h.cfg.WriteTimeout)
				}
				return fmt.Errorf("write browser: %w", err)
			}
			n.out.Add(int64(k))
		}
		if errors.Is(err, io.EOF) {
			return ErrScreenClosed
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrScreenClosed, err)
		}
	}
}
