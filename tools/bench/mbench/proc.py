# SPDX-License-Identifier: GPL-2.0-only
"""Child processes of the guests: on a pty (perftest and iperf3 then flush
every line, and the driver times its CPU window from their output), in a
network namespace, pinned to a CPU, at a nice value."""

import ctypes
import os
import pty
import re
import signal
import subprocess
import threading
import time
import tty

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)

_nice = 0


def set_nice(n):
    """The nice value of every test process started from now on."""
    global _nice
    _nice = n


def _preexec(netns, cpu):
    def fn():
        os.setsid()
        if _nice:
            os.nice(_nice)
        if netns:
            fd = os.open(f"/run/netns/{netns}", os.O_RDONLY)
            if _libc.setns(fd, CLONE_NEWNET) != 0:
                os._exit(126)
            os.close(fd)
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})
    return fn


class Proc:
    """A child on a pty, in netns NETNS, pinned to CPU.  Lines are kept
    with their arrival time."""

    def __init__(self, argv, netns=None, cpu=None, env=None):
        self.argv = argv
        master, slave = pty.openpty()
        tty.setraw(slave)
        self.t0 = time.monotonic()
        penv = None
        if env:             # NAME: value, or None to remove NAME
            penv = {k: v for k, v in os.environ.items() if k not in env}
            penv.update({k: v for k, v in env.items() if v is not None})
        self.p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=slave,
                                  stderr=slave, close_fds=True, env=penv,
                                  preexec_fn=_preexec(netns, cpu))
        os.close(slave)
        self.master = master
        self.lines = []          # (time, line)
        self.cv = threading.Condition()
        self.eof = False
        self.th = threading.Thread(target=self._reader, daemon=True)
        self.th.start()

    def _reader(self):
        buf = b""
        while True:
            try:
                data = os.read(self.master, 4096)
            except OSError:
                data = b""
            now = time.monotonic()
            if not data:
                break
            buf += data
            *done, buf = buf.split(b"\n")
            if done:
                with self.cv:
                    for line in done:
                        self.lines.append((now, line.decode(errors="replace").rstrip("\r")))
                    self.cv.notify_all()
        with self.cv:
            if buf:
                self.lines.append((time.monotonic(), buf.decode(errors="replace")))
            self.eof = True
            self.cv.notify_all()
        os.close(self.master)

    def wait_line(self, regex, timeout):
        """Arrival time of the first line matching REGEX, or None."""
        rx = re.compile(regex)
        end = time.monotonic() + timeout
        with self.cv:
            while True:
                for t, line in self.lines:
                    if rx.search(line):
                        return t
                left = end - time.monotonic()
                if self.eof or left <= 0:
                    return None
                self.cv.wait(min(left, 1))

    def wait(self, timeout):
        """Exit status; the process group is killed after TIMEOUT s (rc 124)."""
        try:
            rc = self.p.wait(timeout=max(timeout, 0.1))
        except subprocess.TimeoutExpired:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(self.p.pid, sig)
                except ProcessLookupError:
                    pass
                try:
                    self.p.wait(timeout=3)
                    break
                except subprocess.TimeoutExpired:
                    pass
            rc = 124
        self.th.join(timeout=5)
        return rc

    def output(self):
        with self.cv:
            return "\n".join(line for _, line in self.lines)

    def kill(self):
        if self.p.poll() is None:
            try:
                os.killpg(self.p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def port_bound(table, proto, port):
    """True if the text of /proc/net/{tcp,udp}[6] TABLE has PORT bound as
    a local port (TCP: in LISTEN state; UDP: bound at all)."""
    for line in table.splitlines()[1:]:
        fld = line.split()
        if len(fld) < 4:
            continue
        try:
            if int(fld[1].rsplit(":", 1)[1], 16) != port:
                continue
        except (IndexError, ValueError):
            continue
        if proto == "udp" or fld[3] == "0A":
            return True
    return False


def listening(pid, proto, port):
    """True once process PID's network namespace has PORT bound (TCP
    LISTEN, or UDP bound)."""
    for fam in ("", "6"):
        try:
            with open(f"/proc/{pid}/net/{proto}{fam}") as f:
                if port_bound(f.read(), proto, port):
                    return True
        except OSError:
            pass
    return False


def run_cmd(argv, netns=None, timeout=60):
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=timeout,
                       preexec_fn=_preexec(netns, None) if netns else None)
    return p.returncode, p.stdout + p.stderr
