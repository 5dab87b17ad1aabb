package service

import (
	"context"
	"net"
	"net/http"

	"github.com/redfish-bridge/redfish-bridge/internal/connshare"
)

// The HTTPS service's listener is a [connshare.Listener] capped at
// --max-connections: each connection counts against its address until one
// of its requests authenticates ([markAuthenticated]), then against its
// user, and a new connection past the cap closes one from whoever holds
// more than its share (an unfinished TLS handshake first, an
// authenticated, recently active connection last). The server reports
// each connection's state ([trackConns]) for that order.

// connKey carries a request's connection in its context.
type connKey struct{}

// trackConns makes srv report its connections' states and contexts to the
// connshare.Listener they came from.
func trackConns(srv *http.Server) {
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if lc := connshare.Of(c); lc != nil {
			return context.WithValue(ctx, connKey{}, lc)
		}
		return ctx
	}
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		if lc := connshare.Of(c); lc != nil {
			lc.SetStage(stageOf(s))
		}
	}
}

// stageOf is how far a connection in state s got.
func stageOf(s http.ConnState) connshare.Stage {
	switch s {
	case http.StateNew:
		return connshare.StageNew
	case http.StateIdle:
		return connshare.StageIdle
	default:
		return connshare.StageBusy
	}
}

// markAuthenticated records that a request with context ctx (served by
// [serve]) authenticated as user, so that its connection counts against
// that user's share, not its address's: the redfish.Config.Authenticated
// hook.
func markAuthenticated(ctx context.Context, user string) {
	if lc, ok := ctx.Value(connKey{}).(*connshare.Conn); ok {
		lc.Authenticated(user)
	}
}
