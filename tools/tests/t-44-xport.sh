#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 600
#
# The provider seam (mroce_xport.h, Documentation/offload.rst) has a second
# user: tools/xport-test/mroce_xtest.ko registers the offload provider
# "xtest" through the public API and emulates a NIC that segments
# (MROCE_XPORT_CAP_SEG; its wire is the soft provider's UDP socket).
#
#   bind      loaded with claim=veth, it takes mroce1 (veth1 in h1) and
#             mroce2 (veth2 in h2): the driver says "transport xtest" and
#             the provider's module is pinned once per device; a device on
#             a netdev it does not claim (sft0) gets the soft provider
#             ("udp") and does not pin it
#   data      mroce-verify SEND, WRITE and READ of 0 B .. 1 MiB (both
#             directions, every byte checked) and ibv_rc_pingpong 1 B and
#             64 KiB with --chk between the namespaces
#   loss      the same with netem loss 2% on veth2 (the client's side;
#             for the pingpong, netem drops 2 % of its data packets only):
#             packets are resent, the data is still right
#   counters  the provider's (/sys/module/mroce_xtest/parameters): xmits
#             > 0; chunks > 0 and segs > chunks (the requester hands
#             runs of a message's packets to xmit_seg as chunks), and
#             the devices' tx_seg_chunks count the same chunks; no chunk
#             malformed, no segment dropped; read-only
#   pinning   rmmod mroce_xtest fails while a device is bound to it and
#             succeeds after rdma link delete
#
# The test loads the provider itself (with its own claim), whatever
# MROCE_XPORT says.
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=SCRIPTDIR/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"

[ "$RDMA_TRANSPORT" = mroce ] || skip "the provider seam is mroce's"
need_cmd ibv_rc_pingpong tc dmesg timeout ss
V=$MROCE_TOP/tools/mroce-verify/mroce-verify
[ -x "$V" ] ||
	fail "$V not found: build it on the host first (make tools)"
[ -f "$MROCE_XTEST_KO" ] ||
	fail "$MROCE_XTEST_KO not found: build it on the host first (make)"

XP=/sys/module/mroce_xtest/parameters
xc() { cat "$XP/$1"; }
xtest_refs() { cat /sys/module/mroce_xtest/refcnt; }
klog_from() { dmesg | tail -n +$(($1 + 1)); }

MROCE_XPORT=
load_mroce
k0=$(dmesg | wc -l)
require "insmod mroce_xtest claim=veth" insmod "$MROCE_XTEST_KO" claim=veth
check_match "the provider registered" "mroce: offload provider xtest registered" \
	"$(klog_from "$k0")"
check_eq "no device, the module is not pinned" 0 "$(xtest_refs)"

# --- bind: veth1 and veth2 are claimed, sft0 is not ---------------------
setup_rdma_pair
klog=$(klog_from "$k0")
printf '%s\n' "$klog" | grep 'added on' | sed 's/^/# dmesg: /'
check_match "mroce1 on veth1 uses the provider xtest" \
	"mroce1: added on veth1 \(transport xtest," "$klog"
check_match "mroce2 on veth2 uses the provider xtest" \
	"mroce2: added on veth2 \(transport xtest," "$klog"
check_eq "each device pins the provider's module" 2 "$(xtest_refs)"

on_exit 'rdma link delete msoft0 2>/dev/null; ip link del sft0 2>/dev/null'
require "veth sft0/sft1 in the root namespace" \
	ip link add sft0 type veth peer name sft1
k1=$(dmesg | wc -l)
require "add msoft0 on sft0" rdma link add msoft0 type mroce netdev sft0
check_match "msoft0 on sft0 (not claimed) uses the soft provider udp" \
	"msoft0: added on sft0 \(transport udp," "$(klog_from "$k1")"
check_eq "the soft device does not pin the provider" 2 "$(xtest_refs)"
check "delete msoft0" rdma link delete msoft0
ip link del sft0

check_fail "the counters are read-only" sh -c "echo 0 >$XP/xmits" 2>/dev/null

# --- data ---------------------------------------------------------------
RDMA_PORT=18740

# A debug kernel (the debug lane scales timeouts) takes minutes for 1 MiB
# messages under KASAN; 256 KiB still makes full 16-segment chunks.
big=1M big_loss=256K
if [ "${MROCE_TEST_TIMEOUT_SCALE:-1}" -gt 1 ]; then
	big=256K big_loss=64K
