# SPDX-License-Identifier: GPL-2.0-only
"""The driver's plan loop: a second boot of the pair after a run hung
guest A records that run as failed and goes on with the next one, with the
same plan and run ids, after the first boot's records."""

import argparse
import json
import os
import tempfile
import unittest
from unittest import mock

from mbench import drive

PLAN = [dict(kind="bw", verb="write", size=64, transport=t, scenario="write_bw 64",
             rep=r) for r in (1, 2) for t in ("mroce", "rxe")]


class FakeDriver(drive.Driver):
    """Driver.run() without guests: run_one() records what it was asked."""

    def __init__(self, results, resume_after):
        self.a = argparse.Namespace(mode="pair", results=results,
                                    resume_after=resume_after)
        self.out = open(f"{results}/runs.jsonl", "a")
        self.cc_boot = self.cc_now = {"client": "metaroce", "server": "metaroce"}
        self.srv = mock.Mock()
        self.ran = []

    def ports(self):
        pass

    def stats(self, tag):
        with open(f"{self.a.results}/stats-{tag}.txt", "w") as f:
            f.write(tag)

    def set_loss(self, loss):
        pass

    def run_one(self, p, idx, total):
        self.ran.append(idx)
        return self.finish(dict(p, id=drive.run_id(idx, p), path="pair", ok=True,
                                gbps=1.0), idx, total, 0)


class Resume(unittest.TestCase):
    def run_boot(self, d, resume_after):
        drv = FakeDriver(d, resume_after)
        with mock.patch.object(drive, "make_plan", return_value=PLAN), \
             mock.patch.object(drive, "log"):
            drv.run()
        drv.out.close()
        return drv

    def records(self, d):
        with open(f"{d}/runs.jsonl") as f:
            return [json.loads(x) for x in f]

    def test_first_boot_runs_the_plan(self):
        with tempfile.TemporaryDirectory() as d:
            drv = self.run_boot(d, 0)
            self.assertEqual(drv.ran, [1, 2, 3, 4])
            with open(f"{d}/plan.json") as f:
                self.assertEqual(json.load(f), PLAN)
            self.assertTrue(os.path.exists(f"{d}/stats-before.txt"))

    def test_resume_after_a_hang(self):
        with tempfile.TemporaryDirectory() as d:
            # the first boot got through run 1, then run 2 hung guest A
            with open(f"{d}/runs.jsonl", "w") as f:
                f.write(json.dumps(dict(PLAN[0], id="001-write_bw-64-mroce-r1",
                                        ok=True)) + "\n")
            with open(f"{d}/stats-before.txt", "w") as f:
                f.write("first boot")
            drv = self.run_boot(d, 2)
            self.assertEqual(drv.ran, [3, 4], "the runs after the hung one")
            recs = self.records(d)
            self.assertEqual([r["id"] for r in recs],
                             ["001-write_bw-64-mroce-r1", "002-write_bw-64-rxe-r1",
                              "003-write_bw-64-mroce-r2", "004-write_bw-64-rxe-r2"])
            hung = recs[1]
            self.assertFalse(hung["ok"])
            self.assertIn("no answer from guest A", hung["error"])
            self.assertEqual((hung["transport"], hung["scenario"], hung["rep"]),
                             ("rxe", "write_bw 64", 1))
            with open(f"{d}/stats-before.txt") as f:
                self.assertEqual(f.read(), "first boot", "the first boot's kept")
            self.assertFalse(os.path.exists(f"{d}/plan.json"),
                             "the plan is the first boot's (not rewritten)")

    def test_hang_of_the_last_run(self):
        with tempfile.TemporaryDirectory() as d:
            drv = self.run_boot(d, 4)
            self.assertEqual(drv.ran, [])
            self.assertEqual([r["ok"] for r in self.records(d)], [False])


if __name__ == "__main__":
    unittest.main()
