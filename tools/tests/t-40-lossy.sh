#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 1200
#
# Reliability on a lossy, reordering, duplicating, corrupting link
# (tc netem on both veth ends, so data and acknowledgments suffer):
# mroce-verify must move its data with every byte, completion and
# immediate right, and the counters must show selective retransmission,
# not go-back-N: retransmitted packets stay close to the packets netem
# dropped, and reordering alone causes almost no retransmission.
. "$(dirname "$0")/lib.sh"
# shellcheck source=tools/tests/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"

need_cmd rdma tc
export RDMAV_DRIVERS=$MROCE_TOP/tools/libmroce/libmroce
V=$MROCE_TOP/tools/mroce-verify/mroce-verify
[ -x "$V" ] || fail "$V not built (make tools)"
ITERS=${MROCE_LOSSY_ITERS:-60}
# mroce-verify's options for the next scenario (both sides)
VOPTS=(-n "$ITERS")

load_mroce
on_exit 'topo_clean; unload_mroce'
topo_pair
require "mroce1 on veth1" in_h1 rdma link add mroce1 type mroce netdev veth1
require "mroce2 on veth2" in_h2 rdma link add mroce2 type mroce netdev veth2
sleep 0.5
gidx=$(gid_index mroce1 192.0.2.1)
require "IPv4 GID of mroce1" test -n "$gidx"

# both devices' counters in one snapshot (counters in lib.sh): S=$(snap2)
snap2() { echo "$(counters mroce1 1.)$(counters mroce2 2.)"; }
# sum2 NAME [SNAPSHOT]: NAME on both devices, in SNAPSHOT or now
sum2() {
	local s=${2:-$(snap2)}
	echo $(( $(ctr "$s" "1.$1") + $(ctr "$s" "2.$1") ))
}
# every resent request packet: READ re-requests have a counter of their own
retx() { echo $(( $(sum2 tx_retx_pkts "$1") + $(sum2 tx_read_rereq "$1") )); }
drops() {	# netem drops on both ends
	local a b
	a=$(in_h1 tc -s qdisc show dev veth1 | sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -n 1)
	b=$(in_h2 tc -s qdisc show dev veth2 | sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -n 1)
	echo $(( ${a:-0} + ${b:-0} ))
}

# scenario NAME NETEM...: run mroce-verify with NETEM on both ends;
# sets RETX, DROPS, TXP (packets sent) for the checks that follow.
scenario() {
	local name=$1 r0 t0 rc srv c0 c1
	shift
	in_h1 tc qdisc replace dev veth1 root netem "$@"
	in_h2 tc qdisc replace dev veth2 root netem "$@"
	c0=$(snap2)
	r0=$(retx "$c0")
	t0=$(sum2 tx_pkts "$c0")
	in_h1 taskset -c 0 timeout 240 "$V" -d mroce1 -g "$gidx" --server \
		"${VOPTS[@]}" --seed 7 --strict --reorder >"/tmp/$name.server" 2>&1 &
	srv=$!
	topo_wait_listen h1 18710	# mroce-verify's default port
	in_h2 taskset -c 1 timeout 240 "$V" -d mroce2 -g "$gidx" \
		--client 192.0.2.1 "${VOPTS[@]}" --seed 7 --strict --reorder \
		>"/tmp/$name.client" 2>&1
	rc=$?
	wait $srv
	rc=$((rc + $?))
	c1=$(snap2)
	RETX=$(( $(retx "$c1") - r0 ))
	TXP=$(( $(sum2 tx_pkts "$c1") - t0 ))
	DROPS=$(drops)
	tail -n 1 "/tmp/$name.client"
	log "$name ($*): sent $TXP, netem dropped $DROPS, retransmitted $RETX;" \
	    "totals: spurious $(sum2 retx_spurious "$c1"), path-seq losses" \
	    "$(sum2 loss_path_seq "$c1"), RACK losses $(sum2 loss_rack "$c1")," \
	    "tail probes $(sum2 tlp_probes "$c1"), RTOs $(sum2 rto_expired "$c1")"
	check_eq "$name: every byte, completion and error as expected" 0 "$rc"
	[ "$rc" = 0 ] || grep -h "MISMATCH\|FAIL" "/tmp/$name.client" \
		"/tmp/$name.server" | head -n 20
	in_h1 tc qdisc del dev veth1 root
	in_h2 tc qdisc del dev veth2 root
}

