#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# profile.sh - where mroce's CPU goes, for issue 13: perf profiles of the
# whole guest while perftest runs between netns h1 and h2 over veth.
#
#   make profile [PROFILE_SCENARIOS="write_bw_64k send_bw_64 write_lat_8"]
#
# Host side (no argument): boots the test guest (tools/guest/mroce-vm) and
# runs itself inside with --guest.  Guest side: one veth pair
# (tools/guest/topo.sh), mroce1 in h1 (server, CPU 0), mroce2 in h2
# (client, CPU 1); per scenario `perf record -a -g` (cpu-clock: under TCG
# there is no PMU) over perftest's measured window, then a flat profile
# (self time by symbol) and the same split by CPU, so sender (CPU 1) and
# receiver (CPU 0) read apart, and each CPU's user/system/softirq/idle
# split from /proc/stat over the same window.  Under TCG (no KVM) the
# cpu-clock samples land mostly in the idle loop: the timer interrupt is
# taken at the next translation-block boundary, so read the /proc/stat
# split first and the symbols only for where busy time goes.  Results:
# build/results/profile/NAME.txt (NAME the scenario, after "loop-" on the
# loopback path), the perftest output next to it.
#
# Scenarios:
#   write_bw_64k  ib_write_bw -s 65536 (bulk)
#   send_bw_64    ib_send_bw -s 64 (message rate)
#   write_lat_8   ib_write_lat -s 8 (latency)
#
# Environment: PROFILE_PATH ("veth", the default, or "loop": two QPs of
# mroce0 on dummy0 in the root netns, the bench's same-device loopback,
# server CPU 0, client CPU 1), PROFILE_CC (the module's cc_algo, default
# its own default),
# PROFILE_SECONDS (perftest -D, default 6), PROFILE_TOP
# (symbols shown, default 40), PROFILE_RPS=1 (veth: RPS steers each
# veth's receive to its own namespace's CPU, veth1 to CPU 0 and veth2 to
# CPU 1, so the data's receive runs on the server's CPU and the ACKs' on
# the client's), PROFILE_FUNCS (see below).
#
# PROFILE_FUNCS="f1 f2 ...": instead of perf, the function_graph tracer
# limited to these kernel functions (module functions by name), 0.3 s in
# the middle of the window, summed per CPU by ftrace-sum.py: calls, total
# and mean time of each, its traced callees included.  Unlike perf's
# samples under TCG this measures where the busy time goes; each traced
# call costs about a microsecond more, so trace a dozen functions, not a
# subsystem.  Example: PROFILE_FUNCS="mroce_req_do mroce_gso_seg
# __alloc_skb mroce_resp_rcv".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
TOP=$(cd "$HERE/../.." && pwd -P)
SCEN=${PROFILE_SCENARIOS:-write_bw_64k send_bw_64 write_lat_8}
SECS=${PROFILE_SECONDS:-6}
NTOP=${PROFILE_TOP:-40}
CC=${PROFILE_CC:-}
PPATH=${PROFILE_PATH:-veth}
RPS=${PROFILE_RPS:-}
FUNCS=${PROFILE_FUNCS:-}

if [ "${1:-}" != --guest ]; then
	[ -f "$TOP/drivers/infiniband/sw/mroce/mroce.ko" ] ||
		{ echo "profile.sh: build first (make)" >&2; exit 2; }
	mkdir -p "$TOP/build/results"
	exec "$TOP/tools/guest/mroce-vm" --env PROFILE_SCENARIOS="$SCEN" \
		--env PROFILE_SECONDS="$SECS" --env PROFILE_TOP="$NTOP" \
		--env PROFILE_CC="$CC" --env PROFILE_PATH="$PPATH" \
		--env PROFILE_RPS="$RPS" --env PROFILE_FUNCS="$FUNCS" \
		-- "$HERE/profile.sh" --guest
fi

[ "${MROCE_IN_GUEST:-0}" = 1 ] || { echo "profile.sh: --guest runs only in the test guest" >&2; exit 2; }
OUT=${MROCE_RESULTS:-/results}/profile
mkdir -p "$OUT"
export RDMAV_DRIVERS=$TOP/tools/libmroce/libmroce
say() { echo "profile: $*"; }

for m in ib_core ib_uverbs udp_tunnel ip6_udp_tunnel; do
	modprobe "$m"
done
insmod "$TOP/drivers/infiniband/sw/mroce/mroce.ko" ${CC:+"cc_algo=$CC"}
# shellcheck source=../guest/topo.sh
. "$TOP/tools/guest/topo.sh"
case "$PPATH" in
veth)
	topo_pair
	ip netns exec h1 rdma link add mroce1 type mroce netdev veth1
	ip netns exec h2 rdma link add mroce2 type mroce netdev veth2
	# server: netns, device, address; client the same
	S=(h1 mroce1 192.0.2.1) C=(h2 mroce2 192.0.2.2)
	if [ -n "$RPS" ]; then
		ip netns exec h1 sh -c 'echo 1 >/sys/class/net/veth1/queues/rx-0/rps_cpus'
		ip netns exec h2 sh -c 'echo 2 >/sys/class/net/veth2/queues/rx-0/rps_cpus'
	fi
	;;
loop)
	ip link add dummy0 type dummy
	ip link set dummy0 up
	ip addr add 203.0.113.1/24 dev dummy0
	rdma link add mroce0 type mroce netdev dummy0
	S=("" mroce0 203.0.113.1) C=("" mroce0 203.0.113.1)
	[ -z "$RPS" ] || say "PROFILE_RPS: veth only, ignored on the loopback"
	;;
