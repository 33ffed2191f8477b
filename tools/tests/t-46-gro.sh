#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 600
#
# GRO on the MetaRoCE port (drivers/infiniband/sw/mroce/mroce_gro.c): a
# NAPI netdev's MetaRoCE packets of one flow that arrive in one poll are
# chained into one skb, go up the IP stack once, and mroce's socket takes
# them off the chain as a batch.  The module is loaded with gro=1.
#
#   merged    veth1 and veth2 with GRO on and TSO off (veth then receives
#             through NAPI): mroce-verify SEND, WRITE, READ of 0 B .. 1 MiB and
#             ibv_rc_pingpong 64 KiB --chk with the data checked; a
#             capture on veth1, which sees what GRO passes up (and holds a
#             clone of each batch while mroce takes it apart), has
#             MetaRoCE datagrams longer than the link's MTU, and so has a
#             plain AF_PACKET socket that reads slowly (its queue holds
#             clones of the batches mroce takes apart); rx_gro_skbs
#             grew, each batch of several packets (rx_gro_pkts); the
#             receivers dropped none as malformed or as a foreign GSO skb
#   loss      the same with netem loss 5% on veth2: merged runs with holes,
#             data still right
#   control   with GRO off on veth1, no captured datagram is longer than
#             the MTU (the capture tells merged from not)
#   counters  no UDP checksum error in h1 (UdpInCsumErrors), no tx_drop
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=SCRIPTDIR/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"

[ "$RDMA_TRANSPORT" = mroce ] || skip "GRO on the MetaRoCE sockets is mroce's"
need_cmd ibv_rc_pingpong tc ethtool dumpcap tshark nstat
V=$MROCE_TOP/tools/mroce-verify/mroce-verify
[ -x "$V" ] ||
	fail "$V not found: build it on the host first (make tools)"

# The soft provider: its packets leave one by one (the GSO provider's
# chains cross a veth whole and are not merged again).
MROCE_XPORT=
unload_mroce
load_mroce gro=1
setup_rdma_pair
RDMA_PORT=18940

big=1M small=64K
if [ "${MROCE_TEST_TIMEOUT_SCALE:-1}" -gt 1 ]; then
	big=256K small=32K
fi
mtu=$(in_h1 cat /sys/class/net/veth1/mtu)

# capture_start NAME / capture_stop: MetaRoCE datagrams from h2 as h1's
# stack receives them (after GRO), into $RDMA_OUTDIR/NAME.fields: IP
# total length, UDP source port
capture_start() {
	PCAP=$RDMA_OUTDIR/$1.pcap FIELDS=$RDMA_OUTDIR/$1.fields
	dumpcap_start h1 veth1 'udp dst port 4792 and src host 192.0.2.2' \
		"$PCAP" 128
}
capture_stop() {
	dumpcap_stop
	tshark -n -r "$PCAP" -T fields -e ip.len -e udp.srcport \
		>"$FIELDS" 2>"$RDMA_OUTDIR/tshark.err"
	CAPTURED=$(grep -c . "$FIELDS")
	MERGED=$(awk -v m="$mtu" '$1 > m' "$FIELDS" | grep -c .)
	log "RESULT $1: $CAPTURED datagrams captured, $MERGED longer than the MTU ($mtu)"
}

csum0=$(in_h1 nstat -az UdpInCsumErrors | awk '$1 == "UdpInCsumErrors" { print $2 }')
txdrop0=$(( $(counter mroce1 tx_drop) + $(counter mroce2 tx_drop) ))

# --- merged ---------------------------------------------------------------
# veth hands a packet to its peer's NAPI (and so to GRO) only when the
# peer has GRO on and the sending side has TSO off (with TSO on it keeps
# NAPI for UDP sockets' own packets: veth_skb_is_eligible_for_gro())
on_exit 'in_h1 ethtool -K veth1 gro off tso on 2>/dev/null; in_h2 ethtool -K veth2 gro off tso on 2>/dev/null'
require "veth1: GRO on, TSO off" in_h1 ethtool -K veth1 gro on tso off
require "veth2: GRO on, TSO off" in_h2 ethtool -K veth2 gro on tso off
log "veth1: $(in_h1 ethtool -k veth1 | grep -E '^(generic-receive-offload|tcp-segmentation-offload)' | tr -s '\t\n' '  ')"
gro_skbs() { echo $(( $(counter mroce1 rx_gro_skbs) + $(counter mroce2 rx_gro_skbs) )); }
gro_pkts() { echo $(( $(counter mroce1 rx_gro_pkts) + $(counter mroce2 rx_gro_pkts) )); }
rx_pkts() { echo $(( $(counter mroce1 rx_pkts) + $(counter mroce2 rx_pkts) )); }
s0=$(gro_skbs) g0=$(gro_pkts) r0=$(rx_pkts)
capture_start merged
tap_start h1 veth1 "$mtu"
verify_pair merged "$big" 4613
pingpong_pair "merged: pingpong 64 KiB" 65536
tap_stop merged
capture_stop merged
s1=$(gro_skbs) g1=$(gro_pkts) r1=$(rx_pkts)
log "RESULT merged: $((s1 - s0)) GRO batches held $((g1 - g0)) of $((r1 - r0)) packets received"
check "merged: datagrams captured ($CAPTURED)" test "$CAPTURED" -gt 50
check "merged: GRO merged MetaRoCE packets ($MERGED datagrams longer than $mtu)" \
	test "$MERGED" -gt 0
check "merged: the devices took GRO batches apart (rx_gro_skbs +$((s1 - s0)))" \
	test $((s1 - s0)) -gt 0
check "merged: the AF_PACKET socket read batches too (${TAPBIG:-none})" \
	test "${TAPBIG:-0}" -gt 0
check "merged: a batch holds several packets ($((g1 - g0)) packets > 2 x $((s1 - s0)) batches)" \
	test $((g1 - g0)) -gt $(( 2 * (s1 - s0) ))
check_eq "merged: no packet dropped as malformed by the receivers" 0 "$(malformed_drops)"

# --- loss -----------------------------------------------------------------
on_exit 'in_h2 tc qdisc del dev veth2 root 2>/dev/null'
require "netem loss 5% on veth2" in_h2 tc qdisc add dev veth2 root netem loss 5%
verify_pair loss "$small" 4614
in_h2 tc qdisc del dev veth2 root
check_eq "loss: no packet dropped as malformed by the receivers" 0 "$(malformed_drops)"

# --- control: no GRO, nothing merged ----------------------------------------
require "veth1: GRO off" in_h1 ethtool -K veth1 gro off
s0=$(counter mroce1 rx_gro_skbs)
capture_start control
verify_pair control "$small" 4615
capture_stop control
check "control: datagrams captured ($CAPTURED)" test "$CAPTURED" -gt 50
check_eq "control: without GRO no datagram is longer than the MTU" 0 "$MERGED"
check_eq "control: mroce1 took no GRO batch" "$s0" "$(counter mroce1 rx_gro_skbs)"

# --- counters ---------------------------------------------------------------
csum1=$(in_h1 nstat -az UdpInCsumErrors | awk '$1 == "UdpInCsumErrors" { print $2 }')
check_eq "no UDP checksum error in h1 (UdpInCsumErrors)" "${csum0:-0}" "${csum1:-0}"
txdrop1=$(( $(counter mroce1 tx_drop) + $(counter mroce2 tx_drop) ))
check_eq "no packet dropped on transmit (tx_drop)" "$txdrop0" "$txdrop1"