# no go-back-N: at most 1.5 retransmissions per drop, on top of what the
# same run needs on a clean link (BASE: the RNR phase makes the responder
# drop packets on purpose), plus a little slack, plus EXTRA (default 0)
# for a scenario that also reorders
not_gbn() {
	local extra=${2:-0}
	check "$1: retransmitted $RETX <= 1.5 x $DROPS dropped + $BASE + $extra + 20" \
		test "$RETX" -le $(( DROPS * 3 / 2 + BASE + extra + 20 ))
}

# want NAME: is scenario NAME selected (MROCE_LOSSY_ONLY, a regex, default all)?
want() { [[ $1 =~ ${MROCE_LOSSY_ONLY:-.} ]]; }

# the clean-link baseline
BASE=0
if want clean; then
	scenario clean delay 0ms
	BASE=$RETX
	check "clean link: at most 4% of $TXP packets retransmitted ($RETX; RNR phase)" \
		test $(( RETX * 25 )) -le "$TXP"
fi

for loss in 1 5 10; do
	want "loss$loss" || continue
	scenario "loss$loss" loss "$loss%"
	check "loss$loss: netem dropped packets" test "$DROPS" -gt 0
	not_gbn "loss$loss"
done

if want reorder; then
	scenario reorder delay 1ms reorder 25%
	check "reorder only: retransmitted $RETX - $BASE (clean run) <= 2% of $TXP packets" \
		test $(( (RETX - BASE) * 50 )) -le "$TXP"
fi

if want duplicate; then
	scenario duplicate duplicate 2%
	check "duplicates recognised (rx_dup_pkts > 0)" \
		test "$(sum2 rx_dup_pkts)" -gt 0
fi

if want corrupt; then
	csum0=$(in_h1 cat /proc/net/snmp | awk '/^Udp: [0-9]/ {print $8}')
	scenario corrupt corrupt 0.5%
	csum1=$(in_h1 cat /proc/net/snmp | awk '/^Udp: [0-9]/ {print $8}')
	check "corrupted packets caught by the UDP checksum (InCsumErrors $csum0 -> $csum1)" \
		test "$csum1" -gt "$csum0"
fi

if want combined; then
	scenario combined loss 2% duplicate 1% corrupt 0.2% delay 1ms reorder 10%
	# the sum of its parts' budgets: the loss bound, plus the reorder-only
	# scenario's 2% of the packets sent.  It failed a CI run at 448 >
	# 440 with only 176 drops: resends stay about 430-480 whatever netem
	# drops (433-484 in four runs), because the reorder's share does not
	# depend on the drops.  Go-back-N resends windows per loss, far above.
	not_gbn combined $((TXP / 50))
fi

