#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# fabric.sh - a small spine-leaf (Clos) IP fabric made of network
# namespaces, veth pairs and Linux routing, for multipath and congestion
# tests.  Runs INSIDE the mroce test guest (tools/guest/mroce-vm); POSIX sh.
# Documentation/fabric.rst has the picture and the addressing plan.
#
# Usage: fabric.sh [-v] build [--hosts H] [--spines S] [--leaves L]
#                             [--rate RATE [--ecn THRESHOLD]] [--mtu MTU]
#        fabric.sh [-v] clean          remove the fabric's namespaces
#        fabric.sh shape LINK RATE [THRESHOLD]   rate-limit LINK's egress,
#                                      ECN CE-mark above THRESHOLD
#        fabric.sh unshape LINK
#        fabric.sh netem LINK ARGS...  netem on LINK's egress (e.g. loss 1%)
#        fabric.sh cut LINK [oneway]   black-hole the link, routes unchanged
#        fabric.sh restore LINK|all    undo cut and netem (both ends)
#        fabric.sh down LINK | up LINK administrative down/up + reroute
#        fabric.sh stats [all]         "spineS RX_PACKETS" per spine
#                                      (all: "NS:IFACE RX TX" per router port)
#        fabric.sh spine_pkts S [L]    packets spine S received (from leaf L)
#        fabric.sh uplinks L           "spineS PACKETS": leaf L's sends per spine
#        fabric.sh marks LINK          ECN CE marks of LINK's egress AQM
#        fabric.sh drops LINK          packets a cut dropped at LINK
#        fabric.sh exec NS CMD...      run CMD in namespace NS
#        fabric.sh ip4 I | ip6 I       host hI's address
#        fabric.sh leaf_of I | peer LINK | hosts | links | show
#
# Defaults: 4 hosts, 2 leaves, 4 spines (--spines 2..4, --leaves 2..4,
# --hosts L..64).  Hosts h1..hH are spread over leaf1..leafL in order (4
# hosts: h1 h2 on leaf1, h3 h4 on leaf2).  Host hI has one interface vethI
# (as with topo.sh) with 192.0.2.I/32 and 2001:db8::I/128 and a default
# route via its leaf, so same-leaf traffic is routed by the leaf too.
# Leaf L's port to host hI is "hI", its uplink to spine S "upS"; spine S's
# downlink to leaf L is "downL".  Every router forwards with
# fib_multipath_hash_policy=1 (IPv4 and IPv6: the hash covers the UDP/TCP
# ports), rp_filter off, ignore_routes_with_linkdown=1; a leaf reaches the
# hosts of other leaves over an ECMP route with one nexthop per spine.  The
# hash is seeded per boot, so which spine a port takes differs per boot;
# and packets of TCP and connected UDP sockets carry the socket's random
# flow hash, which the leaves use instead of the ports (unconnected UDP
# sockets and mroce's are hashed on their ports).  tools/guest/flows.py
# makes test traffic.
#
# LINK names one end of a link as NS:IFACE, e.g. leaf2:h3, leaf1:up2,
# spine3:down1, h1:veth1.  shape and netem act on the egress of that end
# (the direction leaving NS through IFACE); cut, restore, and the routing
# after down/up act on the whole link.  cut drops everything in both
# directions (oneway: only what leaves the named end) with a tc matchall
# drop, and changes no route: the sender must notice.  down/up set the
# named end administratively down/up and then recompute the static routes
# as a routing protocol would (a leaf stops using a spine that lost its
# link to the destination's leaf).  RATE is a tc rate (100mbit, 1gbit,
# 500kbit); THRESHOLD is a queueing delay (1ms, 500us: fq_codel
# ce_threshold, the default is 1ms), a queue length in bytes (30kb, 20000b:
# RED with ecn), "none" (plain fq_codel) or "fifo" (pfifo: no AQM, no ECN).
# Shaping = tbf, with the AQM as its child; netem, when also set, sits above them.
#
# As a library: ". tools/guest/fabric.sh" (after tools/tests/lib.sh, or
# with MROCE_TOP set) defines fabric_build, fabric_clean, fabric_shape,
# fabric_unshape, fabric_netem, fabric_cut, fabric_restore, fabric_down,
# fabric_up, fabric_stats, fabric_spine_pkts, fabric_uplinks,
# fabric_counter LINK STAT (a /sys/class/net statistic), fabric_marks,
# fabric_drops, fabric_exec, fabric_ip4, fabric_ip6, fabric_leaf_of,
# fabric_peer, fabric_hosts, fabric_links, fabric_show; after a build
# FABRIC_HOSTS, FABRIC_LEAVES and FABRIC_SPINES hold the sizes.
#
# Namespaces: h1..hH, leaf1..leafL, spine1..spineS.  The host names are
# topo.sh's, so the two never exist at once: build refuses while topo.sh
# hosts exist, "fabric.sh clean" removes only the fabric (its hosts carry
# the alias "mroce-fabric" on lo), and topo.sh clean removes everything of
# both (it is what run-guest-tests.sh runs between tests).
#
# Outside the guest it refuses to run (it would change the host's network
# namespaces) unless MROCE_ALLOW_HOST=1.  Nothing is printed on success
# unless -v (or FABRIC_VERBOSE=1).  Only 192.0.2.0/24, 198.51.100.0/24 and
# 2001:db8::/32 are used.

