#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# run-guest-tests.sh - run the guest tests, INSIDE the mroce test guest:
#
#	tools/guest/mroce-vm -- tools/tests/run-guest-tests.sh [TEST...]
#
# Runs every executable tools/tests/t-*.sh in sorted order, or the TESTs
# named (t-00-guest-sanity, t-00-guest-sanity.sh or a path).  Before each
# test the environment is cleaned: leftover processes of the previous test
# are killed, rdma links deleted, the mroce module unloaded and the
# topology removed (tools/guest/topo.sh clean: topo.sh's namespaces and
# tools/guest/fabric.sh's).  Each test runs with a clean
# environment (PATH, HOME, LANG, MROCE_*, RDMAV_*), stdin from /dev/null,
# in the project top, under its own timeout: "# timeout: SECONDS" in the
# test's first 20 lines, else $MROCE_TEST_TIMEOUT, else 300.
#
# Output is TAP (version 13) on stdout; a failing test's log follows its
# "not ok" line as "# " diagnostics.  Each test's full log is saved to
# $MROCE_RESULTS/<name>.log (default /results), the TAP stream to
# $MROCE_RESULTS/guest-tests.tap.  The last line is the summary
#	guest: N passed, N failed[, N skipped]
# A test exiting 77 is skipped.  A test also fails when the kernel logs a
# warning, BUG or oops while it runs (MROCE_DMESG_CHECK=0 turns that off),
# or when the mroce module cannot be unloaded after it.
#
# Options: -l  list the tests that would run and exit
#          -h  this help
# Exit status: 0 when no test failed, 1 otherwise, 2 on usage errors.
set -uo pipefail

ME=run-guest-tests
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
TOP=$(cd "$HERE/../.." && pwd -P)
TOPO=$TOP/tools/guest/topo.sh
DEFAULT_TIMEOUT=${MROCE_TEST_TIMEOUT:-300}
DIAG_LINES=${MROCE_TEST_DIAG_LINES:-200}
KERNEL_TROUBLE='(Call Trace:|BUG:|WARNING:|Oops|general protection fault|KASAN|UBSAN:|kernel BUG at|soft lockup|hung_task|blocked for more than|detected stall|refcount_t:|list_(add|del) corruption)'

usage() { sed -n '3,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

LIST_ONLY=0
while getopts lh opt; do
	case "$opt" in
	l) LIST_ONLY=1 ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

if [ "${MROCE_IN_GUEST:-0}" != 1 ] && [ "${MROCE_ALLOW_HOST:-0}" != 1 ] && [ "$LIST_ONLY" = 0 ]; then
	echo "$ME: run me inside the guest: tools/guest/mroce-vm -- tools/tests/run-guest-tests.sh" >&2
	echo "$ME: (tests load kernel modules and change network namespaces; MROCE_ALLOW_HOST=1 forces)" >&2
	exit 2
fi

# ------------------------------------------------------------ the tests
TESTS=()
if [ $# -eq 0 ]; then
	while IFS= read -r t; do
		[ -x "$t" ] && TESTS+=("$t")
	done < <(LC_ALL=C ls -1d "$HERE"/t-*.sh 2>/dev/null)
else
	for a in "$@"; do
		case "$a" in
		*/*) t=$a ;;
		*.sh) t=$HERE/$a ;;
		*) t=$HERE/$a.sh ;;
		esac
		[ -f "$t" ] || { echo "$ME: no such test: $a" >&2; exit 2; }
		TESTS+=("$(cd "$(dirname "$t")" && pwd -P)/$(basename "$t")")
	done
fi
if [ ${#TESTS[@]} -eq 0 ]; then
	echo "$ME: no executable tests (t-*.sh) in $HERE" >&2
	exit 1
fi
if [ "$LIST_ONLY" = 1 ]; then
	for t in "${TESTS[@]}"; do basename "$t" .sh; done
	exit 0
fi

RESULTS=${MROCE_RESULTS:-/results}
if ! mkdir -p "$RESULTS" 2>/dev/null || ! [ -w "$RESULTS" ]; then
	RESULTS=$(mktemp -d /tmp/mroce-results.XXXXXX)
	echo "# results dir not writable, using $RESULTS"
fi
export MROCE_RESULTS=$RESULTS MROCE_TOP=$TOP

TAP=$RESULTS/guest-tests.tap
: >"$TAP"
out() { printf '%s\n' "$*" | tee -a "$TAP"; }

# ------------------------------------------------------------ cleaning
# Everything a test may leave behind.  Prints what it could not undo.
clean_env() {
	local l i
	if command -v rdma >/dev/null 2>&1; then
		for l in $(rdma link show 2>/dev/null | awk '$1 == "link" { sub(/\/.*/, "", $2); print $2 }' | sort -u); do
			rdma link delete "$l" 2>/dev/null
		done
	fi
	if [ -d /sys/module/mroce ]; then
		for i in 1 2 3 4 5 6 7 8 9 10; do
			rmmod mroce 2>/dev/null && break
			sleep 0.5
		done
		[ -d /sys/module/mroce ] && echo "the mroce module could not be unloaded (refcount $(cat /sys/module/mroce/refcnt 2>/dev/null))"
	fi
	MROCE_IN_GUEST=1 "$TOPO" clean || echo "topology cleanup failed"
	return 0
}

