#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 600
#
# The spine-leaf test fabric (tools/guest/fabric.sh), with plain kernel
# traffic (no mroce): 4 hosts, 2 leaves, 4 spines.  Every host reaches
# every other over IPv4 and IPv6, same-leaf through its leaf; the leaves'
# ECMP spreads UDP flows with different source ports over all spines and
# keeps one source port on one spine; a cut link black-holes exactly the
# flows hashed onto it without a route change, restore heals it; a link
# taken down is routed around; shaping caps the rate and ECN-marks ECT
# traffic (CE seen by the receiver); netem stacks on a shaped link; clean
# and topo.sh's clean coexist.
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=SCRIPTDIR/../guest/fabric.sh
. "$MROCE_TOP/tools/guest/fabric.sh"

need_cmd tc ping
PY=/usr/bin/python3	# not a pyenv shim: seconds per start under TCG
[ -x "$PY" ] || PY=$(command -v python3) || skip "python3 not available"
FLOWS=$MROCE_TOP/tools/guest/flows.py
TMP=$(mktemp -d)
on_exit "fabric_clean; rm -rf '$TMP'"
T0=$(date +%s)

flows() {	# flows NS ARGS...: flows.py in NS
	local ns=$1
	shift
	fabric_exec "$ns" "$PY" "$FLOWS" "$@"
}

sink_start() {	# sink_start NAME NS udp-recv|tcp-recv [ARGS]: in the background
	local name=$1 ns=$2
	shift 2
	rm -f "$TMP/$name.ready"
	flows "$ns" "$@" --ready "$TMP/$name.ready" >"$TMP/$name.out" 2>&1 &
	eval "sink_$name=$!"
	for _ in $(seq 300); do
		[ -e "$TMP/$name.ready" ] && return 0
		sleep 0.1
	done
	echo "sink $name did not start: $(cat "$TMP/$name.out")"
	return 1
}

sink_wait() {	# sink_wait NAME: wait for it, show its summary
	local pid
	eval "pid=\$sink_$1"
	wait "$pid"
	grep -v '^sport ' "$TMP/$1.out" | tr '\n' ' '
	echo
}

val() {		# val NAME KEY: KEY's value in NAME's output
	awk -v k="$2" '$1 == k { print $2; exit }' "$TMP/$1.out"
}

from_leaf1() {	# packets leaf1 sent to each spine
	fabric_uplinks 1 | awk '{ printf "%s%s", sep, $2; sep = " " } END { print "" }'
}

section() { log "[$(( $(date +%s) - T0 ))s] --- $*"; }

delta() {	# delta "A1 A2 A3 A4" "B1 B2 B3 B4": B - A
	local -a a b
	read -ra a <<<"$1"
	read -ra b <<<"$2"
	echo "$((b[0] - a[0])) $((b[1] - a[1])) $((b[2] - a[2])) $((b[3] - a[3]))"
}

section build
require "build the default fabric" fabric_build
fabric_show
log "built in $(( $(date +%s) - T0 ))s"
check_eq "hosts" "h1 h2 h3 h4" "$(fabric_hosts | tr '\n' ' ' | sed 's/ $//')"
check_eq "h2 on leaf1, h3 on leaf2" "1 2" "$(fabric_leaf_of 2) $(fabric_leaf_of 3)"
check_eq "peer of leaf1:up3" spine3:down1 "$(fabric_peer leaf1:up3)"
check_eq "peer of h4:veth4" leaf2:h4 "$(fabric_peer h4:veth4)"
for ns in leaf1 spine2; do
	# shellcheck disable=SC2016  # for the inner shell
	check_eq "$ns: forwarding, L4 multipath hash (v4, v6), rp_filter off" "1 1 1 1 0" \
		"$(fabric_exec "$ns" sh -c 'cd /proc/sys/net; echo $(cat ipv4/ip_forward ipv6/conf/all/forwarding ipv4/fib_multipath_hash_policy ipv6/fib_multipath_hash_policy ipv4/conf/all/rp_filter)')"