# topo.sh: topo_use_real (busybox), and the host address plan it shares.
if ! command -v topo_use_real >/dev/null 2>&1; then
	if [ -n "${MROCE_TOP:-}" ] && [ -f "$MROCE_TOP/tools/guest/topo.sh" ]; then
		_fb_topo=$MROCE_TOP/tools/guest/topo.sh
	else
		_fb_topo=$(dirname "$0")/topo.sh
	fi
	# shellcheck source=SCRIPTDIR/topo.sh
	. "$_fb_topo" || { echo "fabric: cannot load $_fb_topo" >&2; exit 1; }
fi
topo_use_real ip tc modprobe nsenter

FABRIC_VERBOSE=${FABRIC_VERBOSE:-0}
FABRIC_MARK=mroce-fabric
# fq_codel/RED queue limit (packets), tbf bucket (milliseconds of RATE).
FABRIC_QLIMIT=${FABRIC_QLIMIT:-1000}
FABRIC_BURST_MS=${FABRIC_BURST_MS:-2}
FABRIC_HOSTS=${FABRIC_HOSTS:-}
FABRIC_LEAVES=${FABRIC_LEAVES:-}
FABRIC_SPINES=${FABRIC_SPINES:-}

fabric__log() {
	[ "$FABRIC_VERBOSE" = 1 ] || return 0
	read -r _fl_up _fl_x </proc/uptime
	echo "fabric: [$_fl_up] $*" >&2
}
fabric__err() { echo "fabric: $*" >&2; return 1; }

fabric__guard() {
	[ "${MROCE_IN_GUEST:-0}" = 1 ] || [ "${MROCE_ALLOW_HOST:-0}" = 1 ] ||
		fabric__err "refusing to change network namespaces outside the mroce guest (set MROCE_ALLOW_HOST=1 to force)"
}

# fabric__run CMD...: run, log with -v, report failures
fabric__run() {
	fabric__log "$*"
	"$@" || fabric__err "failed: $*"
}

# fabric__batch [-f] PREFIX...: run "PREFIX -batch -" on stdin (-f: go on
# after errors and keep quiet about them)
fabric__batch() {
	if [ "$1" = -f ]; then
		shift
		fabric__log "$* -force -batch"
		"$@" -force -batch - >/dev/null 2>&1
		return 0
	fi
	fabric__log "$* -batch"
	"$@" -batch - || fabric__err "failed: $* -batch"
}

# fabric__nsexec NS CMD...: CMD in NS's network namespace (only: no sysfs
# remount, so cheaper than ip netns exec)
fabric__nsexec() {
	_fn_n=$1
	shift
	if command -v nsenter >/dev/null 2>&1; then
		nsenter "--net=/run/netns/$_fn_n" "$@"
	else
		ip netns exec "$_fn_n" "$@"
	fi
}

# ------------------------------------------------------------ addressing
# Host hI: 192.0.2.I/32, 2001:db8::I/128 (topo.sh's addresses).  Its leaf's
# port hI (the host's gateway): 198.51.100.(100+I)/32, 2001:db8:ffff::I/128.
# Leaf L - spine S: 198.51.100.(8(L-1)+2(S-1))/31, leaf even, spine odd;
# 2001:db8:ffff:LS::/64, leaf ::1, spine ::2.
fabric_ip4() { echo "192.0.2.$1"; }
fabric_ip6() { echo "2001:db8::$1"; }

# fabric__host I: _fb_leaf, _fb_g4, _fb_g6 of host hI
fabric__host() {
	_fb_leaf=$(( ($1 - 1) * FABRIC_LEAVES / FABRIC_HOSTS + 1 ))
	_fb_g4=198.51.100.$((100 + $1))
	_fb_g6=2001:db8:ffff::$1
}

# fabric__ls L S: _fb_l4 _fb_s4 _fb_l6 _fb_s6, the leaf's and the spine's
# addresses on the leaf L - spine S link
fabric__ls() {
	_fb_l4=198.51.100.$(( 8 * ($1 - 1) + 2 * ($2 - 1) ))
	_fb_s4=198.51.100.$(( 8 * ($1 - 1) + 2 * ($2 - 1) + 1 ))
	_fb_l6=2001:db8:ffff:$1$2::1
	_fb_s6=2001:db8:ffff:$1$2::2
}

# fabric__load: sizes of the existing fabric, from leaf1's lo alias
fabric__load() {
	[ -n "$FABRIC_HOSTS" ] && [ -n "$FABRIC_LEAVES" ] && [ -n "$FABRIC_SPINES" ] && return 0
	_fl_a=$(ip -n leaf1 -o link show dev lo 2>/dev/null)
	case "$_fl_a" in
	*"alias $FABRIC_MARK "*) _fl_a=${_fl_a#*alias "$FABRIC_MARK" } ;;
	*) fabric__err "no fabric here (fabric.sh build makes one)"; return 1 ;;
	esac
	for _fl_w in $_fl_a; do
		case "$_fl_w" in
		hosts=*) FABRIC_HOSTS=${_fl_w#hosts=} ;;
		leaves=*) FABRIC_LEAVES=${_fl_w#leaves=} ;;
		spines=*) FABRIC_SPINES=${_fl_w#spines=} ;;
		esac
	done
	if [ -z "$FABRIC_HOSTS" ] || [ -z "$FABRIC_LEAVES" ] || [ -z "$FABRIC_SPINES" ]; then
		fabric__err "leaf1's fabric description is damaged: $_fl_a"
	fi
}

# fabric_leaf_of I: the leaf of host hI (hosts in order, first leaves get
# the extra ones)
fabric_leaf_of() {
	fabric__load || return 1
	fabric__host "$1"
	echo "$_fb_leaf"
}

