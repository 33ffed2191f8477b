# SPDX-License-Identifier: GPL-2.0-only
"""`bench.py report` (host): the records of every path (runs.jsonl) and the
host monitor's samples -> table rows -> summary.json, summary.md, charts.

A row is a Row: what it measures is in its fields (path, group, verb,
size, loss level, metric), its cells are spreads (median, min, max, n) per
transport.  The label the table shows ("write_bw 65536 B", "loss 1 %") is
derived from the fields; nothing is parsed back from it."""

import json
import os
import statistics
import sys
from dataclasses import dataclass, field

from . import bottleneck
from .common import (JUMBO_MTU, JUMBO_PMTU, PATHS, RXE_PATHS, VERBS, bn_variant, parse_event,
                     size_label)

GROUPS = ("bw", "lat", "loss", "cpu", "wire", "bottleneck")     # the table's order
# the wire rows: what the QPs really used
MTU_METRIC = "path MTU (perftest's Mtu line, every run)"
PKT_METRIC = "bytes per sent packet (client's tx_bytes / tx_pkts: payload + MetaRoCE header)"
# the latency rows: perftest's ib_*_lat and udp_pingpong print all four
LAT_METRICS = (("t_typical", "latency typical"), ("t_avg", "latency average"),
               ("p99", "latency p99"), ("p999", "latency p99.9"))
# the tail under loss (write_lat at a netem loss level)
LOSS_LAT_METRICS = (("p99", "write_lat p99"), ("p999", "write_lat p99.9"))
WC_STATUS = {5: "IBV_WC_WR_FLUSH_ERR", 9: "IBV_WC_REM_INV_REQ_ERR", 10: "IBV_WC_REM_ACCESS_ERR",
             11: "IBV_WC_REM_OP_ERR", 12: "IBV_WC_RETRY_EXC_ERR", 13: "IBV_WC_RNR_RETRY_EXC_ERR"}


@dataclass
class Row:
    path: str                   # pair, loop, single, jumbo
    group: str                  # one of GROUPS
    metric: str
    unit: str
    values: dict                # transport (bottleneck: variant) -> spread or None
    failed: dict                # transport -> failed runs
    better: str = "higher"
    raw: str = None             # the raw reference of mroce/raw: tcp or udp
    verb: str = None            # bw, lat, cpu: write, send, read
    size: int = None            # message size (bottleneck: each flow's)
    loss: float = None          # loss: the netem loss rate in %
    host_other: dict = None     # spread of the runs' "host other"
    gbps: dict = None           # loss: goodput spreads, per transport
    baseline_gbps: dict = None  # loss: the lossless spreads
    order: int = 0              # bottleneck: position in its table
    flows: int = None           # bottleneck: concurrent flows
    none_label: str = None      # bottleneck: what a None value of an ok run means
    not_settled: dict = None    # bottleneck: runs with such a None, per variant
    bottleneck: dict = None     # bottleneck: tc setup (rate_bps, burst, aqm, ...)
    duration: int = None        # bottleneck: perftest -D
    notes: list = field(default_factory=list)   # bottleneck: flows that failed

    @property
    def ratio_rxe(self):
        return ratio(self.values.get("mroce"), self.values.get("rxe"))

    @property
    def ratio_raw(self):
        return ratio(self.values.get("mroce"), self.values.get(self.raw)) if self.raw else None

    @property
    def scenario(self):
        if self.group == "wire" and self.size is None:
            return "all perftest runs"
        if self.group in ("bw", "cpu", "wire"):
            return f"{self.verb}_bw {self.size} B"
        if self.group == "lat":
            return f"{self.verb}_lat {self.size} B"
        if self.group == "loss":
            return f"loss {self.loss:g} %"
        return f"bottleneck {self.flows} x write_bw {size_label(self.size)}"

    def sort_key(self):
        k = (PATHS.index(self.path), GROUPS.index(self.group))
        if self.group == "bw":
            return k + (VERBS.index(self.verb), self.size, self.metric)
        if self.group == "lat":
            return k + (VERBS.index(self.verb), 0, "")
        if self.group == "loss":
            return k + (self.loss, 0, "")
        if self.group == "bottleneck":
            return k + (self.order, 0, "")
        if self.group == "wire":        # the MTU (all runs) first
            return k + (0 if self.size is None else 1, 0, self.metric)
        return k + (0, 0, self.metric)

    def to_json(self):
        """The row as summary.json has it."""
        j = {"path": self.path, "scenario": self.scenario, "metric": self.metric,
             "unit": self.unit, "better": self.better, "values": self.values,
             "failed": self.failed, "mroce/rxe": self.ratio_rxe, "raw": self.raw,
             "mroce/raw": self.ratio_raw}
        if self.group in ("bw", "lat", "loss"):
            j["host_other"] = self.host_other
        if self.group == "loss":
            j.update(gbps=self.gbps, baseline_gbps=self.baseline_gbps)
        if self.group == "bottleneck":
            j.update(table="bottleneck", order=self.order, host_other=self.host_other,
                     flows=self.flows, none_label=self.none_label, bottleneck=self.bottleneck,
                     duration=self.duration, not_settled=self.not_settled)
            if self.notes:
                j["notes"] = self.notes
        return j


