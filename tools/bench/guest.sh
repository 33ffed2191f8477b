#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# guest.sh ROLE [bench.py drive options] - the guest side of make bench.
# run-bench.sh starts it through tools/guest/mroce-vm; it never runs on the
# host.
#
#   pair-a   guest A of the pair, 198.51.100.1 on eth0 (the qemu dgram link):
#            rdma_rxe device rxe0 and mroce device mroce0 on eth0 (root netns:
#            rxe only works in init_net), then `bench.py agent`, which starts
#            the servers the driver on guest B asks for
#   pair-b   guest B, 198.51.100.2: the same devices, then
#            `bench.py drive --mode pair` (clients; writes /results/runs.jsonl)
#   single   one guest: netns h1/h2 joined by veth (tools/guest/topo.sh),
#            mroce1 on veth1, mroce2 on veth2, `bench.py drive --mode single`
#
# MROCE_BENCH_BIN (set by run-bench.sh) holds the run's copies of mroce.ko,
# the libmroce provider and udp_pingpong.
set -eu

role=${1:?usage: guest.sh pair-a|pair-b|single [drive options]}
shift
HERE=$(cd "$(dirname "$0")" && pwd -P)
BIN=${MROCE_BENCH_BIN:?MROCE_BENCH_BIN is not set (run tools/bench/run-bench.sh)}
PY=/usr/bin/python3
export RDMAV_DRIVERS=$BIN/libmroce

[ "${MROCE_IN_GUEST:-0}" = 1 ] || { echo "guest.sh: runs only in the bench guest" >&2; exit 2; }

say() { echo "bench-guest: $*"; }

load_modules() {
	local m
	for m in ib_core ib_uverbs udp_tunnel ip6_udp_tunnel; do
		modprobe "$m"
	done
	[ -d /sys/module/mroce ] || insmod "$BIN/mroce.ko"
}

record_env() {	# what the guest looked like, for the report
	{
		echo "role: $role"
		echo "kernel: $(uname -r)"
		echo "cpus: $(nproc)"
		echo "mroce srcversion: $(cat /sys/module/mroce/srcversion 2>/dev/null)"
		echo "mroce cc_algo (devices created now): $(cat /sys/module/mroce/parameters/cc_algo 2>/dev/null)"
		echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
		rdma link show
		for d in "$@"; do
			echo "== ethtool -k $d"
			ethtool -k "$d" 2>/dev/null | grep -E '^(rx-checksumming|tx-checksumming|generic-segmentation|generic-receive|tcp-segmentation)'
		done
	} >/results/guest-env.txt 2>&1 || true
}

case "$role" in
pair-a | pair-b)
	n=1
	[ "$role" = pair-b ] && n=2
	modprobe virtio_net
	for _ in $(seq 100); do
		[ -e /sys/class/net/eth0 ] && break
		sleep 0.1
	done
	ip link set eth0 up
	ip addr add "198.51.100.$n/24" dev eth0
	load_modules
	modprobe rdma_rxe
	rdma link add rxe0 type rxe netdev eth0
	rdma link add mroce0 type mroce netdev eth0
	record_env eth0
	say "$role: rxe0 and mroce0 on eth0 198.51.100.$n"
	if [ "$role" = pair-a ]; then
		exec "$PY" "$HERE/bench.py" agent
	fi
	exec "$PY" "$HERE/bench.py" drive --mode pair --pingpong "$BIN/udp_pingpong" "$@"
	;;
single)
	# Two paths in this guest, each only if MROCE_BENCH_PATHS names it:
	# "single" (netns h1/h2 over veth) and "loop" (one rxe0 and one mroce0
	# on dummy0 in the root netns, client and server QPs on the same device).
	paths=,${MROCE_BENCH_PATHS:-single,loop},
	load_modules
	rc=0
	if [[ $paths == *,single,* ]]; then
		# shellcheck source=../guest/topo.sh
		. "$MROCE_TOP/tools/guest/topo.sh"
		topo_pair
		ip netns exec h1 rdma link add mroce1 type mroce netdev veth1
		ip netns exec h2 rdma link add mroce2 type mroce netdev veth2
		record_env
		ip netns exec h1 ethtool -k veth1 2>/dev/null |
			grep -E '^(generic-segmentation|generic-receive|tcp-segmentation)' >>/results/guest-env.txt || true
		say "single: mroce1 on veth1 (h1, 192.0.2.1), mroce2 on veth2 (h2, 192.0.2.2)"
		"$PY" "$HERE/bench.py" drive --mode single --pingpong "$BIN/udp_pingpong" "$@" \
			${MROCE_BENCH_SINGLE_VERBS:+--verbs "$MROCE_BENCH_SINGLE_VERBS"} || rc=1
	fi
	if [[ $paths == *,loop,* ]]; then
		ip link add dummy0 type dummy
		ip link set dummy0 up
		ip addr add 203.0.113.1/24 dev dummy0
		modprobe rdma_rxe
		rdma link add rxe0 type rxe netdev dummy0
		rdma link add mroce0 type mroce netdev dummy0
		mkdir -p /results/loop
		say "loop: rxe0 and mroce0 on dummy0 (203.0.113.1), QPs of one device talk to each other"
		"$PY" "$HERE/bench.py" drive --mode loop --results /results/loop \
			--pingpong "$BIN/udp_pingpong" "$@" || rc=1
	fi
	exit "$rc"
	;;
*)
	echo "guest.sh: unknown role $role" >&2
	exit 2
	;;
esac