fabric_exec() {
	[ $# -ge 2 ] || fabric__err "usage: fabric.sh exec NS CMD..." || return 1
	_fe_n=$1
	shift
	ip netns exec "$_fe_n" "$@"
}

fabric_hosts() {
	fabric__load || return 1
	_fh_i=1
	while [ "$_fh_i" -le "$FABRIC_HOSTS" ]; do
		echo "h$_fh_i"
		_fh_i=$((_fh_i + 1))
	done
}

# fabric_links: every link, one line each: "END END"
fabric_links() {
	fabric__load || return 1
	_fk_i=1
	while [ "$_fk_i" -le "$FABRIC_HOSTS" ]; do
		fabric__host "$_fk_i"
		echo "leaf$_fb_leaf:h$_fk_i h$_fk_i:veth$_fk_i"
		_fk_i=$((_fk_i + 1))
	done
	_fk_l=1
	while [ "$_fk_l" -le "$FABRIC_LEAVES" ]; do
		_fk_s=1
		while [ "$_fk_s" -le "$FABRIC_SPINES" ]; do
			echo "leaf$_fk_l:up$_fk_s spine$_fk_s:down$_fk_l"
			_fk_s=$((_fk_s + 1))
		done
		_fk_l=$((_fk_l + 1))
	done
}

# fabric__split LINK: set _fb_ns and _fb_if from NS:IFACE
fabric__split() {
	case "$1" in
	?*:?*) _fb_ns=${1%%:*}; _fb_if=${1#*:} ;;
	*) fabric__err "bad link '$1': use NS:IFACE, e.g. leaf2:h3"; return 1 ;;
	esac
}

# fabric_peer LINK: the other end of LINK
fabric_peer() {
	fabric__split "$1" || return 1
	case "$_fb_ns:$_fb_if" in
	leaf[0-9]*:up[0-9]*) echo "spine${_fb_if#up}:down${_fb_ns#leaf}" ;;
	spine[0-9]*:down[0-9]*) echo "leaf${_fb_if#down}:up${_fb_ns#spine}" ;;
	leaf[0-9]*:h[0-9]*) echo "$_fb_if:veth${_fb_if#h}" ;;
	h[0-9]*:veth[0-9]*) echo "leaf$(fabric_leaf_of "${_fb_ns#h}"):$_fb_ns" ;;
	*) fabric__err "$1 is not a fabric link"; return 1 ;;
	esac
}

# fabric__end LINK: split and check that the interface exists
fabric__end() {
	fabric__split "$1" || return 1
	ip -n "$_fb_ns" link show dev "$_fb_if" >/dev/null 2>&1 ||
		fabric__err "no interface $_fb_if in namespace $_fb_ns"
}

# ------------------------------------------------------------ clean, build
fabric_clean() {
	fabric__guard || return 1
	_fc_del=
	for _fc_n in $(ip netns list 2>/dev/null | sed 's/ .*//'); do
		case "$_fc_n" in
		leaf[0-9]* | spine[0-9]*) _fc_del="$_fc_del $_fc_n" ;;
		h[0-9]*)
			case "$(ip -n "$_fc_n" -o link show dev lo 2>/dev/null)" in
			*"alias $FABRIC_MARK"*) _fc_del="$_fc_del $_fc_n" ;;
			esac ;;
		esac
	done
	FABRIC_HOSTS='' FABRIC_LEAVES='' FABRIC_SPINES=''
	[ -n "$_fc_del" ] || return 0
	# shellcheck disable=SC2086  # a list of names
	printf 'netns del %s\n' $_fc_del | fabric__batch -f ip
	for _fc_n in $_fc_del; do
		[ ! -e "/run/netns/$_fc_n" ] || fabric__run ip netns del "$_fc_n" || return 1
	done
	return 0
}

# fabric__num NAME VALUE MIN MAX
fabric__num() {
	case "$2" in
	'' | *[!0-9]*) fabric__err "$1 must be a number, not '$2'"; return 1 ;;
	esac
	if [ "$2" -lt "$3" ] || [ "$2" -gt "$4" ]; then
		fabric__err "$1 must be $3..$4"
	fi
}

# fabric__sysctls ROLE: a shell script setting a namespace's sysctls (for
# "all", "default" and every interface there is), then reading "ip -batch"
# commands from stdin
# shellcheck disable=SC2016  # for the inner shell
fabric__sysctls() {
	# No newline: the ipv6 ignore_routes_with_linkdown handler of 6.1
	# consumes one byte and fails the rest of the write with EIO.
	echo 'c() { for d in /proc/sys/net/$1/conf/*; do printf %s "$3" >"$d/$2" || exit 1; done; }'
	echo 'v() { printf %s "$2" >"/proc/sys/net/$1" || exit 1; }'
	echo 'c ipv6 accept_dad 0; c ipv6 dad_transmits 0; c ipv6 keep_addr_on_down 1'
	if [ "$1" = router ]; then
		echo 'v ipv4/ip_forward 1; v ipv6/conf/all/forwarding 1'
		echo 'v ipv4/fib_multipath_hash_policy 1; v ipv6/fib_multipath_hash_policy 1'
		echo 'c ipv4 rp_filter 0'
		echo 'c ipv4 ignore_routes_with_linkdown 1; c ipv6 ignore_routes_with_linkdown 1'
	fi
	echo 'exec ip -batch -'
}

