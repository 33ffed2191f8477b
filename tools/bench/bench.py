#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""bench.py - the moving parts of `make bench` (tools/bench/run-bench.sh).

Subcommands:
  agent    (guest A of the two-guest pair) serve the driver on guest B:
           start/wait server processes, /proc/stat snapshots, commands
  drive    (guest B, or the single guest) run the plan, write
           /results/runs.jsonl
  hostmon  (host) on every event file a driver creates, sample the host's
           /proc/stat and the CPU time of this run's qemu processes
  report   (host) runs + host samples -> summary.json, summary.md, PNGs

Each is a module of mbench/ (see mbench/__init__.py for all of them);
this file only parses the command line.  Only the standard library;
/usr/bin/python3 (3.11).  See README.md.
"""

import argparse
import importlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mbench.common import GID_PREFIX  # noqa: E402  (after the path)


def floats(s):
    return [float(x) for x in s.split(",") if x.strip()]


def ints(s):
    """64,4k,64k -> [64, 4096, 65536]"""
    out = []
    for x in s.split(","):
        x = x.strip().lower()
        if not x:
            continue
        mul = 1
        if x.endswith("k"):
            mul, x = 1024, x[:-1]
        out.append(int(x) * mul)
    return out


def words(s):
    return [x for x in s.split(",") if x]


def parser():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("agent")
    g.add_argument("--devs", default="mroce0,rxe0", type=lambda s: s.split(","))
    g.add_argument("--gid-prefix", default=GID_PREFIX)
    g.add_argument("--idle-timeout", type=float, default=300)
    d = sub.add_parser("drive")
    d.add_argument("--mode", choices=("pair", "single", "jumbo", "loop"), required=True)
    d.add_argument("--results", default="/results")
    d.add_argument("--gid-prefix", default=GID_PREFIX)
    d.add_argument("--repeat", type=int, default=3)
    d.add_argument("--loss-repeat", type=int, default=1)
    d.add_argument("--duration", type=int, default=3)
    d.add_argument("--margin", type=int, default=1)
    d.add_argument("--lat-iters", type=int, default=500)
    d.add_argument("--loss-duration", type=int, default=4)
    d.add_argument("--lat-size", type=int, default=8)
    d.add_argument("--sizes", type=ints, default=[64, 4096, 65536])
    d.add_argument("--verbs", default="write,send,read", type=words)
    d.add_argument("--lat-verbs", default="write,send", type=words)
    d.add_argument("--loss", type=floats, default=[0.1, 1, 5, 10])
    d.add_argument("--loss-size", type=int, default=65536)
    d.add_argument("--loss-lat", type=floats, default=[1, 5],
                   help="loss levels (%%) of the tail-latency-under-loss runs "
                        "(write_lat, --lat-iters); empty: none")
    d.add_argument("--udp-max", type=int, default=1472)
    d.add_argument("--only", default="")
    d.add_argument("--nice", type=int, default=0,
                   help="nice value of the test processes (agent's too)")
    d.add_argument("--pingpong", required=True)
    d.add_argument("--bottleneck-repeat", type=int, default=1,
                   help="repetitions of the bottleneck scenario (pair only; 0: none)")
    d.add_argument("--bottleneck-rate", default="30mbit", help="tbf rate (tc syntax)")
    d.add_argument("--bottleneck-mark", default="1ms",
                   help="a delay: codel ce_threshold; a size (30kb): red ecn min")
    d.add_argument("--bottleneck-limit", type=int, default=100,
                   help="queue limit in packets (red: x (MTU+14) bytes)")
    d.add_argument("--bottleneck-duration", type=float, default=20,
                   help="seconds measured once every flow runs")
    d.add_argument("--bottleneck-flows", type=int, default=3)
    d.add_argument("--bottleneck-size", type=int, default=65536)
    d.add_argument("--bottleneck-cc", default="metaroce,none", type=words,
                   help="mroce cc_algo variants")
    d.add_argument("--bottleneck-interval", type=float, default=0.1,
                   help="seconds between backlog samples")
    d.add_argument("--connect-timeout", type=float, default=180)
    d.add_argument("--resume-after", type=int, default=0, metavar="N",
                   help="pair: the plan's run N hung guest A, which the host "
                        "rebooted with this one: record N as failed and go "
                        "on with N + 1 (runs.jsonl holds 1..N-1)")
    h = sub.add_parser("hostmon")
    h.add_argument("--out", required=True)
    h.add_argument("--tag", required=True, help="string in our qemus' command lines")
    h.add_argument("--stop-file", required=True)
    h.add_argument("--interval", type=float, default=0.2)
    h.add_argument("watch", nargs="+")
    r = sub.add_parser("report")
    r.add_argument("out")
    r.add_argument("--no-charts", action="store_true")
    r.add_argument("--require-filled", action="store_true")
    return ap


def main():
    a = parser().parse_args()
    # only the subcommand's modules: a python start in the guest costs
    # ~1 s under TCG already
    mod = importlib.import_module(f"mbench.{a.cmd}")
    return getattr(mod, f"cmd_{a.cmd}")(a)


if __name__ == "__main__":
    sys.exit(main())
