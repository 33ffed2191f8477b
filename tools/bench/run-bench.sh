#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# run-bench.sh - mroce vs rdma_rxe vs raw kernel TCP/UDP, side by side, in
# one run (`make bench`).  Everything runs in throw-away qemu guests
# (tools/guest/mroce-vm); nothing touches the host's network.
#
# Usage: tools/bench/run-bench.sh [OPTIONS]
#        make bench [BENCH_ARGS="OPTIONS"]
#
# Four paths, one after the other:
#   pair    two guests, one vCPU each, joined by a virtio-net NIC on a qemu
#           dgram netdev over AF_UNIX sockets (198.51.100.1/.2).  Both guests
#           have rdma_rxe (rxe0) and mroce (mroce0) on that NIC in the root
#           netns (rxe only works in init_net), so mroce, rxe, iperf3 TCP/UDP
#           and a UDP ping-pong all use the same link.  Guest A serves
#           (tools/bench/bench.py agent), guest B drives the clients.
#   loop    one guest, two vCPUs, rxe0 and mroce0 on dummy0 in the root
#           netns; client and server QPs on the same device (rxe short-cuts
#           its loopback, mroce goes through UDP on lo).  Only the target
#           scenarios: write_bw 64 KiB, send_bw 64 B, write/send_lat 8 B.
#           This is the one place both run in one guest with pinned CPUs.
#   single  the same guest, netns h1/h2 joined by veth: mroce and raw
#           TCP/UDP (rxe cannot run between netns).
#   jumbo   the same guest and scenarios as single, both veth ends at MTU
#           9000 and the mroce devices re-created on them: their ports must
#           report active_mtu 4096 (checked, else the path fails) and every
#           perftest run its path MTU (recorded; the report fails the run
#           when one is not 4096).  Adds about 2-3 min.
#   In the one guest the server is pinned to CPU 0 and the client to CPU 1
#   (taskset semantics) for every test.
# Scenarios (per path): ib_write_bw / ib_send_bw / ib_read_bw at 64 B, 4 KiB,
# 64 KiB (Gb/s and message rate; iperf3 TCP with that write size and UDP
# with min(size, 1472) B datagrams as raw references), ib_write_lat and
# ib_send_lat at 8 B (typical, average, p99, p99.9; raw: udp_pingpong),
# write_bw 64 KiB goodput under netem loss 0.1/1/5/10 % on the client's
# egress as a fraction of lossless (raw: iperf3 TCP), ib_write_lat 8 B p99
# and p99.9 under netem loss 1/5 % (the tail under loss), guest CPU seconds (kernel
# and total, both ends, from /proc/stat over the measured window) per GB.
# Each scenario repeats --repeat times, the transports interleaved (order
# rotates per repetition); cells show median (min-max).  Bandwidth runs use
# perftest's duration mode (-D, measured window D - 2*margin); Gb/s comes
# from whichever of perftest's MiB/s (2 decimals) or Mpps (6 decimals) is
# more precise; iperf3 prints kbit/s (-f k): TCP = sender over the window
# after -O, UDP = receiver.  Loss fractions divide by the median of all
# lossless write_bw 64 KiB runs (the bw rows' and the sweep's 0 % level,
# which has netem loss 0 % so the qdisc is the same).  For every run the
# host CPU used by processes other than this run's qemus is recorded (host
# /proc/stat minus the qemus' utime+stime, sampled on events the driver
# writes to the results share).
# Congestion (pair only, "bottleneck-*" runs): 3 concurrent ib_write_bw 64 KiB
# flows B -> A through one rate-limited, ECN-marking queue on B's egress (tbf
# 30mbit, codel ce_threshold 1ms ecn, limit 100 packets), for mroce with
# cc_algo=metaroce, mroce with cc_algo=none (param written, mroce0 re-created
# on both guests) and rxe: per-flow goodput, Jain index, settling times,
# backlog, drops, marks, retransmission counters.
#
# Options:
#   --smoke            CI smoke test (< 2 min): pair path only, write_bw 64 KiB
#                      for mroce, rxe, TCP and UDP, one repetition (no
#                      bottleneck); exits 0 only if the table has mroce, rxe
#                      and raw values
#   --repeat N         repetitions per scenario (default 3)
#   --loss-repeat N    repetitions of the loss sweep (default 1)
#   --duration S       perftest -D (default 3: a 1 s measured window); iperf3
#                      TCP runs D - 2*margin s after margin s of warm-up
#   --margin S         perftest -f, iperf3 -O (default 1)
#   --loss-duration S  perftest -D of the loss sweep (default 4: 2 s window)
#   --lat-iters N      latency iterations (default 500)
#   --sizes LIST       bw message sizes (default 64,4k,64k)
#   --verbs LIST       bw verbs (default write,send,read)
#   --single-verbs LIST  bw verbs on the single and jumbo paths (default write; the
#                      target there is write_bw vs TCP; "" = --verbs)
#   --lat-verbs LIST   latency verbs (default write,send; "" for none)
#   --loss LIST        loss rates in % (default 0.1,1,5,10; "" for none)
#   --loss-lat LIST    loss rates in % of the write_lat tail runs (default
#                      1,5; "" for none; repeated --loss-repeat times)
#   --paths LIST       pair,loop,single,jumbo (default all four)
#   --gso NETDEVS      load mroce with gso=NETDEVS (e.g. '*'): devices on those
#                      netdevs use the GSO provider (default: the module's
#                      gso=auto, the GSO provider on the veths of the single
#                      and jumbo paths, the soft provider on the others;
#                      --modparam gso= for the soft provider everywhere)
#   --gro              load mroce with gro=1: its sockets merge MetaRoCE
#                      packets in GRO (default: gro=0, the module's default)
#   --modparam K=V     load mroce with module parameter K=V too (repeatable;
#                      e.g. qdelay_target_us=500); recorded in meta.json
#   --veth-gro         GRO on and TSO off on the veth pair of the single and
#                      jumbo paths (veth receives through NAPI only so); TCP
#                      there is then segmented before veth and merged after
#   --only REGEX       only runs whose name matches (e.g. 'write_bw-65536',
#                      'bottleneck' for the congestion scenario alone)
#   --bottleneck-repeat N  repetitions of the congestion scenario (default 1;
#                      0: skip it)
#   --bottleneck-duration S  its measured window, from the last flow's start
#                      (default 20)
#   --bottleneck-rate RATE   tbf rate (default 30mbit)
#   --bottleneck-mark THR    a delay (1ms, 500us): codel ce_threshold THR ecn;
#                      a size (30kb): red ecn from THR to 2*THR (default 1ms)
#   --bottleneck-limit N     queue limit in packets (default 100)
#   --bottleneck-cc LIST     mroce cc_algo variants (default metaroce,none)
#   --out DIR          results folder (default build/bench/<timestamp>)
#   --timeout SEC      per-guest timeout (default 1500)
#   --guest-loglevel N kernel messages below level N on the guest consoles
#                      (default 2: critical ones; on guest A of the pair 4:
#                      errors too, such as a hung task or an RCU stall);
#                      5 adds warnings
#   --nice N           run every test process at nice N (default 0); e.g. 19
#                      lets ksoftirqd preempt busy-pollers at once instead of
#                      at the next tick
#   --no-charts        skip gnuplot
#   -h, --help         this text
# BENCH_ARGS in the environment is prepended to the options (make bench
# BENCH_ARGS="--repeat 1").
#
# Needs: the built tree (make all: mroce.ko, tools/libmroce), qemu, perftest,
# iperf3, rdma-core, iproute2, python3, cc, gnuplot (charts only).
#
# Output (in the results folder): summary.md (the table, also printed),
# summary.json (rows, every run, targets, metadata), charts/*.png,
# meta.json, hostmon.jsonl, pair-a/ pair-b/ single/ single/jumbo/ single/loop/ (the guests' /results:
# runs.jsonl, plan.json, guest-env.txt, stats-*.txt, dmesg.log), *.console (guest
# consoles), bin/ (the mroce.ko and provider copies that were measured).
# A pair run that hangs guest A (its agent stops answering) is recorded as
# failed; both guests are booted again and the plan goes on after it, up
# to PAIR_BOOTS (default 3) boots in all.
# build/bench/latest points at the newest folder.
#
# Exit status: 0 when the table is filled (pair: mroce, rxe and a raw value
# in one row, or, when only the bottleneck ran, goodput for each of its
# variants; single only: mroce and raw; jumbo: also path MTU 4096 on both
# ports and in every mroce run), 1 otherwise, 2 on bad usage.
set -euo pipefail

