#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 200
#
# Tail latency observability: lat_qp (tools/tests/src/lat_qp.c) times N
# RC WRITEs one at a time from post to polled completion and keeps its QPs
# open; then "rdma resource show qp -dd" on its QP must show lat_count N,
# p50 <= p99 <= p99.9 <= max, each no higher than the program's own
# percentile (the driver times a part of the same interval) beyond its
# histogram's bucket width (1/8), the RTT percentiles of every path that
# carried packets, none above the slowest WRITE; mroce-top -b (with the
# first QP's paths) and -j show
# the device, its rates and the QP.  Then with 64 paths, whose path lines
# do not fit in a small dump message: "rdma resource" still ends (it runs
# under timeout: an entry too big for any message made it loop for ever).
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

need_cmd rdma python3
export RDMAV_DRIVERS=$MROCE_TOP/tools/libmroce/libmroce
PROG=$MROCE_TOP/tools/tests/src/lat_qp
TOP=$MROCE_TOP/tools/mroce-top/mroce-top
[ -x "$PROG" ] || fail "$PROG not built (make tools)"
N=500

load_mroce
on_exit 'topo_clean; unload_mroce'
topo_pair
require "mroce1 on veth1" in_h1 rdma link add mroce1 type mroce netdev veth1
sleep 0.5
g4=$(gid_index mroce1 0000:0000:0000:0000:0000:ffff:c000:0201)
require "IPv4 GID" test -n "$g4"

dir=$(mktemp -d)
# lat_qp keeps its QPs until $dir/done exists
in_h1 "$PROG" mroce1 "$g4" "$N" "$dir/done" >"$dir/out" 2>&1 &
pid=$!
# shellcheck disable=SC2016 # expanded when the test ends
on_exit 'touch "$dir/done"; while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done; rm -rf "$dir"'
for _ in $(seq 240); do
	grep -q '^lat_qp: qpn=' "$dir/out" && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.5
done
app=$(grep '^lat_qp: qpn=' "$dir/out")
cat "$dir/out"
require "lat_qp completed $N WRITEs" test -n "$app"
val() { printf '%s\n' "$app" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
qpn=$(val qpn)
log "lat_qp: QP $qpn, post to poll p50 $(val p50_us) p99 $(val p99_us) p99.9 $(val p999_us) max $(val max_us) us"

# the QP's driver attributes, from the JSON (print the shape for the log)
json=$(timeout 30 rdma -j -dd resource show qp link mroce1/1)
require "rdma -j -dd resource show qp ends" test -n "$json"
printf '%s\n' "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("# rdma -j -dd resource show qp: %d entries; keys of the first: %s"
      % (len(d), sorted(d[0]) if d else None))'