# Environment for a test: the basics and our own variables only.
test_env() {
	local n
	TEST_ENV=(PATH="$PATH" HOME="${HOME:-/root}" LANG="${LANG:-C.UTF-8}" TERM=dumb)
	for n in $(compgen -e); do
		case "$n" in
		MROCE_*|RDMAV_*) TEST_ENV+=("$n=${!n}") ;;
		esac
	done
}

test_timeout() {
	local t
	t=$(head -n 20 "$1" | sed -n 's/^#[[:space:]]*timeout:[[:space:]]*\([0-9][0-9]*\).*/\1/p' | head -n 1)
	echo "${t:-$DEFAULT_TIMEOUT}"
}

kmsg_count() { dmesg 2>/dev/null | wc -l; }

# ------------------------------------------------------------ run
N=${#TESTS[@]}
PASSED=0 FAILED=0 SKIPPED=0
out "TAP version 13"
out "1..$N"

leftover=$(clean_env)
[ -n "$leftover" ] && out "# before the first test: $leftover"

i=0
for t in "${TESTS[@]}"; do
	i=$((i + 1))
	name=$(basename "$t" .sh)
	logf=$RESULTS/$name.log
	to=$(test_timeout "$t")
	test_env
	k0=$(kmsg_count)
	start=$(date +%s.%N)
	{
		echo "# $name, started $(date -u '+%F %T') UTC, timeout ${to}s"
	} >"$logf"
	# timeout(1) puts itself and the test in a new process group and kills
	# that whole group on expiry; we kill it again afterwards for leftovers.
	(cd "$TOP" && exec env -i "${TEST_ENV[@]}" TEST_NAME="$name" \
		timeout -k 10 "$to" "$t") </dev/null >>"$logf" 2>&1 &
	pid=$!
	wait "$pid"
	rc=$?
	kill -KILL -- "-$pid" 2>/dev/null
	end=$(date +%s.%N)
	secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')

	why=
	case "$rc" in
	0) ;;
	77) ;;
	124|137) why="timed out after ${to}s" ;;
	*) why="exit status $rc" ;;
	esac

	# Kernel trouble during the test fails it.
	if [ "${MROCE_DMESG_CHECK:-1}" = 1 ]; then
		trouble=$(dmesg 2>/dev/null | tail -n +$((k0 + 1)) | grep -E "$KERNEL_TROUBLE" | head -n 5)
		if [ -n "$trouble" ]; then
			case "$rc" in 0|77) rc=1 ;; esac
			why="${why:+$why; }kernel: $(echo "$trouble" | head -n 1 | sed 's/^\[[^]]*\] *//')"
		fi
		{
			echo "# ---- kernel log during $name ----"
			dmesg 2>/dev/null | tail -n +$((k0 + 1))
		} >>"$logf"
	fi

	leftover=$(clean_env)
	if [ -n "$leftover" ]; then
		echo "# cleanup after $name: $leftover" >>"$logf"
		if [ "$rc" = 0 ] || [ "$rc" = 77 ]; then
			rc=1
			why="cleanup failed: $leftover"
		fi
	fi
	echo "# $name: exit $rc after ${secs}s${why:+ ($why)}" >>"$logf"

	if [ "$rc" = 0 ]; then
		PASSED=$((PASSED + 1))
		out "ok $i - $name # ${secs}s"
	elif [ "$rc" = 77 ]; then
		SKIPPED=$((SKIPPED + 1))
		reason=$(grep -m 1 '^SKIP: ' "$logf" | sed 's/^SKIP: //')
		out "ok $i - $name # SKIP ${reason:-skipped}"
	else
		FAILED=$((FAILED + 1))
		out "not ok $i - $name # ${why:-failed} (${secs}s)"
		nl=$(wc -l <"$logf")
		if [ "$nl" -gt "$DIAG_LINES" ]; then
			out "# (last $DIAG_LINES of $nl lines of $logf)"
		fi
		tail -n "$DIAG_LINES" "$logf" | sed 's/^/# /' | tee -a "$TAP"
	fi
done

summary="guest: $PASSED passed, $FAILED failed"
[ "$SKIPPED" -gt 0 ] && summary="$summary, $SKIPPED skipped"
out "$summary"
[ "$FAILED" = 0 ]
