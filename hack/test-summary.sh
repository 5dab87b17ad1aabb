#!/usr/bin/env bash
# Prints, after a failed `go test` run, what failed: every "--- FAIL" line,
# every failed package, and for a package that hit -timeout the tests it was
# still running (Go prints them at the head of a goroutine dump that CI's
# excerpt of the log cuts off). Usage: hack/test-summary.sh LOG...
set -euo pipefail
echo "== test summary: what failed =="
awk '
  FNR == 1 { name = FILENAME; sub(/.*\//, "", name) }
  /^panic: test timed out/ { dump = 1; print name ": " $0; next }
  dump && /^[[:space:]]*$/ { dump = 0; next }
  dump { print name ": " $0; next }
  /^[[:space:]]*--- FAIL/ || /^FAIL[[:space:]]/ || /^panic:/ { print name ": " $0 }
' "$@"
