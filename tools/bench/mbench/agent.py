# SPDX-License-Identifier: GPL-2.0-only
"""`bench.py agent`: guest A of the two-guest pair.  Serves one driver
(guest B, ends.RemoteEnd): starts and waits for server processes, runs
commands, answers /proc/stat snapshots, device counters and GIDs, and
samples the PSNs of a device's QPs (the bottleneck's receivers)."""

import json
import os
import socket
import threading
import time

from . import proc, sysinfo
from .common import AGENT_PORT, log
from .ends import LocalEnd
from .netlink import IB_QPT_RC, RdmaQps


class QpSampler(threading.Thread):
    """Samples the PSNs of DEV's RC QPs every INTERVAL s: [[t, [[lqpn,
    rqpn, rq_psn, sq_psn], ...]], ...] (monotonic time of this machine)."""

    def __init__(self, dev, interval):
        super().__init__(daemon=True)
        self.dev, self.interval = dev, interval
        self.samples = []
        self.error = None
        self.halt = threading.Event()

    def run(self):
        try:
            nl = RdmaQps()
        except OSError as e:
            self.error = repr(e)
            return
        while not self.halt.is_set():
            t = time.monotonic()
            try:
                q = nl.read(self.dev)
                self.samples.append([round(t, 4), [[k, v["rqpn"], v["rq_psn"], v["sq_psn"]]
                                                   for k, v in sorted(q.items())
                                                   if v["type"] == IB_QPT_RC]])
            except OSError as e:
                self.error = repr(e)
            self.halt.wait(self.interval)
        nl.close()

    def stop(self):
        self.halt.set()
        if self.is_alive():
            self.join(timeout=5)
        return self.samples


class Agent:
    """One request (a dict with "op") -> one answer (a dict)."""

    def __init__(self, gids):
        self.gids = gids
        self.end = LocalEnd()
        self.qps = None
        self.quit = False

    def op_hello(self, req):
        proc.set_nice(req.get("nice", 0))
        return {"gids": self.gids, "ncpu": os.cpu_count()}

    def op_start(self, req):
        if req["id"] == os.environ.get("BENCH_AGENT_STALL"):
            # run-bench.sh's reboot of a hung pair, checked on demand:
            # this agent stops answering, as a hung guest A does
            log(f"agent: BENCH_AGENT_STALL: stalling at {req['id']}")
            while True:
                time.sleep(3600)
        ok, err = self.end.start(req["id"], req["argv"],
                                 tuple(req["listen"]) if req.get("listen") else None,
                                 req.get("timeout", 30), req.get("env"))
        return {"ok": ok, "err": err}

    def op_wait(self, req):
        r, out = self.end.wait(req["id"], req["timeout"])
        return {"rc": r, "out": out[-20000:]}

    def op_run(self, req):
        r, out = self.end.run(req["argv"], req.get("timeout", 60))
        return {"rc": r, "out": out[-20000:]}

    def op_stat(self, req):
        return {"cpu": sysinfo.cpu_snapshot()}

    def op_counters(self, req):
        return {"counters": sysinfo.hw_counters(req["dev"])}

    def op_gid(self, req):          # after a device was re-created
        return {"gid": sysinfo.gid_index(req["dev"], req["prefix"])}

    def op_qps_start(self, req):    # sample the PSNs of DEV's QPs
        if self.qps:
            self.qps.stop()
        self.qps = QpSampler(req["dev"], req.get("interval", 0.25))
        self.qps.start()
        return {"ok": True}

    def op_qps_stop(self, req):
        samples = self.qps.stop() if self.qps else []
        resp = {"now": time.monotonic(), "samples": samples,
                "error": self.qps.error if self.qps else "not started"}
        self.qps = None
        return resp

    def op_quit(self, req):
        self.quit = True
        return {"ok": True}

    def handle(self, req):
        fn = getattr(self, f"op_{req['op']}", None)
        if fn is None:
            return {"err": f"unknown op {req['op']}"}
        try:
            return fn(req)
        except (Exception, SystemExit) as e:    # report, keep serving
            return {"ok": False, "err": repr(e), "rc": 125, "out": repr(e)}


def cmd_agent(args):
    gids = {d: sysinfo.gid_index(d, args.gid_prefix) for d in args.devs}
    srv = socket.create_server(("0.0.0.0", AGENT_PORT), reuse_port=False)
    srv.settimeout(args.idle_timeout)
    log(f"agent: listening on {AGENT_PORT}, gids {gids}")
    try:
        conn, peer = srv.accept()
    except socket.timeout:
        log("agent: no driver connected")
        return 1
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    log(f"agent: driver {peer[0]} connected")
    f = conn.makefile("rwb")
    agent = Agent(gids)
    while not agent.quit:
        line = f.readline()
        if not line:
            log("agent: driver went away")
            break
        resp = agent.handle(json.loads(line))
        f.write((json.dumps(resp) + "\n").encode())
        f.flush()
    agent.end.kill_all()
    return 0 if agent.quit else 1
