// Package lintcheck holds the checks on the repository's code that
// golangci-lint cannot make itself: nolintlint reports a directive that
// suppresses nothing only for a linter that runs, so a //nolint naming a
// linter .golangci.yml does not enable would stay, and mean nothing,
// without TestNolintNamesRunningLinters; and TestNoPollWindows keeps
// apimachinery's wait.Poll windows out of test code (tests wait on
// events).
package lintcheck
