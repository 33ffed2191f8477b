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
# are killed, rdma links deleted, the mroce module (and the test offload
# provider mroce_xtest) unloaded and the
# topology removed (tools/guest/topo.sh clean: topo.sh's namespaces and
# tools/guest/fabric.sh's).  Each test runs with a clean
# environment (PATH, HOME, LANG, MROCE_*, RDMAV_*), stdin from /dev/null,
# in the project top, under its own timeout: "# timeout: SECONDS" in the
# test's first 20 lines, else $MROCE_TEST_TIMEOUT, else 300; times
# $MROCE_TEST_TIMEOUT_SCALE (an integer, default 1: the debug lane's
# kernel is several times slower).
#
# Output is TAP (version 13) on stdout; a failing test's log follows its
# "not ok" line as "# " diagnostics.  Each test's full log is saved to
# $MROCE_RESULTS/<name>.log (default /results), the TAP stream to
# $MROCE_RESULTS/guest-tests.tap.  The last line is the summary
#	guest: N passed, N failed[, N skipped]
# A test exiting 77 is skipped.  A test also fails when the kernel logs a
# warning, BUG, oops or a report of a debug kernel's checkers (KASAN,
# UBSAN, lockdep, debug objects, list debugging...) while it runs or while
# it is cleaned up after (MROCE_DMESG_CHECK=0 turns that off), or when the
# mroce module cannot be unloaded after it.  Every matching kernel line is
# also collected in $MROCE_RESULTS/kernel-trouble.log, under the test's name.
# Five seconds before a test's timeout, if it still runs, a hang report
# goes to its log: every process of the test and every task in D state,
# each with its kernel stack (/proc/PID/stack) and wait channel.
#
# kmemleak (a kernel with /sys/kernel/debug/kmemleak, i.e. the debug lane):
# boot-time suspects are cleared before the first test; after each test and
# its cleanup (mroce unloaded) memory is scanned, and a test fails when a
# suspected leak's backtrace is in mroce: a frame "[mroce]", or an address
# in one of the ranges mroce was loaded at (frames of an unloaded module
# are printed as bare addresses).  A last scan, a few seconds after the
# last test, is reported as one more test, "kmemleak-final".  Suspects are
# saved to $MROCE_RESULTS/kmemleak.log.  MROCE_KMEMLEAK=0 turns it off,
# MROCE_KMEMLEAK=end scans only once at the end (as kmemleak-final).
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
# Kernel log lines that fail a test.  Most reports of a debug kernel's
# checkers start with "BUG:" (KASAN, sleeping in atomic context) or
# "WARNING:" (lockdep, suspicious RCU usage, ODEBUG, refcount_t); the
# others are listed on their own.
KERNEL_TROUBLE='(Call Trace:|BUG:|WARNING:|Oops|general protection fault|KASAN|UBSAN:|kernel BUG at|soft lockup|hung_task|blocked for more than|detected (expedited )?stall|refcount_t:|list_(add|del) corruption'
KERNEL_TROUBLE+='|ODEBUG:|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|bad unlock balance|lock held when returning|DEBUG_LOCKS_WARN_ON|trying to register non-static key|sleeping function called from invalid context|scheduling while atomic|leaked reference|unregister_netdevice: waiting)'
TIMEOUT_SCALE=${MROCE_TEST_TIMEOUT_SCALE:-1}
KMEMLEAK=/sys/kernel/debug/kmemleak

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
[[ $TIMEOUT_SCALE =~ ^[1-9][0-9]*$ ]] ||
	{ echo "$ME: MROCE_TEST_TIMEOUT_SCALE must be a positive integer" >&2; exit 2; }
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
# Remember where mroce is loaded: after rmmod, kmemleak prints its frames
# as bare addresses.  One "START END" line (hex) per distinct load; noted
# every second while a test runs (in this shell, not in a subshell).
MROCE_RANGES=
note_mroce_range() {
	local name size _ addr r
	while read -r name size _ _ _ addr _; do
		[ "$name" = mroce ] || continue
		[[ $addr =~ ^0x[0-9a-f]+$ ]] && [[ $size =~ ^[0-9]+$ ]] || return 0
		[ "$((addr))" != 0 ] || return 0	# addresses hidden
		r=$(printf '%x %x' "$((addr))" "$((addr + size))")
	done </proc/modules
	[ -n "${r:-}" ] || return 0
	case "
$MROCE_RANGES
" in
	*"
$r
"*) ;;
	*) MROCE_RANGES="${MROCE_RANGES:+$MROCE_RANGES
}$r" ;;
	esac
}

