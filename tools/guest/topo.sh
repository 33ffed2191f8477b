#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# topo.sh - test network topologies made of network namespaces.
# Runs INSIDE the mroce test guest (tools/guest/mroce-vm); POSIX sh, so it
# works under bash, dash and busybox sh.
#
# Usage: topo.sh [-v] pair          h1 <-veth-> h2
#        topo.sh [-v] star N        h1..hN, each with one veth into bridge br0
#        topo.sh [-v] clean         remove every host, sw and their links,
#                                   and fabric.sh's leaf/spine routers
#        topo.sh exec HOST CMD...   run CMD in HOST (= ip netns exec HOST)
#        topo.sh ip4 I | ip6 I      print host hI's address
#        topo.sh hosts              list the hosts that exist
#        topo.sh wait-listen HOST PORT [SECS]
#                                   wait until a TCP socket listens on
#                                   PORT in HOST (default 20 s); "" is
#                                   the root namespace
#
# Hosts are network namespaces h1, h2, ... Host hI has one interface vethI
# with 192.0.2.I/24 and 2001:db8::I/64 (IPv6 DAD off: usable at once), and
# lo up.  "pair" joins veth1 and veth2 directly.  "star" puts the bridge
# br0 in its own namespace "sw" (so the root namespace stays empty and can
# be used for something else), its ports named swpI.  pair and star clean
# up first.  Only 192.0.2.0/24, 198.51.100.0/24 and 2001:db8::/32 are ever
# used.  Nothing is printed on success unless -v (or TOPO_VERBOSE=1).
#
# As a library: ". tools/guest/topo.sh" defines topo_pair, topo_star N,
# topo_clean, topo_exec HOST CMD..., topo_ip4 I, topo_ip6 I, topo_hosts,
# topo_wait_listen HOST PORT [SECS [PID]], topo_gid4 DEV IPV4 (the index of
# ::ffff:IPV4 in RDMA device DEV's port-1 GID table, for perftest's -x).
#
# A client started right after its server went to the background may find
# nothing listening yet (a busy TCG guest takes seconds to start one):
# start servers in the background, topo_wait_listen, then the client.
# Every script here does (tools/tests/rdma-lib.sh's run_pair, the demo).
#
# tools/guest/fabric.sh (a spine-leaf fabric) names its hosts h1..hN too,
# so only one of the two topologies exists at a time.  clean is the reset
# for both: it removes every hN, sw, leafN and spineN namespace (it is what
# run-guest-tests.sh runs between tests); "fabric.sh clean" removes only
# the fabric's.
#
# Outside the guest it refuses to run (it would change the host's network
# namespaces) unless MROCE_ALLOW_HOST=1.

TOPO_NET4=192.0.2
TOPO_NET6=2001:db8:
TOPO_SW=sw
TOPO_BR=br0
TOPO_VERBOSE=${TOPO_VERBOSE:-0}

# topo_use_real CMD...: busybox sh runs its own applets before searching
# PATH, so "ip" would be busybox's ip, which knows no netns or veth.  Under
# busybox sh, define a function CMD running the first CMD in PATH that is
# not a busybox link.  No-op under other shells.
topo_use_real() {
	case "$(readlink -f "/proc/$$/exe" 2>/dev/null)" in
	*busybox*) ;;
	*) return 0 ;;
	esac
	for _tu_c in "$@"; do
		_tu_ifs=$IFS
		IFS=:
		# shellcheck disable=SC2086  # split PATH on ':'
		set -- $PATH
		IFS=$_tu_ifs
		for _tu_d in "$@"; do
			[ -x "$_tu_d/$_tu_c" ] || continue
			case "$(readlink -f "$_tu_d/$_tu_c")" in *busybox*) continue ;; esac
			eval "$_tu_c() { '$_tu_d/$_tu_c' \"\$@\"; }"
			break
		done
	done
}
topo_use_real ip

