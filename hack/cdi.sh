#!/usr/bin/env bash
# cdi.sh build|path|check|install DIR|generate
#
# CDI (kubevirt/containerized-data-importer) v1.66.0's cdi-controller and
# cdi-apiserver, built from the unmodified tree in ../shared/third_party
# (the Go module proxy refuses the main module; every dependency comes from
# the proxy at the versions its go.mod pins), with hack/cdi/manifests (which
# prints what CDI's operator installs: CRDs, webhook configurations, RBAC,
# Deployments) built beside them in the same module. Built once per machine
# into the tool cache $TOOLS_CACHE (default
# ${XDG_CACHE_HOME:-~/.cache}/redfish-bridge/tools) as
# cdi-<version>-<key>/, the key hashing the CDI tree, hack/cdi/, the Go
# version and the recipe number (bump it when the build below changes), so
# a fresh clone (CI) reuses it.
#
#   build     builds the three programs when missing and prints the
#             directory. The build runs on a copy of the tree in a
#             temporary directory renamed into place at the end: a killed
#             build leaves no half binary (the next build removes its
#             leftovers).
#   path      prints the directory whether or not it exists.
#   check     exits 0 when the programs are there.
#   install   DIR: copies cdi-controller and cdi-apiserver into DIR (a
#             running test cluster keeps its old executables: copy, rename).
#   generate  writes crds/cdi and harness/testcluster/cdi from CDI's
#             operator code (run from the repository root; builds first).
set -euo pipefail

version=1.66.0
recipe=1
here=$(cd "$(dirname "$0")/.." && pwd)
third=${CDI_THIRD_PARTY:-$here/../shared/third_party}
src=$third/containerized-data-importer-$version
gen=$here/hack/cdi/manifests
cache=${TOOLS_CACHE-${XDG_CACHE_HOME:-$HOME/.cache}/redfish-bridge/tools}
cache=${cache:-$HOME/.cache/redfish-bridge/tools}
go=${GO:-go}
programs=(cdi-controller cdi-apiserver cdi-manifests)

case ${1:-} in
path | check | build | generate) ;;
install) [ -n "${2:-}" ] || { echo "usage: $0 install DIR" >&2; exit 2; } ;;
*) echo "usage: $0 build|path|check|install DIR|generate" >&2; exit 2 ;;
esac

if [ ! -d "$src" ]; then
  echo "cdi: source missing: $src (the ../shared checkout beside the repository, or CDI_THIRD_PARTY)" >&2
  exit 1
fi
command -v "$go" >/dev/null || { echo "cdi: $go missing" >&2; exit 1; }

# tree_hash DIR [NAME]: the files under DIR (named NAME, a find -name
# pattern). Of hack/cdi/manifests only the Go sources count: its go.mod
# (a module of its own, so the product's go mod tidy skips it) is not
# built.
tree_hash() {
  (cd "$1" && find . -type f -name "${2:-*}" -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16
}
key=$(echo "$(tree_hash "$src") $(tree_hash "$gen" '*.go') $("$go" env GOVERSION GOOS GOARCH | tr '\n' ' ') $recipe" | sha256sum | cut -c1-12)
root=$cache/cdi-$version-$key

built() {
  local p
  for p in "${programs[@]}"; do [ -x "$root/$p" ] || return 1; done
}

build() {
  if built; then return; fi
  mkdir -p "$cache"
  exec 9>"$cache/cdi.lock"
  flock 9 # one build at a time; a second waits and then finds it built
  if built; then return; fi
  for old in "$cache"/cdi-*.tmp.*; do
    if [ -e "$old" ]; then rm -rf "$old"; fi
  done
  tmp=$root.tmp.$$
  trap 'rm -rf "$tmp" "$tmp.log"' EXIT
  mkdir -p "$tmp"
  cp -r "$src" "$tmp/src"
  chmod -R u+w "$tmp/src"
  mkdir -p "$tmp/src/cmd/cdi-manifests"
  cp "$gen"/*.go "$tmp/src/cmd/cdi-manifests/"
  local start
  start=$(date +%s)
  echo "cdi: building cdi-controller and cdi-apiserver $version into $root (a cold Go build cache takes 10-25 min here)" >&2
  (
    cd "$tmp/src"
    # Module mode: CDI's vendor/ is not in the tree. Pure Go, as CDI's
    # images build them.
    CGO_ENABLED=0 GOFLAGS=-mod=mod nice -n 10 "$go" build -trimpath -ldflags "-s -w" -tags cdimanifests \
      -o "$tmp/" ./cmd/cdi-controller ./cmd/cdi-apiserver ./cmd/cdi-manifests
  ) >"$tmp.log" 2>&1 || {
    tail -n 30 "$tmp.log" >&2
    exit 1
  }
  rm -rf "$tmp/src" "$tmp.log"
  "$tmp/cdi-controller" --help >/dev/null 2>&1 || [ $? -le 2 ] || {
    echo "cdi: the built cdi-controller does not run" >&2
    exit 1
  }
  echo "cdi: built in $(($(date +%s) - start)) s ($(du -sh "$tmp" | cut -f1))" >&2
  mv -T "$tmp" "$root"
  trap - EXIT
}

case $1 in
path) echo "$root"; exit 0 ;;
check) built; exit ;;
build) build; echo "$root" ;;
install)
  build
  mkdir -p "$2"
  for p in cdi-controller cdi-apiserver; do
    cp -f "$root/$p" "$2/$p.tmp" && mv -f "$2/$p.tmp" "$2/$p"
  done
  ;;
generate)
  build
  cd "$here"
  "$root/cdi-manifests" crds/cdi harness/testcluster/cdi
  ;;
esac
