# SPDX-License-Identifier: GPL-2.0-only
"""Names shared by the guests and the host: addresses, ports, the names of
runs and of the event files that tie a run to the host monitor's samples."""

import math
import re

AGENT_PORT = 7700
PAIR_A, PAIR_B = "198.51.100.1", "198.51.100.2"
SINGLE_SRV = "192.0.2.1"
LOOP_ADDR = "203.0.113.1"
# the paths with rdma_rxe (it works in init_net only: not over veth)
RXE_PATHS = ("pair", "loop")
PATHS = ("pair", "loop", "single", "jumbo")
# jumbo: the single path's veth pair with both ends at this MTU, on which
# mroce's ports report (and its QPs use) a path MTU of 4096
JUMBO_MTU = 9000
JUMBO_PMTU = 4096
VERBS = ("write", "send", "read")
GID_PREFIX = "0000:0000:0000:0000:0000:ffff:"     # IPv4-mapped
EVENT_PHASES = ("start", "w0", "w1", "end")


def log(msg):
    print(f"bench: {msg}", flush=True)


def run_name(p):
    """A plan item's (or a run record's) name, e.g. write_bw-65536-mroce,
    iperf-tcp-65536-loss1, bottleneck-mroce-metaroce."""
    if p["kind"] == "bottleneck":
        return "bottleneck-" + bn_variant(p)
    if p["kind"] in ("bw", "lat"):
        s = f"{p['verb']}_{p['kind']}-{p['size']}-{p['transport']}"
    elif p["kind"] == "iperf":
        s = f"iperf-{p['proto']}-{p['size']}"
    else:
        s = f"udplat-{p['size']}"
    if p.get("loss") is not None:
        s += f"-loss{p['loss']:g}"
    return s


def bn_variant(p):
    """A bottleneck run's variant: mroce-<cc_algo> or rxe."""
    return p["transport"] + (f"-{p['cc']}" if p.get("cc") else "")


def run_id(idx, p):
    return f"{idx:03d}-{run_name(p)}-r{p['rep']}"


# The driver marks the edges of each run's window with empty files
# SEQ-RID-PHASE in its results share; `bench.py hostmon` on the host
# samples the host's CPU when one appears, the report pairs them up.
def event_name(seq, rid, phase):
    assert phase in EVENT_PHASES
    return f"{seq:05d}-{rid}-{phase}"


_EVENT_RX = re.compile(r"\d+-(.*)-(" + "|".join(EVENT_PHASES) + r")$")


def parse_event(name):
    """event_name()'s inverse: (rid, phase), or None."""
    m = _EVENT_RX.match(name)
    return (m.group(1), m.group(2)) if m else None


def fmt(v, digits=3):
    """V with DIGITS significant digits (at least its integer part); "–"
    for None."""
    if v is None:
        return "–"
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 100:
        return f"{v:.0f}"
    d = max(0, digits - 1 - int(math.floor(math.log10(a))))
    return f"{v:.{d}f}"


def size_label(size):
    """64 KiB, or 1000 B."""
    return f"{size // 1024} KiB" if size % 1024 == 0 else f"{size} B"
