# SPDX-License-Identifier: GPL-2.0-only
"""The report: rows, targets, summary.md/json and the charts' scripts.

Golden: data/results is a real run (2 guests, loop and single paths,
loss, bottleneck; 4e7166f, 2026-12-01) with its records trimmed (every
third bottleneck sample) and four failures written in by hand (a send_bw
and a loss run of rxe, both single-path latency runs, flow 3 of the rxe
bottleneck: IBV_WC_RETRY_EXC_ERR after 2 s).  data/golden.json is what
bench.py made of it before the split into mbench/ (make_golden.py), plus
the "bytes per sent packet" rows of the pair and single paths, added with
the jumbo path (its records predate the path MTU in the records, so it has
no MTU rows and no jumbo section)."""

import argparse
import contextlib
import io
import json
import os
import shutil
import tempfile
import unittest

from mbench import charts, markdown, report

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


class Golden(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(os.path.join(DATA, "golden.json")) as f:
            cls.golden = json.load(f)
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.tmp.name, "results")
        shutil.copytree(os.path.join(DATA, "results"), cls.out)
        a = argparse.Namespace(out=cls.out, no_charts=True, require_filled=True)
        cls.stdout = io.StringIO()
        with contextlib.redirect_stdout(cls.stdout):
            cls.rc = report.cmd_report(a)
        with open(os.path.join(cls.out, "summary.json")) as f:
            cls.summary = json.load(f)
        with open(os.path.join(cls.out, "summary.md")) as f:
            cls.md = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_filled(self):
        self.assertEqual(self.rc, 0)

    def test_markdown(self):
        self.assertEqual(self.md, self.golden["summary.md"])
        self.assertEqual(self.stdout.getvalue(), self.md + "\n")

    def test_rows_and_targets(self):
        self.assertEqual(len(self.summary["rows"]), len(self.golden["rows"]))
        for got, want in zip(self.summary["rows"], self.golden["rows"]):
            self.assertEqual(list(got), list(want), "key order of a row")
            self.assertEqual(got, want)
        self.assertEqual(self.summary["targets"], self.golden["targets"])

    def test_runs_carry_host_other_and_results(self):
        runs = self.summary["runs"]
        self.assertEqual(list(runs), ["pair", "single", "loop"])
        self.assertTrue(all("host_other" in r for p in runs.values() for r in p))
        bn = [r for r in runs["pair"] if r["kind"] == "bottleneck"]
        self.assertEqual(len(bn), 3)
        self.assertEqual(bn[2]["result"]["flows_failed"], 1)

    def test_charts(self):
        meta, runs = report.load_results(self.out)
        rows = report.Rows(runs, meta).build()
        got = {}
        for png, script, data in charts.chart_files("DIR/charts", runs, rows, 65536):
            got[os.path.basename(png)[:-4] + ".gp"] = script + "\n"
            got.update({os.path.basename(k): v for k, v in data.items()})
        self.assertEqual(sorted(got), sorted(self.golden["charts"]))
        for k, v in self.golden["charts"].items():
            self.assertEqual(got[k], v, k)


def bw(transport, gbps, verb="write", size=65536, loss=None, ok=True, rid=None, **kw):
    r = dict(kind="bw", verb=verb, size=size, transport=transport, ok=ok, **kw)
    if loss is not None:
        r["loss"] = loss
    if ok:
        r.update(gbps=gbps, msg_s=gbps * 1e9 / 8 / size)
    r["id"] = rid or f"x-{transport}-{gbps}"
    return r


def iperf(proto, gbps, size=65536, loss=None, ok=True):
    r = dict(kind="iperf", proto=proto, size=size, transport=proto, ok=ok, id=f"i-{gbps}")
    if loss is not None:
        r["loss"] = loss
    if ok:
        r.update(gbps=gbps, msg_s=gbps * 1e9 / 8 / size)
    return r


def lat(transport, typ, avg, p99, kind="lat", ok=True, p999=None, loss=None):
    r = dict(kind=kind, verb="write", size=8, transport=transport, ok=ok, id=f"l-{typ}")
    if loss is not None:
        r["loss"] = loss
    if ok:
        r.update(t_typical=typ, t_avg=avg, p99=p99, p999=p999 if p999 is not None else 2 * p99)
    return r


