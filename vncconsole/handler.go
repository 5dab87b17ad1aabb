package vncconsole

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Screens opens a System's screen: KubeVirt's vnc subresource of its
// running VMI, as a stream of RFB bytes.
type Screens interface {
	OpenScreen(ctx context.Context, key system.Key) (io.ReadWriteCloser, error)
}

// Sessions tells whether a Redfish session was logged out (on any
// replica).
type Sessions interface {
	Revoked(ctx context.Context, id string) (bool, error)
}

// TokenParam is the query parameter of the console WebSocket carrying its
// one-time token.
const TokenParam = "token"

// Handler serves the console WebSocket of each System: it redeems the
// token, checks the Origin, the session and the limits, opens the
// screen, then relays RFB both ways (view-only grants through
// [rfb.ViewOnly]) and writes one audit line when the console ends.
type Handler struct {
	cfg      Config
	tokens   *Tokens
	screens  Screens
	sessions Sessions
	limits   *limits
	upgrader websocket.Upgrader

	mu   sync.Mutex
	byID map[string]map[chan error]struct{} // session id -> its open consoles' end channels
}

// NewHandler returns the console WebSocket handler.
func NewHandler(cfg Config, tokens *Tokens, screens Screens, sessions Sessions) *Handler {
	cfg = cfg.withDefaults()
	return &Handler{
		cfg: cfg, tokens: tokens, screens: screens, sessions: sessions,
		limits: newLimits(cfg.MaxSessionsPerUser, cfg.MaxSessionsPerSystem),
		upgrader: websocket.Upgrader{
			ReadBufferSize: 4 << 10, WriteBufferSize: 4 << 10,
			CheckOrigin: sameOrigin,
		},
		byID: map[string]map[chan error]struct{}{},
	}
}

// ServeVNC serves the console WebSocket of System id (the path's).
func (h *Handler) ServeVNC(w http.ResponseWriter, r *http.Request, id string) {
	ctx := r.Context()
	log := logctx.From(ctx)
	fail := func(status int, err error) {
		log.InfoContext(ctx, "console refused", "system", id, "status", status, "err", err)
		http.Error(w, err.Error(), status)
	}
	if !sameOrigin(r) {
		fail(http.StatusForbidden, fmt.Errorf("origin %q is not this service's", r.Header.Get("Origin")))
		return
	}
	g, err := h.tokens.Redeem(r.URL.Query().Get(TokenParam), id)
	if err != nil {
		fail(http.StatusUnauthorized, err)
		return
	}
	if revoked, err := h.sessions.Revoked(ctx, g.Session); err != nil || revoked {
		fail(http.StatusUnauthorized, errors.Join(ErrSessionEnded, err))
		return
	}
	key, err := system.ParseID(id)
	if err != nil {
		fail(http.StatusNotFound, err)
		return
	}
	release, err := h.limits.acquire(g.User, id)
	if err != nil {
		fail(http.StatusTooManyRequests, err)
		return
	}
	defer release()
	screen, err := h.screens.OpenScreen(ctx, key)
	if err != nil {
		fail(http.StatusConflict, fmt.Errorf("open the screen of %s: %w", id, err))
		return
	}
	browser, err := h.upgrader.Upgrade(w, r, nil)
	if err != nil {
		_ = screen.Close()
		log.InfoContext(ctx, "console refused", "system", id, "err", err)
		return // the upgrader answered
	}
	ended := h.watch(g.Session)
	defer h.unwatch(g.Session, ended)
	checkCtx, stopCheck := context.WithCancel(context.WithoutCancel(ctx))
	defer stopCheck()
	go h.checkSession(checkCtx, g.Session, ended)
	start, n := time.Now(), &relayed{}
	log.InfoContext(ctx, "console opened", "user", g.User, "session", g.Session, "system", id, "viewOnly", g.ViewOnly)
	why := h.relay(context.WithoutCancel(ctx), browser, screen, g.ViewOnly, ended, n)
	release() // counted closed before its audit line says so
	log.InfoContext(ctx, "console closed", "user", g.User, "session", g.Session, "system", id, "viewOnly", g.ViewOnly,
		"duration", time.Since(start).Round(time.Millisecond), "bytesIn", n.in.Load(), "bytesOut", n.out.Load(), "reason", why.Error())
}

// sameOrigin accepts a request without an Origin (not a browser: the
// token is still required) or with this host's: a page of another site
// cannot open a console with a token it obtained.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Host, r.Host)
}

// SessionEnded ends the open consoles of Redfish session id at once (the
// logout hook of this replica).
func (h *Handler) SessionEnded(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.byID[id] {
		end(ch, ErrSessionEnded)
	}
}

// endAll ends every open console with err.
func (h *Handler) endAll(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, chs := range h.byID {
		for ch := range chs {
			end(ch, err)
		}
	}
}

// end tells a console why it ends, unless it was told already.
func end(ch chan<- error, err error) {
	select {
	case ch <- err:
	default:
	}
}

// checkSession asks every SessionCheck whether session id was logged out
// (on any replica) until ctx ends, and says so on ended.
func (h *Handler) checkSession(ctx context.Context, id string, ended chan<- error) {
	t := time.NewTicker(h.cfg.SessionCheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if revoked, err := h.sessions.Revoked(ctx, id); err == nil && revoked {
			select {
			case ended <- ErrSessionEnded:
			default:
			}
			return
		}
	}
}

// watch registers a console of session id; the channel receives why the
// session ended.
func (h *Handler) watch(id string) chan error {
	ch := make(chan error, 1)
	h.mu.Lock()
	if h.byID[id] == nil {
		h.byID[id] = map[chan error]struct{}{}
	}
	h.byID[id][ch] = struct{}{}
	h.mu.Unlock()
	return ch
}

func (h *Handler) unwatch(id string, ch chan error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.byID[id], ch)
	if len(h.byID[id]) == 0 {
		delete(h.byID, id)
	}
}

// Open is the number of open consoles.
func (h *Handler) Open() int { return h.limits.open() }