# fabric__setup NS: "ip -batch" commands bringing up NS's interfaces with
# their addresses
fabric__setup() {
	echo "link set lo up"
	case "$1" in
	h*)
		_fs_i=${1#h}
		echo "link set lo alias $FABRIC_MARK"
		echo "link set veth$_fs_i up"
		echo "addr add 192.0.2.$_fs_i/32 dev veth$_fs_i"
		echo "addr add 2001:db8::$_fs_i/128 dev veth$_fs_i nodad"
		;;
	leaf*)
		_fs_l=${1#leaf}
		[ "$_fs_l" = 1 ] &&
			echo "link set lo alias \"$FABRIC_MARK hosts=$FABRIC_HOSTS leaves=$FABRIC_LEAVES spines=$FABRIC_SPINES\""
		_fs_i=1
		while [ "$_fs_i" -le "$FABRIC_HOSTS" ]; do
			fabric__host "$_fs_i"
			if [ "$_fb_leaf" = "$_fs_l" ]; then
				echo "link set h$_fs_i up"
				echo "addr add $_fb_g4/32 dev h$_fs_i"
				echo "addr add $_fb_g6/128 dev h$_fs_i nodad"
			fi
			_fs_i=$((_fs_i + 1))
		done
		_fs_s=1
		while [ "$_fs_s" -le "$FABRIC_SPINES" ]; do
			fabric__ls "$_fs_l" "$_fs_s"
			echo "link set up$_fs_s up"
			echo "addr add $_fb_l4/31 dev up$_fs_s"
			echo "addr add $_fb_l6/64 dev up$_fs_s nodad"
			_fs_s=$((_fs_s + 1))
		done
		;;
	spine*)
		_fs_s=${1#spine}
		_fs_l=1
		while [ "$_fs_l" -le "$FABRIC_LEAVES" ]; do
			fabric__ls "$_fs_l" "$_fs_s"
			echo "link set down$_fs_l up"
			echo "addr add $_fb_s4/31 dev down$_fs_l"
			echo "addr add $_fb_s6/64 dev down$_fs_l nodad"
			_fs_l=$((_fs_l + 1))
		done
		;;
	esac
}

# fabric__linkup L S: the leaf L - spine S link is up (in _fb_state)
fabric__linkup() {
	case "$_fb_state" in
	*" $1:$2 "*) return 0 ;;
	esac
	return 1
}

# fabric__state [all]: _fb_state = " L:S " for every leaf-spine link that is
# up: its leaf end is administratively up and has carrier (a veth has
# carrier while its peer is up; both flags change synchronously).  all:
# every link (a fresh build).
fabric__state() {
	_fb_state=" "
	_fe_l=1
	while [ "$_fe_l" -le "$FABRIC_LEAVES" ]; do
		if [ "${1:-}" = all ]; then
			_fe_s=1
			while [ "$_fe_s" -le "$FABRIC_SPINES" ]; do
				_fb_state="$_fb_state$_fe_l:$_fe_s "
				_fe_s=$((_fe_s + 1))
			done
		else
			while read -r _fe_x _fe_n _fe_f _fe_r; do
				_fe_n=${_fe_n%:}
				_fe_n=${_fe_n%@*}
				case "$_fe_n:,${_fe_f#<}" in
				up[0-9]*:*,UP,*LOWER_UP*) _fb_state="$_fb_state$_fe_l:${_fe_n#up} " ;;
				esac
			done <<-EOF
				$(ip -n "leaf$_fe_l" -o link show 2>/dev/null)
			EOF
		fi
		_fe_l=$((_fe_l + 1))
	done
	fabric__log "leaf-spine links up:$_fb_state"
}

# fabric__routes_of NS: "ip -batch" commands (re)installing NS's static
# routes for the link state _fb_state, as a routing protocol would: a host
# uses its leaf; a leaf reaches the hosts of another leaf over every spine
# whose links to both leaves are up (ECMP), and none: unreachable; a spine
# routes to a host while its link to the host's leaf is up.  (Routes over
# a device that goes down are removed by the kernel.)
fabric__routes_of() {
	case "$1" in
	h*)
		_fr_i=${1#h}
		fabric__host "$_fr_i"
		echo "route replace $_fb_g4/32 dev veth$_fr_i scope link"
		echo "route replace 0.0.0.0/0 via $_fb_g4 dev veth$_fr_i"
		echo "route replace $_fb_g6/128 dev veth$_fr_i"
		echo "route replace ::/0 via $_fb_g6 dev veth$_fr_i"
		;;
	leaf*)
		_fr_l=${1#leaf}
		_fr_i=1
		while [ "$_fr_i" -le "$FABRIC_HOSTS" ]; do
			fabric__host "$_fr_i"
			if [ "$_fb_leaf" = "$_fr_l" ]; then
				echo "route replace 192.0.2.$_fr_i/32 dev h$_fr_i scope link"
				echo "route replace 2001:db8::$_fr_i/128 dev h$_fr_i"
			else
				_fr_n4='' _fr_n6=''
				_fr_s=1
				while [ "$_fr_s" -le "$FABRIC_SPINES" ]; do
					if fabric__linkup "$_fr_l" "$_fr_s" && fabric__linkup "$_fb_leaf" "$_fr_s"; then
						fabric__ls "$_fr_l" "$_fr_s"
						_fr_n4="$_fr_n4 nexthop via $_fb_s4 dev up$_fr_s"
						_fr_n6="$_fr_n6 nexthop via $_fb_s6 dev up$_fr_s"
					fi
					_fr_s=$((_fr_s + 1))
				done
				if [ -n "$_fr_n4" ]; then
					echo "route replace 192.0.2.$_fr_i/32$_fr_n4"
					echo "route replace 2001:db8::$_fr_i/128$_fr_n6"
				else
					echo "route replace unreachable 192.0.2.$_fr_i/32"
					echo "route replace unreachable 2001:db8::$_fr_i/128"
				fi
			fi
			_fr_i=$((_fr_i + 1))
		done
		;;
	spine*)
		_fr_s=${1#spine}
		_fr_i=1
		while [ "$_fr_i" -le "$FABRIC_HOSTS" ]; do
			fabric__host "$_fr_i"
			if fabric__linkup "$_fb_leaf" "$_fr_s"; then
				fabric__ls "$_fb_leaf" "$_fr_s"
				echo "route replace 192.0.2.$_fr_i/32 via $_fb_l4 dev down$_fb_leaf"
				echo "route replace 2001:db8::$_fr_i/128 via $_fb_l6 dev down$_fb_leaf"
			else
				echo "route replace unreachable 192.0.2.$_fr_i/32"
				echo "route replace unreachable 2001:db8::$_fr_i/128"
			fi
			_fr_i=$((_fr_i + 1))
		done
		;;
	esac
}

