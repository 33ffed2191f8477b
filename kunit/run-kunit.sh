#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Run the mroce KUnit suites on UML in Debian's linux-source-6.1.
#
# usage: kunit/run-kunit.sh [extra "kunit.py run" arguments, e.g. 'mroce_psn*']
#
#   MROCE_CACHE       cache root (default $HOME/.cache/mroce) holding the
#                     unpacked tree (see kunit/linux-source.sh) and the
#                     build dir kunit-build-<arch>, kept between runs so
#                     rebuilds are incremental
#   MROCE_DRIVER_DIR  driver folder to test (default: this repo's
#                     drivers/infiniband/sw/mroce), e.g. a scratch copy
#   MROCE_KUNIT_ARCH  kunit.py --arch (default um; others need qemu)
#
# For the run only, the driver folder is symlinked into the tree at
# drivers/infiniband/sw/mroce, uapi/rdma/mroce-abi.h at
# include/uapi/rdma/mroce-abi.h, and drivers/infiniband/{Kconfig,Makefile}
# get one line each.  All of it is undone on exit, also on failure, Ctrl-C
# or SIGTERM; a run killed with SIGKILL is undone by the next run.
#
# Prints kunit.py's parsed results, then, last on stdout, exactly one line
# "kunit: N passed, N failed[, N skipped]".  Exits non-zero if the config
# or build failed, any test failed or crashed, or no test ran.

set -u
# Called from "make kunit W=1" or the like, we would inherit W, C, ARCH, a
# jobserver, ... and kbuild would rebuild the whole UML kernel with them.
unset ARCH SUBARCH CROSS_COMPILE W C O M KBUILD_OUTPUT KBUILD_EXTMOD \
	MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
# shellcheck source=kunit/linux-source.sh
. "$here/linux-source.sh"

die()
{
	echo "run-kunit.sh: $*" >&2
	echo "kunit: 0 passed, 0 failed"
	exit 1
}

driver_dir=${MROCE_DRIVER_DIR:-$root/drivers/infiniband/sw/mroce}
driver_dir=$(cd "$driver_dir" 2>/dev/null && pwd) ||
	die "no driver folder ${MROCE_DRIVER_DIR:-}"
if [ ! -f "$driver_dir/Kconfig" ] || [ ! -f "$driver_dir/Makefile" ]; then
	die "$driver_dir has no Kconfig/Makefile"
fi
uapi_hdr=$root/uapi/rdma/mroce-abi.h
[ -f "$uapi_hdr" ] || die "$uapi_hdr missing"
kunitconfig=$here/.kunitconfig
arch=${MROCE_KUNIT_ARCH:-um}
build_dir=$MROCE_CACHE/kunit-build-$arch
json=$build_dir/mroce-kunit.json
backup=$MROCE_CACHE/kunit-hook-backup

src=$MROCE_LINUX_SRC
ib_kconfig=drivers/infiniband/Kconfig
ib_makefile=drivers/infiniband/Makefile
link_driver=drivers/infiniband/sw/mroce
link_uapi=include/uapi/rdma/mroce-abi.h
kconfig_line='source "drivers/infiniband/sw/mroce/Kconfig"'
kconfig_after='source "drivers/infiniband/sw/siw/Kconfig"'
# shellcheck disable=SC2016 # a make variable, not a shell one
makefile_line='obj-$(CONFIG_RDMA_MROCE)		+= sw/mroce/'

# Put the tree back exactly as unpacked: original Kconfig/Makefile (with
# their mtimes, from the backup), no symlinks.  Idempotent.
unhook()
{
	local f ok=0

	for f in "$ib_kconfig" "$ib_makefile"; do
		if [ -f "$backup/${f##*/}" ]; then
			cp -p "$backup/${f##*/}" "$src/$f" &&
				rm -f "$backup/${f##*/}" || ok=1
		fi
	done
	for f in "$link_driver" "$link_uapi"; do
		if [ -L "$src/$f" ]; then
			rm -f "$src/$f" || ok=1
		fi
	done
	return $ok
}

hook()
{
	local f

	mkdir -p "$backup" || return 1
	for f in "$link_driver" "$link_uapi"; do
		if [ -e "$src/$f" ] || [ -L "$src/$f" ]; then
			echo "run-kunit.sh: $src/$f exists; delete $MROCE_LINUX_STAMP to re-unpack" >&2
			return 1
		fi
	done
	if grep -q mroce "$src/$ib_kconfig" "$src/$ib_makefile"; then
		echo "run-kunit.sh: $src/drivers/infiniband already mentions mroce; delete $MROCE_LINUX_STAMP to re-unpack" >&2
		return 1
	fi

	cp -p "$src/$ib_kconfig" "$backup/Kconfig" &&
		cp -p "$src/$ib_makefile" "$backup/Makefile" || return 1

	# Next to rxe and siw: inside "if INFINIBAND", outside "if !UML".
	sed -i "s|^$kconfig_after\$|&\n$kconfig_line|" "$src/$ib_kconfig" ||
		return 1
	if ! grep -qxF "$kconfig_line" "$src/$ib_kconfig"; then
		echo "run-kunit.sh: cannot hook $ib_kconfig (no '$kconfig_after' line)" >&2
		return 1
	fi
	printf '%s\n' "$makefile_line" >>"$src/$ib_makefile" || return 1
	ln -s "$driver_dir" "$src/$link_driver" &&
		ln -s "$uapi_hdr" "$src/$link_uapi"
}

