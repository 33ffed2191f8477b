# SPDX-License-Identifier: GPL-2.0-only
"""charts/*.png: throughput vs message size per path, goodput vs loss
rate, and the bottleneck's per-flow goodput and backlog over time.
chart_files() makes the gnuplot scripts and their data (plain text, what
the tests compare); charts() writes them and runs gnuplot."""

import os
import shutil
import subprocess
import sys

from .bottleneck import curve_at, flow_bytes
from .common import JUMBO_MTU, RXE_PATHS, VERBS, bn_variant
from .markdown import PATH_TITLE, TNAME, bn_title

TERM_CAIRO = "set terminal pngcairo size 900,560 noenhanced font ',10'"
TERM_PNG = "set terminal png size 900,560 noenhanced"


def dat(points):
    return "".join(" ".join(str(x) for x in p) + "\n" for p in points)


def size_series(runs, rows):
    """(path, title, [(size, median, min, max)]) of each throughput curve."""
    series = []

    def pts(path, verb, t):
        return sorted((r.size, r.values[t]["median"], r.values[t]["min"], r.values[t]["max"])
                      for r in rows if r.path == path and r.group == "bw" and r.verb == verb
                      and r.metric == "throughput" and r.values.get(t))
    for path in runs:
        for verb in VERBS:
            for t in (["mroce", "rxe"] if path in RXE_PATHS else ["mroce"]):
                p = pts(path, verb, t)
                if p:
                    series.append((path, f"{t} {verb}", p))
        p = pts(path, "write", "tcp")
        if p:
            series.append((path, "kernel TCP", p))
    return series


def chart_files(dd, runs, rows, loss_size, term=TERM_CAIRO):
    """[(png, gnuplot script, {data file: its text})] for folder DD."""
    files = []
    series = size_series(runs, rows)
    for path in runs:
        ss = [s for s in series if s[0] == path]
        if not ss:
            continue
        data, plots = {}, []
        for i, (_, name, pts) in enumerate(ss):
            fn = f"{dd}/bw-{path}-{i}.dat"
            data[fn] = dat(pts)
            plots.append(f"'{fn}' using 1:2:3:4 with yerrorlines title '{name}'")
        png = f"{dd}/throughput-vs-size-{path}.png"
        script = "\n".join([
            term, f"set output '{png}'",
            f"set title 'Throughput vs message size — {PATH_TITLE[path]}'",
            "set logscale x 2", "set logscale y", "set xlabel 'message size [B]'",
            "set ylabel 'Gb/s (median, min-max bars)'", "set key left top", "set grid",
            "set xtics ('64' 64, '4K' 4096, '64K' 65536)", "set xrange [40:100000]",
            "plot " + ", ".join(plots)])
        files.append((png, script, data))
    # goodput vs loss (loss rates as categories: 0, 0.1, 1, 5, 10 %)
    gp = [r for r in rows if r.group == "loss" and r.metric == "goodput / lossless"]
    levels = sorted({0.0} | {r.loss for r in gp})
    data, plots = {}, []
    for path in runs:
        for t in (["mroce", "rxe", "tcp"] if path in RXE_PATHS else ["mroce", "tcp"]):
            pts = [(0.0, 1.0, 1.0, 1.0)]
            for r in gp:
                if r.path == path and r.values.get(t):
                    v = r.values[t]
                    pts.append((r.loss, v["median"], v["min"], v["max"]))
            if len(pts) > 1:
                fn = f"{dd}/loss-{len(data)}.dat"
                data[fn] = "".join(f"{levels.index(p[0])} {p[0]:g} {p[1]} {p[2]} {p[3]}\n"
                                   for p in sorted(pts))
                where = {"pair": "2 guests", "jumbo": f"1 guest veth MTU {JUMBO_MTU}"}.get(
                    path, "1 guest veth")
                plots.append(f"'{fn}' using 1:3:4:5:xtic(2) with yerrorlines "
                             f"title '{TNAME[t]} ({where})'")
    if plots:
        png = f"{dd}/goodput-vs-loss.png"
        script = "\n".join([
            term, f"set output '{png}'",
            f"set title 'write_bw {loss_size} B goodput under netem loss (fraction of lossless)'",
            "set xlabel 'netem loss rate on the sender egress [%]'",
            "set ylabel 'goodput / lossless goodput (median, min-max bars)'",
            "set yrange [0:*]", f"set xrange [-0.3:{len(levels) - 0.7}]", "set key right top",
            "set grid",
            "plot " + ", ".join(plots)
            + ", 0.9 with lines dashtype 2 lc rgb 'gray' title '90 % target'"])
        files.append((png, script, data))
    bn = bottleneck_runs(runs)
    if bn:
        files.append(bottleneck_chart(dd, bn, term))
    return files


