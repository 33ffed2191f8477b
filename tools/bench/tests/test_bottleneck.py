# SPDX-License-Identifier: GPL-2.0-only
"""The congestion scenario's tc setup and metrics."""

import unittest

from mbench import bottleneck as bn


class Tc(unittest.TestCase):
    def test_codel(self):
        cmds, info = bn.tc_commands("eth0", "30mbit", "1ms", 100, 1500, 4792)
        # 2 ms of 30 Mbit/s = 7500 B, more than 2 frames
        self.assertEqual(info, {"rate_bps": 30_000_000, "burst": 7500, "mtu": 1500,
                                "aqm": "codel limit 100 ce_threshold 1ms ecn", "limit": 100,
                                "udp_ports": [4791, 4792]})
        self.assertEqual(cmds[0], "qdisc replace dev eth0 root handle 1: prio bands 2 priomap"
                         + " 0" * 16)
        self.assertEqual(cmds[1], "qdisc add dev eth0 parent 1:2 handle 2: tbf rate 30mbit "
                         "burst 7500 limit 107500")
        self.assertEqual(cmds[2], "qdisc add dev eth0 parent 2:1 handle 3: codel limit 100 "
                         "ce_threshold 1ms ecn")
        self.assertEqual([c.split("dport ")[1] for c in cmds[3:]],
                         ["4791 0xffff flowid 1:2", "4792 0xffff flowid 1:2"])

    def test_red_and_slow_rate(self):
        cmds, info = bn.tc_commands("eth0", "1Mbit", "30kb", 50, 1000, 5000)
        self.assertEqual(info["burst"], 2 * 1014)      # two frames beat 2 ms of 1 Mbit/s
        self.assertEqual(info["aqm"], "red limit 50700 min 30000 max 60000 avpkt 1000 "
                         "burst 41 probability 1.0 bandwidth 1Mbit ecn")

    def test_bad_options(self):
        for rate, mark in (("30 mbit", "1ms"), ("fast", "1ms"), ("30mbit", "1s"),
                           ("30mbit", "lots")):
            with self.assertRaises(SystemExit):
                bn.tc_commands("eth0", rate, mark, 100, 1500, 4792)
        self.assertEqual(bn.rate_bps("2gbit"), 2 * 10**9)
        self.assertEqual(bn.rate_bps("800kbit"), 800_000)


class Queue(unittest.TestCase):
    Q0 = {"2:": {"drops": 10, "bytes": 1000, "packets": 10},
          "3:": {"qlen": 0, "backlog": 0, "drops": 4, "ce_mark": 1, "drop_overlimit": 2}}
    Q1 = {"2:": {"drops": 25, "bytes": 9000, "packets": 90},
          "3:": {"qlen": 7, "backlog": 7000, "drops": 12, "ce_mark": 31, "drop_overlimit": 9}}

    def test_point(self):
        self.assertEqual(bn.qdisc_point(self.Q1), [7, 7000, 25, 31, 9, 9000, 90])
        self.assertEqual(bn.qdisc_point({}), [0] * 7)
        red = {"3:": {"marked": 5, "pdrop": 3}}
        self.assertEqual(bn.qdisc_point(red)[3:5], [5, 3])

    def test_totals(self):
        self.assertEqual(bn.qdisc_totals(self.Q0, self.Q1),
                         {"drops": 15, "drops_overflow": 7, "drops_aqm": 8, "marks": 30,
                          "sent_pkts": 80, "aqm_drops": 8})


