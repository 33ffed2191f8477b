# SPDX-License-Identifier: GPL-2.0-only
"""`bench.py drive`: guest B of the pair (servers on guest A through its
agent) or the single guest (netns h1/h2, or the loopback devices).  Runs
the plan; every run becomes one record (a dict) in /results/runs.jsonl:
its plan item, argv, the parsed result, CPU window, counter deltas."""

import json
import os
import threading
import time

from . import bottleneck, proc, toolparse
from .common import LOOP_ADDR, PAIR_A, SINGLE_SRV, event_name, fmt, log, run_id
from .ends import LocalEnd, RemoteEnd
from .netlink import QdiscStats
from .plan import make_plan
from .sysinfo import counter_delta, cpu_delta, gid_index


class QdiscSampler(threading.Thread):
    """Samples the bottleneck every INTERVAL s (netlink, in-process):
    [(t, bottleneck.qdisc_point()), ...]."""

    def __init__(self, qs, interval):
        super().__init__(daemon=True)
        self.qs, self.interval = qs, interval
        self.samples = []
        self.halt = threading.Event()

    def run(self):
        while not self.halt.is_set():
            t = time.monotonic()
            try:
                self.samples.append((t, bottleneck.qdisc_point(self.qs.read())))
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


def summary_line(rec):
    """The log line of a finished run."""
    if not rec["ok"]:
        return "FAILED: " + rec.get("error", "")
    if rec["kind"] == "bottleneck":
        r = rec["result"]
        return (f"flows {' '.join(f'{x:.2f}' for x in r['goodput'])} Mb/s, "
                f"sum {r['aggregate']:.2f}, Jain {r['jain']:.3f}, backlog avg "
                f"{fmt(r['backlog_avg'])} max {r['backlog_max']} pkts, drops {r['drops']}, "
                f"marks {r['marks']}")
    if rec["kind"] in ("bw", "iperf"):
        return f"{rec['gbps']:.4f} Gb/s {rec.get('msg_s', 0):.0f} msg/s"
    return f"typical {rec['t_typical']:.2f} us avg {rec['t_avg']:.2f} us"


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
        else:       # single, jumbo: the same veth pair (jumbo: at JUMBO_MTU)
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
            open(f"{self.a.results}/ev/{event_name(self.seq, rid, phase)}", "w").close()
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
            got[name] = toolparse.parse_cc_added(out)
            self.cc_now[name] = got[name]
            if rc != 0 or got[name] != want[name]:
                raise RuntimeError(f"{name}: mroce0 with cc {want[name]}: rc {rc}: {out[-500:]}")
        self.cli_gid["mroce0"] = self.cli.gid("mroce0", self.a.gid_prefix)
        self.srv_gid["mroce0"] = self.srv.gid("mroce0", self.a.gid_prefix)
        return got

    def bottleneck_spec(self):
        """The tc batch of the bottleneck on B's egress (bottleneck.py)."""
        a = self.a
        end, dev = self.netem
        with open(f"/sys/class/net/{dev}/mtu") as f:
            mtu = int(f.read())
        try:
            with open("/sys/module/mroce/parameters/udp_port") as f:
                mport = int(f.read())
        except (OSError, ValueError):
            mport = 4792
        cmds, info = bottleneck.tc_commands(dev, a.bottleneck_rate, a.bottleneck_mark,
                                            a.bottleneck_limit, mtu, mport)
        return end, dev, cmds, info

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

    # ------------------------------------------------------- one run
    def argvs(self, p, D, f):
        """(server argv, client argv, (proto, port) the server binds) of a
        bw, lat, iperf or udplat run with perftest duration D, margin F."""
        a = self.a
        kind = p["kind"]
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
            return sargv, cargv, ("tcp", port)
        if kind == "iperf":
            port = self.next_port(5201)
            W = max(D - 2 * f, 1)
            sargv = ["iperf3", "-s", "-1", "-p", str(port)]
            cargv = ["iperf3", "-c", self.addr, "-p", str(port),
                     "-i", "1", "-f", "k", "--forceflush", "-l", str(p["size"])]
            if p["proto"] == "udp":     # -O skews UDP's receiver counts
                cargv += ["-t", str(W + f), "-u", "-b", "0"]
            else:
                cargv += ["-t", str(W), "-O", str(f)]
            return sargv, cargv, ("tcp", port)
        port = self.next_port(7300)
        sargv = [a.pingpong, "-s", "-p", str(port), "-n", str(a.lat_iters), "-t", "60"]
        cargv = [a.pingpong, "-c", self.addr, "-p", str(port), "-n", str(a.lat_iters),
                 "-l", str(p["size"]), "-t", "60"]
        return sargv, cargv, ("udp", port)

    def cpu_window(self, rid, kind, cp, t0, D, f, T, rec):
        """Snapshots of /proc/stat at the edges of the client's measured
        window, found in its output: perftest's header + F and + D - F,
        iperf3's first interval and its summary.  -> (w0, w1) or Nones."""
        w0 = w1 = None
        if kind == "bw":
            th = cp.wait_line(toolparse.PERFTEST_HEADER, T)
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
            if cp.wait_line(toolparse.IPERF_FIRST_INTERVAL, T) is not None:
                w0 = self.snap()
                self.event(rid, "w0")
                if cp.wait_line(toolparse.IPERF_SUMMARY, T) is not None:
                    w1 = self.snap()
                    self.event(rid, "w1")
        return w0, w1

    def run_one(self, p, idx, total):
        a = self.a
        if p["kind"] == "bottleneck":
            return self.run_bottleneck(p, idx, total)
        rid = run_id(idx, p)
        rec = dict(p, id=rid, path=a.mode, ok=False)
        if p["transport"] == "mroce":
            rec["mroce_cc"] = dict(self.cc_now)
        self.set_loss(p.get("loss"))
        kind = p["kind"]
        D, f = a.duration, a.margin
        if p.get("loss") is not None:   # RTOs make short windows noisy
            D = max(a.loss_duration, 2 * f + 1)
        T = D + 60
        sargv, cargv, listen = self.argvs(p, D, f)
        rec["server_argv"], rec["client_argv"] = sargv, cargv
        if kind in ("bw", "lat"):
            sdev, cdev = self.dev[p["transport"]]
            c0 = (self.cli.counters(cdev), self.srv.counters(sdev))
        self.event(rid, "start")
        t0 = time.monotonic()
        ok, err = self.srv.start(rid, sargv, listen, timeout=30)
        if not ok:
            rec["error"] = "server did not start: " + err[-500:]
            self.srv.wait(rid, 5)
            return self.finish(rec, idx, total, t0)
        self.cli.start(rid, cargv)
        w0, w1 = self.cpu_window(rid, kind, self.cli.proc(rid), t0, D, f, T, rec)
        crc, cout = self.cli.wait(rid, T)
        src, sout = self.srv.wait(rid, 20)
        self.event(rid, "end")
        rec.update(client_rc=crc, server_rc=src, secs=time.monotonic() - t0)
        if kind in ("bw", "lat"):
            rec["counters"] = {"client": counter_delta(c0[0], self.cli.counters(cdev)),
                               "server": counter_delta(c0[1], self.srv.counters(sdev))}
            # the path MTU each side's QP was modified to (perftest takes
            # the port's active_mtu)
            rec["mtu"], rec["server_mtu"] = toolparse.parse_mtu(cout), toolparse.parse_mtu(sout)
        if w0 and w1:
            rec["cpu"] = {n: cpu_delta(x, y) for (n, x), (_, y) in zip(w0, w1)}
        if kind == "bw":
            r = toolparse.parse_bw(cout, p["size"])
        elif kind == "lat":
            r = toolparse.parse_lat(cout)
        elif kind == "iperf":
            r = toolparse.parse_iperf(cout, p["proto"], p["size"])
        else:
            r = toolparse.parse_udplat(cout)
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
        rid = run_id(idx, p)
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
            th = [pr.wait_line(toolparse.PERFTEST_HEADER, 60) for pr in procs]
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
                rec["qp_state"] = toolparse.parse_qp_state(out)
                rec["qp_state_raw"] = out[-12000:]
            # the end of each flow: its result line (or its exit, when it failed);
            # the snapshots then, not after the teardown (rxe's takes ~25 s
            # with a full queue)
            t_res = [pr.wait_line(toolparse.bw_result_line(size),
                                  max(5, th[i] + D + 30 - time.monotonic()))
                     for i, pr in enumerate(procs)]
            sampler.stop()
            q1 = qs.read()
            qs.close()
            c1 = (self.cli.counters(cdev), self.srv.counters(sdev))
            samples, err = self.srv.qps_stop()
            qps_on = False
            flows = []
            for i, fid in enumerate(fids):
                t_w = time.monotonic()
                crc, cout = self.cli.wait(fid, 15)
                flows.append(dict(toolparse.flow_ids(cout), port=ports[i],
                                  t_header=th[i] - t_all,
                                  t_result=t_res[i] - t_all if t_res[i] else None,
                                  teardown=time.monotonic() - t_w,
                                  client_rc=crc, perftest=toolparse.parse_bw(cout, size)))
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
                f["progress"] = bottleneck.flow_progress(samples, f, t_all)
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
            rec["result"] = bottleneck.analyze(rec)
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
        log(f"[{idx}/{total}] {rec['id']}: {summary_line(rec)} ({time.monotonic() - t0:.1f} s)")
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

    def ports(self):
        """Each RDMA device's port as the verbs see it (ibv_devinfo: state,
        active_mtu) and its netdev with that netdev's MTU, both ends ->
        ports.json, for the report (the jumbo path's MTU check)."""
        ends = [("client", self.cli, 1), ("server", self.srv, 0)]
        if self.a.mode == "loop":
            ends = ends[:1]
        got = {}
        for name, end, i in ends:
            for t, devs in self.dev.items():
                dev = devs[i]
                try:
                    rc, out = end.run(["ibv_devinfo", "-d", dev])
                    info = dict(toolparse.parse_devinfo(out) or {}, transport=t)
                    rc, out = end.run(["rdma", "link", "show", f"{dev}/1"])
                    nd = toolparse.parse_link_netdev(out)
                    if nd:      # (not sysfs: a setns'd process sees init_net's /sys)
                        rc, out = end.run(["ip", "-o", "link", "show", "dev", nd])
                        info.update(netdev=nd, netdev_mtu=toolparse.parse_link_mtu(out))
                except Exception as e:      # the record must not fail the run
                    info = {"transport": t, "error": repr(e)}
                got.setdefault(name, {})[dev] = info
        with open(f"{self.a.results}/ports.json", "w") as f:
            json.dump(got, f, indent=1)
        log("ports: " + "; ".join(f"{n} {d}: active_mtu {x.get('active_mtu')} on "
                                  f"{x.get('netdev')} (MTU {x.get('netdev_mtu')})"
                                  for n, ds in got.items() for d, x in ds.items()))
        return got

    def run(self):
        self.ports()
        plan = make_plan(self.a)
        hung = self.a.resume_after
        if hung:
            # a second boot of the pair (run-bench.sh): the plan is the
            # same; the runs before the hung one are in runs.jsonl already
            p = plan[hung - 1]
            log(f"{self.a.mode}: resuming after run {hung} of {len(plan)}")
            self.finish(dict(p, id=run_id(hung, p), path=self.a.mode, ok=False,
                             error="no answer from guest A: the pair was "
                                   "rebooted (see pair-a.console)"),
                        hung, len(plan), time.monotonic())
        else:
            self.stats("before")
            log(f"{self.a.mode}: {len(plan)} runs")
            with open(f"{self.a.results}/plan.json", "w") as f:
                json.dump(plan, f, indent=1)
        failed = 1 if hung else 0
        t0 = time.monotonic()
        for i, p in enumerate(plan[hung:], hung + 1):
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
    proc.set_nice(a.nice)
    return Driver(a).run()
