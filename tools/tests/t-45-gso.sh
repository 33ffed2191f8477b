#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 600
#
# The GSO provider (drivers/infiniband/sw/mroce/mroce_gso.c): chunks of a
# message leave as one UDP fraglist GSO sk_buff, whose packets each carry
# their own MetaRoCE, UDP and IPv4 headers.
#
#   bind      insmod mroce gso=veth: mroce1 (veth1 in h1) and mroce2 (veth2
#             in h2) say "transport gso"; a device on sft0 gets "udp",
#             and after gso is set to "sft" at run time, "gso"; with
#             gso=auto (the module's default) a veth gets "gso" whatever
#             its name and a dummy "udp"
#   whole     veth carries the GSO skb whole into the peer namespace,
#             whose mroce socket takes it whole and unchains it itself:
#             mroce-verify SEND, WRITE, READ of 0 B .. 1 MiB and
#             ibv_rc_pingpong 64 KiB --chk; tx_gso_skbs grows on both
#             devices, by fewer than the packets sent; the receivers took
#             every one of them whole (rx_gso_skbs, the same number) with
#             its packets (rx_gso_pkts); no packet is dropped as malformed
#   tapped    the same with a plain AF_PACKET socket on veth1 that reads
#             slowly, so the stack shares every chunk with it while mroce
#             unchains its own: the data checks, the socket read frames
#             longer than the MTU (whole chunks), every GSO skb was still
#             taken whole, none dropped as malformed
#   cut       veth2 with tx-gso-list, tx checksumming and scatter-gather
#             off: the stack cuts every GSO skb on transmit, and the
#             provider copies payloads (the stack would linearize page
#             fragments); the same data checks, and a capture on veth1
#             (dumpcap, tshark): every MetaRoCE packet has a correct UDP
#             checksum, its own IPv4 header (checksum right, total length
#             its own), and consecutive packets share a UDP source port in
#             runs (a chunk is one path) while the connection still uses
#             several (bursts over the paths); a ping-pong whose first
#             message is a chunk still asks for large segments and gets
#             them (packets longer than the PMTU's)
#   foreign   a plain UDP GSO buffer (UDP_SEGMENT, no tunnel type) sent to
#             h1's MetaRoCE port is still cut by the UDP layer: its
#             segments reach mroce one by one (rx_pkts, parse drops), none
#             is dropped as a GSO buffer
#   loss      netem loss 5% on veth2: whole chunks are lost, resent, and
#             the data is still right
#   counters  no packet dropped on transmit (tx_drop), no UDP checksum
#             error in h1 (UdpInCsumErrors)
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=SCRIPTDIR/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"

[ "$RDMA_TRANSPORT" = mroce ] || skip "the GSO provider is mroce's"
need_cmd ibv_rc_pingpong tc dmesg timeout ethtool dumpcap tshark nstat
V=$MROCE_TOP/tools/mroce-verify/mroce-verify
[ -x "$V" ] ||
	fail "$V not found: build it on the host first (make tools)"

klog_from() { dmesg | tail -n +$(($1 + 1)); }
gso_skbs() { echo $(( $(counter mroce1 tx_gso_skbs) + $(counter mroce2 tx_gso_skbs) )); }
rx_gso() { echo $(( $(counter mroce1 "rx_gso_$1") + $(counter mroce2 "rx_gso_$1") )); }
tx_pkts() { echo $(( $(counter mroce1 tx_pkts) + $(counter mroce2 tx_pkts) )); }
resent() { echo $(( $(counter mroce1 tx_retx_pkts) + $(counter mroce2 tx_retx_pkts) )); }

MROCE_XPORT=
unload_mroce
need_module ib_core ib_uverbs udp_tunnel ip6_udp_tunnel
require "insmod mroce without parameters" insmod "$MROCE_KO"
check_eq "the module's default gso is auto" auto \
	"$(cat /sys/module/mroce/parameters/gso)"
unload_mroce
k0=$(dmesg | wc -l)
load_mroce gso=veth

