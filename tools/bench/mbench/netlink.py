# SPDX-License-Identifier: GPL-2.0-only
"""Netlink dumps read in-process (an exec of tc or rdma costs ~0.3 s of a
guest's only vCPU under TCG; a dump a few ms):

* rtnetlink RTM_GETQDISC: the qdiscs of one interface with their stats, as
  `tc -s qdisc show dev IF` has them (the bottleneck's backlog, drops and
  marks);
* RDMA netlink RDMA_NLDEV_CMD_RES_QP_GET: the QPs of a device with their
  PSNs, what `rdma resource show qp` prints (the receivers' progress).

The parsers are plain functions of bytes (tests/test_netlink.py feeds them
hand-built messages); the classes only add the sockets."""

import os
import socket
import struct

NLMSG_HDR = "=IHHII"            # len, type, flags, seq, pid
NLMSG_HDRLEN = 16
NLM_F_REQUEST_DUMP = 0x301      # NLM_F_REQUEST | NLM_F_ROOT | NLM_F_MATCH
NLMSG_ERROR, NLMSG_DONE = 2, 3

RTM_NEWQDISC, RTM_GETQDISC = 36, 38
TCMSG = "=BBHiIII"              # family, pad, pad, ifindex, handle, parent, info
TCMSG_LEN = struct.calcsize(TCMSG)
TCA_KIND, TCA_STATS2 = 1, 7
TCA_STATS_BASIC, TCA_STATS_QUEUE, TCA_STATS_APP = 1, 3, 4
TC_H_ROOT = 0xffffffff
QDISC_XSTATS = {        # struct tc_<kind>_xstats (uapi/linux/pkt_sched.h)
    "codel": ("=IIIIiIIII", ("maxpacket", "count", "lastcount", "ldelay", "drop_next",
                             "drop_overlimit", "ecn_mark", "dropping", "ce_mark")),
    "fq_codel": ("=IIIIIIIIII", ("type", "maxpacket", "drop_overlimit", "ecn_mark",
                                 "new_flow_count", "new_flows_len", "old_flows_len",
                                 "ce_mark", "memory_usage", "drop_overmemory")),
    "red": ("=IIII", ("early", "pdrop", "other", "marked")),
}

# NETLINK_RDMA (uapi/rdma/rdma_netlink.h)
NETLINK_RDMA = 20
RDMA_NLDEV_GET = (5 << 10) + 1              # RDMA_NL_GET_TYPE(NLDEV, CMD_GET)
RDMA_NLDEV_RES_QP_GET = (5 << 10) + 10      # ... CMD_RES_QP_GET
NLA_DEV_INDEX, NLA_DEV_NAME = 1, 2
NLA_RES_QP, NLA_RES_QP_ENTRY, NLA_LQPN, NLA_RQPN, NLA_RQ_PSN, NLA_SQ_PSN = 19, 20, 21, 22, 23, 24
NLA_RES_TYPE, NLA_RES_STATE = 26, 27
IB_QPT_RC = 2


def align4(n):
    return (n + 3) & ~3


def nl_attrs(buf, off=0, end=None):
    """(type, value) of the netlink attributes in BUF[OFF:END] (the
    NLA_F_NESTED / NLA_F_NET_BYTEORDER bits cleared)."""
    end = len(buf) if end is None else end
    while off + 4 <= end:
        ln, typ = struct.unpack_from("=HH", buf, off)
        if ln < 4:
            break
        yield typ & 0x3fff, buf[off + 4:off + ln]
        off += align4(ln)


def parse_msgs(data, seq):
    """One recv() of a dump's answer -> ([(type, payload)], done): the
    messages of request SEQ (others are skipped); done once NLMSG_DONE or a
    truncated header ends the dump.  Raises OSError on NLMSG_ERROR."""
    msgs = []
    off = 0
    while off + NLMSG_HDRLEN <= len(data):
        ln, typ, _, mseq, _ = struct.unpack_from(NLMSG_HDR, data, off)
        if ln < NLMSG_HDRLEN:
            return msgs, True
        if mseq == seq:
            if typ == NLMSG_DONE:
                return msgs, True
            if typ == NLMSG_ERROR:
                err = struct.unpack_from("=i", data, off + NLMSG_HDRLEN)[0]
                raise OSError(-err, f"netlink dump: {os.strerror(-err)}")
            msgs.append((typ, data[off + NLMSG_HDRLEN:off + ln]))
        off += align4(ln)
    return msgs, False


def parse_rdma_dev(payload):
    """An RDMA_NLDEV_GET answer -> (device name, index), or None."""
    a = dict(nl_attrs(payload))
    if NLA_DEV_INDEX not in a or NLA_DEV_NAME not in a:
        return None
    return (a[NLA_DEV_NAME].split(b"\0")[0].decode(),
            struct.unpack_from("=I", a[NLA_DEV_INDEX])[0])


