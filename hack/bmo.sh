#!/usr/bin/env bash
# bmo.sh build|path|check [version]
#
# metal3's baremetal-operator (BMO), v0.13.2 (the default) or v0.14.0-rc.0
# (`0.14`, or BMO_VERSION), built from the unmodified tree
# in ../shared/third_party (the Go module proxy refuses it and its
# ironic-standalone-operator/api dependency: a replace points the second at
# its source beside it; every other module comes from the proxy), for
# e2e/metal3, which runs its manager as a process (nothing here starts it).
# Built once per machine into $BMO_CACHE (default
# ${XDG_CACHE_HOME:-~/.cache}/redfish-bridge) as bmo-<version>-<key>/manager,
# the key hashing both source trees, the Go version and the recipe number
# (bump it when the build below changes), so a fresh clone (CI) reuses it.
# 0.14's manager needs its plugin: PROVISIONER_PLUGIN_DIR=<dir>/plugins.
#
#   build  builds the manager when missing and prints its path. The build
#          runs on a copy of the tree in a temporary directory renamed into
#          place at the end: a killed build leaves no half binary (the next
#          build removes its leftovers). 9-30 min on the loaded 2-core
#          machine with a cold Go build cache, about 1 min with a warm one.
#   path   prints the manager's path whether or not it exists.
#   check  exits 0 when the manager is there.
set -euo pipefail

version=${2:-${BMO_VERSION:-0.13.2}}
recipe=1
here=$(cd "$(dirname "$0")/.." && pwd)
third=${BMO_THIRD_PARTY:-$here/../shared/third_party}
# Each BMO release needs its own ironic-standalone-operator/api. 0.14 loads
# its Ironic provisioner as a Go plugin (-buildmode=plugin, cgo): built
# beside the manager, from the same tree and toolchain, into
# plugins/ironic-provisioner.so (the manager's PROVISIONER_PLUGIN_DIR).
plugin=
case $version in
0.13.2) api_version=0.8.2 ;;
0.14 | 0.14.0-rc.0) version=0.14.0-rc.0 api_version=0.10.0 plugin=ironic recipe=2 ;;
*) echo "bmo: unknown version $version (0.13.2 or 0.14.0-rc.0)" >&2; exit 2 ;;
esac
src=$third/baremetal-operator-$version
api=$third/ironic-standalone-operator-api-$api_version/api
cache=${BMO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/redfish-bridge}
go=${GO:-go}

case ${1:-} in
path | check | build) ;;
*) echo "usage: $0 build|path|check [0.13.2|0.14]" >&2; exit 2 ;;
esac

if [ ! -d "$src" ] || [ ! -d "$api" ]; then
  echo "bmo: source missing: $src and $api (the ../shared checkout beside the repository)" >&2
  exit 1
fi
command -v "$go" >/dev/null || { echo "bmo: $go missing" >&2; exit 1; }

# The key: every file of both trees (names and contents), the Go version
# and the recipe.
tree_hash() {
  (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16
}
key=$(echo "$(tree_hash "$src") $(tree_hash "$api") $("$go" env GOVERSION) $recipe" | sha256sum | cut -c1-12)
root=$cache/bmo-$version-$key
manager=$root/manager

case $1 in
path) echo "$manager"; exit 0 ;;
check) [ -x "$manager" ]; exit ;;
esac

if [ -x "$manager" ]; then
  echo "$manager"
  exit 0
fi
mkdir -p "$cache"
exec 9>"$cache/bmo.lock"
flock 9 # one build at a time; a second waits and then finds it built
if [ -x "$manager" ]; then
  echo "$manager"
  exit 0
fi
for old in "$cache"/bmo-*.tmp.*; do
  if [ -e "$old" ]; then rm -rf "$old"; fi
done

tmp=$root.tmp.$$
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"
cp -r "$src" "$tmp/src"
chmod -R u+w "$tmp/src"
start=$(date +%s)
echo "bmo: building baremetal-operator $version into $root (a cold Go build cache takes 9-30 min here)" >&2
(
  cd "$tmp/src"
  "$go" mod edit -replace "github.com/metal3-io/ironic-standalone-operator/api=$(cd "$api" && pwd)"
  # No -trimpath: the flags match the cache warmed by a plain `go build`.
  nice -n 10 "$go" build -o "$tmp/manager" .
  if [ -n "$plugin" ]; then
    # The host and its plugin share packages: one tree, one toolchain, cgo.
    CGO_ENABLED=1 nice -n 10 "$go" build -buildmode=plugin -o "$tmp/plugins/$plugin-provisioner.so" "./pkg/provisioner/$plugin/plugin/"
  fi
) >"$tmp.log" 2>&1 || {
  tail -n 30 "$tmp.log" >&2
  rm -f "$tmp.log"
  exit 1
}
rm -f "$tmp.log"
rm -rf "$tmp/src"
"$tmp/manager" --help >/dev/null 2>&1 || {
  echo "bmo: the built manager does not run" >&2
  exit 1
}
echo "bmo: built in $(($(date +%s) - start)) s ($(du -sh "$tmp/manager" | cut -f1))" >&2
mv -T "$tmp" "$root"
trap - EXIT
echo "$manager"
