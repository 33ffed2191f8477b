# SPDX-License-Identifier: GPL-2.0-only
"""The parsers of perftest, iperf3, udp_pingpong, rdma and dmesg output."""

import re
import unittest

from mbench import toolparse

BW_OUT = """\
---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF          Device         : mroce0
 Number of qps   : 1            Transport type : IB
 Connection type : RC           Using SRQ      : OFF
 TX depth        : 128
 CQ Moderation   : 1
 Mtu             : 1024[B]
 Link type       : Ethernet
 GID index       : 1
 Max inline data : 0[B]
 rdma_cm QPs     : OFF
 Data ex. method : Ethernet
---------------------------------------------------------------------------------------
 local address: LID 0000 QPN 0x0011 PSN 0x3a1b2c RKey 0x000201 VAddr 0x007f1234560000
 GID: 00:00:00:00:00:00:00:00:00:00:255:255:198:51:100:02
 remote address: LID 0000 QPN 0x0012 PSN 0x4b2c3d RKey 0x000301 VAddr 0x007f6543210000
 GID: 00:00:00:00:00:00:00:00:00:00:255:255:198:51:100:01
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
 65536      1234           0.00               11.23                0.000180
---------------------------------------------------------------------------------------
"""

LAT_OUT = """\
---------------------------------------------------------------------------------------
 #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]
 8       500          101.50         4210.00      150.25             180.75         90.10           900.50                 4000.00
---------------------------------------------------------------------------------------
"""

IPERF_TCP = """\
Connecting to host 198.51.100.1, port 5204
[  5] local 198.51.100.2 port 43210 connected to 198.51.100.1 port 5204
[ ID] Interval           Transfer     Bitrate         Retr  Cwnd
[  5]   0.00-1.00   sec  10.2 MBytes  85734 Kbits/sec    0    245 KBytes       (omitted)
[  5]   0.00-1.00   sec  10.5 MBytes  88100 Kbits/sec    0    245 KBytes
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bitrate         Retr
[  5]   0.00-1.00   sec  10.5 MBytes  88100 Kbits/sec    0             sender
[  5]   0.00-1.05   sec  10.4 MBytes  83000 Kbits/sec                  receiver

iperf Done.
"""

IPERF_UDP = """\
[ ID] Interval           Transfer     Bitrate         Total Datagrams
[  5]   0.00-1.00   sec  10.5 MBytes  88000 Kbits/sec  7483
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams
[  5]   0.00-2.00   sec  21.0 MBytes  88000 Kbits/sec  0.000 ms  0/14966 (0%)  sender
[  5]   0.00-2.04   sec  20.0 MBytes  82000 Kbits/sec  0.050 ms  700/14966 (4.7%)  receiver
"""


class PerftestBw(unittest.TestCase):
    def test_result(self):
        r = toolparse.parse_bw(BW_OUT, 65536)
        self.assertEqual(r["iters"], 1234)
        self.assertEqual(r["mib_s"], 11.23)
        self.assertEqual(r["mpps_printed"], 0.00018)
        # 11.23 MiB/s has 4 digits, 0.000180 Mpps 2: the rate comes from MiB/s
        self.assertAlmostEqual(r["msg_s"], 11.23 * 1048576 / 65536)
        self.assertAlmostEqual(r["gbps"], 11.23 * 1048576 * 8 / 1e9)

    def test_small_messages_take_mpps(self):
        out = BW_OUT.replace(" 65536      1234           0.00               11.23                0.000180",
                             " 64         99999          0.00               0.61                 0.010123")
        r = toolparse.parse_bw(out, 64)
        self.assertAlmostEqual(r["msg_s"], 10123.0)
        self.assertAlmostEqual(r["gbps"], 10123.0 * 64 * 8 / 1e9)

    def test_zero_is_a_result(self):
        out = BW_OUT.replace("11.23                0.000180", "0.00                 0.000000")
        self.assertEqual(toolparse.parse_bw(out, 65536)["gbps"], 0)

    def test_no_result(self):
        self.assertIsNone(toolparse.parse_bw(BW_OUT, 4096))      # another size
        self.assertIsNone(toolparse.parse_bw(BW_OUT.split(" #bytes")[0], 65536))
        self.assertIsNone(toolparse.parse_bw("", 65536))

    def test_result_line_regex(self):
        rx = re.compile(toolparse.bw_result_line(65536))
        self.assertTrue(any(rx.search(line) for line in BW_OUT.splitlines()))
        self.assertFalse(rx.search(" #bytes     #iterations"))

    def test_flow_ids(self):
        self.assertEqual(toolparse.flow_ids(BW_OUT),
                         {"qpn": 0x11, "psn0": 0x3a1b2c, "remote_qpn": 0x12, "mtu": 1024})
        self.assertEqual(toolparse.flow_ids("Couldn't connect"), {})

    def test_failed_status(self):
        self.assertEqual(toolparse.failed_status("Completion with error\nFailed status 12: wr_id 0"),
                         12)
        self.assertIsNone(toolparse.failed_status(BW_OUT))
        self.assertIsNone(toolparse.failed_status(None))


