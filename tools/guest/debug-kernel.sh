#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# debug-kernel.sh - build (once) the debug-lane guest kernel and print the
# folder that holds it.
#
# usage: tools/guest/debug-kernel.sh [--force]
#
# Debian's linux-source-6.1 (unpacked with kunit/linux-source.sh into a
# copy of its own, so KUnit's hooks into the other copy never reach this
# build), "make allnoconfig" with tools/guest/debug.config as the forced
# values, then olddefconfig.  Every CONFIG_ line of the fragment must be in
# the final .config exactly as written, and every "is not set" line unset:
# otherwise the script fails before building.  Then bzImage and modules
# (nice -n 19, -j$MROCE_DEBUG_JOBS, default: the number of CPUs), and the
# modules are installed into the cache, never into the host's /lib/modules.
#
# The result is cached under a key: the sha256 of the fragment, this
# script, the tarball (size, mtime) and the compiler's version.  With the
# key's folder complete the script only prints it (a second or so) and
# marks it used; a new key builds from scratch.  After a build, the folders
# of other keys not used for $MROCE_DEBUG_KEEP_DAYS days (default 3) are
# removed, and unfinished ones (builds hold a lock, so none is running):
# two worktrees with different fragments can share the cache.
#
# Printed on stdout, one line: the key's folder, which has
#   bzImage      the kernel (tools/guest/mroce-vm --kernel)
#   kver         its version, e.g. 6.1.192-mroce-debug
#   modules/     its /lib/modules/<kver> (mroce-vm --modules)
#   build/       the kbuild output folder: KDIR for out-of-tree modules
#                (make -C <dir>/build M=...)
#   config       the final .config
#   build-time   seconds the build took
#
#   MROCE_CACHE        cache root (default ~/.cache/mroce); the lane lives in
#                      $MROCE_CACHE/debug-kernel/
#   MROCE_DEBUG_JOBS   make -j (default: nproc)
#   --force            rebuild even when the key's folder is complete
#
# The build log is $MROCE_CACHE/debug-kernel/<key>/build.log.
set -euo pipefail
unset ARCH SUBARCH CROSS_COMPILE W C O M KBUILD_OUTPUT KBUILD_EXTMOD \
	MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES KCONFIG_CONFIG

ME=debug-kernel
SELF=$(readlink -f "${BASH_SOURCE[0]}")
HERE=$(dirname "$SELF")
ROOT=$(cd "$HERE/../.." && pwd -P)
FRAGMENT=$HERE/debug.config

die() { echo "$ME: $*" >&2; exit 1; }
note() { echo "$ME: $*" >&2; }

FORCE=0
case "${1:-}" in
--force) FORCE=1 ;;
'') ;;
-h|--help) sed -n '4,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$SELF"; exit 0 ;;
*) die "unknown argument $1 (see --help)" ;;
esac

# shellcheck source=kunit/linux-source.sh
. "$ROOT/kunit/linux-source.sh"
DK=$MROCE_CACHE/debug-kernel
# A copy of the tree of our own (same helper, other paths).
MROCE_LINUX_SRC=$DK/linux-source-6.1
# shellcheck disable=SC2034 # used by mroce_linux_source_unpack
MROCE_LINUX_STAMP=$DK/linux-source-6.1.stamp
MROCE_LINUX_LOCK=$DK/linux-source-6.1.lock
mkdir -p "$DK"

[ -r "$FRAGMENT" ] || die "$FRAGMENT missing"
[ -r "$MROCE_LINUX_TARBALL" ] ||
	die "$MROCE_LINUX_TARBALL missing (tools/setup.sh installs linux-source-6.1)"
command -v gcc >/dev/null || die "gcc not installed (tools/setup.sh)"

key=$({
	echo "fragment"; cat "$FRAGMENT"
	echo "script"; cat "$SELF"
	echo "source $(stat -L -c '%s %Y' "$MROCE_LINUX_TARBALL")"
	echo "cc $(gcc --version | head -n 1)"
} | sha256sum | cut -c1-16)
OUT=$DK/$key

