package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/redfish-bridge/redfish-bridge/redfish"
	"github.com/redfish-bridge/redfish-bridge/system"
	"github.com/redfish-bridge/redfish-bridge/thumbnail"
)

// thumbnails are the Systems page's thumbnails as the Redfish service
// needs them: a System that is not running is a conflict (409).
type thumbnails struct{ cache *thumbnail.Cache }

func (t thumbnails) Thumbnail(ctx context.Context, key system.Key) ([]byte, error) {
	img, err := t.cache.Thumbnail(ctx, key)
	if errors.Is(err, thumbnail.ErrNotRunning) {
		return nil, fmt.Errorf("%w: %w", redfish.ErrConflict, err)
	}
	return img, err
}