done
r=$(ip -n leaf1 route show 192.0.2.3)
echo "$r"
check_eq "leaf1 -> h3: ECMP over 4 spines" 4 "$(grep -c 'nexthop via 198.51.100.* dev up' <<<"$r")"
r=$(ip -n leaf2 -6 route show 2001:db8::1)
echo "$r"
check_eq "leaf2 -> h1 (IPv6): ECMP over 4 spines" 4 "$(grep -c 'nexthop via 2001:db8:ffff:.* dev up' <<<"$r")"

section "reachability: every pair, IPv4 and IPv6 (in parallel)"
declare -A pings
for a in 1 2 3 4; do
	for b in 1 2 3 4; do
		[ "$a" = "$b" ] && continue
		for f in 4 6; do
			fabric_exec "h$a" ping -c 2 -i 0.2 -W 5 -q "$(fabric_ip$f "$b")" \
				>"$TMP/ping$f-$a-$b" 2>&1 &
			pings[$f-$a-$b]=$!
		done
	done
done
for k in $(printf '%s\n' "${!pings[@]}" | sort); do
	IFS=- read -r f a b <<<"$k"
	wait "${pings[$k]}"
	check "ping (IPv$f) h$a -> h$b" test $? = 0 || cat "$TMP/ping$k"
done
# TTL 64 minus one per router: same leaf 1, other leaf 3 (leaf, spine, leaf)
check_match "h1 -> h2 through leaf1" 'ttl=63' "$(fabric_exec h1 ping -c 1 -W 5 192.0.2.2)"
check_match "h1 -> h3 through leaf1, a spine, leaf2" 'ttl=61' "$(fabric_exec h1 ping -c 1 -W 5 192.0.2.3)"

section "ECMP: source ports spread over all spines"
spread() {	# spread DST SPORTS: 64 flows x 4 datagrams h1 -> DST
	local before after d s
	sink_start spread h3 udp-recv --port 9000 --idle 3 --packets 256 || return 1
	before=$(from_leaf1)
	flows h1 udp-send "$1" --port 9000 --sports "$2" --count 4
	sink_wait spread
	after=$(from_leaf1)
	d=$(delta "$before" "$after")
	log "$1: packets per spine from leaf1: $d"
	check_eq "$1: h3 got all 256 datagrams" 256 "$(val spread packets)"
	check_eq "$1: from all 64 source ports" 64 "$(val spread ports)"
	s=0
	for n in $d; do
		s=$((s + 1))
		# 64 flows: P(a spine gets fewer than 4 of them) < 1e-4
		check "$1: spine$s carried a share (>= 16 of 256)" test "$n" -ge 16
	done
}
spread 192.0.2.3 40000-40063
spread 2001:db8::3 41000-41063

one_port() {	# one_port DST SPORT N: the spine SPORT's N datagrams took
	local before after d s=0 n spine=
	before=$(from_leaf1)
	flows h1 udp-send "$1" --port 9000 --sports "$2" --count "$3" >/dev/null
	after=$(from_leaf1)
	d=$(delta "$before" "$after")
	log "$1 from port $2: packets per spine from leaf1: $d" >&2
	for n in $d; do
		s=$((s + 1))
		if [ "$n" -ge "$3" ]; then
			[ -z "$spine" ] && spine=$s || spine="$spine+$s"
		elif [ "$n" -ge 10 ]; then	# a few ARP/ND packets are fine
			spine="$spine+$s"
		fi
	done
	echo "$spine"
}
S4=$(one_port 192.0.2.3 40100 100)
check_match "one source port, one spine" '^[1-4]$' "$S4"
S6=$(one_port 2001:db8::3 41100 100)
check_match "IPv6: one source port, one spine" '^[1-4]$' "$S6"
[[ $S4 =~ ^[1-4]$ ]] || fail "cannot go on without the spine of port 40100"

