# SPDX-License-Identifier: GPL-2.0-only
"""The two ends of a run as the driver sees them: LocalEnd runs processes
on this guest (in a netns, on a CPU), RemoteEnd asks the agent on guest A
(agent.py) over the pair link, one JSON object per line each way.  Both
have the same methods, so the driver does not care which end is where."""

import json
import socket
import sys
import threading
import time

from . import sysinfo
from .common import AGENT_PORT
from .proc import Proc, listening, run_cmd


class LocalEnd:
    """Runs processes on this guest (optionally in a netns, on a CPU)."""

    def __init__(self, netns=None, cpu=None):
        self.netns, self.cpu = netns, cpu
        self.procs = {}

    def start(self, rid, argv, listen=None, timeout=30, env=None):
        """Start ARGV as RID; with LISTEN = (proto, port), return only once
        it has that port bound: (True, "") or (False, its output)."""
        p = Proc(argv, self.netns, self.cpu, env)
        self.procs[rid] = p
        if listen:
            end = time.monotonic() + timeout
            while not listening(p.p.pid, *listen):
                if p.p.poll() is not None or time.monotonic() > end:
                    return False, p.output()[-2000:]
                time.sleep(0.05)
        return True, ""

    def proc(self, rid):
        return self.procs[rid]

    def wait(self, rid, timeout):
        p = self.procs.pop(rid)
        rc = p.wait(timeout)
        return rc, p.output()

    def run(self, argv, timeout=60):
        return run_cmd(argv, self.netns, timeout)

    def stat(self):
        return sysinfo.cpu_snapshot()

    def counters(self, dev):
        return sysinfo.hw_counters(dev)

    def gid(self, dev, prefix):
        return sysinfo.gid_index(dev, prefix)

    def kill_all(self):
        for p in list(self.procs.values()):
            p.kill()


# An agent call that takes this much longer than its own timeout (at
# least CALL_MIN s) means the pair link or the agent is gone: end the
# path, do not hang the bench.
CALL_MIN = 60
CALL_SLACK = 120

# What this guest's view of a dead pair link looks like, for the console.
LINK_DIAG = ["sh", "-c", "ip -s -d link show; ss -tni; "
             "grep -E '^(Ip|Tcp|Udp):' /proc/net/snmp; dmesg | tail -n 40"]


class RemoteEnd:
    """The agent on guest A, over the pair link (JSON lines on TCP)."""

    def __init__(self, addr, deadline):
        while True:
            try:
                self.sock = socket.create_connection((addr, AGENT_PORT), timeout=5)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit(f"bench: agent {addr}:{AGENT_PORT} not reachable")
                time.sleep(1)
        self.sock.settimeout(None)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.f = self.sock.makefile("rwb")
        self.lock = threading.Lock()

    def call(self, **req):
        limit = max(req.get("timeout") or 0, CALL_MIN) + CALL_SLACK
        with self.lock:
            self.sock.settimeout(limit)
            try:
                self.f.write((json.dumps(req) + "\n").encode())
                self.f.flush()
                line = self.f.readline()
            except (socket.timeout, OSError) as e:
                rc, out = run_cmd(LINK_DIAG, None, 30)
                print(f"bench: pair link state (rc {rc}):\n{out}",
                      file=sys.stderr, flush=True)
                raise SystemExit(f"bench: agent: no answer to {req.get('op')} "
                                 f"within {limit} s ({e}): is the pair link "
                                 f"down?") from None
        if not line:
            raise SystemExit("bench: agent closed the connection")
        return json.loads(line)

    def start(self, rid, argv, listen=None, timeout=30, env=None):
        r = self.call(op="start", id=rid, argv=argv, listen=listen, timeout=timeout, env=env)
        return r["ok"], r.get("err", "")

    def wait(self, rid, timeout):
        r = self.call(op="wait", id=rid, timeout=timeout)
        return r["rc"], r["out"]

    def run(self, argv, timeout=60):
        r = self.call(op="run", argv=argv, timeout=timeout)
        return r["rc"], r["out"]

    def stat(self):
        r = self.call(op="stat")
        r["cpu"]["t"] = time.monotonic()     # remote clocks differ: local time
        return r["cpu"]

    def counters(self, dev):
        return self.call(op="counters", dev=dev)["counters"]

    def gid(self, dev, prefix):
        r = self.call(op="gid", dev=dev, prefix=prefix)
        if "gid" not in r:
            raise SystemExit(f"bench: agent: no GID on {dev}: {r.get('err')}")
        return r["gid"]

    def qps_start(self, dev, interval):
        self.call(op="qps_start", dev=dev, interval=interval)

    def qps_stop(self):
        """The agent's samples, in this machine's monotonic time (offset by
        the agent's clock at the reply; the control link is not shaped)."""
        r = self.call(op="qps_stop")
        off = time.monotonic() - r["now"]
        return [[t + off, q] for t, q in r["samples"]], r.get("error")

    def hello(self, nice=0):
        return self.call(op="hello", nice=nice)

    def quit(self):
        try:
            self.call(op="quit")
        except (SystemExit, OSError):
            pass
