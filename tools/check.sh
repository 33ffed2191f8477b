#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# "make check": every test mroce has, in order, each stage timed:
#   lint   checkpatch --strict, W=1 and sparse (tools/lint.sh)
#   unit   provider unit tests on the host (make -C tools/libmroce check),
#          bench.py's parsers and report (make -C tools/bench check),
#          mroce-top's (make -C tools/mroce-top check),
#          the Wireshark dissector (make -C tools/wireshark check), the
#          conformance tester's (make -C tools/conformance check), the
#          simulator's (make -C tools/sim check: the driver's protocol
#          files as a userspace library, a 16-host incast on ns-3, the
#          agreement with t-52)
#   kunit  protocol state machine suites on UML (kunit/run-kunit.sh); not
#          a default stage: the debug stage runs the same suites in its
#          guest (kunit/t-kunit.sh, first), on a kernel with KASAN, UBSAN
#          and lockdep, and a fresh machine then builds one kernel for
#          both instead of two (the UML build took 484 s)
#   guest  device and data path tests in a qemu guest (tools/tests/),
#          all but t-70-install
#   xport  the provider seam with a second user: a small subset of the
#          guest tests (MROCE_XPORT_CI_TESTS) again, with MROCE_XPORT=xtest:
#          every device bound to the test offload provider
#          tools/xport-test/mroce_xtest.ko (claim='*'), which cuts the
#          requester's chunks into packets itself as a NIC with
#          MROCE_XPORT_CAP_SEG would; results in build/results-xtest/.
#          Then the same with MROCE_XPORT=gso (stage line "xport-gso"):
#          every device on the GSO provider (mroce_gso.c, UDP fraglist
#          GSO); results in build/results-gso/.  t-44-xport and t-45-gso
#          (in the guest stage) test the providers themselves.
#          t-22-verify (every verb, data checked, across sizes) alone:
#          t-44 already runs ibv_rc_pingpong on the provider, and with
#          t-20 (100 s) or t-40-lossy (about 230 s) the stage would cost
#          minutes more for little more coverage.
#   install t-70-install in a guest of its own: the packages of "make
#          deb" (make check builds and lints them first) installed with
#          dpkg, the module built by DKMS, used without insmod.  Not in
#          the default stages: DKMS compiling the module under TCG takes
#          15-20 minutes, which CI's hour does not hold with the rest;
#          "make check-install" runs it (MROCE_CHECK_STAGES=install)
#   debug  the KUnit suites and guest tests on the debug kernel
#          (tools/guest/check-debug.sh): the suites (t-kunit), then by
#          default the subset that races destroy, teardown and hostile
#          rings and takes packets apart (MROCE_DEBUG_TESTS; "all" runs
#          every test, as "make check-debug" does), with one kmemleak
#          scan at the end (MROCE_DEBUG_KMEMLEAK=end; "each" scans after
#          every test, as check-debug.sh does by default): the whole
#          suite on KASAN under TCG does not fit CI's hour.  On a fresh
#          machine the debug kernel must be built first (791 s alone on
#          this project's 2-core machine, 2026-12-06): when "debug" is
#          among the stages, check.sh starts that build at the outset,
#          in the background at nice 19 (tools/guest/prebuild.sh, log
#          build/prebuild.log; MROCE_DEBUG_PREBUILD=0 turns this off),
#          so that it uses the core the earlier stages leave idle (a TCG
#          guest keeps about 1.2 of the 2 busy), and the modules for it
#          after it (check-debug.sh --build-only, about 2 minutes); the
#          stage's debug-kernel.sh waits for it on the cache's lock, and
#          check-debug.sh finds the modules built for the same sources
#          (build/debug-modules.stamp).  With the kernel cached only the
#          modules are built.
#          t-42 runs 15 of its 45 flush rounds there
#          (MROCE_DEBUG_FLUSH_RACE_ROUNDS)
#   k612   mroce and tools/kulp built with W=1 and sparse against
#          Debian's 6.12 LTS headers, then a named subset of the guest
#          tests on a 6.12 guest (tools/guest/check-k612.sh): the module
#          builds for 6.1 and 6.12 from one tree
#          (drivers/infiniband/sw/mroce/mroce_compat.h) and works on both.
#          The subset (MROCE_K612_CI_TESTS) covers what ib_core and the
#          network stack changed between the two: device and namespace
#          lifetime (t-10), disassociation on removal (t-12), kernel ULPs
#          and FRMR (t-14), the provider and uverbs (t-15), the data path
#          and its timers (t-20), UDP GSO and GRO (t-45, t-46).
#          Measured 2026-12-05 on 2 cores shared with other work:
#          build 131 s, guest about 300 s (boot included).  The build
#          runs in the background job too, after the debug lane's
#          (build/k612-modules.stamp), so the stage only tests.
#          The whole suite on 6.12 would double the guest stage, which
#          CI's hour does not hold; "make check-612" runs a longer list
#          (MROCE_K612_TESTS in check-k612.sh), K612_TESTS=all all of it
#   k612build  the build of k612 alone (check-k612.sh --build-only); not
#          a default stage
# Every stage runs even if an earlier one failed; the exit status is
# non-zero if any failed.  MROCE_CHECK_STAGES="lint guest" picks stages.
# The summary at the end repeats, for each failed guest stage, its "not
# ok" lines and the failed checks its runner listed.
set -uo pipefail
top=$(dirname "$(dirname "$(readlink -f "$0")")")
cd "$top" || exit 1