ME=run-bench
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
TOP=$(cd "$HERE/../.." && pwd -P)
VM=$TOP/tools/guest/mroce-vm
PY=/usr/bin/python3

die() { echo "$ME: $*" >&2; exit 2; }
say() { echo "$ME: $*"; }
usage() { sed -n '4,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

SMOKE=0 REPEAT=3 LOSS_REPEAT=1 DURATION=3 MARGIN=1 LAT_ITERS=500 NICE=0
LOSS_DURATION=4 SINGLE_VERBS=write
SIZES=64,4k,64k VERBS=write,send,read LAT_VERBS=write,send LOSS=0.1,1,5,10 LOSS_LAT=1,5
PATHS=pair,loop,single,jumbo ONLY='' OUT='' TIMEOUT=1500 CHARTS=1
GUEST_LOGLEVEL=
BN_REPEAT=1 BN_DURATION=20 BN_RATE=30mbit BN_MARK=1ms BN_LIMIT=100 BN_CC=metaroce,none

# shellcheck disable=SC2086  # BENCH_ARGS is a word list on purpose
set -- ${BENCH_ARGS:-} "$@"
need() { [ $# -ge 2 ] || die "option $1 needs an argument"; }
while [ $# -gt 0 ]; do
	case "$1" in
	--smoke) SMOKE=1; shift ;;
	--repeat) need "$@"; REPEAT=$2; shift 2 ;;
	--loss-repeat) need "$@"; LOSS_REPEAT=$2; shift 2 ;;
	--duration) need "$@"; DURATION=$2; shift 2 ;;
	--margin) need "$@"; MARGIN=$2; shift 2 ;;
	--lat-iters) need "$@"; LAT_ITERS=$2; shift 2 ;;
	--loss-duration) need "$@"; LOSS_DURATION=$2; shift 2 ;;
	--single-verbs) need "$@"; SINGLE_VERBS=$2; shift 2 ;;
	--sizes) need "$@"; SIZES=$2; shift 2 ;;
	--verbs) need "$@"; VERBS=$2; shift 2 ;;
	--lat-verbs) need "$@"; LAT_VERBS=$2; shift 2 ;;
	--loss) need "$@"; LOSS=$2; shift 2 ;;
	--loss-lat) need "$@"; LOSS_LAT=$2; shift 2 ;;
	--paths) need "$@"; PATHS=$2; shift 2 ;;
	--only) need "$@"; ONLY=$2; shift 2 ;;
	--gso) need "$@"; MROCE_BENCH_GSO=$2; shift 2 ;;
	--gro) MROCE_BENCH_GRO=1; shift ;;
	--modparam) need "$@"
		[[ $2 =~ ^[a-z][a-z0-9_]*=[A-Za-z0-9_.,:*-]*$ ]] ||
			die "--modparam wants NAME=VALUE, got '$2'"
		MROCE_BENCH_MODPARAMS=${MROCE_BENCH_MODPARAMS:+$MROCE_BENCH_MODPARAMS }$2
		shift 2 ;;
	--veth-gro) MROCE_BENCH_VETH_GRO=1; shift ;;
	--out) need "$@"; OUT=$2; shift 2 ;;
	--timeout) need "$@"; TIMEOUT=$2; shift 2 ;;
	--nice) need "$@"; NICE=$2; shift 2 ;;
	--guest-loglevel) need "$@"; GUEST_LOGLEVEL=$2; shift 2 ;;
	--bottleneck-repeat) need "$@"; BN_REPEAT=$2; shift 2 ;;
	--bottleneck-duration) need "$@"; BN_DURATION=$2; shift 2 ;;
	--bottleneck-rate) need "$@"; BN_RATE=$2; shift 2 ;;
	--bottleneck-mark) need "$@"; BN_MARK=$2; shift 2 ;;
	--bottleneck-limit) need "$@"; BN_LIMIT=$2; shift 2 ;;
	--bottleneck-cc) need "$@"; BN_CC=$2; shift 2 ;;
	--no-charts) CHARTS=0; shift ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
