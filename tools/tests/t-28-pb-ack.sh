#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 300
#
# Piggybacked ACKs (spec "Piggybacked acknowledgment"): in a ping-pong
# the answer carries the ACK of the request it answers (PB_ACK), and
# neither side sends ACK packets.  With the default pb_ack=1 each
# connection first asks its peer (a PROBE with PB_ACK, answered with
# ECHO_PB: tx_probes).  mroce holds an ACK for the answer only where
# the ACK and the answer share a CPU, so the ping-pongs here run both
# ends on CPU 0 with CQ events (-e): ibv_rc_pingpong (SEND/RECV, 8 B and
# 900 B, buffers checked) and ib_send_lat between h1 and h2: both end
# cleanly, at least
# 80 % of the requests' acknowledgments travel piggybacked, ACK packets
# below 20 %, the other side accepts at least 99 % of them (a stale one,
# overtaken by a later ACK, is dropped alone: rx_drop_ack_range).  The
# last request of a ping-pong, which no answer acknowledges, still
# completes (the requester's tail probe draws the held ACK).  3000 B and
# 4 KiB ping-pongs (full 1 KiB packets first: no room for the 64 bytes)
# send the held ACK as an ACK packet with the answer's first packet and
# none waits for a tail probe; at 4 KiB no packet has room at all.  mroce-verify (SEND/WRITE/READ of
# 0 B to 256 KiB, every byte checked) with pb_ack on; then the 8 B
# ping-pong through 5 % netem loss of every packet but ACK packets, both
# ways: buffers checked, resends, piggybacked ACKs still used; and a
# checked 64 KiB ping-pong through the same loss in large segments
# (their resends cut as the message was).  Large segments (the same
# PROBE's ECHO_SEG): a checked 4 KiB ping-pong takes 3 packets a message
# with seg=1, 4 with seg=0.  Last,
# pb_ack=2 (no question asked) piggybacks as well; pb_ack=0 sends no
# PB_ACK at all.  ib_write_lat with its ends on CPUs 0 and 1 (the ACK
# sent by the CPU the request arrived on, while the other one answers)
# holds nothing: ACK packets as with pb_ack=0.
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=SCRIPTDIR/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"

need_cmd ibv_rc_pingpong ib_write_lat ib_send_lat taskset tc
setup_rdma_pair
PB=/sys/module/mroce/parameters/pb_ack
SEG=/sys/module/mroce/parameters/seg
require "the module has pb_ack" test -w "$PB"
require "the module has seg" test -w "$SEG"
check_eq "pb_ack is 1 (ask the peer) by default" 1 "$(cat "$PB")"
check_eq "seg is 1 (large segments once the peer agrees) by default" 1 \
	"$(cat "$SEG")"
on_exit "echo 1 > $PB 2>/dev/null; echo 1 > $SEG 2>/dev/null"

port=18600
# snap: every port counter of both devices, " DEV.NAME=VALUE ..." (one
# rdma call per device: a counter at a time made counter reads 55 of this
# test's 120 s under TCG)
snap() {
	echo "$(counters "$DEV_S" "$DEV_S.")$(counters "$DEV_C" "$DEV_C.")"
}
# delta BEFORE AFTER DEV.COUNTER
delta() {
	echo $(($(ctr "$2" "$3") - $(ctr "$1" "$3")))
}
# delta2 BEFORE AFTER COUNTER: the sum of COUNTER's deltas on both devices
delta2() {
	echo $(($(delta "$1" "$2" "$DEV_S.$3") + $(delta "$1" "$2" "$DEV_C.$3")))
}

# pingpong_pb NAME ITERS: requests = what each side sent; checks the split
check_pb() {
	local what=$1 n=$2 before=$3 after=$4 d pb acks sent got
	for d in "$DEV_S" "$DEV_C"; do
		pb=$(delta "$before" "$after" "$d.tx_acks_pb")
		acks=$(delta "$before" "$after" "$d.tx_acks")
		log "$what: $d sent $pb piggybacked ACKs and $acks ACK packets for $n requests"
		check "$what: $d piggybacked >= 80 % of $n ACKs ($pb)" \
			test "$pb" -ge $((n * 8 / 10))
		check "$what: $d sent < 20 % of $n as ACK packets ($acks)" \
			test "$acks" -lt $((n * 2 / 10))
	done
	for d in "$DEV_S:$DEV_C" "$DEV_C:$DEV_S"; do
		sent=$(delta "$before" "$after" "${d%:*}.tx_acks_pb")
		got=$(delta "$before" "$after" "${d#*:}.rx_acks_pb")
		check "$what: ${d#*:} accepted 99-100 % of the $sent ${d%:*} piggybacked ($got)" \
			test "$got" -le "$sent" -a "$((got * 100))" -ge "$((sent * 99))"
	done
}

