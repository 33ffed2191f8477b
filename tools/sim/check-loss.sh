#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# check-loss.sh MROCE_SIM: goodput under random loss (issue #13), one
# WRITE stream between two hosts (scenarios/loss2.conf), paths=1 and
# paths=16, at 0 % and 5 % loss of the request packets:
#   - the stream finishes;
#   - goodput at 5 % is at least 0.8 of the same scenario's lossless
#     (random loss must not be taken for congestion: before the path
#     windows stopped halving on it, paths=1 kept 0.07);
#   - each lost packet is resent about once (resends <= 1.05 x drops),
#     by SACK and not by timeouts: no RTO, no path declared dead.
set -u
SIM=${1:?usage: check-loss.sh MROCE_SIM}
DIR=$(dirname "$0")
CONF=$DIR/scenarios/loss2.conf
fails=0
n=0
# shellcheck source=tools/sim/tap.sh
. "$DIR/tap.sh"

for paths in 1 16; do
	base=$("$SIM" "$CONF" paths="$paths" loss_pct=0)
	lossy=$("$SIM" "$CONF" paths="$paths" loss_pct=5)
	g0=$(val "$base" incast_goodput_mean_gbps)
	g5=$(val "$lossy" incast_goodput_mean_gbps)
	drops=$(val "$lossy" random_drops)
	retx=$(val "$lossy" retx_pkts)
	rtos=$(val "$lossy" rto_expiries)
	deaths=$(val "$lossy" path_deaths)
	done0=$(val "$base" flows_done)
	done5=$(val "$lossy" flows_done)
	frac=$(awk -v a="${g5:-0}" -v b="${g0:-0}" \
		'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')
	echo "# paths=$paths: goodput ${g0:-?} Gbit/s lossless, ${g5:-?} at 5 % (${frac}); drops ${drops:-?}, resent ${retx:-?}, RTOs ${rtos:-?}, deaths ${deaths:-?}"
	check "paths=$paths: both runs finish" \
		"${done0:-0} == 1 && ${done5:-0} == 1"
	check "paths=$paths: goodput at 5 % loss $frac of lossless >= 0.8" \
		"$frac >= 0.8"
	check "paths=$paths: resent ${retx:-?} <= 1.05 x ${drops:-?} dropped" \
		"${drops:-0} > 0 && ${retx:--1} >= 0 && ${retx:--1} <= 1.05 * ${drops:-0}"
	check "paths=$paths: no RTO (${rtos:-?}), no path death (${deaths:-?})" \
		"${rtos:--1} == 0 && ${deaths:--1} == 0"
done
tap_end