done
if [ "$SMOKE" = 1 ]; then
	REPEAT=1 LOSS_REPEAT=1 DURATION=3 MARGIN=1 SIZES=64k VERBS=write LAT_VERBS=''
	LOSS='' LOSS_LAT='' PATHS=pair TIMEOUT=240 BN_REPEAT=0
fi
for v in REPEAT LOSS_REPEAT DURATION LOSS_DURATION LAT_ITERS TIMEOUT; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "--${v,,} wants a positive number"
done
[[ $NICE =~ ^-?[0-9]+$ ]] || die "--nice wants a number"
VMOPTS=()
if [ -n "$GUEST_LOGLEVEL" ]; then
	[[ $GUEST_LOGLEVEL =~ ^[0-8]$ ]] || die "--guest-loglevel wants 0..8"
	VMOPTS=(--append "loglevel=$GUEST_LOGLEVEL")
fi
[[ $BN_REPEAT =~ ^[0-9]+$ ]] || die "--bottleneck-repeat wants a number (0: none)"
[[ $BN_DURATION =~ ^[1-9][0-9]*$ && $BN_LIMIT =~ ^[1-9][0-9]*$ ]] ||
	die "--bottleneck-duration and --bottleneck-limit want positive numbers"
[[ ${BN_RATE,,} =~ ^[1-9][0-9]*[kmg]?bit$ ]] || die "--bottleneck-rate wants a tc rate (30mbit)"
[[ ${BN_MARK,,} =~ ^[0-9]+(us|ms|b|kb)$ ]] || die "--bottleneck-mark wants 1ms, 500us or 30kb"
[[ $BN_CC =~ ^[a-z0-9_]+(,[a-z0-9_]+)*$ ]] || die "--bottleneck-cc wants a list like metaroce,none"
if ! [[ $MARGIN =~ ^[0-9]+$ ]] || [ $((DURATION - 2 * MARGIN)) -lt 1 ]; then
	die "--duration must exceed 2 * --margin"