first=1
for size in 8 900; do
	n=2000
	port=$((port + 1))
	b=$(snap)
	run_pair "pingpong-${size}B" "$port" 120 \
		taskset -c 0 ibv_rc_pingpong -d "$DEV_S" -g "$GID_S" -p "$port" -s "$size" -n "$n" -c -e -- \
		taskset -c 0 ibv_rc_pingpong -d "$DEV_C" -g "$GID_C" -p "$port" -s "$size" -n "$n" -c -e "$ADDR_S"
	pair_ok "ibv_rc_pingpong $size B x $n, buffers checked, with pb_ack" || continue
	a=$(snap)
	check_eq "pingpong $size B: no invalid data" "" \
		"$(grep -hi 'invalid data' "$SRV_OUT" "$CLI_OUT")"
	check_pb "pingpong $size B" "$n" "$b" "$a"
	if [ "$first" = 1 ]; then
		first=0
		for d in "$DEV_S" "$DEV_C"; do
			q=$(delta "$b" "$a" "$d.tx_probes")
			check "pingpong $size B: $d asked its peer (PROBEs: $q, 1..3)" \
				test "$q" -ge 1 -a "$q" -le 3
		done
	fi
	log "RESULT pingpong $size B with pb_ack: $(sed -n 's/^[0-9]* iters in [0-9.]* seconds = \([0-9.]*\) usec\/iter.*/\1 usec\/iter/p' "$CLI_OUT")"
done

n=2000
port=$((port + 1))
b=$(snap)
run_pair "send_lat" "$port" 120 \
	taskset -c 0 ib_send_lat -d "$DEV_S" -x "$GID_S" -F -e -p "$port" -s 8 -n "$n" -- \
	taskset -c 0 ib_send_lat -d "$DEV_C" -x "$GID_C" -F -e -p "$port" -s 8 -n "$n" "$ADDR_S"
if pair_ok "ib_send_lat -e 8 B x $n on one CPU with pb_ack"; then
	a=$(snap)
	check_pb "send_lat" "$n" "$b" "$a"
	log "RESULT send_lat 8 B on one CPU with pb_ack: $(grep -E '^ *8 +[0-9]+ ' "$CLI_OUT" | awk '{print "typical " $5 " us, average " $6 " us"}')"
fi

# the ends on two CPUs: the CPU the request arrives on sends its ACK
# while the other answers; holding would only delay the answer
port=$((port + 1))
b=$(snap)
run_pair "write_lat-2cpu" "$port" 120 \
	taskset -c 0 ib_write_lat -d "$DEV_S" -x "$GID_S" -F -p "$port" -s 8 -n "$n" -- \
	taskset -c 1 ib_write_lat -d "$DEV_C" -x "$GID_C" -F -p "$port" -s 8 -n "$n" "$ADDR_S"
if pair_ok "ib_write_lat 8 B x $n on CPUs 0 and 1 with pb_ack"; then
	a=$(snap)
	for d in "$DEV_S" "$DEV_C"; do
		acks=$(delta "$b" "$a" "$d.tx_acks")
		check "two CPUs: $d ACKs each request with an ACK packet ($acks of $n)" \
			test "$acks" -ge $((n * 9 / 10))
	done
	log "RESULT write_lat 8 B on two CPUs with pb_ack: $(grep -E '^ *8 +[0-9]+ ' "$CLI_OUT" | awk '{print "typical " $5 " us, average " $6 " us"}')"
fi

