#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# run-scenarios.sh MROCE_SIM OUTDIR [LIST]: every scenario of LIST
# (default scenarios/make-sim.list: "name param-file key=value ...") into
# OUTDIR/NAME/ (mroce-sim's output, summary.csv, flows.csv, queue
# depths), then OUTDIR/report.txt (one table, a column per scenario) and,
# with python3-matplotlib, OUTDIR/*.png (plot.py).
set -u
SIM=${1:?usage: run-scenarios.sh MROCE_SIM OUTDIR [LIST]}
OUT=${2:?usage: run-scenarios.sh MROCE_SIM OUTDIR [LIST]}
DIR=$(cd "$(dirname "$0")" && pwd)
LIST=${3:-$DIR/scenarios/make-sim.list}
names=()
fails=0

mkdir -p "$OUT"
while read -r name conf args; do
	case "$name" in ''|'#'*) continue ;; esac
	mkdir -p "$OUT/$name"
	echo "=== sim: $name ($conf $args)"
	t0=$(date +%s)
	# shellcheck disable=SC2086  # args are key=value words
	if nice -n 10 "$SIM" "$DIR/scenarios/$conf" $args out="$OUT/$name" \
		>"$OUT/$name/output.txt" 2>"$OUT/$name/stderr.txt"; then
		names+=("$name")
		grep -E '^(flows_done|fct_p99_us|incast_jain|incast_converge_rtts|switch_q_depth_p99_pkts|switch_q_drops|spine_util_mean|failure_recovery_us) ' \
			"$OUT/$name/output.txt" | tr -s ' ' | paste -sd' ' -
	else
		echo "sim: $name failed, see $OUT/$name/stderr.txt" >&2
		fails=$((fails + 1))
	fi
	echo "    $(( $(date +%s) - t0 )) s"
done <"$LIST"

# one table: a row per key, a column per scenario
python3 - "$OUT" "${names[@]}" >"$OUT/report.txt" <<'PY'
import csv, sys
out, names = sys.argv[1], sys.argv[2:]
rows, keys = {}, []
for n in names:
    with open(f"{out}/{n}/summary.csv") as f:
        for r in csv.DictReader(f):
            rows.setdefault(n, {})[r["key"]] = r["value"]
            if r["key"] not in keys:
                keys.append(r["key"])
w = max(len(k) for k in keys) if keys else 10
print(" " * w, *[f"{n:>20}" for n in names])
for k in keys:
    vals = []
    for n in names:
        v = rows[n].get(k, "")
        try:
            v = f"{float(v):.4g}"
        except ValueError:
            pass
        vals.append(f"{v:>20}")
    print(f"{k:<{w}}", *vals)
PY
echo "sim: table in $OUT/report.txt"
# Debian's python3-matplotlib is for Debian's python3, which a python3
# earlier in PATH (pyenv, a venv) may not see
py=
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import matplotlib' 2>/dev/null; then
		py=$p
		break
	fi
done
if [ -n "$py" ]; then
	"$py" "$DIR/plot.py" "$OUT" "${names[@]}" && echo "sim: plots in $OUT/*.png"
else
	echo "sim: python3-matplotlib not installed, no plots"
fi
[ "$fails" -eq 0 ]
