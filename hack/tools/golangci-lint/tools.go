//go:build tools

// Package tools pins golangci-lint v2.15.0, run by `make lint` with the
// repository's .golangci.yml.
package tools

import _ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