*) say "unknown PROFILE_PATH $PPATH"; exit 2 ;;
esac
inns() {	# NS CMD...: CMD in netns NS, or here if NS is empty
	local ns=$1
	shift
	if [ -n "$ns" ]; then ip netns exec "$ns" "$@"; else "$@"; fi
}
sleep 0.5
# perf reads module symbols from /proc/kallsyms
echo 0 >/proc/sys/kernel/kptr_restrict
echo -1 >/proc/sys/kernel/perf_event_paranoid
TR=/sys/kernel/tracing
if [ -n "$FUNCS" ]; then
	[ -d "$TR/per_cpu" ] || mount -t tracefs nodev "$TR"
	: >"$TR/set_ftrace_filter"
	for f in $FUNCS; do
		echo "$f" >>"$TR/set_ftrace_filter" || say "cannot trace $f"
	done
	echo 0 >"$TR/tracing_on"
	echo function_graph >"$TR/current_tracer"
	echo 1 >"$TR/options/funcgraph-tail"
	echo 20000 >"$TR/buffer_size_kb"
fi

# The window: perf over SECS - 3 seconds, or 0.3 s of function_graph.
sample() {	# NAME
	if [ -z "$FUNCS" ]; then
		perf record -q -a -g -e cpu-clock -F 999 -o "$OUT/$1.data" \
			-- sleep $((SECS - 3)) >/dev/null 2>&1 || true
		return
	fi
	echo >"$TR/trace"
	sleep $(((SECS - 3) / 2))
	echo 1 >"$TR/tracing_on"
	sleep 0.3
	echo 0 >"$TR/tracing_on"
	for c in 0 1; do
		"$HERE/ftrace-sum.py" <"$TR/per_cpu/cpu$c/trace" >"$OUT/$1.ftrace$c"
	done
}

perf_report() {	# NAME: flat profiles of NAME.data
	echo "# self time by symbol, whole guest:"
	perf report -i "$OUT/$1.data" --stdio --no-children \
		--sort sym -g none --percent-limit 0.5 2>/dev/null |
		grep -v '^$' | head -n "$NTOP"
	for c in 0 1; do
		echo "# self time by symbol, CPU $c ($([ $c = 0 ] && echo server || echo client)):"
		perf report -i "$OUT/$1.data" --stdio --no-children \
			--cpu "$c" --sort sym -g none --percent-limit 1 \
			2>/dev/null | grep -v '^[#]' | grep -v '^$' |
			head -n "$NTOP"
	done
	echo "# self time by module (dso):"
	perf report -i "$OUT/$1.data" --stdio --no-children \
		--sort dso -g none 2>/dev/null | grep -v '^[#]' |
		grep -v '^$' | head -n 15
}

run() {	# NAME TOOL ARGS...: perftest server in h1, client in h2, profiled
	local name=$1 tool=$2 g1 g2 spid ppid
	shift 2
	g1=$(topo_gid4 "${S[1]}" "${S[2]}")
	g2=$(topo_gid4 "${C[1]}" "${C[2]}")
	if [ -z "$g1" ] || [ -z "$g2" ]; then
		say "no IPv4 GIDs"
		exit 1
	fi
	inns "${S[0]}" taskset -c 0 "$tool" -d "${S[1]}" -x "$g1" -F "$@" \
		>"$OUT/$name.server" 2>&1 &
	spid=$!
	topo_wait_listen "${S[0]}" 18515	# "": the root namespace
	inns "${C[0]}" taskset -c 1 "$tool" -d "${C[1]}" -x "$g2" -F "$@" \
		"${S[2]}" >"$OUT/$name.client" 2>&1 &
	ppid=$!
	sleep 1.5	# connection set up, warm-up margin
	grep '^cpu[0-9]' /proc/stat >"$OUT/$name.stat0"
	sample "$name"
	grep '^cpu[0-9]' /proc/stat >"$OUT/$name.stat1"
	wait "$ppid" || say "$name: client exit $?"
	wait "$spid" || say "$name: server exit $?"
	{
		echo "# $name: $tool $*, mroce (cc ${CC:-default}) over $PPATH${RPS:+ (RPS)}, server CPU 0 (${S[1]}), client CPU 1 (${C[1]})"
		echo "# perftest (client):"
		grep -E '^ *[0-9]' "$OUT/$name.client" | sed 's/^/#   /' || true
		echo "# CPU time in the window, /proc/stat (percent of each CPU):"
		paste "$OUT/$name.stat0" "$OUT/$name.stat1" | awk '{
			n = (NF - 2) / 2
			t = 0
			for (i = 2; i <= n + 1; i++) { d[i] = $(i + n + 1) - $i; t += d[i] }
			if (t <= 0) t = 1
			printf "#   %s user %.0f%% system %.0f%% softirq %.0f%% irq %.0f%% idle %.0f%%\n",
				$1, 100 * (d[2] + d[3]) / t, 100 * d[4] / t,
				100 * d[8] / t, 100 * d[7] / t, 100 * (d[5] + d[6]) / t
		}'
		if [ -n "$FUNCS" ]; then
			for c in 0 1; do
				echo "# function_graph, 0.3 s, CPU $c ($([ $c = 0 ] && echo server || echo client)):"
				cat "$OUT/$name.ftrace$c"
			done
		else
			perf_report "$name"
		fi
	} >"$OUT/$name.txt"
	rm -f "$OUT/$name.data.old"
	say "$name: $OUT/$name.txt"
}

for s in $SCEN; do
	n=$s
	[ "$PPATH" = veth ] || n=$PPATH-$s
	case "$s" in
	write_bw_64k) run "$n" ib_write_bw -s 65536 -D "$SECS" ;;
	send_bw_64) run "$n" ib_send_bw -s 64 -D "$SECS" ;;
	write_lat_8) run "$n" ib_write_lat -s 8 -D "$SECS" ;;
	*) say "unknown scenario $s"; exit 2 ;;
	esac
done
