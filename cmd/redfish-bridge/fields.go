package main

import (
	"context"

	"github.com/redfish-bridge/redfish-bridge/fields"
)

// pluginName is the kubectl plugin name: a symlink kubectl-redfish_fields
// -> redfish-bridge on $PATH makes `kubectl redfish-fields NS/VM` work.
const pluginName = "kubectl-redfish_fields"

// runFields prints who owns what on a VM (see package fields).
func runFields(ctx context.Context, s streams, args []string) error {
	return fields.Run(ctx, flagSet("fields", fieldsSummary, s, "NAMESPACE/VM"), args, s.out)
}
