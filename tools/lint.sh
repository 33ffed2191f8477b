#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# mroce lint: checkpatch, a W=1, sparse (C=1) build of the module and
# a shellcheck of the shell scripts.
#
# usage: tools/lint.sh
#
#   MROCE_CACHE         where kunit/linux-source.sh unpacks linux-source-6.1
#                       (checkpatch.pl comes from there)
#   MROCE_DRIVER_DIR    driver folder to lint (default: this repo's
#                       drivers/infiniband/sw/mroce), e.g. a scratch copy
#   MROCE_PROVIDER_DIR  userspace provider (default: tools/libmroce)
#   KDIR                kernel build dir (default: tools/kdir.sh)
#
# 1. scripts/checkpatch.pl --strict --no-tree on every .c/.h of the driver
#    folder (mroce_compat.h may test LINUX_VERSION_CODE: the one place for
#    kernel version differences) and of uapi/ (kbuild's generated *.mod.c
#    skipped), and with
#    the same strictness on the rdma-core provider, minus the checks that
#    only make sense for kernel code (see PROVIDER_IGNORE below), and on
#    the test ULP tools/kulp/ and the test offload provider
#    tools/xport-test/ (kernel code).
#    --root points at the unpacked tree only so that CamelCase names
#    defined in kernel headers (SetPageDirty, ...) are not reported.
# 2. the pure protocol files (the driver Makefile's "pure protocol" group,
#    the KUnit suites and the headers they include) include no ib_core,
#    rdma or net header and none of the glue's headers (mroce.h, ...).
# 3. make -C $KDIR M=<copy> CONFIG_RDMA_MROCE=m W=1 C=1 modules, then the
#    KUnit objects (CONFIG_RDMA_MROCE_KUNIT_TEST=m) compiled alone, and
#    tools/xport-test (it includes the driver's mroce_xport.h and links
#    against the copy's Module.symvers), W=1 C=1 in a copy too: Debian
#    kernels have no CONFIG_KUNIT, so they cannot be linked, but gcc W=1
#    and sparse still see them.  The build runs in a fresh copy of Kbuild,
#    uapi/ and the driver folder, not in the repo: C=1 only checks files
#    that get recompiled, and W=1 warnings only show up when compiling, so
#    objects left up to date by an earlier "make" would hide everything;
#    a copy also cannot race with somebody's "make" in the repo.
# 3. shellcheck (every severity, following sourced files, which it looks
#    for next to each script) on every shell script of the repo: *.sh and
#    the files whose #! line names sh, bash or dash (tools/guest/mroce-vm,
#    tools/guest/init, .ci/run); tracked or new, not ignored files.
#
# 5. tools/conformance/rules.py --check: every normative key word of
#    Documentation/metaroce-spec.rst has a rule ID, no ID twice; and the
#    conformance tester's encoder against the spec's test vectors
#    (tools/conformance/mrwire.py --selftest).
#
# Fails on any checkpatch ERROR/WARNING/CHECK, a failed build, any line
# of build output with "warning:" or "error:" in it (gcc, sparse, modpost),
# or any shellcheck finding.  Last line on stdout, e.g.:
#   lint: checkpatch 18 files clean, W=1 C=1 clean, shellcheck 34 scripts clean

set -u
set -o pipefail
# Same build whether run alone or from "make lint W=2 ARCH=...": only the
# options below reach kbuild.
unset ARCH SUBARCH CROSS_COMPILE W C O M KBUILD_OUTPUT KBUILD_EXTMOD \
	MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
# shellcheck source=kunit/linux-source.sh
. "$root/kunit/linux-source.sh"
# shellcheck source=tools/kbuild-copy.sh
. "$root/tools/kbuild-copy.sh"