fi
[[ ,$PATHS, =~ ,(pair|single|loop|jumbo), ]] || die "--paths wants pair, loop, single and/or jumbo"
for p in ${PATHS//,/ }; do
	[[ $p =~ ^(pair|single|loop|jumbo)$ ]] || die "--paths: unknown path $p"
done
export MROCE_BENCH_PATHS=$PATHS MROCE_BENCH_SINGLE_VERBS=$SINGLE_VERBS
export MROCE_BENCH_GSO=${MROCE_BENCH_GSO:-}
export MROCE_BENCH_GRO=${MROCE_BENCH_GRO:-}
export MROCE_BENCH_MODPARAMS=${MROCE_BENCH_MODPARAMS:-}
export MROCE_BENCH_VETH_GRO=${MROCE_BENCH_VETH_GRO:-}

# ------------------------------------------------------------- the tree
KO=$TOP/drivers/infiniband/sw/mroce/mroce.ko
PROV=
for f in "$TOP"/tools/libmroce/libmroce-rdmav*.so; do [ -f "$f" ] && PROV=$f; done
[ -f "$KO" ] || die "$KO not found: run make first (make bench does)"
[ -n "$PROV" ] || die "tools/libmroce/libmroce-rdmav*.so not found: run make first"
for c in qemu-system-x86_64 ib_write_bw iperf3 cc "$PY"; do
	command -v "$c" >/dev/null || die "$c not found (see tools/packages.txt)"
done

OUT=${OUT:-$TOP/build/bench/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT/bin"
OUT=$(cd "$OUT" && pwd -P)
case "$OUT/" in "$TOP"/*) ;; *) die "--out must be inside $TOP (the guests see only the project tree)" ;; esac
START=$(date +%s)

# Copies of what is measured: others may rebuild the tree meanwhile.
cp "$KO" "$OUT/bin/mroce.ko"
cp "$PROV" "$OUT/bin/libmroce-${PROV##*/libmroce-}"
cc -O2 -Wall -o "$OUT/bin/udp_pingpong" "$HERE/udp_pingpong.c"
export MROCE_BENCH_BIN=$OUT/bin

# ------------------------------------------------------------- metadata
commit=$(git -C "$TOP" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
modcommit=$(git -C "$TOP" log -1 --format=%h -- drivers uapi tools/libmroce Kbuild 2>/dev/null || true)
dirty=$(git -C "$TOP" status --porcelain -- drivers uapi tools/libmroce Kbuild 2>/dev/null |
	awk '{ print $2 }' | paste -sd' ' -)
kver=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"/\1/p' "$("$TOP/tools/kdir.sh")/include/generated/utsrelease.h" 2>/dev/null || true)
qemuv=$(qemu-system-x86_64 --version | head -n 1)
kosha=$(sha256sum <"$OUT/bin/mroce.ko" | cut -d' ' -f1)
srcv=$(modinfo -F srcversion "$OUT/bin/mroce.ko" 2>/dev/null || true)
COMMIT=$commit MODCOMMIT=$modcommit DIRTY=$dirty KVER=$kver META=$OUT/meta.json QEMUV=$qemuv KOSHA=$kosha SRCV=$srcv \
PARAMS="$REPEAT $LOSS_REPEAT $DURATION $MARGIN $LAT_ITERS $SIZES $VERBS ${LAT_VERBS:-none} ${LOSS:-none} $PATHS $SMOKE $NICE $LOSS_DURATION ${SINGLE_VERBS:-none} $BN_REPEAT $BN_DURATION $BN_RATE $BN_MARK $BN_LIMIT $BN_CC ${LOSS_LAT:-none}" \
"$PY" - <<'EOF'
import json, os, time
e = os.environ
p = e["PARAMS"].split()
meta = {
    "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
    "commit": e["COMMIT"], "module_commit": e["MODCOMMIT"], "dirty": e["DIRTY"],
    "ko_sha256": e["KOSHA"],
    "ko_srcversion": e["SRCV"], "guest_kernel": e["KVER"], "qemu": e["QEMUV"],
    "gso": e.get("MROCE_BENCH_GSO", ""),
    "gro": bool(e.get("MROCE_BENCH_GRO", "")),
    "modparams": e.get("MROCE_BENCH_MODPARAMS", "").split(),
    "veth_gro": bool(e.get("MROCE_BENCH_VETH_GRO", "")),
    "host_cpus": os.cpu_count(),
    "host_cpu_model": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                            if l.startswith("model name")), "?"),
    "params": {"repeat": int(p[0]), "loss_repeat": int(p[1]), "duration": int(p[2]),
               "margin": int(p[3]), "lat_iters": int(p[4]), "sizes": p[5], "verbs": p[6],
               "lat_verbs": p[7], "loss": p[8], "paths": p[9], "smoke": p[10] == "1",
               "nice": int(p[11]), "loss_duration": int(p[12]),
               "single_verbs": "" if p[13] == "none" else p[13],
               "loss_size": 65536, "udp_max": 1472,
               "bottleneck": {"repeat": int(p[14]), "duration": int(p[15]), "rate": p[16],
                              "mark": p[17], "limit": int(p[18]), "cc": p[19],
                              "flows": 3, "size": 65536},
               "loss_lat": "" if p[20] == "none" else p[20]},
}
json.dump(meta, open(e["META"], "w"), indent=1)
EOF
ln -sfn "$OUT" "$TOP/build/bench/latest" 2>/dev/null || true
say "results in $OUT (module commit $commit${dirty:+, uncommitted: $dirty})"

