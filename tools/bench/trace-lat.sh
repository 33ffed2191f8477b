#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# trace-lat.sh - where a perftest round trip spends its time, from ftrace
# in the test guest.  perf sees nothing under TCG (no PMU: cpu-clock
# samples land in the idle loop, see profile.sh); ftrace's function and
# function_graph tracers do, at about 1 us per traced call, so a trace
# ranks causes and the bench (run-bench.sh) measures their effect.
#
#   make trace-lat [TRACE_PATH=veth|loop] [TRACE_TOOL=ib_write_lat]
#                  [TRACE_SIZE=8] [TRACE_MODARGS="cc_algo=none"]
#
# Host side (no argument): boots the test guest (tools/guest/mroce-vm)
# and runs itself inside with --guest.  Guest side: the perftest TOOL
# with SIZE-byte messages (-D 10, twice) between
#   veth  netns h1 (server, CPU 0) and h2 (client, CPU 1), mroce1/mroce2
#         on the veth pair (tools/guest/topo.sh)
#   loop  two QPs of mroce0 on dummy0 in the root netns (server CPU 0,
#         client CPU 1): the device loopback
# and, 3 s into each of the two runs, 0.3 s of
#   function_graph  about 20 functions at different depths: durations
#                   (inclusive), and who programs the clock event device
#   function        every mroce function and a few kernel ones
#                   (system call, veth, IP and UDP receive, softirq,
#                   clock event programming): the order of events on each
#                   CPU and the gaps between them
# Results in build/results/trace-lat/: function.txt and graph.txt (the
# raw traces), perftest's output, and summary.txt:
#   - round trips: the interval between one CPU's consecutive system
#     calls of the tool (median, mean, how many over 300 us);
#   - the longest silences on a CPU: consecutive events more than 40 us
#     apart, by the pair of functions around them (count, mean);
#   - ksoftirqd's share of mroce events (work deferred out of the
#     caller's softirq);
#   - function_graph: median inclusive duration per function;
#   - clock event reprogrammings by caller (the three frames above).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
TOP=$(cd "$HERE/../.." && pwd -P)
TPATH=${TRACE_PATH:-veth}
TOOL=${TRACE_TOOL:-ib_write_lat}
SIZE=${TRACE_SIZE:-8}
MODARGS=${TRACE_MODARGS:-}

if [ "${1:-}" != --guest ]; then
	[ -f "$TOP/drivers/infiniband/sw/mroce/mroce.ko" ] ||
		{ echo "trace-lat.sh: build first (make)" >&2; exit 2; }
	case "$TPATH" in
	veth | loop) ;;
	*) echo "trace-lat.sh: TRACE_PATH is veth or loop" >&2; exit 2 ;;
	esac
	mkdir -p "$TOP/build/results"
	exec "$TOP/tools/guest/mroce-vm" --env TRACE_PATH="$TPATH" \
		--env TRACE_TOOL="$TOOL" --env TRACE_SIZE="$SIZE" \
		--env TRACE_MODARGS="$MODARGS" \
		-- "$HERE/trace-lat.sh" --guest
fi

[ "${MROCE_IN_GUEST:-0}" = 1 ] || { echo "trace-lat.sh: --guest runs only in the test guest" >&2; exit 2; }
OUT=${MROCE_RESULTS:-/results}/trace-lat
mkdir -p "$OUT"
# traces are written in the guest first (the results share is slow) and
# copied when the run is over
WORK=$(mktemp -d)
export RDMAV_DRIVERS=$TOP/tools/libmroce/libmroce
say() { echo "trace-lat: $*"; }

for m in ib_core ib_uverbs udp_tunnel ip6_udp_tunnel; do
	modprobe "$m"
done
# shellcheck disable=SC2086 # module parameters, split on purpose
insmod "$TOP/drivers/infiniband/sw/mroce/mroce.ko" $MODARGS