# Everything a test may leave behind.  Prints what it could not undo.
clean_env() {
	local l i
	note_mroce_range
	if command -v rdma >/dev/null 2>&1; then
		for l in $(rdma link show 2>/dev/null | awk '$1 == "link" { sub(/\/.*/, "", $2); print $2 }' | sort -u); do
			rdma link delete "$l" 2>/dev/null
		done
	fi
	# the test offload provider (t-44, MROCE_XPORT=xtest) uses mroce
	if [ -d /sys/module/mroce_xtest ]; then
		rmmod mroce_xtest 2>/dev/null ||
			echo "the mroce_xtest module could not be unloaded (refcount $(cat /sys/module/mroce_xtest/refcnt 2>/dev/null))"
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

# The kernel log of one test: a marker line goes into it before the test
# starts, and the test's part is what follows the marker.  Counting lines
# instead missed everything of a test that clears the log (t-10-device
# runs dmesg -C): its first lines fell in the count of the old log.  With
# the marker gone (cleared), the whole log is the test's.
kmsg_mark() { echo "<6>run-guest-tests: $1" >/dev/kmsg 2>/dev/null; }
klog_since() {
	dmesg 2>/dev/null | awk -v m="run-guest-tests: $1" '
		seen { print; next }
		index($0, m) { seen = 1; n = 0; next }
		{ old[++n] = $0 }
		END { if (!seen) for (i = 1; i <= n; i++) print old[i] }'
}

# hang_report PGID: what a test that is about to time out is waiting on,
# for its log: every process of its group (timeout(1)'s) and every task in
# uninterruptible sleep (D), each with its kernel stack.  A hung test
# otherwise leaves only its last line of output, and a task in a killable
# or interruptible wait never trips the hung task detector.
hang_report() {
	local p st pg comm
	echo "# ---- hang report: $(cut -d' ' -f1 /proc/uptime)s after boot, the test's processes and the blocked tasks ----"
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		# /proc/PID/stat: "PID (comm) STATE PPID PGRP ..."; comm may hold spaces
		read -r st pg < <(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null |
			awk '{ print $1, $3 }') || continue
		[ "$pg" = "$1" ] || [ "$st" = D ] || continue
		comm=$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)
		[ -n "$comm" ] || comm="[$(cat "/proc/$p/comm" 2>/dev/null)]"
		echo "# pid $p state $st wchan $(cat "/proc/$p/wchan" 2>/dev/null): ${comm:0:200}"
		sed 's/^/#   /' "/proc/$p/stack" 2>/dev/null
	done
}

# ------------------------------------------------------------ kmemleak
KMEMLEAK_MODE=0
if [ -w "$KMEMLEAK" ]; then
	case "${MROCE_KMEMLEAK:-each}" in
	0) ;;
	end) KMEMLEAK_MODE=end ;;
	*) KMEMLEAK_MODE=each ;;
	esac
fi