def bottleneck_runs(runs):
    """The first good run of each bottleneck variant."""
    bn, seen = [], set()
    for r in runs.get("pair", []):
        if r.get("kind") == "bottleneck" and r.get("ok") and bn_variant(r) not in seen:
            seen.add(bn_variant(r))
            bn.append(r)
    return bn


def bottleneck_chart(dd, bn, term):
    """Per-flow goodput and the backlog over time, one panel per variant."""
    png = f"{dd}/bottleneck-pair.png"
    info = bn[0].get("bottleneck") or {}
    rate = info.get("rate_bps", 0) / 1e6
    lines = [term.replace("900,560", f"900,{300 * len(bn)}"), f"set output '{png}'",
             f"set multiplot layout {len(bn)},1", "set grid", "set key outside right top",
             "set xlabel 'seconds since the last flow started'", "set ylabel 'Mb/s'",
             "set y2label 'backlog [packets]'", "set ytics nomirror", "set y2tics",
             f"set yrange [0:{rate * 1.1 if rate else '*'}]",
             f"set y2range [0:{info.get('limit', 100) * 1.1:g}]"]
    data = {}
    for j, r in enumerate(bn):
        plots = []
        for i, f in enumerate(r["flow_runs"]):
            fn = f"{dd}/bottleneck-{j}-flow{i}.dat"
            c = flow_bytes(f)
            text = []          # goodput over the last second, every 0.5 s
            t = c[0][0] + 1 if c else 0
            while c and t <= c[-1][0]:
                text.append(f"{t:.2f} {(curve_at(c, t) - curve_at(c, t - 1)) * 8 / 1e6:.4f}\n")
                t += 0.5
            data[fn] = "".join(text)
            plots.append(f"'{fn}' using 1:2 with lines lw 2 title 'flow {i + 1}'")
        fn = f"{dd}/bottleneck-{j}-queue.dat"
        data[fn] = "".join(f"{x[0]} {x[1]}\n" for x in r.get("qdisc_series", []))
        plots.append(f"'{fn}' using 1:2 axes x1y2 with lines lc rgb 'gray' title 'backlog'")
        lines += [f"set title '{bn_title(bn_variant(r))} (run {r['id']})'",
                  f"set xrange [{min(f['t_header'] for f in r['flow_runs']) - 1}:"
                  f"{r['window'][1] + 2}]",
                  "plot " + ", ".join(plots)]
    lines.append("unset multiplot")
    return png, "\n".join(lines), data


def charts(out, runs, rows, loss_size):
    """Write OUT/charts/: the data, the .gp scripts, the PNGs (gnuplot)."""
    if not shutil.which("gnuplot"):
        print("bench: gnuplot not found, no charts", file=sys.stderr)
        return
    dd = f"{out}/charts"
    os.makedirs(dd, exist_ok=True)
    term = TERM_CAIRO
    if subprocess.run(["gnuplot", "-e", "set terminal pngcairo"],
                      capture_output=True).returncode != 0:
        term = TERM_PNG
    for png, script, data in chart_files(dd, runs, rows, loss_size, term):
        for fn, text in data.items():
            with open(fn, "w") as f:
                f.write(text)
        gp = png[:-4] + ".gp"
        with open(gp, "w") as f:
            f.write(script + "\n")
        r = subprocess.run(["gnuplot", gp], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"bench: gnuplot {gp}: {r.stderr.strip()}", file=sys.stderr)