DRIVE=(--repeat "$REPEAT" --loss-repeat "$LOSS_REPEAT" --duration "$DURATION"
	--margin "$MARGIN" --lat-iters "$LAT_ITERS" --sizes "$SIZES" --verbs "$VERBS"
	--lat-verbs "$LAT_VERBS" --loss "$LOSS" --loss-lat "$LOSS_LAT" --nice "$NICE" --loss-duration "$LOSS_DURATION"
	--bottleneck-repeat "$BN_REPEAT" --bottleneck-duration "$BN_DURATION"
	--bottleneck-rate "$BN_RATE" --bottleneck-mark "$BN_MARK" --bottleneck-limit "$BN_LIMIT"
	--bottleneck-cc "$BN_CC")
[ -n "$ONLY" ] && DRIVE+=(--only "$ONLY")

# ------------------------------------------------------------- host monitor
SOCKDIR=
HMPID=
APID=
# shellcheck disable=SC2317  # invoked by trap
cleanup() {
	set +e
	touch "$OUT/.stop"
	[ -n "$APID" ] && kill -TERM "$APID" 2>/dev/null
	[ -n "$HMPID" ] && { kill -TERM "$HMPID" 2>/dev/null; wait "$HMPID" 2>/dev/null; }
	[ -n "$SOCKDIR" ] && rm -rf "$SOCKDIR"
	rm -f "$OUT/.stop"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$OUT/pair-a" "$OUT/pair-b" "$OUT/single"
rm -f "$OUT/.stop"
"$PY" "$HERE/bench.py" hostmon --out "$OUT/hostmon.jsonl" --tag "$OUT" \
	--stop-file "$OUT/.stop" "$OUT/pair-b/ev" "$OUT/single/ev" "$OUT/single/jumbo/ev" \
	"$OUT/single/loop/ev" &
HMPID=$!

RC=0
# ------------------------------------------------------------- pair
if [[ ,$PATHS, == *,pair,* ]]; then
	# Guest A's console shows kernel errors (a hung task, an RCU stall, an
	# oops), so that a run that hangs A leaves its cause in pair-a.console.
	AOPTS=("${VMOPTS[@]}")
	[ -n "$GUEST_LOGLEVEL" ] || AOPTS=(--append "loglevel=4")
	# BENCH_AGENT_STALL=RUN_ID: A's agent stops answering at that run, on
	# the first boot only (to check the reboot below)
	STALL=()
	[ -z "${BENCH_AGENT_STALL:-}" ] || STALL=(--env BENCH_AGENT_STALL)
	# A run that hangs guest A (the agent stops answering; seen with
	# rdma_rxe's read_bw) would end the pair path there: both guests are
	# booted again, the run is recorded as failed, and the plan goes on
	# after it, at most PAIR_BOOTS times in all.
	: "${PAIR_BOOTS:=3}"
	resume=()
	: >"$OUT/pair-a.console"
	: >"$OUT/pair-b.console"
	BOOTLOG=$OUT/.pair-b.boot
	for _ in $(seq "$PAIR_BOOTS"); do
		SOCKDIR=$(mktemp -d "${TMPDIR:-/tmp}/mroce-bench.XXXXXX")
		: >"$BOOTLOG"
		say "pair: booting guests A and B (1 vCPU each, dgram link $SOCKDIR)${resume[*]:+, ${resume[*]}}"
		"$VM" "${AOPTS[@]}" "${STALL[@]}" --batch --smp 1 --mem 1G --timeout "$TIMEOUT" --results "$OUT/pair-a" \
			--nic-dgram "$SOCKDIR/a,$SOCKDIR/b" -- "$HERE/guest.sh" pair-a \
			>>"$OUT/pair-a.console" 2>&1 &
		APID=$!
		set +e
		"$VM" "${VMOPTS[@]}" --batch --smp 1 --mem 1G --timeout "$TIMEOUT" --results "$OUT/pair-b" \
			--nic-dgram "$SOCKDIR/b,$SOCKDIR/a" -- "$HERE/guest.sh" pair-b "${DRIVE[@]}" \
			"${resume[@]}" 2>&1 | tee -a "$OUT/pair-b.console" "$BOOTLOG"
		brc=${PIPESTATUS[0]}
		set -e
		# A's agent exits when B says quit or goes away; give it a moment.
		for _ in $(seq 60); do kill -0 "$APID" 2>/dev/null || break; sleep 1; done
		kill -TERM "$APID" 2>/dev/null || true
		arc=0
		wait "$APID" || arc=$?
		APID=
		rm -rf "$SOCKDIR"
		SOCKDIR=
		[ "$brc" = 0 ] || say "pair: guest B exited $brc"
		[ "$arc" = 0 ] || say "pair: guest A exited $arc (see $OUT/pair-a.console)"
		[ "$brc" = 0 ] && break
		# how far the plan got: one record per run, in order
		done_runs=$(wc -l <"$OUT/pair-b/runs.jsonl" 2>/dev/null || echo 0)
		planned=$("$PY" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' \
			"$OUT/pair-b/plan.json" 2>/dev/null || echo 0)
		grep -q 'bench: agent: no answer' "$BOOTLOG" || break
		[ "$done_runs" -lt "$planned" ] || break
		say "pair: run $((done_runs + 1)) of $planned hung guest A; rebooting both"
		resume=(--resume-after "$((done_runs + 1))")
		STALL=()
	done
	rm -f "$BOOTLOG"
	# the last boot decides (a hung run is a failed record of the table)
	[ "$brc" = 0 ] && [ "$arc" = 0 ] || RC=1
fi

# ------------------------------------------------------------- single
if [[ ,$PATHS, =~ ,(single|jumbo|loop), ]]; then
	say "single/jumbo/loop: booting one guest, 2 vCPUs (in this order: single = netns h1/h2 over veth, jumbo = the same at MTU 9000, loop = loopback devices; here: $PATHS)"
	set +e
	"$VM" "${VMOPTS[@]}" --batch --smp 2 --timeout "$TIMEOUT" --results "$OUT/single" \
		-- "$HERE/guest.sh" single "${DRIVE[@]}" 2>&1 | tee "$OUT/single.console"
	src=${PIPESTATUS[0]}
	set -e
	[ "$src" = 0 ] || { say "single/jumbo/loop: guest exited $src"; RC=1; }
fi

touch "$OUT/.stop"
wait "$HMPID" 2>/dev/null || true
HMPID=
ELAPSED=$(($(date +%s) - START))
"$PY" - "$OUT/meta.json" "$ELAPSED" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
s = int(sys.argv[2])
m["elapsed"] = f"{s // 60} min {s % 60} s"
m["elapsed_s"] = s
json.dump(m, open(sys.argv[1], "w"), indent=1)
EOF

REPORT=(--require-filled)
[ "$CHARTS" = 1 ] || REPORT+=(--no-charts)
if ! "$PY" "$HERE/bench.py" report "${REPORT[@]}" "$OUT"; then
	RC=1
fi
say "done in $((ELAPSED / 60)) min $((ELAPSED % 60)) s: $OUT/summary.md"
[ "$RC" = 0 ] || say "FAILED (see the consoles and runs.jsonl in $OUT)"
exit "$RC"