def find_row(rows, path, group, metric, **key):
    """The row of PATH, GROUP and METRIC whose fields match KEY (verb,
    size, loss), or None."""
    for r in rows:
        if (r.path, r.group, r.metric) == (path, group, metric) and \
                all(getattr(r, k) == v for k, v in key.items()):
            return r
    return None


def load_jsonl(path):
    rows = []
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    try:
                        rows.append(json.loads(line))
                    except ValueError:
                        pass
    except OSError:
        pass
    return rows


def spread(vals):
    vals = [v for v in vals if v is not None]
    if not vals:
        return None
    return {"median": statistics.median(vals), "min": min(vals), "max": max(vals), "n": len(vals)}


def ratio(a, b):
    if not a or not b or not b["median"]:
        return None
    return a["median"] / b["median"]


def host_other(hostmon, path_dir, rid):
    """Cores used on the host by everything but this run's qemus, between
    the run's w0/w1 events (else start/end)."""
    evs = {}
    for s in hostmon:
        if s.get("dir") != path_dir:
            continue
        ev = parse_event(s["ev"])
        if ev and ev[0] == rid:
            evs[ev[1]] = s
    for a, b in (("w0", "w1"), ("start", "end")):
        if a in evs and b in evs:
            x, y = evs[a], evs[b]
            dt = y["t"] - x["t"]
            dj = y["total"] - x["total"]
            if dt <= 0 or dj <= 0:
                continue
            other = (y["busy"] - x["busy"]) - (y["qemu"] - x["qemu"])
            return max(0.0, other / dj * x["ncpu"])
    return None


# the results folder: path -> folder of its guest's /results
PATH_DIRS = (("pair", "pair-b"), ("single", "single"), ("jumbo", "single/jumbo"),
             ("loop", "single/loop"))


def load_results(out):
    """meta.json and the runs of each path, each run with its host_other;
    the ports each path's driver saw (ports.json) in meta["ports"]."""
    meta = {}
    try:
        with open(f"{out}/meta.json") as f:
            meta = json.load(f)
    except (OSError, ValueError):
        pass
    hostmon = load_jsonl(f"{out}/hostmon.jsonl")
    runs = {}
    for path, d in PATH_DIRS:
        r = load_jsonl(f"{out}/{d}/runs.jsonl")
        if r:
            for x in r:
                x["host_other"] = host_other(hostmon, os.path.basename(d), x["id"])
            runs[path] = r
        try:
            with open(f"{out}/{d}/ports.json") as f:
                meta.setdefault("ports", {})[path] = json.load(f)
        except (OSError, ValueError):
            pass
    return meta, runs