attrs=$(printf '%s\n' "$json" | python3 -c '
import json, sys
qpn = int(sys.argv[1])
for e in json.load(sys.stdin):
    if e.get("lqpn") == qpn:
        for k, v in e.items():
            k = k[4:] if k.startswith("drv_") else k
            if isinstance(v, (int, str)) and " " not in str(v):
                print(f"{k}={v}")
            elif isinstance(v, str):
                print(f"{k}={v.replace(chr(32), chr(95))}")
' "$qpn")
attr() { printf '%s\n' "$attrs" | sed -n "s/^$1=//p"; }
cnt=$(attr lat_count)
p50=$(attr lat_p50_us) p99=$(attr lat_p99_us) p999=$(attr lat_p999_us) max=$(attr lat_max_us)
log "driver: lat_count $cnt p50 $p50 p99 $p99 p99.9 $p999 max $max us"
require "QP $qpn has the latency attributes" test -n "$cnt" -a -n "$p50" -a -n "$p999"
check_eq "lat_count is the number of WRITEs completed" "$N" "$cnt"
check "1 <= p50 <= p99 <= p99.9 <= max ($p50 $p99 $p999 $max)" \
	test 1 -le "$p50" -a "$p50" -le "$p99" -a "$p99" -le "$p999" -a "$p999" -le "$max"
# the driver's interval lies inside the program's: its order statistics
# are lower, up to the bucket's width (1/8 above the true value)
within() { test "$1" -le $(( $2 + $2 / 8 + 1 )); }
check "driver p50 $p50 <= the program's $(val p50_us) (+1/8)" within "$p50" "$(val p50_us)"
check "driver p99 $p99 <= the program's $(val p99_us) (+1/8)" within "$p99" "$(val p99_us)"
check "driver p99.9 $p999 <= the program's $(val p999_us) (+1/8)" within "$p999" "$(val p999_us)"
check "driver max $max <= the program's $(val max_us)" test "$max" -le "$(( $(val max_us) + 1 ))"

# per-path RTT: path_rtt_p50_us and path_rtt_p99_us list one value per
# path ("-": no sample); every path that sent packets (tx in its pathN
# line) has one, p50 <= p99, and no RTT is longer than the slowest WRITE
paths=$(printf '%s\n' "$json" | python3 -c '
import json, sys
qpn = int(sys.argv[1])
for e in json.load(sys.stdin):
    if e.get("lqpn") != qpn:
        continue
    d = {k[4:] if k.startswith("drv_") else k: v for k, v in e.items()}
    p50 = str(d.get("path_rtt_p50_us", "")).split()
    p99 = str(d.get("path_rtt_p99_us", "")).split()
    i = 0
    while "path%d" % i in d:
        f = d["path%d" % i].split()
        tx = f[f.index("tx") + 1]
        print("path%d" % i, tx, p50[i] if i < len(p50) else "?", p99[i] if i < len(p99) else "?")
        i += 1
' "$qpn")
while read -r line; do log "path tx p50 p99: $line"; done <<<"$paths"
check_eq "no path left out (paths_shown)" "" "$(attr paths_shown)"
used=0 bad=''
while read -r p tx a b; do
	[ "$tx" -gt 0 ] || continue
	used=$((used + 1))
	case "$a$b" in *[!0-9]*|'') bad="$bad $p"; continue ;; esac
	[ "$a" -le "$b" ] && [ "$b" -le $((max + 1)) ] || bad="$bad $p"
done <<<"$paths"
check "packets went over several paths ($used)" test "$used" -ge 2
check_eq "each path in use has sane RTT percentiles" "" "$bad"
txt=$(timeout 30 rdma resource show qp link mroce1/1 lqpn "$qpn" -dd)
check_match "the text form shows them too" "lat_p999_us [0-9]+ .*path_rtt_p99_us [0-9-]+" "$(echo "$txt" | tr '\n' ' ')"

# mroce-top: the device with its rates, the QP in the top list
stats=$(timeout 30 rdma -j statistic show link mroce1/1)
printf '%s\n' "$stats" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("# rdma -j statistic show: %d entries; first keys: %s" % (len(d), sorted(d[0])[:8] if d else None))'
out=$(timeout 60 "$TOP" -b -n 1 -d 0.5 -D mroce1)
echo "$out"
check_match "mroce-top -b lists mroce1" "^mroce1/1 " "$out"
check_match "mroce-top -b lists QP $qpn with lat_count $N" "^mroce1 +$qpn +RC +RTS .* $N +$p50 +$p99 +$p999 +$max " "$out"
check_match "mroce-top -b shows the first QP's paths" "^paths of mroce1 QP [0-9]+ \([0-9]+\)" "$out"
check_match "mroce-top -b: a path line with state, RTT percentiles, tx" "^0 +[0-9]+ +active +[0-9]+/16 +[0-9]+ +[0-9]+ +[0-9]+ +[0-9-]+ +[0-9-]+ +[0-9]+ " "$out"
j=$(timeout 60 "$TOP" -j -n 1 -d 0.5)
check_eq "mroce-top -j: QP $qpn's p99 and mroce1's counters" "$p99 True" "$(printf '%s\n' "$j" | python3 -c '
import json, sys
o = json.loads(sys.stdin.readline())
q = [q for q in o["qps"] if q["qpn"] == int(sys.argv[1])]
print(q[0]["lat_p99_us"] if q else None, "rx_pkts" in o["devices"].get("mroce1/1", {}))
' "$qpn")"

touch "$dir/done"
wait "$pid"
check_eq "lat_qp exits cleanly" 0 "$?"

# 64 paths: 64 path lines do not fit in a small dump message; rdma
# resource must still end, with the paths or with paths_shown 0
in_h1 rdma link delete mroce1
unload_mroce
load_mroce paths=64
require "mroce1 on veth1 (64 paths)" in_h1 rdma link add mroce1 type mroce netdev veth1
sleep 0.5
g4=$(gid_index mroce1 0000:0000:0000:0000:0000:ffff:c000:0201)
rm -f "$dir/done" "$dir/out"
in_h1 "$PROG" mroce1 "$g4" 100 "$dir/done" >"$dir/out" 2>&1 &
pid=$!
for _ in $(seq 240); do
	grep -q '^lat_qp: qpn=' "$dir/out" && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.5
done
qpn=$(sed -n 's/^lat_qp: qpn=\([0-9]*\) .*/\1/p' "$dir/out")
require "lat_qp completed 100 WRITEs (64 paths)" test -n "$qpn"
json=$(timeout 30 rdma -j -dd resource show qp link mroce1/1)
check "rdma -j -dd resource show qp ends with 64 paths" test -n "$json"
check_eq "QP $qpn: 100 WRITEs, and all 64 paths or none shown" "100 ok" "$(printf '%s\n' "$json" | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    if e.get("lqpn") == int(sys.argv[1]):
        e = {k[4:] if k.startswith("drv_") else k: v for k, v in e.items()}
        full = "path63" in e and len(e.get("path_rtt_p99_us", "").split()) == 64
        print(e.get("lat_count"), "ok" if full or e.get("paths_shown") == 0 else "partial")
        print("# paths shown:", "all" if full else "none (paths_shown 0)", file=sys.stderr)
' "$qpn")"
touch "$dir/done"
wait "$pid"
check_eq "lat_qp exits cleanly (64 paths)" 0 "$?"
