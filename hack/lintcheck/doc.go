// Package lintcheck holds the checks on the repository's lint setup that
// golangci-lint cannot make itself: nolintlint reports a directive that
// suppresses nothing only for a linter that runs, so a //nolint naming a
// linter .golangci.yml does not enable would stay, and mean nothing,
// without the test here.
package lintcheck