section "cut: a black hole, no route change"
CUT=leaf1:up$S4
check "cut $CUT (port 40100's spine)" fabric_cut "$CUT"
check_match "route unchanged: leaf1 still uses spine$S4" "dev up$S4" "$(ip -n leaf1 route show 192.0.2.3)"
before=$(from_leaf1)
sink_start cut h3 udp-recv --port 9000 --idle 3 || fail "no sink"
flows h1 udp-send 192.0.2.3 --port 9000 --sports 40000-40063,40100 --count 3
sink_wait cut
after=$(from_leaf1)
got=$(val cut ports)
log "cut: $got of 65 flows arrived; packets per spine from leaf1: $(delta "$before" "$after")"
check "some flows were black-holed" test "${got:-0}" -lt 65
check "the others arrived" test "${got:-0}" -gt 0
check_eq "port 40100 (on spine$S4) lost" "" "$(awk '$1 == "sport" && $2 == 40100' "$TMP/cut.out")"
check_eq "a flow arrives whole or not at all" "" "$(awk '$1 == "sport" && $3 != 3' "$TMP/cut.out")"
read -ra d <<<"$(delta "$before" "$after")"
check_eq "spine$S4 received nothing from leaf1" 0 "${d[S4 - 1]}"
# (Not every lost packet: once ARP/ND toward the far end failed too, the
# neighbour layer drops them before they reach the device and its filter.)
drops=$(fabric_drops "$CUT")
check "the cut's filter dropped packets ($drops)" test "$drops" -gt 0
check "restore $CUT" fabric_restore "$CUT"
check_eq "no clsact left on either end" "" \
	"$(tc -n leaf1 qdisc show dev "up$S4" | grep clsact; tc -n "spine$S4" qdisc show dev down1 | grep clsact)"
sink_start heal h3 udp-recv --port 9000 --idle 3 --packets 195 || fail "no sink"
flows h1 udp-send 192.0.2.3 --port 9000 --sports 40000-40063,40100 --count 3 >/dev/null
sink_wait heal
check_eq "after restore every flow arrives" "65 195" "$(val heal ports) $(val heal packets)"

section "down/up: a failure the routing sees"
DOWN=spine$S4:down1
check "down $DOWN" fabric_down "$DOWN"
check_fail "leaf1 stopped using spine$S4" grep -q "dev up$S4" <<<"$(ip -n leaf1 route show 192.0.2.3)"
check_fail "leaf2 stopped using spine$S4 toward leaf1" grep -q "dev up$S4" <<<"$(ip -n leaf2 -6 route show 2001:db8::1)"
check_eq "leaf1 -> h3 over the 3 other spines" 3 "$(ip -n leaf1 route show 192.0.2.3 | grep -c nexthop)"
sink_start d3 h3 udp-recv --port 9000 --idle 3 --packets 195 || fail "no sink"
sink_start d1 h1 udp-recv --port 9000 --idle 3 --packets 192 || fail "no sink"
flows h1 udp-send 192.0.2.3 --port 9000 --sports 40000-40063,40100 --count 3 >/dev/null
flows h3 udp-send 2001:db8::1 --port 9000 --sports 42000-42063 --count 3 >/dev/null
sink_wait d3
sink_wait d1
check_eq "h1 -> h3: every flow rerouted" "65 195" "$(val d3 ports) $(val d3 packets)"
check_eq "h3 -> h1 (IPv6): every flow rerouted" "64 192" "$(val d1 ports) $(val d1 packets)"
check "up $DOWN" fabric_up "$DOWN"
check_eq "leaf1 -> h3 over 4 spines again" 4 "$(ip -n leaf1 route show 192.0.2.3 | grep -c nexthop)"
check_eq "leaf2 -> h1 (IPv6) over 4 spines again" 4 "$(ip -n leaf2 -6 route show 2001:db8::1 | grep -c nexthop)"
check_eq "port 40100 back on spine$S4" "$S4" "$(one_port 192.0.2.3 40100 50)"
check "host link down and up" fabric_down h1:veth1
check "... up" fabric_up h1:veth1
check "h1 reaches h3 after its link came back" fabric_exec h1 ping -c 2 -i 0.2 -W 5 -q 192.0.2.3
check "... and over IPv6" fabric_exec h1 ping -c 2 -i 0.2 -W 5 -q 2001:db8::3

