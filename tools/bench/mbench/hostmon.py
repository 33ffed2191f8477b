# SPDX-License-Identifier: GPL-2.0-only
"""`bench.py hostmon` (host): whenever a driver creates an event file in
one of the watched folders (common.event_name), sample the host's CPU
(/proc/stat) and the CPU time of this run's qemu processes, one JSON line
per event in hostmon.jsonl.  The report turns two samples into "host
other": the cores busy with anything but this run's guests."""

import json
import os
import signal
import time


def host_busy_total(line):
    """The "cpu" line of /proc/stat -> (busy jiffies, all jiffies): busy =
    user nice system irq softirq steal, all = those + idle iowait."""
    v = [int(x) for x in line.split()[1:]]
    v += [0] * (8 - len(v))
    return v[0] + v[1] + v[2] + v[5] + v[6] + v[7], sum(v[:8])


def proc_cpu_ticks(stat):
    """The text of /proc/PID/stat -> utime + stime (jiffies)."""
    st = stat.rsplit(")", 1)[1].split()
    return int(st[11]) + int(st[12])


def host_sample(tag):
    """The host's CPU counters and those of the qemus whose command line
    contains TAG (bytes)."""
    with open("/proc/stat") as f:
        busy, total = host_busy_total(f.readline())
    qemu = 0
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
            if b"qemu-system" not in cmd.split(b"\0")[0] or tag not in cmd:
                continue
            with open(f"/proc/{pid}/stat") as f:
                qemu += proc_cpu_ticks(f.read())
            pids.append(int(pid))
        except (OSError, IndexError, ValueError):
            continue
    return {"t": time.time(), "busy": busy, "total": total, "qemu": qemu,
            "qemu_pids": pids, "ncpu": os.cpu_count()}


def cmd_hostmon(a):
    seen = set()
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    tag = a.tag.encode()
    with open(a.out, "a") as out:
        while True:
            for d in a.watch:
                try:
                    names = sorted(os.listdir(d))
                except OSError:
                    continue
                new = [n for n in names if (d, n) not in seen]
                if not new:
                    continue
                s = host_sample(tag)
                for n in new:
                    seen.add((d, n))
                    out.write(json.dumps(dict(s, dir=os.path.basename(os.path.dirname(d)),
                                              ev=n)) + "\n")
                out.flush()
            if stop["now"] or os.path.exists(a.stop_file):
                break
            time.sleep(a.interval)
    return 0
