# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Sourced (not executed) by kunit/run-kunit.sh and tools/lint.sh: provides
# a pristine, unpacked copy of Debian's linux-source-6.1 in a cache folder.
#
#   MROCE_CACHE          cache root (default: $HOME/.cache/mroce)
#   MROCE_LINUX_TARBALL  tarball (default: /usr/src/linux-source-6.1.tar.xz)
#
# After mroce_linux_source_unpack, $MROCE_LINUX_SRC is the tree's root.
#
# The tree is unpacked once.  It is unpacked again when the tarball is newer
# than the stamp file, or when its size/mtime differ from what the stamp
# recorded: dpkg gives installed files the mtime they had in the .deb, so
# an upgraded linux-source package can carry a tarball *older* than our
# stamp, and "newer than" alone would miss it.
#
# Everything holds an flock on $MROCE_LINUX_LOCK while unpacking, so lint
# and KUnit runs started at the same time do not unpack twice or see a half
# unpacked tree.  run-kunit.sh keeps the lock for its whole run because it
# hooks mroce into the tree's Kconfig/Makefile for that long.

MROCE_CACHE=${MROCE_CACHE:-$HOME/.cache/mroce}
MROCE_LINUX_TARBALL=${MROCE_LINUX_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
MROCE_LINUX_SRC=$MROCE_CACHE/linux-source-6.1
MROCE_LINUX_STAMP=$MROCE_CACHE/linux-source-6.1.stamp
MROCE_LINUX_LOCK=$MROCE_CACHE/linux-source-6.1.lock

# Take the cache lock on file descriptor 9 (kept until the shell exits or
# mroce_linux_source_unlock is called).
mroce_linux_source_lock()
{
	mkdir -p "$MROCE_CACHE" || return 1
	exec 9>"$MROCE_LINUX_LOCK" || return 1
	if ! flock -n 9; then
		echo "linux-source: waiting for another mroce run to release $MROCE_LINUX_LOCK" >&2
		flock 9 || return 1
	fi
}

mroce_linux_source_unlock()
{
	exec 9>&-
}

# Must be called with the lock held.
mroce_linux_source_unpack()
{
	local id tmp

	if [ ! -r "$MROCE_LINUX_TARBALL" ]; then
		echo "linux-source: $MROCE_LINUX_TARBALL missing; apt-get install linux-source-6.1" >&2
		return 1
	fi
	id=$(stat -L -c '%n %s %Y' "$MROCE_LINUX_TARBALL") || return 1

	if [ -f "$MROCE_LINUX_STAMP" ] &&
	   [ -f "$MROCE_LINUX_SRC/Makefile" ] &&
	   [ ! "$MROCE_LINUX_TARBALL" -nt "$MROCE_LINUX_STAMP" ] &&
	   [ "$(cat "$MROCE_LINUX_STAMP")" = "$id" ]; then
		return 0
	fi

	echo "linux-source: unpacking $MROCE_LINUX_TARBALL into $MROCE_CACHE (once)" >&2
	tmp=$(mktemp -d "$MROCE_CACHE/unpack.XXXXXX") || return 1
	if ! tar -C "$tmp" -xf "$MROCE_LINUX_TARBALL"; then
		rm -rf "$tmp"
		return 1
	fi
	if [ ! -f "$tmp/linux-source-6.1/Makefile" ]; then
		echo "linux-source: $MROCE_LINUX_TARBALL has no linux-source-6.1/Makefile" >&2
		rm -rf "$tmp"
		return 1
	fi
	# Old tree out, new tree in.  Build dirs made from the old tree are
	# their users' business: run-kunit.sh compares a copy of the stamp
	# and starts its build dir afresh.
	rm -f "$MROCE_LINUX_STAMP"
	rm -rf "$MROCE_LINUX_SRC"
	mv "$tmp/linux-source-6.1" "$MROCE_LINUX_SRC" || return 1
	rmdir "$tmp"
	echo "$id" >"$MROCE_LINUX_STAMP"
}