class Rows:
    """Builds the rows of one report."""

    def __init__(self, runs, meta):
        self.runs = runs
        self.params = meta.get("params", {})
        self.rows = []

    def sel(self, path, **kw):
        return [r for r in self.runs.get(path, [])
                if all(r.get(k) == v for k, v in kw.items())]

    def add(self, path, group, metric, unit, vals, raw=None, better="higher",
            failed=None, **fields):
        """VALS: transport -> the runs' values (None: a failed run)."""
        row = Row(path=path, group=group, metric=metric, unit=unit, better=better, raw=raw,
                  values={t: spread([x for x in v if x is not None]) for t, v in vals.items()},
                  failed=failed if failed is not None else
                  {t: sum(1 for x in v if x is None) for t, v in vals.items()},
                  **fields)
        self.rows.append(row)
        return row

    def build(self):
        for path in self.runs:
            self.path_rows(path)
        self.bottleneck_rows(self.runs.get("pair", []))
        self.rows.sort(key=Row.sort_key)
        return self.rows

    def path_rows(self, path):
        tr = ["mroce", "rxe"] if path in RXE_PATHS else ["mroce"]
        runs = self.runs[path]
        sel = self.sel
        loss_size = self.params.get("loss_size", 65536)
        udp_max = self.params.get("udp_max", 1472)
        lossless = (None, 0.0)
        bw_runs = [r for r in runs if r["kind"] == "bw" and r.get("loss") is None]
        verbs = []
        for r in runs:
            if r["kind"] == "bw" and r["verb"] not in verbs:
                verbs.append(r["verb"])
        for verb in verbs:
            for size in sorted({r["size"] for r in bw_runs}):
                rs = {t: [r for r in sel(path, kind="bw", verb=verb, size=size, transport=t)
                          if r.get("loss") is None] for t in tr}
                raw = {}
                if verb == "write":
                    raw["tcp"] = [r for r in sel(path, kind="iperf", proto="tcp", size=size)
                                  if r.get("loss") is None]
                    raw["udp"] = sel(path, kind="iperf", proto="udp", size=min(size, udp_max))
                if not any(rs.values()):
                    continue
                ho = others(sum(rs.values(), []) + sum(raw.values(), []))
                g = {t: [r["gbps"] if r.get("ok") else None for r in v]
                     for t, v in list(rs.items()) + list(raw.items())}
                self.add(path, "bw", "throughput", "Gb/s", g, "tcp", verb=verb, size=size,
                         host_other=ho)
                mr = {t: [r["msg_s"] / 1e6 if r.get("ok") else None for r in v]
                      for t, v in rs.items()}
                if "udp" in raw:
                    mr["udp"] = [r["msg_s"] / 1e6 if r.get("ok") and "msg_s" in r else None
                                 for r in raw["udp"]]
                self.add(path, "bw", "message rate", "Mmsg/s", mr, "udp", verb=verb, size=size,
                         host_other=ho)
        def lossless_lat(**key):
            return [r for r in sel(path, kind="lat", **key) if r.get("loss") is None]
        for verb in [v for v in VERBS if lossless_lat(verb=v)]:
            rs = {t: lossless_lat(verb=verb, transport=t) for t in tr}
            rs["udp"] = sel(path, kind="udplat")
            size = (rs["mroce"] or [{}])[0].get("size", 8)
            ho = others(sum(rs.values(), []))
            for key, label in LAT_METRICS:
                self.add(path, "lat", label, "µs",
                         {t: [r.get(key) if r.get("ok") else None for r in v]
                          for t, v in rs.items()},
                         "udp", better="lower", verb=verb, size=size, host_other=ho)

        def lruns(t, lvl):
            if t == "tcp":
                rs = sel(path, kind="iperf", proto="tcp", size=loss_size)
            else:
                rs = sel(path, kind="bw", verb="write", size=loss_size, transport=t)
            return [r for r in rs if r.get("loss") in lvl]
        lrs = [r for r in runs if r.get("loss") is not None and r["kind"] != "lat"]
        if lrs:
            tt = tr + ["tcp"]
            # lossless baseline: the write_bw rows' runs and the sweep's 0 %
            base = {t: spread([r["gbps"] for r in ok(lruns(t, lossless))]) for t in tt}
            for lvl in sorted({r["loss"] for r in lrs}):
                if lvl == 0:
                    continue
                rs = {t: lruns(t, (lvl,)) for t in tt}
                fr = {}
                for t, v in rs.items():
                    b = base.get(t)
                    fr[t] = [(r["gbps"] / b["median"] if r.get("ok") else 0.0)
                             if b and b["median"] else None for r in v]
                # a failed run is goodput 0 here, not a missing value
                self.add(path, "loss", "goodput / lossless", "fraction", fr, "tcp", loss=lvl,
                         failed={t: sum(1 for r in v if not r.get("ok")) for t, v in rs.items()},
                         host_other=others(sum(rs.values(), [])),
                         gbps={t: spread([r["gbps"] for r in ok(v)]) for t, v in rs.items()},
                         baseline_gbps=base)
        # the tail under loss: write_lat's p99 and p99.9 at each level
        llat = [r for r in runs if r["kind"] == "lat" and r.get("loss")]
        for lvl in sorted({r["loss"] for r in llat}):
            rs = {t: [r for r in llat if r["transport"] == t and r["loss"] == lvl] for t in tr}
            for key, label in LOSS_LAT_METRICS:
                self.add(path, "loss", label, "µs",
                         {t: [r.get(key) if r.get("ok") else None for r in v]
                          for t, v in rs.items()},
                         better="lower", loss=lvl, verb="write",
                         size=(llat[0].get("size", 8)), host_other=others(sum(rs.values(), [])))
        # CPU per GB moved (lossless write_bw loss_size, measured window)
        cpu = {}
        for t in tr + ["tcp"]:
            kern, tot = [], []
            for r in ok(lruns(t, lossless)):
                c = r.get("cpu")
                if not c:
                    continue
                secs = max(x["secs"] for x in c.values())
                gb = r["gbps"] * secs / 8
                if gb <= 0:
                    continue
                kern.append(sum(x["kernel"] for x in c.values()) / gb)
                tot.append(sum(x["kernel"] + x["user"] for x in c.values()) / gb)
            cpu[t] = (kern, tot)
        if any(v[0] for v in cpu.values()):
            self.add(path, "cpu", "guest CPU kernel (sys+irq+softirq) per GB", "CPU-s/GB",
                     {t: v[0] for t, v in cpu.items()}, "tcp", better="lower",
                     verb="write", size=loss_size)
            self.add(path, "cpu", "guest CPU total per GB", "CPU-s/GB",
                     {t: v[1] for t, v in cpu.items()}, "tcp", better="lower",
                     verb="write", size=loss_size)
        self.wire_rows(path, tr)

    def wire_rows(self, path, tr):
        """What the QPs used: the path MTU perftest printed (every bw and
        lat run that recorded it, failed ones too: it is set up before the
        test), and for mroce the bytes per packet its client sent during
        the lossless write_bw LOSS_SIZE runs (the device's hw_counters; not
        on loop, where client and server share the device)."""
        loss_size = self.params.get("loss_size", 65536)
        runs = [r for r in self.runs[path] if r["kind"] in ("bw", "lat") and "mtu" in r]
        if runs:
            self.add(path, "wire", MTU_METRIC, "B",
                     {t: [r["mtu"] for r in runs if r["transport"] == t] for t in tr})
        per = []
        if path == "loop":      # one device: its tx counts the responder's ACKs too
            return
        for r in ok(self.sel(path, kind="bw", verb="write", size=loss_size, transport="mroce")):
            c = (r.get("counters") or {}).get("client") or {}
            if r.get("loss") in (None, 0.0) and c.get("tx_pkts") and c.get("tx_bytes"):
                per.append(c["tx_bytes"] / c["tx_pkts"])
        if per:
            self.add(path, "wire", PKT_METRIC, "B", {"mroce": per}, verb="write", size=loss_size)

    def bottleneck_rows(self, runs):
        """The bottleneck scenario's rows: one column per variant
        (mroce-<cc>, rxe), metrics re-derived from the raw records."""
        bn = [r for r in runs if r.get("kind") == "bottleneck"]
        if not bn:
            return
        variants = []
        for r in bn:
            if bn_variant(r) not in variants:
                variants.append(bn_variant(r))
        for r in bn:
            if r.get("ok"):
                r["result"] = bottleneck.analyze(r)
        common = dict(host_other=others(bn), flows=max(r.get("flows", 3) for r in bn),
                      bottleneck=next((r["bottleneck"] for r in bn if r.get("bottleneck")), {}),
                      size=bn[0].get("size", 65536), duration=bn[0].get("duration"))
        order = [0]

        def row(metric, unit, fn, applies=lambda v: True, better="higher", none=None):
            vals = {}
            for v in variants:
                if applies(v):
                    vals[v] = [fn(r) if r.get("ok") else None for r in bn if bn_variant(r) == v]
            order[0] += 1
            ns = {v: sum(1 for r in bn if bn_variant(r) == v and r.get("ok") and fn(r) is None)
                  for v in vals} if none else None
            return self.add("pair", "bottleneck", metric, unit, vals, better=better,
                            order=order[0], none_label=none, not_settled=ns, **common)

        def res(k):
            return lambda r: r["result"].get(k)

        def cnt(end, *names):
            return lambda r: sum(r["counters"][end].get(n, 0) for n in names)

        def is_mroce(v):
            return v.startswith("mroce")

        def is_rxe(v):
            return v == "rxe"

        def qp_median(k):
            return lambda r: (statistics.median(r["qp_state"][k])
                              if r.get("qp_state", {}).get(k) else None)

        for i in range(common["flows"]):
            row(f"goodput flow {i + 1}" + (" (first to start)" if i == 0 else ""), "Mb/s",
                lambda r, i=i: r["result"]["goodput"][i] if i < len(r["result"]["goodput"])
                else None)
        row("goodput aggregate", "Mb/s", res("aggregate"))
        row("goodput aggregate, perftest (cross-check)", "Mb/s", res("perftest_aggregate"))
        row("aggregate / bottleneck rate", "fraction", res("utilisation"))
        row("bottleneck output (tbf bytes: headers and retransmissions included)", "Mb/s",
            res("wire_mbps"))
        row("Jain fairness index (window means)", "", res("jain"))
        row("short-term fairness: median of the per-second Jain indices", "",
            res("jain_per_second_median"))
        row("flow start spread", "s", res("start_spread"), better="lower")
        row(f"time to stable aggregate ({bottleneck.BN_BIN:g}-s sums within "
            f"±{bottleneck.BN_STABLE:.0%} of the window mean from then on)", "s",
            res("settle_aggregate"), better="lower", none="not settled")
        row(f"time to fair shares ({bottleneck.BN_BIN:g}-s Jain ≥ {bottleneck.BN_FAIR:g} "
            "from then on)", "s", res("settle_fair"), better="lower", none="not settled")
        row("bottleneck backlog average", "packets", res("backlog_avg"), better="lower")
        row("bottleneck backlog max", "packets", res("backlog_max"), better="lower")
        row("bottleneck queueing delay average (backlog bytes / rate)", "ms",
            res("queue_delay_ms"), better="lower")
        row("bottleneck drops, all", "packets", res("drops"), better="lower")
        row("bottleneck drops within the window", "packets", res("drops_window"), better="lower")
        row("bottleneck drops: queue full", "packets", res("drops_overflow"), better="lower")
        row("bottleneck drops: AQM", "packets", res("drops_aqm"), better="lower")
        row("bottleneck ECN CE marks", "packets", res("marks"))
        row("sender retransmitted packets (mroce tx_retx_pkts + tx_read_rereq)", "packets",
            cnt("client", "tx_retx_pkts", "tx_read_rereq", "retx_pkts"), is_mroce, better="lower")
        row("sender RTO events (mroce rto_expired)", "", cnt("client", "rto_expired", "rto_events"), is_mroce,
            better="lower")
        row("sender spurious retransmissions (mroce retx_spurious)", "packets",
            cnt("client", "retx_spurious"), is_mroce, better="lower")
        row("receiver CE-marked arrivals (mroce rx_ce_pkts)", "packets",
            cnt("server", "rx_ce_pkts"), is_mroce)
        row("QP window at the end, median of flows (mroce cwnd_pkts)", "packets",
            qp_median("cwnd_pkts"), is_mroce)
        row("QP rate at the end, median of flows (mroce rate_mbps)", "Mb/s",
            qp_median("rate_mbps"), is_mroce)
        row("sender retries: go-back-N restarts (rxe completer_retry_err)", "",
            cnt("client", "completer_retry_err"), is_rxe, better="lower")
        row("sender NAKs received (rxe rcvd_seq_err)", "", cnt("client", "rcvd_seq_err"), is_rxe,
            better="lower")
        row("sender local xmit refusals, resent (rxe send_err)", "", cnt("client", "send_err"),
            is_rxe, better="lower")
        row("receiver out-of-sequence + duplicate packets (rxe)", "packets",
            cnt("server", "out_of_seq_request", "duplicate_request"), is_rxe, better="lower")
        last = row("flows that failed before the end", "", res("flows_failed"), better="lower")
        for r in bn:
            if not r.get("ok"):
                last.notes.append(f"`{r['id']}`: {r.get('error', 'failed')}")
                continue
            for x in r["result"].get("failures", []):
                st = WC_STATUS.get(x["status"], f"status {x['status']}") \
                    if x["status"] is not None else f"exit {x['rc']}"
                lp = f"{x['last_progress']:.1f} s" if x["last_progress"] is not None \
                    else "its start"
                last.notes.append(f"`{r['id']}` flow {x['flow']}: {st}, last progress at {lp}")


