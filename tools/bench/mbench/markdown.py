# SPDX-License-Identifier: GPL-2.0-only
"""summary.md: the run's metadata, one table per path, the bottleneck's
table, the targets; from report.Row objects."""

from .common import JUMBO_MTU, RXE_PATHS, fmt, size_label

PATH_TITLE = {"pair": "2 guests, 1 vCPU each, virtio-net over a qemu dgram (AF_UNIX) link",
              "loop": "1 guest, 2 vCPUs, same-device loopback (rxe0 and mroce0 on dummy0; rxe short-cuts "
                      "its loopback, mroce goes through UDP on lo)",
              "single": "1 guest, 2 vCPUs, veth between two netns (rxe cannot: init_net only)",
              "jumbo": f"1 guest, 2 vCPUs, veth between two netns at MTU {JUMBO_MTU} (jumbo: "
                       "path MTU 4096; rxe cannot: init_net only)"}
TNAME = {"mroce": "mroce", "rxe": "rdma_rxe", "tcp": "TCP (iperf3)", "udp": "UDP (≤1472 B)"}
BN_NAME = {"rxe": "rdma_rxe"}


def cell(s, digits=3):
    """A spread as "median (min–max)", or the value of a single run."""
    if not s:
        return "–"
    if s["n"] == 1:
        return fmt(s["median"], digits)
    return f"{fmt(s['median'], digits)} ({fmt(s['min'], digits)}–{fmt(s['max'], digits)})"


def count_cell(s):
    """A spread of counts: integers, without decimals."""
    if s["n"] == 1 or s["min"] == s["max"]:
        return f"{s['median']:.0f}"
    return f"{s['median']:.0f} ({s['min']:.0f}–{s['max']:.0f})"


def bn_title(v):
    """A bottleneck variant's column title."""
    return BN_NAME.get(v) or (f"mroce cc={v[6:]}" if v.startswith("mroce-") else v)


def header(meta):
    p = meta.get("params", {})
    dirty = f" (+ uncommitted changes: {meta['dirty']})" if meta.get("dirty") else ""
    return [
        f"* date: {meta.get('date', '?')}, run time {meta.get('elapsed', '?')}",
        f"* module: tree at commit `{meta.get('commit', '?')}` (last change to the module or "
        f"provider: `{meta.get('module_commit', '?')}`){dirty}, "
        f"mroce.ko sha256 `{meta.get('ko_sha256', '?')[:16]}`",
        f"* guest kernel {meta.get('guest_kernel', '?')}, {meta.get('qemu', '?')}, TCG, "
        f"host {meta.get('host_cpus', '?')} CPUs ({meta.get('host_cpu_model', '?')})",
        f"* perftest bw: -D {p.get('duration')} -f {p.get('margin')} (measured window "
        f"{p.get('duration', 0) - 2 * p.get('margin', 0)} s; loss sweep -D "
        f"{p.get('loss_duration')}), lat: -n {p.get('lat_iters')}; iperf3 TCP -t D-2f -O f, "
        f"UDP -t D-f; repeats {p.get('repeat')} (loss sweep {p.get('loss_repeat')}), "
        "transports interleaved, order rotating"
        + (f"; test processes at nice {p['nice']}" if p.get("nice") else "")
        + (f"; single path verbs: {p.get('single_verbs')}" if p.get("single_verbs") else "")
        + (f"; write_lat tail under loss at {p['loss_lat']} %" if p.get("loss_lat") else ""),
        "* cells: median (min–max) over the repeats; ratios of medians; “host other” = host "
        "CPU cores used by processes other than this run's qemus during the measured window "
        "(median)",
        "* raw: TCP = iperf3 TCP with write size = message size; UDP = iperf3 UDP datagrams "
        "of min(size, 1472) B (receiver side, sender unthrottled); latency: udp_pingpong "
        "(busy-polling UDP ping-pong, RTT/2 like perftest)",
        ""]


def ports_line(ports):
    """The ports a path's driver saw (ports.json): device, netdev and its
    MTU, the port's active_mtu; "" without them."""
    seen = []
    for end in ports.values():
        for dev, x in end.items():
            s = (f"{dev} on {x.get('netdev') or '?'} (MTU {x.get('netdev_mtu') or '?'}): "
                 f"active_mtu {x.get('active_mtu') or '?'}")
            if s not in seen:
                seen.append(s)
    return "* ports (ibv_devinfo): " + ", ".join(seen) + "\n" if seen else ""


