# SPDX-License-Identifier: GPL-2.0-only
"""The netlink parsers, fed messages built here as the kernel lays them out
(struct nlmsghdr, struct tcmsg, struct nlattr, include/uapi/linux/*.h)."""

import errno
import struct
import unittest

from mbench import netlink as nl


def attr(typ, payload):
    """One struct nlattr with PAYLOAD, padded to 4 bytes."""
    a = struct.pack("=HH", 4 + len(payload), typ) + payload
    return a + b"\0" * (nl.align4(len(a)) - len(a))


def u32(typ, v):
    return attr(typ, struct.pack("=I", v))


def msg(typ, seq, payload):
    m = struct.pack(nl.NLMSG_HDR, nl.NLMSG_HDRLEN + len(payload), typ, 2, seq, 0) + payload
    return m + b"\0" * (nl.align4(len(m)) - len(m))


def qdisc_payload(ifindex, handle, parent, kind, basic=None, queue=None, app=None):
    body = struct.pack(nl.TCMSG, 0, 0, 0, ifindex, handle, parent, 0)
    body += attr(nl.TCA_KIND, kind.encode() + b"\0")
    st = b""
    if basic:
        st += attr(nl.TCA_STATS_BASIC, struct.pack("=QI", *basic) + b"\0" * 4)
    if queue:
        st += attr(nl.TCA_STATS_QUEUE, struct.pack("=IIIII", *queue))
    if app is not None:
        st += attr(nl.TCA_STATS_APP, app)
    return body + attr(nl.TCA_STATS2 | 0x8000, st)    # NLA_F_NESTED set


class Messages(unittest.TestCase):
    def test_split_and_done(self):
        data = (msg(nl.RTM_NEWQDISC, 7, b"abcd") + msg(nl.RTM_NEWQDISC, 6, b"old!")
                + msg(nl.RTM_NEWQDISC, 7, b"efgh"))
        self.assertEqual(nl.parse_msgs(data, 7),
                         ([(nl.RTM_NEWQDISC, b"abcd"), (nl.RTM_NEWQDISC, b"efgh")], False))
        done = data + msg(nl.NLMSG_DONE, 7, struct.pack("=i", 0))
        self.assertEqual(nl.parse_msgs(done, 7)[1], True)
        self.assertEqual(nl.parse_msgs(b"", 7), ([], False))

    def test_error(self):
        data = msg(nl.NLMSG_ERROR, 3, struct.pack("=i", -errno.EOPNOTSUPP) + b"\0" * 16)
        with self.assertRaises(OSError) as cm:
            nl.parse_msgs(data, 3)
        self.assertEqual(cm.exception.errno, errno.EOPNOTSUPP)

    def test_truncated_header_ends(self):
        bad = struct.pack(nl.NLMSG_HDR, 8, nl.RTM_NEWQDISC, 0, 1, 0)
        self.assertEqual(nl.parse_msgs(bad, 1), ([], True))

    def test_attrs(self):
        buf = attr(1, b"x") + attr(2 | 0x8000, b"nested") + attr(3, b"")
        self.assertEqual(list(nl.nl_attrs(buf)), [(1, b"x"), (2, b"nested"), (3, b"")])
        self.assertEqual(list(nl.nl_attrs(b"\0\0\0\0")), [])     # nla_len 0: stop


class Qdisc(unittest.TestCase):
    def test_codel_under_tbf(self):
        xs = struct.pack(nl.QDISC_XSTATS["codel"][0], 1514, 3, 2, 1200, -5, 17, 0, 1, 42)
        p = qdisc_payload(4, 0x30000, 0x20001, "codel", basic=(123456789, 4321),
                          queue=(9, 13000, 25, 1, 77), app=xs)
        q = nl.parse_qdisc(p, 4)
        self.assertEqual(q, {"handle": "3:", "parent": "2:1", "kind": "codel",
                             "bytes": 123456789, "packets": 4321, "qlen": 9, "backlog": 13000,
                             "drops": 25, "requeues": 1, "overlimits": 77, "maxpacket": 1514,
                             "count": 3, "lastcount": 2, "ldelay": 1200, "drop_next": -5,
                             "drop_overlimit": 17, "ecn_mark": 0, "dropping": 1, "ce_mark": 42})

    def test_root_without_xstats(self):
        q = nl.parse_qdisc(qdisc_payload(4, 0x10000, nl.TC_H_ROOT, "prio",
                                         queue=(0, 0, 0, 0, 0)), 4)
        self.assertEqual(q["parent"], "root")
        self.assertEqual(q["handle"], "1:")
        self.assertNotIn("bytes", q)

    def test_red_and_short_xstats(self):
        xs = struct.pack("=IIII", 5, 6, 0, 99)
        q = nl.parse_qdisc(qdisc_payload(4, 0x30000, 0x20001, "red", app=xs), 4)
        self.assertEqual((q["early"], q["pdrop"], q["marked"]), (5, 6, 99))
        q = nl.parse_qdisc(qdisc_payload(4, 0x30000, 0x20001, "red", app=xs[:8]), 4)
        self.assertNotIn("early", q)

    def test_other_interface(self):
        self.assertIsNone(nl.parse_qdisc(qdisc_payload(5, 0x10000, nl.TC_H_ROOT, "noqueue"), 4))


class Rdma(unittest.TestCase):
    def test_device(self):
        p = u32(nl.NLA_DEV_INDEX, 3) + attr(nl.NLA_DEV_NAME, b"mroce0\0")
        self.assertEqual(nl.parse_rdma_dev(p), ("mroce0", 3))
        self.assertIsNone(nl.parse_rdma_dev(u32(nl.NLA_DEV_INDEX, 3)))

    def test_qps(self):
        def entry(lqpn, rqpn=None, rq=None, sq=None, typ=nl.IB_QPT_RC, state=3):
            e = u32(nl.NLA_LQPN, lqpn)
            if rqpn is not None:
                e += u32(nl.NLA_RQPN, rqpn)
            if rq is not None:
                e += u32(nl.NLA_RQ_PSN, rq)
            if sq is not None:
                e += u32(nl.NLA_SQ_PSN, sq)
            e += attr(nl.NLA_RES_TYPE, bytes([typ])) + attr(nl.NLA_RES_STATE, bytes([state]))
            return attr(nl.NLA_RES_QP_ENTRY | 0x8000, e)
        p = (u32(nl.NLA_DEV_INDEX, 3)
             + attr(nl.NLA_RES_QP | 0x8000,
                    entry(17, 18, 0x123456, 0xfffffe)
                    + entry(1, typ=4, state=0)                      # GSI: no peer
                    + attr(nl.NLA_RES_QP_ENTRY, u32(nl.NLA_RQPN, 5))))   # no lqpn: skipped
        self.assertEqual(nl.parse_qps(p), {
            17: {"rqpn": 18, "rq_psn": 0x123456, "sq_psn": 0xfffffe, "type": 2, "state": 3},
            1: {"rqpn": None, "rq_psn": None, "sq_psn": None, "type": 4, "state": 0}})


if __name__ == "__main__":
    unittest.main()