def ok(rs):
    return [r for r in rs if r.get("ok")]


def others(rs):
    return spread([r["host_other"] for r in rs if r.get("host_other") is not None])


def jumbo_mtu(rows, ports):
    """The jumbo path's MTU check: (the smallest MTU seen, whether every
    mroce port reported active_mtu JUMBO_PMTU on a JUMBO_MTU netdev and
    every mroce perftest run printed JUMBO_PMTU, what was wrong), or
    (None, None, why) when there is nothing to check."""
    r = find_row(rows, "jumbo", "wire", MTU_METRIC)
    pp = [x for end in (ports or {}).values() for x in end.values()
          if x.get("transport") == "mroce"]
    v = r.values.get("mroce") if r else None
    seen = ([v["min"], v["max"]] if v else []) + [x.get("active_mtu") or 0 for x in pp]
    why = []
    if not v:
        why.append("no mroce run recorded its path MTU")
    elif r.failed.get("mroce"):
        why.append(f"{r.failed['mroce']} mroce runs printed no MTU")
    if not pp:
        why.append("no ports.json")
    if any(x != JUMBO_PMTU for x in seen):
        why.append(f"MTUs seen {min(seen)}..{max(seen)}")
    nd = [x.get("netdev_mtu") for x in pp if x.get("netdev_mtu") != JUMBO_MTU]
    if nd:
        why.append(f"netdev MTU {nd}")
    if not r and not pp:
        return None, None, "; ".join(why)
    return (min(seen) if seen else None), not why, "; ".join(why)