# kmemleak_check LABEL: scan, append the suspects to kmemleak.log, forget
# them (clear), print those whose backtrace is in mroce, one line each
# ("unreferenced object ... (size N), comm ...: frame; frame; ...").
kmemleak_check() {
	local raw
	echo scan >"$KMEMLEAK" 2>/dev/null || { echo "kmemleak scan failed"; return 0; }
	raw=$(cat "$KMEMLEAK" 2>/dev/null)
	echo clear >"$KMEMLEAK" 2>/dev/null
	[ -n "$raw" ] || return 0
	printf '# ---- kmemleak after %s (mroce was at: %s) ----\n%s\n' "$1" \
		"$(printf '%s' "$MROCE_RANGES" | tr '\n' ',')" "$raw" >>"$RESULTS/kmemleak.log"
	printf '%s\n' "$raw" | awk -v ranges="$MROCE_RANGES" '
	function flush() {
		if (obj != "" && ours) print obj ", " comm ": " frames
		obj = ""; comm = ""; frames = ""; ours = 0; nf = 0
	}
	# bare hex (no 0x), 16 digits: compare as strings of equal length
	function inrange(a,  i) {
		a = sprintf("%16s", a); gsub(/ /, "0", a)
		for (i = 1; i <= nr; i++)
			if (a >= lo[i] && a < hi[i]) return 1
		return 0
	}
	BEGIN {
		n = split(ranges, r, "\n")
		for (i = 1; i <= n; i++) {
			if (split(r[i], rf, " ") != 2) continue
			nr++
			lo[nr] = sprintf("%16s", rf[1]); gsub(/ /, "0", lo[nr])
			hi[nr] = sprintf("%16s", rf[2]); gsub(/ /, "0", hi[nr])
		}
	}
	/^unreferenced object/ { flush(); obj = $0; sub(/:$/, "", obj); next }
	/^ *comm / { c = $0; sub(/^ *comm /, "", c); sub(/, jiffies.*/, "", c); comm = c; next }
	# "[<hashed pointer>] symbol+off/size [module]", or for a module
	# that is gone "[<hashed pointer>] 0xADDRESS"
	/^ *\[<[0-9a-f]+>\]/ {
		f = $0; sub(/^ *\[<[0-9a-f]+>\] */, "", f)
		if (f ~ /\[mroce\]$/ || (f ~ /^0x[0-9a-f]+$/ && inrange(substr(f, 3)))) {
			ours = 1; f = f "*"
		}
		if (nf++ < 12) frames = frames (frames == "" ? "" : "; ") f
		next
	}
	END { flush() }'
}

