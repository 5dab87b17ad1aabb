package main

import (
	"context"

	"github.com/redfish-bridge/redfish-bridge/media/download"
)

// runImport is the import pods' entrypoint: download --url into --dest.
func runImport(ctx context.Context, s streams, args []string) error {
	return download.RunImport(ctx, flagSet("import", importSummary, s), args, s.out)
}