# fabric__names: every namespace of the fabric (hosts first)
fabric__names() {
	_fa_i=1
	while [ "$_fa_i" -le "$FABRIC_HOSTS" ]; do echo "h$_fa_i"; _fa_i=$((_fa_i + 1)); done
	_fa_i=1
	while [ "$_fa_i" -le "$FABRIC_LEAVES" ]; do echo "leaf$_fa_i"; _fa_i=$((_fa_i + 1)); done
	_fa_i=1
	while [ "$_fa_i" -le "$FABRIC_SPINES" ]; do echo "spine$_fa_i"; _fa_i=$((_fa_i + 1)); done
}

fabric_build() {
	_fb_h=4 _fb_l=2 _fb_s=4 _fb_rate='' _fb_ecn=1ms _fb_mtu=''
	while [ $# -gt 0 ]; do
		case "$1" in
		--hosts | --leaves | --spines | --rate | --ecn | --mtu) ;;
		*) fabric__err "build: unknown option '$1'"; return 1 ;;
		esac
		[ $# -ge 2 ] || { fabric__err "build: $1 needs a value"; return 1; }
		case "$1" in
		--hosts) _fb_h=$2 ;;
		--leaves) _fb_l=$2 ;;
		--spines) _fb_s=$2 ;;
		--rate) _fb_rate=$2 ;;
		--ecn) _fb_ecn=$2 ;;
		--mtu) _fb_mtu=$2 ;;
		esac
		shift 2
	done
	fabric__num --leaves "$_fb_l" 2 4 && fabric__num --spines "$_fb_s" 2 4 &&
		fabric__num --hosts "$_fb_h" "$_fb_l" 64 || return 1
	if [ -n "$_fb_mtu" ]; then fabric__num --mtu "$_fb_mtu" 1280 65535 || return 1; fi
	if [ -n "$_fb_rate" ]; then
		fabric__rate_bps "$_fb_rate" >/dev/null && fabric__aqm "$_fb_ecn" "$_fb_rate" >/dev/null || return 1
	fi
	fabric__guard || return 1
	fabric_clean || return 1
	_fb_other=$(ip netns list 2>/dev/null | sed 's/ .*//' | grep -E '^(h[0-9]+|sw)$' | tr '\n' ' ')
	[ -z "$_fb_other" ] ||
		{ fabric__err "namespaces of topo.sh exist ($_fb_other): run topo.sh clean first"; return 1; }
	FABRIC_HOSTS=$_fb_h FABRIC_LEAVES=$_fb_l FABRIC_SPINES=$_fb_s
	_fb_names=$(fabric__names)
	fabric__make && return 0
	# a failed build leaves nothing behind
	# shellcheck disable=SC2086  # a list of names
	printf 'netns del %s\n' $_fb_names | fabric__batch -f ip
	FABRIC_HOSTS='' FABRIC_LEAVES='' FABRIC_SPINES=''
	return 1
}

# fabric__make: fabric_build's work, from the namespaces on
fabric__make() {
	# shellcheck disable=SC2086  # a list of names
	printf 'netns add %s\n' $_fb_names | fabric__batch ip || return 1
	# the veth pairs, created in place
	_fm_m=${_fb_mtu:+mtu $_fb_mtu}
	{
		_fm_i=1
		while [ "$_fm_i" -le "$FABRIC_HOSTS" ]; do
			fabric__host "$_fm_i"
			echo "link add h$_fm_i netns leaf$_fb_leaf $_fm_m type veth peer name veth$_fm_i netns h$_fm_i $_fm_m"
			_fm_i=$((_fm_i + 1))
		done
		_fm_l=1
		while [ "$_fm_l" -le "$FABRIC_LEAVES" ]; do
			_fm_s=1
			while [ "$_fm_s" -le "$FABRIC_SPINES" ]; do
				echo "link add up$_fm_s netns leaf$_fm_l $_fm_m type veth peer name down$_fm_l netns spine$_fm_s $_fm_m"
				_fm_s=$((_fm_s + 1))
			done
			_fm_l=$((_fm_l + 1))
		done
	} | fabric__batch ip || return 1
	# per namespace, in one go: sysctls, interfaces up, addresses, routes
	fabric__state all
	_fm_hs=$(fabric__sysctls host)
	_fm_rs=$(fabric__sysctls router)
	for _fm_n in $_fb_names; do
		_fm_x=$_fm_rs
		case "$_fm_n" in h*) _fm_x=$_fm_hs ;; esac
		fabric__log "set up $_fm_n"
		{ fabric__setup "$_fm_n"; fabric__routes_of "$_fm_n"; } |
			fabric__nsexec "$_fm_n" sh -c "$_fm_x" ||
			{ fabric__err "setting up $_fm_n failed"; return 1; }
	done
	if [ -n "$_fb_rate" ]; then
		for _fm_e in $(fabric_links); do
			fabric_shape "$_fm_e" "$_fb_rate" "$_fb_ecn" || return 1
		done
	fi
	return 0
}