# ------------------------------------------------------------ run
N=${#TESTS[@]}
PASSED=0 FAILED=0 SKIPPED=0
out "TAP version 13"
if [ "$KMEMLEAK_MODE" = 0 ]; then out "1..$N"; else out "1..$((N + 1))"; fi
: >"$RESULTS/kernel-trouble.log"

leftover=$(clean_env)
[ -n "$leftover" ] && out "# before the first test: $leftover"
if [ "$KMEMLEAK_MODE" != 0 ]; then
	# forget what boot and the first cleanup left (not ours to judge)
	: >"$RESULTS/kmemleak.log"
	echo scan >"$KMEMLEAK" 2>/dev/null
	echo clear >"$KMEMLEAK" 2>/dev/null
fi

i=0
for t in "${TESTS[@]}"; do
	i=$((i + 1))
	name=$(basename "$t" .sh)
	logf=$RESULTS/$name.log
	to=$(($(test_timeout "$t") * TIMEOUT_SCALE))
	test_env
	kmark="test $i $name started $(date +%s.%N)"
	kmsg_mark "$kmark"
	start=$(date +%s.%N)
	# on the console too: a guest that dies in a test says which one
	echo "# $name: started"
	{
		echo "# $name, started $(date -u '+%F %T') UTC, timeout ${to}s"
	} >"$logf"
	# timeout(1) puts itself and the test in a new process group and kills
	# that whole group on expiry; we kill it again afterwards for leftovers.
	(cd "$TOP" && exec env -i "${TEST_ENV[@]}" TEST_NAME="$name" \
		timeout -k 10 "$to" "$t") </dev/null >>"$logf" 2>&1 &
	pid=$!
	# a few seconds before timeout(1) kills it: where it hangs
	(
		trap 'kill "$s" 2>/dev/null; exit 0' TERM
		sleep "$((to > 20 ? to - 5 : to))" &
		s=$!
		wait "$s" && kill -0 "$pid" 2>/dev/null &&
			hang_report "$pid" >>"$logf" 2>&1
	) &
	watcher=$!
	if [ "$KMEMLEAK_MODE" = 0 ]; then
		wait "$pid"
	else
		# tests load and unload mroce themselves: note where it is
		while kill -0 "$pid" 2>/dev/null; do
			note_mroce_range
			sleep 1
		done
		note_mroce_range
		wait "$pid"
	fi
	rc=$?
	kill -KILL -- "-$pid" 2>/dev/null
	kill "$watcher" 2>/dev/null
	wait "$watcher" 2>/dev/null
	end=$(date +%s.%N)
	secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')

	why=
	case "$rc" in
	0) ;;
	77) ;;
	124|137) why="timed out after ${to}s" ;;
	*) why="exit status $rc" ;;
	esac

	note_mroce_range	# clean_env runs in a subshell
	leftover=$(clean_env)
	if [ -n "$leftover" ]; then
		echo "# cleanup after $name: $leftover" >>"$logf"
		if [ "$rc" = 0 ] || [ "$rc" = 77 ]; then
			rc=1
			why="cleanup failed: $leftover"
		fi
	fi

	# Kernel trouble during the test or its cleanup (rmmod) fails it.
	if [ "${MROCE_DMESG_CHECK:-1}" = 1 ]; then
		klog=$(klog_since "$kmark")
		trouble=$(printf '%s\n' "$klog" | grep -E "$KERNEL_TROUBLE")
		if [ -n "$trouble" ]; then
			case "$rc" in 0|77) rc=1 ;; esac
			why="${why:+$why; }kernel: $(echo "$trouble" | head -n 1 | sed 's/^\[[^]]*\] *//')"
			printf '%s\n' "$trouble" | sed "s/^/$name: /" >>"$RESULTS/kernel-trouble.log"
		fi
		{
			echo "# ---- kernel log during $name and its cleanup ----"
			printf '%s\n' "$klog"
		} >>"$logf"
	fi

	if [ "$KMEMLEAK_MODE" = each ]; then
		leaks=$(kmemleak_check "$name")
		if [ -n "$leaks" ]; then
			{
				echo "# ---- kmemleak: suspected leaks in mroce (* = mroce frame) ----"
				printf '%s\n' "$leaks"
			} >>"$logf"
			printf '%s\n' "$leaks" | sed "s/^/$name: kmemleak: /" >>"$RESULTS/kernel-trouble.log"
			case "$rc" in 0|77) rc=1 ;; esac
			why="${why:+$why; }kmemleak: $(printf '%s\n' "$leaks" | wc -l) suspected leak(s) in mroce"
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
		# last, so that a report showing only the end still names them
		fails=$(grep -E '^(# )*FAIL - ' "$logf" | head -n 10)
		if [ -n "$fails" ]; then
			out "# ---- $name: failed checks ----"
			printf '%s\n' "$fails" | cut -c1-400 | sed 's/^/# /' | tee -a "$TAP"
		fi
	fi
done

# The last scan: a suspect must be older than 5 s to be reported.
if [ "$KMEMLEAK_MODE" != 0 ]; then
	sleep 6
	leftover=$(clean_env)
	leaks=$(kmemleak_check "the last test")
	if [ -z "$leaks" ] && [ -z "$leftover" ]; then
		PASSED=$((PASSED + 1))
		out "ok $((N + 1)) - kmemleak-final"
	else
		FAILED=$((FAILED + 1))
		out "not ok $((N + 1)) - kmemleak-final # ${leftover:+$leftover; }$(printf '%s\n' "$leaks" | sed '/^$/d' | wc -l) suspected leak(s) in mroce"
		[ -z "$leaks" ] || printf '%s\n' "$leaks" | sed 's/^/# /' | tee -a "$TAP"
		[ -z "$leaks" ] || printf '%s\n' "$leaks" | sed "s/^/kmemleak-final: kmemleak: /" >>"$RESULTS/kernel-trouble.log"
	fi
fi

summary="guest: $PASSED passed, $FAILED failed"
[ "$SKIPPED" -gt 0 ] && summary="$summary, $SKIPPED skipped"
out "$summary"
[ "$FAILED" = 0 ]
