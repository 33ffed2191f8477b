#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# check-debug.sh - the debug lane ("make check-debug"): the guest suite on
# a kernel with KASAN, lockdep, UBSAN, kmemleak and debug objects.
#
# usage: tools/guest/check-debug.sh [TEST...]     (default: every test)
#        tools/guest/check-debug.sh --selftest
#        tools/guest/check-debug.sh --build-only  (steps 1 and 2)
#
#   1. tools/guest/debug-kernel.sh: the debug kernel, built once and cached
#   2. mroce.ko built against it, in a copy of the sources under
#      build/debug-module/ (the module in the tree stays the one for
#      Debian's kernel), with -g so that scripts/faddr2line can place
#      mroce's frames of a report; tools/kulp's modules and the test
#      offload provider tools/xport-test (in the copy) too
#   3. tools/guest/mroce-vm boots it (its modules shared in at
#      /lib/modules/<version>) and runs tools/tests/run-guest-tests.sh with
#      MROCE_KO pointing at that module and the tests' timeouts scaled,
#      which fails a test on any kernel report and, with kmemleak, on a
#      suspected leak in mroce after the module is unloaded
#   4. the reports, one line each, from build/results-debug/kernel-trouble.log
#
# Before the guest tests, in the same guest, kunit/t-kunit.sh loads a
# second build of mroce.ko, made with CONFIG_RDMA_MROCE_KUNIT_TEST=y in
# build/debug-kunit/ (the kernel has CONFIG_KUNIT=y): the KUnit suites run
# under the checkers, and CI needs no UML kernel for them
# (MROCE_DEBUG_KUNIT=0 leaves them out).
#
# --selftest proves the lane still detects: instead of mroce it builds
# tools/guest/debug-selftest/ (a module also named mroce that makes one
# KASAN, UBSAN, lockdep and kmemleak report at load) and runs its test;
# it passes only when the harness failed that test for all four (results
# in build/results-debug-selftest/).
#
# The userspace (provider, test programs) is the normal build: "make
# check-debug" builds it first.
#
#   MROCE_DEBUG_TIMEOUT_SCALE  factor for each test's timeout (default 4)
#   MROCE_DEBUG_VM_TIMEOUT     seconds for the whole guest run (default 7200)
#   MROCE_DEBUG_MEM            guest memory (default 3G)
#   MROCE_KMEMLEAK             each (default), end or 0 (run-guest-tests.sh)
# Results: build/results-debug/ (test logs, guest-tests.tap, dmesg.log,
# kernel-trouble.log, kmemleak.log).  Exit status: non-zero when the
# kernel or the module could not be built or any test failed.
set -uo pipefail
unset ARCH SUBARCH CROSS_COMPILE W C O M KBUILD_OUTPUT KBUILD_EXTMOD \
	MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

ME=check-debug
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
TOP=$(cd "$HERE/../.." && pwd -P)
cd "$TOP" || exit 1

die() { echo "$ME: $*" >&2; exit 1; }

