# SPDX-License-Identifier: GPL-2.0-only
"""Parsers of the measuring tools' text output: perftest (ib_*_bw,
ib_*_lat), iperf3 -f k, udp_pingpong, `rdma resource show qp -dd` and the
kernel's line for a new mroce device.  Each returns a dict (or None when
the output has no result), which the driver stores in the run's record."""

import re


def parse_bw(out, size):
    """perftest bw result line -> msg/s and Gb/s.  perftest prints MiB/s
    with 2 decimals and Mpps with 6: use whichever is more precise."""
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if "#bytes" in line and "BW average" in line:
            for nxt in lines[i + 1:]:
                f = nxt.split()
                if len(f) >= 5 and f[0] == str(size):
                    iters, bw_avg, mpps = int(f[1]), float(f[3]), float(f[4])
                    rate_bw = bw_avg * 1048576 / size
                    rate_mp = mpps * 1e6
                    res_bw = 0.005 / bw_avg if bw_avg else 1e9
                    res_mp = 5e-7 / mpps if mpps else 1e9
                    rate = rate_bw if res_bw < res_mp else rate_mp
                    return {"iters": iters, "mib_s": bw_avg, "mpps_printed": mpps,
                            "msg_s": rate, "gbps": rate * size * 8 / 1e9}
    return None


def bw_result_line(size):
    """A regex for perftest's bw result line of SIZE (the flow's end)."""
    return rf"^\s*{size}\s+\d+\s"


def parse_lat(out):
    """perftest lat result line -> µs: min, max, typical, average, p99, p99.9."""
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if "#bytes" in line and "t_typical" in line:
            for nxt in lines[i + 1:]:
                f = nxt.split()
                if len(f) >= 9 and f[0].isdigit():
                    return {"iters": int(f[1]), "t_min": float(f[2]), "t_max": float(f[3]),
                            "t_typical": float(f[4]), "t_avg": float(f[5]),
                            "p99": float(f[7]), "p999": float(f[8])}
    return None


def parse_udplat(out):
    """udp_pingpong's "udp_pingpong: key=value ..." line."""
    m = re.search(r"udp_pingpong: (.*)", out)
    if not m:
        return None
    kv = dict(x.split("=", 1) for x in m.group(1).split() if "=" in x)
    return {"iters": int(kv["iters"]), "t_min": float(kv["t_min"]),
            "t_typical": float(kv["t_typical"]), "t_avg": float(kv["t_avg"]),
            "p99": float(kv["p99"]), "p999": float(kv["p99.9"]),
            "t_max": float(kv["t_max"]), "retries": int(kv["retries"])}


_IPERF_RX = re.compile(r"([\d.]+)-([\d.]+)\s+sec\s+([\d.]+)\s+([KMG]?)Bytes\s+([\d.]+)\s+Kbits/sec")


def parse_iperf(out, proto, size):
    """iperf3 -f k text summary.  TCP (run with -O): the sender's rate over
    the measured window (with -O the receiver's interval times are skewed).
    UDP (run without -O, sender unthrottled): the receiver's rate and
    datagram count."""
    sender = receiver = None
    for line in out.splitlines():
        m = _IPERF_RX.search(line)
        if not m:
            continue
        if line.rstrip().endswith("sender"):
            sender = (m, line)
        elif line.rstrip().endswith("receiver"):
            receiver = (m, line)
    if not sender:
        return None
    m = sender[0]
    secs = float(m.group(2)) - float(m.group(1))
    gbps = float(m.group(5)) / 1e6
    r = {"secs": secs, "sender_gbps": gbps}
    if proto == "udp":
        if not receiver:
            return None
        m = receiver[0]
        rsecs = float(m.group(2)) - float(m.group(1))
        lm = re.search(r"(\d+)/(\d+)\s+\(", receiver[1])
        if not lm or rsecs <= 0:
            return None
        lost, total = int(lm.group(1)), int(lm.group(2))
        got = max(total - lost, 0)
        r.update(lost=lost, sent=total, received=got, secs=rsecs,
                 gbps=float(m.group(5)) / 1e6, msg_s=got / rsecs)
    else:
        r.update(gbps=gbps, msg_s=gbps * 1e9 / 8 / size)
    return r


# iperf3 -i 1 lines that bound the driver's CPU window: the first interval
# (or the omitted ones) and the summary's separator
IPERF_FIRST_INTERVAL = r"omitted|0\.00-1\.0"
IPERF_SUMMARY = r"^- - - "
PERFTEST_HEADER = r"#bytes"


def flow_ids(out):
    """perftest's client output -> its QPN and first PSN, the server's QPN,
    the path MTU (the payload of a full packet)."""
    r = {}
    m = re.search(r"local address:.*QPN (0x[0-9a-f]+) PSN (0x[0-9a-f]+)", out)
    if m:
        r["qpn"], r["psn0"] = int(m.group(1), 16), int(m.group(2), 16)
    m = re.search(r"remote address:.*QPN (0x[0-9a-f]+)", out)
    if m:
        r["remote_qpn"] = int(m.group(1), 16)
    m = re.search(r"Mtu\s*:\s*(\d+)", out)
    if m:
        r["mtu"] = int(m.group(1))
    return r


def parse_mtu(out):
    """The path MTU perftest printed ("Mtu : 4096[B]", what its QPs were
    modified to), or None."""
    m = re.search(r"^\s*Mtu\s*:\s*(\d+)", out or "", re.M)
    return int(m.group(1)) if m else None


def parse_devinfo(out):
    """`ibv_devinfo -d DEV` -> {"state", "max_mtu", "active_mtu",
    "link_layer"} of its first port (MTUs in bytes), or None."""
    r = {}
    for key, rx in (("state", r"^\s*state:\s*(\S+)"),
                    ("max_mtu", r"^\s*max_mtu:\s*(\d+)"),
                    ("active_mtu", r"^\s*active_mtu:\s*(\d+)"),
                    ("link_layer", r"^\s*link_layer:\s*(\S+)")):
        m = re.search(rx, out or "", re.M)
        if m:
            r[key] = int(m.group(1)) if key.endswith("mtu") else m.group(1)
    return r if "active_mtu" in r else None


def parse_link_netdev(out):
    """The netdev in `rdma link show DEV/1` ("... netdev veth1"), or None."""
    m = re.search(r"\bnetdev (\S+)", out or "")
    return m.group(1) if m else None


def parse_link_mtu(out):
    """The MTU in `ip -o link show dev X` ("... mtu 9000 qdisc ..."), or None."""
    m = re.search(r"\bmtu (\d+)", out or "")
    return int(m.group(1)) if m else None


def failed_status(out):
    """perftest's "Failed status N" (an ibv_wc_status), or None."""
    m = re.search(r"Failed status (\d+)", out or "")
    return int(m.group(1)) if m else None


QP_STATE_FIELDS = ("cwnd_pkts", "rate_mbps", "srtt_us", "min_rtt_us", "outstanding_pkts")


def parse_qp_state(out):
    """`rdma resource show qp -dd` -> {field: [value of each QP]} of
    mroce's drv_* congestion fields."""
    return {k: [int(x) for x in re.findall(rf"\bdrv_{k} (\d+)", out)]
            for k in QP_STATE_FIELDS}


def parse_cc_added(out):
    """The congestion control in the kernel's "mroce0: added on eth0
    (transport udp, cc NAME)" line, or None."""
    m = re.search(r"mroce0: added on \S+ \(.*\bcc ([^)\s]+)\)", out)
    return m.group(1) if m else None
