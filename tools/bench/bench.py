#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""bench.py - the moving parts of `make bench` (tools/bench/run-bench.sh).

Subcommands:
  agent    (guest A of the two-guest pair) serve the driver on guest B:
           start/wait server processes, /proc/stat snapshots, commands
  drive    (guest B, or the single guest) run the plan, write
           /results/runs.jsonl
  hostmon  (host) on every event file a driver creates, sample the host's
           /proc/stat and the CPU time of this run's qemu processes
  report   (host) runs + host samples -> summary.json, summary.md, PNGs

Only the standard library; /usr/bin/python3 (3.11).  See README.md.
"""

import argparse
import ctypes
import json
import os
import pty
import re
import signal
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time
import tty

AGENT_PORT = 7700
PAIR_A, PAIR_B = "198.51.100.1", "198.51.100.2"
SINGLE_SRV = "192.0.2.1"
LOOP_ADDR = "203.0.113.1"
# the loopback path runs only the scenarios of the targets (time)
LOOP_RX = r"^(write_bw-65536-|send_bw-64-|iperf-tcp-65536|write_lat-|send_lat-|udplat-)"
RXE_PATHS = ("pair", "loop")
HZ = os.sysconf("SC_CLK_TCK")
CLONE_NEWNET = 0x40000000


def log(msg):
    print(f"bench: {msg}", flush=True)


# --------------------------------------------------------------- CPU stats
def cpu_snapshot():
    """Guest-wide CPU jiffies from /proc/stat (all CPUs)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    v += [0] * (8 - len(v))
    user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
    return {"t": time.monotonic(), "user": user + nice,
            "kernel": system + irq + softirq, "idle": idle + iowait,
            "steal": steal, "ncpu": os.cpu_count()}


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


# --------------------------------------------------------------- processes
_libc = ctypes.CDLL(None, use_errno=True)


NICE = 0


def _preexec(netns, cpu):
    def fn():
        os.setsid()
        if NICE:
            os.nice(NICE)
        if netns:
            fd = os.open(f"/run/netns/{netns}", os.O_RDONLY)
            if _libc.setns(fd, CLONE_NEWNET) != 0:
                os._exit(126)
            os.close(fd)
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})
    return fn


class Proc:
    """A child on a pty (so perftest and iperf3 flush every line: the
    driver times its CPU window from their output), in netns NETNS, pinned
    to CPU.  Lines are kept with their arrival time."""

    def __init__(self, argv, netns=None, cpu=None, env=None):
        self.argv = argv
        master, slave = pty.openpty()
        tty.setraw(slave)
        self.t0 = time.monotonic()
        penv = None
        if env:             # NAME: value, or None to remove NAME
            penv = {k: v for k, v in os.environ.items() if k not in env}
            penv.update({k: v for k, v in env.items() if v is not None})
        self.p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=slave,
                                  stderr=slave, close_fds=True, env=penv,
                                  preexec_fn=_preexec(netns, cpu))
        os.close(slave)
        self.master = master
        self.lines = []          # (time, line)
        self.cv = threading.Condition()
        self.eof = False
        self.th = threading.Thread(target=self._reader, daemon=True)
        self.th.start()

    def _reader(self):
        buf = b""
        while True:
            try:
                data = os.read(self.master, 4096)
            except OSError:
                data = b""
            now = time.monotonic()
            if not data:
                break
            buf += data
            *done, buf = buf.split(b"\n")
            if done:
                with self.cv:
                    for line in done:
                        self.lines.append((now, line.decode(errors="replace").rstrip("\r")))
                    self.cv.notify_all()
        with self.cv:
            if buf:
                self.lines.append((time.monotonic(), buf.decode(errors="replace")))
            self.eof = True
            self.cv.notify_all()
        os.close(self.master)

    def wait_line(self, regex, timeout):
        """Arrival time of the first line matching REGEX, or None."""
        rx = re.compile(regex)
        end = time.monotonic() + timeout
        with self.cv:
            while True:
                for t, line in self.lines:
                    if rx.search(line):
                        return t
                left = end - time.monotonic()
                if self.eof or left <= 0:
                    return None
                self.cv.wait(min(left, 1))

    def wait(self, timeout):
        """Exit status; the process group is killed after TIMEOUT s (rc 124)."""
        try:
            rc = self.p.wait(timeout=max(timeout, 0.1))
        except subprocess.TimeoutExpired:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(self.p.pid, sig)
                except ProcessLookupError:
                    pass
                try:
                    self.p.wait(timeout=3)
                    break
                except subprocess.TimeoutExpired:
                    pass
            rc = 124
        self.th.join(timeout=5)
        return rc

    def output(self):
        with self.cv:
            return "\n".join(line for _, line in self.lines)

    def kill(self):
        if self.p.poll() is None:
            try:
                os.killpg(self.p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def listening(pid, proto, port):
    """True once process PID's network namespace has PORT bound (TCP
    LISTEN, or UDP bound)."""
    for fam in ("", "6"):
        try:
            with open(f"/proc/{pid}/net/{proto}{fam}") as f:
                next(f)
                for line in f:
                    fld = line.split()
                    if int(fld[1].rsplit(":", 1)[1], 16) != port:
                        continue
                    if proto == "udp" or fld[3] == "0A":
                        return True
        except (OSError, StopIteration, IndexError, ValueError):
            pass
    return False


def run_cmd(argv, netns=None, timeout=60):
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=timeout,
                       preexec_fn=_preexec(netns, None) if netns else None)
    return p.returncode, p.stdout + p.stderr


def gid_index(dev, prefix):
    """Index of DEV's RoCE v2 GID that starts with PREFIX (IPv4-mapped)."""
    base = f"/sys/class/infiniband/{dev}/ports/1"
    for _ in range(50):
        try:
            for name in sorted(os.listdir(f"{base}/gids"), key=int):
                with open(f"{base}/gids/{name}") as f:
                    g = f.read().strip()
                if not g.startswith(prefix):
                    continue
                try:
                    with open(f"{base}/gid_attrs/types/{name}") as f:
                        if f.read().strip() != "RoCE v2":
                            continue
                except OSError:
                    continue
                return int(name)
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"bench: no RoCE v2 GID {prefix}... on {dev}")


def hw_counters(dev):
    """The device's port counters from sysfs (mroce and rxe both have
    hw_counters); read in-process: an exec costs ~0.3 s under TCG."""
    d = f"/sys/class/infiniband/{dev}/ports/1/hw_counters"
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
    return {k: b[k] - a.get(k, 0) for k in b if b[k] != a.get(k, 0)}


# ------------------------------------------------------------ qdisc stats
# rtnetlink RTM_GETQDISC, read in-process (an exec of tc costs ~0.3 s of
# the sender's only vCPU under TCG; a netlink dump a few ms).
RTM_NEWQDISC, RTM_GETQDISC = 36, 38
NLMSG_ERROR, NLMSG_DONE = 2, 3
TCA_KIND, TCA_STATS2 = 1, 7
TCA_STATS_BASIC, TCA_STATS_QUEUE, TCA_STATS_APP = 1, 3, 4
QDISC_XSTATS = {        # struct tc_<kind>_xstats (uapi/linux/pkt_sched.h)
    "codel": ("=IIIIiIIII", ("maxpacket", "count", "lastcount", "ldelay", "drop_next",
                             "drop_overlimit", "ecn_mark", "dropping", "ce_mark")),
    "fq_codel": ("=IIIIIIIIII", ("type", "maxpacket", "drop_overlimit", "ecn_mark",
                                 "new_flow_count", "new_flows_len", "old_flows_len",
                                 "ce_mark", "memory_usage", "drop_overmemory")),
    "red": ("=IIII", ("early", "pdrop", "other", "marked")),
}


def _nl_attrs(buf, off, end):
    while off + 4 <= end:
        ln, typ = struct.unpack_from("=HH", buf, off)
        if ln < 4:
            break
        yield typ & 0x3fff, buf[off + 4:off + ln]
        off += (ln + 3) & ~3


# RDMA netlink (NETLINK_RDMA, uapi/rdma/rdma_netlink.h): the QPs of a device
# with their PSNs, what `rdma resource show qp` prints, read in-process.
NETLINK_RDMA = 20
RDMA_NLDEV_GET = (5 << 10) + 1              # RDMA_NL_GET_TYPE(NLDEV, CMD_GET)
RDMA_NLDEV_RES_QP_GET = (5 << 10) + 10      # ... CMD_RES_QP_GET
NLA_DEV_INDEX, NLA_DEV_NAME = 1, 2
NLA_RES_QP, NLA_RES_QP_ENTRY, NLA_LQPN, NLA_RQPN, NLA_RQ_PSN, NLA_SQ_PSN = 19, 20, 21, 22, 23, 24
NLA_RES_TYPE, NLA_RES_STATE = 26, 27


