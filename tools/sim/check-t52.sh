#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# check-t52.sh MROCE_SIM [T52_LOG]: the simulator against the kernel on
# the one scenario both run, t-52-incast's 3-to-1 incast through one ECN
# port at 30 Mbit/s (scenarios/t52-agree.conf).
#
# The kernel's numbers come from a t-52 log (T52_LOG, else the newest of
# build/results*/t-52-incast.log under the tree), else
# from the run recorded below (CI, 2026-12-05 14:22 UTC).  Tolerances:
#   - Jain's index of the three senders' goodputs: both >= 0.9 (t-52's
#     own bound) and within 0.05 of each other;
#   - each sender's goodput within 35 % of t-52's mean per sender (t-52's
#     count perftest start-up and guest scheduling, the model's do not:
#     the model's are expected higher, not by more than that);
#   - the bottleneck queue, mean after start-up: within a factor of 3 of
#     t-52's, its maximum at most twice t-52's; no drops in either;
#   - cc none in the model: a queue at least 5 x metaroce's, as t-52's
#     none is 27 x (297 against 11 packets).
set -u
SIM=${1:?usage: check-t52.sh MROCE_SIM [T52_LOG]}
DIR=$(dirname "$0")
TOP=$(cd "$DIR/../.." && pwd)
CONF=$DIR/scenarios/t52-agree.conf
fails=0
n=0

# the recorded reference: MB/s per sender, Jain, queue mean and max, none's mean
REF_GP="1.00 0.86 0.99" REF_JAIN=0.996 REF_QAVG=11 REF_QMAX=71 REF_NONE_QAVG=297
REF_SRC="recorded CI run 2026-12-05 14:22 UTC"

log=${2:-}
if [ -z "$log" ]; then
	# shellcheck disable=SC2012  # names are ours, newest first
	log=$(ls -t "$TOP"/build/results*/t-52-incast.log 2>/dev/null |
		head -n 1)
fi
if [ -n "$log" ] && [ -r "$log" ]; then
	line=$(grep '^# ecn-metaroce (cc default)' "$log" | tail -n 1)
	nline=$(grep '^# ecn-none (cc none)' "$log" | tail -n 1)
	gp=$(sed -n 's/.*goodput at the receiver MB\/s \([0-9. ]*\) (sum.*/\1/p' <<<"$line")
	jain=$(sed -n 's/.*, Jain \([0-9.]*\);.*/\1/p' <<<"$line")
	qavg=$(sed -n 's/.*queue after 3 s \([0-9]*\) packets on average (max \([0-9]*\)).*/\1/p' <<<"$line")
	qmax=$(sed -n 's/.*queue after 3 s \([0-9]*\) packets on average (max \([0-9]*\)).*/\2/p' <<<"$line")
	nq=$(sed -n 's/.*queue after 3 s \([0-9]*\) packets on average.*/\1/p' <<<"$nline")
	if [ "$(wc -w <<<"$gp")" -eq 3 ] && [ -n "$jain" ] && [ -n "$qavg" ] &&
	   [ -n "$qmax" ] && [ -n "$nq" ]; then
		REF_GP=$gp REF_JAIN=$jain REF_QAVG=$qavg REF_QMAX=$qmax REF_NONE_QAVG=$nq
		REF_SRC=$log
	fi
fi

# shellcheck source=tools/sim/tap.sh
. "$(dirname "$0")/tap.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$("$SIM" "$CONF" out="$tmp") || { echo "not ok - mroce-sim: exit $?"; exit 1; }
none=$("$SIM" "$CONF" cc=none) || { echo "not ok - mroce-sim cc=none: exit $?"; exit 1; }
# the model's goodput per sender, MB/s, from flows.csv (bytes / FCT)
gps=$(awk -F, 'NR > 1 { printf "%.3f ", $9 * 1000 / 8 }' "$tmp/flows.csv")
ref_mean=$(awk '{ print ($1 + $2 + $3) / 3 }' <<<"$REF_GP")
jain=$(val "$out" incast_jain)
qavg=$(val "$out" bottleneck_q_depth_mean_pkts)
qmax=$(val "$out" bottleneck_q_depth_max_pkts)
nqavg=$(val "$none" bottleneck_q_depth_mean_pkts)

echo "# kernel (t-52, $REF_SRC): MB/s $REF_GP, Jain $REF_JAIN, queue $REF_QAVG (max $REF_QMAX), cc none queue $REF_NONE_QAVG"
echo "# model: MB/s $gps, Jain $jain, queue $qavg (max $qmax), drops $(val "$out" bottleneck_q_drops_total), cc none queue $nqavg;" \
	"tail probes $(val "$out" tail_probes), RTOs $(val "$out" rto_expiries)"
check "all three flows finish in the model" "$(val "$out" flows_done) == 3"
check "Jain: model $jain and t-52 $REF_JAIN both >= 0.9, within 0.05" \
	"$jain >= 0.9 && $REF_JAIN >= 0.9 && $jain - $REF_JAIN <= 0.05 && $REF_JAIN - $jain <= 0.05"
for g in $gps; do
	check "goodput $g MB/s within 35 % of t-52's mean $ref_mean MB/s" \
		"$g >= 0.65 * $ref_mean && $g <= 1.35 * $ref_mean"
done
check "queue mean $qavg within a factor of 3 of t-52's $REF_QAVG" \
	"$qavg * 3 >= $REF_QAVG && $qavg <= 3 * $REF_QAVG"
check "queue max $qmax at most twice t-52's $REF_QMAX" "$qmax <= 2 * $REF_QMAX"
check "no drops at the bottleneck (t-52: none either)" \
	"$(val "$out" bottleneck_q_drops_total) == 0"
check "cc none queue $nqavg >= 5 x metaroce's $qavg (t-52: $REF_NONE_QAVG vs $REF_QAVG)" \
	"$nqavg >= 5 * $qavg"
tap_end
