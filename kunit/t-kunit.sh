#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 300
#
# The mroce KUnit suites (drivers/infiniband/sw/mroce/*_test.c) on the
# debug lane's kernel (CONFIG_KUNIT=y with KASAN, UBSAN, lockdep and
# kmemleak): tools/guest/check-debug.sh builds mroce.ko a second time with
# CONFIG_RDMA_MROCE_KUNIT_TEST=y, points MROCE_KUNIT_KO at it and runs this
# test first.  KUnit runs a module's suites when it loads (before its
# init), and prints them as KTAP to the kernel log:
#
#   [...]     KTAP version 1
#   [...]     # Subtest: mroce_psn
#   [...]     1..10
#   [...]     ok 1 mroce_psn_test_...        (a case, indented)
#   [...] ok 3 mroce_psn                     (the suite)
#
# Checks: every suite the sources declare (".name" of each struct
# kunit_suite) reported once and passed, each case passed or was skipped
# with a reason, the case count is each suite's plan, no case failed; the
# module unloads.  The harness also fails the test on any kernel report
# (KASAN, UBSAN, lockdep...) and, after it, on a leak in mroce.
#
# The same suites run on UML with kunit/run-kunit.sh ("make kunit"), the
# quick loop while working on the protocol code.
# shellcheck source=SCRIPTDIR/../tools/tests/lib.sh
. "$MROCE_TOP/tools/tests/lib.sh"

[ -n "${MROCE_KUNIT_KO:-}" ] ||
	skip "MROCE_KUNIT_KO is not set: tools/guest/check-debug.sh builds the module with the suites"
[ -f "$MROCE_KUNIT_KO" ] || fail "$MROCE_KUNIT_KO not found"

src=$MROCE_TOP/drivers/infiniband/sw/mroce
# the suites the sources declare: the .name after each "struct kunit_suite"
mapfile -t want < <(awk '
	/struct kunit_suite [a-z0-9_]+ = \{/ { s = 1; next }
	s && /\.name = "/ { sub(/.*\.name = "/, ""); sub(/".*/, ""); print; s = 0 }
' "$src"/*_test.c | sort)
check "the sources declare KUnit suites (${#want[@]})" test "${#want[@]}" -ge 10

need_module ib_core ib_uverbs udp_tunnel ip6_udp_tunnel
unload_mroce
mark="mroce-kunit-$$-$(date +%s%N)"
echo "$mark" >/dev/kmsg
t0=$(date +%s)
check "insmod the module with the KUnit suites" insmod "$MROCE_KUNIT_KO"
log "RESULT the suites took $(( $(date +%s) - t0 )) s to load and run"
check "rmmod it" rmmod mroce

# (a kernel without KUnit refuses the module: unknown kunit symbols)
ktap=$MROCE_RESULTS/t-kunit.ktap
[ -w "$MROCE_RESULTS" ] || ktap=$(mktemp /tmp/t-kunit.XXXXXX)
# the log after our mark, without the timestamps
dmesg | sed -n "/$mark/,\$p" | sed 's/^\[[ 0-9.]*\] //' >"$ktap"
grep -q '^kunit: disabled' "$ktap" &&
	fail "KUnit is disabled on this boot: boot with kunit.enable=1 (CONFIG_KUNIT_DEFAULT_ENABLED is off)"
echo "--- KTAP ($ktap)"
cat "$ktap"
echo "---"

# suite lines: not indented; case lines: four spaces (parameterised
# cases nest deeper and are counted in their case's line)
mapfile -t got < <(awk '/^(not )?ok [0-9]+ /' "$ktap")
mapfile -t bad < <(printf '%s\n' "${got[@]}" | grep '^not ok' || true)
check_eq "suites reported: one line each for those the sources declare" \
	"$(printf '%s\n' "${want[@]}")" \
	"$(printf '%s\n' "${got[@]}" | sed -E 's/^(not )?ok [0-9]+ (- )?//; s/ .*//' | sort)"
check_eq "no suite failed" "" "${bad[*]}"

cases_ok=$(grep -cE '^    ok [0-9]+ ' "$ktap")
cases_bad=$(grep -cE '^    not ok [0-9]+ ' "$ktap")
cases_skip=$(grep -cE '^    ok [0-9]+ .* # SKIP' "$ktap")
plan=$(awk '/^    1\.\.[0-9]+$/ { sub(/^ *1\.\./, ""); n += $0 } END { print n + 0 }' "$ktap")
log "RESULT KUnit: ${#got[@]} suites, $plan cases planned, $cases_ok ok ($cases_skip skipped), $cases_bad failed"
check_eq "every planned case reported" "$plan" "$((cases_ok + cases_bad))"
check_eq "no case failed" 0 "$cases_bad"
check "more than 100 cases ran" test "$cases_ok" -gt 100
if [ "$cases_skip" -gt 0 ]; then
	grep -E '^    ok [0-9]+ .* # SKIP' "$ktap"
	check_fail "every skipped case says why" \
		grep -qE '^    ok [0-9]+ .* # SKIP *$' "$ktap"
fi