kid=
# shellcheck disable=SC2317 # called from the EXIT trap
cleanup()
{
	if [ -n "$kid" ]; then
		kill -TERM -- "-$kid" 2>/dev/null
		wait "$kid" 2>/dev/null
		kid=
	fi
	unhook || echo "run-kunit.sh: could not restore $src; delete $MROCE_LINUX_STAMP" >&2
}

# Everything runs from main(), which bash has parsed completely before it
# starts: editing this file while a run is in progress cannot change what
# that run does.
main()
{
	mroce_linux_source_lock || die "cannot lock $MROCE_LINUX_LOCK"
	# A run killed with SIGKILL leaves its hooks behind: undo them first.
	unhook || die "cannot restore $src"
	mroce_linux_source_unpack || die "cannot unpack $MROCE_LINUX_TARBALL"

	trap cleanup EXIT
	trap 'echo "run-kunit.sh: interrupted" >&2; exit 130' INT
	trap 'echo "run-kunit.sh: terminated" >&2; exit 143' TERM HUP

	# Objects of an older unpacked tree, or of another driver folder, must not
	# be reused: kbuild decides by mtime and those files may well be older.
	mkdir -p "$build_dir" || die "cannot create $build_dir"
	if ! cmp -s "$MROCE_LINUX_STAMP" "$build_dir/.mroce-linux-stamp"; then
		find "$build_dir" -mindepth 1 -delete
		cp "$MROCE_LINUX_STAMP" "$build_dir/.mroce-linux-stamp"
	fi
	if [ "$(cat "$build_dir/.mroce-driver-dir" 2>/dev/null)" != "$driver_dir" ]; then
		rm -rf "${build_dir:?}/$link_driver"
		echo "$driver_dir" >"$build_dir/.mroce-driver-dir"
	fi
	rm -f "$json"

	hook || die "cannot hook mroce into $src"

	kconfig_add=()
	if [ "$arch" = um ]; then
		# HAS_IOMEM/HAS_DMA for INFINIBAND, see kunit/.kunitconfig.
		kconfig_add=(--kconfig_add=CONFIG_VIRTIO_UML=y
			     --kconfig_add=CONFIG_UML_PCI_OVER_VIRTIO=y)
	fi

	echo "run-kunit.sh: $driver_dir in $src, build dir $build_dir" >&2
	# Own process group (set -m) so an interrupt can stop kunit.py, make and
	# the UML kernel together before the tree is restored.  No stdin: the
	# UML kernel does not need one, and kunit.py's "stty sane" from a
	# background process group would stop on SIGTTOU; drop its complaint.
	# The job inherits the cache lock (fd 9): should this script be killed
	# with SIGKILL, the next run waits for the orphaned build to end before
	# it undoes the hooks.
	set -m
	(cd "$src" && exec python3 tools/testing/kunit/kunit.py run \
		--kunitconfig="$kunitconfig" --build_dir="$build_dir" \
		--arch="$arch" --jobs="$(nproc)" --json="$json" \
		"${kconfig_add[@]}" "$@") </dev/null \
		2> >(grep --line-buffered -v "^stty: 'standard input'" >&2) &
	kid=$!
	set +m
	wait "$kid"
	rc=$?
	kid=

	unhook || die "could not restore $src; delete $MROCE_LINUX_STAMP"

	counts=$(python3 - "$json" <<'EOF'
import json, sys

n = {"PASS": 0, "FAIL": 0, "SKIP": 0}

def walk(group):
    for case in group.get("test_cases", []):
        s = case.get("status")
        # kunit_json reports PASS, SKIP, ERROR (crashed) or FAIL
        n[s if s in ("PASS", "SKIP") else "FAIL"] += 1
    for sub in group.get("sub_groups", []):
        walk(sub)

try:
    with open(sys.argv[1]) as f:
        walk(json.load(f))
except (OSError, ValueError):
    pass
print(n["PASS"], n["FAIL"], n["SKIP"])
EOF
	) || counts="0 0 0"
	read -r passed failed skipped <<<"$counts"

	status=0
	if [ ! -s "$json" ]; then
		echo "run-kunit.sh: no results: config, build or boot failed (see above)" >&2
		status=1
	elif [ $((passed + failed)) -eq 0 ]; then
		echo "run-kunit.sh: no test ran; kernel log: $build_dir/test.log" >&2
		status=1
	elif [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ]; then
		echo "run-kunit.sh: tests failed (kunit.py exit $rc); kernel log: $build_dir/test.log" >&2
		status=1
	fi
	[ "$rc" -ne 0 ] && status=1

	summary="kunit: $passed passed, $failed failed"
	[ "$skipped" -ne 0 ] && summary="$summary, $skipped skipped"
	echo "$summary"
	exit $status
}

main "$@"