# shellcheck source=../guest/topo.sh
. "$TOP/tools/guest/topo.sh"
if [ "$TPATH" = veth ]; then
	srv_ns=h1
	topo_pair
	ip netns exec h1 rdma link add mroce1 type mroce netdev veth1
	ip netns exec h2 rdma link add mroce2 type mroce netdev veth2
	sleep 0.5
	srv=(ip netns exec h1 taskset -c 0 "$TOOL" -d mroce1)
	cli=(ip netns exec h2 taskset -c 1 "$TOOL" -d mroce2)
	g_s=$(topo_gid4 mroce1 192.0.2.1)
	g_c=$(topo_gid4 mroce2 192.0.2.2)
	addr=192.0.2.1
else
	srv_ns=
	ip link add dummy0 type dummy
	ip link set dummy0 up
	ip link set lo up
	ip addr add 203.0.113.1/24 dev dummy0
	rdma link add mroce0 type mroce netdev dummy0
	sleep 0.5
	srv=(taskset -c 0 "$TOOL" -d mroce0)
	cli=(taskset -c 1 "$TOOL" -d mroce0)
	g_s=$(topo_gid4 mroce0 203.0.113.1)
	g_c=$g_s
	addr=127.0.0.1
fi
if [ -z "$g_s" ] || [ -z "$g_c" ]; then
	say "no IPv4 GIDs"
	exit 1
fi

T=/sys/kernel/tracing
mountpoint -q "$T" || mount -t tracefs nodev "$T"
KFUNCS="__x64_sys_write __x64_sys_sendto net_rx_action veth_xmit
	__netif_receive_skb ip_rcv udp_queue_rcv_skb hrtimer_start_range_ns
	clockevents_program_event"
GFUNCS="__x64_sys_write ib_uverbs_post_send mroce_req_do mroce_sq_fetch
	mroce_paths_pick mroce_cc_tx mroce_req_payload mroce_pkt_emit
	mroce_soft_xmit mroce_timer_sent net_rx_action ip_rcv mroce_udp_rcv
	mroce_rcv_parse mroce_resp_rcv mroce_resp_ack_send mroce_comp_rcv
	mroce_loop_task hrtimer_start_range_ns hrtimer_try_to_cancel
	clockevents_program_event"

trace() {	# TRACER FILE FUNCS...: 0.3 s of TRACER on FUNCS, into $OUT/FILE
	local tracer=$1 file=$2 f
	shift 2
	echo 0 >"$T/tracing_on"
	echo nop >"$T/current_tracer"
	: >"$T/set_ftrace_filter"
	for f in "$@"; do
		echo "$f" >>"$T/set_ftrace_filter" 2>/dev/null ||
			say "no ftrace entry for $f"
	done
	echo 16384 >"$T/buffer_size_kb"
	echo "$tracer" >"$T/current_tracer"
	if [ "$tracer" = function_graph ]; then
		echo 1 >"$T/options/funcgraph-abstime"
		echo 1 >"$T/options/funcgraph-proc"
	fi
	echo >"$T/trace"
	echo 1 >"$T/tracing_on"
	sleep 0.3
	echo 0 >"$T/tracing_on"
	cat "$T/trace" >"$WORK/$file"
	echo nop >"$T/current_tracer"
}

# traced TRACER FILE FUNCS...: a perftest run of its own, traced 3 s
# after the client started (the next run starts only when this
# one's trace is written out, which takes seconds under TCG)
traced() {
	local spid cpid
	"${srv[@]}" -x "$g_s" -F -s "$SIZE" -D 10 >>"$OUT/server.txt" 2>&1 &
	spid=$!
	topo_wait_listen "$srv_ns" 18515
	"${cli[@]}" -x "$g_c" -F -s "$SIZE" -D 10 "$addr" >"$WORK/client" 2>&1 &
	cpid=$!
	# perftest's output is buffered to the end: a fixed wait, well past
	# the connection set-up and well before the end
	sleep 3
	kill -0 "$cpid" 2>/dev/null || say "$1: the client ended before the trace"
	trace "$@"
	wait "$cpid" || say "$1: client exit $?"
	wait "$spid" || say "$1: server exit $?"
	cat "$WORK/client" >>"$OUT/client.txt"
}