def parse_qps(payload):
    """An RDMA_NLDEV_CMD_RES_QP_GET answer -> {lqpn: {"rqpn", "rq_psn",
    "sq_psn", "type", "state"}} (None where the kernel left it out)."""
    out = {}
    for t, v in nl_attrs(payload):
        if t != NLA_RES_QP:
            continue
        for t2, e in nl_attrs(v):
            if t2 != NLA_RES_QP_ENTRY:
                continue
            a = dict(nl_attrs(e))
            if NLA_LQPN not in a:
                continue
            u32 = {k: struct.unpack_from("=I", a[k])[0]
                   for k in (NLA_RQPN, NLA_RQ_PSN, NLA_SQ_PSN) if k in a}
            out[struct.unpack_from("=I", a[NLA_LQPN])[0]] = {
                "rqpn": u32.get(NLA_RQPN), "rq_psn": u32.get(NLA_RQ_PSN),
                "sq_psn": u32.get(NLA_SQ_PSN),
                "type": a[NLA_RES_TYPE][0] if NLA_RES_TYPE in a else None,
                "state": a[NLA_RES_STATE][0] if NLA_RES_STATE in a else None}
    return out


def parse_qdisc(payload, ifindex):
    """An RTM_NEWQDISC message's payload -> {"handle": "2:", "parent":
    "1:2" or "root", "kind", bytes, packets, qlen, backlog, drops,
    requeues, overlimits, and the kind's xstats}; None for another
    interface's qdisc (6.1 dumps every device)."""
    _, _, _, ifi, handle, parent, _ = struct.unpack_from(TCMSG, payload)
    if ifi != ifindex:
        return None
    q = {"handle": f"{handle >> 16:x}:",
         "parent": "root" if parent == TC_H_ROOT else f"{parent >> 16:x}:{parent & 0xffff:x}"}
    app = None
    for typ, val in nl_attrs(payload, TCMSG_LEN):
        if typ == TCA_KIND:
            q["kind"] = val.split(b"\0")[0].decode()
        elif typ == TCA_STATS2:
            for t2, v2 in nl_attrs(val):
                if t2 == TCA_STATS_BASIC and len(v2) >= 12:
                    q["bytes"], q["packets"] = struct.unpack_from("=QI", v2)
                elif t2 == TCA_STATS_QUEUE and len(v2) >= 20:
                    (q["qlen"], q["backlog"], q["drops"], q["requeues"],
                     q["overlimits"]) = struct.unpack_from("=IIIII", v2)
                elif t2 == TCA_STATS_APP:
                    app = v2
    fmt = QDISC_XSTATS.get(q.get("kind"))
    if fmt and app is not None and len(app) >= struct.calcsize(fmt[0]):
        q.update(zip(fmt[1], struct.unpack_from(fmt[0], app)))
    return q


class _Dumper:
    def __init__(self, proto, bufsize):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, proto)
        self.sock.bind((0, 0))
        self.seq = 0
        self.bufsize = bufsize

    def close(self):
        self.sock.close()

    def dump(self, typ, payload=b""):
        """Send a dump request, return its answer: [(type, payload)]."""
        self.seq += 1
        self.sock.send(struct.pack(NLMSG_HDR, NLMSG_HDRLEN + len(payload), typ,
                                   NLM_F_REQUEST_DUMP, self.seq, 0) + payload)
        out = []
        while True:
            msgs, done = parse_msgs(self.sock.recv(self.bufsize), self.seq)
            out += msgs
            if done:
                return out


class RdmaQps(_Dumper):
    """read(dev) -> {lqpn: {"rqpn", "rq_psn", "sq_psn", "type", "state"}}."""

    def __init__(self):
        super().__init__(NETLINK_RDMA, 1 << 17)
        self.index = {}

    def dev_index(self, dev):
        if dev not in self.index:
            for _, m in self.dump(RDMA_NLDEV_GET):
                d = parse_rdma_dev(m)
                if d:
                    self.index[d[0]] = d[1]
        if dev not in self.index:
            raise OSError(f"no RDMA device {dev}")
        return self.index[dev]

    def read(self, dev):
        idx = struct.pack("=HHI", 8, NLA_DEV_INDEX, self.dev_index(dev))
        out = {}
        for _, m in self.dump(RDMA_NLDEV_RES_QP_GET, idx):
            out.update(parse_qps(m))
        return out


class QdiscStats(_Dumper):
    """The qdiscs of one interface: read() -> {"2:": parse_qdisc(), ...}."""

    def __init__(self, ifname):
        self.ifindex = socket.if_nametoindex(ifname)
        super().__init__(socket.NETLINK_ROUTE, 1 << 16)

    def read(self):
        tcm = struct.pack(TCMSG, 0, 0, 0, self.ifindex, 0, 0, 0)
        out = {}
        for typ, m in self.dump(RTM_GETQDISC, tcm):
            if typ != RTM_NEWQDISC:
                continue
            q = parse_qdisc(m, self.ifindex)
            if q:
                out[q["handle"]] = q
        return out