# full-size packets: no room; a held ACK leaves as an ACK packet with the
# answer's first packet, none waits for a tail probe.  At the PMTU (seg=0):
# 1388-byte large segments would leave room in a 4 KiB message's last one
echo 0 >"$SEG"
for size in 3000 4096; do
	port=$((port + 1))
	b=$(snap)
	run_pair "pingpong-${size}B" "$port" 120 \
		taskset -c 0 ibv_rc_pingpong -d "$DEV_S" -g "$GID_S" -p "$port" -s "$size" -n 500 -c -e -- \
		taskset -c 0 ibv_rc_pingpong -d "$DEV_C" -g "$GID_C" -p "$port" -s "$size" -n 500 -c -e "$ADDR_S"
	pair_ok "ibv_rc_pingpong $size B x 500 with pb_ack" || continue
	a=$(snap)
	n=$(delta2 "$b" "$a" tlp_probes)
	check "$size B: no ACK held until a tail probe (tlp_probes $n <= 10)" \
		test "$n" -le 10
	[ "$size" = 4096 ] && check_eq "4096 B: no room, no piggybacked ACK" 0 \
		"$(delta2 "$b" "$a" tx_acks_pb)"
	log "RESULT pingpong $size B with pb_ack: $(sed -n 's/^[0-9]* iters in [0-9.]* seconds = \([0-9.]*\) usec\/iter.*/\1 usec\/iter/p' "$CLI_OUT"), tail probes $n"
done
echo 1 >"$SEG"

# Large segments (spec "Large segments"): the capability PROBE's answer
# carries ECHO_SEG, and SEND/WRITE messages are then cut at what the
# 1500-byte veth holds (1388 bytes), not at the PMTU (1024).  A checked
# 4 KiB ping-pong: 3 packets a message instead of 4 (data packets: sent
# less ACK packets, PROBEs and resends).
# lseg NAME SEGMODE: DATA, the data packets both sides sent
lseg() {
	local b a t0 t1
	echo "$2" >"$SEG"
	port=$((port + 1))
	b=$(snap)
	run_pair "$1" "$port" 120 \
		ibv_rc_pingpong -d "$DEV_S" -g "$GID_S" -p "$port" -s 4096 -n 200 -c -- \
		ibv_rc_pingpong -d "$DEV_C" -g "$GID_C" -p "$port" -s 4096 -n 200 -c "$ADDR_S"
	pair_ok "$1: ibv_rc_pingpong 4 KiB x 200, buffers checked, seg=$2"
	a=$(snap)
	DATA=$(($(delta2 "$b" "$a" tx_pkts) - $(delta2 "$b" "$a" tx_retx_pkts) -
		$(delta2 "$b" "$a" tx_acks) - $(delta2 "$b" "$a" tx_probes)))
	log "$1: seg=$2, $DATA data packets for 400 messages of 4 KiB"
	echo 1 >"$SEG"
}
lseg lseg-on 1
check "seg=1: 3 packets per 4 KiB message after the answer ($DATA for 400; 1600 at the PMTU)" \
	test "$DATA" -le 1250
lseg lseg-off 0
check "seg=0: 4 packets per 4 KiB message, PMTU segments ($DATA for 400)" \
	test "$DATA" -ge 1600

verify_pair verify-pb 262144 28

# ibv_rc_pingpong's client exits once it has the server's last SEND: an
# ACK packet lost then would leave the server resending to a QP that is
# gone (t-44).  So netem drops 5 % of every MetaRoCE packet but ACK and
# NAK packets (opcode 0x10, 0x11: the u16 of version and opcode at IP
# offset 28), both ways: data, and the ACKs riding on it.
for side in 1 2; do
	on_exit "in_h$side tc qdisc del dev veth$side root 2>/dev/null"
	require "prio qdisc on veth$side" in_h$side tc qdisc replace \
		dev veth$side root handle 1: prio
	require "netem loss 5% on its third band" in_h$side tc qdisc add \
		dev veth$side parent 1:3 handle 30: netem loss 5%
	require "u32: ACK and NAK packets to the lossless band" \
		in_h$side tc filter add dev veth$side parent 1: protocol ip \
		prio 1 u32 match ip protocol 17 0xff match ip dport 4792 0xffff \
		match u16 0x0110 0xfffe at 28 flowid 1:1
	require "u32: the other MetaRoCE packets to the lossy band" \
		in_h$side tc filter add dev veth$side parent 1: protocol ip \
		prio 2 u32 match ip protocol 17 0xff match ip dport 4792 0xffff \
		flowid 1:3
