# SPDX-License-Identifier: GPL-2.0-only
"""What the driver and the agent read of their own guest, in-process (an
exec costs ~0.3 s under TCG): CPU time from /proc/stat, the RoCE v2 GIDs
and the hw_counters of RDMA devices from sysfs."""

import os
import time

SYSFS_IB = "/sys/class/infiniband"


def parse_cpu_line(line):
    """The "cpu ..." line of /proc/stat -> jiffies: user (+nice), kernel
    (system+irq+softirq), idle (+iowait), steal."""
    v = [int(x) for x in line.split()[1:]]
    v += [0] * (8 - len(v))
    user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
    return {"user": user + nice, "kernel": system + irq + softirq,
            "idle": idle + iowait, "steal": steal}


def cpu_snapshot():
    """Guest-wide CPU jiffies from /proc/stat (all CPUs)."""
    with open("/proc/stat") as f:
        line = f.readline()
    return dict({"t": time.monotonic()}, **parse_cpu_line(line), ncpu=os.cpu_count())


def cpu_delta(a, b):
    """Seconds of user / kernel (sys+irq+softirq) / idle time between two
    snapshots of one machine.  Under TCG the guest loses timer ticks when
    its vCPU threads do not get a host CPU, so the tick counts are scaled
    to the wall time (times the number of CPUs that ticked)."""
    secs = b["t"] - a["t"]
    d = {k: b[k] - a[k] for k in ("user", "kernel", "idle", "steal")}
    ticks = sum(d.values())
    ncpu = b.get("ncpu", 1)
    scale = secs * ncpu / ticks if ticks > 0 else 0
    return {"secs": secs, "ticks": ticks, "user": d["user"] * scale,
            "kernel": d["kernel"] * scale, "idle": d["idle"] * scale}


def gid_index(dev, prefix, base=SYSFS_IB, tries=50):
    """Index of DEV's RoCE v2 GID that starts with PREFIX (IPv4-mapped);
    waits up to TRIES x 0.1 s for it to appear."""
    port = f"{base}/{dev}/ports/1"
    for _ in range(tries):
        try:
            for name in sorted(os.listdir(f"{port}/gids"), key=int):
                with open(f"{port}/gids/{name}") as f:
                    g = f.read().strip()
                if not g.startswith(prefix):
                    continue
                try:
                    with open(f"{port}/gid_attrs/types/{name}") as f:
                        if f.read().strip() != "RoCE v2":
                            continue
                except OSError:
                    continue
                return int(name)
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"bench: no RoCE v2 GID {prefix}... on {dev}")


def hw_counters(dev, base=SYSFS_IB):
    """The device's port counters from sysfs (mroce and rxe both have
    hw_counters)."""
    d = f"{base}/{dev}/ports/1/hw_counters"
    out = {}
    try:
        for name in os.listdir(d):
            try:
                with open(f"{d}/{name}") as f:
                    out[name] = int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    except OSError:
        pass
    return out


def counter_delta(a, b):
    """The counters that changed from A to B, with their increase."""
    return {k: b[k] - a.get(k, 0) for k in b if b[k] != a.get(k, 0)}
