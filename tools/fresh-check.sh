#!/usr/bin/env bash
# fresh-check.sh — README's two set-up commands on a newcomer's machine: a fresh Debian
# bookworm root (debootstrap --variant=minbase: no CUDA, no build tools, nothing of ours),
# this checkout's HEAD cloned into it, then, as root inside it, `tools/quickstart.sh` and
# `tools/check.sh`. Exits with the first one's failure, else 0.
#
#   sudo tools/fresh-check.sh [--dir DIR] [--keep] [--skip-fuzz]
#
# --dir DIR     build the root there (default: a new directory under /var/tmp); reused when it
#               already holds a root from an earlier --keep run (its apt cache saves downloads).
# --keep        leave the root behind (to look at its build and logs); removed otherwise.
# --skip-fuzz   KCACHE_SKIP_FUZZ=1 for check.sh (quicker; the fuzz build is clang's).
# Needs root, network access to deb.debian.org, ~6 GiB of disk and, on 2 cores, ~40 minutes.
# Only committed files are tested: HEAD is what gets cloned.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

dir="" keep=0 skip_fuzz=0
while [ $# -gt 0 ]; do
  case $1 in
    --dir) dir=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --skip-fuzz) skip_fuzz=1; shift ;;
    *) echo "fresh-check: unknown argument '$1' (see the head of $0)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "fresh-check: needs root (debootstrap, chroot, mounts)" >&2; exit 2; }
[ -n "$dir" ] || dir=$(mktemp -d /var/tmp/kcache-fresh-XXXXXX)
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

command -v debootstrap >/dev/null || {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap </dev/null
}

# Processes whose root is the new root (the quickstart's kcached): only those, not the host's.
kill_in_root() {
  local p
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/root" 2>/dev/null)" = "$dir" ] && kill -9 "${p#/proc/}" 2>/dev/null
  done
  return 0
}

mounted=()
cleanup() {
  local i
  kill_in_root
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
  if [ "$keep" = 1 ]; then echo "fresh-check: root kept at $dir"; else rm -rf --one-file-system "$dir"; fi
}
trap cleanup EXIT

if [ ! -x "$dir/bin/bash" ]; then
  echo "fresh-check: debootstrap bookworm (minbase) into $dir"
  debootstrap --variant=minbase bookworm "$dir" http://deb.debian.org/debian >"$dir.debootstrap.log" 2>&1 ||
    { tail -20 "$dir.debootstrap.log"; exit 1; }
  rm -f "$dir.debootstrap.log"
fi
for m in proc sys dev dev/pts; do
  mkdir -p "$dir/$m"
  case $m in
    proc) mount -t proc proc "$dir/proc" ;;
    sys) mount -t sysfs sys "$dir/sys" ;;
    dev) mount --bind /dev "$dir/dev" ;;
    dev/pts) mount -t devpts devpts "$dir/dev/pts" ;;
  esac
  mounted+=("$dir/$m")
done
mount -t tmpfs tmpfs "$dir/run" && mounted+=("$dir/run")
cp -L /etc/resolv.conf "$dir/etc/resolv.conf"

# The newcomer clones the repository: git is all they add by hand.
chroot "$dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
  sh -c 'apt-get update -q && apt-get install -y -q --no-install-recommends git ca-certificates' \
  </dev/null >/dev/null
rm -rf "$dir/root/kcache"
git clone -q --no-local "$repo" "$dir/root/kcache"
echo "fresh-check: cloned $(git -C "$repo" rev-parse --short HEAD) into $dir/root/kcache"

in_root() {
  chroot "$dir" /usr/bin/env -i HOME=/root TERM=dumb PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    KCACHE_SKIP_FUZZ="$skip_fuzz" /bin/bash -c "cd /root/kcache && $1" </dev/null
}
echo "== fresh-check: tools/quickstart.sh"
in_root 'tools/quickstart.sh'
kill_in_root  # the quickstart leaves kcached running, as it says
echo "== fresh-check: tools/check.sh"
in_root 'tools/check.sh'
echo "fresh-check: both set-up commands passed in a fresh bookworm root"