# One build at a time; a second caller waits and then finds it cached.
exec 8>"$DK/build.lock"
if ! flock -n 8; then
	note "waiting for another debug-kernel build ($DK/build.lock)"
	flock 8
fi

if [ "$FORCE" = 0 ] && [ -f "$OUT/complete" ]; then
	touch "$OUT/complete"
	echo "$OUT"
	exit 0
fi

t0=$(date +%s)
mroce_linux_source_lock || die "cannot lock $MROCE_LINUX_LOCK"
mroce_linux_source_unpack || die "cannot unpack $MROCE_LINUX_TARBALL"
mroce_linux_source_unlock
SRC=$MROCE_LINUX_SRC

rm -rf "$OUT"
mkdir -p "$OUT/build"
LOG=$OUT/build.log
: >"$LOG"
kmake() { make -C "$SRC" O="$OUT/build" "$@" >>"$LOG" 2>&1; }

note "configuring $key (allnoconfig + $(basename "$FRAGMENT"))"
kmake KCONFIG_ALLCONFIG="$FRAGMENT" allnoconfig || die "allnoconfig failed, see $LOG"
kmake olddefconfig || die "olddefconfig failed, see $LOG"

# Every wanted value must have survived.
bad=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*)
		grep -qxF -- "$line" "$OUT/build/.config" && continue
		name=${line%%=*}
		have=$(grep -E "^($name=|# $name is not set)" "$OUT/build/.config" || true)
		note "wanted $line, got '${have:-nothing (unknown or dependencies not met)}'"
		bad=1 ;;
	"# CONFIG_"*" is not set")
		name=${line#\# }
		name=${name%% *}
		grep -q "^$name=" "$OUT/build/.config" || continue
		note "wanted $name unset, got '$(grep "^$name=" "$OUT/build/.config")'"
		bad=1 ;;
	esac
done <"$FRAGMENT"
[ "$bad" = 0 ] || die "the configuration lacks options of $FRAGMENT (fix the fragment)"
cp "$OUT/build/.config" "$OUT/config"

jobs=${MROCE_DEBUG_JOBS:-$(nproc)}
note "building bzImage and modules (-j$jobs, nice 19; log $LOG)"
nice -n 19 make -C "$SRC" O="$OUT/build" -j"$jobs" bzImage modules >>"$LOG" 2>&1 ||
	{ tail -n 30 "$LOG" >&2; die "kernel build failed, see $LOG"; }
kver=$(make -s -C "$SRC" O="$OUT/build" kernelrelease 2>>"$LOG") ||
	die "cannot read the kernel release"
[ -n "$kver" ] || die "empty kernel release"

stage=$OUT/modules-install
rm -rf "$stage"
nice -n 19 make -C "$SRC" O="$OUT/build" INSTALL_MOD_PATH="$stage" \
	DEPMOD=/sbin/depmod modules_install >>"$LOG" 2>&1 ||
	die "modules_install failed, see $LOG"
[ -f "$stage/lib/modules/$kver/modules.dep" ] || die "no modules.dep for $kver in $stage"
mv "$stage/lib/modules/$kver" "$OUT/modules"
rm -rf "$stage"
# modules_install points these at the build tree; nothing in the guest
# needs them and they would be dangling once the tree is gone.
rm -f "$OUT/modules/build" "$OUT/modules/source"

cp "$OUT/build/arch/x86/boot/bzImage" "$OUT/bzImage"
echo "$kver" >"$OUT/kver"
secs=$(($(date +%s) - t0))
echo "$secs" >"$OUT/build-time"
touch "$OUT/complete"
note "built $kver in ${secs}s: $OUT"

# Each folder is a full build tree (~600 MB): drop the stale ones.
keep_days=${MROCE_DEBUG_KEEP_DAYS:-3}
for d in "$DK"/*/; do
	d=${d%/}
	case "$(basename "$d")" in
	"$key"|linux-source-6.1) continue ;;
	esac
	[ -f "$d/build.log" ] || continue	# not one of ours
	if [ ! -f "$d/complete" ] ||
		[ -n "$(find "$d/complete" -mtime +"$keep_days" 2>/dev/null)" ]; then
		note "removing the stale build $d"
		rm -rf "$d"
	fi
done
echo "$OUT"
