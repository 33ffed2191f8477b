# SPDX-License-Identifier: GPL-2.0-only
"""What the guests read of themselves (/proc, sysfs), the host monitor's
parsers, run and event names, the plan."""

import argparse
import os
import tempfile
import unittest

from mbench import common, hostmon, plan, proc, sysinfo

TCP_TABLE = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:1C25 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1234 1
   1: 0100007F:4A39 0100007F:1C25 01 00000000:00000000 00:00000000 00000000     0        0 1235 1
"""
UDP_TABLE = """\
   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops
  123: 00000000:1C84 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 1236 2 0 0
"""


class Listening(unittest.TestCase):
    def test_tcp_listen_only(self):
        self.assertTrue(proc.port_bound(TCP_TABLE, "tcp", 7205))      # 0x1C25, LISTEN
        self.assertFalse(proc.port_bound(TCP_TABLE, "tcp", 18937))    # 0x4A39, ESTABLISHED
        self.assertFalse(proc.port_bound(TCP_TABLE, "tcp", 5201))

    def test_udp_bound(self):
        self.assertTrue(proc.port_bound(UDP_TABLE, "udp", 7300))
        self.assertFalse(proc.port_bound(UDP_TABLE, "udp", 7301))

    def test_junk(self):
        self.assertFalse(proc.port_bound("header\n0: garbage\n\n", "tcp", 1))

    def test_this_process(self):
        # a real listener of ours, seen through /proc/PID/net/tcp
        import socket
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        self.assertFalse(proc.listening(os.getpid(), "tcp", port))
        s.listen()
        self.assertTrue(proc.listening(os.getpid(), "tcp", port))
        s.close()


class Cpu(unittest.TestCase):
    def test_line(self):
        self.assertEqual(sysinfo.parse_cpu_line("cpu  100 5 30 1000 7 2 3 4 0 0"),
                         {"user": 105, "kernel": 35, "idle": 1007, "steal": 4})
        self.assertEqual(sysinfo.parse_cpu_line("cpu 1 2 3 4")["kernel"], 3)

    def test_delta_scaled_to_wall_time(self):
        a = {"t": 10.0, "user": 0, "kernel": 0, "idle": 0, "steal": 0, "ncpu": 2}
        # 2 s on 2 CPUs = 4 CPU-s, but only 200 ticks (not 400) arrived
        b = {"t": 12.0, "user": 50, "kernel": 100, "idle": 50, "steal": 0, "ncpu": 2}
        d = sysinfo.cpu_delta(a, b)
        self.assertEqual((d["secs"], d["ticks"]), (2.0, 200))
        self.assertAlmostEqual(d["user"], 1.0)
        self.assertAlmostEqual(d["kernel"], 2.0)
        self.assertAlmostEqual(d["idle"], 1.0)
        self.assertEqual(sysinfo.cpu_delta(a, dict(a, t=11.0))["kernel"], 0)

    def test_snapshot(self):
        s = sysinfo.cpu_snapshot()
        self.assertEqual(set(s), {"t", "user", "kernel", "idle", "steal", "ncpu"})


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


class Sysfs(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.base = self.tmp.name
        port = f"{self.base}/mroce0/ports/1"
        for d in ("gids", "gid_attrs/types", "hw_counters"):
            os.makedirs(f"{port}/{d}")
        gids = {0: ("fe80:0000:0000:0000:5054:00ff:fe12:3456", "IB/RoCE v1"),
                1: ("fe80:0000:0000:0000:5054:00ff:fe12:3456", "RoCE v2"),
                2: ("0000:0000:0000:0000:0000:ffff:c633:6401", "IB/RoCE v1"),
                10: ("0000:0000:0000:0000:0000:ffff:c633:6401", "RoCE v2")}
        for i, (g, t) in gids.items():
            write(f"{port}/gids/{i}", g + "\n")
            write(f"{port}/gid_attrs/types/{i}", t + "\n")
        write(f"{port}/hw_counters/retx_pkts", "12\n")
        write(f"{port}/hw_counters/rx_ce_pkts", "0\n")
        write(f"{port}/hw_counters/broken", "n/a\n")

    def tearDown(self):
        self.tmp.cleanup()

    def test_gid_index_roce_v2_ipv4(self):
        self.assertEqual(sysinfo.gid_index("mroce0", common.GID_PREFIX, self.base), 10)

    def test_gid_missing(self):
        with self.assertRaises(SystemExit):
            sysinfo.gid_index("mroce0", "2001:0db8:", self.base, tries=1)

    def test_counters(self):
        self.assertEqual(sysinfo.hw_counters("mroce0", self.base),
                         {"retx_pkts": 12, "rx_ce_pkts": 0})
        self.assertEqual(sysinfo.hw_counters("nodev", self.base), {})
        self.assertEqual(sysinfo.counter_delta({"a": 1, "b": 5}, {"a": 1, "b": 7, "c": 2}),
                         {"b": 2, "c": 2})


class HostMon(unittest.TestCase):
    def test_proc_stat(self):
        self.assertEqual(hostmon.host_busy_total("cpu  10 1 5 100 4 2 3 1 0 0"), (22, 126))

    def test_pid_stat(self):
        stat = "4168 (qemu-system-x86) S 1 4168 4168 0 -1 4194560 5 0 0 0 1500 276 0 0 20 0 5"
        self.assertEqual(hostmon.proc_cpu_ticks(stat), 1776)
        # a command name with blanks and parentheses
        self.assertEqual(hostmon.proc_cpu_ticks(stat.replace("(qemu-system-x86)", "(a (b) c)")),
                         1776)


class Names(unittest.TestCase):
    def test_run_names(self):
        self.assertEqual(common.run_name(dict(kind="bw", verb="write", size=65536,
                                              transport="mroce")), "write_bw-65536-mroce")
        self.assertEqual(common.run_name(dict(kind="bw", verb="write", size=65536,
                                              transport="rxe", loss=0.1)),
                         "write_bw-65536-rxe-loss0.1")
        self.assertEqual(common.run_name(dict(kind="iperf", proto="tcp", size=64, loss=0.0)),
                         "iperf-tcp-64-loss0")
        self.assertEqual(common.run_name(dict(kind="udplat", size=8)), "udplat-8")
        self.assertEqual(common.run_name(dict(kind="bottleneck", transport="mroce",
                                              cc="metaroce")), "bottleneck-mroce-metaroce")
        self.assertEqual(common.run_name(dict(kind="bottleneck", transport="rxe")),
                         "bottleneck-rxe")
        self.assertEqual(common.run_id(7, dict(kind="udplat", size=8, rep=2)), "007-udplat-8-r2")

    def test_events_round_trip(self):
        rid = "024-bottleneck-mroce-metaroce-r1"
        for ph in common.EVENT_PHASES:
            n = common.event_name(12, rid, ph)
            self.assertEqual(n, f"00012-{rid}-{ph}")
            self.assertEqual(common.parse_event(n), (rid, ph))
        self.assertIsNone(common.parse_event("00012-x-middle"))
        self.assertIsNone(common.parse_event(".stop"))

    def test_fmt(self):
        self.assertEqual([common.fmt(x) for x in (None, 0, 1234.5, 12.345, 0.5, 0.000175)],
                         ["–", "0", "1234", "12.3", "0.500", "0.000175"])
        self.assertEqual(common.size_label(65536), "64 KiB")
        self.assertEqual(common.size_label(1000), "1000 B")


def drive_args(**kw):
    a = dict(mode="pair", sizes=[64, 65536], verbs=["write", "send"], udp_max=1472, repeat=2,
             lat_verbs=["write", "send"], lat_size=8, loss=[1.0], loss_size=65536, loss_repeat=1,
             loss_lat=[],
             bottleneck_repeat=1, bottleneck_cc=["metaroce", "none"], bottleneck_size=65536,
             bottleneck_flows=3, only="")
    a.update(kw)
    return argparse.Namespace(**a)


class Plan(unittest.TestCase):
    def names(self, p):
        return [f"{common.run_name(x)}-r{x['rep']}" for x in p]

    def test_smoke(self):
        a = drive_args(sizes=[65536], verbs=["write"], lat_verbs=[], loss=[], repeat=1,
                       bottleneck_repeat=0)
        p = plan.make_plan(a)
        self.assertEqual(self.names(p), ["write_bw-65536-mroce-r1", "write_bw-65536-rxe-r1",
                                         "iperf-tcp-65536-r1", "iperf-udp-1472-r1"])
        self.assertTrue(all(x["scenario"] == "write_bw 65536" for x in p))

    def test_rotation_and_groups(self):
        p = plan.make_plan(drive_args())
        n = self.names(p)
        # repetition 2 of a scenario starts with the second transport
        self.assertEqual(n[:8], ["write_bw-64-mroce-r1", "write_bw-64-rxe-r1", "iperf-tcp-64-r1",
                                 "iperf-udp-64-r1", "write_bw-64-rxe-r2", "iperf-tcp-64-r2",
                                 "iperf-udp-64-r2", "write_bw-64-mroce-r2"])
        # UDP once per datagram size: 64 and min(65536, 1472)
        self.assertEqual(sorted({x for x in n if x.startswith("iperf-udp")}),
                         ["iperf-udp-1472-r1", "iperf-udp-1472-r2", "iperf-udp-64-r1",
                          "iperf-udp-64-r2"])
        self.assertNotIn("send", " ".join(x for x in n if x.startswith("iperf")))
        # the raw latency reference comes with the first latency verb only
        self.assertEqual(sum(1 for x in n if x.startswith("udplat")), 2)
        loss = [x for x in p if x["scenario"] == "loss"]
        self.assertEqual([x.get("loss") for x in loss], [0.0] * 3 + [1.0] * 3)
        bn = [x for x in p if x["kind"] == "bottleneck"]
        self.assertEqual([common.run_name(x) for x in bn],
                         ["bottleneck-mroce-metaroce", "bottleneck-mroce-none", "bottleneck-rxe"])
        self.assertTrue(all(x["flows"] == 3 and x["size"] == 65536 for x in bn))
        self.assertEqual(p[-1]["kind"], "bottleneck")

    def test_loss_lat(self):
        # write_lat at each positive --loss-lat level, both transports,
        # rotated per repetition, after the goodput sweep
        p = plan.make_plan(drive_args(loss_lat=[0.0, 1.0, 5.0], loss_repeat=2,
                                      bottleneck_repeat=0))
        ll = [x for x in p if x["scenario"] == "loss_lat"]
        self.assertEqual(self.names(ll), [
            "write_lat-8-mroce-loss1-r1", "write_lat-8-rxe-loss1-r1",
            "write_lat-8-mroce-loss5-r1", "write_lat-8-rxe-loss5-r1",
            "write_lat-8-rxe-loss1-r2", "write_lat-8-mroce-loss1-r2",
            "write_lat-8-rxe-loss5-r2", "write_lat-8-mroce-loss5-r2"])
        self.assertEqual(p[-1]["scenario"], "loss_lat")
        # none in the loop path (no netem there), none when not asked for
        self.assertFalse([x for x in plan.make_plan(drive_args(mode="loop", loss_lat=[1.0]))
                          if x.get("loss") is not None])
        self.assertFalse([x for x in plan.make_plan(drive_args()) if x["scenario"] == "loss_lat"])

    def test_single_has_no_rxe_nor_bottleneck(self):
        p = plan.make_plan(drive_args(mode="single"))
        self.assertFalse([x for x in p if x["transport"] == "rxe" or x["kind"] == "bottleneck"])

    def test_jumbo_runs_what_single_runs(self):
        # the jumbo path is the single path's plan on a 9000-byte veth
        for kw in ({}, {"loss_lat": [1.0]}, {"only": "write_bw-65536|tcp-65536"}):
            self.assertEqual(plan.make_plan(drive_args(mode="jumbo", **kw)),
                             plan.make_plan(drive_args(mode="single", **kw)))
        self.assertIn("jumbo", common.PATHS)
        self.assertNotIn("jumbo", common.RXE_PATHS)

    def test_loop_only_targets(self):
        n = {common.run_name(x) for x in plan.make_plan(drive_args(mode="loop"))}
        self.assertEqual(n, {"write_bw-65536-mroce", "write_bw-65536-rxe", "iperf-tcp-65536",
                             "send_bw-64-mroce", "send_bw-64-rxe", "write_lat-8-mroce",
                             "write_lat-8-rxe", "udplat-8", "send_lat-8-mroce",
                             "send_lat-8-rxe"})

    def test_only(self):
        p = plan.make_plan(drive_args(only="bottleneck"))
        self.assertEqual(len(p), 3)
        p = plan.make_plan(drive_args(only="write_bw-65536|tcp-65536", loss=[]))
        self.assertEqual(self.names(p), ["write_bw-65536-mroce-r1", "write_bw-65536-rxe-r1",
                                         "iperf-tcp-65536-r1", "write_bw-65536-rxe-r2",
                                         "iperf-tcp-65536-r2", "write_bw-65536-mroce-r2"])


if __name__ == "__main__":
    unittest.main()