stages=${MROCE_CHECK_STAGES:-lint unit guest xport debug k612}
# t-00 then t-30: the per-CPU overflow of IPv6 transmit (mroce_net.c)
# corrupted a route cache slot that the debug kernel then faulted on
: "${MROCE_DEBUG_TESTS=t-00-guest-sanity t-30-loopback t-12-disassociate t-15-provider t-42-flush-race t-43-zcopy t-46-gro t-61-verbsfuzz}"
# one kmemleak scan at the end of the debug stage, not one per test
: "${MROCE_DEBUG_KMEMLEAK=end}"
# t-42's flush rounds on KASAN: 15 of the guest stage's 45 (each of its
# five kinds three times; the 45 took 283 s there)
: "${MROCE_DEBUG_FLUSH_RACE_ROUNDS=15}"
# the test offload provider's subset: see "xport" above
: "${MROCE_XPORT_CI_TESTS=t-22-verify}"
# the 6.12 guest's subset: see "k612" above
: "${MROCE_K612_CI_TESTS=t-10-device t-12-disassociate t-14-kulp t-15-provider t-20-rc-pingpong t-45-gso t-46-gro}"
failed=()
summary=()
digest=()

# what the debug and k612 stages build (the debug kernel, then each
# lane's modules), built in the background while the other stages run
# (see "debug" above; MROCE_DEBUG_PREBUILD=0 turns it off for both)
prebuild=
lanes=()
case " $stages " in *" debug "*) lanes+=(debug) ;; esac
case " $stages " in *" k612 "*) lanes+=(k612) ;; esac
if [ ${#lanes[@]} -gt 0 ] && [ "${MROCE_DEBUG_PREBUILD:-1}" != 0 ] &&
	mkdir -p build; then
	# A session of its own, so that an interrupted check stops the
	# whole build (make and its compilers) with it.  A new session is a
	# new scheduler autogroup, and autogroups share the CPUs equally
	# whatever their tasks' nice values: the group itself must be
	# niced, or the build takes half the machine from the guest
	# (measured: tests 1.5-2.3x slower).
	# shellcheck disable=SC2016  # $0 is the inner shell's
	setsid sh -c 'echo 19 >/proc/self/autogroup 2>/dev/null
		exec nice -n 19 ionice -c 3 "$0" "$@"' \
		tools/guest/prebuild.sh "${lanes[@]}" \
		>build/prebuild.log 2>&1 </dev/null &
	prebuild=$!
	trap '[ -z "$prebuild" ] || kill -- "-$prebuild" 2>/dev/null' EXIT
fi

run_stage() {
	local name=$1 t0 rc
	shift
	echo "=== check: $name"
	t0=$(date +%s)
	"$@"
	rc=$?
	summary+=("$(printf '%-6s %-4s %4d s' "$name" \
		"$([ $rc = 0 ] && echo ok || echo FAIL)" $(( $(date +%s) - t0 )))")
	[ $rc = 0 ] || failed+=("$name")
	[ $rc = 0 ] || stage_digest "$name"
}

# A failed guest stage's "not ok" lines and the failed checks its runner
# listed, repeated in the summary: a report that shows only the start and
# the end of a long log (CI's) must still name the case that failed.
# Where each stage's guest runner leaves its results: mroce-vm's default,
# the two xport runs (given below), check-debug.sh's and check-k612.sh's.
declare -A results_of=(
	[guest]=$top/build/results
	[xport]=$top/build/results-xtest
	[xport-gso]=$top/build/results-gso
	[debug]=$top/build/results-debug
	[k612]=$top/build/results-k612
)
stage_digest() {
	local tap

	[ -n "${results_of[$1]:-}" ] || return
	tap=${results_of[$1]}/guest-tests.tap
	[ -f "$tap" ] || return
	mapfile -t -O "${#digest[@]}" digest < <(
		sed -n -e "s/^\(not ok .*\)/$1: \1/p" \
			-e "/^# ---- .*: failed checks ----\$/,/^[^#]/s/^# \(.*FAIL - .*\)/$1:   \1/p" \
			"$tap" | cut -c1-300 | head -n 40)
}

# the provider's unit tests, bench.py's, mroce-top's, the dissector's,
# the conformance tester's, the simulator's: one stage, one line
unit_tests() {
	make -C tools/libmroce check && make -C tools/bench check &&
		make -C tools/mroce-top check && make -C tools/wireshark check &&
		make -C tools/conformance check && make -C tools/sim check
}

for s in $stages; do
	case $s in
	lint)	run_stage lint tools/lint.sh ;;
	unit)	run_stage unit unit_tests ;;
	kunit)	run_stage kunit kunit/run-kunit.sh ;;
	guest)	mapfile -t guest_tests < <(tools/tests/run-guest-tests.sh -l |
			grep -vx t-70-install)
		run_stage guest tools/guest/mroce-vm --timeout 2400 -- \
			tools/tests/run-guest-tests.sh "${guest_tests[@]}" ;;
	xport)	read -ra xport_tests <<<"$MROCE_XPORT_CI_TESTS"
		MROCE_XPORT=xtest run_stage xport tools/guest/mroce-vm \
			--timeout 900 --results "${results_of[xport]}" -- \
			tools/tests/run-guest-tests.sh "${xport_tests[@]}"
		MROCE_XPORT=gso run_stage xport-gso tools/guest/mroce-vm \
			--timeout 900 --results "${results_of[xport-gso]}" -- \
			tools/tests/run-guest-tests.sh "${xport_tests[@]}" ;;
	install) run_stage install tools/guest/mroce-vm --timeout 2700 -- \
			tools/tests/run-guest-tests.sh t-70-install ;;
	debug)	debug_tests=()
		[ "$MROCE_DEBUG_TESTS" = all ] ||
			read -ra debug_tests <<<"$MROCE_DEBUG_TESTS"
		MROCE_KMEMLEAK=$MROCE_DEBUG_KMEMLEAK \
		MROCE_FLUSH_RACE_ROUNDS=$MROCE_DEBUG_FLUSH_RACE_ROUNDS \
			run_stage debug tools/guest/check-debug.sh "${debug_tests[@]}" ;;
	k612build) run_stage k612build tools/guest/check-k612.sh --build-only ;;
	k612)	read -ra k612_tests <<<"$MROCE_K612_CI_TESTS"
		run_stage k612 tools/guest/check-k612.sh "${k612_tests[@]}" ;;
	*)	echo "check: unknown stage $s" >&2; failed+=("$s") ;;
	esac
done

if [ -n "$prebuild" ]; then
	wait "$prebuild" 2>/dev/null
	prebuild=
fi

echo "=== check: summary"
printf '%s\n' "${summary[@]}"
[ ${#digest[@]} = 0 ] || printf '%s\n' "${digest[@]}"
if [ ${#failed[@]} -gt 0 ]; then
	echo "check: FAILED: ${failed[*]}"
	exit 1
fi
echo "check: all stages passed"
