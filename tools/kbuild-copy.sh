# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# kbuild-copy.sh - sourced by tools/lint.sh, tools/guest/check-debug.sh and
# tools/guest/check-k612.sh: the driver built in a copy of its sources
# (against another kernel, or with other options), so that the tree's own
# build, made for KDIR, is never touched.

# mroce_kbuild_clean DIR: drop kbuild output that came along with copied
# sources (see .gitignore)
mroce_kbuild_clean() {
	find "$1" \( -name '*.o' -o -name '*.ko' -o -name '*.mod' \
		-o -name '*.mod.c' -o -name '*.cmd' -o -name '*.order' -o -name '*.a' \
		-o -name '.*.d' -o -name Module.symvers \) -delete
}

# mroce_copy_sources ROOT DRIVER_DIR DEST: the out-of-tree layout of ROOT
# (Kbuild, VERSION, uapi/) with DRIVER_DIR as the driver folder, in DEST,
# without build output; non-zero on failure
mroce_copy_sources() {
	local root=$1 driver=$2 dest=$3 mod=drivers/infiniband/sw/mroce

	mkdir -p "$dest/$mod" && cp "$root/Kbuild" "$root/VERSION" "$dest/" &&
		cp -R "$root/uapi" "$dest/" && cp -R "$driver/." "$dest/$mod/" &&
		mroce_kbuild_clean "$dest"
}

# mroce_kbuild KDIR KVER DIR NAME [MAKE ARG...]: "make modules" in DIR (a
# fresh copy) against KDIR, output in DIR.log; calls the caller's die()
# when the build fails or prints a warning.  NAME and KVER name it in
# messages.
mroce_kbuild() {
	local kdir=$1 kver=$2 dir=$3 name=$4

	shift 4
	if ! make -C "$kdir" M="$dir" "$@" modules >"$dir.log" 2>&1; then
		tail -n 30 "$dir.log" >&2
		die "$name does not build against $kver (log: $dir.log)"
	fi
	if grep -E 'warning:|error:' "$dir.log" >&2; then
		die "building $name against $kver printed warnings (log: $dir.log)"
	fi
}

# mroce_sources_digest ROOT [KEY...]: one digest of the KEYs (what else a
# build depends on: the kernel, the options) and of the contents of the
# sources the copies are made from (the driver, uapi, tools/kulp and
# tools/xport-test), build output left out.  A lane that finds the
# digest it recorded with its modules skips building them again.
mroce_sources_digest() {
	local root=$1

	shift
	{
		printf '%s\n' "$@"
		(cd "$root" && find Kbuild VERSION uapi drivers/infiniband/sw/mroce \
			tools/kulp tools/xport-test tools/kbuild-copy.sh -type f \
			\( -name '*.[ch]' ! -name '*.mod.c' -o -name Kbuild \
			-o -name Kconfig -o -name Makefile -o -name VERSION \
			-o -name '*.sh' \) -print0 |
			LC_ALL=C sort -z | xargs -0 sha256sum)
	} | sha256sum | cut -d' ' -f1
}

# mroce_build_once NAME WHAT BUILD_FN KEY... -- FILE...: run BUILD_FN (it
# dies on failure) unless build/NAME.stamp holds the digest of the sources
# and the KEYs (mroce_sources_digest) and every FILE exists; records the
# digest after a build.  Under build/NAME.lock, so that a lane does not
# build over another run's build (make check's background job) but waits
# for it and then finds it done.  Uses the caller's TOP, ME and die().
mroce_build_once() {
	local name=$1 what=$2 fn=$3 stamp want f fresh=1
	local -a keys=()

	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		keys+=("$1")
		shift
	done
	shift
	stamp=$TOP/build/$name.stamp
	mkdir -p "$TOP/build" || die "cannot create $TOP/build"
	exec 7>"$TOP/build/$name.lock"
	if ! flock -n 7; then
		echo "$ME: waiting for another build of $what"
		flock 7 || die "cannot lock $TOP/build/$name.lock"
	fi
	want=$(mroce_sources_digest "$TOP" "${keys[@]}")
	[ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] || fresh=0
	for f in "$@"; do
		[ -f "$f" ] || fresh=0
	done
	if [ "$fresh" = 1 ]; then
		echo "$ME: $what are up to date (${stamp#"$TOP"/})"
	else
		rm -f "$stamp"
		"$fn"
		echo "$want" >"$stamp"
	fi
	exec 7>&-
}