class PerftestLat(unittest.TestCase):
    def test_result(self):
        self.assertEqual(toolparse.parse_lat(LAT_OUT),
                         {"iters": 500, "t_min": 101.5, "t_max": 4210.0, "t_typical": 150.25,
                          "t_avg": 180.75, "p99": 900.5, "p999": 4000.0})

    def test_no_result(self):
        self.assertIsNone(toolparse.parse_lat(LAT_OUT.splitlines()[1]))


class UdpPingpong(unittest.TestCase):
    LINE = ("udp_pingpong: iters=500 size=8 t_min=20.100 t_typical=30.500 t_avg=35.250 "
            "p99=80.000 p99.9=120.000 t_max=150.000 usec retries=2\n")

    def test_result(self):
        self.assertEqual(toolparse.parse_udplat("warmup\n" + self.LINE),
                         {"iters": 500, "t_min": 20.1, "t_typical": 30.5, "t_avg": 35.25,
                          "p99": 80.0, "p999": 120.0, "t_max": 150.0, "retries": 2})

    def test_timeout(self):
        self.assertIsNone(toolparse.parse_udplat("udp_pingpong timed out at iteration 3\n"))


class Iperf(unittest.TestCase):
    def test_tcp_sender(self):
        r = toolparse.parse_iperf(IPERF_TCP, "tcp", 65536)
        self.assertAlmostEqual(r["secs"], 1.0)
        self.assertAlmostEqual(r["gbps"], 0.0881)
        self.assertAlmostEqual(r["sender_gbps"], 0.0881)
        self.assertAlmostEqual(r["msg_s"], 0.0881e9 / 8 / 65536)

    def test_udp_receiver(self):
        r = toolparse.parse_iperf(IPERF_UDP, "udp", 1472)
        self.assertEqual((r["lost"], r["sent"], r["received"]), (700, 14966, 14266))
        self.assertAlmostEqual(r["secs"], 2.04)
        self.assertAlmostEqual(r["gbps"], 0.082)
        self.assertAlmostEqual(r["sender_gbps"], 0.088)
        self.assertAlmostEqual(r["msg_s"], 14266 / 2.04)

    def test_incomplete(self):
        self.assertIsNone(toolparse.parse_iperf("iperf3: error - unable to connect", "tcp", 64))
        sender_only = "\n".join(line for line in IPERF_UDP.splitlines()
                                if not line.endswith("receiver"))
        self.assertIsNone(toolparse.parse_iperf(sender_only, "udp", 1472))

    def test_window_lines(self):
        lines = IPERF_TCP.splitlines()
        first = [i for i, s in enumerate(lines) if re.search(toolparse.IPERF_FIRST_INTERVAL, s)]
        summ = [i for i, s in enumerate(lines) if re.search(toolparse.IPERF_SUMMARY, s)]
        self.assertEqual((first[0], summ), (3, [5]))


