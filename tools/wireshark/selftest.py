#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Host test of the MetaRoCE dissector (tools/wireshark/metaroce.lua).

Writes a pcap of MetaRoCE packets built here from the specification
(Documentation/metaroce-spec.rst): the byte-exact vectors of its
Appendix A, one packet of every opcode, and malformed packets, one per
packet-level check P1..P12, each with the counter a receiver must count.
Runs tshark with the dissector over it and compares every decoded field
the test names with the value it encoded.  Exit status 0 if all match.

usage: selftest.py [--keep DIR] [--tshark PATH]
"""

import argparse
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LUA = os.path.join(HERE, "metaroce.lua")
PORT = 4792

# ---------------------------------------------------------------- encoder

OPS = {  # opcode: (header bytes, extension headers)
    0x01: (48, "DH"), 0x02: (48, "DH"), 0x03: (64, "MH DH"),
    0x04: (64, "MH DH"), 0x05: (72, "MH RH"), 0x06: (64, "MH DH"),
    0x07: (64, "MH ATH"), 0x08: (64, "MH ATH"), 0x09: (40, "ARH"),
    0x0a: (48, "DH"), 0x10: (88, "KH"), 0x11: (96, "KH NKH"),
    0x12: (32, ""), 0x20: (40, "DGH"), 0x21: (40, "DGH"),
}


def bh(op, flags=0, dqpn=0x11, path=0, sqpn=0x12, psn=0, path_seq=0,
       msn=0, ts=0, words=None):
    if words is None:
        words = OPS[op][0] // 8
    return struct.pack(">BBHIIIIIII", 1, op, flags, words << 24 | dqpn,
                       path << 24 | sqpn, psn, path_seq, msn, ts, 0)


def dh(offset, msg_len, rq_seq=0, imm=0):
    return struct.pack(">IIII", offset, msg_len, rq_seq, imm)


def mh(va, rkey):
    return struct.pack(">QII", va, rkey, 0)


def rh(sink_va, sink_key, msg_len, offset, length):
    return struct.pack(">QIIII", sink_va, sink_key, msg_len, offset, length)


def kh(sack_bits=(), echo_ts=0, echo_path_seq=0, echo_path=0, echo_psn=0,
       rx_count=0, ce_count=0, hint=0, ack_delay=0, echo_flags=0,
       seg_max=0):
    words = [0, 0, 0, 0]
    for i in sack_bits:
        words[i // 64] |= 1 << (i % 64)
    return struct.pack(">IIIHHIHBBQQQQ", echo_ts, echo_path_seq,
                       echo_path << 24 | echo_psn, rx_count, ce_count, hint,
                       ack_delay, echo_flags, seg_max, *words)


def nkh(code, timer, psn):
    return struct.pack(">BBHI", code, timer, 0, psn)


# ---------------------------------------------------------------- pcap


def ip_csum(data):
    s = 0
    for i in range(0, len(data), 2):
        s += data[i] << 8 | (data[i + 1] if i + 1 < len(data) else 0)
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def frame(payload, sport=49152, ecn=2):
    src, dst = bytes([192, 0, 2, 1]), bytes([192, 0, 2, 2])
    ulen = 8 + len(payload)
    pseudo = src + dst + struct.pack(">BBH", 0, 17, ulen)
    udp = struct.pack(">HHHH", sport, PORT, ulen, 0) + payload
    c = ip_csum(pseudo + udp) or 0xffff
    udp = udp[:6] + struct.pack(">H", c) + udp[8:]
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, ecn, 20 + ulen, 0, 0x4000, 64,
                     17, 0, src, dst)
    ip = ip[:10] + struct.pack(">H", ip_csum(ip)) + ip[12:]
    eth = bytes.fromhex("020000000002" "020000000001" "0800")
    return eth + ip + udp


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for n, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 1000 + n, 0, len(fr), len(fr)))
            f.write(fr)


# ---------------------------------------------------------------- cases

def hexdump(text):
    """Bytes of a hex dump as the spec prints it ("00: 01 04 00 0f ...")."""
    return bytes.fromhex("".join(line.split(":", 1)[1]
                                 for line in text.strip().split("\n")))


# Appendix A of the spec, byte for byte, copied from its hex dumps
VEC_WRITE_IMM = hexdump("""
00: 01 04 00 0f  08 00 01 23  05 00 04 56  00 ab cd ef
10: 01 02 03 04  00 00 00 07  11 22 33 44  00 00 00 00
20: 00 00 7f 00  12 34 50 00  de ad be ef  00 00 00 00
30: 00 00 00 00  00 00 00 10  00 00 00 09  00 00 10 00
40: a0 a1 a2 a3  a4 a5 a6 a7  a8 a9 aa ab  ac ad ae af
""")
VEC_ACK = hexdump("""
00: 01 10 00 00  0b 00 04 56  03 00 01 23  00 ff ff fe
10: 00 00 00 00  00 00 00 00  0a 0b 0c 0d  00 00 00 00
20: 11 22 33 44  01 02 03 04  05 00 00 01  00 08 00 03
30: 00 01 86 a0  00 19 01 00  00 00 00 00  00 00 00 0a
40: 00 00 00 00  00 00 00 01  00 00 00 00  00 00 00 00
50: 80 00 00 00  00 00 00 00
""")
VEC_NAK = hexdump("""
00: 01 11 00 00  0c 00 04 56  00 00 01 23  00 ff ff ff
10: 00 00 00 00  00 00 00 00  00 00 00 2a  00 00 00 00
20: 00 00 00 01  00 00 00 09  07 00 00 02  00 01 00 00
30: 00 00 00 00  00 00 00 00  00 00 00 00  00 00 00 00
40: 00 00 00 00  00 00 00 00  00 00 00 00  00 00 00 00
50: 00 00 00 00  00 00 00 00  02 0e 00 00  00 00 00 02
""")


def cases():
    """(name, packet bytes, {field: expected value}, expected drop or None)"""
    c = []
    c.append(("spec A write_imm", VEC_WRITE_IMM, {
        "metaroce.version": "1", "metaroce.opcode": "0x04",
        "metaroce.flags": "0x000f", "metaroce.flags.ack_req": "1",
        "metaroce.flags.solicited": "1", "metaroce.flags.first": "1",
        "metaroce.flags.last": "1", "metaroce.flags.retransmit": "0",
        "metaroce.hdr_words": "8", "metaroce.dqpn": "0x000123",
        "metaroce.path_id": "5", "metaroce.sqpn": "0x000456",
        "metaroce.psn": "0xabcdef", "metaroce.path_seq": "16909060",
        "metaroce.msn": "7", "metaroce.timestamp": "287454020",
        "metaroce.mh.va": "0x00007f0012345000",
        "metaroce.mh.rkey": "0xdeadbeef", "metaroce.dh.offset": "0",
        "metaroce.dh.msg_len": "16", "metaroce.dh.rq_seq": "9",
        "metaroce.dh.imm": "0x00001000", "metaroce.payload_len": "16",
        "metaroce.payload": "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf",
    }, None))
    c.append(("spec A ack", VEC_ACK, {
        "metaroce.opcode": "0x10", "metaroce.dqpn": "0x000456",
        "metaroce.path_id": "3", "metaroce.psn": "0xfffffe",
        "metaroce.kh.epsn": "0xfffffe", "metaroce.timestamp": "168496141",
        "metaroce.kh.echo_ts": "287454020",
        "metaroce.kh.echo_path_seq": "16909060",
        "metaroce.kh.echo_path_id": "5", "metaroce.kh.echo_psn": "0x000001",
        "metaroce.kh.rx_count": "8", "metaroce.kh.ce_count": "3",
        "metaroce.kh.rate_hint": "100000", "metaroce.kh.ack_delay": "25",
        "metaroce.kh.echo_ce": "1", "metaroce.kh.echo_dup": "0",
        "metaroce.kh.sack.psn": "0xffffff,0x000001,0x00003e,0x0000fd",
        "metaroce.kh.sack.count": "4", "metaroce.kh.sack.missing": "252",
        "metaroce.kh.sack.highest": "0x0000fd",
        "metaroce.kh.sack.ranges": "0xffffff,0x000001,0x00003e,0x0000fd",
    }, None))
    c.append(("spec A nak", VEC_NAK, {
        "metaroce.opcode": "0x11", "metaroce.psn": "0xffffff",
        "metaroce.kh.echo_path_id": "7", "metaroce.kh.rx_count": "1",
        "metaroce.kh.rate_hint": "0", "metaroce.nak.code": "2",
        "metaroce.nak.rnr_timer": "14", "metaroce.nak.rnr_timer_us": "1280",
        "metaroce.nak.psn": "0x000002", "metaroce.kh.sack.count": "0",
    }, None))
    # one of every other opcode
    c.append(("send middle", bh(0x01, psn=100, msn=3, path=2, path_seq=9) +
              dh(1024, 4096, rq_seq=4) + bytes(1024), {
                  "metaroce.opcode": "0x01", "metaroce.dh.offset": "1024",
                  "metaroce.dh.msg_len": "4096", "metaroce.dh.rq_seq": "4",
                  "metaroce.flags.first": "0", "metaroce.payload_len": "1024",
                  "metaroce.path_id": "2", "metaroce.path_seq": "9"}, None))
    c.append(("send_imm", bh(0x02, flags=0xd, psn=5) +
              dh(0, 8, rq_seq=1, imm=0xcafe) + bytes(8),
              {"metaroce.dh.imm": "0x0000cafe"}, None))
    c.append(("write", bh(0x03, flags=0x1c, psn=6) + mh(0x1000, 0x77) +
              dh(0, 3) + b"abc", {"metaroce.opcode": "0x03",
                                  "metaroce.flags.retransmit": "1",
                                  "metaroce.mh.rkey": "0x00000077"}, None))
    c.append(("read req", bh(0x05, flags=0x10, psn=7, msn=2) +
              mh(0x2000, 0x99) + rh(0x3000, 0x55, 65536, 4096, 8192), {
                  "metaroce.opcode": "0x05", "metaroce.rh.sink_va":
                  "0x0000000000003000", "metaroce.rh.sink_key": "0x00000055",
                  "metaroce.rh.msg_len": "65536", "metaroce.rh.offset": "4096",
                  "metaroce.rh.length": "8192"}, None))
    c.append(("read resp", bh(0x06, flags=0x08, psn=7, msn=2) +
              mh(0x3000, 0x55) + dh(8192, 8193) + b"z",
              {"metaroce.opcode": "0x06", "metaroce.dh.offset": "8192"},
              None))
    c.append(("cmp_swp", bh(0x07, psn=8) + mh(0x4000, 0x66) +
              struct.pack(">QQ", 5, 4), {
                  "metaroce.ath.swap": "0x0000000000000005",
                  "metaroce.ath.compare": "0x0000000000000004"}, None))
    c.append(("fetch_add", bh(0x08, psn=9) + mh(0x4000, 0x66) +
              struct.pack(">QQ", 3, 0),
              {"metaroce.ath.add": "0x0000000000000003"}, None))
    c.append(("atomic resp", bh(0x09, psn=9) + struct.pack(">Q", 0x42),
              {"metaroce.arh.orig": "0x0000000000000042"}, None))
    c.append(("send_inv", bh(0x0a, flags=0xc, psn=10) +
              dh(0, 0, rq_seq=2, imm=0x1234),
              {"metaroce.dh.inv_rkey": "0x00001234",
               "metaroce.payload_len": ""}, None))
    c.append(("probe", bh(0x12, path=9, path_seq=77),
              {"metaroce.opcode": "0x12", "metaroce.path_seq": "77"}, None))
    c.append(("ud_send_imm", bh(0x21, dqpn=1, sqpn=1, flags=2) +
              struct.pack(">II", 0x80010000, 0xbeef) + b"x", {
                  "metaroce.dgh.qkey": "0x80010000",
                  "metaroce.dgh.imm": "0x0000beef"}, None))
    c.append(("sack holes", bh(0x10, psn=0x10) +
              kh((1, 2, 3, 5, 64, 255), rx_count=1, echo_psn=0x15,
                 hint=2500), {
                  "metaroce.kh.sack.count": "6",
                  "metaroce.kh.sack.ranges":
                  "0x000011-0x000013,0x000015,0x000050,0x00010f",
                  "metaroce.kh.sack.missing": "250",
                  "metaroce.kh.rate_hint": "2500"}, None))
    # PB_ACK: a request with PBH and KH after its headers
    pb = struct.pack(">II", 0x123456, 0) + kh((1, 2), rx_count=2,
                                               echo_psn=0x123457, hint=800)
    c.append(("pb_ack send", bh(0x01, flags=0x2d, psn=11, words=14) +
              dh(0, 3, rq_seq=5) + pb + b"xyz", {
                  "metaroce.flags.pb_ack": "1", "metaroce.hdr_words": "14",
                  "metaroce.pbh.ack_psn": "0x123456",
                  "metaroce.kh.epsn": "0x123456",
                  "metaroce.kh.rx_count": "2", "metaroce.kh.rate_hint": "800",
                  "metaroce.kh.sack.ranges": "0x123457-0x123458",
                  "metaroce.dh.rq_seq": "5", "metaroce.payload_len": "3",
                  "metaroce.payload": "78797a"}, None))
    c.append(("pb_ack read req", bh(0x05, flags=0x20, psn=12, words=17) +
              mh(0x2000, 0x99) + rh(0x3000, 0x55, 64, 0, 64) + pb, {
                  "metaroce.pbh.ack_psn": "0x123456",
                  "metaroce.rh.length": "64"}, None))
    c.append(("probe pb query", bh(0x12, flags=0x20, path=0),
              {"metaroce.flags.pb_ack": "1", "metaroce.hdr_words": "4"},
              None))
    c.append(("ack echo_pb", bh(0x10, psn=3) + kh(rx_count=1, echo_flags=4),
              {"metaroce.kh.echo_pb": "1"}, None))
    # the answer to a PROBE with PB_ACK: ECHO_PB, ECHO_SEG and seg_max,
    # the largest segment in 32-byte units (1500-byte link: 1388 -> 43)
    c.append(("ack echo_pb echo_seg",
              bh(0x10, psn=3) + kh(rx_count=1, echo_path=9,
                                   echo_path_seq=77, echo_flags=0xc,
                                   seg_max=43),
              {"metaroce.kh.echo_pb": "1", "metaroce.kh.echo_seg": "1",
               "metaroce.kh.echo_path_seq": "77",
               "metaroce.kh.seg_max": "43"}, None))
    c.append(("ack echo_seg seg_max 255",
              bh(0x10, psn=3) + kh(rx_count=1, echo_flags=0xc, seg_max=255),
              {"metaroce.kh.seg_max": "255"}, None))
    c.append(("send 9216 bytes", bh(0x01, flags=0xc, psn=13) +
              dh(0, 9216) + bytes(9216),
              {"metaroce.payload_len": "9216"}, None))
    c.append(("ud_send 4096 bytes", bh(0x20, dqpn=1, sqpn=1) +
              struct.pack(">II", 0x80010000, 0) + bytes(4096),
              {"metaroce.payload_len": "4096"}, None))
    # P1..P12: every drop counter, from the first failing check
    good_ack = bh(0x10, psn=0x10) + kh((), rx_count=1)
    bad = [
        ("P1 short", good_ack[:31], "rx_drop_short"),
        ("P2 version", b"\x02" + good_ack[1:], "rx_drop_version"),
        ("P3 opcode", bh(0x13, words=4), "rx_drop_opcode"),
        ("P3 experimental", bh(0xc1, words=4) + bytes(8), "rx_drop_opcode"),
        # below 4 is invalid for every opcode, known or not (spec, hdr_words)
        ("P3 opcode, hdr_words 2", bh(0x13, words=2),
         {"_ws.expert.message~": "hdr_words 2 is below 4"}, "rx_drop_opcode"),
        ("P4 hdr_words", bh(0x10, words=10) + good_ack[32:],
         "rx_drop_hdr_len"),
        ("P5 truncated", good_ack[:60], "rx_drop_short"),
        ("P6 bh byte 12", good_ack[:12] + b"\x01" + good_ack[13:],
         "rx_drop_reserved"),
        ("P6 flag bit 6", bh(0x01, flags=0x4c) + dh(0, 0),
         "rx_drop_reserved"),
        ("P4 pb_ack without its headers", bh(0x01, flags=0x2c) + dh(0, 0),
         "rx_drop_hdr_len"),
        ("P6 pbh reserved", bh(0x01, flags=0x2c, words=14) + dh(0, 0) +
         struct.pack(">II", 0x01000000, 0) + kh(rx_count=1),
         "rx_drop_reserved"),
        ("P7 pb_ack on an ack", bh(0x10, flags=0x20) + kh(rx_count=1),
         "rx_drop_flags"),
        ("P10 pb_ack sack bit 0", bh(0x01, flags=0x2c, words=14) + dh(0, 0) +
         struct.pack(">II", 7, 0) + kh((0,), rx_count=1), "rx_drop_field"),
        ("P6 ack path seq", bh(0x10, path_seq=1) + kh(rx_count=1),
         "rx_drop_reserved"),
        ("P6 probe psn", bh(0x12, psn=3), "rx_drop_reserved"),
        ("P6 write rq_seq", bh(0x03, flags=0xc) + mh(0, 0) +
         dh(0, 0, rq_seq=1), "rx_drop_reserved"),
        ("P6 fetch_add compare", bh(0x08) + mh(0, 1) +
         struct.pack(">QQ", 1, 2), "rx_drop_reserved"),
        ("P6 echo flag 4", bh(0x10) + kh(rx_count=1, echo_flags=0x10),
         "rx_drop_reserved"),
        ("P6 echo flag 7 before P10 seg_max",
         bh(0x10) + kh(rx_count=1, echo_flags=0x80, seg_max=21),
         "rx_drop_reserved"),
        ("P7 flag", bh(0x05, flags=0x01) + mh(0, 1) + rh(0, 1, 1, 0, 1),
         "rx_drop_flags"),
        ("P8 qpn 0", bh(0x12, dqpn=0), "rx_drop_qpn"),
        ("P8 qpn 1 rc", bh(0x12, sqpn=1), "rx_drop_qpn"),
        ("P9 path", bh(0x12, path=64), "rx_drop_path"),
        ("P9 echo path", bh(0x10) + kh(rx_count=1, echo_path=70),
         "rx_drop_path"),
        ("P10 ce > rx", bh(0x10) + kh(rx_count=1, ce_count=2),
         "rx_drop_field"),
        ("P10 sack bit 0", bh(0x10) + kh((0,), rx_count=1), "rx_drop_field"),
        ("P10 echo no rx", bh(0x10) + kh(echo_ts=5), "rx_drop_field"),
        ("P10 seg_max no rx", bh(0x10) + kh(echo_flags=0xc, seg_max=21),
         {"_ws.expert.message~": "rx_count 0"}, "rx_drop_field"),
        ("P10 seg_max without echo_seg",
         bh(0x10) + kh(rx_count=1, echo_flags=4, seg_max=21),
         {"metaroce.kh.seg_max": "21",
          "_ws.expert.message~": "seg_max without ECHO_SEG"},
         "rx_drop_field"),
        ("P10 echo_seg without seg_max",
         bh(0x10) + kh(rx_count=1, echo_flags=0xc),
         {"metaroce.kh.seg_max": "0",
          "_ws.expert.message~": "ECHO_SEG with seg_max 0"},
         "rx_drop_field"),
        ("P10 pb_ack echo_seg without seg_max",
         bh(0x01, flags=0x2c, words=14) + dh(0, 0) +
         struct.pack(">II", 7, 0) + kh(rx_count=1, echo_flags=8),
         {"_ws.expert.message~": "ECHO_SEG with seg_max 0"},
         "rx_drop_field"),
        ("P10 nak code", bh(0x11) + kh(rx_count=1) + nkh(6, 0, 0),
         "rx_drop_field"),
        ("P10 nak psn", bh(0x11, psn=5) + kh(rx_count=1) + nkh(3, 0, 6),
         "rx_drop_field"),
        ("P10 psn_seq_err in window", bh(0x11, psn=5) + kh(rx_count=1) +
         nkh(1, 0, 10), "rx_drop_field"),
        ("P10 rnr timer", bh(0x11) + kh(rx_count=1) + nkh(4, 3, 0),
         "rx_drop_field"),
        ("P11 trailing", good_ack + b"\0", "rx_drop_length"),
        ("P11 beyond msg", bh(0x01, flags=0xc) + dh(0, 2) + b"abc",
         "rx_drop_length"),
        ("P11 payload 9217", bh(0x01, flags=0xc) + dh(0, 9217) +
         bytes(9217), {"_ws.expert.message~": "Payload above 9216 bytes"},
         "rx_drop_length"),
        ("P11 datagram 4097", bh(0x20, dqpn=1, sqpn=1) +
         struct.pack(">II", 0x80010000, 0) + bytes(4097),
         {"_ws.expert.message~": "Datagram payload above 4096 bytes"},
         "rx_drop_length"),
        ("P11 va wrap", bh(0x03, flags=0xc) +
         mh(0xffffffffffffff00, 1) + dh(0, 0x101) + bytes(0x101),
         "rx_drop_length"),
        ("P11 read range", bh(0x05) + mh(0, 1) + rh(0, 1, 10, 8, 4),
         "rx_drop_length"),
        ("P12 first", bh(0x01, flags=0x8) + dh(0, 2) + b"ab",
         "rx_drop_flags"),
        ("P12 last", bh(0x01, flags=0x4) + dh(0, 3) + b"abc",
         "rx_drop_flags"),
        # two defects: the earlier check names the counter
        ("P6 before P8", bh(0x12, dqpn=0, psn=1), "rx_drop_reserved"),
    ]
    for name, pkt, *rest in bad:
        exp, drop = rest if len(rest) == 2 else ({}, rest[0])
        c.append((name, pkt, exp, drop))
    return c


FIELDS = sorted({k.rstrip("~") for _, _, exp, _ in cases() for k in exp} |
                {"metaroce.drop_reason", "_ws.expert.group",
                 "_ws.malformed", "_ws.expert.message",
                 "_ws.expert.severity"})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keep", help="leave the pcap and decode in DIR")
    ap.add_argument("--tshark", default="tshark")
    args = ap.parse_args()
    cs = cases()
    tmp = args.keep or tempfile.mkdtemp(prefix="metaroce-selftest.")
    pcap = os.path.join(tmp, "metaroce-selftest.pcap")
    write_pcap(pcap, [frame(pkt, sport=49152 + n)
                      for n, (_, pkt, _, _) in enumerate(cs)])
    cmd = [args.tshark, "-n", "-X", "lua_script:" + LUA, "-r", pcap,
           "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a",
           "-E", "aggregator=,"]
    for k in FIELDS:
        cmd += ["-e", k]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, check=False)
    # tshark warns when run as root; anything else on stderr is a failure
    errs = [ln for ln in out.stderr.splitlines()
            if ln.strip() and not ln.startswith("Running as user")]
    if out.returncode or errs:
        print("selftest: tshark failed:\n" + "\n".join(errs), file=sys.stderr)
        return 1
    rows = out.stdout.rstrip("\n").split("\n")
    if len(rows) != len(cs):
        print("selftest: %d packets decoded, %d written" %
              (len(rows), len(cs)), file=sys.stderr)
        return 1
    if args.keep:
        full = subprocess.run([args.tshark, "-n", "-X", "lua_script:" + LUA,
                               "-r", pcap, "-V"], stdout=subprocess.PIPE,
                              universal_newlines=True, check=False)
        with open(os.path.join(tmp, "metaroce-selftest.txt"), "w") as f:
            f.write(full.stdout)
    bad = 0
    for (name, _, exp, drop), row in zip(cs, rows):
        got = dict(zip(FIELDS, row.split("\t")))
        want = dict(exp)
        want["metaroce.drop_reason"] = drop or ""
        # expert info of the group "malformed" adds _ws.malformed
        if drop is None:
            want["_ws.malformed"] = ""
        # a Lua error is an expert item "Lua Error: ..." (group undecoded)
        if "Lua Error" in got["_ws.expert.message"]:
            print("FAIL %s: %s" % (name, got["_ws.expert.message"]))
            bad += 1
        if drop is None and str(0x00800000) in \
                got["_ws.expert.severity"].split(","):
            print("FAIL %s: expert info of severity error" % name)
            bad += 1
        groups = got["_ws.expert.group"].split(",")
        mal = str(0x07000000)  # PI_MALFORMED
        if drop is None and mal in groups:
            print("FAIL %s: malformed expert info on a valid packet" % name)
            bad += 1
        if drop is not None and mal not in groups:
            print("FAIL %s: no malformed expert info" % name)
            bad += 1
        for k, v in want.items():
            if k.endswith("~"):  # a substring of the field's value
                if v not in got.get(k[:-1], ""):
                    print("FAIL %s: %s is '%s', lacks '%s'" %
                          (name, k[:-1], got.get(k[:-1], ""), v))
                    bad += 1
            elif got.get(k, "") != v:
                print("FAIL %s: %s is '%s', expected '%s'" %
                      (name, k, got.get(k, ""), v))
                bad += 1
    # the preference moves the dissector off port 4792
    moved = subprocess.run([args.tshark, "-n", "-X", "lua_script:" + LUA,
                            "-o", "metaroce.udp_port:9999", "-r", pcap,
                            "-Y", "metaroce"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL,
                           universal_newlines=True, check=False)
    if moved.returncode or moved.stdout.strip():
        print("FAIL metaroce.udp_port:9999 still decodes port 4792")
        bad += 1
    print("selftest: %d packets, %d field checks, %d failed" %
          (len(cs), sum(len(e) + 3 for _, _, e, _ in cs) + 1, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
