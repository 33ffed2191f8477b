# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# lib.sh - helpers for guest tests (tools/tests/t-*.sh).  Source it first:
#
#	. "$(dirname "$0")/lib.sh"
#
# POSIX sh (works from bash, dash, busybox sh).  Tests run INSIDE the guest
# (tools/guest/mroce-vm), started by tools/tests/run-guest-tests.sh, which
# saves their output to /results/<name>.log.  Exit 0 = pass, 77 = skipped,
# anything else = fail; the helpers below do that bookkeeping.
#
# Assertions (each counted; a failed one makes the test fail at exit but the
# test goes on, except require/fail which stop it):
#   check DESC CMD...          CMD must succeed
#   check_fail DESC CMD...     CMD must fail
#   check_eq DESC EXPECTED ACTUAL
#   check_match DESC REGEX STRING   (grep -E)
#   require DESC CMD...        like check, but stop the test on failure
#   fail MSG                   fail now and stop
#   skip REASON                stop, test counted as skipped (exit 77)
# Environment:
#   need_cmd CMD...            skip unless every CMD exists
#   need_module MOD...         modprobe each, skip if it does not exist
#   load_mroce                 load ib_core ib_uverbs udp_tunnel
#                              ip6_udp_tunnel, then insmod $MROCE_KO; with
#                              MROCE_XPORT=xtest also the test offload
#                              provider $MROCE_XTEST_KO claim='*' (every
#                              device then uses it, tools/xport-test);
#                              MROCE_XPORT=gso with gso='*' (every device
#                              uses the GSO provider, mroce_gso.c), else
#                              with gso='' (none does) unless a PARAM
#                              names gso
#   unload_mroce               rmmod mroce_xtest, then mroce, if loaded
#   on_exit CMD                run CMD (a string, eval'ed) when the test ends
#   log MSG                    print "# MSG"
#   gid_index DEV GID          index of GID in DEV's GID table; counter DEV NAME
#   counters DEV [PREFIX]      all of DEV's port counters from one rdma call;
#                              ctr SNAPSHOT NAME reads one of them
# Topology (from tools/guest/topo.sh): topo_pair, topo_star N, topo_clean,
#   topo_exec HOST CMD..., topo_ip4 I, topo_ip6 I; also in_h1 / in_h2 CMD...
#   A spine-leaf fabric instead: . "$MROCE_TOP/tools/guest/fabric.sh", then
#   fabric_build, fabric_shape, fabric_cut... (Documentation/fabric.rst).
#
# Variables: MROCE_TOP (project top), MROCE_KO (path of mroce.ko),
#   MROCE_KULP_DIR (where t-14/t-16 find tools/kulp's modules),
#   MROCE_XTEST_KO (path of mroce_xtest.ko, tools/xport-test),
#   MROCE_XPORT (udp, the default: load_mroce sets gso=''; gso: gso='*'; xtest:
#   load_mroce loads the test offload provider too),
#   MROCE_RESULTS (/results), TEST_NAME (e.g. t-00-guest-sanity).

MROCE_TOP=${MROCE_TOP:-$(cd "$(dirname "$0")/../.." && pwd -P)}
MROCE_KO=${MROCE_KO:-$MROCE_TOP/drivers/infiniband/sw/mroce/mroce.ko}
MROCE_RESULTS=${MROCE_RESULTS:-/results}
TEST_NAME=${TEST_NAME:-$(basename "$0" .sh)}
MROCE_XTEST_KO=${MROCE_XTEST_KO:-$MROCE_TOP/tools/xport-test/mroce_xtest.ko}
export MROCE_TOP MROCE_KO MROCE_RESULTS TEST_NAME MROCE_XTEST_KO

_t_checks=0
_t_failed=0
_t_cleanups=
_t_done=0

# shellcheck source=SCRIPTDIR/../guest/topo.sh
. "$MROCE_TOP/tools/guest/topo.sh"
# Under busybox sh, use kmod/iproute2/... rather than busybox's applets.
topo_use_real modprobe insmod rmmod lsmod tc ping sysctl rdma

log() { echo "# $*"; }

_t_pass() { _t_checks=$((_t_checks + 1)); echo "ok - $1"; }
_t_fail() {
	_t_checks=$((_t_checks + 1))
	_t_failed=$((_t_failed + 1))
	echo "FAIL - $1"
}

check() {
	_d=$1
	shift
	echo "+ $*"
	if "$@"; then
		_t_pass "$_d"
		return 0
	else
		_rc=$?
	fi
	_t_fail "$_d (exit $_rc: $*)"
	return "$_rc"
}

check_fail() {
	_d=$1
	shift
	echo "+ $*"
	if "$@"; then _t_fail "$_d (succeeded but should fail: $*)"; return 1; fi
	_t_pass "$_d"
	return 0
}

check_eq() {
	if [ "$2" = "$3" ]; then _t_pass "$1"; return 0; fi
	_t_fail "$1 (expected '$2', got '$3')"
	return 1
}

check_match() {
	if printf '%s\n' "$3" | grep -Eq -- "$2"; then _t_pass "$1"; return 0; fi
	_t_fail "$1 ('$3' does not match /$2/)"
	return 1
}

require() {
	check "$@" || fail "required check failed: $1"
}