topo__log() { [ "$TOPO_VERBOSE" = 1 ] && echo "topo: $*" >&2; return 0; }
topo__err() { echo "topo: $*" >&2; return 1; }

topo__guard() {
	[ "${MROCE_IN_GUEST:-0}" = 1 ] || [ "${MROCE_ALLOW_HOST:-0}" = 1 ] ||
		topo__err "refusing to change network namespaces outside the mroce guest (set MROCE_ALLOW_HOST=1 to force)"
}

# topo__run CMD...: run, log with -v, report failures
topo__run() {
	topo__log "$*"
	"$@" || topo__err "failed: $*"
}

topo_ip4() { echo "$TOPO_NET4.$1"; }
topo_ip6() { echo "$TOPO_NET6:$1"; }

topo_exec() {
	[ $# -ge 2 ] || topo__err "usage: topo.sh exec HOST CMD..." || return 1
	_h=$1
	shift
	ip netns exec "$_h" "$@"
}

# topo_wait_listen HOST PORT [SECS [PID]]: 0 once a TCP socket listens on
# PORT in HOST's namespace (HOST empty: the root namespace), 1 after SECS
# (default 20) without one.  Each look is an "ss" in HOST, about 0.2 s
# under TCG, and the suite waits for a few hundred servers: with PID, the
# server being waited for ("ip netns exec HOST SERVER &" makes $! one; a
# function or subshell put in the background does not), the look reads
# /proc/PID/net with shell builtins, every 0.05 s, once PID is in HOST's
# namespace, and the wait fails at once if PID exits
topo_wait_listen() {
	_tw_ns=/proc/1/ns/net
	[ -n "$1" ] && _tw_ns=/run/netns/$1
	_tw_p=$(printf ':%04X' "$2")
	_tw_n=$(( ${3:-20} * 20 ))	# steps of 0.05 s
	while [ "$_tw_n" -gt 0 ]; do
		# -ef (dash, bash and busybox have it) on two nsfs files
		# shellcheck disable=SC3013
		if [ -n "${4:-}" ] && [ /proc/"$4"/ns/net -ef "$_tw_ns" ]; then
			topo__listens "$4" && return 0
			sleep 0.05
			_tw_n=$((_tw_n - 1))
			continue
		fi
		[ -n "${4:-}" ] && ! kill -0 "$4" 2>/dev/null && break
		if [ -n "$1" ]; then
			_tw_s=$(ip netns exec "$1" ss -Htln "sport = :$2" 2>/dev/null)
		else
			_tw_s=$(ss -Htln "sport = :$2" 2>/dev/null)
		fi
		[ -n "$_tw_s" ] && return 0
		sleep 0.2
		_tw_n=$((_tw_n - 4))
	done
	topo__err "nothing listens on TCP port $2${1:+ in $1}${4:+ (server $4)} after ${3:-20} s or before the server exited"
}

# topo__listens PID: a TCP socket of PID's namespace listens on the port
# :XXXX in $_tw_p.  A line of /proc/net/tcp{,6} is "sl local_address
# rem_address st ...", the local address ending in ":PORT" (4 hex
# digits), st 0A for LISTEN
topo__listens() {
	for _tw_f in /proc/"$1"/net/tcp /proc/"$1"/net/tcp6; do
		[ -r "$_tw_f" ] || continue
		while read -r _tw_sl _tw_loc _tw_rem _tw_st _tw_rest; do
			case $_tw_loc in
			*"$_tw_p") [ "$_tw_st" = 0A ] && return 0 ;;
			esac
		done <"$_tw_f"
	done
	return 1
}

topo_gid4() {
	_tg_g=$(echo "$2" | awk -F. '{ printf "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", $1, $2, $3, $4 }')
	grep -l -x "$_tg_g" /sys/class/infiniband/"$1"/ports/1/gids/* 2>/dev/null |
		head -n 1 | xargs -r basename
}

topo_hosts() {
	ip netns list 2>/dev/null | sed 's/ .*//' | grep -E '^h[0-9]+$' | sort -t h -k 2 -n
}

