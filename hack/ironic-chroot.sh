#!/usr/bin/env bash
# ironic-chroot.sh build|path|check
#
# A Debian unstable chroot holding a current OpenStack Ironic (39.0.0, with
# sushy 5.13.0) from Debian's own archive, for the e2e tests beside the
# host's Debian 12 Ironic 21.4 (harness/ironicproc runs it; nothing here is
# started). Built once per machine into
# $IRONIC_CHROOT_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/redfish-bridge)
# as ironic-chroot-<suite>-ironic<version>-<key>, the key hashing the suite,
# the mirror, the pinned versions, the packages and the recipe number (bump
# it when the build below changes), so a fresh clone (CI) reuses it.
#
#   build  builds the chroot when missing (debootstrap, then apt-get install
#          inside it) and prints its path. The build goes into a temporary
#          directory renamed into place at the end: a killed build leaves no
#          half chroot (the next build removes its leftovers). Every mount
#          the build makes lives in a private mount namespace (unshare -m)
#          and goes with it. Needs root and debootstrap.
#   path   prints the path whether or not it exists.
#   check  exits 0 when the chroot is there.
#
# Debian's unstable Release file may be past its Valid-Until: apt inside the
# chroot is told not to check it. The mirror is the host's Debian mirror
# (its apt sources), or $IRONIC_CHROOT_MIRROR.
set -euo pipefail

suite=${IRONIC_CHROOT_SUITE:-unstable}
# Upstream versions the tests are written for; the build fails when the
# suite carries others (the key names them, so a bump rebuilds).
ironic_version=39.0.0
sushy_version=5.13.0
# ipmitool: the `ipmi` hardware type and the ipmitool-socat console (with socat)
packages=(python3-ironic python3-sushy ipmitool socat)
recipe=1

mirror() {
  if [ -n "${IRONIC_CHROOT_MIRROR:-}" ]; then
    echo "$IRONIC_CHROOT_MIRROR"
    return
  fi
  # deb822 (URIs:) or one-line (deb URI suite ...) sources; the first
  # Debian archive that is not the security one.
  local m
  m=$( { grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}'
         grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list | awk '{for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) {print $i; break}}'
       } | grep -E '/debian/?$' | grep -v security | head -n1)
  echo "${m:-http://deb.debian.org/debian}"
}

cache=${IRONIC_CHROOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/redfish-bridge}
mirror=$(mirror)
key=$(echo "$suite $mirror $ironic_version $sushy_version ${packages[*]} $recipe" | sha256sum | cut -c1-12)
root=$cache/ironic-chroot-$suite-ironic$ironic_version-$key

case ${1:-} in
path) echo "$root"; exit 0 ;;
check) [ -x "$root/usr/bin/python3" ]; exit ;;
build) ;;
*) echo "usage: $0 build|path|check" >&2; exit 2 ;;
esac

if [ -x "$root/usr/bin/python3" ]; then
  echo "$root"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "ironic-chroot: building $root needs root (debootstrap, chroot)" >&2
  exit 1
fi
command -v debootstrap >/dev/null || { echo "ironic-chroot: debootstrap missing (apt-get install debootstrap)" >&2; exit 1; }
command -v unshare >/dev/null || { echo "ironic-chroot: unshare missing (util-linux)" >&2; exit 1; }

mkdir -p "$cache"
exec 9>"$cache/ironic-chroot.lock"
flock 9 # one build at a time; a second waits and then finds it built
if [ -x "$root/usr/bin/python3" ]; then
  echo "$root"
  exit 0
fi

# Leftovers of killed builds: their mount namespaces died with them, so
# nothing is mounted there any more (checked anyway before removing).
for old in "$cache"/ironic-chroot-*.tmp.*; do
  [ -d "$old" ] || { rm -f "$old"; continue; }
  if findmnt -rn -o TARGET | grep -qF "$old"; then
    echo "ironic-chroot: $old still has mounts; leaving it" >&2
    continue
  fi
  rm -rf --one-file-system "$old"
done

tmp=$root.tmp.$$
trap 'findmnt -rn -o TARGET | grep -qF "$tmp" || rm -rf --one-file-system "$tmp"' EXIT
mkdir -p "$tmp"

start=$(date +%s)
echo "ironic-chroot: debootstrap $suite from $mirror into $tmp" >&2
# minbase: apt and dpkg only; what Ironic needs comes with its packages.
unshare -m --propagation private debootstrap --variant=minbase "$suite" "$tmp" "$mirror" >"$tmp.log" 2>&1 || {
  tail -n 30 "$tmp.log" >&2
  rm -f "$tmp.log"
  exit 1
}
rm -f "$tmp.log"
boot=$(date +%s)
echo "ironic-chroot: debootstrap took $((boot - start)) s" >&2

cat >"$tmp/etc/apt/apt.conf.d/90redfish-bridge" <<'EOF'
Acquire::Check-Valid-Until "false";
APT::Install-Recommends "false";
APT::Install-Suggests "false";
EOF
cat >"$tmp/etc/apt/preferences.d/ironic" <<EOF
Package: python3-ironic
Pin: version *$ironic_version-*
Pin-Priority: 1001

Package: python3-sushy
Pin: version $sushy_version-*
Pin-Priority: 1001
EOF
printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d" # no daemons start
chmod 755 "$tmp/usr/sbin/policy-rc.d"

# The install runs in its own mount namespace with /proc and /dev: they
# vanish when it ends, however it ends.
unshare -m --propagation private sh -eu -c '
  r=$1
  mount -t proc proc "$r/proc"
  mount --rbind /dev "$r/dev"
  mount -t tmpfs tmpfs "$r/tmp"
  cp /etc/resolv.conf "$r/etc/resolv.conf"
  shift
  DEBIAN_FRONTEND=noninteractive chroot "$r" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive chroot "$r" apt-get install -y -qq "$@"
  chroot "$r" apt-get clean
' sh "$tmp" "${packages[@]}" >"$tmp.log" 2>&1 || {
  tail -n 30 "$tmp.log" >&2
  rm -f "$tmp.log"
  exit 1
}
rm -f "$tmp.log"
rm -rf "$tmp"/var/lib/apt/lists/*
installed=$(date +%s)
echo "ironic-chroot: install took $((installed - boot)) s" >&2

got=$(chroot "$tmp" dpkg-query -W -f '${Version} ' python3-ironic python3-sushy)
case $got in
*"$ironic_version"-*" $sushy_version"-*) ;;
*) echo "ironic-chroot: $suite has python3-ironic python3-sushy $got, want $ironic_version and $sushy_version" >&2; exit 1 ;;
esac
chroot "$tmp" python3 -c 'import ironic.command.singleprocess, ironic.command.dbsync, sushy' || {
  echo "ironic-chroot: Ironic not importable in the chroot" >&2
  exit 1
}
echo "ironic-chroot: $(du -sh --one-file-system "$tmp" | cut -f1) in $((installed - start)) s (python3-ironic python3-sushy $got)" >&2
mv -T "$tmp" "$root"
trap - EXIT
echo "$root"