fail() {
	_t_checks=$((_t_checks + 1))
	_t_failed=$((_t_failed + 1))
	echo "FAIL - $*"
	exit 1
}

skip() {
	echo "SKIP: $*"
	_t_done=77
	exit 77
}

need_cmd() {
	for _c in "$@"; do
		command -v "$_c" >/dev/null 2>&1 || skip "command $_c not available"
	done
}

need_module() {
	for _m in "$@"; do
		[ -d "/sys/module/$(echo "$_m" | tr - _)" ] && continue
		if ! modprobe -n "$_m" >/dev/null 2>&1; then
			skip "kernel module $_m not available"
		fi
		echo "+ modprobe $_m"
		modprobe "$_m" || fail "modprobe $_m failed"
	done
}

# load_mroce [PARAM=VALUE...]: insmod the module (with parameters)
# shellcheck disable=SC2120  # the parameters are optional
load_mroce() {
	need_module ib_core ib_uverbs udp_tunnel ip6_udp_tunnel
	[ -d /sys/module/mroce ] && return 0
	[ -f "$MROCE_KO" ] ||
		fail "$MROCE_KO not found: build it on the host first (make modules)"
	# MROCE_XPORT=gso: every device uses the GSO provider (mroce_gso.c).
	# Else the suite tests the per-packet provider on every netdev unless
	# the caller names gso itself: the module's default (gso=auto) would
	# put veth devices on the GSO provider, which t-45-gso tests.
	case " $* " in
	*" gso="*) ;;
	*)	if [ "${MROCE_XPORT:-}" = gso ]; then
			set -- 'gso=*' "$@"
		else
			set -- 'gso=' "$@"
		fi ;;
	esac
	echo "+ insmod $MROCE_KO $*"
	insmod "$MROCE_KO" "$@" || fail "insmod $MROCE_KO $* failed"
	case ${MROCE_XPORT:-} in
	'' | udp | gso) ;;
	xtest)
		[ -f "$MROCE_XTEST_KO" ] ||
			fail "$MROCE_XTEST_KO not found: build it on the host first (make)"
		echo "+ insmod $MROCE_XTEST_KO claim='*'"
		insmod "$MROCE_XTEST_KO" 'claim=*' ||
			fail "insmod $MROCE_XTEST_KO failed"
		;;
	*) fail "MROCE_XPORT must be udp, gso or xtest, not '$MROCE_XPORT'" ;;
	esac
}

unload_mroce() {
	if [ -d /sys/module/mroce_xtest ]; then
		echo "+ rmmod mroce_xtest"
		rmmod mroce_xtest
	fi
	[ -d /sys/module/mroce ] || return 0
	echo "+ rmmod mroce"
	rmmod mroce
}

# gid_index DEV GID: the index of GID (sysfs spelling) in DEV's port 1 table
gid_index() {
	for _f in /sys/class/infiniband/"$1"/ports/1/gids/*; do
		[ "$(cat "$_f")" = "$2" ] && { echo "${_f##*/}"; return 0; }
	done
	return 1
}

# counters DEV [PREFIX]: every port counter of DEV from one rdma call, as
# " PREFIXNAME=VALUE ..." for ctr.  An rdma call costs about 0.2 s under
# TCG: read many counters from one snapshot, not each with counter
counters() {
	rdma statistic show link "$1/1" | tr ' ' '\n' |
		awk -v p="${2:-}" 'k && /^[0-9]+$/ { printf " %s%s=%s", p, k, $0 }
			{ k = /^[a-z][a-z0-9_]*$/ ? $0 : "" }'
	echo
}

# ctr SNAPSHOT NAME: NAME's value in a counters snapshot (0 if absent)
ctr() {
	case "$1 " in
	*" $2="*) _c=${1#*" $2="}; echo "${_c%% *}" ;;
	*) echo 0 ;;
	esac
}

# counter DEV NAME: a port counter of DEV (rdma statistic); nothing if
# DEV has no such counter
counter() {
	_c=$(counters "$1")
	case "$_c " in
	*" $2="*) ctr "$_c" "$2" ;;
	esac
}

in_h1() { topo_exec h1 "$@"; }
in_h2() { topo_exec h2 "$@"; }

on_exit() {
	_t_cleanups="$1
$_t_cleanups"
}

_t_exit() {
	_rc=$?
	trap - EXIT
	set +e
	if [ -n "$_t_cleanups" ]; then
		printf '%s\n' "$_t_cleanups" | while IFS= read -r _c; do
			[ -n "$_c" ] && eval "$_c"
		done
	fi
	[ "$_t_done" = 77 ] && exit 77
	if [ "$_t_failed" -gt 0 ]; then
		echo "# $TEST_NAME: $_t_failed of $_t_checks checks failed"
		[ "$_rc" = 0 ] && _rc=1
	elif [ "$_rc" != 0 ]; then
		echo "# $TEST_NAME: exited with status $_rc after $_t_checks checks"
	elif [ "$_t_checks" = 0 ]; then
		echo "# $TEST_NAME: no checks were run"
		_rc=1
	else
		echo "# $TEST_NAME: all $_t_checks checks passed"
	fi
	exit "$_rc"
}
trap _t_exit EXIT