# --- bind ---------------------------------------------------------------
setup_rdma_pair
klog=$(klog_from "$k0")
printf '%s\n' "$klog" | grep 'added on' | sed 's/^/# dmesg: /'
check_match "mroce1 on veth1 uses the provider gso" \
	"mroce1: added on veth1 \(transport gso," "$klog"
check_match "mroce2 on veth2 uses the provider gso" \
	"mroce2: added on veth2 \(transport gso," "$klog"

on_exit 'rdma link delete msoft0 2>/dev/null; ip link del sft0 2>/dev/null'
require "veth sft0/sft1 in the root namespace" \
	ip link add sft0 type veth peer name sft1
k1=$(dmesg | wc -l)
require "add msoft0 on sft0" rdma link add msoft0 type mroce netdev sft0
check_match "msoft0 on sft0 (not named by gso) uses the soft provider udp" \
	"msoft0: added on sft0 \(transport udp," "$(klog_from "$k1")"
check "delete msoft0" rdma link delete msoft0
require "set gso=sft at run time" sh -c 'echo sft >/sys/module/mroce/parameters/gso'
k1=$(dmesg | wc -l)
require "add msoft0 on sft0 again" rdma link add msoft0 type mroce netdev sft0
check_match "now msoft0 on sft0 uses the provider gso" \
	"msoft0: added on sft0 \(transport gso," "$(klog_from "$k1")"
check "delete msoft0" rdma link delete msoft0
# auto, the module's default: veths, by their kind, whatever their name
require "set gso=auto at run time" sh -c 'echo auto >/sys/module/mroce/parameters/gso'
on_exit 'rdma link delete mdum0 2>/dev/null; ip link del dum0 2>/dev/null'
require "dummy dum0 in the root namespace" ip link add dum0 type dummy
ip link set dum0 up
k1=$(dmesg | wc -l)
require "add msoft0 on sft0 (a veth)" rdma link add msoft0 type mroce netdev sft0
require "add mdum0 on dum0 (not a veth)" rdma link add mdum0 type mroce netdev dum0
klog=$(klog_from "$k1")
check_match "auto: msoft0 on the veth sft0 uses the provider gso" \
	"msoft0: added on sft0 \(transport gso," "$klog"
check_match "auto: mdum0 on the dummy dum0 uses the soft provider udp" \
	"mdum0: added on dum0 \(transport udp," "$klog"
check "delete msoft0" rdma link delete msoft0
check "delete mdum0" rdma link delete mdum0
ip link del dum0
ip link del sft0
echo veth >/sys/module/mroce/parameters/gso

# --- data ---------------------------------------------------------------
RDMA_PORT=18840

# A debug kernel (the debug lane scales timeouts) is slow under KASAN.
big=1M small=64K
if [ "${MROCE_TEST_TIMEOUT_SCALE:-1}" -gt 1 ]; then
	big=256K small=32K
fi

# --- whole: veth takes fraglist GSO, the mroce socket takes it whole ----
log "veth2: $(in_h2 ethtool -k veth2 | grep -E 'tx-gso-list|tx-checksumming' | tr -s '\t\n' '  ')"
g0=$(gso_skbs) p0=$(tx_pkts) rs0=$(rx_gso skbs) rp0=$(rx_gso pkts)
verify_pair whole "$big" 4513
pingpong_pair "whole: pingpong 64 KiB" 65536
g1=$(gso_skbs) p1=$(tx_pkts) rs1=$(rx_gso skbs) rp1=$(rx_gso pkts)
log "RESULT whole: $((g1 - g0)) GSO skbs for $((p1 - p0)) packets; received whole: $((rs1 - rs0)) skbs, $((rp1 - rp0)) packets"
check "whole: the devices sent GSO skbs ($((g1 - g0)))" test $((g1 - g0)) -gt 0
check "whole: a GSO skb carries several packets ($((g1 - g0)) skbs < $((p1 - p0)) / 2 packets)" \
	test $(( (g1 - g0) * 2 )) -lt $((p1 - p0))
check_eq "whole: the receivers took every GSO skb whole (rx_gso_skbs)" \
	$((g1 - g0)) $((rs1 - rs0))
