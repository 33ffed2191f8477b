# SPDX-License-Identifier: GPL-2.0-only
"""The plan of one drive: the list of runs, each a dict (kind, transport,
verb/proto, size, loss, scenario, rep, ...) that becomes its record."""

import re

from .common import RXE_PATHS, run_name

# the loopback path runs only the scenarios of the targets (time)
LOOP_RX = r"^(write_bw-65536-|send_bw-64-|iperf-tcp-65536|write_lat-|send_lat-|udplat-)"


def make_plan(a):
    """List of runs, grouped so that the transports of one scenario
    alternate (their order rotates with the repetition).  A: the drive's
    options (mode, sizes, verbs, lat_verbs, loss, repeats, bottleneck_*,
    only, ...)."""
    plan = []
    rdma = ["mroce", "rxe"] if a.mode in RXE_PATHS else ["mroce"]

    def group(name, items, reps):
        for rep in range(reps):
            k = rep % len(items) if items else 0
            for it in items[k:] + items[:k]:
                plan.append(dict(it, scenario=name, rep=rep + 1))

    udp_done = set()
    for verb in a.verbs:
        for size in a.sizes:
            items = [dict(kind="bw", verb=verb, size=size, transport=t) for t in rdma]
            if verb == "write":     # the raw references, once per size
                items.append(dict(kind="iperf", proto="tcp", size=size, transport="tcp"))
                usize = min(size, a.udp_max)
                if usize not in udp_done:
                    udp_done.add(usize)
                    items.append(dict(kind="iperf", proto="udp", size=usize, transport="udp"))
            group(f"{verb}_bw {size}", items, a.repeat)
    for verb in a.lat_verbs:
        items = [dict(kind="lat", verb=verb, size=a.lat_size, transport=t) for t in rdma]
        if verb == a.lat_verbs[0]:
            items.append(dict(kind="udplat", size=a.lat_size, transport="udp"))
        group(f"{verb}_lat {a.lat_size}", items, a.repeat)
    if a.loss:
        levels = [0.0] + [x for x in a.loss if x > 0]
        items = []
        for lvl in levels:
            items += [dict(kind="bw", verb="write", size=a.loss_size, transport=t, loss=lvl)
                      for t in rdma]
            items.append(dict(kind="iperf", proto="tcp", size=a.loss_size,
                              transport="tcp", loss=lvl))
        # one repetition = every level once, transports rotated per level
        for rep in range(a.loss_repeat):
            per = len(rdma) + 1
            for i in range(0, len(items), per):
                chunk = items[i:i + per]
                k = rep % per
                for it in chunk[k:] + chunk[:k]:
                    plan.append(dict(it, scenario="loss", rep=rep + 1))
    # the tail under loss: write_lat at each of --loss-lat's levels
    lat_levels = [x for x in getattr(a, "loss_lat", []) if x > 0]
    if lat_levels:
        items = [dict(kind="lat", verb="write", size=a.lat_size, transport=t, loss=lvl)
                 for lvl in lat_levels for t in rdma]
        for rep in range(a.loss_repeat):
            per = len(rdma)
            for i in range(0, len(items), per):
                chunk = items[i:i + per]
                k = rep % per
                for it in chunk[k:] + chunk[:k]:
                    plan.append(dict(it, scenario="loss_lat", rep=rep + 1))
    if a.mode == "pair" and a.bottleneck_repeat > 0:
        # congestion: FLOWS concurrent RC writes B -> A through one bottleneck
        # on B's egress; mroce with each cc_algo (device re-created), rxe
        items = [dict(kind="bottleneck", transport="mroce", cc=cc) for cc in a.bottleneck_cc]
        items.append(dict(kind="bottleneck", transport="rxe"))
        items = [dict(it, size=a.bottleneck_size, flows=a.bottleneck_flows) for it in items]
        group("bottleneck", items, a.bottleneck_repeat)
    if a.mode == "loop":
        plan = [p for p in plan if re.search(LOOP_RX, run_name(p)) and p.get("loss") is None]
    if a.only:
        rx = re.compile(a.only)
        plan = [p for p in plan if rx.search(run_name(p))]
    return plan
