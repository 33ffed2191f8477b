# SPDX-License-Identifier: GPL-2.0-only
"""Host test of mrconform's decode of a failing case's exchange: the pcap
it writes (IPv4/UDP checksums, timestamps, both directions) and tshark
with the MetaRoCE dissector reading it back."""
import os
import shutil
import struct
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import mrconform as M  # noqa: E402
import mrwire as W  # noqa: E402

LUA = os.path.join(HERE, "..", "..", "wireshark", "metaroce.lua")


def trace():
    send = W.build(opcode="SEND", flags=W.AR | W.FI | W.LA, dqpn=0x11,
                   sqpn=0x22, psn=5, length=3, payload=b"abc")
    ack = W.build(opcode="ACK", dqpn=0x22, sqpn=0x11, psn=6, rx_count=1,
                  echo_psn=5)
    return [(1700000000.25, "192.0.2.2", 50000, "192.0.2.1", W.UDP_PORT, 2,
             True, send),
            (1700000000.5, "192.0.2.1", 49152, "192.0.2.2", W.UDP_PORT, 2,
             True, ack),
            (1700000000.75, "192.0.2.2", 50000, "192.0.2.1", W.UDP_PORT, 2,
             True, b"\x02" + send[1:])]


class Exchange(unittest.TestCase):
    def test_checksums(self):
        pkt = M.ipv4_udp("192.0.2.2", 50000, "192.0.2.1", 4792, 2, True,
                         b"xyz")
        self.assertEqual(M._csum16(pkt[:20]), 0, "IPv4 header checksum")
        pseudo = pkt[12:20] + struct.pack(">BBH", 0, 17, len(pkt) - 20)
        self.assertEqual(M._csum16(pseudo + pkt[20:]), 0, "UDP checksum")
        nock = M.ipv4_udp("192.0.2.2", 50000, "192.0.2.1", 4792, 2, False,
                          b"xyz")
        self.assertEqual(nock[26:28], b"\0\0", "no UDP checksum")

    def test_pcap(self):
        d = tempfile.mkdtemp()
        try:
            p = os.path.join(d, "x.pcap")
            M.write_pcap(p, trace())
            with open(p, "rb") as f:
                data = f.read()
            magic, _, _, _, _, _, link = struct.unpack("<IHHiIII", data[:24])
            self.assertEqual((magic, link), (0xa1b2c3d4, 101))
            sec, usec, n, _ = struct.unpack("<IIII", data[24:40])
            self.assertEqual((sec, usec), (1700000000, 250000))
            self.assertEqual(data[40:40 + n][9], 17)
        finally:
            shutil.rmtree(d)

    @unittest.skipUnless(shutil.which("tshark"), "no tshark")
    def test_decoded(self):
        out = M.decode_exchange(LUA, trace(), "", "case")
        text = "\n".join(out)
        self.assertIn("3 packets, decoded by metaroce.lua", out[0])
        self.assertEqual(len(out), 4, text)
        self.assertIn("SEND", out[1])
        self.assertIn("192.0.2.2 → 192.0.2.1", out[1])
        self.assertIn("ACK", out[2])
        self.assertIn("version 2", out[3])
        self.assertNotIn("Lua Error", text)

    def test_rx_entry(self):
        # what the tester's receive path records is what it decodes
        for e in trace():
            ip = M.ipv4_udp(*e[1:])
            self.assertEqual(M.rx_trace_entry(ip, e[0]), e)

    def test_no_dissector(self):
        self.assertIn("no dissector",
                      M.decode_exchange(None, trace(), "", "c")[0])


if __name__ == "__main__":
    unittest.main()
