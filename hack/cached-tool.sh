#!/usr/bin/env bash
# cached-tool.sh OUT TOOLDIR LDFLAGS -- BUILD...
#
# Builds a pinned tool into OUT once per machine: the binary is kept in
# $TOOLS_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/redfish-bridge/tools),
# keyed by the tool module's sources, the ldflags and the Go version, so a
# fresh clone (CI) copies it instead of building it again (kube-apiserver and
# virt-controller take minutes even with a warm Go build cache).
# TOOLS_CACHE= (empty) turns the cache off. BUILD runs in TOOLDIR and must
# write $OUT.tmp.
set -euo pipefail
out=$1 tooldir=$2 ldflags=$3
shift 3
[ "$1" = -- ] && shift

cache=${TOOLS_CACHE-${XDG_CACHE_HOME:-$HOME/.cache}/redfish-bridge/tools}
# The key: every source file of the tool module and of the local modules its
# go.mod replaces it with (hack/kubevirt-stubs), the flags, the Go version.
srcs() {
  local d=$1
  find "$d" -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) -not -path '*/bin/*'
  sed -n 's/.*=> \(\.[^ ]*\).*/\1/p' "$d/go.mod" | while read -r rel; do
    find "$d/$rel" -type f \( -name '*.go' -o -name go.mod -o -name go.sum \)
  done
}
key=$( { srcs "$tooldir" | LC_ALL=C sort | xargs cat; echo "$ldflags"; go env GOVERSION GOOS GOARCH; } | sha256sum | cut -c1-16)
cached=${cache:+$cache/$(basename "$out")-$key}

if [ -n "$cached" ] && [ -x "$cached" ]; then
  echo "tools: $(basename "$out") from $cached"
  cp -f "$cached" "$out.tmp"
else
  (cd "$tooldir" && "$@")
  if [ -n "$cached" ]; then
    mkdir -p "$cache"
    cp -f "$out.tmp" "$cached.tmp.$$" && mv -f "$cached.tmp.$$" "$cached"
  fi
fi
mv -f "$out.tmp" "$out"
