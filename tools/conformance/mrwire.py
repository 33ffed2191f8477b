#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""mrwire.py - a MetaRoCE v1 encoder and decoder for the conformance tester.

Written from Documentation/metaroce-spec.rst ("Packet format",
"Packet-level validation") alone; it shares no code with the driver.
build() makes any packet from its fields; parse() decodes one and applies
the packet-level checks P1..P12 in the spec's order, returning the name of
the counter the first failing check names (or None).  --selftest checks
both against the test vectors of the spec's Appendix A, and parse()
against the KH's seg_max rules (P10) and the payload bounds (P11).
"""
import struct
import sys

VERSION = 1
UDP_PORT = 4792

# flags
AR, SE, FI, LA, RT, PB = 1, 2, 4, 8, 16, 32
FLAG_NAMES = {AR: "AR", SE: "SE", FI: "FI", LA: "LA", RT: "RT", PB: "PB"}
# PB_ACK ("Piggybacked acknowledgment"): a request carries PBH and KH
PB_LEN = 8 + 56

# opcodes: name, headers after BH, header bytes, payload?, flags allowed,
# BH fields unused
OPS = {
    0x01: ("SEND", ("DH",), 48, True, AR | SE | FI | LA | RT | PB, ()),
    0x02: ("SEND_WITH_IMM", ("DH",), 48, True, AR | SE | FI | LA | RT | PB,
           ()),
    0x03: ("RDMA_WRITE", ("MH", "DH"), 64, True, AR | FI | LA | RT | PB, ()),
    0x04: ("RDMA_WRITE_WITH_IMM", ("MH", "DH"), 64, True,
           AR | SE | FI | LA | RT | PB, ()),
    0x05: ("RDMA_READ_REQ", ("MH", "RH"), 72, False, RT | PB, ()),
    0x06: ("RDMA_READ_RESP", ("MH", "DH"), 64, True, AR | FI | LA | RT, ()),
    0x07: ("ATOMIC_CMP_SWP", ("MH", "ATH"), 64, False, RT | PB, ()),
    0x08: ("ATOMIC_FETCH_ADD", ("MH", "ATH"), 64, False, RT | PB, ()),
    0x09: ("ATOMIC_RESP", ("ARH",), 40, False, RT, ()),
    0x0a: ("SEND_WITH_INV", ("DH",), 48, True, AR | SE | FI | LA | RT | PB,
           ()),
    0x10: ("ACK", ("KH",), 88, False, 0, ("pseq", "msn")),
    0x11: ("NAK", ("KH", "NKH"), 96, False, 0, ("pseq", "msn")),
    0x12: ("PROBE", (), 32, False, PB, ("psn", "msn")),
    0x20: ("UD_SEND", ("DGH",), 40, True, SE, ("pseq", "msn")),
    0x21: ("UD_SEND_WITH_IMM", ("DGH",), 40, True, SE, ("pseq", "msn")),
}
OP = {v[0]: k for k, v in OPS.items()}
CONNECTED = set(range(0x01, 0x0b)) | {0x10, 0x11, 0x12}
HLEN = {"BH": 32, "DH": 16, "MH": 16, "RH": 24, "ATH": 16, "ARH": 8,
        "KH": 56, "NKH": 8, "DGH": 8}

NAK_PSN_SEQ_ERR, NAK_RNR, NAK_REMOTE_ACCESS, NAK_REMOTE_OP, \
    NAK_INVALID_REQUEST = 1, 2, 3, 4, 5
ECHO_CE, ECHO_DUP, ECHO_PB, ECHO_SEG = 1, 2, 4, 8
# requests: PB_ACK adds PBH and KH (on a PROBE it is a question)
REQUESTS = {0x01, 0x02, 0x03, 0x04, 0x05, 0x07, 0x08, 0x0a}
# P11: the largest payload of any packet (and of a large segment), and
# of a datagram (one packet of at most the largest path MTU)
MAX_PAYLOAD = 9216
MAX_PMTU = 4096
# KH.seg_max: with ECHO_SEG, the largest segment taken, in these units
SEG_UNIT = 32


def fwd(a, b):
    """Increments from PSN a to PSN b (mod 2^24)."""
    return (b - a) & 0xffffff


KH_FIELDS = {"echo_ts": 0, "echo_pseq": 0, "echo_path": 0, "echo_psn": 0,
             "rx_count": 0, "ce_count": 0, "rate": 0, "ack_delay": 0,
             "echo_flags": 0, "seg_max": 0, "sack": 0}


def pb_allowed(opcode):
    """Does PB_ACK add PBH and KH to a packet of this opcode (a request)?"""
    return opcode in REQUESTS


def hdr_len(opcode, flags):
    """Header bytes of a packet: the opcode's, plus PBH and KH with
    PB_ACK where the opcode allows it."""
    n = OPS[opcode][2]
    return n + PB_LEN if flags & PB and pb_allowed(opcode) else n


def defaults(opcode):
    """Every field of a packet of this opcode, zero."""
    f = {"version": VERSION, "opcode": opcode, "flags": 0,
         "hdr_words": OPS[opcode][2] // 8 if opcode in OPS else 4,
         "dqpn": 0, "path": 0, "sqpn": 0, "psn": 0, "pseq": 0, "msn": 0,
         "ts": 0, "payload": b""}
    if pb_allowed(opcode):
        f.update(KH_FIELDS, ack_psn=0)
    for h in OPS.get(opcode, (None, ()))[1]:
        f.update({
            "DH": {"offset": 0, "length": 0, "rq_seq": 0, "imm": 0},
            "MH": {"addr": 0, "rkey": 0},
            "RH": {"sink_addr": 0, "sink_key": 0, "read_len": 0,
                   "req_offset": 0, "req_len": 0},
            "ATH": {"swap_add": 0, "compare": 0},
            "ARH": {"orig": 0},
            "KH": dict(KH_FIELDS),
            "NKH": {"code": 0, "rnr_timer": 0, "nak_psn": 0},
            "DGH": {"qkey": 0, "imm": 0},
        }[h])
    return f


def kh_bytes(f):
    s = f["sack"]
    return struct.pack(">IIIHHIHBB", f["echo_ts"], f["echo_pseq"],
                       (f["echo_path"] << 24) | f["echo_psn"],
                       f["rx_count"], f["ce_count"], f["rate"],
                       f["ack_delay"], f["echo_flags"], f["seg_max"]) + \
        b"".join(struct.pack(">Q", (s >> (64 * i)) & 0xffffffffffffffff)
                 for i in range(4))


def build(**kw):
    """Encode a packet.  kw: opcode (number or name) and any field.  A
    request with PB_ACK in flags gets PBH (ack_psn) and KH after its
    headers, and hdr_words counts them unless given."""
    op = kw.pop("opcode")
    if isinstance(op, str):
        op = OP[op]
    f = defaults(op)
    f.update(kw)
    if "hdr_words" not in kw and op in OPS:
        f["hdr_words"] = hdr_len(op, f["flags"]) // 8
    out = struct.pack(">BBHIIIIIII", f["version"], op, f["flags"],
                      (f["hdr_words"] << 24) | (f["dqpn"] & 0xffffff),
                      (f["path"] << 24) | (f["sqpn"] & 0xffffff),
                      f["psn"] & 0xffffff, f["pseq"] & 0xffffffff,
                      f["msn"] & 0xffffff, f["ts"] & 0xffffffff, 0)
    for h in OPS.get(op, (None, ()))[1]:
        if h == "DH":
            out += struct.pack(">IIII", f["offset"], f["length"],
                               f["rq_seq"] & 0xffffffff, f["imm"])
        elif h == "MH":
            out += struct.pack(">QII", f["addr"], f["rkey"], 0)
        elif h == "RH":
            out += struct.pack(">QIIII", f["sink_addr"], f["sink_key"],
                               f["read_len"], f["req_offset"], f["req_len"])
        elif h == "ATH":
            out += struct.pack(">QQ", f["swap_add"], f["compare"])
        elif h == "ARH":
            out += struct.pack(">Q", f["orig"])
        elif h == "KH":
            out += kh_bytes(f)
        elif h == "NKH":
            out += struct.pack(">BBHI", f["code"], f["rnr_timer"], 0,
                               f["nak_psn"] & 0xffffff)
        elif h == "DGH":
            out += struct.pack(">II", f["qkey"], f["imm"])
    if f["flags"] & PB and pb_allowed(op):
        out += struct.pack(">II", f["ack_psn"] & 0xffffff, 0) + kh_bytes(f)
    return out + bytes(f["payload"])


def kh_parse(b, f):
    """Decode a KH into f; return its reserved fields."""
    (f["echo_ts"], f["echo_pseq"], e, f["rx_count"], f["ce_count"],
     f["rate"], f["ack_delay"], f["echo_flags"], f["seg_max"]) = \
        struct.unpack(">IIIHHIHBB", b[:24])
    f["echo_path"], f["echo_psn"] = e >> 24, e & 0xffffff
    ws = struct.unpack(">QQQQ", b[24:56])
    f["sack"] = sum(w << (64 * i) for i, w in enumerate(ws))
    return [f["echo_flags"] >> 4]


def parse(pkt):
    """Decode; return (reason, fields).  reason: the counter of the first
    failing check P1..P12, None for a valid packet."""
    n = len(pkt)
    if n < 32:
        return "rx_drop_short", {}
    (ver, op, flags, w1, w2, w3, pseq, w5, ts, r7) = struct.unpack(
        ">BBHIIIIIII", pkt[:32])
    f = {"version": ver, "opcode": op, "flags": flags, "hdr_words": w1 >> 24,
         "dqpn": w1 & 0xffffff, "path": w2 >> 24, "sqpn": w2 & 0xffffff,
         "psn": w3 & 0xffffff, "pseq": pseq, "msn": w5 & 0xffffff, "ts": ts}
    if ver != VERSION:
        return "rx_drop_version", f
    if op not in OPS:
        return "rx_drop_opcode", f
    name, hdrs, hlen, has_payload, allowed, unused = OPS[op]
    f["name"] = name
    ophlen = hlen
    hlen = hdr_len(op, flags)
    if f["hdr_words"] * 8 != hlen:
        return "rx_drop_hdr_len", f
    if n < hlen:
        return "rx_drop_short", f
    payload = pkt[hlen:]
    f["payload"] = payload
    res = [w3 >> 24, w5 >> 24, r7, flags >> 6]
    res += [f[u] for u in unused]
    off = 32
    for h in hdrs:
        b = pkt[off:off + HLEN[h]]
        if h == "DH":
            f["offset"], f["length"], f["rq_seq"], f["imm"] = \
                struct.unpack(">IIII", b)
            if name in ("RDMA_WRITE", "RDMA_READ_RESP"):
                res.append(f["rq_seq"])
            if name in ("SEND", "RDMA_WRITE", "RDMA_READ_RESP"):
                res.append(f["imm"])
        elif h == "MH":
            f["addr"], f["rkey"], r = struct.unpack(">QII", b)
            res.append(r)
        elif h == "RH":
            (f["sink_addr"], f["sink_key"], f["read_len"], f["req_offset"],
             f["req_len"]) = struct.unpack(">QIIII", b)
        elif h == "ATH":
            f["swap_add"], f["compare"] = struct.unpack(">QQ", b)
            if name == "ATOMIC_FETCH_ADD":
                res.append(f["compare"])
        elif h == "ARH":
            (f["orig"],) = struct.unpack(">Q", b)
        elif h == "KH":
            res += kh_parse(b, f)
        elif h == "NKH":
            f["code"], f["rnr_timer"], r, w = struct.unpack(">BBHI", b)
            f["nak_psn"] = w & 0xffffff
            res += [r, w >> 24]
        elif h == "DGH":
            f["qkey"], f["imm"] = struct.unpack(">II", b)
            if name == "UD_SEND":
                res.append(f["imm"])
        off += HLEN[h]
    pb = hlen != ophlen
    if pb:
        w, r = struct.unpack(">II", pkt[ophlen:ophlen + 8])
        f["ack_psn"] = w & 0xffffff
        res += [w >> 24, r] + kh_parse(pkt[ophlen + 8:hlen], f)
    if any(res):
        return "rx_drop_reserved", f
    if flags & ~allowed:
        return "rx_drop_flags", f
    if f["dqpn"] == 0 or f["sqpn"] == 0 or \
            (op in CONNECTED and 1 in (f["dqpn"], f["sqpn"])):
        return "rx_drop_qpn", f
    if f["path"] > 63 or ("echo_path" in f and f["echo_path"] > 63):
        return "rx_drop_path", f
    if "KH" in hdrs or pb:
        echo = (f["echo_ts"], f["echo_pseq"], f["echo_path"], f["echo_psn"],
                f["ack_delay"], f["echo_flags"], f["seg_max"])
        seg = bool(f["echo_flags"] & ECHO_SEG)
        if f["ce_count"] > f["rx_count"] or f["sack"] & 1 or \
                (f["rx_count"] == 0 and any(echo)) or \
                seg != (f["seg_max"] != 0):
            return "rx_drop_field", f
    if "NKH" in hdrs:
        d = fwd(f["psn"], f["nak_psn"])
        c = f["code"]
        if c not in range(1, 6) or f["rnr_timer"] > 31 or \
                (f["rnr_timer"] and c != NAK_RNR) or \
                (c == NAK_PSN_SEQ_ERR and not 256 <= d < 1 << 23) or \
                (c == NAK_RNR and d >= 256) or (c > 2 and d != 0):
            return "rx_drop_field", f
    plen = len(payload)
    if (plen and not has_payload) or plen > MAX_PAYLOAD or \
            ("DGH" in hdrs and plen > MAX_PMTU):
        return "rx_drop_length", f
    if "DH" in hdrs:
        if f["length"] > 1 << 31 or f["offset"] + plen > f["length"] or \
                (plen == 0 and f["length"] > 0) or \
                ("addr" in f and f["addr"] + f["length"] > 1 << 64):
            return "rx_drop_length", f
    if "RH" in hdrs:
        if f["read_len"] > 1 << 31 or \
                f["req_offset"] + f["req_len"] > f["read_len"] or \
                (f["req_len"] == 0 and f["read_len"] > 0) or \
                f["addr"] + f["read_len"] > 1 << 64 or \
                f["sink_addr"] + f["read_len"] > 1 << 64:
            return "rx_drop_length", f
    if "DH" in hdrs:
        first = f["offset"] == 0
        last = f["offset"] + plen == f["length"]
        if bool(flags & FI) != first or bool(flags & LA) != last:
            return "rx_drop_flags", f
    return None, f


def reencode(f):
    """Build the fields parse() returned (MR-18: canonical encoding)."""
    g = dict(f)
    g.pop("name", None)
    return build(**g)


# ------------------------------------------------------------ self-test

VECTORS = {
    "write_imm": (
        "01 04 00 0f 08 00 01 23 05 00 04 56 00 ab cd ef"
        "01 02 03 04 00 00 00 07 11 22 33 44 00 00 00 00"
        "00 00 7f 00 12 34 50 00 de ad be ef 00 00 00 00"
        "00 00 00 00 00 00 00 10 00 00 00 09 00 00 10 00"
        "a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 aa ab ac ad ae af",
        dict(opcode="RDMA_WRITE_WITH_IMM", flags=AR | SE | FI | LA,
             dqpn=0x123, path=5, sqpn=0x456, psn=0xabcdef, pseq=0x01020304,
             msn=7, ts=0x11223344, addr=0x00007f0012345000,
             rkey=0xdeadbeef, offset=0, length=16, rq_seq=9, imm=0x1000,
             payload=bytes(range(0xa0, 0xb0)))),
    "ack": (
        "01 10 00 00 0b 00 04 56 03 00 01 23 00 ff ff fe"
        "00 00 00 00 00 00 00 00 0a 0b 0c 0d 00 00 00 00"
        "11 22 33 44 01 02 03 04 05 00 00 01 00 08 00 03"
        "00 01 86 a0 00 19 01 00 00 00 00 00 00 00 00 0a"
        "00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 00"
        "80 00 00 00 00 00 00 00",
        dict(opcode="ACK", dqpn=0x456, path=3, sqpn=0x123, psn=0xfffffe,
             ts=0x0a0b0c0d, echo_ts=0x11223344, echo_pseq=0x01020304,
             echo_path=5, echo_psn=1, rx_count=8, ce_count=3, rate=100000,
             ack_delay=25, echo_flags=ECHO_CE,
             sack=(1 << 1) | (1 << 3) | (1 << 64) | (1 << 255))),
    "nak": (
        "01 11 00 00 0c 00 04 56 00 00 01 23 00 ff ff ff"
        "00 00 00 00 00 00 00 00 00 00 00 2a 00 00 00 00"
        "00 00 00 01 00 00 00 09 07 00 00 02 00 01 00 00"
        "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
        "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
        "00 00 00 00 00 00 00 00 02 0e 00 00 00 00 00 02",
        dict(opcode="NAK", dqpn=0x456, path=0, sqpn=0x123, psn=0xffffff,
             ts=42, echo_ts=1, echo_pseq=9, echo_path=7, echo_psn=2,
             rx_count=1, code=NAK_RNR, rnr_timer=14, nak_psn=2)),
}


def selftest_seg():
    """KH byte 23 (seg_max) and the P11 bounds: the checks this revision
    changed, on the ACK vector and on packets built here."""
    bad = 0
    ack = bytearray(bytes.fromhex(VECTORS["ack"][0].replace(" ", "")))
    kh = 32                     # the ACK's KH; its byte 23 is seg_max
    want = []
    # seg_max without ECHO_SEG, any bit of it: P10, not reserved (P6)
    for bit in range(8):
        p = bytearray(ack)
        p[kh + 23] ^= 1 << bit
        want.append(("byte 23 bit %d" % bit, p, "rx_drop_field"))
    # echo_flags bits 7..4 stay reserved, and P6 comes before P10
    for bit in range(4, 8):
        p = bytearray(ack)
        p[kh + 22] |= 1 << bit
        want.append(("echo_flags bit %d" % bit, p, "rx_drop_reserved"))
        p = bytearray(p)
        p[kh + 23] = 43
        want.append(("echo_flags bit %d, seg_max 43" % bit, p,
                     "rx_drop_reserved"))
    kw = dict(opcode="ACK", dqpn=0x456, sqpn=0x123, psn=7, rx_count=1)
    ok = dict(kw, echo_flags=ECHO_PB | ECHO_SEG, seg_max=1388 // SEG_UNIT)
    top = dict(kw, echo_flags=ECHO_PB | ECHO_SEG, seg_max=255)
    want += [
        ("ECHO_SEG, seg_max 43", build(**ok), None),
        ("ECHO_SEG, seg_max 255", build(**top), None),
        ("ECHO_SEG, seg_max 0", build(**dict(ok, seg_max=0)),
         "rx_drop_field"),
        ("ECHO_PB, seg_max 43", build(**dict(ok, echo_flags=ECHO_PB)),
         "rx_drop_field"),
        ("rx_count 0, seg_max 43",
         build(**dict(kw, rx_count=0, seg_max=43)), "rx_drop_field"),
        ("PB_ACK SEND, its KH: ECHO_SEG, seg_max 0",
         build(opcode="SEND", flags=FI | LA | PB, dqpn=0x456, sqpn=0x123,
               length=1, payload=b"x", rx_count=1, echo_flags=ECHO_SEG),
         "rx_drop_field"),
    ]
    # P11: 9216 bytes of payload pass, 9217 do not; a datagram's 4096
    for n, reason in ((9216, None), (9217, "rx_drop_length")):
        want.append(("SEND, %d bytes" % n,
                     build(opcode="SEND", flags=FI | LA, dqpn=0x456,
                           sqpn=0x123, length=n, payload=bytes(n)), reason))
    for n, reason in ((4096, None), (4097, "rx_drop_length")):
        want.append(("UD_SEND, %d bytes" % n,
                     build(opcode="UD_SEND", dqpn=0x456, sqpn=0x123,
                           qkey=7, payload=bytes(n)), reason))
    for name, pkt, reason in want:
        got, f = parse(bytes(pkt))
        if got != reason:
            print("mrwire: %s: %s, expected %s" % (name, got, reason))
            bad += 1
        elif reason is None and reencode(f) != bytes(pkt):
            print("mrwire: %s: re-encoding differs" % name)
            bad += 1
    if parse(build(**ok))[1].get("seg_max") != 43:
        print("mrwire: seg_max not decoded")
        bad += 1
    return bad


def selftest():
    bad = 0
    for name, (hexs, fields) in VECTORS.items():
        want = bytes.fromhex(hexs.replace(" ", ""))
        got = build(**dict(fields))
        if got != want:
            print("mrwire: %s: build differs from the spec's vector" % name)
            bad += 1
        reason, f = parse(want)
        if reason:
            print("mrwire: %s: vector rejected as %s" % (name, reason))
            bad += 1
            continue
        for k, v in fields.items():
            if k == "opcode":
                v = OP[v]
            if f.get(k) != v:
                print("mrwire: %s: %s parsed as %r, spec says %r" %
                      (name, k, f.get(k), v))
                bad += 1
        if reencode(f) != want:
            print("mrwire: %s: re-encoding differs" % name)
            bad += 1
        # every truncation is rx_drop_short, every flipped reserved bit
        # of the BH rx_drop_reserved (MR-15, MR-16)
        for cut in range(OPS[f["opcode"]][2]):
            if parse(want[:cut])[0] != "rx_drop_short":
                print("mrwire: %s cut to %d not short" % (name, cut))
                bad += 1
        for byte in (12, 20, 28, 29, 30, 31):
            for bit in range(8):
                p = bytearray(want)
                p[byte] ^= 1 << bit
                if parse(bytes(p))[0] != "rx_drop_reserved":
                    print("mrwire: %s byte %d bit %d not reserved" %
                          (name, byte, bit))
                    bad += 1
    bad += selftest_seg()
    print("mrwire: self-test %s (%d vectors)" %
          ("FAILED" if bad else "ok", len(VECTORS)))
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--selftest"]:
        sys.exit(selftest())
    print("usage: mrwire.py --selftest", file=sys.stderr)
    sys.exit(2)