# Kernel-only advice that does not apply to a userspace rdma-core provider:
#   PREFER_KERNEL_TYPES   uint32_t is right in userspace (u32 is kernel)
#   USE_NEGATIVE_ERRNO    verbs providers return positive errno values
#   BIT_MACRO, PREFER_DEFINED_ATTRIBUTE_MACRO, PREFER_FALLTHROUGH
#                         BIT(), __printf(), __packed, fallthrough are
#                         kernel macros userspace does not have
#   SSCANF_TO_KSTRTO, STRLCPY
#                         kstrto*() and strscpy() are kernel functions
#   CAMELCASE             flags C library and C11 names (PRIx64,
#                         _Static_assert) and rdma-core identifiers
PROVIDER_IGNORE=PREFER_KERNEL_TYPES,USE_NEGATIVE_ERRNO,BIT_MACRO
PROVIDER_IGNORE=$PROVIDER_IGNORE,PREFER_DEFINED_ATTRIBUTE_MACRO
PROVIDER_IGNORE=$PROVIDER_IGNORE,PREFER_FALLTHROUGH,SSCANF_TO_KSTRTO
PROVIDER_IGNORE=$PROVIDER_IGNORE,STRLCPY,CAMELCASE

driver_dir=${MROCE_DRIVER_DIR:-$root/drivers/infiniband/sw/mroce}
provider_dir=${MROCE_PROVIDER_DIR:-$root/tools/libmroce}
driver_dir=$(cd "$driver_dir" 2>/dev/null && pwd) || {
	echo "lint: no driver folder ${MROCE_DRIVER_DIR:-}" >&2
	exit 1
}

fail()
{
	echo "lint.sh: $*" >&2
	echo "lint: FAILED ($*)"
	exit 1
}

# Our C sources and headers below $1, without kbuild's generated files.
sources()
{
	[ -d "$1" ] || return 0
	find "$1" -type f \( -name '*.c' -o -name '*.h' \) \
		! -name '*.mod.c' ! -name '.*' | sort
}

mod=drivers/infiniband/sw/mroce

