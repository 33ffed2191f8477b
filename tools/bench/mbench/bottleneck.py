# SPDX-License-Identifier: GPL-2.0-only
"""The congestion scenario: FLOWS concurrent RC writes from guest B to
guest A through one rate-limited, ECN-marking queue on B's egress.

Here: the tc commands of the bottleneck, and the metrics of a run derived
from its record (goodput per flow from the receivers' PSNs, fairness,
settling times, the queue), used by the driver when it records a run and
by the report, which re-derives them from runs.jsonl."""

import re
import statistics

from .toolparse import failed_status

BN_BIN = 2.0            # s: bins of the settling times
BN_FAIR, BN_STABLE = 0.9, 0.15  # Jain index; aggregate within +-15 % of its mean
ROCE_PORT = 4791        # rdma_rxe's UDP port; mroce's is its udp_port parameter
PSN_MASK, PSN_HALF = 0xffffff, 1 << 23


def rate_bps(rate):
    """A tc rate like 30mbit -> bit/s, or None."""
    m = re.fullmatch(r"(\d+)([kmg]?)bit", rate.lower())
    if not m:
        return None
    return int(m.group(1)) * {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}[m.group(2)]


def tc_commands(dev, rate, mark, limit, mtu, mroce_port):
    """tc batch for DEV's egress: RoCE (UDP to rxe's 4791 and mroce's
    MROCE_PORT) through tbf RATE + a marking AQM (MARK: a delay is codel's
    ce_threshold, a size red's min), everything else (the agent's and
    perftest's TCP) around it, unshaped.  -> (commands, info)."""
    bps = rate_bps(rate)
    if not bps:
        raise SystemExit(f"bench: bad --bottleneck-rate {rate} (e.g. 30mbit)")
    burst = max(bps * 2 // 8000, 2 * (mtu + 14))    # 2 ms, >= 2 frames (as fabric.sh)
    mark = mark.lower()
    if re.fullmatch(r"\d+(us|ms)", mark):
        aqm = f"codel limit {limit} ce_threshold {mark} ecn"
    elif re.fullmatch(r"\d+k?b", mark):
        n = int(mark[:-2]) * 1000 if mark.endswith("kb") else int(mark[:-1])
        aqm = (f"red limit {limit * (mtu + 14)} min {n} max {2 * n} avpkt 1000 "
               f"burst {n * 4 // 3000 + 1} probability 1.0 bandwidth {rate} ecn")
    else:
        raise SystemExit(f"bench: bad --bottleneck-mark {mark} (1ms, 500us, 30kb)")
    cmds = [f"qdisc replace dev {dev} root handle 1: prio bands 2 priomap" + " 0" * 16,
            f"qdisc add dev {dev} parent 1:2 handle 2: tbf rate {rate} "
            f"burst {burst} limit {burst + 100000}",
            f"qdisc add dev {dev} parent 2:1 handle 3: {aqm}"]
    for port in (ROCE_PORT, mroce_port):
        cmds.append(f"filter add dev {dev} parent 1: protocol ip prio 1 u32 "
                    f"match ip protocol 17 0xff match ip dport {port} 0xffff flowid 1:2")
    return cmds, {"rate_bps": bps, "burst": burst, "mtu": mtu, "aqm": aqm,
                  "limit": limit, "udp_ports": [ROCE_PORT, mroce_port]}


def qdisc_point(q):
    """{handle: stats} -> [qlen, backlog bytes, drops, marks, overflow drops,
    bytes sent, packets sent] of the bottleneck (tbf 2: with its AQM 3:)."""
    aqm, tbf = q.get("3:", {}), q.get("2:", {})
    marks = aqm.get("ce_mark", 0) + aqm.get("ecn_mark", 0) + aqm.get("marked", 0)
    over = aqm.get("drop_overlimit", 0) + aqm.get("pdrop", 0)
    return [aqm.get("qlen", 0), aqm.get("backlog", 0), tbf.get("drops", 0), marks, over,
            tbf.get("bytes", 0), tbf.get("packets", 0)]


def qdisc_totals(q0, q1):
    """Drops (queue full / AQM), marks and packets sent from Q0 to Q1."""
    a, b = qdisc_point(q0), qdisc_point(q1)
    drops = b[2] - a[2]
    over = b[4] - a[4]
    return {"drops": drops, "drops_overflow": over, "drops_aqm": drops - over,
            "marks": b[3] - a[3],
            "sent_pkts": q1.get("2:", {}).get("packets", 0) - q0.get("2:", {}).get("packets", 0),
            "aqm_drops": q1.get("3:", {}).get("drops", 0) - q0.get("3:", {}).get("drops", 0)}


def jain(xs):
    q = sum(x * x for x in xs)
    return sum(xs) ** 2 / (len(xs) * q) if xs and q > 0 else None


def settle_time(bins, ok, tail=3):
    """BINS: {start time: value}.  The start of the first bin from which
    OK(value) holds to the end (at least TAIL bins); None if never."""
    keys = sorted(bins)
    k = len(keys)
    while k > 0 and ok(bins[keys[k - 1]]):
        k -= 1
    if len(keys) - k < min(tail, len(keys)) or k == len(keys):
        return None
    return keys[k]


def flow_progress(samples, f, t_all):
    """[[t since t_all, packets the receiver took in order]] of flow F from
    the receiving QP's rq_psn (PSNs are 24 bits; the responder starts at
    the requester's first PSN).  SAMPLES: [[t, [[lqpn, rqpn, rq_psn,
    sq_psn], ...]], ...] from the agent's QP sampler."""
    out = []
    if "remote_qpn" not in f or "psn0" not in f:
        return out
    for t, qps in samples:
        for lqpn, rqpn, rq_psn, _ in qps:
            if lqpn == f["remote_qpn"] and rqpn == f.get("qpn") and rq_psn is not None:
                d = (rq_psn - f["psn0"]) & PSN_MASK
                if d < PSN_HALF:         # before RTR the PSN is not ours
                    out.append([round(t - t_all, 3), d])
    return out


def curve_at(c, t):
    """A progress curve's value at T, linear between samples, flat outside."""
    if t <= c[0][0]:
        return c[0][1]
    for (t0, b0), (t1, b1) in zip(c, c[1:]):
        if t <= t1:
            return b0 + (b1 - b0) * (t - t0) / (t1 - t0) if t1 > t0 else b1
    return c[-1][1]


def flow_bytes(f):
    """A flow's progress as [(t, payload bytes taken in order)]."""
    return [(t, pk * f.get("mtu", 1024)) for t, pk in f.get("progress", [])]


def analyze(rec):
    """A bottleneck run's record -> its metrics.  Times are seconds since
    the last flow's start (t_all); the window [W0, W1] is when every flow
    runs."""
    W0, W1 = rec["window"]
    flows = rec["flow_runs"]
    info = rec.get("bottleneck", {})
    fails = []
    for i, f in enumerate(flows):
        if f.get("perftest"):
            continue
        pg = f.get("progress", [])
        last = max((b[0] for a, b in zip(pg, pg[1:]) if b[1] > a[1]), default=None)
        fails.append({"flow": i + 1, "status": failed_status(f.get("client_out", "")),
                      "rc": f.get("client_rc"), "last_progress": last})
    r = {"flows_failed": len(fails), "failures": fails,
         "start_spread": max(f["t_header"] for f in flows) - min(f["t_header"] for f in flows),
         "window": [W0, W1]}
    # goodput in the window: in-order packets at the receiver x payload
    good, curves = [], []
    for f in flows:
        c = flow_bytes(f)
        curves.append(c)
        good.append((curve_at(c, W1) - curve_at(c, W0)) * 8 / 1e6 / (W1 - W0)
                    if len(c) >= 2 and W1 > W0 else 0.0)
    r["goodput"] = good
    r["aggregate"] = sum(good)
    r["utilisation"] = r["aggregate"] * 1e6 / info["rate_bps"] if info.get("rate_bps") else None
    r["jain"] = jain(good) or 0.0
    # perftest's own numbers (each flow over its [f, D - f]); failed flows: none
    # (0 with iterations: perftest's clock calibration failed, seen under TCG)
    pt = [f["perftest"]["gbps"] * 1e3 if f.get("perftest") and f["perftest"]["gbps"] else None
          for f in flows]
    r["perftest_goodput"] = pt
    r["perftest_aggregate"] = sum(pt) if all(x is not None for x in pt) else None

    # goodput per flow per second (JSON, short-term fairness) and per BN_BIN
    # s (settling: from which bin on the shares stay fair / the sum stays
    # near its mean); times from the window's start
    def binned(width):
        out, lo = {}, W0
        while lo + width <= W1 + 1e-9:
            out[round(lo - W0, 3)] = [(curve_at(c, lo + width) - curve_at(c, lo)) * 8 / 1e6 / width
                                      if len(c) >= 2 else 0.0 for c in curves]
            lo += width
        return out
    per_s = binned(1.0)
    r["per_second"] = {k: [round(x, 3) for x in v] for k, v in per_s.items()}
    js = [jain(v) for v in per_s.values() if jain(v) is not None]
    r["jain_per_second_median"] = statistics.median(js) if js else None
    bins = binned(BN_BIN)
    sums = {k: sum(v) for k, v in bins.items()}
    mean_agg = statistics.mean(sums.values()) if sums else 0
    r["settle_fair"] = settle_time(bins, lambda v: (jain(v) or 0) >= BN_FAIR)
    r["settle_aggregate"] = settle_time(
        sums, lambda x: mean_agg > 0 and abs(x - mean_agg) <= BN_STABLE * mean_agg)
    # the queue over the window: [t, qlen, backlog B, drops, marks, overflow, tx B, tx pkts]
    qs = [x for x in rec.get("qdisc_series", []) if W0 <= x[0] <= W1]
    r["backlog_avg"] = statistics.mean(x[1] for x in qs) if qs else None
    r["backlog_max"] = max(x[1] for x in qs) if qs else None
    r["backlog_bytes_avg"] = statistics.mean(x[2] for x in qs) if qs else None
    r["queue_delay_ms"] = (r["backlog_bytes_avg"] * 8e3 / info["rate_bps"]
                           if qs and info.get("rate_bps") else None)
    if len(qs) >= 2 and qs[-1][0] > qs[0][0]:
        r["drops_window"] = qs[-1][3] - qs[0][3]
        r["marks_window"] = qs[-1][4] - qs[0][4]
        r["wire_mbps"] = (qs[-1][6] - qs[0][6]) * 8 / 1e6 / (qs[-1][0] - qs[0][0])
    # totals over the run (first client start to the last client's end)
    r.update(qdisc_totals(rec.get("qdisc_before", {}), rec.get("qdisc_after", {})))
    return r
