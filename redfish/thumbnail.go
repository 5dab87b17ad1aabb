package redfish

import (
	"context"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// Thumbnails are the screenshot thumbnails of running Systems (package
// thumbnail) the Systems page shows.
type Thumbnails interface {
	// Thumbnail returns the PNG of System key's screen; an error wrapping
	// [ErrConflict] when the System is not running (it has no screen).
	Thumbnail(ctx context.Context, key system.Key) ([]byte, error)
}

// thumbnailPath is a System's thumbnail, under its URI.
const thumbnailPath = "/Oem/RedfishBridge/Thumbnail"

// getThumbnail answers GET <System>/Oem/RedfishBridge/Thumbnail with the
// PNG of its screen: for a System in the caller's scope (else 404, as
// every resource of it), never cached by the client (a session's
// resource).
func (s *Server) getThumbnail(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	if s.b.Thumbnails == nil {
		return fmt.Errorf("thumbnail of %s: %w", v.Key, ErrNotFound)
	}
	img, err := s.b.Thumbnails.Thumbnail(c.Request().Context(), v.Key)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	return c.Blob(http.StatusOK, "image/png", img)
}