class RdmaAndKernel(unittest.TestCase):
    def test_qp_state(self):
        out = ("link mroce0/1 lqpn 17 type RC state RTS drv_cwnd_pkts 40 drv_rate_mbps 9 "
               "drv_srtt_us 2100 drv_min_rtt_us 800 drv_outstanding_pkts 12\n"
               "link mroce0/1 lqpn 18 type RC state RTS drv_cwnd_pkts 38 drv_rate_mbps 10 "
               "drv_srtt_us 2200 drv_min_rtt_us 810 drv_outstanding_pkts 11\n")
        self.assertEqual(toolparse.parse_qp_state(out),
                         {"cwnd_pkts": [40, 38], "rate_mbps": [9, 10], "srtt_us": [2100, 2200],
                          "min_rtt_us": [800, 810], "outstanding_pkts": [12, 11]})
        self.assertEqual(toolparse.parse_qp_state("")["cwnd_pkts"], [])

    def test_cc_added(self):
        line = "[   12.3] infiniband mroce0: added on eth0 (transport udp, cc metaroce)\n"
        self.assertEqual(toolparse.parse_cc_added(line), "metaroce")
        self.assertIsNone(toolparse.parse_cc_added("mroce1: added on veth1 (cc none)"))


# ibv_devinfo -d mroce1 of a port on a 9000-byte veth (as the jumbo path sees it)
DEVINFO = """\
hca_id:\tmroce1
\ttransport:\t\t\tInfiniBand (0)
\tfw_ver:\t\t\t\t0.0.0
\tnode_guid:\t\t\t0000:0000:0000:0000
\tvendor_id:\t\t\t0x0000
\tphys_port_cnt:\t\t\t1
\t\tport:\t1
\t\t\tstate:\t\t\tPORT_ACTIVE (4)
\t\t\tmax_mtu:\t\t4096 (5)
\t\t\tactive_mtu:\t\t4096 (5)
\t\t\tsm_lid:\t\t\t0
\t\t\tport_lid:\t\t0
\t\t\tport_lmc:\t\t0x00
\t\t\tlink_layer:\t\tEthernet

"""


class PortsAndMtu(unittest.TestCase):
    def test_perftest_mtu(self):
        self.assertEqual(toolparse.parse_mtu(BW_OUT), 1024)
        self.assertEqual(toolparse.parse_mtu(BW_OUT.replace("1024[B]", "4096[B]")), 4096)
        # perftest lowering a requested MTU prints other lines first
        out = "Requested mtu is higher than active mtu \nChanging to active mtu - 1024\n" + BW_OUT
        self.assertEqual(toolparse.parse_mtu(out), 1024)
        self.assertIsNone(toolparse.parse_mtu(LAT_OUT))
        self.assertIsNone(toolparse.parse_mtu(None))

    def test_devinfo(self):
        self.assertEqual(toolparse.parse_devinfo(DEVINFO),
                         {"state": "PORT_ACTIVE", "max_mtu": 4096, "active_mtu": 4096,
                          "link_layer": "Ethernet"})
        d = toolparse.parse_devinfo(DEVINFO.replace("active_mtu:\t\t4096 (5)",
                                                    "active_mtu:\t\t1024 (3)"))
        self.assertEqual((d["max_mtu"], d["active_mtu"]), (4096, 1024))
        self.assertIsNone(toolparse.parse_devinfo("Failed to get IB devices list"))

    def test_link_netdev(self):
        out = "link mroce1/1 state ACTIVE physical_state LINK_UP netdev veth1 \n"
        self.assertEqual(toolparse.parse_link_netdev(out), "veth1")
        self.assertIsNone(toolparse.parse_link_netdev("link mroce1/1 state DOWN\n"))

    def test_link_mtu(self):
        out = ("7: veth2@if8: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9000 qdisc noqueue state UP "
               "mode DEFAULT group default qlen 1000\\    link/ether 5a:1e:00:00:00:02 brd "
               "ff:ff:ff:ff:ff:ff link-netns h1\n")
        self.assertEqual(toolparse.parse_link_mtu(out), 9000)
        self.assertIsNone(toolparse.parse_link_mtu('Device "veth9" does not exist.\n'))


if __name__ == "__main__":
    unittest.main()
