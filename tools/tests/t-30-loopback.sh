#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# QPs whose peer is on the same device: a QP connected to itself (NCCL's
# GPU flush reads through one) and two QPs of one device, over IPv4 and
# over IPv6 GIDs; on the pair, WRITEs that only the responder's delayed
# ACK answers, a failed WQE that stops the send queue behind a 48 KiB and
# a 1 MiB WRITE, a responder destroyed (or moved to ERR) right after its
# receive completes, whose pending delayed ACK must still reach the
# requester, bursts of small WRITEs whose ACKs are coalesced, and
# paced WRITEs that the ACK cadence answers rather than the delayed-ACK
# timer (tools/tests/src/loopback_qp.c says what each section checks).
# Their packets skip the IP stack: tx_loopback_pkts counts all of them,
# and the namespace's UDP counters none.
. "$(dirname "$0")/lib.sh"

need_cmd rdma
export RDMAV_DRIVERS=$MROCE_TOP/tools/libmroce/libmroce
PROG=$MROCE_TOP/tools/tests/src/loopback_qp
[ -x "$PROG" ] || fail "$PROG not built (make tools)"

load_mroce
on_exit 'topo_clean; unload_mroce'
topo_pair
require "mroce1 on veth1" in_h1 rdma link add mroce1 type mroce netdev veth1
sleep 0.5
g4=$(gid_index mroce1 0000:0000:0000:0000:0000:ffff:c000:0201)
g6=$(gid_index mroce1 2001:0db8:0000:0000:0000:0000:0000:0001)
require "IPv4 GID" test -n "$g4"
require "IPv6 GID" test -n "$g6"
d0=$(counter mroce1 tx_acks_delayed)
l0=$(counter mroce1 tx_loopback_pkts)
t0=$(counter mroce1 tx_pkts)
udp_in() {	# UDP datagrams received in h1 (encapsulation sockets too)
	# shellcheck disable=SC2016 # awk's fields
	in_h1 awk '/^Udp:/ && $2 ~ /^[0-9]+$/ { print $2 }' /proc/net/snmp
}
u0=$(udp_in)
check "loopback QPs over the IPv4 GID" in_h1 timeout 60 "$PROG" mroce1 "$g4"
# packets to the device's own address skip the IP stack (as rxe's do):
# every one took the loopback, and UDP saw none of them
l1=$(counter mroce1 tx_loopback_pkts)
t1=$(counter mroce1 tx_pkts)
u1=$(udp_in)
log "IPv4 loopback: $((t1 - t0)) packets sent, $((l1 - l0)) by the loopback; UDP datagrams received $((u1 - u0))"
check "packets were sent ($((t1 - t0)))" test "$((t1 - t0))" -gt 100
check_eq "every packet took the device loopback" "$((t1 - t0))" "$((l1 - l0))"
check "the UDP stack carried none of them ($((u1 - u0)) datagrams)" \
	test "$((u1 - u0))" -lt 10
# the WRITEs between a READ and a fenced WRITE were answered by the
# delayed ACK (MR-36, ack_delay_max): their requester asked for none
d1=$(counter mroce1 tx_acks_delayed)
check "the delayed ACK answered WRITEs nothing followed (tx_acks_delayed $d0 -> $d1)" \
	test "$((d1 - d0))" -gt 0
check "loopback QPs over the IPv6 GID" in_h1 timeout 60 "$PROG" mroce1 "$g6"
# ACK coalescing: 4 lists of 48 one-packet WRITEs, each posted at once,
# get an ACK every ack_every packets (and the delayed ACK for a list's
# tail), not one per WRITE: a WRITE's last packet asks for an ACK only
# when nothing older is outstanding and nothing is queued behind it
a0=$(counter mroce1 tx_acks)
check "burst of 4 x 48 8-byte WRITEs" in_h1 timeout 60 "$PROG" mroce1 "$g4" burst
a1=$(counter mroce1 tx_acks)
check "ACKs coalesced: fewer than one per two WRITEs ($a0 -> $a1 for 192)" \
	test "$((a1 - a0))" -lt 96
# the delayed ACK's deadline follows the arrival rate (MR-36,
# mroce_delack.h): 161 8-byte WRITEs posted one by one about 40 us
# apart, unsignaled but every 32nd, ask for no ACK.  Eight of them take
# longer than ack_delay_min (100 us); a deadline that follows the pace
# lets the ACK cadence answer them: 2-3 delayed ACKs of 24, where the
# fixed 100 us deadline of before sent 12-21 of about 31
a0=$(counter mroce1 tx_acks)
d0=$(counter mroce1 tx_acks_delayed)
paced_out=$(in_h1 timeout 60 "$PROG" mroce1 "$g4" paced 40)
paced_rc=$?
echo "$paced_out"
check_eq "161 paced 8-byte WRITEs complete" 0 "$paced_rc"
a1=$(counter mroce1 tx_acks)
d1=$(counter mroce1 tx_acks_delayed)
acks=$((a1 - a0))
delayed=$((d1 - d0))
paced_total=$(printf '%s\n' "$paced_out" |
	sed -n 's/^# paced: 161 WRITEs in \([0-9]*\) us$/\1/p')
check "the paced run reported its duration ($paced_total us)" \
	test -n "$paced_total"
pace_us=$(( ${paced_total:-0} / 160 ))
log "RESULT paced WRITEs, one each $pace_us us: $acks ACKs, $delayed by the delayed-ACK timer"
# where a WRITE takes longer than 55 us (a debug kernel), eight of them
# outlast ack_delay_max (400 us) and the timer rightly answers
if [ "$pace_us" -gt 0 ] && [ "$pace_us" -le 55 ]; then
	check "the cadence answered the paced WRITEs, not the timer ($delayed delayed ACKs of $acks, at most a quarter)" \
		test "$((4 * delayed))" -le "$acks"
else
	log "paced WRITEs took $pace_us us each (over 55): the cadence check does not apply"
fi
stats=$(rdma statistic show link mroce1/1)
echo "$stats"
check_match "no packet was dropped as malformed" \
	'rx_drop_short 0 rx_drop_version 0 rx_drop_opcode 0 rx_drop_hdr_len 0 rx_drop_reserved 0 rx_drop_flags 0' \
	"$stats"