def targets(rows, ports=None):
    """The issue's targets, evaluated on medians.  PORTS: meta["ports"]
    (the jumbo path's rows are listed only when it ran)."""
    t = []

    def one(name, goal, got, met):
        t.append({"target": name, "goal": goal,
                  "value": got, "met": met if got is not None else None})

    def vs_rxe(name, goal, r, met):
        x = r and r.ratio_rxe
        one(name, goal, x, x is not None and met(x))

    bw64k = dict(verb="write", size=65536)
    vs_rxe("write_bw 64 KiB >= 2x rxe (2 guests)", ">= 2.0",
           find_row(rows, "pair", "bw", "throughput", **bw64k), lambda x: x >= 2)
    r = find_row(rows, "single", "bw", "throughput", **bw64k)
    x = r and ratio(r.values.get("mroce"), r.values.get("tcp"))
    one("write_bw 64 KiB >= 0.5x kernel TCP (1 guest, veth)", ">= 0.5", x,
        x is not None and x >= 0.5)
    vs_rxe("send_bw 64 B message rate >= 2x rxe (2 guests)", ">= 2.0",
           find_row(rows, "pair", "bw", "message rate", verb="send", size=64), lambda x: x >= 2)
    for m in ("typical", "average"):
        vs_rxe(f"write_lat 8 B {m} <= 0.8x rxe (2 guests)", "<= 0.8",
               find_row(rows, "pair", "lat", f"latency {m}", verb="write", size=8),
               lambda x: x <= 0.8)
    vs_rxe("write_bw 64 KiB >= 2x rxe (1 guest, same-device loopback)", ">= 2.0",
           find_row(rows, "loop", "bw", "throughput", **bw64k), lambda x: x >= 2)
    vs_rxe("send_bw 64 B message rate >= 2x rxe (1 guest, loopback)", ">= 2.0",
           find_row(rows, "loop", "bw", "message rate", verb="send", size=64), lambda x: x >= 2)
    for m in ("typical", "average"):
        vs_rxe(f"write_lat 8 B {m} <= 0.8x rxe (1 guest, loopback)", "<= 0.8",
               find_row(rows, "loop", "lat", f"latency {m}", verb="write", size=8),
               lambda x: x <= 0.8)
    for path in ("pair", "single"):
        r = find_row(rows, path, "loss", "goodput / lossless", loss=1)
        v = r and r.values.get("mroce")
        x = v["median"] if v else None
        one(f"goodput at 1 % loss >= 90 % of lossless ({'2 guests' if path == 'pair' else '1 guest'})",
            ">= 0.9", x, x is not None and x >= 0.9)
    jports = (ports or {}).get("jumbo")
    if any(r.path == "jumbo" for r in rows) or jports:
        mtu, met, _ = jumbo_mtu(rows, jports)
        t.append({"target": f"path MTU {JUMBO_PMTU} on links with MTU >= 4200 (1 guest, veth "
                            f"MTU {JUMBO_MTU}: both ports' active_mtu, every mroce run's QPs)",
                  "goal": f"= {JUMBO_PMTU}", "value": mtu, "met": met})
        r = find_row(rows, "jumbo", "bw", "throughput", **bw64k)
        x = r and ratio(r.values.get("mroce"), r.values.get("tcp"))
        one(f"write_bw 64 KiB >= 0.5x kernel TCP (1 guest, veth MTU {JUMBO_MTU})", ">= 0.5", x,
            x is not None and x >= 0.5)
        r = find_row(rows, "jumbo", "loss", "goodput / lossless", loss=1)
        v = r and r.values.get("mroce")
        x = v["median"] if v else None
        one(f"goodput at 1 % loss >= 90 % of lossless (1 guest, veth MTU {JUMBO_MTU})",
            ">= 0.9", x, x is not None and x >= 0.9)
    return t