# Tail losses are the tail probe's, not the RTO's (spec MR-44).  A
# ping-pong of one-packet SENDs over a 10 ms RTT: every packet is the
# tail of its message, and nft drops every 10th MetaRoCE packet h2 sends
# (requests and ACKs), for the first 4000 bytes it drops (about 35
# packets, of the 600 h2 sends): the last exchanges must not lose the
# client's final ACK, because ibv_rc_pingpong's client exits as soon as
# it has the server's last SEND, and the server's resends of it then
# find no QP, so the server fails with RETRY_EXC_ERR, as RC must (seen
# once in CI: 10 resends to a destroyed QP).  The RTT is steady, so RTTVAR is small and the
# RTO (SRTT + 4 RTTVAR, about 10-15 ms) comes before the PTO (2 SRTT,
# 20 ms): the probe must then go in the RTO's place.  Before that fix it
# was dropped instead, and every one of these losses cost an RTO (a dead
# path, half the rate, a backoff).  Only a lost probe (or its lost ACK)
# may still end in an RTO.
if want tail; then
	need_cmd nft ibv_rc_pingpong
	in_h1 tc qdisc replace dev veth1 root netem delay 5ms
	in_h2 tc qdisc replace dev veth2 root netem delay 5ms
	in_h2 nft add table inet mtail
	in_h2 nft add chain inet mtail out '{ type filter hook output priority 0; }'
	in_h2 nft add rule inet mtail out udp dport 4792 numgen inc mod 10 0 \
		quota until 4000 bytes counter drop
	c0=$(snap2)
	p0=$(sum2 tlp_probes "$c0")
	o0=$(sum2 rto_expired "$c0")
	in_h1 timeout 120 ibv_rc_pingpong -d mroce1 -g "$gidx" -p 18791 \
		-s 64 -n 300 >/tmp/tail.server 2>&1 &
	srv=$!
	topo_wait_listen h1 18791
	in_h2 timeout 120 ibv_rc_pingpong -d mroce2 -g "$gidx" -p 18791 \
		-s 64 -n 300 192.0.2.1 >/tmp/tail.client 2>&1
	rc=$?
	wait $srv
	rc=$((rc + $?))
	tdrops=$(in_h2 nft list chain inet mtail out | sed -n 's/.*packets \([0-9]*\).*/\1/p')
	c1=$(snap2)
	tlps=$(( $(sum2 tlp_probes "$c1") - p0 ))
	rtos=$(( $(sum2 rto_expired "$c1") - o0 ))
	log "tail: nft dropped $tdrops, tail probes $tlps, RTOs $rtos; $(tail -n 1 /tmp/tail.client)"
	check_eq "tail: 300 ping-pongs complete" 0 "$rc"
	check "tail: nft dropped packets ($tdrops)" test "${tdrops:-0}" -ge 20
	check "tail: a probe for most drops ($tlps probes >= $tdrops / 2)" \
		test $(( tlps * 2 )) -ge "${tdrops:-0}"
	check "tail: few RTOs ($rtos * 4 <= $tdrops drops)" \
		test $(( rtos * 4 )) -le "${tdrops:-0}"
	in_h2 nft delete table inet mtail
	in_h1 tc qdisc del dev veth1 root
	in_h2 tc qdisc del dev veth2 root
fi

