# SPDX-License-Identifier: GPL-2.0-only
"""RemoteEnd, against a local agent that never answers: a dead pair link
ends the path with a message instead of hanging the bench."""

import socket
import threading
import time
import unittest
from unittest import mock

from mbench import ends


class DeadAgent(unittest.TestCase):
    def setUp(self):
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(1)
        self.port = self.srv.getsockname()[1]

    def tearDown(self):
        self.srv.close()

    def test_call_times_out(self):
        with mock.patch.object(ends, "AGENT_PORT", self.port), \
             mock.patch.object(ends, "CALL_MIN", 0.2), \
             mock.patch.object(ends, "CALL_SLACK", 0.1), \
             mock.patch.object(ends, "LINK_DIAG", ["true"]), \
             mock.patch("sys.stderr"):
            end = ends.RemoteEnd("127.0.0.1", time.monotonic() + 5)
            conn, _ = self.srv.accept()
            t0 = time.monotonic()
            with self.assertRaises(SystemExit) as cm:
                end.stat()
            took = time.monotonic() - t0
            conn.close()
            end.f.close()
            end.sock.close()
        self.assertIn("no answer to stat", str(cm.exception))
        self.assertLess(took, 5)

    def test_call_answered(self):
        def agent():
            conn, _ = self.srv.accept()
            with conn, conn.makefile("rwb") as f:
                got.append(f.readline())
                f.write(b'{"cpu": {"user": 7}}\n')
                f.flush()

        got = []
        th = threading.Thread(target=agent)
        th.start()
        with mock.patch.object(ends, "AGENT_PORT", self.port):
            end = ends.RemoteEnd("127.0.0.1", time.monotonic() + 5)
            cpu = end.stat()
            end.f.close()
            end.sock.close()
        th.join(5)
        self.assertEqual(got, [b'{"op": "stat"}\n'])
        self.assertEqual(cpu["user"], 7)
        self.assertIn("t", cpu)


if __name__ == "__main__":
    unittest.main()
