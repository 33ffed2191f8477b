#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 240
#
# Large segments on jumbo links (spec "Large segments", MR-127..132):
# beyond the largest verbs path MTU (4096), as far as both links take.
#
#   jumbo   both veth ends at MTU 9000 (active MTU 4096): a checked
#           64 KiB ibv_rc_pingpong at path MTU 4096 takes 9 packets a
#           message (segments of 8160 bytes: the peer's seg_max, 255
#           x 32, the most it can say, below the 8888 the link holds),
#           not 16; while an ib_write_bw runs, its QP shows "drv_seg
#           8160" and "drv_peer_seg_max 8160" (rdma resource -dd) and the client's
#           packets average more than 4096 bytes
#   mixed   the server's link at MTU 6000, the client's at 9000: both
#           ports still say 4096, so only the server's seg_max (184 x 32
#           = 5888) keeps the client from cutting 8888-byte segments
#           that the server's veth drops, every time they are resent.
#           The checked ping-pong passes in 12 packets a message and
#           the client's QP shows "drv_seg 5888"
#   seg=0   at MTU 9000 the path MTU again: 16 packets a message
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=SCRIPTDIR/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"

[ "$RDMA_TRANSPORT" = mroce ] || skip "large segments are mroce's"
need_cmd ibv_rc_pingpong ib_write_bw ibv_devinfo
setup_rdma_pair
SEG=/sys/module/mroce/parameters/seg
require "the module has seg" test -w "$SEG"
on_exit "echo 1 > $SEG 2>/dev/null"
N=30
# a driver attribute of "rdma resource show qp -dd" (in the QP owner's
# namespace), whole
W='(^|[[:space:]])drv_'
E='([[:space:]]|$)'
[ "${MROCE_TEST_TIMEOUT_SCALE:-1}" -gt 1 ] && N=10

# mtu SERVER CLIENT: the veth MTUs
mtu() {
	require "server link MTU $1" in_server ip link set veth1 mtu "$1"
	require "client link MTU $2" in_client ip link set veth2 mtu "$2"
}

# data: the data packets both sides sent, less resends (tx_pkts less
# ACK packets and PROBEs)
data_pkts() {
	local d s=0
	for d in "$DEV_S" "$DEV_C"; do
		s=$((s + $(counter "$d" tx_pkts) - $(counter "$d" tx_retx_pkts) -
		     $(counter "$d" tx_acks) - $(counter "$d" tx_probes)))
	done
	echo "$s"
}

# pp NAME PORT: N x 64 KiB each way at path MTU 4096, checked; DATA
pp() {
	local d0
	d0=$(data_pkts)
	run_pair "$1" "$2" 120 \
		ibv_rc_pingpong -d "$DEV_S" -g "$GID_S" -p "$2" -m 4096 -s 65536 -n $N -c -- \
		ibv_rc_pingpong -d "$DEV_C" -g "$GID_C" -p "$2" -m 4096 -s 65536 -n $N -c "$ADDR_S"
	pair_ok "$1: ibv_rc_pingpong 64 KiB x $N at path MTU 4096, buffers checked"
	DATA=$(($(data_pkts) - d0))
	log "$1: $DATA data packets for $((2 * N)) messages of 64 KiB"
}

# bw NAME PORT: an ib_write_bw of 64 KiB for 3 s; its client QP's driver
# attributes mid-run in RES, the client's bytes per packet in BPP
bw() {
	local srv cli i b0 p0
	in_server timeout 60 ib_write_bw -d "$DEV_S" -x "$GID_S" -F -p "$2" \
		-s 65536 -D 3 >"$RDMA_OUTDIR/$1.server" 2>&1 &
	srv=$!
	wait_listen "$2"
	b0=$(counter "$DEV_C" tx_bytes)
	p0=$(counter "$DEV_C" tx_pkts)
	in_client timeout 60 ib_write_bw -d "$DEV_C" -x "$GID_C" -F -p "$2" \
		-s 65536 -D 3 "$ADDR_S" >"$RDMA_OUTDIR/$1.client" 2>&1 &
	cli=$!
	for i in $(seq 50); do
		sleep 0.3
		RES=$(in_client rdma resource show qp link "$DEV_C/1" -dd 2>&1)
		printf '%s\n' "$RES" | grep -Eq "$W"'peer_seg_max [1-9]' && break
	done
	printf '%s\n' "$RES" >"$RDMA_OUTDIR/$1.res"
	wait $cli
	check "$1: ib_write_bw client ok" test $? = 0
	wait $srv
	BPP=$(( ($(counter "$DEV_C" tx_bytes) - b0) /
		($(counter "$DEV_C" tx_pkts) - p0 + 1) ))
	log "$1: $(printf '%s\n' "$RES" | grep -oE "$W"'(seg|peer_seg_max) [0-9]+' |
		tr -s '\n\t' '  ')" \
	    "client bytes per packet $BPP"
}

# --- jumbo
mtu 9000 9000
check_match "active MTU 4096 at MTU 9000" 'active_mtu:[[:space:]]+4096' \
	"$(ibv_devinfo -d "$DEV_C" 2>&1)"
pp jumbo 18800
check "jumbo: 9 packets a 64 KiB message, not 16 ($DATA for $((2 * N)))" \
	test "$DATA" -le $((2 * N * 9 + 16))
bw jumbo-bw 18801
check_match "jumbo: the QP cuts 8160-byte segments" "${W}seg 8160$E" "$RES"
check_match "jumbo: the peer said it takes 8160" "${W}peer_seg_max 8160$E" "$RES"
check "jumbo: the client's packets average more than 4096 bytes ($BPP)" \
	test "$BPP" -gt 4096

# --- mixed: the smaller link sets the size
mtu 6000 9000
pp mixed 18802
check "mixed: 12 packets a 64 KiB message ($DATA for $((2 * N)))" \
	test "$DATA" -le $((2 * N * 12 + 16)) -a "$DATA" -gt $((2 * N * 9 + 16))
bw mixed-bw 18803
check_match "mixed: the client cuts at the server's 5888" "${W}seg 5888$E" "$RES"
check_match "mixed: the server said it takes 5888" "${W}peer_seg_max 5888$E" "$RES"

# --- seg=0: the path MTU
mtu 9000 9000
echo 0 >"$SEG"
pp pmtu 18804
echo 1 >"$SEG"
check "seg=0: 16 packets a 64 KiB message ($DATA for $((2 * N)))" \
	test "$DATA" -ge $((2 * N * 16))
mtu 1500 1500