# The work of loss handling is bounded by the window, not by the message
# (issue 12 point 10): a NAK, the end of an RNR wait, a tail probe or an
# RTO walks the outstanding packets from snd_una, so the packets examined
# per walk (loss_scan_pkts / loss_scans) stay <= 256 (MROCE_WINDOW).
# Walking each WQE from its first packet, as before 9cb8767, examines up
# to a whole 16 MiB message (16384 packets at MTU 1024) per walk.
# mroce-verify checks the data of messages up to 16 MiB under loss (its
# sizes are random, mostly small).  Then ib_write_bw sends nothing but
# 16 MiB WRITEs through 1% loss and two 200 ms blackouts of the data
# direction, each 5000 packets into a message: the RTOs of a blackout
# fire with the cumulative point deep inside the message, where a walk
# from the message's start is thousands of packets long.
if want bigmsg; then
	VOPTS=(-n 8 --max-size 16M --ops "write,read")
	scenario bigmsg loss 2%
	VOPTS=(-n "$ITERS")

	need_cmd ib_write_bw
	c0=$(snap2)
	s0=$(sum2 loss_scans "$c0")
	p0=$(sum2 loss_scan_pkts "$c0")
	o0=$(sum2 rto_expired "$c0")
	in_h1 tc qdisc replace dev veth1 root netem loss 1%
	in_h2 tc qdisc replace dev veth2 root netem loss 1%
	# -u 18: a verbs retry budget of 8 x 1.07 s.  The blackout is 0.2 s
	# of sleep between two tc commands, but a tc command in a guest
	# whose CPU the transfer saturates can take a second or more: with
	# perftest's default (-u 14: 8 x 67 ms = 537 ms) the requester then
	# gave up with RETRY_EXC_ERR before the link came back, as RC must.
	in_h1 timeout 240 ib_write_bw -d mroce1 -x "$gidx" -F -p 18790 \
		-u 18 -s 16777216 -n 12 >/tmp/bigwrite.server 2>&1 &
	srv=$!
	topo_wait_listen h1 18790
	in_h2 timeout 240 ib_write_bw -d mroce2 -x "$gidx" -F -p 18790 \
		-u 18 -s 16777216 -n 12 192.0.2.1 >/tmp/bigwrite.client 2>&1 &
	cli=$!
	# the blackouts start when mroce2 has sent 5000 packets of the first
	# and of the sixth message (16384 packets each at MTU 1024)
	t0=$(counter mroce2 tx_pkts)
	for at in 5000 87000; do
		while kill -0 $cli 2>/dev/null &&
		      [ $(( $(counter mroce2 tx_pkts) - t0 )) -lt $at ]; do
			sleep 0.02
		done
		b0=$(cut -d' ' -f1 /proc/uptime)
		in_h2 tc qdisc change dev veth2 root netem loss 100%
		sleep 0.2
		in_h2 tc qdisc change dev veth2 root netem loss 1%
		log "bigmsg: blackout at $at packets: uptime $b0 .. $(cut -d' ' -f1 /proc/uptime)"
	done
	wait $cli
	rc=$?
	wait $srv
	rc=$((rc + $?))
	if [ "$rc" != 0 ]; then
		# where the packets died: the qdiscs, the links, the stack
		log "bigmsg: failed (uptime $(cut -d' ' -f1 /proc/uptime))"
		in_h2 tc -s qdisc show dev veth2
		in_h1 tc -s qdisc show dev veth1
		in_h1 ip -s link show dev veth1
		in_h2 ip -s link show dev veth2
		in_h1 grep '^Udp' /proc/net/snmp
		in_h2 grep '^Udp' /proc/net/snmp
		cat /proc/net/softnet_stat
		rdma statistic show link mroce1/1
		rdma statistic show link mroce2/1
	fi
	in_h1 tc qdisc del dev veth1 root
	in_h2 tc qdisc del dev veth2 root
	c1=$(snap2)
	rtos=$(( $(sum2 rto_expired "$c1") - o0 ))
	check_eq "bigmsg: twelve 16 MiB WRITEs through loss and blackouts (ib_write_bw)" 0 "$rc"
	[ "$rc" = 0 ] || tail -n 5 /tmp/bigwrite.client /tmp/bigwrite.server
	scans=$(( $(sum2 loss_scans "$c1") - s0 ))
	pkts=$(( $(sum2 loss_scan_pkts "$c1") - p0 ))
	log "bigmsg: 16 MiB WRITEs: $rtos RTOs; $scans loss-handling walks" \
	    "examined $pkts packets ($(( pkts / (scans ? scans : 1) )) per walk)"
	check "bigmsg: the blackouts caused RTOs ($rtos)" test "$rtos" -gt 0
	check "bigmsg: at most 256 packets examined per walk ($pkts in $scans)" \
		test "$pkts" -le $(( scans * 256 ))
fi

# per-QP values for rdma resource (the GSI QP stays after the runs)
res=$(rdma resource show qp link mroce1/1 -dd 2>&1)
echo "$res" | head -n 5
check_match "rdma resource shows per-QP reliability counters" \
	'rto_expired [0-9]+' "$res"
check_match "rdma resource shows the loss handling's work per QP" \
	'loss_scan_pkts [0-9]+' "$res"