SELFTEST=0
BUILD_ONLY=0
case ${1:-} in
--selftest)
	[ $# = 1 ] || die "--selftest takes no tests"
	SELFTEST=1
	set -- "$HERE/debug-selftest/t-selftest.sh" ;;
--build-only)
	[ $# = 1 ] || die "--build-only takes no tests"
	BUILD_ONLY=1
	shift ;;
esac

dk=$("$HERE/debug-kernel.sh") || die "no debug kernel"
kver=$(cat "$dk/kver") || die "no $dk/kver"
echo "$ME: kernel $kver ($dk, built in $(cat "$dk/build-time" 2>/dev/null)s)"

# shellcheck source=tools/kbuild-copy.sh
. "$TOP/tools/kbuild-copy.sh"
if [ "$SELFTEST" = 1 ]; then
	mod=.
	copy=$TOP/build/debug-selftest
else
	mod=drivers/infiniband/sw/mroce
	copy=$TOP/build/debug-module
fi
ko=$copy/$mod/mroce.ko
kunit_on=0
[ "$SELFTEST" = 1 ] || [ "${MROCE_DEBUG_KUNIT:-1}" = 0 ] || kunit_on=1
kcopy=$TOP/build/debug-kunit
kulp=$TOP/build/debug-kulp
xtest=$copy/tools/xport-test

# build_modules: the modules below, each in a fresh copy
build_modules() {
	local tb t2

	tb=$(date +%s)
	# --- mroce.ko for this kernel, in a copy (as tools/lint.sh does)
	rm -rf "$copy"
	if [ "$SELFTEST" = 1 ]; then
		if ! { mkdir -p "$copy" &&
			cp "$HERE/debug-selftest/Kbuild" "$HERE/debug-selftest/selftest.c" "$copy/"; }; then
			die "cannot copy the self-test module to $copy"
		fi
	else
		mroce_copy_sources "$TOP" "$mod" "$copy" ||
			die "cannot copy the sources to $copy"
	fi
	# with -g, so that scripts/faddr2line can place mroce's frames
	mroce_kbuild "$dk/build" "$kver" "$copy" mroce CONFIG_RDMA_MROCE=m KCFLAGS=-g
	[ -f "$ko" ] || die "no $ko"
	echo "$ME: module built against $kver in $(($(date +%s) - tb))s: ${ko#"$TOP"/}"
	[ "$SELFTEST" = 0 ] || return 0

	# --- mroce.ko with the KUnit suites, in a copy of its own
	if [ "$kunit_on" = 1 ]; then
		t2=$(date +%s)
		rm -rf "$kcopy"
		mroce_copy_sources "$TOP" "$mod" "$kcopy" ||
			die "cannot copy the sources to $kcopy"
		mroce_kbuild "$dk/build" "$kver" "$kcopy" "mroce with its KUnit suites" \
			CONFIG_RDMA_MROCE=m CONFIG_RDMA_MROCE_KUNIT_TEST=y KCFLAGS=-g
		[ -f "$kcopy/$mod/mroce.ko" ] || die "no $kcopy/$mod/mroce.ko"
		echo "$ME: the module with its KUnit suites built in $(($(date +%s) - t2))s: ${kcopy#"$TOP"/}/$mod/mroce.ko"
	fi

	# --- the kernel ULPs the tests load (tools/kulp: t-14, t-16), for
	# this kernel too; the tests find them through MROCE_KULP_DIR
	rm -rf "$kulp"
	if ! { mkdir -p "$kulp" && cp tools/kulp/Kbuild tools/kulp/*.c "$kulp/"; }; then
		die "cannot copy tools/kulp to $kulp"
	fi
	mroce_kbuild "$dk/build" "$kver" "$kulp" tools/kulp KCFLAGS=-g

	# --- the test offload provider (tools/xport-test: t-44,
	# MROCE_XPORT=xtest) for this kernel, against the copy's exports; in
	# the copy, where its Kbuild finds the driver's mroce_xport.h two
	# levels up as in the tree.  The tests find it through MROCE_XTEST_KO.
	if ! { mkdir -p "$xtest" &&
		cp tools/xport-test/Kbuild tools/xport-test/*.c "$xtest/"; }; then
		die "cannot copy tools/xport-test to $xtest"
	fi
	mroce_kbuild "$dk/build" "$kver" "$xtest" tools/xport-test KCFLAGS=-g \
		KBUILD_EXTRA_SYMBOLS="$copy/Module.symvers"
}

# The modules are built once per content of their sources: "make check"
# runs "--build-only" in the background, next to the debug kernel's
# build, and the debug stage then finds them up to date (the digest of
# the sources and the kernel, build/debug-modules.stamp, written last).
# A lock keeps a second run from building over the first.
if [ "$SELFTEST" = 1 ]; then
	build_modules
else
	want_files=("$ko" "$kulp/mroce_kulp.ko" "$xtest/mroce_xtest.ko")
	[ "$kunit_on" = 0 ] || want_files+=("$kcopy/$mod/mroce.ko")
	mroce_build_once debug-modules "the modules for $kver" build_modules \
		"$kver" "$dk" "kunit=$kunit_on" -- "${want_files[@]}"
fi
[ "$BUILD_ONLY" = 0 ] || exit 0

kunit_ko=
kunit_test=()
if [ "$kunit_on" = 1 ]; then
	kunit_ko=$kcopy/$mod/mroce.ko
	kunit_test=("$TOP/kunit/t-kunit.sh")
	# no test named: every test, after the suites
	[ $# -gt 0 ] || mapfile -t -O 1 kunit_test < <(tools/tests/run-guest-tests.sh -l)
fi

# --- the suite on the debug kernel
results=$TOP/build/results-debug
[ "$SELFTEST" = 0 ] || results=$TOP/build/results-debug-selftest
rm -rf "$results"
mkdir -p "$results"
t1=$(date +%s)
# MROCE_VM_BZIMAGE=1: this kernel triple-faults at once when qemu enters
# the extracted vmlinux through its PVH note (seen with 6.1 + KASAN); the
# bzImage boots (~3.5 s slower under TCG, once per run).  kunit.enable=1:
# allnoconfig leaves CONFIG_KUNIT_DEFAULT_ENABLED off, and then KUnit
# prints "kunit: disabled" and runs no suite of a module it loads.
MROCE_VM_BZIMAGE=1 MROCE_KO=$ko MROCE_KULP_DIR=$kulp \
	MROCE_XTEST_KO=$xtest/mroce_xtest.ko MROCE_KUNIT_KO=$kunit_ko \
	MROCE_TEST_TIMEOUT_SCALE=${MROCE_DEBUG_TIMEOUT_SCALE:-4} \
	"$HERE/mroce-vm" --batch --kernel "$dk/bzImage" --modules "$dk/modules" \
	--mem "${MROCE_DEBUG_MEM:-3G}" --append "kasan_multi_shot kunit.enable=1" \
	--timeout "${MROCE_DEBUG_VM_TIMEOUT:-7200}" --results "$results" \
	-- tools/tests/run-guest-tests.sh "${kunit_test[@]}" "$@"
rc=$?
echo "$ME: guest suite on $kver: exit $rc after $(($(date +%s) - t1))s"

if [ -s "$results/kernel-trouble.log" ]; then
	echo "$ME: kernel reports (test: line), from ${results#"$TOP"/}/kernel-trouble.log:"
	grep -vE 'Call Trace:' "$results/kernel-trouble.log" | sed 's/\[ *[0-9.]*\] //' |
		awk '!seen[$0]++' | head -n 40 | sed 's/^/  /'
fi
if [ "$SELFTEST" = 1 ]; then
	# rc 1: the harness failed the test; 0 would mean nothing was seen,
	# anything else that the guest run itself broke.
	ok=1
	[ "$rc" = 1 ] || { echo "$ME: selftest: the suite exited $rc, wanted 1"; ok=0; }
	for want in 'BUG: KASAN: .*use-after-free' 'UBSAN: shift-out-of-bounds' \
		'possible circular locking dependency' 'kmemleak: unreferenced object .*\*'; do
		if grep -qE -- "$want" "$results/kernel-trouble.log" 2>/dev/null; then
			echo "$ME: selftest: detected: $want"
		else
			echo "$ME: selftest: NOT detected: $want"
			ok=0
		fi
	done
	[ "$ok" = 1 ] && { echo "$ME: selftest passed"; exit 0; }
	echo "$ME: selftest FAILED"
	exit 1
fi
[ "$rc" = 0 ] || echo "$ME: FAILED"
exit "$rc"
