#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""flows.py - small traffic source and sink for the test fabric (fabric.sh).

Runs inside a host namespace of the mroce test guest, e.g.
    ip netns exec h3 flows.py udp-recv --port 9000 --idle 1 --ready /tmp/r &
    ip netns exec h1 flows.py udp-send 192.0.2.3 --port 9000 --sports 40000-40063 --count 4

  udp-send DST   datagrams to DST:PORT from each source port of --sports
                 (e.g. 40000-40063,40100), --count per port (ports interleaved), or
                 for --seconds as fast as possible; --tos 2 sends ECT(0)
  udp-recv       count datagrams on PORT (IPv4 and IPv6), per source port,
                 and how many arrived CE-marked
  tcp-send DST   one TCP connection, send for --seconds (or until reset)
  tcp-recv       accept one TCP connection, count what arrives in the
                 --seconds after its first byte, then close (reset)

Results go to stdout as "KEY VALUE" lines (easy to read from sh):
packets, bytes, seconds (first to last packet), mbit (bytes over that
time), ce (CE-marked packets), errors (failed sends), and for udp-recv one
"sport PORT PACKETS" line per source port.  --ready FILE: the sink creates
FILE once it listens.  Only standard library; Python 3.7+.
"""

import argparse
import os
import socket
import sys
import time

IP_TOS = 1
IP_RECVTOS = 13
IPV6_RECVTCLASS = 66
IPV6_TCLASS = 67


def family(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def port_range(text):
    """"40000-40063,40100" -> the ports"""
    ports = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        ports.extend(range(int(a), int(b or a) + 1))
    return ports


def ready(path):
    if path:
        with open(path, "w") as f:
            f.write("%d\n" % os.getpid())


def report(pairs):
    for k, v in pairs:
        print(k, v)
    sys.stdout.flush()


def rate(nbytes, first, last):
    if first is None or last <= first:
        return 0.0
    return nbytes * 8 / (last - first) / 1e6


def set_tos(s, fam, tos):
    if fam == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, IPV6_TCLASS, tos)
    else:
        s.setsockopt(socket.IPPROTO_IP, IP_TOS, tos)


def udp_send(a):
    fam = family(a.dst)
    payload = bytes(a.size)
    socks = []
    for sport in port_range(a.sports):
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if a.tos:
            set_tos(s, fam, a.tos)
        s.bind(("::" if fam == socket.AF_INET6 else "0.0.0.0", sport))
        socks.append(s)
    # Unconnected sockets on purpose: connect() gives a socket a random
    # flow hash (sk_txhash) that its packets carry in skb->hash through
    # veth, and the fabric's ECMP would hash that instead of the ports.
    dst = (a.dst, a.port)
    sent = errors = 0
    t0 = time.monotonic()
    if a.seconds:
        end = t0 + a.seconds
        while time.monotonic() < end:
            for s in socks:
                for _ in range(16):
                    try:
                        s.sendto(payload, dst)
                        sent += 1
                    except OSError:
                        errors += 1
    else:
        for _ in range(a.count):
            for s in socks:
                try:
                    s.sendto(payload, dst)
                    sent += 1
                except OSError:
                    errors += 1
            if a.gap:
                time.sleep(a.gap)
    t1 = time.monotonic()
    report([("packets", sent), ("bytes", sent * a.size), ("errors", errors),
            ("seconds", "%.3f" % (t1 - t0)),
            ("mbit", "%.2f" % rate(sent * a.size, t0, t1))])


def udp_recv(a):
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    try:
        s.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE
    except OSError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.setsockopt(socket.IPPROTO_IP, IP_RECVTOS, 1)
    s.setsockopt(socket.IPPROTO_IPV6, IPV6_RECVTCLASS, 1)
    s.bind(("::", a.port))
    ready(a.ready)
    per_port = {}
    packets = nbytes = ce = 0
    first = last = None
    start = time.monotonic()
    while True:
        now = time.monotonic()
        left = start + a.seconds - now
        if last is not None:
            left = min(left, last + a.idle - now)
        if left <= 0 or (a.packets and packets >= a.packets):
            break
        s.settimeout(left)
        try:
            data, anc, _, addr = s.recvmsg(65536, 256)
        except socket.timeout:
            break
        last = time.monotonic()
        if first is None:
            first = last
        packets += 1
        nbytes += len(data)
        per_port[addr[1]] = per_port.get(addr[1], 0) + 1
        for level, kind, value in anc:
            if (level, kind) in ((socket.IPPROTO_IP, IP_TOS),
                                 (socket.IPPROTO_IPV6, IPV6_TCLASS)):
                if value and value[0] & 3 == 3:
                    ce += 1
    report([("packets", packets), ("bytes", nbytes), ("ce", ce),
            ("ports", len(per_port)),
            ("seconds", "%.3f" % ((last - first) if first else 0)),
            ("mbit", "%.2f" % rate(nbytes, first, last))]
           + [("sport", "%d %d" % kv) for kv in sorted(per_port.items())])


def tcp_send(a):
    fam = family(a.dst)
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(a.seconds + 30)
    s.connect((a.dst, a.port))
    buf = bytes(65536)
    sent = 0
    t0 = time.monotonic()
    end = t0 + a.seconds
    try:
        while time.monotonic() < end:
            sent += s.send(buf)
    except OSError:
        pass                    # the sink stopped listening: done
    s.close()
    t1 = time.monotonic()
    report([("bytes", sent), ("seconds", "%.3f" % (t1 - t0)),
            ("mbit", "%.2f" % rate(sent, t0, t1))])


def tcp_recv(a):
    ls = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    ls.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("::", a.port))
    ls.listen(1)
    ls.settimeout(a.wait)
    ready(a.ready)
    nbytes = 0
    first = last = None
    try:
        c, _ = ls.accept()
    except socket.timeout:
        c = None
    if c:
        c.settimeout(a.wait)
        end = None
        while end is None or time.monotonic() < end:
            try:
                data = c.recv(1 << 20)
            except (socket.timeout, OSError):
                break
            if not data:
                break
            last = time.monotonic()
            if first is None:
                first = last
                end = first + a.seconds
            nbytes += len(data)
        # Closing with unread data resets the connection: the sender stops
        # at once instead of draining its send buffer through a slow link.
        c.close()
    report([("bytes", nbytes),
            ("seconds", "%.3f" % ((last - first) if first else 0)),
            ("mbit", "%.2f" % rate(nbytes, first, last))])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    u = sub.add_parser("udp-send")
    u.add_argument("dst")
    u.add_argument("--port", type=int, default=9000)
    u.add_argument("--sports", default="40000")
    u.add_argument("--count", type=int, default=1)
    u.add_argument("--seconds", type=float, default=0)
    u.add_argument("--size", type=int, default=64)
    u.add_argument("--tos", type=int, default=0)
    u.add_argument("--gap", type=float, default=0,
                   help="seconds between rounds over the ports")
    r = sub.add_parser("udp-recv")
    r.add_argument("--port", type=int, default=9000)
    r.add_argument("--seconds", type=float, default=30,
                   help="give up after this long")
    r.add_argument("--idle", type=float, default=1,
                   help="stop this long after the last datagram")
    r.add_argument("--packets", type=int, default=0,
                   help="stop after this many")
    r.add_argument("--ready")
    t = sub.add_parser("tcp-send")
    t.add_argument("dst")
    t.add_argument("--port", type=int, default=9001)
    t.add_argument("--seconds", type=float, default=3)
    tr = sub.add_parser("tcp-recv")
    tr.add_argument("--port", type=int, default=9001)
    tr.add_argument("--seconds", type=float, default=3,
                    help="measure this long from the first byte")
    tr.add_argument("--wait", type=float, default=30,
                    help="give up after this long without a connection or data")
    tr.add_argument("--ready")
    a = p.parse_args()
    {"udp-send": udp_send, "udp-recv": udp_recv,
     "tcp-send": tcp_send, "tcp-recv": tcp_recv}[a.cmd](a)


if __name__ == "__main__":
    main()