check "whole: with several packets each ($((rp1 - rp0)) packets > 2 x $((rs1 - rs0)) skbs)" \
	test $((rp1 - rp0)) -gt $(( (rs1 - rs0) * 2 ))
# each packet arrives as built: a wrong cut (sizes, headers) is dropped as
# malformed and resent
check_eq "whole: no packet dropped as malformed by the receivers" 0 "$(malformed_drops)"
log "RESULT whole: $(resent) packets resent on the clean link"

# --- tapped: the chunks are shared with a slow packet socket ---------------
# An AF_PACKET socket on veth1 holds a clone of every chunk while mroce
# unchains its own: the frag list is shared, and mroce must take the
# packets off it without touching the tap's copy (mroce_gro_unchain()).
mtu=$(in_h1 cat /sys/class/net/veth1/mtu)
g0=$(gso_skbs) rs0=$(rx_gso skbs)
tap_start h1 veth1 "$mtu"
verify_pair tapped "$small" 4517
pingpong_pair "tapped: pingpong 64 KiB" 65536
tap_stop tapped
g1=$(gso_skbs) rs1=$(rx_gso skbs)
check "tapped: the AF_PACKET socket read whole chunks too (${TAPBIG:-none} frames longer than $mtu)" \
	test "${TAPBIG:-0}" -gt 0
check_eq "tapped: the receivers still took every GSO skb whole (rx_gso_skbs)" \
	$((g1 - g0)) $((rs1 - rs0))
check_eq "tapped: no packet dropped as malformed by the receivers" 0 "$(malformed_drops)"

# --- cut: the stack segments on transmit; the wire checked --------------
on_exit 'in_h2 ethtool -K veth2 tx-gso-list on tx on sg on 2>/dev/null'
require "veth2: tx-gso-list, tx checksumming and scatter-gather off" \
	in_h2 ethtool -K veth2 tx-gso-list off tx off sg off
PCAP=$RDMA_OUTDIR/cut.pcap
dumpcap_start h1 veth1 'udp dst port 4792 and src host 192.0.2.2' "$PCAP" 0
g0=$(gso_skbs)
verify_pair cut "$small" 4513
g1=$(gso_skbs)
dumpcap_stop
check "cut: the devices sent GSO skbs ($((g1 - g0)))" test $((g1 - g0)) -gt 0
check_eq "cut: no packet dropped as malformed by the receivers" 0 "$(malformed_drops)"
TS=(tshark -n -r "$PCAP" -o udp.check_checksum:TRUE -o ip.check_checksum:TRUE)
"${TS[@]}" -T fields -e udp.srcport -e udp.checksum.status \
	-e ip.checksum.status -e ip.len -e frame.len \
	>"$RDMA_OUTDIR/cut.fields" 2>"$RDMA_OUTDIR/tshark.err"
n=$(grep -c . "$RDMA_OUTDIR/cut.fields")
log "RESULT cut: $n packets captured from h2 on veth1"
check "cut: packets captured ($n)" test "$n" -gt 100
# udp.checksum.status and ip.checksum.status: 0 bad, 1 good, 2 unverified
check_eq "cut: every UDP checksum is right" "" \
	"$(awk -F'\t' '$2 != 1' "$RDMA_OUTDIR/cut.fields" | head -n 3)"
check_eq "cut: every IPv4 header checksum is right" "" \
	"$(awk -F'\t' '$3 != 1' "$RDMA_OUTDIR/cut.fields" | head -n 3)"
check_eq "cut: every IPv4 total length is its own packet's" "" \
	"$(awk -F'\t' '$4 + 14 != $5' "$RDMA_OUTDIR/cut.fields" | head -n 3)"
ports=$(cut -f1 "$RDMA_OUTDIR/cut.fields" | sort -u | grep -c .)
runs=$(cut -f1 "$RDMA_OUTDIR/cut.fields" | uniq | grep -c .)
log "RESULT cut: $ports source ports, $runs runs of one port"
check "cut: the connection used several paths ($ports source ports)" \
	test "$ports" -ge 4