# fabric__reroute: recompute the static routes from the link states, of
# the namespaces a change at _fb_ns:_fb_if can affect
fabric__reroute() {
	case "$_fb_ns:$_fb_if" in
	leaf*:h[0-9]*) _fr_ns="$_fb_ns $_fb_if" ;;
	h*:veth*) _fr_ns="$_fb_ns $(fabric_peer "$_fb_ns:$_fb_if")"; _fr_ns=${_fr_ns%:*} ;;
	*) _fr_ns=$(fabric__names | grep -v '^h') ;;
	esac
	fabric__state
	for _fr_n in $_fr_ns; do
		fabric__routes_of "$_fr_n" | fabric__batch -f ip -n "$_fr_n"
	done
}

# fabric_down LINK / fabric_up LINK: administratively down/up, and reroute
fabric_down() {
	fabric__guard && fabric__load && fabric__end "${1:-}" || return 1
	fabric__run ip -n "$_fb_ns" link set dev "$_fb_if" down && fabric__reroute
}

fabric_up() {
	fabric__guard && fabric__load && fabric__end "${1:-}" || return 1
	fabric__run ip -n "$_fb_ns" link set dev "$_fb_if" up && fabric__reroute
}

# ------------------------------------------------------------ qdiscs
# The egress of a link end is described by its interface alias,
# "fabric shape=RATE THRESHOLD;netem=ARGS", and fabric__qdisc rebuilds the
# qdisc tree from it: [netem 1:] -> [tbf 2: -> fq_codel|red 3:].  (netem
# on top, so that its delay does not count as queueing delay for the AQM.)

# fabric__info: _fb_alias and _fb_mtu of _fb_ns:_fb_if
fabric__info() {
	_fi_o=$(ip -n "$_fb_ns" -o link show dev "$_fb_if") || return 1
	_fb_mtu=${_fi_o#* mtu }
	_fb_mtu=${_fb_mtu%% *}
	case "$_fi_o" in
	*"alias fabric "*) _fb_alias=${_fi_o#*alias fabric }; _fb_alias=${_fb_alias%%\\*} ;;
	*) _fb_alias= ;;
	esac
}

# fabric__field KEY: the value of KEY in _fb_alias
fabric__field() {
	case ";$_fb_alias" in
	*";$1="*) _ff_v=${_fb_alias#*"$1="}; echo "${_ff_v%%;*}" ;;
	esac
}

# fabric__rate_bps RATE: RATE in bit/s
fabric__rate_bps() {
	case "$1" in
	*[Gg]bit) _fr_m=1000000000 _fr_n=${1%?bit} ;;
	*[Mm]bit) _fr_m=1000000 _fr_n=${1%?bit} ;;
	*[Kk]bit) _fr_m=1000 _fr_n=${1%?bit} ;;
	*bit) _fr_m=1 _fr_n=${1%bit} ;;
	*) _fr_m='' _fr_n='' ;;
	esac
	case "$_fr_n" in
	'' | *[!0-9]*) fabric__err "bad rate '$1' (use e.g. 500kbit, 100mbit, 1gbit)"; return 1 ;;
	esac
	echo $((_fr_n * _fr_m))
}

# fabric__aqm THRESHOLD RATE: the AQM qdisc (tc arguments after "handle 3:")
fabric__aqm() {
	case "$1" in
	none) echo "fq_codel limit $FABRIC_QLIMIT ecn" ;;
	fifo) echo "pfifo limit $FABRIC_QLIMIT" ;;
	*[0-9]us | *[0-9]ms)
		case "${1%?s}" in
		*[!0-9]*) fabric__err "bad threshold '$1'"; return 1 ;;
		esac
		echo "fq_codel limit $FABRIC_QLIMIT ce_threshold $1 ecn" ;;
	*[0-9]b | *[0-9]kb)
		case "$1" in
		*kb) _fa_n=${1%kb}000 ;;
		*) _fa_n=${1%b} ;;
		esac
		case "$_fa_n" in
		*[!0-9]*) fabric__err "bad threshold '$1'"; return 1 ;;
		esac
		[ "$_fa_n" -ge 3000 ] || { fabric__err "RED threshold must be >= 3000 bytes"; return 1; }
		# marks (drops if not ECT) with a probability rising from 0 at
		# THRESHOLD to 1 at twice THRESHOLD of average queue
		echo "red limit $((FABRIC_QLIMIT * 1600)) min $_fa_n max $((2 * _fa_n)) avpkt 1000 burst $((_fa_n * 4 / 3000 + 1)) probability 1.0 bandwidth $2 ecn" ;;
	*) fabric__err "bad threshold '$1' (a delay like 1ms or 500us, a size like 30kb or 20000b, none or fifo)"; return 1 ;;
	esac
}

# fabric__qdisc: rebuild the egress qdiscs of _fb_ns:_fb_if from its alias
fabric__qdisc() {
	fabric__info || return 1
	_fq_netem=$(fabric__field netem)
	_fq_shape=$(fabric__field shape)
	_fq_p=root
	_fq_cmds=
	if [ -n "$_fq_netem" ]; then
		_fq_cmds="qdisc add dev $_fb_if root handle 1: netem $_fq_netem"
		_fq_p="parent 1:1"
	fi
	if [ -n "$_fq_shape" ]; then
		_fq_rate=${_fq_shape%% *}
		_fq_bps=$(fabric__rate_bps "$_fq_rate") &&
			_fq_aqm=$(fabric__aqm "${_fq_shape#* }" "$_fq_rate") || return 1
		# the bucket: FABRIC_BURST_MS of RATE, at least two frames
		_fq_b=$((_fq_bps * FABRIC_BURST_MS / 8000))
		[ "$_fq_b" -ge $((2 * (_fb_mtu + 14))) ] || _fq_b=$((2 * (_fb_mtu + 14)))
		_fq_cmds="${_fq_cmds:+$_fq_cmds
}qdisc add dev $_fb_if $_fq_p handle 2: tbf rate $_fq_rate burst $_fq_b limit $((_fq_b + 100000))
qdisc add dev $_fb_if parent 2:1 handle 3: $_fq_aqm"
	fi
	tc -n "$_fb_ns" qdisc del dev "$_fb_if" root >/dev/null 2>&1
	[ -n "$_fq_cmds" ] || return 0
	printf '%s\n' "$_fq_cmds" | fabric__batch tc -n "$_fb_ns"
}

