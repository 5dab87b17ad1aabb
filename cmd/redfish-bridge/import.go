package main

import (
	"context"

	"github.com/redfish-bridge/redfish-bridge/media"
)

// runImport is the import pods' entrypoint: download --url into --dest.
func runImport(ctx context.Context, s streams, args []string) error {
	return media.RunImport(ctx, flagSet("import", importSummary, s), args, s.out)
}