done
port=$((port + 1))
b=$(snap)
run_pair "pingpong-loss5" "$port" 200 \
	taskset -c 0 ibv_rc_pingpong -d "$DEV_S" -g "$GID_S" -p "$port" -s 8 -n 500 -c -e -- \
	taskset -c 0 ibv_rc_pingpong -d "$DEV_C" -g "$GID_C" -p "$port" -s 8 -n 500 -c -e "$ADDR_S"
pair_ok "ibv_rc_pingpong 8 B x 500, buffers checked, 5 % loss, pb_ack"
a=$(snap)
check_eq "loss: no invalid data" "" \
	"$(grep -hi 'invalid data' "$SRV_OUT" "$CLI_OUT")"
# large segments resent through loss: each resend cut as its message was
# (MR-131), else the receiver fails the message (NAK INVALID_REQUEST)
# or places bytes at the wrong offset, which the buffer check sees
port=$((port + 1))
run_pair "pingpong-64k-loss5" "$port" 200 \
	ibv_rc_pingpong -d "$DEV_S" -g "$GID_S" -p "$port" -s 65536 -n 40 -c -- \
	ibv_rc_pingpong -d "$DEV_C" -g "$GID_C" -p "$port" -s 65536 -n 40 -c "$ADDR_S"
pair_ok "ibv_rc_pingpong 64 KiB x 40, buffers checked, 5 % loss, large segments"
c=$(snap)
q=$(delta2 "$a" "$c" tx_retx_pkts)
check "64 KiB through loss: large segments resent ($q)" test "$q" -gt 0
check_eq "64 KiB through loss: no invalid data" "" \
	"$(grep -hi 'invalid data' "$SRV_OUT" "$CLI_OUT")"
check_eq "64 KiB through loss: no INVALID_REQUEST NAK" 0 \
	$(($(ctr "$c" "$DEV_S.tx_naks_inv_req") + $(ctr "$c" "$DEV_C.tx_naks_inv_req")))
log "$(in_h2 tc -s qdisc show dev veth2 | tr '\n' ' ')"
in_h1 tc qdisc del dev veth1 root
in_h2 tc qdisc del dev veth2 root
r=$(delta2 "$b" "$a" tx_retx_pkts)
check "loss: packets resent ($r)" test "$r" -gt 0
pb=$(delta2 "$b" "$a" tx_acks_pb)
check "loss: piggybacked ACKs used ($pb of 1000 requests)" test "$pb" -gt 500
log "at 5 % loss: piggybacked $pb, stale (rx_drop_ack_range) $(delta2 "$b" "$a" rx_drop_ack_range), tail probes $(delta2 "$b" "$a" tlp_probes)"
check_eq "no packet dropped as malformed" 0 "$(malformed_drops)"

# pb_ack=2 with seg=0: nothing to ask
echo 2 >"$PB"
echo 0 >"$SEG"
port=$((port + 1))
b=$(snap)
run_pair "pingpong-always" "$port" 120 \
	taskset -c 0 ibv_rc_pingpong -d "$DEV_S" -g "$GID_S" -p "$port" -s 8 -n 500 -c -e -- \
	taskset -c 0 ibv_rc_pingpong -d "$DEV_C" -g "$GID_C" -p "$port" -s 8 -n 500 -c -e "$ADDR_S"
if pair_ok "ibv_rc_pingpong 8 B x 500 with pb_ack=2"; then
	a=$(snap)
	check_pb "pb_ack=2" 500 "$b" "$a"
	check_eq "pb_ack=2: no question asked" 0 \
		"$(delta2 "$b" "$a" tx_probes)"
fi
echo 1 >"$SEG"

echo 0 >"$PB"
port=$((port + 1))
b=$(snap)
run_pair "pingpong-off" "$port" 120 \
	taskset -c 0 ibv_rc_pingpong -d "$DEV_S" -g "$GID_S" -p "$port" -s 8 -n 500 -c -e -- \
	taskset -c 0 ibv_rc_pingpong -d "$DEV_C" -g "$GID_C" -p "$port" -s 8 -n 500 -c -e "$ADDR_S"
if pair_ok "ibv_rc_pingpong 8 B x 500 with pb_ack=0"; then
	a=$(snap)
	check_eq "pb_ack=0: no piggybacked ACK sent" 0 \
		"$(delta2 "$b" "$a" tx_acks_pb)"
fi