class Metrics(unittest.TestCase):
    def test_jain(self):
        self.assertAlmostEqual(bn.jain([5, 5, 5]), 1.0)
        self.assertAlmostEqual(bn.jain([9, 0, 0]), 1 / 3)
        self.assertIsNone(bn.jain([]))
        self.assertIsNone(bn.jain([0, 0]))

    def test_settle(self):
        ok = lambda v: v >= 0.9         # noqa: E731
        self.assertEqual(bn.settle_time({0: 0.5, 2: 0.95, 4: 0.92, 6: 0.99}, ok), 2)
        self.assertEqual(bn.settle_time({0: 0.95, 2: 0.95, 4: 0.92}, ok), 0)
        # fair only in the last two bins: fewer than three, not settled
        self.assertIsNone(bn.settle_time({0: 0.5, 2: 0.5, 4: 0.95, 6: 0.95}, ok))
        self.assertIsNone(bn.settle_time({0: 0.95, 2: 0.5}, ok))
        self.assertEqual(bn.settle_time({0: 0.95}, ok), 0)

    def test_curve(self):
        c = [(0.0, 0), (1.0, 100), (2.0, 100), (3.0, 400)]
        self.assertEqual([bn.curve_at(c, t) for t in (-1, 0.5, 1.5, 2.5, 9)],
                         [0, 50, 100, 250, 400])

    def test_progress_psn_wrap(self):
        f = {"qpn": 0x11, "remote_qpn": 0x22, "psn0": 0xfffff0}
        samples = [[100.0, [[0x22, 0x11, 0x800000, 0]]],       # before RTR: a foreign PSN
                   [101.0, [[0x22, 0x11, 0xfffff0, 0], [0x23, 0x12, 5, 0]]],
                   [102.0, [[0x22, 0x11, 0x10, 0]]],           # wrapped: 0x20 packets
                   [103.0, [[0x22, 0x99, 0x40, 0]]]]           # another QP's peer
        self.assertEqual(bn.flow_progress(samples, f, 101.0), [[0.0, 0], [1.0, 0x20]])
        self.assertEqual(bn.flow_progress(samples, {"qpn": 1}, 0), [])

    def rec(self):
        # three flows, 1024 B per packet, the window [0, 4]; flow 3 fails at 2 s
        prog = [[[t, int(t * 1000)] for t in (0, 1, 2, 3, 4)],
                [[t, int(t * 1000)] for t in (0, 1, 2, 3, 4)],
                [[t, int(min(t, 2) * 1000)] for t in (0, 1, 2, 3, 4)]]
        flows = [{"t_header": -0.3, "mtu": 1024, "progress": prog[0],
                  "perftest": {"gbps": 0.008}},
                 {"t_header": -0.1, "mtu": 1024, "progress": prog[1],
                  "perftest": {"gbps": 0.008}},
                 {"t_header": 0.0, "mtu": 1024, "progress": prog[2], "perftest": None,
                  "client_rc": 1, "client_out": "Failed status 12: wr_id 0\n"}]
        series = [[t, t, t * 1000, 2 * t, 3 * t, 0, t * 10000, t * 10] for t in (0, 1, 2, 3, 4)]
        return {"window": [0.0, 4.0], "flow_runs": flows,
                "bottleneck": {"rate_bps": 30_000_000}, "qdisc_series": series,
                "qdisc_before": {"2:": {"drops": 1}}, "qdisc_after": {"2:": {"drops": 9}}}

    def test_analyze(self):
        r = bn.analyze(self.rec())
        mbps = 1000 * 1024 * 8 / 1e6
        self.assertEqual(r["flows_failed"], 1)
        self.assertEqual(r["failures"], [{"flow": 3, "status": 12, "rc": 1,
                                          "last_progress": 2}])
        self.assertAlmostEqual(r["start_spread"], 0.3)
        self.assertEqual([round(x, 6) for x in r["goodput"]],
                         [round(mbps, 6)] * 2 + [round(mbps / 2, 6)])
        self.assertAlmostEqual(r["aggregate"], 2.5 * mbps)
        self.assertAlmostEqual(r["utilisation"], 2.5 * mbps / 30)
        self.assertAlmostEqual(r["jain"], 2.5 ** 2 / (3 * 2.25))
        self.assertEqual(r["perftest_goodput"], [8.0, 8.0, None])
        self.assertIsNone(r["perftest_aggregate"])
        self.assertEqual(sorted(r["per_second"]), [0.0, 1.0, 2.0, 3.0])
        self.assertEqual(r["per_second"][3.0][2], 0.0)
        self.assertAlmostEqual(r["jain_per_second_median"], (4 / 6 + 1) / 2)
        # 2-s bins: [0, 2] fair, [2, 4] not: never fair from some bin on
        self.assertIsNone(r["settle_fair"])
        self.assertEqual((r["backlog_avg"], r["backlog_max"]), (2, 4))
        self.assertAlmostEqual(r["queue_delay_ms"], 2000 * 8e3 / 30e6)
        self.assertEqual((r["drops_window"], r["marks_window"]), (8, 12))
        self.assertAlmostEqual(r["wire_mbps"], 40000 * 8 / 1e6 / 4)
        self.assertEqual(r["drops"], 8)


if __name__ == "__main__":
    unittest.main()