check "cut: packets leave in runs on one path ($runs runs < $n / 2 packets)" \
	test $((runs * 2)) -lt "$n"
# A connection whose first message is a chunk: the capability PROBE goes
# ahead of the chunk, the answer brings large segments (1376 bytes on a
# 1500-byte link) for the next messages.  Without it every packet would
# stay within the PMTU's 1024 bytes: IPv4 length 20 + 8 + 64 + 1024.
PCAP=$RDMA_OUTDIR/cut-pp.pcap
dumpcap_start h1 veth1 'udp dst port 4792 and src host 192.0.2.2' "$PCAP" 0
pingpong_pair "cut: pingpong 64 KiB" 65536
dumpcap_stop
maxlen=$(tshark -n -r "$PCAP" -T fields -e ip.len 2>/dev/null | sort -n | tail -n 1)
log "RESULT cut: largest packet of the ping-pong: IPv4 length ${maxlen:-?}"
check "cut: the ping-pong got large segments (IPv4 length ${maxlen:-?} > 1116)" \
	test "${maxlen:-0}" -gt 1116
in_h2 ethtool -K veth2 tx-gso-list on tx on sg on

# --- loss ---------------------------------------------------------------
r0=$(counter "$DEV_C" tx_retx_pkts)
on_exit 'in_h2 tc qdisc del dev veth2 root 2>/dev/null'
require "netem loss 5% on veth2" in_h2 tc qdisc replace dev veth2 root netem loss 5%
verify_pair loss5 "$big" 4513
nd=$(in_h2 tc -s qdisc show dev veth2 | grep -Eo 'dropped [0-9]+' | head -n 1 | cut -d' ' -f2)
in_h2 tc qdisc del dev veth2 root
r1=$(counter "$DEV_C" tx_retx_pkts)
log "RESULT loss5: netem dropped ${nd:-?} skbs, $DEV_C resent $((r1 - r0)) packets"
check "loss5: netem dropped skbs (${nd:-?})" test "${nd:-0}" -gt 0
check "loss5: $DEV_C resent packets ($((r1 - r0)))" test "$((r1 - r0))" -gt 0

# --- foreign: a plain UDP GSO buffer is still cut for mroce ------------
# The socket accepts UDP_L4 and FRAGLIST buffers whole only with a tunnel
# type (the GSO provider's); a UDP_SEGMENT sender's four 200-byte
# segments of junk (version 0) must reach mroce as four packets.
r0=$(counter mroce1 rx_pkts) d0=$(counter mroce1 rx_drop_gso)
v0=$(counter mroce1 rx_drop_version)
check "foreign: h2 sends one UDP_SEGMENT buffer of 4 x 200 B to 192.0.2.1:4792" \
	in_h2 python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_UDP, 103, 200)	# UDP_SEGMENT
s.sendto(bytes(800), ("192.0.2.1", 4792))'
sleep 0.5
r1=$(counter mroce1 rx_pkts) d1=$(counter mroce1 rx_drop_gso)
v1=$(counter mroce1 rx_drop_version)
log "RESULT foreign: mroce1 rx_pkts +$((r1 - r0)), rx_drop_version +$((v1 - v0)), rx_drop_gso +$((d1 - d0))"
check_eq "foreign: mroce1 got its four segments one by one" 4 $((r1 - r0))
check_eq "foreign: and dropped each as not MetaRoCE (rx_drop_version)" 4 $((v1 - v0))
check_eq "foreign: none as a GSO buffer" 0 $((d1 - d0))

# --- counters -----------------------------------------------------------
check_eq "mroce1: no packet dropped on transmit" 0 "$(counter mroce1 tx_drop)"
check_eq "mroce2: no packet dropped on transmit" 0 "$(counter mroce2 tx_drop)"
csumerr=$(in_h1 nstat -az UdpInCsumErrors | awk '$1 == "UdpInCsumErrors" { print $2 }')
check_eq "h1: no UDP checksum error" 0 "${csumerr:-0}"

check "delete mroce1" in_h1 rdma link delete mroce1
check "delete mroce2" in_h2 rdma link delete mroce2
