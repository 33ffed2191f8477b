# SPDX-License-Identifier: GPL-2.0-only
"""mbench - the modules of tools/bench/bench.py, one per role.

Guest side (a python start costs ~1 s under TCG, so bench.py imports only
what its subcommand needs):
  common     addresses, ports, names of runs and of host-monitor events
  proc       child processes on a pty, netns/CPU placement, listeners
  sysinfo    /proc/stat CPU snapshots, RDMA GIDs and hw_counters (sysfs)
  netlink    rtnetlink qdisc and RDMA netlink QP dumps: parsers + sockets
  toolparse  perftest, iperf3, udp_pingpong, rdma and dmesg output
  plan       the list of runs of one drive
  bottleneck the congestion scenario's tc setup and its metrics
  ends       LocalEnd and RemoteEnd: where the driver starts processes
  agent      `bench.py agent` (guest A of the pair)
  drive      `bench.py drive` (guest B, or the single guest)
Host side:
  hostmon    `bench.py hostmon`
  report     `bench.py report`: runs -> Row objects -> summary.json
  markdown   Row objects -> summary.md
  charts     Row objects and runs -> gnuplot scripts, data, PNGs

Standard library only; /usr/bin/python3 (3.11).
"""