# topo__ns NAME: new namespace with lo up and IPv6 DAD off
topo__ns() {
	topo__run ip netns add "$1" || return 1
	topo__run ip -n "$1" link set lo up || return 1
	for _tn_k in accept_dad dad_transmits; do
		for _tn_c in all default; do
			ip netns exec "$1" sh -c "echo 0 >/proc/sys/net/ipv6/conf/$_tn_c/$_tn_k" 2>/dev/null
		done
	done
	return 0
}

# topo__addr I: give host hI's vethI its addresses and bring it up
topo__addr() {
	topo__run ip -n "h$1" addr add "$(topo_ip4 "$1")/24" dev "veth$1" &&
		topo__run ip -n "h$1" addr add "$(topo_ip6 "$1")/64" dev "veth$1" nodad &&
		topo__run ip -n "h$1" link set "veth$1" up
}

topo_clean() {
	for _tc_n in $(ip netns list 2>/dev/null | sed 's/ .*//'); do
		case "$_tc_n" in
		"$TOPO_SW" | h[0-9]* | leaf[0-9]* | spine[0-9]*)
			topo__run ip netns del "$_tc_n" || return 1 ;;
		esac
	done
	return 0
}

topo_pair() {
	topo__guard || return 1
	topo_clean || return 1
	topo__ns h1 && topo__ns h2 || return 1
	topo__run ip link add veth1 netns h1 type veth peer name veth2 netns h2 || return 1
	topo__addr 1 && topo__addr 2
}

topo_star() {
	_ts_n=$1
	case "$_ts_n" in
	'' | *[!0-9]*) topo__err "usage: topo.sh star N (N = 1..250)"; return 1 ;;
	esac
	if [ "$_ts_n" -lt 1 ] || [ "$_ts_n" -gt 250 ]; then
		topo__err "star: N must be 1..250"
		return 1
	fi
	topo__guard || return 1
	topo_clean || return 1
	topo__ns "$TOPO_SW" || return 1
	# The switch has no addresses: keep IPv6 (and its chatter) off there.
	ip netns exec "$TOPO_SW" sh -c 'echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6; echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6' 2>/dev/null
	topo__run ip -n "$TOPO_SW" link add "$TOPO_BR" type bridge \
		forward_delay 0 stp_state 0 mcast_snooping 0 || return 1
	topo__run ip -n "$TOPO_SW" link set "$TOPO_BR" up || return 1
	_ts_i=1
	while [ "$_ts_i" -le "$_ts_n" ]; do
		topo__ns "h$_ts_i" || return 1
		topo__run ip link add "veth$_ts_i" netns "h$_ts_i" type veth peer name "swp$_ts_i" netns "$TOPO_SW" || return 1
		topo__run ip -n "$TOPO_SW" link set "swp$_ts_i" master "$TOPO_BR" up || return 1
		topo__addr "$_ts_i" || return 1
		_ts_i=$((_ts_i + 1))
	done
	return 0
}

topo_main() {
	if [ "$1" = -v ]; then
		TOPO_VERBOSE=1
		shift
	fi
	case "$1" in
	pair) topo_pair ;;
	star) topo_star "$2" ;;
	clean) topo__guard && topo_clean ;;
	exec) shift; topo_exec "$@" ;;
	ip4) topo_ip4 "$2" ;;
	ip6) topo_ip6 "$2" ;;
	hosts) topo_hosts ;;
	wait-listen) topo_wait_listen "$2" "$3" "${4:-20}" ;;
	-h | --help | help) sed -n '4,/^$/s/^# \{0,1\}//p' "$0" ;;
	*) topo__err "usage: topo.sh [-v] pair | star N | clean | exec HOST CMD... | ip4 I | ip6 I | hosts | wait-listen HOST PORT [SECS] (see --help)" ;;
	esac
}

# Executed (not sourced): run the CLI.
case "${0##*/}" in
topo.sh) topo_main "$@" ;;
esac