section "shaping and ECN"
RATE=4	# Mbit/s; low, so that a loaded TCG guest still fills it
fabric_exec h1 sh -c 'echo 1 >/proc/sys/net/ipv4/tcp_ecn'	# ECT data
sink_start tcp0 h3 tcp-recv --seconds 2 || fail "no TCP sink"
flows h1 tcp-send 192.0.2.3 --seconds 10 >/dev/null
sink_wait tcp0
base=$(val tcp0 mbit)
log "TCP h1 -> h3 unshaped: $base Mbit/s"
section "shaped TCP"
# CE above 20 ms of queue (~7 packets at 4 Mbit/s): enough for a classic
# (non-DCTCP) ECN TCP to keep the link busy while still being marked
check "shape leaf2:h3 to ${RATE}mbit, CE above 20ms" fabric_shape leaf2:h3 "${RATE}mbit" 20ms
tc -n leaf2 qdisc show dev h3
sink_start tcp1 h3 tcp-recv --seconds 3 || fail "no TCP sink"
flows h1 tcp-send 192.0.2.3 --seconds 10 >/dev/null
sink_wait tcp1
mbit=$(val tcp1 mbit)
log "TCP h1 -> h3 shaped to $RATE Mbit/s: $mbit Mbit/s"
check "shaped TCP stays under the rate (+10%)" awk -v m="$mbit" -v r="$RATE" 'BEGIN { exit !(m > 0 && m <= r * 1.1) }'
if awk -v b="$base" -v r="$RATE" 'BEGIN { exit !(b >= 2 * r) }'; then
	check "shaped TCP uses the link (>= 50%)" awk -v m="$mbit" -v r="$RATE" 'BEGIN { exit !(m >= r * 0.5) }'
else
	log "unshaped TCP only reached $base Mbit/s: guest too slow to check the lower bound"
fi
marks=$(fabric_marks leaf2:h3)
tc -n leaf2 -s qdisc show dev h3
check "TCP with ECN got CE marks at leaf2:h3 ($marks)" test "$marks" -gt 0

section "ECT(0) UDP through the shaped link"
sink_start ect h3 udp-recv --port 9000 --idle 3 --packets 400 || fail "no sink"
flows h1 udp-send 192.0.2.3 --port 9000 --sports 43000 --count 400 --size 1000 --tos 2
sink_wait ect
check "ECT(0) UDP above the rate arrives CE-marked ($(val ect ce) of $(val ect packets))" test "$(val ect ce)" -gt 0
check "UDP received at most the rate (+10%)" awk -v m="$(val ect mbit)" -v r="$RATE" 'BEGIN { exit !(m > 0 && m <= r * 1.1) }'

section "netem on a shaped link, RED"
check "netem delay on top of the shaped link" fabric_netem leaf2:h3 delay 40ms
q=$(tc -n leaf2 qdisc show dev h3)
echo "$q"
check_match "netem root, tbf below it" 'qdisc netem 1: root.*delay 40ms.*qdisc tbf 2: parent 1:1' "$(tr '\n' ' ' <<<"$q")"
rtt=$(fabric_exec h1 ping -c 3 -i 0.3 -W 5 192.0.2.3 | sed -n 's|.* = \([0-9.]*\)/.*|\1|p')
check "ping h1 -> h3 takes >= 40 ms (min $rtt ms)" awk -v t="${rtt:-0}" 'BEGIN { exit !(t >= 40) }'
check "restore leaf2:h3 (netem off, shaping stays)" fabric_restore leaf2:h3
check_match "tbf root again" '^qdisc tbf 2: root' "$(tc -n leaf2 qdisc show dev h3)"
check "unshape" fabric_unshape leaf2:h3
check_match "no qdisc left" '^qdisc noqueue' "$(tc -n leaf2 qdisc show dev h3)"
check "RED with ECN at 30kb" fabric_shape leaf1:up1 100mbit 30kb
check_match "red marks ECN" 'qdisc red 3: parent 2:1 .*min 30000b max 60000b ecn' "$(tc -n leaf1 qdisc show dev up1)"

section "clean, and topo.sh"
check "topo_clean removes the fabric too" topo_clean
check_eq "no namespace left" "" "$(ip netns list)"
topo_pair
check_fail "build refused while topo.sh's hosts exist" fabric_build
check "fabric_clean leaves topo.sh's hosts alone" fabric_clean
check_eq "h1 h2 still there" "h1 h2" "$(topo_hosts | tr '\n' ' ' | sed 's/ $//')"
topo_clean
log "t-50 took $(( $(date +%s) - T0 ))s"
