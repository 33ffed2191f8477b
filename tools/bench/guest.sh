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
#            mroce1 on veth1, mroce2 on veth2, `bench.py drive --mode single`;
#            then (path "jumbo") the same with both veth ends at MTU 9000 and
#            the devices re-created on them: their ports must report
#            active_mtu 4096, `bench.py drive --mode jumbo`; then (path
#            "loop") rxe0 and mroce0 on dummy0
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
JUMBO_MTU=9000 JUMBO_PMTU=4096	# mbench/common.py's

[ "${MROCE_IN_GUEST:-0}" = 1 ] || { echo "guest.sh: runs only in the bench guest" >&2; exit 2; }

say() { echo "bench-guest: $*"; }

load_modules() {
	local m
	for m in ib_core ib_uverbs udp_tunnel ip6_udp_tunnel; do
		modprobe "$m"
	done
	# --gso NETDEVS (run-bench.sh): those devices use the GSO provider;
	# --modparam K=V: more parameters, checked there (no blanks)
	# shellcheck disable=SC2086  # one word per parameter
	[ -d /sys/module/mroce ] ||
		insmod "$BIN/mroce.ko" ${MROCE_BENCH_GSO:+"gso=$MROCE_BENCH_GSO"} \
			${MROCE_BENCH_GRO:+gro=1} ${MROCE_BENCH_MODPARAMS:-}
}

record_env() {	# what the guest looked like, for the report
	{
		echo "role: $role"
		echo "kernel: $(uname -r)"
		echo "cpus: $(nproc)"
		echo "mroce srcversion: $(cat /sys/module/mroce/srcversion 2>/dev/null)"
		echo "mroce cc_algo (devices created now): $(cat /sys/module/mroce/parameters/cc_algo 2>/dev/null)"
		echo "mroce gso (netdevs whose devices use the GSO provider): $(cat /sys/module/mroce/parameters/gso 2>/dev/null)"
		echo "mroce gro (UDP GRO on its sockets): $(cat /sys/module/mroce/parameters/gro 2>/dev/null)"
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
	# Three paths in this guest, each only if MROCE_BENCH_PATHS names it:
	# "single" (netns h1/h2 over veth), "jumbo" (the same at MTU 9000) and
	# "loop" (one rxe0 and one mroce0 on dummy0 in the root netns, client
	# and server QPs on the same device).
	paths=,${MROCE_BENCH_PATHS:-single,jumbo,loop},
	load_modules
	rc=0
	if [[ $paths == *,single,* || $paths == *,jumbo,* ]]; then
		# shellcheck source=../guest/topo.sh
		. "$MROCE_TOP/tools/guest/topo.sh"
		topo_pair
		ip netns exec h1 rdma link add mroce1 type mroce netdev veth1
		ip netns exec h2 rdma link add mroce2 type mroce netdev veth2
		# --veth-gro (run-bench.sh): veth receives through NAPI and
		# GRO, which it does only with TSO off on the sending side
		if [ -n "${MROCE_BENCH_VETH_GRO:-}" ]; then
			ip netns exec h1 ethtool -K veth1 gro on tso off
			ip netns exec h2 ethtool -K veth2 gro on tso off
		fi
		record_env
	fi
	if [[ $paths == *,single,* ]]; then
		ip netns exec h1 ethtool -k veth1 2>/dev/null |
			grep -E '^(generic-segmentation|generic-receive|tcp-segmentation)' >>/results/guest-env.txt || true
		say "single: mroce1 on veth1 (h1, 192.0.2.1), mroce2 on veth2 (h2, 192.0.2.2)"
		"$PY" "$HERE/bench.py" drive --mode single --pingpong "$BIN/udp_pingpong" "$@" \
			${MROCE_BENCH_SINGLE_VERBS:+--verbs "$MROCE_BENCH_SINGLE_VERBS"} || rc=1
	fi
	if [[ $paths == *,jumbo,* ]]; then
		# The same veth pair at MTU $JUMBO_MTU: the devices go, the MTU
		# changes, the devices come back (created on a jumbo netdev, as on
		# a jumbo NIC).  A port at >= 4200 must offer path MTU 4096.
		mkdir -p /results/jumbo
		ip netns exec h1 rdma link delete mroce1
		ip netns exec h2 rdma link delete mroce2
		ip -n h1 link set veth1 mtu "$JUMBO_MTU"
		ip -n h2 link set veth2 mtu "$JUMBO_MTU"
		ip netns exec h1 rdma link add mroce1 type mroce netdev veth1
		ip netns exec h2 rdma link add mroce2 type mroce netdev veth2
		bad=
		for p in "h1 mroce1 veth1" "h2 mroce2 veth2"; do
			read -r ns dev nd <<<"$p"
			{
				echo "== $ns: ip link show $nd"
				ip -n "$ns" link show "$nd"
				echo "== $ns: rdma link show $dev/1"
				ip netns exec "$ns" rdma link show "$dev/1"
				echo "== $ns: ibv_devinfo -d $dev"
				ip netns exec "$ns" ibv_devinfo -d "$dev"
			} >>/results/jumbo/devinfo.txt 2>&1
			# (a new device's port may take a moment to come up)
			mtu=
			for _ in $(seq 50); do
				mtu=$(ip netns exec "$ns" ibv_devinfo -d "$dev" 2>/dev/null |
					sed -n 's/^[[:space:]]*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p')
				[ "$mtu" = "$JUMBO_PMTU" ] && break
				sleep 0.2
			done
			say "jumbo: $dev on $nd (MTU $(ip -n "$ns" -o link show "$nd" |
				sed -n 's/.* mtu \([0-9]*\).*/\1/p')): active_mtu ${mtu:-?}"
			[ "$mtu" = "$JUMBO_PMTU" ] || bad="$bad $dev:${mtu:-none}"
		done
		if [ -n "$bad" ]; then
			say "jumbo: FAILED: active_mtu not $JUMBO_PMTU on MTU $JUMBO_MTU:$bad (see jumbo/devinfo.txt); not measured"
			rc=1
		else
			say "jumbo: mroce1 on veth1 (h1, 192.0.2.1), mroce2 on veth2 (h2, 192.0.2.2), MTU $JUMBO_MTU"
			"$PY" "$HERE/bench.py" drive --mode jumbo --results /results/jumbo \
				--pingpong "$BIN/udp_pingpong" "$@" \
				${MROCE_BENCH_SINGLE_VERBS:+--verbs "$MROCE_BENCH_SINGLE_VERBS"} || rc=1
		fi
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