def path_table(path, rows, ports=None):
    tr = ["mroce", "rxe", "tcp", "udp"] if path in RXE_PATHS else ["mroce", "tcp", "udp"]
    L = [f"## {PATH_TITLE[path]}\n"]
    if ports:
        L.append(ports_line(ports))
    hdr = ["scenario", "metric"] + [TNAME[t] for t in tr]
    if path in RXE_PATHS:
        hdr.append("mroce/rxe")
    hdr += ["mroce/raw", "host other"]
    L.append("| " + " | ".join(hdr) + " |")
    L.append("|" + "---|" * len(hdr))
    for r in rows:
        cells = [r.scenario, f"{r.metric} [{r.unit}]"]
        for t in tr:
            c = cell(r.values.get(t))
            if r.failed.get(t):
                c += f" ({r.failed[t]} failed)"
            cells.append(c)
        if path in RXE_PATHS:
            cells.append(fmt(r.ratio_rxe) if r.ratio_rxe is not None else "–")
        cells.append(f"{fmt(r.ratio_raw)} ({r.raw})" if r.ratio_raw is not None else "–")
        cells.append(fmt(r.host_other["median"], 2) if r.host_other else "–")
        L.append("| " + " | ".join(cells) + " |")
    L.append("")
    return L


def markdown(meta, rows, targets):
    L = ["# mroce bench: mroce vs rdma_rxe vs kernel TCP/UDP\n"]
    if meta:
        L += header(meta)
    for path in ("pair", "loop", "single", "jumbo"):
        pr = [r for r in rows if r.path == path and r.group != "bottleneck"]
        if pr:
            L += path_table(path, pr, (meta or {}).get("ports", {}).get(path))
    L += bottleneck_markdown([r for r in rows if r.group == "bottleneck"])
    L.append("## Targets\n")
    L.append("| target | goal | measured | met |")
    L.append("|---|---|---|---|")
    for t in targets:
        met = {True: "yes", False: "**no**", None: "–"}[t["met"]]
        v = fmt(t["value"]) if t["value"] is not None else "–"
        L.append(f"| {t['target']} | {t['goal']} | {v} | {met} |")
    L.append("")
    return "\n".join(L)


def bottleneck_markdown(rows):
    if not rows:
        return []
    r0 = rows[0]
    b = r0.bottleneck or {}
    variants = []
    for r in rows:
        for v in r.values:
            if v not in variants:
                variants.append(v)
    L = [f"## Bottleneck: {r0.flows} concurrent RC flows B → A (write_bw "
         f"{size_label(r0.size)}) through one "
         f"rate-limited, ECN-marking queue on B's egress (2 guests)\n"]
    if b:
        L.append(f"* bottleneck: `tbf rate {b.get('rate_bps', 0) / 1e6:g}mbit burst {b.get('burst')}` "
                 f"→ `{b.get('aqm')}`, on B's eth0 (MTU {b.get('mtu')}); only RoCE "
                 f"(UDP to {' and '.join(str(x) for x in b.get('udp_ports', []))}) goes through it, "
                 f"the control TCP bypasses it")
    L.append(f"* each flow: `ib_write_bw -s 65536 -N -D {r0.duration} -f 1`, "
             "the three clients started together on B; window: from the last flow's start to "
             "0.5 s before the first one's end; goodput: in-order packets at the receiver × MTU "
             "payload over the window, from the receiving QPs' `rq_psn` (RDMA netlink on A "
             "every 0.1 s; per-second values interpolated for the settling times); “perftest”: "
             "the sum of the clients' own BW averages (each over its own `-D` window minus "
             "1 s margins); backlog: netlink samples of the AQM qdisc in the window; "
             "drops/marks and device counters: from before the first client's start to the "
             "last one's end (\"within the window\": only the window); mroce variants: "
             "`cc_algo` written on both guests and `mroce0` re-created before each run")
    L.append("")
    hdr = ["metric"] + [bn_title(v) for v in variants]
    L.append("| " + " | ".join(hdr) + " |")
    L.append("|" + "---|" * len(hdr))
    for r in rows:
        cells = [r.metric + (f" [{r.unit}]" if r.unit else "")]
        for v in variants:
            if v not in r.values:
                cells.append("n/a")
                continue
            sv = r.values.get(v)
            c = cell(sv)
            if sv and r.unit in ("packets", "") and \
                    all(float(sv[k]).is_integer() for k in ("median", "min", "max")):
                c = count_cell(sv)
            ns = (r.not_settled or {}).get(v, 0)
            fl = r.failed.get(v, 0) - ns
            if ns:
                c = (c + " " if c != "–" else "") + f"({ns} {r.none_label})"
            if fl:
                c += f" ({fl} failed)"
            cells.append(c)
        L.append("| " + " | ".join(cells) + " |")
    notes = [n for r in rows for n in r.notes]
    if notes:
        L.append("\nFlows that ended with an error (time since the last flow's start):\n")
        L += [f"* {n}" for n in notes]
    if r0.host_other:
        L.append(f"\nhost other (CPU cores busy outside this run's qemus, median over the runs): "
                 f"{fmt(r0.host_other['median'], 2)}")
    L.append("")
    return L