class RdmaQps:
    """read(dev) -> {lqpn: {"rqpn", "rq_psn", "sq_psn", "type", "state"}}."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_RDMA)
        self.sock.bind((0, 0))
        self.seq = 0
        self.index = {}

    def close(self):
        self.sock.close()

    def _dump(self, typ, attrs=b""):
        self.seq += 1
        self.sock.send(struct.pack("=IHHII", 16 + len(attrs), typ, 0x301, self.seq, 0) + attrs)
        msgs = []
        while True:
            data = self.sock.recv(1 << 17)
            off = 0
            while off + 16 <= len(data):
                ln, mt, _, seq, _ = struct.unpack_from("=IHHII", data, off)
                if ln < 16:
                    return msgs
                if seq == self.seq:
                    if mt == NLMSG_DONE:
                        return msgs
                    if mt == NLMSG_ERROR:
                        err = struct.unpack_from("=i", data, off + 16)[0]
                        raise OSError(-err, f"RDMA netlink dump {typ}: {os.strerror(-err)}")
                    msgs.append(data[off + 16:off + ln])
                off += (ln + 3) & ~3

    def dev_index(self, dev):
        if dev not in self.index:
            for m in self._dump(RDMA_NLDEV_GET):
                a = dict(_nl_attrs(m, 0, len(m)))
                if NLA_DEV_INDEX in a and NLA_DEV_NAME in a:
                    name = a[NLA_DEV_NAME].split(b"\0")[0].decode()
                    self.index[name] = struct.unpack_from("=I", a[NLA_DEV_INDEX])[0]
        if dev not in self.index:
            raise OSError(f"no RDMA device {dev}")
        return self.index[dev]

    def read(self, dev):
        idx = struct.pack("=HHI", 8, NLA_DEV_INDEX, self.dev_index(dev))
        out = {}
        for m in self._dump(RDMA_NLDEV_RES_QP_GET, idx):
            for t, v in _nl_attrs(m, 0, len(m)):
                if t != NLA_RES_QP:
                    continue
                for t2, e in _nl_attrs(v, 0, len(v)):
                    if t2 != NLA_RES_QP_ENTRY:
                        continue
                    a = dict(_nl_attrs(e, 0, len(e)))
                    if NLA_LQPN not in a:
                        continue
                    u32 = {k: struct.unpack_from("=I", a[k])[0]
                           for k in (NLA_RQPN, NLA_RQ_PSN, NLA_SQ_PSN) if k in a}
                    out[struct.unpack_from("=I", a[NLA_LQPN])[0]] = {
                        "rqpn": u32.get(NLA_RQPN), "rq_psn": u32.get(NLA_RQ_PSN),
                        "sq_psn": u32.get(NLA_SQ_PSN),
                        "type": a[NLA_RES_TYPE][0] if NLA_RES_TYPE in a else None,
                        "state": a[NLA_RES_STATE][0] if NLA_RES_STATE in a else None}
        return out


class QpSampler(threading.Thread):
    """Samples the PSNs of DEV's QPs every INTERVAL s: [[t, [[lqpn, rqpn,
    rq_psn, sq_psn], ...]], ...] (monotonic time of this machine)."""

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
                                                   if v["type"] == 2]])      # RC
            except OSError as e:
                self.error = repr(e)
            self.halt.wait(self.interval)
        nl.close()

    def stop(self):
        self.halt.set()
        if self.is_alive():
            self.join(timeout=5)
        return self.samples


class QdiscStats:
    """The qdiscs of one interface, as `tc -s qdisc show dev IF` has them:
    read() -> {"2:": {kind, parent, bytes, packets, qlen, backlog, drops,
    requeues, overlimits, and the kind's xstats}, ...}."""

    def __init__(self, ifname):
        self.ifindex = socket.if_nametoindex(ifname)
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
        self.sock.bind((0, 0))
        self.seq = 0

    def close(self):
        self.sock.close()

    def read(self):
        self.seq += 1
        tcm = struct.pack("=BBHiIII", 0, 0, 0, self.ifindex, 0, 0, 0)
        self.sock.send(struct.pack("=IHHII", 16 + len(tcm), RTM_GETQDISC,
                                   0x301, self.seq, 0) + tcm)     # REQUEST|DUMP
        out = {}
        while True:
            data = self.sock.recv(1 << 16)
            off = 0
            while off + 16 <= len(data):
                ln, typ, _, seq, _ = struct.unpack_from("=IHHII", data, off)
                if ln < 16:
                    return out
                if seq == self.seq:
                    if typ == NLMSG_DONE:
                        return out
                    if typ == NLMSG_ERROR:
                        raise OSError("RTM_GETQDISC failed")
                    if typ == RTM_NEWQDISC:
                        q = self._qdisc(data, off, off + ln)
                        if q:
                            out[q["handle"]] = q
                off += (ln + 3) & ~3

    def _qdisc(self, data, off, end):
        _, _, _, ifi, handle, parent, _ = struct.unpack_from("=BBHiIII", data, off + 16)
        if ifi != self.ifindex:         # 6.1 dumps every device
            return None
        q = {"handle": f"{handle >> 16:x}:",
             "parent": "root" if parent == 0xffffffff else f"{parent >> 16:x}:{parent & 0xffff:x}"}
        app = None
        for typ, val in _nl_attrs(data, off + 36, end):
            if typ == TCA_KIND:
                q["kind"] = val.split(b"\0")[0].decode()
            elif typ == TCA_STATS2:
                for t2, v2 in _nl_attrs(val, 0, len(val)):
                    if t2 == TCA_STATS_BASIC and len(v2) >= 12:
                        q["bytes"], q["packets"] = struct.unpack_from("=QI", v2)
                    elif t2 == TCA_STATS_QUEUE and len(v2) >= 20:
                        (q["qlen"], q["backlog"], q["drops"], q["requeues"],
                         q["overlimits"]) = struct.unpack_from("=IIIII", v2)
                    elif t2 == TCA_STATS_APP:
                        app = v2
        fmt = QDISC_XSTATS.get(q.get("kind"))
        if fmt and app is not None and len(app) >= struct.calcsize(fmt[0]):
            q.update(zip(fmt[1], struct.unpack_from(fmt[0], app)))
        return q


# ---------------------------------------------------------------- endpoints
class LocalEnd:
    """Runs processes on this guest (optionally in a netns, on a CPU)."""

    def __init__(self, netns=None, cpu=None):
        self.netns, self.cpu = netns, cpu
        self.procs = {}

    def start(self, rid, argv, listen=None, timeout=30, env=None):
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
        return cpu_snapshot()

    def counters(self, dev):
        return hw_counters(dev)

    def gid(self, dev, prefix):
        return gid_index(dev, prefix)


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
        with self.lock:
            self.f.write((json.dumps(req) + "\n").encode())
            self.f.flush()
            line = self.f.readline()
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


# ------------------------------------------------------------------- agent
def cmd_agent(args):
    end = LocalEnd()
    gids = {d: gid_index(d, args.gid_prefix) for d in args.devs}
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
    rc = 1
    qps = None
    while True:
        line = f.readline()
        if not line:
            log("agent: driver went away")
            break
        req = json.loads(line)
        op = req["op"]
        try:
            if op == "hello":
                global NICE
                NICE = req.get("nice", 0)
                resp = {"gids": gids, "ncpu": os.cpu_count()}
            elif op == "start":
                ok, err = end.start(req["id"], req["argv"],
                                    tuple(req["listen"]) if req.get("listen") else None,
                                    req.get("timeout", 30), req.get("env"))
                resp = {"ok": ok, "err": err}
            elif op == "wait":
                r, out = end.wait(req["id"], req["timeout"])
                resp = {"rc": r, "out": out[-20000:]}
            elif op == "run":
                r, out = end.run(req["argv"], req.get("timeout", 60))
                resp = {"rc": r, "out": out[-20000:]}
            elif op == "stat":
                resp = {"cpu": cpu_snapshot()}
            elif op == "counters":
                resp = {"counters": hw_counters(req["dev"])}
            elif op == "gid":       # after a device was re-created
                resp = {"gid": gid_index(req["dev"], req["prefix"])}
            elif op == "qps_start":     # sample the PSNs of DEV's QPs
                if qps:
                    qps.stop()
                qps = QpSampler(req["dev"], req.get("interval", 0.25))
                qps.start()
                resp = {"ok": True}
            elif op == "qps_stop":
                samples = qps.stop() if qps else []
                resp = {"now": time.monotonic(), "samples": samples,
                        "error": qps.error if qps else "not started"}
                qps = None
            elif op == "quit":
                resp = {"ok": True}
                rc = 0
            else:
                resp = {"err": f"unknown op {op}"}
        except (Exception, SystemExit) as e:    # report, keep serving
            resp = {"ok": False, "err": repr(e), "rc": 125, "out": repr(e)}
        f.write((json.dumps(resp) + "\n").encode())
        f.flush()
        if op == "quit":
            break
    for p in list(end.procs.values()):
        p.kill()
    return rc


# ------------------------------------------------------------------- plan
KIB = 1024


def make_plan(a):
    """List of runs, grouped so that the transports of one scenario
    alternate (their order rotates with the repetition)."""
    plan = []
    rdma = ["mroce", "rxe"] if a.mode in RXE_PATHS else ["mroce"]

    def group(name, items, reps):
        for rep in range(reps):
            k = rep % len(items) if items else 0
            for it in items[k:] + items[:k]:
                plan.append(dict(it, scenario=name, rep=rep + 1))

    sizes = a.sizes
    udp_done = set()
    for verb in a.verbs:
        for size in sizes:
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


def run_name(p):
    if p["kind"] == "bottleneck":
        return "bottleneck-" + p["transport"] + (f"-{p['cc']}" if p.get("cc") else "")
    if p["kind"] in ("bw", "lat"):
        s = f"{p['verb']}_{p['kind']}-{p['size']}-{p['transport']}"
    elif p["kind"] == "iperf":
        s = f"iperf-{p['proto']}-{p['size']}"
    else:
        s = f"udplat-{p['size']}"
    if p.get("loss") is not None:
        s += f"-loss{p['loss']:g}"
    return s


# ----------------------------------------------------------------- parsing
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


def jain(xs):
    q = sum(x * x for x in xs)
    return sum(xs) ** 2 / (len(xs) * q) if xs and q > 0 else None


BN_BIN = 2.0            # s: bins of the settling times
BN_FAIR, BN_STABLE = 0.9, 0.15  # Jain index; aggregate within +-15 % of its mean


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


def flow_progress(samples, f, t_all):
    """[[t since t_all, packets the receiver took in order]] of flow F from
    the receiving QP's rq_psn (PSNs are 24 bits; the responder starts at
    the requester's first PSN)."""
    out = []
    if "remote_qpn" not in f or "psn0" not in f:
        return out
    for t, qps in samples:
        for lqpn, rqpn, rq_psn, _ in qps:
            if lqpn == f["remote_qpn"] and rqpn == f.get("qpn") and rq_psn is not None:
                d = (rq_psn - f["psn0"]) & 0xffffff
                if d < 1 << 23:         # before RTR the PSN is not ours
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


def bottleneck_analyze(rec):
    """A bottleneck run's record -> its metrics (also used by the report,
    so it can be re-derived from runs.jsonl).  Times are seconds since the
    last flow's start (t_all); the window [W0, W1] is when every flow runs."""
    W0, W1 = rec["window"]
    flows = rec["flow_runs"]
    info = rec.get("bottleneck", {})
    fails = []
    for i, f in enumerate(flows):
        if f.get("perftest"):
            continue
        m = re.search(r"Failed status (\d+)", f.get("client_out", ""))
        pg = f.get("progress", [])
        last = max((b[0] for a, b in zip(pg, pg[1:]) if b[1] > a[1]), default=None)
        fails.append({"flow": i + 1, "status": int(m.group(1)) if m else None,
                      "rc": f.get("client_rc"), "last_progress": last})
    r = {"flows_failed": len(fails), "failures": fails,
         "start_spread": max(f["t_header"] for f in flows) - min(f["t_header"] for f in flows),
         "window": [W0, W1]}
    # goodput in the window: in-order packets at the receiver x payload
    good, curves = [], []
    for f in flows:
        c = [(t, pk * f.get("mtu", 1024)) for t, pk in f.get("progress", [])]
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


def qdisc_point(q):
    """{handle: stats} -> [qlen, backlog bytes, drops, marks, overflow drops,
    bytes sent, packets sent] of the bottleneck (tbf 2: with its AQM 3:)."""
    aqm, tbf = q.get("3:", {}), q.get("2:", {})
    marks = aqm.get("ce_mark", 0) + aqm.get("ecn_mark", 0) + aqm.get("marked", 0)
    over = aqm.get("drop_overlimit", 0) + aqm.get("pdrop", 0)
    return [aqm.get("qlen", 0), aqm.get("backlog", 0), tbf.get("drops", 0), marks, over,
            tbf.get("bytes", 0), tbf.get("packets", 0)]


def qdisc_totals(q0, q1):
    a, b = qdisc_point(q0), qdisc_point(q1)
    drops = b[2] - a[2]
    over = b[4] - a[4]
    return {"drops": drops, "drops_overflow": over, "drops_aqm": drops - over,
            "marks": b[3] - a[3],
            "sent_pkts": q1.get("2:", {}).get("packets", 0) - q0.get("2:", {}).get("packets", 0),
            "aqm_drops": q1.get("3:", {}).get("drops", 0) - q0.get("3:", {}).get("drops", 0)}


class QdiscSampler(threading.Thread):
    """Samples the bottleneck every INTERVAL s (netlink, in-process)."""

    def __init__(self, qs, interval):
        super().__init__(daemon=True)
        self.qs, self.interval = qs, interval
        self.samples = []
        self.halt = threading.Event()

    def run(self):
        while not self.halt.is_set():
            t = time.monotonic()
            try:
                self.samples.append((t, qdisc_point(self.qs.read())))
            except OSError:
                pass
            self.halt.wait(self.interval)
        self.qs.close()

    def stop(self):
        self.halt.set()
        if self.is_alive() and threading.current_thread() is not self:
            self.join(timeout=5)

    def points(self):
        return list(self.samples)


def parse_lat(out):
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
    m = re.search(r"udp_pingpong: (.*)", out)
    if not m:
        return None
    kv = dict(x.split("=", 1) for x in m.group(1).split() if "=" in x)
    return {"iters": int(kv["iters"]), "t_min": float(kv["t_min"]),
            "t_typical": float(kv["t_typical"]), "t_avg": float(kv["t_avg"]),
            "p99": float(kv["p99"]), "p999": float(kv["p99.9"]),
            "t_max": float(kv["t_max"]), "retries": int(kv["retries"])}


def parse_iperf(out, proto, size):
    """iperf3 -f k text summary.  TCP (run with -O): the sender's rate over
    the measured window (with -O the receiver's interval times are skewed).
    UDP (run without -O, sender unthrottled): the receiver's rate and
    datagram count."""
    rx = re.compile(r"([\d.]+)-([\d.]+)\s+sec\s+([\d.]+)\s+([KMG]?)Bytes\s+([\d.]+)\s+Kbits/sec")
    sender = receiver = None
    for line in out.splitlines():
        m = rx.search(line)
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


# ------------------------------------------------------------------ driver
class Driver:
    def __init__(self, a):
        self.a = a
        self.seq = 0
        self.port = 0
        os.makedirs(f"{a.results}/ev", exist_ok=True)
        self.out = open(f"{a.results}/runs.jsonl", "a")
        if a.mode == "pair":
            self.cli = LocalEnd()
            self.srv = RemoteEnd(PAIR_A, time.monotonic() + a.connect_timeout)
            hello = self.srv.hello(a.nice)
            self.srv_gid = hello["gids"]
            self.cli_gid = {d: gid_index(d, a.gid_prefix) for d in ("mroce0", "rxe0")}
            self.dev = {"mroce": ("mroce0", "mroce0"), "rxe": ("rxe0", "rxe0")}
            self.addr = PAIR_A
            self.cpu_ends = [("client", self.cli), ("server", self.srv)]
            self.netem = (self.cli, "eth0")
        elif a.mode == "loop":
            two = os.cpu_count() > 1
            self.cli = LocalEnd(None, 1 if two else None)
            self.srv = LocalEnd(None, 0 if two else None)
            self.srv_gid = {d: gid_index(d, a.gid_prefix) for d in ("mroce0", "rxe0")}
            self.cli_gid = self.srv_gid
            self.dev = {"mroce": ("mroce0", "mroce0"), "rxe": ("rxe0", "rxe0")}
            self.addr = LOOP_ADDR
            self.cpu_ends = [("guest", self.cli)]
            self.netem = (self.cli, "dummy0")
        else:
            self.cli = LocalEnd("h2", 1 if os.cpu_count() > 1 else None)
            self.srv = LocalEnd("h1", 0)
            self.srv_gid = {"mroce1": gid_index("mroce1", a.gid_prefix)}
            self.cli_gid = {"mroce2": gid_index("mroce2", a.gid_prefix)}
            self.dev = {"mroce": ("mroce1", "mroce2")}
            self.addr = SINGLE_SRV
            self.cpu_ends = [("guest", self.cli)]
            self.netem = (self.cli, "veth2")
        self.qstate = None      # the egress qdisc we set: None, ("loss", x), ("bottleneck",)
        # the congestion control mroce's devices were created with (cc_algo
        # at their creation; the bottleneck scenario re-creates them)
        self.cc_boot = {"client": self.read_cc(self.cli)}
        if a.mode == "pair":
            self.cc_boot["server"] = self.read_cc(self.srv)
        self.cc_now = dict(self.cc_boot)

    def event(self, rid, phase):
        """An empty file in /results/ev: the host monitor samples host CPU."""
        self.seq += 1
        try:
            open(f"{self.a.results}/ev/{self.seq:05d}-{rid}-{phase}", "w").close()
        except OSError:
            pass

    def set_loss(self, loss):
        state = None if loss is None else ("loss", loss)
        if state == self.qstate:
            return
        end, dev = self.netem
        if loss is None:
            rc, out = end.run(["tc", "qdisc", "del", "dev", dev, "root"])
        else:
            rc, out = end.run(["tc", "qdisc", "replace", "dev", dev, "root", "netem",
                               "limit", "10000", "loss", f"{loss:g}%"])
            if rc != 0:
                raise SystemExit(f"bench: netem failed: {out}")
        self.qstate = state

    # ------------------------------------------------------- congestion
    def read_cc(self, end):
        rc, out = end.run(["cat", "/sys/module/mroce/parameters/cc_algo"])
        return out.strip() if rc == 0 else None

    def set_cc(self, cc):
        """Write mroce's cc_algo on both guests and re-create mroce0 there
        (a device takes the algorithm named at its creation).  CC: one name,
        or {"client": name, "server": name}.  Returns what the kernel logged
        for each new device ("added on eth0 (transport udp, cc NAME)")."""
        want = cc if isinstance(cc, dict) else {"client": cc, "server": cc}
        got = {}
        for name, end in (("client", self.cli), ("server", self.srv)):
            script = (f"echo {want[name]} >/sys/module/mroce/parameters/cc_algo && "
                      "rdma link delete mroce0 && "
                      "rdma link add mroce0 type mroce netdev eth0 && "
                      "dmesg | grep 'mroce0: added on' | tail -n 1")
            rc, out = end.run(["sh", "-c", script], timeout=60)
            m = re.search(r"mroce0: added on \S+ \(.*\bcc ([^)\s]+)\)", out)
            got[name] = m.group(1) if m else None
            self.cc_now[name] = got[name]
            if rc != 0 or got[name] != want[name]:
                raise RuntimeError(f"{name}: mroce0 with cc {want[name]}: rc {rc}: {out[-500:]}")
        self.cli_gid["mroce0"] = self.cli.gid("mroce0", self.a.gid_prefix)
        self.srv_gid["mroce0"] = self.srv.gid("mroce0", self.a.gid_prefix)
        return got

    def bottleneck_spec(self):
        """tc batch for B's egress: RoCE (UDP to rxe's 4791 and mroce's
        udp_port) through tbf + a marking AQM, everything else (the
        agent's and perftest's TCP) around it, unshaped."""
        a = self.a
        end, dev = self.netem
        m = re.fullmatch(r"(\d+)([kmg]?)bit", a.bottleneck_rate.lower())
        if not m:
            raise SystemExit(f"bench: bad --bottleneck-rate {a.bottleneck_rate} (e.g. 30mbit)")
        bps = int(m.group(1)) * {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}[m.group(2)]
        with open(f"/sys/class/net/{dev}/mtu") as f:
            mtu = int(f.read())
        try:
            with open("/sys/module/mroce/parameters/udp_port") as f:
                mport = int(f.read())
        except (OSError, ValueError):
            mport = 4792
        burst = max(bps * 2 // 8000, 2 * (mtu + 14))    # 2 ms, >= 2 frames (as fabric.sh)
        mark = a.bottleneck_mark.lower()
        if re.fullmatch(r"\d+(us|ms)", mark):
            aqm = f"codel limit {a.bottleneck_limit} ce_threshold {mark} ecn"
        elif re.fullmatch(r"\d+k?b", mark):
            n = int(mark[:-2]) * 1000 if mark.endswith("kb") else int(mark[:-1])
            aqm = (f"red limit {a.bottleneck_limit * (mtu + 14)} min {n} max {2 * n} avpkt 1000 "
                   f"burst {n * 4 // 3000 + 1} probability 1.0 bandwidth {a.bottleneck_rate} ecn")
        else:
            raise SystemExit(f"bench: bad --bottleneck-mark {a.bottleneck_mark} (1ms, 500us, 30kb)")
        cmds = [f"qdisc replace dev {dev} root handle 1: prio bands 2 priomap" + " 0" * 16,
                f"qdisc add dev {dev} parent 1:2 handle 2: tbf rate {a.bottleneck_rate} "
                f"burst {burst} limit {burst + 100000}",
                f"qdisc add dev {dev} parent 2:1 handle 3: {aqm}"]
        for port in (4791, mport):
            cmds.append(f"filter add dev {dev} parent 1: protocol ip prio 1 u32 "
                        f"match ip protocol 17 0xff match ip dport {port} 0xffff flowid 1:2")
        return end, dev, cmds, {"rate_bps": bps, "burst": burst, "mtu": mtu, "aqm": aqm,
                                "limit": a.bottleneck_limit, "udp_ports": [4791, mport]}

    def set_bottleneck(self, on):
        end, dev, cmds, info = self.bottleneck_spec()
        if not on:
            if self.qstate and self.qstate[0] == "bottleneck":
                end.run(["tc", "qdisc", "del", "dev", dev, "root"])
                self.qstate = None
            return info
        self.set_loss(None)
        batch = "/tmp/bench-bottleneck.tc"
        with open(batch, "w") as f:     # B is this guest: self.netem is local
            f.write("\n".join(cmds) + "\n")
        rc, out = end.run(["tc", "-b", batch])
        self.qstate = ("bottleneck",)
        if rc != 0:
            raise RuntimeError(f"tc -b: {out[-500:]}")
        info["tc"] = cmds
        return info

    def next_port(self, base):
        self.port += 1
        return base + self.port % 1000

    def snap(self):
        return [(name, e.stat()) for name, e in self.cpu_ends]

    def run_one(self, p, idx, total):
        a = self.a
        if p["kind"] == "bottleneck":
            return self.run_bottleneck(p, idx, total)
        rid = f"{idx:03d}-{run_name(p)}-r{p['rep']}"
        rec = dict(p, id=rid, path=a.mode, ok=False)
        if p["transport"] == "mroce":
            rec["mroce_cc"] = dict(self.cc_now)
        self.set_loss(p.get("loss"))
        kind = p["kind"]
        D, f = a.duration, a.margin
        if p.get("loss") is not None:   # RTOs make short windows noisy
            D = max(a.loss_duration, 2 * f + 1)
        T = D + 60
        if kind in ("bw", "lat"):
            sdev, cdev = self.dev[p["transport"]]
            tool = f"ib_{p['verb']}_{kind}"
            port = self.next_port(18515)
            common = ["-s", str(p["size"]), "-F", "-p", str(port)]
            if kind == "bw":
                common += ["-D", str(D), "-f", str(f)]
            else:
                common += ["-n", str(a.lat_iters)]
            sargv = [tool, "-d", sdev, "-x", str(self.srv_gid[sdev])] + common
            cargv = [tool, "-d", cdev, "-x", str(self.cli_gid[cdev])] + common + [self.addr]
            listen = ("tcp", port)
        elif kind == "iperf":
            port = self.next_port(5201)
            W = max(D - 2 * f, 1)
            sargv = ["iperf3", "-s", "-1", "-p", str(port)]
            cargv = ["iperf3", "-c", self.addr, "-p", str(port),
                     "-i", "1", "-f", "k", "--forceflush", "-l", str(p["size"])]
            if p["proto"] == "udp":     # -O skews UDP's receiver counts
                cargv += ["-t", str(W + f), "-u", "-b", "0"]
            else:
                cargv += ["-t", str(W), "-O", str(f)]
            listen = ("tcp", port)
        else:
            port = self.next_port(7300)
            sargv = [a.pingpong, "-s", "-p", str(port), "-n", str(a.lat_iters), "-t", "60"]
            cargv = [a.pingpong, "-c", self.addr, "-p", str(port), "-n", str(a.lat_iters),
                     "-l", str(p["size"]), "-t", "60"]
            listen = ("udp", port)
        rec["server_argv"], rec["client_argv"] = sargv, cargv
        if kind in ("bw", "lat"):
            c0 = (self.cli.counters(cdev), self.srv.counters(sdev))
        self.event(rid, "start")
        t0 = time.monotonic()
        ok, err = self.srv.start(rid, sargv, listen, timeout=30)
        if not ok:
            rec["error"] = "server did not start: " + err[-500:]
            self.srv.wait(rid, 5)
            return self.finish(rec, idx, total, t0)
        self.cli.start(rid, cargv)
        cp = self.cli.proc(rid)
        w0 = w1 = None
        if kind == "bw":
            th = cp.wait_line(r"#bytes", T)
            if th is not None:
                rec["t_header"] = th - t0
                time.sleep(max(0, th + f - time.monotonic()))
                w0 = self.snap()
                self.event(rid, "w0")
                time.sleep(max(0, th + D - f - time.monotonic()))
                if cp.p.poll() is None:
                    w1 = self.snap()
                    self.event(rid, "w1")
        elif kind == "iperf":
            if cp.wait_line(r"omitted|0\.00-1\.0", T) is not None:
                w0 = self.snap()
                self.event(rid, "w0")
                if cp.wait_line(r"^- - - ", T) is not None:
                    w1 = self.snap()
                    self.event(rid, "w1")
        crc, cout = self.cli.wait(rid, T)
        src, sout = self.srv.wait(rid, 20)
        self.event(rid, "end")
        rec.update(client_rc=crc, server_rc=src, secs=time.monotonic() - t0)
        if kind in ("bw", "lat"):
            rec["counters"] = {"client": counter_delta(c0[0], self.cli.counters(cdev)),
                               "server": counter_delta(c0[1], self.srv.counters(sdev))}
        if w0 and w1:
            rec["cpu"] = {n: cpu_delta(x, y) for (n, x), (_, y) in zip(w0, w1)}
        if kind == "bw":
            r = parse_bw(cout, p["size"])
        elif kind == "lat":
            r = parse_lat(cout)
        elif kind == "iperf":
            r = parse_iperf(cout, p["proto"], p["size"])
        else:
            r = parse_udplat(cout)
        if r and crc == 0 and kind == "bw" and not r["gbps"]:
            # perftest under TCG now and then fails its clock calibration
            # and prints 0.00 for a run that moved data: not a measurement
            rec["error"] = "perftest printed 0 bandwidth (clock calibration?)"
            rec["client_out"] = cout[-3000:]
            rec["server_out"] = sout[-3000:]
        elif r and crc == 0:
            rec.update(r)
            rec["ok"] = True
        else:
            rec["error"] = f"client rc {crc}, server rc {src}"
            rec["client_out"] = cout[-3000:]
            rec["server_out"] = sout[-3000:]
        return self.finish(rec, idx, total, t0)

    def run_bottleneck(self, p, idx, total):
        """FLOWS ib_write_bw clients on B (duration mode, -D D -f 1) to
        servers on A through the bottleneck on B's egress.  Per-flow
        progress: the receiving QPs' rq_psn (in-order delivered packets) on
        A every --bottleneck-interval s; backlog, drops and marks of the
        bottleneck on B at the same rate (both by netlink, in-process);
        device counters of both ends around the run; perftest's own BW."""
        a = self.a
        rid = f"{idx:03d}-{run_name(p)}-r{p['rep']}"
        D = int(a.bottleneck_duration)
        rec = dict(p, id=rid, path=a.mode, ok=False, duration=D)
        t0 = time.monotonic()
        n, size = p["flows"], p["size"]
        env = {"MROCE_CC": None}   # cc_algo of the device decides, nothing else
        fids = [f"{rid}-f{i}" for i in range(n)]
        started_srv, started_cli = [], []
        sampler = None
        qps_on = False
        try:
            if p["transport"] == "mroce":
                rec["cc_created"] = self.set_cc(p["cc"])
            sdev, cdev = self.dev[p["transport"]]
            rec["bottleneck"] = self.set_bottleneck(True)
            ports = [self.next_port(19000) for _ in range(n)]
            # -N: no peak search (O(iterations^2) under TCG at the end)
            common = ["-s", str(size), "-F", "-N", "-D", str(D), "-f", "1"]
            for fid, port in zip(fids, ports):
                sargv = ["ib_write_bw", "-d", sdev, "-x", str(self.srv_gid[sdev]),
                         "-p", str(port)] + common
                ok, err = self.srv.start(fid, sargv, ("tcp", port), timeout=30, env=env)
                started_srv.append(fid)
                if not ok:
                    raise RuntimeError(f"server {fid} did not start: {err[-300:]}")
            rec["server_argv"] = sargv
            c0 = (self.cli.counters(cdev), self.srv.counters(sdev))
            qs = QdiscStats(self.netem[1])
            q0 = qs.read()
            sampler = QdiscSampler(QdiscStats(self.netem[1]), a.bottleneck_interval)
            sampler.start()
            self.srv.qps_start(sdev, a.bottleneck_interval)
            qps_on = True
            self.event(rid, "start")
            procs = []
            for fid, port in zip(fids, ports):
                cargv = ["ib_write_bw", "-d", cdev, "-x", str(self.cli_gid[cdev]),
                         "-p", str(port)] + common + [self.addr]
                self.cli.start(fid, cargv, env=env)
                started_cli.append(fid)
                procs.append(self.cli.proc(fid))
            rec["client_argv"] = cargv
            th = [pr.wait_line(r"#bytes", 60) for pr in procs]
            if None in th:
                raise RuntimeError(f"flows {[i for i, t in enumerate(th) if t is None]} "
                                   "printed no header in 60 s")
            t_all = max(th)
            # all flows run from t_all until the first one's -D is over
            t_w1 = min(th) + D - 0.5
            w0 = self.snap()
            self.event(rid, "w0")
            time.sleep(max(0, t_w1 - time.monotonic()))
            w1 = self.snap()
            self.event(rid, "w1")
            if p["transport"] == "mroce":      # the QPs' cc state, flows still running
                rc, out = self.cli.run(["rdma", "resource", "show", "qp", "-dd"])
                rec["qp_state"] = {k: [int(x) for x in re.findall(rf"\bdrv_{k} (\d+)", out)]
                                   for k in ("cwnd_pkts", "rate_mbps", "srtt_us",
                                             "min_rtt_us", "outstanding_pkts")}
                rec["qp_state_raw"] = out[-12000:]
            # the end of each flow: its result line (or its exit, when it failed);
            # the snapshots then, not after the teardown (rxe's takes ~25 s
            # with a full queue)
            t_res = [pr.wait_line(rf"^\s*{size}\s+\d+\s", max(5, th[i] + D + 30 - time.monotonic()))
                     for i, pr in enumerate(procs)]
            sampler.stop()
            q1 = qs.read()
            qs.close()
            c1 = (self.cli.counters(cdev), self.srv.counters(sdev))
            samples, err = self.srv.qps_stop()
            qps_on = False
            flows = []
            for i, (fid, pr) in enumerate(zip(fids, procs)):
                t_w = time.monotonic()
                crc, cout = self.cli.wait(fid, 15)
                flows.append(dict(flow_ids(cout), port=ports[i], t_header=th[i] - t_all,
                                  t_result=t_res[i] - t_all if t_res[i] else None,
                                  teardown=time.monotonic() - t_w,
                                  client_rc=crc, perftest=parse_bw(cout, size)))
                if crc != 0:
                    flows[-1]["client_out"] = cout[-3000:]
            started_cli = []
            for i, fid in enumerate(fids):
                src, sout = self.srv.wait(fid, 10)
                flows[i]["server_rc"] = src
                if src != 0:
                    flows[i]["server_out"] = sout[-2000:]
            started_srv = []
            for f in flows:             # progress of each flow at the receiver
                f["progress"] = flow_progress(samples, f, t_all)
            order = sorted(range(n), key=lambda i: th[i])
            rec["flow_runs"] = [flows[i] for i in order]
            rec["window"] = [0.0, t_w1 - t_all]
            rec["qps_error"] = err
            rec["counters"] = {"client": counter_delta(c0[0], c1[0]),
                               "server": counter_delta(c0[1], c1[1])}
            rec["qdisc_before"], rec["qdisc_after"] = q0, q1
            rec["qdisc_series"] = [[round(t - t_all, 3)] + v for t, v in sampler.points()]
            rec["cpu"] = {nm: cpu_delta(x, y) for (nm, x), (_, y) in zip(w0, w1)}
            rec["ok"] = True
            rec["result"] = bottleneck_analyze(rec)
        except (RuntimeError, OSError) as e:
            rec["error"] = str(e)
        finally:
            if sampler:
                sampler.stop()
            if qps_on:
                try:
                    self.srv.qps_stop()
                except (SystemExit, OSError):
                    pass
            for fid in started_cli:
                try:
                    self.cli.wait(fid, 0.1)
                except KeyError:
                    pass
            for fid in started_srv:
                try:
                    self.srv.wait(fid, 1)
                except (KeyError, SystemExit):
                    pass
            try:
                self.set_bottleneck(False)
            except (RuntimeError, OSError):
                pass
        self.event(rid, "end")
        rec["secs"] = time.monotonic() - t0
        return self.finish(rec, idx, total, t0)

    def finish(self, rec, idx, total, t0):
        self.out.write(json.dumps(rec) + "\n")
        self.out.flush()
        if rec["ok"]:
            if rec["kind"] == "bottleneck":
                r = rec["result"]
                v = (f"flows {' '.join(f'{x:.2f}' for x in r['goodput'])} Mb/s, "
                     f"sum {r['aggregate']:.2f}, Jain {r['jain']:.3f}, backlog avg "
                     f"{fmt(r['backlog_avg'])} max {r['backlog_max']} pkts, drops {r['drops']}, "
                     f"marks {r['marks']}")
            elif rec["kind"] in ("bw", "iperf"):
                v = f"{rec['gbps']:.4f} Gb/s {rec.get('msg_s', 0):.0f} msg/s"
            else:
                v = f"typical {rec['t_typical']:.2f} us avg {rec['t_avg']:.2f} us"
        else:
            v = "FAILED: " + rec.get("error", "")
        log(f"[{idx}/{total}] {rec['id']}: {v} ({time.monotonic() - t0:.1f} s)")
        return rec

    def stats(self, tag):
        """Device counters and link statistics of both ends, for the record
        (mroce counts retransmissions, timeouts and drops)."""
        ends = [("client", self.cli), ("server", self.srv)]
        if self.a.mode == "loop":
            ends = ends[:1]
        with open(f"{self.a.results}/stats-{tag}.txt", "w") as f:
            for name, end in ends:
                for argv in (["rdma", "statistic", "show"], ["ip", "-s", "link"],
                             ["tc", "-s", "qdisc"]):
                    try:
                        rc, out = end.run(argv)
                    except Exception as e:      # the record must not fail the run
                        rc, out = 1, repr(e)
                    f.write(f"== {name}: {' '.join(argv)} (rc {rc})\n{out}\n")

    def run(self):
        self.stats("before")
        plan = make_plan(self.a)
        log(f"{self.a.mode}: {len(plan)} runs")
        with open(f"{self.a.results}/plan.json", "w") as f:
            json.dump(plan, f, indent=1)
        failed = 0
        t0 = time.monotonic()
        for i, p in enumerate(plan, 1):
            rec = self.run_one(p, i, len(plan))
            failed += not rec["ok"]
        self.set_loss(None)
        if self.cc_now != self.cc_boot and all(self.cc_boot.values()):
            try:                # the devices as they were at boot
                self.set_cc(self.cc_boot)
            except RuntimeError as e:
                log(f"restoring cc_algo {self.cc_boot}: {e}")
        self.stats("after")
        log(f"{self.a.mode}: {len(plan)} runs, {failed} failed, {time.monotonic() - t0:.0f} s")
        if self.a.mode == "pair":
            self.srv.quit()
        return 0


def cmd_drive(a):
    global NICE
    NICE = a.nice
    return Driver(a).run()


# ----------------------------------------------------------------- hostmon
def host_sample(tag):
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    v += [0] * (8 - len(v))
    busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
    total = sum(v[:8])
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
                st = f.read().rsplit(")", 1)[1].split()
            qemu += int(st[11]) + int(st[12])     # utime + stime
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


# ------------------------------------------------------------------ report
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


def host_other(hostmon, path_dir, rid):
    """Cores used on the host by everything but this run's qemus, between
    the run's w0/w1 events (else start/end)."""
    evs = {}
    for s in hostmon:
        if s.get("dir") != path_dir:
            continue
        m = re.match(r"\d+-(.*)-(start|w0|w1|end)$", s["ev"])
        if m and m.group(1) == rid:
            evs[m.group(2)] = s
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


def fmt(v, digits=3):
    if v is None:
        return "–"
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 100:
        return f"{v:.0f}"
    d = max(0, digits - 1 - int(__import__("math").floor(__import__("math").log10(a))))
    return f"{v:.{d}f}"


def cell(s, digits=3):
    if not s:
        return "–"
    if s["n"] == 1:
        return fmt(s["median"], digits)
    return f"{fmt(s['median'], digits)} ({fmt(s['min'], digits)}–{fmt(s['max'], digits)})"


def ratio(a, b):
    if not a or not b or not b["median"]:
        return None
    return a["median"] / b["median"]


def cmd_report(a):
    out = a.out
    meta = {}
    try:
        with open(f"{out}/meta.json") as f:
            meta = json.load(f)
    except (OSError, ValueError):
        pass
    hostmon = load_jsonl(f"{out}/hostmon.jsonl")
    paths = []
    runs = {}
    for path, d in (("pair", "pair-b"), ("single", "single"), ("loop", "single/loop")):
        r = load_jsonl(f"{out}/{d}/runs.jsonl")
        if r:
            paths.append(path)
            for x in r:
                x["host_other"] = host_other(hostmon, os.path.basename(d), x["id"])
            runs[path] = r

    def sel(path, **kw):
        return [r for r in runs.get(path, [])
                if all(r.get(k) == v for k, v in kw.items())]

    def ok(rs):
        return [r for r in rs if r.get("ok")]

    rows = []          # summary rows (also the JSON)

    def add(path, scenario, metric, unit, vals, raw_kind=None, better="higher", extra=None):
        """vals: transport -> list of runs' values (None = failed run)."""
        row = {"path": path, "scenario": scenario, "metric": metric, "unit": unit,
               "better": better, "values": {}, "failed": {}}
        for t, v in vals.items():
            row["values"][t] = spread([x for x in v if x is not None])
            row["failed"][t] = sum(1 for x in v if x is None)
        m = row["values"].get("mroce")
        row["mroce/rxe"] = ratio(m, row["values"].get("rxe"))
        row["raw"] = raw_kind
        row["mroce/raw"] = ratio(m, row["values"].get(raw_kind)) if raw_kind else None
        if extra:
            row.update(extra)
        rows.append(row)
        return row

    def others(rs):
        return spread([r["host_other"] for r in rs if r.get("host_other") is not None])

    loss_size = meta.get("params", {}).get("loss_size", 65536)
    for path in paths:
        tr = ["mroce", "rxe"] if path in RXE_PATHS else ["mroce"]
        lossless = (None, 0.0)
        bw_runs = [r for r in runs[path] if r["kind"] == "bw" and r.get("loss") is None]
        verbs = []
        for r in runs[path]:
            if r["kind"] == "bw" and r["verb"] not in verbs:
                verbs.append(r["verb"])
        sizes = sorted({r["size"] for r in bw_runs})
        for verb in verbs:
            for size in sizes:
                rs = {t: sel(path, kind="bw", verb=verb, size=size, transport=t) for t in tr}
                rs = {t: [r for r in v if r.get("loss") is None] for t, v in rs.items()}
                raw = {}
                if verb == "write":
                    raw["tcp"] = [r for r in sel(path, kind="iperf", proto="tcp", size=size)
                                  if r.get("loss") is None]
                    raw["udp"] = sel(path, kind="iperf", proto="udp",
                                     size=min(size, meta.get("params", {}).get("udp_max", 1472)))
                if not any(rs.values()):
                    continue
                allr = sum(rs.values(), []) + sum(raw.values(), [])
                ho = others(allr)
                g = {t: [r["gbps"] if r.get("ok") else None for r in v] for t, v in rs.items()}
                g.update({t: [r["gbps"] if r.get("ok") else None for r in v] for t, v in raw.items()})
                note = {}
                add(path, f"{verb}_bw {size} B", "throughput", "Gb/s", g, "tcp",
                    extra=dict(note, host_other=ho))
                mr = {t: [r["msg_s"] / 1e6 if r.get("ok") else None for r in v] for t, v in rs.items()}
                if "udp" in raw:
                    mr["udp"] = [r["msg_s"] / 1e6 if r.get("ok") and "msg_s" in r else None
                                 for r in raw["udp"]]
                add(path, f"{verb}_bw {size} B", "message rate", "Mmsg/s", mr, "udp",
                    extra=dict(note, host_other=ho))
        for verb in [v for v in ("write", "send", "read") if sel(path, kind="lat", verb=v)]:
            rs = {t: sel(path, kind="lat", verb=verb, transport=t) for t in tr}
            rs["udp"] = sel(path, kind="udplat")
            size = (rs["mroce"] or [{}])[0].get("size", 8)
            ho = others(sum(rs.values(), []))
            for key, label in (("t_typical", "latency typical"), ("t_avg", "latency average"),
                               ("p99", "latency p99")):
                add(path, f"{verb}_lat {size} B", label, "µs",
                    {t: [r[key] if r.get("ok") else None for r in v] for t, v in rs.items()},
                    "udp", better="lower", extra={"host_other": ho})
        # loss
        lrs = [r for r in runs[path] if r.get("loss") is not None]
        if lrs:
            levels = sorted({r["loss"] for r in lrs})
            tt = tr + ["tcp"]

            def lruns(t, lvl):
                if t == "tcp":
                    rs = sel(path, kind="iperf", proto="tcp", size=loss_size)
                else:
                    rs = sel(path, kind="bw", verb="write", size=loss_size, transport=t)
                return [r for r in rs if r.get("loss") in lvl]
            # lossless baseline: the write_bw rows' runs and the sweep's 0 %
            base = {t: spread([r["gbps"] for r in ok(lruns(t, lossless))]) for t in tt}
            for lvl in levels:
                if lvl == 0:
                    continue
                rs = {t: lruns(t, (lvl,)) for t in tt}
                fr = {}
                for t, v in rs.items():
                    b = base.get(t)
                    fr[t] = [(r["gbps"] / b["median"] if r.get("ok") else 0.0)
                             if b and b["median"] else None for r in v]
                add(path, f"loss {lvl:g} %", "goodput / lossless", "fraction", fr, "tcp",
                    extra={"host_other": others(sum(rs.values(), [])),
                           "gbps": {t: spread([r["gbps"] for r in ok(v)]) for t, v in rs.items()},
                           "failed": {t: sum(1 for r in v if not r.get("ok"))
                                      for t, v in rs.items()},
                           "baseline_gbps": base})
        # CPU per GB moved (lossless write_bw loss_size, measured window)
        cpu = {}
        for t in tr + ["tcp"]:
            kern, tot = [], []
            if t == "tcp":
                rs = sel(path, kind="iperf", proto="tcp", size=loss_size)
            else:
                rs = sel(path, kind="bw", verb="write", size=loss_size, transport=t)
            for r in ok(rs):
                c = r.get("cpu")
                if not c or r.get("loss") not in lossless:
                    continue
                secs = max(x["secs"] for x in c.values())
                gb = r["gbps"] * secs / 8
                if gb <= 0:
                    continue
                kern.append(sum(x["kernel"] for x in c.values()) / gb)
                tot.append(sum(x["kernel"] + x["user"] for x in c.values()) / gb)
            cpu[t] = (kern, tot)
        if any(v[0] for v in cpu.values()):
            add(path, f"write_bw {loss_size} B", "guest CPU kernel (sys+irq+softirq) per GB",
                "CPU-s/GB", {t: v[0] for t, v in cpu.items()}, "tcp", better="lower")
            add(path, f"write_bw {loss_size} B", "guest CPU total per GB", "CPU-s/GB",
                {t: v[1] for t, v in cpu.items()}, "tcp", better="lower")

    bottleneck_rows(runs.get("pair", []), add, others)

    # order: bw rows by verb/size, then lat, loss, cpu, bottleneck
    def key(r):
        s = r["scenario"]
        if r.get("table") == "bottleneck":
            return (["pair", "loop", "single"].index(r["path"]), 4, r["order"], 0, "")
        m = re.match(r"(\w+)_(bw|lat) (\d+)", s)
        pi = ["pair", "loop", "single"].index(r["path"])
        if m and m.group(2) == "bw" and "CPU" not in r["metric"]:
            return (pi, 0, ["write", "send", "read"].index(m.group(1)), int(m.group(3)), r["metric"])
        if m and m.group(2) == "lat":
            return (pi, 1, ["write", "send", "read"].index(m.group(1)), 0, "")
        if s.startswith("loss"):
            return (pi, 2, float(s.split()[1]), 0, "")
        return (pi, 3, 0, 0, r["metric"])
    rows.sort(key=key)

    summary = {"meta": meta, "rows": rows,
               "runs": {p: runs[p] for p in paths},
               "targets": targets(rows)}
    with open(f"{out}/summary.json", "w") as f:
        json.dump(summary, f, indent=1)
    md = markdown(summary)
    with open(f"{out}/summary.md", "w") as f:
        f.write(md)
    print(md)
    if not a.no_charts:
        charts(out, runs, rows, loss_size)
    # filled?  pair: mroce, rxe and a raw value in one row; single: mroce, raw
    def filled_row(r, need):
        return all(r["values"].get(t) for t in need) and r["raw"] and r["values"].get(r["raw"])
    if "pair" in paths:
        filled = any(r["path"] == "pair" and not r.get("table") and filled_row(r, ["mroce", "rxe"])
                     for r in rows)
        if not any(r["path"] == "pair" and not r.get("table") for r in rows):
            agg = [r for r in rows if r.get("table") == "bottleneck"
                   and r["metric"] == "goodput aggregate"]
            filled = bool(agg) and all(v for v in agg[0]["values"].values())
    else:
        filled = any(filled_row(r, ["mroce"]) for r in rows)
    if a.require_filled and not filled:
        print("bench: table not filled (need mroce, rxe and raw values)", file=sys.stderr)
        return 1
    return 0


BN_NAME = {"rxe": "rdma_rxe"}
WC_STATUS = {5: "IBV_WC_WR_FLUSH_ERR", 9: "IBV_WC_REM_INV_REQ_ERR", 10: "IBV_WC_REM_ACCESS_ERR",
             11: "IBV_WC_REM_OP_ERR", 12: "IBV_WC_RETRY_EXC_ERR", 13: "IBV_WC_RNR_RETRY_EXC_ERR"}


def bn_variant(r):
    return run_name(r)[len("bottleneck-"):]


def bn_title(v):
    return BN_NAME.get(v) or (f"mroce cc={v[6:]}" if v.startswith("mroce-") else v)


def bottleneck_rows(runs, add, others):
    """The bottleneck scenario's rows (table "bottleneck"): one column per
    variant (mroce-<cc>, rxe), metrics re-derived from the raw records."""
    bn = [r for r in runs if r.get("kind") == "bottleneck"]
    if not bn:
        return
    variants = []
    for r in bn:
        if bn_variant(r) not in variants:
            variants.append(bn_variant(r))
    for r in bn:
        if r.get("ok"):
            r["result"] = bottleneck_analyze(r)
    flows = max(r.get("flows", 3) for r in bn)
    b = next((r["bottleneck"] for r in bn if r.get("bottleneck")), {})
    size = bn[0].get("size", 65536)
    scen = f"bottleneck {flows} x write_bw {size // 1024 if size % 1024 == 0 else size}" + \
        (" KiB" if size % 1024 == 0 else " B")
    ho = others(bn)
    order = [0]

    def row(metric, unit, fn, applies=lambda v: True, better="higher", none=None):
        vals = {}
        for v in variants:
            if not applies(v):
                continue
            vals[v] = [fn(r) if r.get("ok") else None for r in bn if bn_variant(r) == v]
        order[0] += 1
        return add("pair", scen, metric, unit, vals, better=better,
            extra={"table": "bottleneck", "order": order[0], "host_other": ho, "flows": flows,
                   "none_label": none, "bottleneck": b, "duration": bn[0].get("duration"),
                   "not_settled": {v: sum(1 for r in bn if bn_variant(r) == v and r.get("ok")
                                          and fn(r) is None) for v in vals} if none else None})

    def res(k):
        return lambda r: r["result"].get(k)

    def cnt(end, *names):
        return lambda r: sum(r["counters"][end].get(n, 0) for n in names)

    def is_mroce(v):
        return v.startswith("mroce")

    def is_rxe(v):
        return v == "rxe"

    for i in range(flows):
        row(f"goodput flow {i + 1}" + (" (first to start)" if i == 0 else ""), "Mb/s",
            lambda r, i=i: r["result"]["goodput"][i] if i < len(r["result"]["goodput"]) else None)
    row("goodput aggregate", "Mb/s", res("aggregate"))
    row("goodput aggregate, perftest (cross-check)", "Mb/s", res("perftest_aggregate"))
    row("aggregate / bottleneck rate", "fraction", res("utilisation"))
    row("bottleneck output (tbf bytes: headers and retransmissions included)", "Mb/s",
        res("wire_mbps"))
    row("Jain fairness index (window means)", "", res("jain"))
    row("short-term fairness: median of the per-second Jain indices", "",
        res("jain_per_second_median"))
    row("flow start spread", "s", res("start_spread"), better="lower")
    row(f"time to stable aggregate ({BN_BIN:g}-s sums within ±{BN_STABLE:.0%} of the window "
        "mean from then on)", "s", res("settle_aggregate"), better="lower", none="not settled")
    row(f"time to fair shares ({BN_BIN:g}-s Jain ≥ {BN_FAIR:g} from then on)", "s",
        res("settle_fair"), better="lower", none="not settled")
    row("bottleneck backlog average", "packets", res("backlog_avg"), better="lower")
    row("bottleneck backlog max", "packets", res("backlog_max"), better="lower")
    row("bottleneck queueing delay average (backlog bytes / rate)", "ms",
        res("queue_delay_ms"), better="lower")
    row("bottleneck drops, all", "packets", res("drops"), better="lower")
    row("bottleneck drops within the window", "packets", res("drops_window"), better="lower")
    row("bottleneck drops: queue full", "packets", res("drops_overflow"), better="lower")
    row("bottleneck drops: AQM", "packets", res("drops_aqm"), better="lower")
    row("bottleneck ECN CE marks", "packets", res("marks"))
    row("sender retransmitted packets (mroce retx_pkts)", "packets",
        cnt("client", "retx_pkts"), is_mroce, better="lower")
    row("sender RTO events (mroce rto_events)", "", cnt("client", "rto_events"), is_mroce,
        better="lower")
    row("sender spurious retransmissions (mroce retx_spurious)", "packets",
        cnt("client", "retx_spurious"), is_mroce, better="lower")
    row("receiver CE-marked arrivals (mroce rx_ce_pkts)", "packets",
        cnt("server", "rx_ce_pkts"), is_mroce)
    row("QP window at the end, median of flows (mroce cwnd_pkts)", "packets",
        lambda r: statistics.median(r["qp_state"]["cwnd_pkts"])
        if r.get("qp_state", {}).get("cwnd_pkts") else None, is_mroce)
    row("QP rate at the end, median of flows (mroce rate_mbps)", "Mb/s",
        lambda r: statistics.median(r["qp_state"]["rate_mbps"])
        if r.get("qp_state", {}).get("rate_mbps") else None, is_mroce)
    row("sender retries: go-back-N restarts (rxe completer_retry_err)", "",
        cnt("client", "completer_retry_err"), is_rxe, better="lower")
    row("sender NAKs received (rxe rcvd_seq_err)", "", cnt("client", "rcvd_seq_err"), is_rxe,
        better="lower")
    row("sender local xmit refusals, resent (rxe send_err)", "", cnt("client", "send_err"),
        is_rxe, better="lower")
    row("receiver out-of-sequence + duplicate packets (rxe)", "packets",
        cnt("server", "out_of_seq_request", "duplicate_request"), is_rxe, better="lower")
    last = row("flows that failed before the end", "", res("flows_failed"), better="lower")
    notes = []
    for r in bn:
        if not r.get("ok"):
            notes.append(f"`{r['id']}`: {r.get('error', 'failed')}")
            continue
        for x in r["result"].get("failures", []):
            st = WC_STATUS.get(x["status"], f"status {x['status']}") if x["status"] is not None \
                else f"exit {x['rc']}"
            lp = f"{x['last_progress']:.1f} s" if x["last_progress"] is not None else "its start"
            notes.append(f"`{r['id']}` flow {x['flow']}: {st}, last progress at {lp}")
    if notes:
        last["notes"] = notes


def find_row(rows, path, scenario, metric):
    for r in rows:
        if r["path"] == path and r["scenario"] == scenario and r["metric"] == metric:
            return r
    return None


def targets(rows):
    """The issue's targets, evaluated on medians."""
    t = []

    def val(r, k):
        v = r and r["values"].get(k)
        return v["median"] if v else None

    def one(name, goal, got, ok):
        t.append({"target": name, "goal": goal,
                  "value": got, "met": ok if got is not None else None})

    r = find_row(rows, "pair", "write_bw 65536 B", "throughput")
    one("write_bw 64 KiB >= 2x rxe (2 guests)", ">= 2.0",
        r and r["mroce/rxe"], r and r["mroce/rxe"] is not None and r["mroce/rxe"] >= 2)
    r = find_row(rows, "single", "write_bw 65536 B", "throughput")
    x = r and ratio(r["values"].get("mroce"), r["values"].get("tcp"))
    one("write_bw 64 KiB >= 0.5x kernel TCP (1 guest, veth)", ">= 0.5", x, x is not None and x >= 0.5)
    r = find_row(rows, "pair", "send_bw 64 B", "message rate")
    one("send_bw 64 B message rate >= 2x rxe (2 guests)", ">= 2.0",
        r and r["mroce/rxe"], r and r["mroce/rxe"] is not None and r["mroce/rxe"] >= 2)
    r = find_row(rows, "pair", "write_lat 8 B", "latency typical")
    one("write_lat 8 B typical <= 0.8x rxe (2 guests)", "<= 0.8",
        r and r["mroce/rxe"], r and r["mroce/rxe"] is not None and r["mroce/rxe"] <= 0.8)
    r = find_row(rows, "pair", "write_lat 8 B", "latency average")
    one("write_lat 8 B average <= 0.8x rxe (2 guests)", "<= 0.8",
        r and r["mroce/rxe"], r and r["mroce/rxe"] is not None and r["mroce/rxe"] <= 0.8)
    r = find_row(rows, "loop", "write_bw 65536 B", "throughput")
    one("write_bw 64 KiB >= 2x rxe (1 guest, same-device loopback)", ">= 2.0",
        r and r["mroce/rxe"], r and r["mroce/rxe"] is not None and r["mroce/rxe"] >= 2)
    r = find_row(rows, "loop", "send_bw 64 B", "message rate")
    one("send_bw 64 B message rate >= 2x rxe (1 guest, loopback)", ">= 2.0",
        r and r["mroce/rxe"], r and r["mroce/rxe"] is not None and r["mroce/rxe"] >= 2)
    for m in ("typical", "average"):
        r = find_row(rows, "loop", "write_lat 8 B", f"latency {m}")
        one(f"write_lat 8 B {m} <= 0.8x rxe (1 guest, loopback)", "<= 0.8",
            r and r["mroce/rxe"], r and r["mroce/rxe"] is not None and r["mroce/rxe"] <= 0.8)
    for path in ("pair", "single"):
        r = find_row(rows, path, "loss 1 %", "goodput / lossless")
        x = val(r, "mroce")
        one(f"goodput at 1 % loss >= 90 % of lossless ({'2 guests' if path == 'pair' else '1 guest'})",
            ">= 0.9", x, x is not None and x >= 0.9)
    return t


PATH_TITLE = {"pair": "2 guests, 1 vCPU each, virtio-net over a qemu dgram (AF_UNIX) link",
              "loop": "1 guest, 2 vCPUs, same-device loopback (rxe0 and mroce0 on dummy0; rxe short-cuts "
                      "its loopback, mroce goes through UDP on lo)",
              "single": "1 guest, 2 vCPUs, veth between two netns (rxe cannot: init_net only)"}
TNAME = {"mroce": "mroce", "rxe": "rdma_rxe", "tcp": "TCP (iperf3)", "udp": "UDP (≤1472 B)"}


def markdown(s):
    meta, rows = s["meta"], s["rows"]
    L = []
    L.append("# mroce bench: mroce vs rdma_rxe vs kernel TCP/UDP\n")
    if meta:
        p = meta.get("params", {})
        L.append(f"* date: {meta.get('date', '?')}, run time {meta.get('elapsed', '?')}")
        L.append(f"* module: tree at commit `{meta.get('commit', '?')}` (last change to the module or provider: `{meta.get('module_commit', '?')}`){' (+ uncommitted changes: ' + meta['dirty'] + ')' if meta.get('dirty') else ''}, "
                 f"mroce.ko sha256 `{meta.get('ko_sha256', '?')[:16]}`")
        L.append(f"* guest kernel {meta.get('guest_kernel', '?')}, {meta.get('qemu', '?')}, TCG, host {meta.get('host_cpus', '?')} CPUs"
                 f" ({meta.get('host_cpu_model', '?')})")
        L.append(f"* perftest bw: -D {p.get('duration')} -f {p.get('margin')} (measured window {p.get('duration', 0) - 2 * p.get('margin', 0)} s; "
                 f"loss sweep -D {p.get('loss_duration')}), lat: -n {p.get('lat_iters')}; iperf3 TCP -t D-2f -O f, UDP -t D-f; "
                 f"repeats {p.get('repeat')} (loss sweep {p.get('loss_repeat')}), transports interleaved, order rotating"
                 + (f"; test processes at nice {p['nice']}" if p.get("nice") else "")
                 + (f"; single path verbs: {p.get('single_verbs')}" if p.get("single_verbs") else ""))
        L.append("* cells: median (min–max) over the repeats; ratios of medians; "
                 "“host other” = host CPU cores used by processes other than this run's qemus during the measured window (median)")
        L.append("* raw: TCP = iperf3 TCP with write size = message size; UDP = iperf3 UDP datagrams of min(size, 1472) B "
                 "(receiver side, sender unthrottled); latency: udp_pingpong (busy-polling UDP ping-pong, RTT/2 like perftest)")
        L.append("")
    for path in ("pair", "loop", "single"):
        pr = [r for r in rows if r["path"] == path and not r.get("table")]
        if not pr:
            continue
        tr = ["mroce", "rxe", "tcp", "udp"] if path in RXE_PATHS else ["mroce", "tcp", "udp"]
        L.append(f"## {PATH_TITLE[path]}\n")
        hdr = ["scenario", "metric"] + [TNAME[t] for t in tr]
        if path in RXE_PATHS:
            hdr.append("mroce/rxe")
        hdr += ["mroce/raw", "host other"]
        L.append("| " + " | ".join(hdr) + " |")
        L.append("|" + "---|" * len(hdr))
        for r in pr:
            cells = [r["scenario"] + (f" ({r['note']})" if r.get("note") else ""),
                     f"{r['metric']} [{r['unit']}]"]
            for t in tr:
                c = cell(r["values"].get(t))
                if r["failed"].get(t):
                    c += f" ({r['failed'][t]} failed)"
                cells.append(c)
            if path in RXE_PATHS:
                cells.append(fmt(r["mroce/rxe"]) if r["mroce/rxe"] is not None else "–")
            cells.append(f"{fmt(r['mroce/raw'])} ({r['raw']})" if r["mroce/raw"] is not None else "–")
            cells.append(fmt(r["host_other"]["median"], 2) if r.get("host_other") else "–")
            L.append("| " + " | ".join(cells) + " |")
        L.append("")
    L += bottleneck_markdown([r for r in rows if r.get("table") == "bottleneck"])
    L.append("## Targets\n")
    L.append("| target | goal | measured | met |")
    L.append("|---|---|---|---|")
    for t in s["targets"]:
        met = {True: "yes", False: "**no**", None: "–"}[t["met"]]
        L.append(f"| {t['target']} | {t['goal']} | {fmt(t['value']) if t['value'] is not None else '–'} | {met} |")
    L.append("")
    return "\n".join(L)


def bottleneck_markdown(rows):
    if not rows:
        return []
    b = rows[0].get("bottleneck") or {}
    variants = []
    for r in rows:
        for v in r["values"]:
            if v not in variants:
                variants.append(v)
    n, _, size = rows[0]["scenario"].split(" ", 1)[1].split(" ", 2)
    L = [f"## Bottleneck: {n} concurrent RC flows B → A ({size}) through one "
         f"rate-limited, ECN-marking queue on B's egress (2 guests)\n"]
    if b:
        L.append(f"* bottleneck: `tbf rate {b.get('rate_bps', 0) / 1e6:g}mbit burst {b.get('burst')}` "
                 f"→ `{b.get('aqm')}`, on B's eth0 (MTU {b.get('mtu')}); only RoCE "
                 f"(UDP to {' and '.join(str(x) for x in b.get('udp_ports', []))}) goes through it, "
                 f"the control TCP bypasses it")
    L.append(f"* each flow: `ib_write_bw -s 65536 -N -D {rows[0].get('duration', '?')} -f 1`, "
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
        cells = [r["metric"] + (f" [{r['unit']}]" if r["unit"] else "")]
        for v in variants:
            if v not in r["values"]:
                cells.append("n/a")
                continue
            c = cell(r["values"].get(v))
            sv = r["values"].get(v)
            if sv and all(float(sv[k]).is_integer() for k in ("median", "min", "max")) \
                    and r["unit"] in ("packets", ""):     # counts
                c = (f"{sv['median']:.0f}" if sv["n"] == 1 or sv["min"] == sv["max"] else
                     f"{sv['median']:.0f} ({sv['min']:.0f}–{sv['max']:.0f})")
            ns = (r.get("not_settled") or {}).get(v, 0)
            fl = r["failed"].get(v, 0) - ns
            if ns:
                c = (c + " " if c != "–" else "") + f"({ns} {r['none_label']})"
            if fl:
                c += f" ({fl} failed)"
            cells.append(c)
        L.append("| " + " | ".join(cells) + " |")
    notes = [n for r in rows for n in r.get("notes", [])]
    if notes:
        L.append("\nFlows that ended with an error (time since the last flow's start):\n")
        L += [f"* {n}" for n in notes]
    ho = rows[0].get("host_other")
    if ho:
        L.append(f"\nhost other (CPU cores busy outside this run's qemus, median over the runs): "
                 f"{fmt(ho['median'], 2)}")
    L.append("")
    return L


def charts(out, runs, rows, loss_size):
    """gnuplot PNGs: throughput vs message size, goodput vs loss rate."""
    import shutil
    if not shutil.which("gnuplot"):
        print("bench: gnuplot not found, no charts", file=sys.stderr)
        return
    dd = f"{out}/charts"
    os.makedirs(dd, exist_ok=True)
    term = "set terminal pngcairo size 900,560 noenhanced font ',10'"
    if subprocess.run(["gnuplot", "-e", "set terminal pngcairo"],
                      capture_output=True).returncode != 0:
        term = "set terminal png size 900,560 noenhanced"
    series = []
    for path in runs:
        for verb in ("write", "send", "read"):
            for t in (["mroce", "rxe"] if path in RXE_PATHS else ["mroce"]):
                pts = []
                for r in rows:
                    m = re.match(rf"{verb}_bw (\d+) B", r["scenario"])
                    if r["path"] == path and m and r["metric"] == "throughput" and r["values"].get(t):
                        v = r["values"][t]
                        pts.append((int(m.group(1)), v["median"], v["min"], v["max"]))
                if pts:
                    series.append((path, f"{t} {verb}", sorted(pts)))
        pts = []
        for r in rows:
            m = re.match(r"write_bw (\d+) B", r["scenario"])
            if r["path"] == path and m and r["metric"] == "throughput" and r["values"].get("tcp"):
                v = r["values"]["tcp"]
                pts.append((int(m.group(1)), v["median"], v["min"], v["max"]))
        if pts:
            series.append((path, "kernel TCP", sorted(pts)))
    files = []
    for path in runs:
        ss = [s for s in series if s[0] == path]
        if not ss:
            continue
        plots = []
        for i, (_, name, pts) in enumerate(ss):
            fn = f"{dd}/bw-{path}-{i}.dat"
            with open(fn, "w") as f:
                for p in pts:
                    f.write(" ".join(str(x) for x in p) + "\n")
            plots.append(f"'{fn}' using 1:2:3:4 with yerrorlines title '{name}'")
        png = f"{dd}/throughput-vs-size-{path}.png"
        script = "\n".join([
            term, f"set output '{png}'",
            f"set title 'Throughput vs message size — {PATH_TITLE[path]}'",
            "set logscale x 2", "set logscale y", "set xlabel 'message size [B]'",
            "set ylabel 'Gb/s (median, min-max bars)'", "set key left top", "set grid",
            "set xtics ('64' 64, '4K' 4096, '64K' 65536)", "set xrange [40:100000]",
            "plot " + ", ".join(plots)])
        files.append((png, script))
    # goodput vs loss (loss rates as categories: 0, 0.1, 1, 5, 10 %)
    levels = sorted({0.0} | {float(r["scenario"].split()[1]) for r in rows
                             if r["scenario"].startswith("loss ")})
    plots = []
    i = 0
    for path in runs:
        for t in (["mroce", "rxe", "tcp"] if path in RXE_PATHS else ["mroce", "tcp"]):
            pts = [(0.0, 1.0, 1.0, 1.0)]
            for r in rows:
                if r["path"] == path and r["scenario"].startswith("loss ") and r["values"].get(t):
                    v = r["values"][t]
                    pts.append((float(r["scenario"].split()[1]), v["median"], v["min"], v["max"]))
            if len(pts) > 1:
                fn = f"{dd}/loss-{i}.dat"
                i += 1
                with open(fn, "w") as f:
                    for p in sorted(pts):
                        f.write(f"{levels.index(p[0])} {p[0]:g} {p[1]} {p[2]} {p[3]}\n")
                plots.append(f"'{fn}' using 1:3:4:5:xtic(2) with yerrorlines title '{TNAME[t]} ({'2 guests' if path == 'pair' else '1 guest veth'})'")
    if plots:
        png = f"{dd}/goodput-vs-loss.png"
        script = "\n".join([
            term, f"set output '{png}'",
            f"set title 'write_bw {loss_size} B goodput under netem loss (fraction of lossless)'",
            "set xlabel 'netem loss rate on the sender egress [%]'",
            "set ylabel 'goodput / lossless goodput (median, min-max bars)'",
            "set yrange [0:*]", f"set xrange [-0.3:{len(levels) - 0.7}]", "set key right top",
            "set grid",
            "plot " + ", ".join(plots) + ", 0.9 with lines dashtype 2 lc rgb 'gray' title '90 % target'"])
        files.append((png, script))
    # bottleneck: per-flow goodput and the backlog over time, first run of each variant
    bn, seen = [], set()
    for r in runs.get("pair", []):
        if r.get("kind") == "bottleneck" and r.get("ok") and bn_variant(r) not in seen:
            seen.add(bn_variant(r))
            bn.append(r)
    if bn:
        png = f"{dd}/bottleneck-pair.png"
        rate = (bn[0].get("bottleneck") or {}).get("rate_bps", 0) / 1e6
        lines = [term.replace("900,560", f"900,{300 * len(bn)}"), f"set output '{png}'",
                 f"set multiplot layout {len(bn)},1", "set grid", "set key outside right top",
                 "set xlabel 'seconds since the last flow started'", "set ylabel 'Mb/s'",
                 "set y2label 'backlog [packets]'", "set ytics nomirror", "set y2tics",
                 f"set yrange [0:{rate * 1.1 if rate else '*'}]",
                 f"set y2range [0:{(bn[0].get('bottleneck') or {}).get('limit', 100) * 1.1:g}]"]
        for j, r in enumerate(bn):
            plots = []
            for i, f in enumerate(r["flow_runs"]):
                fn = f"{dd}/bottleneck-{j}-flow{i}.dat"
                c = [(t, pk * f.get("mtu", 1024)) for t, pk in f.get("progress", [])]
                with open(fn, "w") as fh:      # goodput over the last second, every 0.5 s
                    t = c[0][0] + 1 if c else 0
                    while c and t <= c[-1][0]:
                        fh.write(f"{t:.2f} {(curve_at(c, t) - curve_at(c, t - 1)) * 8 / 1e6:.4f}\n")
                        t += 0.5
                plots.append(f"'{fn}' using 1:2 with lines lw 2 title 'flow {i + 1}'")
            fn = f"{dd}/bottleneck-{j}-queue.dat"
            with open(fn, "w") as fh:
                for x in r.get("qdisc_series", []):
                    fh.write(f"{x[0]} {x[1]}\n")
            plots.append(f"'{fn}' using 1:2 axes x1y2 with lines lc rgb 'gray' title 'backlog'")
            lines += [f"set title '{bn_title(bn_variant(r))} (run {r['id']})'",
                      f"set xrange [{min(f['t_header'] for f in r['flow_runs']) - 1}:{r['window'][1] + 2}]",
                      "plot " + ", ".join(plots)]
        lines.append("unset multiplot")
        files.append((png, "\n".join(lines)))
    for png, script in files:
        gp = png[:-4] + ".gp"
        with open(gp, "w") as f:
            f.write(script + "\n")
        r = subprocess.run(["gnuplot", gp], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"bench: gnuplot {gp}: {r.stderr.strip()}", file=sys.stderr)


# -------------------------------------------------------------------- main
def floats(s):
    return [float(x) for x in s.split(",") if x.strip()]


def ints(s):
    out = []
    for x in s.split(","):
        x = x.strip().lower()
        if not x:
            continue
        mul = 1
        if x.endswith("k"):
            mul, x = 1024, x[:-1]
        out.append(int(x) * mul)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("agent")
    g.add_argument("--devs", default="mroce0,rxe0", type=lambda s: s.split(","))
    g.add_argument("--gid-prefix", default="0000:0000:0000:0000:0000:ffff:")
    g.add_argument("--idle-timeout", type=float, default=300)
    d = sub.add_parser("drive")
    d.add_argument("--mode", choices=("pair", "single", "loop"), required=True)
    d.add_argument("--results", default="/results")
    d.add_argument("--gid-prefix", default="0000:0000:0000:0000:0000:ffff:")
    d.add_argument("--repeat", type=int, default=3)
    d.add_argument("--loss-repeat", type=int, default=1)
    d.add_argument("--duration", type=int, default=3)
    d.add_argument("--margin", type=int, default=1)
    d.add_argument("--lat-iters", type=int, default=500)
    d.add_argument("--loss-duration", type=int, default=4)
    d.add_argument("--lat-size", type=int, default=8)
    d.add_argument("--sizes", type=ints, default=[64, 4096, 65536])
    d.add_argument("--verbs", default="write,send,read", type=lambda s: [x for x in s.split(",") if x])
    d.add_argument("--lat-verbs", default="write,send", type=lambda s: [x for x in s.split(",") if x])
    d.add_argument("--loss", type=floats, default=[0.1, 1, 5, 10])
    d.add_argument("--loss-size", type=int, default=65536)
    d.add_argument("--udp-max", type=int, default=1472)
    d.add_argument("--only", default="")
    d.add_argument("--nice", type=int, default=0,
                   help="nice value of the test processes (agent's too)")
    d.add_argument("--pingpong", required=True)
    d.add_argument("--bottleneck-repeat", type=int, default=1,
                   help="repetitions of the bottleneck scenario (pair only; 0: none)")
    d.add_argument("--bottleneck-rate", default="30mbit", help="tbf rate (tc syntax)")
    d.add_argument("--bottleneck-mark", default="1ms",
                   help="a delay: codel ce_threshold; a size (30kb): red ecn min")
    d.add_argument("--bottleneck-limit", type=int, default=100,
                   help="queue limit in packets (red: x (MTU+14) bytes)")
    d.add_argument("--bottleneck-duration", type=float, default=20,
                   help="seconds measured once every flow runs")
    d.add_argument("--bottleneck-flows", type=int, default=3)
    d.add_argument("--bottleneck-size", type=int, default=65536)
    d.add_argument("--bottleneck-cc", default="metaroce,none",
                   type=lambda s: [x for x in s.split(",") if x],
                   help="mroce cc_algo variants")
    d.add_argument("--bottleneck-interval", type=float, default=0.1,
                   help="seconds between backlog samples")
    d.add_argument("--connect-timeout", type=float, default=180)
    h = sub.add_parser("hostmon")
    h.add_argument("--out", required=True)
    h.add_argument("--tag", required=True, help="string in our qemus' command lines")
    h.add_argument("--stop-file", required=True)
    h.add_argument("--interval", type=float, default=0.2)
    h.add_argument("watch", nargs="+")
    r = sub.add_parser("report")
    r.add_argument("out")
    r.add_argument("--no-charts", action="store_true")
    r.add_argument("--require-filled", action="store_true")
    a = ap.parse_args()
    return {"agent": cmd_agent, "drive": cmd_drive, "hostmon": cmd_hostmon,
            "report": cmd_report}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