fi

x0=$(xc xmits)
verify_pair data "$big" 4413
pingpong_pair "pingpong 1 B" 1
pingpong_pair "pingpong 64 KiB" 65536
check "xmits: the engine sent through the provider ($x0 -> $(xc xmits))" \
	test "$(xc xmits)" -gt "$x0"

# --- loss ---------------------------------------------------------------
r0=$(counter "$DEV_C" tx_retx_pkts)
on_exit 'in_h2 tc qdisc del dev veth2 root 2>/dev/null'
require "netem loss 2% on veth2" in_h2 tc qdisc replace dev veth2 root netem loss 2%
verify_pair loss2 "$big_loss" 4413
in_h2 tc qdisc del dev veth2 root
# ibv_rc_pingpong's client exits once it has the server's last SEND: if
# the client's ACK of it is lost, the server's resends find no QP and RC
# must report RETRY_EXC (as in t-40's tail scenario).  So here only data
# packets are dropped (2 %, by netem on h2's output), never the ACKs: a
# prio qdisc whose third band has the netem, and u32 filters that send
# MetaRoCE packets shorter than 256 bytes (IP total length; ACKs, NAKs) to
# the first band and the others (data) to the third.  tc, not nft: the
# debug lane's kernel has no netfilter.
on_exit 'in_h2 tc qdisc del dev veth2 root 2>/dev/null'
require "prio qdisc on veth2" in_h2 tc qdisc replace dev veth2 root handle 1: prio
require "netem loss 2% on its third band" in_h2 tc qdisc add dev veth2 \
	parent 1:3 handle 30: netem loss 2%
require "u32: short MetaRoCE packets (ACKs) to the lossless band" \
	in_h2 tc filter add dev veth2 parent 1: protocol ip prio 1 u32 \
	match ip protocol 17 0xff match ip dport 4792 0xffff \
	match u16 0 0xff00 at 2 flowid 1:1
require "u32: the other MetaRoCE packets (data) to the lossy band" \
	in_h2 tc filter add dev veth2 parent 1: protocol ip prio 2 u32 \
	match ip protocol 17 0xff match ip dport 4792 0xffff flowid 1:3
pingpong_pair "loss2: pingpong 64 KiB" 65536
log "$(in_h2 tc -s qdisc show dev veth2 | tr '\n' ' ')"
in_h2 tc qdisc del dev veth2 root
r1=$(counter "$DEV_C" tx_retx_pkts)
check "loss2: $DEV_C resent packets ($((r1 - r0)))" test "$((r1 - r0))" -gt 0

# --- counters -----------------------------------------------------------
for c in xmits chunks segs seg_drops chunk_drops; do
	log "RESULT xtest $c $(xc $c)"
done
check "xmits > 0 ($(xc xmits))" test "$(xc xmits)" -gt 0
# the requester's side of CAP_SEG: chunks of several packets
check "chunks > 0: the requester handed chunks to xmit_seg ($(xc chunks))" \
	test "$(xc chunks)" -gt 0
check "segs > chunks: chunks of several packets ($(xc segs) > $(xc chunks))" \
	test "$(xc segs)" -gt "$(xc chunks)"
check_eq "the devices' tx_seg_chunks count the provider's chunks" \
	"$(xc chunks)" \
	"$(( $(counter mroce1 tx_seg_chunks) + $(counter mroce2 tx_seg_chunks) ))"
check_eq "no malformed chunk" 0 "$(xc chunk_drops)"
check_eq "no segment dropped by the provider" 0 "$(xc seg_drops)"

# --- pinning ------------------------------------------------------------
check_fail "rmmod mroce_xtest fails while devices use it" rmmod mroce_xtest
check "the provider is still loaded" test -d /sys/module/mroce_xtest
check "delete mroce1" rdma link delete mroce1
check "delete mroce2" rdma link delete mroce2
for _ in $(seq 50); do
	[ "$(xtest_refs)" = 0 ] && break
	sleep 0.1
done
check_eq "the devices released the provider" 0 "$(xtest_refs)"
check "rmmod mroce_xtest succeeds after rdma link delete" rmmod mroce_xtest
check "mroce stays loaded" test -d /sys/module/mroce