class Build(unittest.TestCase):
    def rows(self, runs, meta=None):
        return report.Rows(runs, meta or {}).build()

    def test_bandwidth_rows(self):
        runs = {"pair": [bw("mroce", 1.0), bw("mroce", 3.0), bw("mroce", 2.0),
                         bw("rxe", 1.0), bw("rxe", 0, ok=False, error="perftest printed 0"),
                         iperf("tcp", 4.0), iperf("udp", 0.5, size=1472)]}
        rows = self.rows(runs)
        self.assertEqual([(r.group, r.metric) for r in rows],
                         [("bw", "message rate"), ("bw", "throughput")])
        t = rows[1]
        self.assertEqual(t.scenario, "write_bw 65536 B")
        self.assertEqual(t.values["mroce"], {"median": 2.0, "min": 1.0, "max": 3.0, "n": 3})
        self.assertEqual(t.failed, {"mroce": 0, "rxe": 1, "tcp": 0, "udp": 0})
        self.assertEqual((t.ratio_rxe, t.raw, t.ratio_raw), (2.0, "tcp", 0.5))
        m = rows[0]
        self.assertEqual((m.raw, set(m.values)), ("udp", {"mroce", "rxe", "udp"}))
        self.assertAlmostEqual(m.values["udp"]["median"], 0.5e9 / 8 / 1472 / 1e6)
        j = t.to_json()
        self.assertEqual(list(j), ["path", "scenario", "metric", "unit", "better", "values",
                                   "failed", "mroce/rxe", "raw", "mroce/raw", "host_other"])
        md = markdown.path_table("pair", [t])
        self.assertEqual(md[-2], "| write_bw 65536 B | throughput [Gb/s] | 2.00 (1.00–3.00) | "
                         "1.00 (1 failed) | 4.00 | 0.500 | 2.00 | 0.500 (tcp) | – |")
        self.assertTrue(report.filled(rows, runs))
        self.assertFalse(report.filled(self.rows({"pair": [bw("mroce", 1.0), iperf("tcp", 1)]}),
                                       {"pair": []}))

    def test_latency_rows(self):
        runs = {"pair": [lat("mroce", 10, 12, 30), lat("rxe", 20, 30, 90),
                         lat("udp", 5, 6, 9, kind="udplat")]}
        rows = self.rows(runs)
        self.assertEqual([r.metric for r in rows],
                         ["latency typical", "latency average", "latency p99", "latency p99.9"])
        self.assertEqual([r.ratio_rxe for r in rows], [0.5, 0.4, 1 / 3, 1 / 3])
        self.assertEqual(rows[3].values["udp"]["median"], 18)
        self.assertEqual((rows[3].raw, rows[3].ratio_raw), ("udp", 60 / 18))
        self.assertEqual(rows[0].scenario, "write_lat 8 B")
        self.assertEqual(rows[0].better, "lower")
        tg = {t["target"]: t for t in report.targets(rows)}
        self.assertEqual(tg["write_lat 8 B typical <= 0.8x rxe (2 guests)"]["met"], True)
        self.assertIsNone(tg["write_bw 64 KiB >= 2x rxe (2 guests)"]["met"])

    def test_loss_rows(self):
        runs = {"single": [bw("mroce", 4.0), bw("mroce", 2.0, loss=0.0),
                           bw("mroce", 1.5, loss=1.0), bw("mroce", 0, loss=1.0, ok=False),
                           iperf("tcp", 8.0, loss=0.0), iperf("tcp", 6.0, loss=1.0)]}
        rows = self.rows(runs)
        loss = [r for r in rows if r.group == "loss"]
        self.assertEqual(len(loss), 1)
        r = loss[0]
        self.assertEqual(r.scenario, "loss 1 %")
        # baseline: median of the lossless runs (4.0 and the 0 % level's 2.0) = 3.0;
        # the failed run is goodput 0, counted as failed
        self.assertEqual(r.values["mroce"], {"median": 0.25, "min": 0.0, "max": 0.5, "n": 2})
        self.assertEqual(r.failed, {"mroce": 1, "tcp": 0})
        self.assertEqual(r.values["tcp"]["median"], 0.75)
        self.assertEqual(r.baseline_gbps["mroce"]["median"], 3.0)
        self.assertEqual(r.gbps["mroce"]["n"], 1)
        self.assertEqual(list(r.to_json())[-3:], ["host_other", "gbps", "baseline_gbps"])
        tg = {t["target"]: t for t in report.targets(rows)}
        self.assertEqual(tg["goodput at 1 % loss >= 90 % of lossless (1 guest)"]["met"], False)
        self.assertEqual(tg["goodput at 1 % loss >= 90 % of lossless (1 guest)"]["value"], 0.25)

    def test_loss_latency_rows(self):
        # the tail under loss: p99 and p99.9 per level, medians over the
        # repeats; the lossless latency rows take none of these runs
        runs = {"pair": [lat("mroce", 10, 12, 30, p999=40),
                         lat("mroce", 11, 13, 300, p999=900, loss=1.0),
                         lat("mroce", 11, 13, 500, p999=700, loss=1.0),
                         lat("rxe", 20, 30, 4000, p999=9000, loss=1.0),
                         lat("rxe", 0, 0, 0, ok=False, loss=5.0),
                         lat("mroce", 12, 14, 800, p999=2000, loss=5.0)]}
        rows = self.rows(runs)
        got = [(r.group, r.scenario, r.metric) for r in rows]
        self.assertEqual(got, [
            ("lat", "write_lat 8 B", "latency typical"), ("lat", "write_lat 8 B", "latency average"),
            ("lat", "write_lat 8 B", "latency p99"), ("lat", "write_lat 8 B", "latency p99.9"),
            ("loss", "loss 1 %", "write_lat p99"), ("loss", "loss 1 %", "write_lat p99.9"),
            ("loss", "loss 5 %", "write_lat p99"), ("loss", "loss 5 %", "write_lat p99.9")])
        self.assertEqual(rows[2].values["mroce"]["n"], 1)
        self.assertEqual(rows[3].values["mroce"]["median"], 40)
        p99, p999 = rows[4], rows[5]
        self.assertEqual(p99.values["mroce"], {"median": 400, "min": 300, "max": 500, "n": 2})
        self.assertEqual(p999.values["mroce"]["median"], 800)
        self.assertEqual(p99.better, "lower")
        self.assertEqual(p99.ratio_rxe, 0.1)
        self.assertEqual(rows[6].failed, {"mroce": 0, "rxe": 1})
        self.assertIsNone(rows[6].values["rxe"])
        md = markdown.path_table("pair", rows[4:6])
        self.assertIn("loss 1 %", md[-2])
        self.assertIn("write_lat p99", md[-2])

    def test_order_and_cpu(self):
        cpu = {"client": {"secs": 1.0, "kernel": 0.5, "user": 0.25},
               "server": {"secs": 1.0, "kernel": 0.25, "user": 0.0}}
        runs = {"single": [bw("mroce", 0.8, verb="send", size=64),
                           bw("mroce", 8.0, cpu=cpu), bw("mroce", 1.0, size=64),
                           lat("mroce", 10, 12, 30), bw("mroce", 4.0, loss=1.0),
                           iperf("tcp", 8.0)],
                "pair": [bw("mroce", 1.0, size=64), bw("rxe", 1.0, size=64)]}
        rows = self.rows(runs)
        self.assertEqual([(r.path, r.scenario, r.metric[:12]) for r in rows], [
            ("pair", "write_bw 64 B", "message rate"), ("pair", "write_bw 64 B", "throughput"),
            ("single", "write_bw 64 B", "message rate"), ("single", "write_bw 64 B", "throughput"),
            ("single", "write_bw 65536 B", "message rate"),
            ("single", "write_bw 65536 B", "throughput"),
            ("single", "send_bw 64 B", "message rate"), ("single", "send_bw 64 B", "throughput"),
            ("single", "write_lat 8 B", "latency typi"), ("single", "write_lat 8 B", "latency aver"),
            ("single", "write_lat 8 B", "latency p99"), ("single", "write_lat 8 B", "latency p99."),
            ("single", "loss 1 %", "goodput / lo"),
            ("single", "write_bw 65536 B", "guest CPU ke"),
            ("single", "write_bw 65536 B", "guest CPU to")])
        # 8 Gb/s for 1 s = 1 GB: CPU-s per GB = the CPU seconds
        self.assertEqual(rows[-2].values["mroce"]["median"], 0.75)
        self.assertEqual(rows[-1].values["mroce"]["median"], 1.0)
        self.assertNotIn("host_other", rows[-1].to_json())

    def test_host_other(self):
        hm = [{"dir": "pair-b", "ev": "00001-001-a-r1-start", "t": 0, "busy": 0, "total": 0,
               "qemu": 0, "ncpu": 2},
              {"dir": "pair-b", "ev": "00002-001-a-r1-w0", "t": 1, "busy": 100, "total": 200,
               "qemu": 50, "ncpu": 2},
              {"dir": "pair-b", "ev": "00003-001-a-r1-w1", "t": 2, "busy": 250, "total": 400,
               "qemu": 150, "ncpu": 2},
              {"dir": "single", "ev": "00003-001-a-r1-end", "t": 3, "busy": 0, "total": 0,
               "qemu": 0, "ncpu": 2}]
        # w0..w1: 150 busy, 100 of them qemu, of 200 jiffies on 2 CPUs
        self.assertAlmostEqual(report.host_other(hm, "pair-b", "001-a-r1"), 0.5)
        self.assertIsNone(report.host_other(hm, "pair-b", "002-b-r1"))
        hm[2]["ev"] = "00003-001-a-r1-end"      # no w1: start..end
        self.assertAlmostEqual(report.host_other(hm, "pair-b", "001-a-r1"), 0.5)

    def test_bottleneck_only(self):
        rec = report.load_jsonl(os.path.join(DATA, "results/pair-b/runs.jsonl"))[23]
        self.assertEqual(rec["kind"], "bottleneck")
        bad = dict(rec, id="099-bottleneck-rxe-r2", transport="rxe", ok=False, error="tc -b: x")
        bad.pop("cc")
        runs = {"pair": [rec, bad]}
        rows = self.rows(runs)
        self.assertTrue(all(r.group == "bottleneck" for r in rows))
        self.assertEqual(rows[0].scenario, "bottleneck 3 x write_bw 64 KiB")
        self.assertEqual(list(rows[0].values), ["mroce-metaroce", "rxe"])
        self.assertEqual(rows[-1].notes, ["`099-bottleneck-rxe-r2`: tc -b: x"])
        self.assertFalse(report.filled(rows, runs))       # rxe has no goodput
        self.assertTrue(report.filled(self.rows({"pair": [rec]}), runs))
        md = markdown.bottleneck_markdown(rows)
        self.assertTrue(md[0].startswith("## Bottleneck: 3 concurrent RC flows B → A "
                                         "(write_bw 64 KiB)"))
        self.assertEqual(md[4], "| metric | mroce cc=metaroce | rdma_rxe |")
        self.assertIn("* `099-bottleneck-rxe-r2`: tc -b: x", md)