checkpatch_file()
{
	local f=$1 out rc

	shift
	cp_files=$((cp_files + 1))
	# Run from a scratch dir: --strict caches CamelCase names it learnt
	# from --root's include/ in .checkpatch-camelcase.* in the current
	# directory, which must not be the repo.
	out=$(cd "$tmp/checkpatch" && "$checkpatch" --strict --no-tree \
		--root="$MROCE_LINUX_SRC" --quiet --show-types "$@" -f "$f" 2>&1)
	rc=$?
	out=${out//"$root"\//}
	if [ $rc -ne 0 ] || grep -qE '^(ERROR|WARNING|CHECK):' <<<"$out"; then
		cp_bad=$((cp_bad + 1))
		printf '%s\n' "$out"
	fi
}

# The pure protocol files: the Makefile's "pure protocol" object group,
# the KUnit suites and every header they include with quotes.
pure_files()
{
	local todo f inc seen=" "

	todo=$(awk '/^# pure protocol state machines/ { p = 1 }
		p && /^$/ { exit } p' "$driver_dir/Makefile" |
		grep -o 'mroce_[a-z0-9_]*\.o' | sed 's/\.o$/.c/' | tr '\n' ' ')
	todo="$todo $(cd "$driver_dir" && printf '%s ' ./*_test.c |
		sed 's|\./||g')"
	while [ -n "${todo// /}" ]; do
		f=${todo%% *}
		todo=${todo#"$f"}
		todo=${todo# }
		[ -n "$f" ] || continue
		case $seen in *" $f "*) continue ;; esac
		seen="$seen$f "
		echo "$f"
		while IFS= read -r inc; do
			todo="$todo $inc"
		done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$driver_dir/$f")
	done
}

# No pure file includes ib_core, an rdma header or the glue's headers.
check_pure()
{
	local f bad=0 n=0
	local impure='^#include (<rdma/|<net/|"mroce\.h"|"mroce_sq\.h"|"mroce_xport\.h")'

	for f in $(pure_files); do
		n=$((n + 1))
		if [ ! -f "$driver_dir/$f" ]; then
			echo "lint: pure file $f does not exist" >&2
			bad=$((bad + 1))
		elif grep -nE "$impure" "$driver_dir/$f" >"$tmp/impure"; then
			sed "s|^|$mod/$f:|" "$tmp/impure" >&2
			bad=$((bad + 1))
		fi
	done
	pure_count=$n
	return $bad
}

# Our shell scripts, relative to $root: *.sh and files with a shell's #!
shell_scripts()
{
	local files

	if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
		files=$(git -C "$root" ls-files --cached --others --exclude-standard)
	else
		files=$(cd "$root" && find . \( -name .git -o -name build \) -prune -o \
			-type f -print | sed 's|^\./||')
	fi
	# shellcheck disable=SC2016  # $0 is awk's
	(cd "$root" && while IFS= read -r f; do
		[ -f "$f" ] && printf '%s\n' "$f"
	done <<<"$files" | sort -u |
	xargs -r -d '\n' awk 'FNR == 1 {
		if (FILENAME ~ /\.sh$/ ||
		    $0 ~ /^#![ \t]*[^ \t]*(\/|env[ \t]+)(ba|da)?sh([ \t]|$)/)
			print FILENAME
		nextfile
	}')
}

build()
{
	make -C "$kdir" M="$tmp" W=1 C=1 CONFIG_RDMA_MROCE=m "$@" 2>&1 |
		sed -e "s|$tmp/$mod/|$driver_dir/|g" -e "s|$tmp/|$root/|g" \
		    -e "s|$root/||g" |
		tee -a "$log"
}

# Everything runs from main(), which bash has parsed completely before it
# starts: editing this file during a run cannot change what the run does.
main()
{
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/mroce-lint.XXXXXX") || fail "mktemp"
	trap 'rm -rf "$tmp"' EXIT

	mroce_linux_source_lock || fail "cannot lock $MROCE_LINUX_LOCK"
	mroce_linux_source_unpack || fail "cannot unpack $MROCE_LINUX_TARBALL"
	mroce_linux_source_unlock
	checkpatch=$MROCE_LINUX_SRC/scripts/checkpatch.pl

	# --- 1. checkpatch ----------------------------------------------
	cp_files=0
	cp_bad=0
	mkdir -p "$tmp/checkpatch" || fail "mkdir"
	# mroce_compat.h is the one file that keys on LINUX_VERSION_CODE (one
	# tree for 6.1 and 6.12); checkpatch flags every such test, and then
	# also "LINUX_VERSION_CODE >= ..." as a constant on the left
	while read -r f; do
		case $f in
		*/mroce_compat.h) checkpatch_file "$f" \
			--ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON ;;
		?*) checkpatch_file "$f" ;;
		esac
	done < <(sources "$driver_dir")
	# uapi headers are seen by userspace, where BIT() does not exist
	while read -r f; do
		[ -n "$f" ] && checkpatch_file "$f" --ignore BIT_MACRO
	done < <(sources "$root/uapi")
	while read -r f; do
		[ -n "$f" ] && checkpatch_file "$f" --ignore "$PROVIDER_IGNORE"
	done < <(sources "$provider_dir")
	# the test ULP (t-14-kulp) is kernel code like the driver
	while read -r f; do
		[ -n "$f" ] && checkpatch_file "$f"
	done < <(sources "$root/tools/kulp")
	# the test offload provider (t-44-xport) too
	while read -r f; do
		[ -n "$f" ] && checkpatch_file "$f"
	done < <(sources "$root/tools/xport-test")

	if [ $cp_bad -eq 0 ]; then
		cp_result="checkpatch $cp_files files clean"
	else
		cp_result="checkpatch $cp_bad of $cp_files files with problems"
	fi

	# --- 2. the pure protocol files stay pure ------------------------
	if check_pure; then
		pure_result="$pure_count pure files free of ib_core"
	else
		pure_result="pure files include ib_core headers"
		pure_bad=1
	fi

	# --- 3. W=1 C=1 build -------------------------------------------
	kdir=${KDIR:-$("$root/tools/kdir.sh")} || fail "no kernel build dir"
	command -v sparse >/dev/null || fail "sparse not installed (apt-get install sparse)"

	mroce_copy_sources "$root" "$driver_dir" "$tmp" ||
		fail "cannot copy sources to $tmp"

	log=$tmp/build.log
	build_ok=1
	build modules || build_ok=0
	# the KUnit suites: compile (gcc W=1 + sparse) but do not link.  A
	# suite that needs a file's private state is #included at the end of
	# that file (mroce_cc_metaroce.c: mroce_cc_metaroce_test.c): that
	# file is compiled again with the option set (Kbuild defines it for
	# the C code), instead of the suite alone.
	test_objs=()
	for t in "$tmp/$mod"/*_test.c; do
		[ -e "$t" ] || continue
		host=$(grep -l "^#include \"${t##*/}\"" "$tmp/$mod"/*.c | head -n 1)
		test_objs+=("$mod/$(basename "${host:-$t}" .c).o")
	done
	if [ $build_ok -eq 1 ] && [ ${#test_objs[@]} -ne 0 ]; then
		build CONFIG_RDMA_MROCE_KUNIT_TEST=m "${test_objs[@]}" ||
			build_ok=0
	fi

	# the test offload provider, against the copy's exports
	if [ $build_ok -eq 1 ]; then
		if mkdir -p "$tmp/tools/xport-test" &&
		   cp "$root/tools/xport-test/Kbuild" "$root/tools/xport-test"/*.c \
			"$tmp/tools/xport-test/"; then
			make -C "$kdir" M="$tmp/tools/xport-test" W=1 C=1 \
				KBUILD_EXTRA_SYMBOLS="$tmp/Module.symvers" modules 2>&1 |
				sed -e "s|$tmp/|$root/|g" -e "s|$root/||g" |
				tee -a "$log" || build_ok=0
		else
			build_ok=0
		fi
	fi

	nwarn=$(grep -ciE 'warning:|error:' "$log")
	if [ $build_ok -eq 0 ]; then
		build_result="W=1 C=1 build FAILED"
	elif [ "$nwarn" -ne 0 ]; then
		build_result="W=1 C=1 $nwarn warning/error lines"
	else
		build_result="W=1 C=1 clean"
	fi

	# --- 4. shellcheck ----------------------------------------------
	command -v shellcheck >/dev/null ||
		fail "shellcheck not installed (apt-get install shellcheck)"
	mapfile -t scripts < <(shell_scripts)
	[ ${#scripts[@]} -gt 0 ] || fail "no shell scripts found below $root"
	sc_out=$(cd "$root" && shellcheck --norc -x -P SCRIPTDIR -f gcc \
		-- "${scripts[@]}" 2>&1)
	sc_rc=$?		# 0 clean, 1 findings, else shellcheck failed
	if [ $sc_rc -eq 0 ]; then
		sc_result="shellcheck ${#scripts[@]} scripts clean"
	else
		printf '%s\n' "$sc_out"
		sc_result="shellcheck $(grep -c ' \[SC[0-9]*\]$' <<<"$sc_out") findings in ${#scripts[@]} scripts"
		[ $sc_rc -eq 1 ] || sc_result="shellcheck FAILED (exit $sc_rc)"
	fi

	# --- 5. the spec's rule IDs, the conformance tester ---------------
	rules_out=$(python3 "$root/tools/conformance/rules.py" --check 2>&1 &&
		python3 "$root/tools/conformance/mrwire.py" --selftest 2>&1)
	rules_rc=$?
	if [ $rules_rc -eq 0 ]; then
		rules_result=$(sed -n 's/^rules: \([0-9]* rules\).*/\1 with IDs/p' <<<"$rules_out")
	else
		printf '%s\n' "$rules_out"
		rules_result="rule IDs or tester self-test FAILED"
	fi

	if [ $cp_bad -ne 0 ] || [ $build_ok -eq 0 ] || [ "$nwarn" -ne 0 ] ||
	   [ "${pure_bad:-0}" -ne 0 ] || [ $sc_rc -ne 0 ] || [ $rules_rc -ne 0 ]; then
		[ "$nwarn" -ne 0 ] && grep -iE 'warning:|error:' "$log" >&2
		echo "lint: FAILED: $cp_result, $pure_result, $build_result, $sc_result, $rules_result"
		exit 1
	fi
	echo "lint: $cp_result, $pure_result, $build_result, $sc_result, $rules_result"
}

main "$@"
