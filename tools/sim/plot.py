#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""plot.py OUTDIR NAME...: PNG plots of the scenarios run-scenarios.sh ran.

fct_cdf.png      FCT distribution of every scenario
queue.png        switch queue depth distribution (arrivals, CCDF)
goodput.png      per-flow goodput, sorted, per scenario
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def flows(out, name):
    with open(f"{out}/{name}/flows.csv") as f:
        return list(csv.DictReader(f))


def num(v):
    try:
        return float(v)
    except ValueError:
        return float("nan")


def main():
    out, names = sys.argv[1], sys.argv[2:]
    fig, ax = plt.subplots(figsize=(8, 5))
    for n in names:
        fct = sorted(x for x in (num(r["fct_us"]) for r in flows(out, n)) if x == x)
        if fct:
            ax.plot(fct, [(i + 1) / len(fct) for i in range(len(fct))], label=n)
    ax.set_xscale("log")
    ax.set_xlabel("flow completion time (us)")
    ax.set_ylabel("fraction of flows")
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(f"{out}/fct_cdf.png", dpi=120)

    fig, ax = plt.subplots(figsize=(8, 5))
    for n in names:
        with open(f"{out}/{n}/switch_q_depth.csv") as f:
            h = [(int(r["depth_pkts"]), int(r["arrivals"])) for r in csv.DictReader(f)]
        tot = sum(c for _, c in h)
        if not tot:
            continue
        acc, xs, ys = tot, [], []
        for d, c in h:
            xs.append(d)
            ys.append(acc / tot)
            acc -= c
        ax.step(xs, ys, where="post", label=n)
    ax.set_yscale("log")
    ax.set_xlabel("queue depth seen by an arriving packet (packets)")
    ax.set_ylabel("fraction of arrivals at or above")
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(f"{out}/queue.png", dpi=120)

    fig, ax = plt.subplots(figsize=(8, 5))
    for n in names:
        g = sorted(x for x in (num(r["goodput_gbps"]) for r in flows(out, n)) if x == x)
        ax.plot(range(len(g)), g, label=n)
    ax.set_xlabel("flows, sorted")
    ax.set_ylabel("goodput (Gbit/s)")
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(f"{out}/goodput.png", dpi=120)


if __name__ == "__main__":
    main()
