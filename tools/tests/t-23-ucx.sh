#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 600
#
# UCX (Debian's ucx-utils) on mroce, a communication library nobody here
# wrote (issue 14): ucx_info lists the device's rc_verbs and ud_verbs
# transports, and ucx_perftest runs between h1 (server, mroce1) and h2
# (client, mroce2) with UCX_TLS naming one transport at a time:
#   rc_verbs  tag_bw 64 KiB (rendezvous: the receiver READs the data),
#             ucp_put_bw 64 KiB (RDMA WRITE), tag_lat 8 B; UCX's rc_verbs
#             takes its receives from a shared receive queue
#   ud_verbs  tag_bw 4 KiB and tag_lat 8 B: UD QPs and address handles
#             from userspace, UCX's own reliability on top
# rc_verbs needs an auxiliary transport for UCX's wireup, so its runs
# name ud_verbs too (UCX_TLS=rc_verbs,ud_verbs).
#
# UCX 1.13's ud_verbs checks the destination GID of every datagram
# (UCX_UD_VERBS_ETH_DGID_CHECK, on by default) and takes the length of
# that GID, IPv4 or IPv6, from the completion's sl field, where mlx5
# devices put the RoCE packet type (a mlx5 convention; the verbs carry no
# such field, rdma_rxe reports 0 as we do): with sl 0 it compares 16 bytes
# of an IPv4 packet's GRH and drops it.  Newer UCX reads the type from the
# GRH itself.  The runs here turn the check off, as with rxe.
#
# Each run must exit 0 on both sides and the client must print its
# "Final:" line; latency and bandwidth are logged as RESULT lines.
# MROCE_TEST_TRANSPORT=rxe runs the same against rdma_rxe.
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=SCRIPTDIR/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"

need_cmd ucx_info ucx_perftest timeout ss
setup_rdma_pair

# in the server's namespace (none with rxe)
on_server() {
	if [ -n "$SERVER_NS" ]; then
		ip netns exec "$SERVER_NS" "$@"
	else
		"$@"
	fi
}

# ucx_info -d: the transports UCX finds on the server's device
info=$(on_server env UCX_NET_DEVICES="$DEV_S:1" ucx_info -d 2>&1 || true)
printf '%s\n' "$info" | grep -E 'Transport:|Device:' | sed 's/^/# /'
for tl in rc_verbs ud_verbs; do
	check_match "ucx_info -d: transport $tl on $DEV_S:1" \
		"Transport: $tl" "$info"
done

port=13400

# ucx TLS TEST SIZE ITERS: one ucx_perftest run
ucx() {
	local tls=$1 test=$2 size=$3 iters=$4 what final
	what="ucx_perftest UCX_TLS=$tls -t $test -s $size -n $iters"
	port=$((port + 1))
	run_pair "ucx-${tls%%,*}-$test-$size" "$port" 180 \
		env UCX_TLS="$tls,self" UCX_NET_DEVICES="$DEV_S:1" \
			UCX_UD_VERBS_ETH_DGID_CHECK=n \
			ucx_perftest -p "$port" -- \
		env UCX_TLS="$tls,self" UCX_NET_DEVICES="$DEV_C:1" \
			UCX_UD_VERBS_ETH_DGID_CHECK=n \
			ucx_perftest "$ADDR_S" -p "$port" -t "$test" -s "$size" \
			-n "$iters"
	pair_ok "$what" || return 1
	final=$(grep -E '^Final:' "$CLI_OUT" | tail -1)
	check_match "$what: the client's Final line" '^Final:' "$final" ||
		return 1
	log "RESULT $what: $final"
}

ucx rc_verbs,ud_verbs tag_bw 65536 200
ucx rc_verbs,ud_verbs ucp_put_bw 65536 200
ucx rc_verbs,ud_verbs tag_lat 8 1000
ucx ud_verbs tag_bw 4096 200
ucx ud_verbs tag_lat 8 1000