def filled(rows, paths):
    """Pair: mroce, rxe and a raw value in one row (or, when only the
    bottleneck ran, goodput for each of its variants); else mroce, raw."""
    def full(r, need):
        return all(r.values.get(t) for t in need) and r.raw and r.values.get(r.raw)
    if "pair" in paths:
        table = [r for r in rows if r.path == "pair" and r.group != "bottleneck"]
        if table:
            return any(full(r, ["mroce", "rxe"]) for r in table)
        agg = [r for r in rows if r.group == "bottleneck" and r.metric == "goodput aggregate"]
        return bool(agg) and all(v for v in agg[0].values.values())
    return any(full(r, ["mroce"]) for r in rows)


def cmd_report(a):
    from . import charts, markdown
    out = a.out
    meta, runs = load_results(out)
    rows = Rows(runs, meta).build()
    ports = meta.get("ports", {})
    tg = targets(rows, ports)
    summary = {"meta": meta, "rows": [r.to_json() for r in rows],
               "runs": runs, "targets": tg}
    with open(f"{out}/summary.json", "w") as f:
        json.dump(summary, f, indent=1)
    md = markdown.markdown(meta, rows, tg)
    with open(f"{out}/summary.md", "w") as f:
        f.write(md)
    print(md)
    if not a.no_charts:
        charts.charts(out, runs, rows, meta.get("params", {}).get("loss_size", 65536))
    if a.require_filled and not filled(rows, runs):
        print("bench: table not filled (need mroce, rxe and raw values)", file=sys.stderr)
        return 1
    _, met, why = jumbo_mtu(rows, ports.get("jumbo"))
    if a.require_filled and "jumbo" in runs and not met:
        print(f"bench: jumbo path: not every mroce port and run had path MTU {JUMBO_PMTU} "
              f"on MTU {JUMBO_MTU}: {why} (see the table's wire rows and "
              "single/jumbo/ports.json)", file=sys.stderr)
        return 1
    return 0