# fabric__set KEY VALUE: store KEY=VALUE (VALUE empty: remove it) in the
# alias of _fb_ns:_fb_if and rebuild its qdiscs
fabric__set() {
	fabric__info || return 1
	_fs_new=
	for _fs_k in shape netem; do
		if [ "$_fs_k" = "$1" ]; then _fs_v=$2; else _fs_v=$(fabric__field "$_fs_k"); fi
		[ -z "$_fs_v" ] || _fs_new="${_fs_new:+$_fs_new;}$_fs_k=$_fs_v"
	done
	fabric__run ip -n "$_fb_ns" link set dev "$_fb_if" alias "${_fs_new:+fabric $_fs_new}" &&
		fabric__qdisc
}

fabric__modules() {
	for _fm_m in "$@"; do
		[ -d "/sys/module/$_fm_m" ] || modprobe "$_fm_m" 2>/dev/null ||
			fabric__err "kernel module $_fm_m is missing" || return 1
	done
}

# fabric_shape LINK RATE [THRESHOLD]
fabric_shape() {
	[ $# -ge 2 ] || { fabric__err "usage: fabric.sh shape LINK RATE [THRESHOLD]"; return 1; }
	fabric__guard && fabric__end "$1" || return 1
	fabric__rate_bps "$2" >/dev/null && fabric__aqm "${3:-1ms}" "$2" >/dev/null || return 1
	case "${3:-}" in
	*[0-9]b) fabric__modules sch_tbf sch_red ;;
	*) fabric__modules sch_tbf ;;
	esac || return 1
	fabric__set shape "$2 ${3:-1ms}"
}

fabric_unshape() {
	fabric__guard && fabric__end "${1:-}" || return 1
	fabric__set shape ""
}

# fabric_netem LINK ARGS...: netem on LINK's egress (no ARGS: remove it)
fabric_netem() {
	[ $# -ge 1 ] || { fabric__err "usage: fabric.sh netem LINK ARGS..."; return 1; }
	fabric__guard && fabric__end "$1" || return 1
	shift
	[ $# -eq 0 ] || fabric__modules sch_netem || return 1
	fabric__set netem "$*"
}

# fabric__cut1: drop everything leaving _fb_ns:_fb_if, before its qdiscs
fabric__cut1() {
	tc -n "$_fb_ns" qdisc del dev "$_fb_if" clsact >/dev/null 2>&1
	fabric__batch tc -n "$_fb_ns" <<-EOF
		qdisc add dev $_fb_if clsact
		filter add dev $_fb_if egress pref 1 handle 1 matchall action drop
	EOF
}

# fabric_cut LINK [oneway]: black-hole the link: both directions (oneway:
# what leaves the named end) dropped, no route changed
fabric_cut() {
	fabric__guard && fabric__end "${1:-}" || return 1
	fabric__modules sch_ingress cls_matchall act_gact || return 1
	_fu_p=$(fabric_peer "$1") || return 1
	fabric__cut1 || return 1
	[ "${2:-}" = oneway ] && return 0
	fabric__end "$_fu_p" && fabric__cut1
}

# fabric__restore1: undo cut and netem at _fb_ns:_fb_if
fabric__restore1() {
	tc -n "$_fb_ns" qdisc del dev "$_fb_if" clsact >/dev/null 2>&1
	fabric__info || return 1
	[ -z "$(fabric__field netem)" ] || fabric__set netem ""
}

# fabric_restore LINK|all: undo cut and netem on both ends (shaping stays)
fabric_restore() {
	fabric__guard || return 1
	if [ "${1:-}" = all ]; then
		for _fo_e in $(fabric_links); do
			fabric__end "$_fo_e" && fabric__restore1 || return 1
		done
		return 0
	fi
	fabric__end "${1:-}" && fabric__restore1 || return 1
	_fo_p=$(fabric_peer "$1") || return 1
	fabric__end "$_fo_p" && fabric__restore1
}

# ------------------------------------------------------------ counters
# fabric__ifstats NS: "IFACE RX_PACKETS TX_PACKETS RX_BYTES TX_BYTES" per
# interface of NS (netlink: no sysfs mount needed)
fabric__ifstats() {
	ip -n "$1" -s -o link show | awk '{
		name = $2; sub(/:$/, "", name); sub(/@.*/, "", name)
		n = split($0, f, /\\/)
		for (i = 1; i < n; i++) {
			if (f[i] ~ /RX:/) { split(f[i + 1], v, " "); rp = v[2]; rb = v[1] }
			if (f[i] ~ /TX:/) { split(f[i + 1], v, " "); tp = v[2]; tb = v[1] }
		}
		print name, rp, tp, rb, tb }'
}

# fabric_counter LINK NAME: /sys/class/net/IFACE/statistics/NAME in NS
fabric_counter() {
	fabric__split "$1" || return 1
	ip netns exec "$_fb_ns" cat "/sys/class/net/$_fb_if/statistics/$2"
}

# fabric_spine_pkts S [L]: packets spine S received (only from leaf L)
fabric_spine_pkts() {
	fabric__ifstats "spine$1" | awk -v l="${2:-}" '
		(l == "" && $1 ~ /^down[0-9]+$/) || $1 == "down" l { n += $2 }
		END { print n + 0 }'
}

# fabric_uplinks L: "spineS PACKETS" per spine, the packets leaf L sent up
# to spine S (its upS's tx: what spineS:downL received, one netlink call)
fabric_uplinks() {
	fabric__ifstats "leaf$1" | awk '$1 ~ /^up[0-9]+$/ { sub(/^up/, "", $1); print "spine" $1, $3 }' |
		sort -k 1.6n
}

# fabric_stats [all]: "spineS RX_PACKETS" lines, or with "all" one
# "NS:IFACE RX_PACKETS TX_PACKETS" line per router port
fabric_stats() {
	fabric__load || return 1
	_ft_s=1
	if [ "${1:-}" != all ]; then
		while [ "$_ft_s" -le "$FABRIC_SPINES" ]; do
			echo "spine$_ft_s $(fabric_spine_pkts "$_ft_s")"
			_ft_s=$((_ft_s + 1))
		done
		return 0
	fi
	for _ft_n in $(fabric__names); do
		case "$_ft_n" in h*) continue ;; esac
		fabric__ifstats "$_ft_n" | awk -v ns="$_ft_n" '$1 != "lo" { print ns ":" $1, $2, $3 }'
	done
}

