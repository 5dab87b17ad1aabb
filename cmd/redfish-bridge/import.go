package main

import (
	"context"
	"os"

	"github.com/redfish-bridge/redfish-bridge/media"
)

// runImport is the import pods' entrypoint: download --url into --dest.
func runImport(ctx context.Context, args []string) error {
	return media.RunImport(ctx, args, os.Stdout)
}