: >"$OUT/server.txt"
: >"$OUT/client.txt"
# shellcheck disable=SC2086 # lists of function names
traced function_graph graph.txt $GFUNCS
# shellcheck disable=SC2086
traced function function.txt $KFUNCS ":mod:mroce"
cp "$WORK/function.txt" "$WORK/graph.txt" "$OUT/"
rm -rf "$WORK"

{
	echo "# $TOOL -s $SIZE over $TPATH (${MODARGS:-default parameters}); perftest (client):"
	grep -E '^ *[0-9]' "$OUT/client.txt" | sed 's/^/#   /' || true
	python3 - "$OUT/function.txt" "$OUT/graph.txt" "$TOOL" <<'EOF'
import collections
import re
import statistics
import sys

fn_path, graph_path, tool = sys.argv[1:4]
task = tool[:7]
ev_re = re.compile(r'^\s*(\S+)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\S+) <-(\S+)')
ev = []
with open(fn_path) as f:
    for line in f:
        m = ev_re.match(line)
        if m:
            ev.append((float(m.group(4)) * 1e6, int(m.group(3)),
                       m.group(5), m.group(1)))
ev.sort()

print("## round trips (function tracer; traced times, about 1 us per call)")
last = {}
rtt = []
for t, cpu, fn, comm in ev:
    if fn == '__x64_sys_write' and comm.startswith(task):
        if cpu in last:
            rtt.append(t - last[cpu])
        last[cpu] = t
if rtt:
    print(f"  {len(rtt)} intervals between a CPU's consecutive write() calls:"
          f" median {statistics.median(rtt):.1f} us, mean {statistics.mean(rtt):.1f} us,"
          f" {sum(1 for x in rtt if x > 300)} over 300 us")
print("## silences over 40 us on a CPU, by the events around them")
prev = {}
gaps = collections.Counter()
gap_us = collections.Counter()
for t, cpu, fn, comm in ev:
    if cpu in prev:
        d = t - prev[cpu][0]
        if d > 40:
            k = (prev[cpu][1], fn, comm.split('/')[0])
            gaps[k] += 1
            gap_us[k] += d
    prev[cpu] = (t, fn)
for k, n in gaps.most_common(12):
    print(f"  {n:6d} x {gap_us[k] / n:8.1f} us  {k[0]} -> {k[1]} ({k[2]})")
mroce = [e for e in ev if not e[2].startswith(('__x64', 'net_', 'veth', 'ip_',
                                               'udp_', 'hrtimer', 'clockev'))]
soft = sum(1 for e in mroce if e[3].startswith('ksoftirqd'))
print(f"## ksoftirqd ran {soft} of {len(mroce)} mroce events")

g_re = re.compile(r'^\s*[\d.]+ \|\s+(\d+)\)\s+\S+\s+\|\s+[+!#*@$ ]*\s*([\d.]*)\s*(?:us)?\s*\|\s*(.*)$')
dur = collections.defaultdict(list)
ce = collections.Counter()
stack = collections.defaultdict(list)
with open(graph_path) as f:
    for line in f:
        m = g_re.match(line)
        if not m:
            continue
        cpu, d, body = int(m.group(1)), m.group(2), m.group(3).strip()
        st = stack[cpu]
        if body.endswith('{'):
            st.append(body[:-1].strip().split(' ')[0].rstrip('()'))
        elif body.startswith('}'):
            name = st.pop() if st else '?'
            if d:
                dur[name].append(float(d))
        elif body.endswith(';'):
            name = body[:-1].strip().split(' ')[0].rstrip('()')
            if d:
                dur[name].append(float(d))
            if name == 'clockevents_program_event':
                ce[' > '.join(st[-3:]) or '(interrupt)'] += 1
print("## function_graph: inclusive duration per call, median (calls)")
for name, v in sorted(dur.items(), key=lambda kv: -len(kv[1])):
    print(f"  {statistics.median(v):8.2f} us ({len(v):6d})  {name}")
print("## clock event reprogrammings by caller")
for k, n in ce.most_common(10):
    print(f"  {n:6d}  {k}")
EOF
} >"$OUT/summary.txt"
say "$OUT/summary.txt"
cat "$OUT/summary.txt"