def ports(mtu=4096, netdev_mtu=9000):
    """ports.json of the jumbo path's driver (both ends)."""
    def one(dev, nd):
        return {dev: {"state": "PORT_ACTIVE", "max_mtu": 4096, "active_mtu": mtu,
                      "link_layer": "Ethernet", "transport": "mroce", "netdev": nd,
                      "netdev_mtu": netdev_mtu}}
    return {"client": one("mroce2", "veth2"), "server": one("mroce1", "veth1")}


def wire(r, mtu, per_pkt=None):
    """R with the path MTU perftest printed and the client's tx counters."""
    r["mtu"] = r["server_mtu"] = mtu
    if per_pkt:
        r["counters"] = {"client": {"tx_pkts": 1000, "tx_bytes": 1000 * per_pkt},
                         "server": {"tx_pkts": 50, "tx_bytes": 50 * 64}}
    return r


class Jumbo(unittest.TestCase):
    """The jumbo path: the single path's rows at MTU 9000, the wire rows
    (perftest's path MTU, bytes per packet) and the MTU target."""

    def runs(self, jumbo_mtu=4096):
        cpu = {"guest": {"secs": 1.0, "kernel": 0.5, "user": 0.5}}
        return {
            "single": [wire(bw("mroce", 1.0, cpu=cpu), 1024, 1088), iperf("tcp", 4.0),
                       wire(lat("mroce", 20, 22, 40), 1024), lat("udp", 10, 11, 20, kind="udplat")],
            "jumbo": [wire(bw("mroce", 2.0, cpu=cpu), 4096, 4160),
                      wire(bw("mroce", 3.0, cpu=cpu), jumbo_mtu, 4160),
                      iperf("tcp", 5.0), iperf("udp", 1.0, size=1472),
                      wire(bw("mroce", 2.0, loss=0.0), 4096, 4160),
                      wire(bw("mroce", 2.0, loss=1.0), 4096), iperf("tcp", 5.0, loss=0.0),
                      iperf("tcp", 4.0, loss=1.0),
                      wire(lat("mroce", 18, 21, 35), 4096), lat("udp", 10, 11, 20, kind="udplat")]}

    def test_rows(self):
        rows = report.Rows(self.runs(), {}).build()
        self.assertEqual([r.path for r in rows], sorted((r.path for r in rows),
                                                        key=("single", "jumbo").index))
        j = {(r.group, r.scenario, r.metric): r for r in rows if r.path == "jumbo"}
        t = j[("bw", "write_bw 65536 B", "throughput")]
        self.assertEqual(t.values["mroce"], {"median": 2.5, "min": 2.0, "max": 3.0, "n": 2})
        self.assertEqual((t.raw, t.ratio_raw), ("tcp", 0.5))
        self.assertIn(("lat", "write_lat 8 B", "latency typical"), j)
        self.assertEqual(j[("lat", "write_lat 8 B", "latency typical")].values["udp"]["median"], 10)
        self.assertIn(("loss", "loss 1 %", "goodput / lossless"), j)
        self.assertIn(("cpu", "write_bw 65536 B", "guest CPU total per GB"), j)
        m = j[("wire", "all perftest runs", report.MTU_METRIC)]
        self.assertEqual(m.values["mroce"], {"median": 4096, "min": 4096, "max": 4096, "n": 5})
        self.assertEqual(m.failed, {"mroce": 0})
        p = j[("wire", "write_bw 65536 B", report.PKT_METRIC)]
        self.assertEqual(p.values["mroce"]["median"], 4160)
        self.assertEqual(p.values["mroce"]["n"], 3)         # lossless ones only
        s = [r for r in rows if r.path == "single" and r.group == "wire"]
        self.assertEqual([r.values["mroce"]["median"] for r in s], [1024, 1088])
        self.assertEqual(list(m.to_json())[-1], "mroce/raw")

    def test_targets(self):
        rows = report.Rows(self.runs(), {}).build()
        tg = {t["target"]: t for t in report.targets(rows, {"jumbo": ports()})}
        mtu = [t for n, t in tg.items() if n.startswith("path MTU 4096")]
        self.assertEqual(len(mtu), 1)
        self.assertEqual((mtu[0]["value"], mtu[0]["met"]), (4096, True))
        w = tg["write_bw 64 KiB >= 0.5x kernel TCP (1 guest, veth MTU 9000)"]
        self.assertEqual((w["value"], w["met"]), (0.5, True))
        g = tg["goodput at 1 % loss >= 90 % of lossless (1 guest, veth MTU 9000)"]
        # the lossless baseline: 2, 3 and the 0 % level's 2
        self.assertEqual(g["value"], 1.0)
        # a port at 1024, a run at 2048, a netdev at 1500, no ports at all: not met
        for bad_rows, bad_ports in ((rows, {"jumbo": ports(mtu=1024)}),
                                    (report.Rows(self.runs(2048), {}).build(),
                                     {"jumbo": ports()}),
                                    (rows, {"jumbo": ports(netdev_mtu=1500)}),
                                    (rows, {})):
            t = [t for t in report.targets(bad_rows, bad_ports)
                 if t["target"].startswith("path MTU")][0]
            self.assertFalse(t["met"], bad_ports)
        self.assertEqual(report.jumbo_mtu(report.Rows(self.runs(2048), {}).build(), ports()),
                         (2048, False, "MTUs seen 2048..4096"))
        self.assertEqual(report.jumbo_mtu(rows, ports(netdev_mtu=None)),
                         (4096, False, "netdev MTU [None, None]"))
        self.assertEqual(report.jumbo_mtu(rows, ports()), (4096, True, ""))
        self.assertEqual(markdown.ports_line(ports(netdev_mtu=None)),
                         "* ports (ibv_devinfo): mroce2 on veth2 (MTU ?): active_mtu 4096, "
                         "mroce1 on veth1 (MTU ?): active_mtu 4096\n")
        # without the jumbo path: no jumbo targets (the golden run has none)
        single = report.Rows({"single": self.runs()["single"]}, {}).build()
        self.assertFalse([t for t in report.targets(single) if "9000" in t["target"]
                          or t["target"].startswith("path MTU")])

    def write(self, d, runs, jports):
        os.makedirs(os.path.join(d, "single", "jumbo"))
        for path, sub in (("single", "single"), ("jumbo", "single/jumbo")):
            with open(os.path.join(d, sub, "runs.jsonl"), "w") as f:
                f.write("".join(json.dumps(r) + "\n" for r in runs[path]))
        with open(os.path.join(d, "single", "jumbo", "ports.json"), "w") as f:
            json.dump(jports, f)
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump({"params": {"paths": "single,jumbo"}}, f)

    def report(self, runs, jports):
        with tempfile.TemporaryDirectory() as d:
            self.write(d, runs, jports)
            a = argparse.Namespace(out=d, no_charts=True, require_filled=True)
            err = io.StringIO()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                rc = report.cmd_report(a)
            with open(os.path.join(d, "summary.md")) as f:
                md = f.read()
            with open(os.path.join(d, "summary.json")) as f:
                js = json.load(f)
        return rc, md, js, err.getvalue()

    def test_report_files(self):
        rc, md, js, err = self.report(self.runs(), ports())
        self.assertEqual((rc, err), (0, ""))
        single = md.index("## 1 guest, 2 vCPUs, veth between two netns (rxe")
        jumbo = md.index("## 1 guest, 2 vCPUs, veth between two netns at MTU 9000")
        self.assertLess(single, jumbo)
        sec = md[jumbo:md.index("## Targets")]
        self.assertIn("* ports (ibv_devinfo): mroce2 on veth2 (MTU 9000): active_mtu 4096, "
                      "mroce1 on veth1 (MTU 9000): active_mtu 4096\n", sec)
        self.assertIn("| write_bw 65536 B | throughput [Gb/s] | 2.50 (2.00–3.00) | 5.00 | "
                      "1.00 | 0.500 (tcp) |", sec)
        self.assertIn("| all perftest runs | path MTU (perftest's Mtu line, every run) [B] | "
                      "4096 (4096–4096) |", sec)
        self.assertIn("| path MTU 4096 on links with MTU >= 4200", md)
        self.assertEqual(js["meta"]["ports"]["jumbo"], ports())
        self.assertEqual({r["path"] for r in js["rows"]}, {"single", "jumbo"})

    def test_report_fails_without_4096(self):
        # a run whose QPs came up at 1024, or a port at 1024: the table is
        # filled, the run fails
        for runs, jp in ((self.runs(1024), ports()), (self.runs(), ports(mtu=1024))):
            rc, md, js, err = self.report(runs, jp)
            self.assertEqual(rc, 1)
            self.assertIn("jumbo path: not every mroce port and run had path MTU 4096 on "
                          "MTU 9000: MTUs seen 1024..4096", err)
            self.assertRegex(md, r"\| path MTU 4096 on links .* \| = 4096 \| 1024 \| \*\*no\*\* \|")


if __name__ == "__main__":
    unittest.main()
