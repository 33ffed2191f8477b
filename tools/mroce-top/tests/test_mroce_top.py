# SPDX-License-Identifier: GPL-2.0-only
"""mroce-top on the host: iproute2 6.1's JSON (driver attributes as flat
"drv_NAME" keys, counters flat in the port's object) from a fake rdma."""

import importlib.machinery
import importlib.util
import io
import json
import os
import stat
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.join(os.path.dirname(HERE), "mroce-top")


def load():
    loader = importlib.machinery.SourceFileLoader("mroce_top", TOP)
    spec = importlib.util.spec_from_loader("mroce_top", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


mt = load()


def stats(rx_pkts, drops=0, dev="mroce0"):
    return [{"ifname": dev, "port": 1, "rx_pkts": rx_pkts, "rx_bytes": rx_pkts * 100,
             "tx_pkts": 2 * rx_pkts, "tx_bytes": 0, "tx_retx_pkts": rx_pkts // 10,
             "rx_drop_short": drops, "rx_drop_psn_window": 0, "rx_ce_pkts": 0},
            {"ifname": "rxe0", "port": 1, "sent_pkts": 5}]


def qp(qpn, p99, count=100, dev="mroce0", **kw):
    e = {"ifindex": 3, "ifname": dev, "port": 1, "lqpn": qpn, "rqpn": qpn + 1, "type": "RC",
         "state": "RTS", "pid": 42, "comm": "lat_qp", "drv_tx_pkts": 7,
         "drv_lat_count": count, "drv_lat_p50_us": p99 // 2, "drv_lat_p99_us": p99,
         "drv_lat_p999_us": p99 + 5, "drv_lat_max_us": p99 + 9, "drv_srtt_us": 30,
         "drv_path0": "sport 1 active w 16/16 cwnd 8 inflight 0 srtt 30 tx 4 retx 0 lost 0 "
                      "ce 0 dead 0 revived 0",
         "drv_path_rtt_p50_us": "20 - - 40", "drv_path_rtt_p99_us": "31 - - 77"}
    e.update(kw)
    return e


class Parse(unittest.TestCase):
    def test_stats(self):
        s = mt.parse_stats(stats(10, drops=3))
        self.assertEqual(sorted(s), ["mroce0/1", "rxe0/1"])
        self.assertEqual(s["mroce0/1"]["rx_drop_short"], 3)
        self.assertNotIn("ifname", s["mroce0/1"])
        self.assertEqual(mt.parse_stats([{"nothing": 1}, "junk"]), {})

    def test_qps(self):
        q = mt.parse_qps([qp(17, 80), {"ifname": "rxe0", "lqpn": 1, "type": "UD"}])
        self.assertEqual(len(q), 2)
        a = q[0]
        self.assertEqual((a["dev"], a["qpn"], a["lat_count"], a["lat_p99_us"]),
                         ("mroce0", 17, 100, 80))
        self.assertEqual(a["path_rtt_p99_max_us"], 77)      # the slowest path's p99
        self.assertEqual(a["path_rtt_p99_us"], "31 - - 77")
        self.assertTrue(a["path0"].startswith("sport"))
        self.assertIsNone(q[1]["path_rtt_p99_max_us"])

    def test_rates_and_drops(self):
        a, b = mt.parse_stats(stats(10)), mt.parse_stats(stats(30, drops=4))
        r = mt.dev_rates(a, b, 2.0)
        self.assertEqual(r["mroce0/1"]["rx_pkts"], 10.0)
        self.assertEqual(r["mroce0/1"]["tx_pkts"], 20.0)
        self.assertEqual(r["mroce0/1"]["tx_retx_pkts"], 1.0)
        self.assertEqual(r["mroce0/1"]["drops"], {"rx_drop_short": 2.0})
        self.assertEqual(r["rxe0/1"]["drops"], {})
        # a counter that went backwards (device re-created): no negative rate
        self.assertEqual(mt.dev_rates(b, a, 1.0)["mroce0/1"]["rx_pkts"], 0)
        # a device that appeared in this interval has no rate yet
        self.assertNotIn("mroce0/1", mt.dev_rates({}, b, 1.0))

    def test_top(self):
        qs = mt.parse_qps([qp(17, 80), qp(18, 900), qp(19, 5), qp(20, 9999, count=0)])
        self.assertEqual([q["qpn"] for q in mt.top_qps(qs, 2)], [18, 17])
        self.assertEqual([q["qpn"] for q in mt.top_qps(qs, 10)], [18, 17, 19])
        self.assertEqual(mt.top_qps(qs, 10, dev="mroce1"), [])

    def test_busy(self):
        a = mt.parse_qps([qp(17, 80, drv_tx_pkts=100, drv_tx_retx_pkts=1),
                          qp(18, 900, drv_tx_pkts=100),
                          qp(20, 0, count=0, drv_tx_pkts=100)])
        b = mt.parse_qps([qp(17, 80, drv_tx_pkts=150, drv_tx_retx_pkts=5),
                          qp(18, 900, drv_tx_pkts=110),
                          qp(20, 0, count=0, drv_tx_pkts=400),
                          qp(21, 1, drv_tx_pkts=9)])
        b = mt.qp_rates(a, b, 2.0)
        r = {q["qpn"]: (q["tx_pps"], q["retx_ps"]) for q in b}
        self.assertEqual(r[17], (25.0, 2.0))
        self.assertEqual(r[20], (150.0, None))      # no tx_retx_pkts attribute
        self.assertEqual(r[21], (None, None))       # new in this interval
        # busiest first: a QP sending without completions yet counts too
        self.assertEqual([q["qpn"] for q in mt.top_qps(b, 10, sort="busy")],
                         [20, 17, 18, 21])
        self.assertEqual([q["qpn"] for q in mt.top_qps(b, 10, sort="p99")],
                         [18, 17, 21])
        # a counter that went backwards (QP number reused) is no negative rate
        self.assertEqual(mt.qp_rates(b, a, 1.0)[0]["tx_pps"], 0)

    def test_paths(self):
        q = mt.parse_qps([qp(17, 80, drv_path1="sport 2 dead w 1/16 cwnd 1 inflight 3 "
                              "srtt 0 tx 9 retx 2 lost 5 ce 0 dead 1 revived 0")])[0]
        ps = mt.qp_paths(q)
        self.assertEqual(len(ps), 2)
        self.assertEqual(ps[0], {"path": 0, "sport": 1, "state": "active", "w": "16/16",
                                 "cwnd": 8, "inflight": 0, "srtt": 30, "tx": 4, "retx": 0,
                                 "lost": 0, "rtt_p50_us": 20, "rtt_p99_us": 31})
        self.assertEqual((ps[1]["state"], ps[1]["rtt_p99_us"], ps[1]["retx"], ps[1]["lost"]),
                         ("dead", None, 2, 5))
        self.assertEqual(mt.qp_paths({"dev": "x", "qpn": 1}), [])
        text = mt.render(0, 1.0, {}, [q], 10, "p99", 1)
        i = text.index("paths of mroce0 QP 17 (2)")
        self.assertEqual(text[i + 1].split()[:3], ["PATH", "SPORT", "STATE"])
        self.assertEqual(text[i + 3].split()[:3], ["1", "2", "dead"])
        self.assertNotIn("paths of", "\n".join(mt.render(0, 1.0, {}, [q], 10, "p99", 0)))


class Run(unittest.TestCase):
    """The whole program against a fake rdma printing canned JSON, whose
    counters grow by 100 packets per call."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.tmp.name
        with open(os.path.join(d, "qp.json"), "w") as f:
            json.dump([qp(17, 80), qp(23, 950, dev="mroce1"), qp(30, 4)], f)
        fake = os.path.join(d, "rdma")
        with open(fake, "w") as f:
            f.write(f"""#!{sys.executable}
import json, os, sys
d = {d!r}
if "resource" in sys.argv:
    print(open(os.path.join(d, "qp.json")).read())
else:
    n = os.path.join(d, "n")
    k = int(open(n).read()) if os.path.exists(n) else 0
    open(n, "w").write(str(k + 1))
    print(json.dumps([{{"ifname": "mroce0", "port": 1, "rx_pkts": 100 * k,
                       "tx_pkts": 0, "rx_drop_qkey": k}}]))
""")
        os.chmod(fake, stat.S_IRWXU)
        self.fake = fake

    def tearDown(self):
        self.tmp.cleanup()

    def run_top(self, *args):
        out = io.StringIO()
        with redirect_stdout(out):
            rc = mt.main(["--rdma", self.fake, "-d", "0.05"] + list(args))
        self.assertEqual(rc, 0)
        return out.getvalue()

    def test_batch(self):
        out = self.run_top("-b", "-n", "2", "-s", "p99")
        # one block per interval, each from its header line, a blank line after
        self.assertTrue(out.endswith("\n\n"))
        blocks = ["mroce-top " + b for b in out.split("mroce-top ")[1:]]
        self.assertEqual(len(blocks), 2)
        lines = blocks[0].splitlines()
        self.assertRegex(lines[0], r"^mroce-top .* devices 1  QPs 3$")
        dev = [x for x in lines if x.startswith("mroce0/1 ")]
        self.assertEqual(len(dev), 1)
        self.assertIn("drops mroce0/1: rx_drop_qkey", blocks[0])
        qps = lines[lines.index("top 10 QPs by p99 send completion latency") + 2:]
        qps = qps[:qps.index("")]       # the QP table ends at the paths' blank line
        self.assertEqual([x.split()[1] for x in qps], ["23", "17", "30"])
        # DEV QPN TYPE STATE COMM TXpkt/s RETX/s WQES P50 P99 P99.9 MAX
        self.assertEqual(qps[0].split()[:12],
                         ["mroce1", "23", "RC", "RTS", "lat_qp", "0", "-", "100", "475",
                          "950", "955", "959"])
        self.assertIn("paths of mroce1 QP 23 (1)", blocks[0])

    def test_dev_filter_and_json(self):
        out = self.run_top("-j", "-n", "1", "-D", "mroce1", "-q", "5")
        o = json.loads(out.splitlines()[0])
        self.assertEqual([q["qpn"] for q in o["qps"]], [23])
        self.assertEqual(o["devices"], {})          # mroce1 has no counters here
        out = self.run_top("-j", "-n", "1")
        o = json.loads(out)
        r = o["devices"]["mroce0/1"]
        # 100 packets in one interval of ~0.05 s
        self.assertGreater(r["rx_pkts"], 100 / 0.5)
        self.assertIn("rx_drop_qkey", r["drops"])

    def test_no_rdma(self):
        out = io.StringIO()
        with redirect_stdout(out):
            mt.main(["--rdma", "/nonexistent/rdma", "-b", "-n", "1", "-d", "0.01"])
        self.assertIn("devices 0  QPs 0", out.getvalue())

    def test_usage(self):
        p = subprocess.run([sys.executable, TOP, "-d", "0"], capture_output=True, text=True,
                           check=False)
        self.assertEqual(p.returncode, 2)


if __name__ == "__main__":
    unittest.main()