# fabric_marks LINK: ECN CE marks by LINK's egress AQM (fq_codel ce_mark +
# ecn_mark, or RED's marked); 0 when it has none
fabric_marks() {
	fabric__split "$1" || return 1
	tc -n "$_fb_ns" -s qdisc show dev "$_fb_if" | awk '
		{ for (i = 1; i < NF; i++)
			if ($i == "ce_mark" || $i == "ecn_mark" || $i == "marked") n += $(i + 1) }
		END { print n + 0 }'
}

# fabric_drops LINK: packets dropped at LINK by a cut
fabric_drops() {
	fabric__split "$1" || return 1
	tc -n "$_fb_ns" -s filter show dev "$_fb_if" egress 2>/dev/null | awk '
		$1 == "Sent" && $3 == "bytes" { n += $4 } END { print n + 0 }'
}

# fabric_show: the plan, as a table
fabric_show() {
	fabric__load || return 1
	echo "fabric: $FABRIC_HOSTS hosts, $FABRIC_LEAVES leaves, $FABRIC_SPINES spines"
	_fw_i=1
	while [ "$_fw_i" -le "$FABRIC_HOSTS" ]; do
		fabric__host "$_fw_i"
		printf 'h%-2s veth%-2s %-11s %-15s <-> leaf%s:h%-2s %-14s %s\n' "$_fw_i" "$_fw_i" \
			"192.0.2.$_fw_i" "2001:db8::$_fw_i" "$_fb_leaf" "$_fw_i" "$_fb_g4" "$_fb_g6"
		_fw_i=$((_fw_i + 1))
	done
	_fw_l=1
	while [ "$_fw_l" -le "$FABRIC_LEAVES" ]; do
		_fw_s=1
		while [ "$_fw_s" -le "$FABRIC_SPINES" ]; do
			fabric__ls "$_fw_l" "$_fw_s"
			printf 'leaf%s:up%s %-17s %-20s <-> spine%s:down%s %-14s %s\n' "$_fw_l" "$_fw_s" \
				"$_fb_l4/31" "$_fb_l6/64" "$_fw_s" "$_fw_l" "$_fb_s4" "$_fb_s6"
			_fw_s=$((_fw_s + 1))
		done
		_fw_l=$((_fw_l + 1))
	done
}

fabric_main() {
	if [ "${1:-}" = -v ]; then
		FABRIC_VERBOSE=1
		shift
	fi
	_fm_c=${1:-}
	[ $# -eq 0 ] || shift
	case "$_fm_c" in
	build) fabric_build "$@" ;;
	clean) fabric_clean ;;
	shape) fabric_shape "$@" ;;
	unshape) fabric_unshape "$@" ;;
	netem) fabric_netem "$@" ;;
	cut) fabric_cut "$@" ;;
	restore) fabric_restore "$@" ;;
	down) fabric_down "$@" ;;
	up) fabric_up "$@" ;;
	stats) fabric_stats "$@" ;;
	spine_pkts) fabric_spine_pkts "$@" ;;
	uplinks) fabric_uplinks "$@" ;;
	marks) fabric_marks "$@" ;;
	drops) fabric_drops "$@" ;;
	exec) fabric_exec "$@" ;;
	ip4) fabric_ip4 "$@" ;;
	ip6) fabric_ip6 "$@" ;;
	leaf_of) fabric_leaf_of "$@" ;;
	peer) fabric_peer "$@" ;;
	hosts) fabric_hosts ;;
	links) fabric_links ;;
	show) fabric_show ;;
	-h | --help | help) sed -n '4,/^$/s/^# \{0,1\}//p' "$0" ;;
	*) fabric__err "usage: fabric.sh [-v] build [--hosts H] [--spines S] [--rate RATE] | clean | shape LINK RATE [THRESHOLD] | unshape LINK | netem LINK ARGS... | cut LINK | restore LINK | down LINK | up LINK | stats | spine_pkts S [L] | exec NS CMD... | ip4 I | ip6 I | hosts | links | show (see --help)" ;;
	esac
}

# Executed (not sourced): run the CLI.
case "${0##*/}" in
fabric.sh) fabric_main "$@" ;;
esac
