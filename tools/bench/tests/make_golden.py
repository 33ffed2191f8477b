#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""make_golden.py [BENCH_PY] - write tests/data/golden.json: what
`BENCH_PY report` (default: this tree's bench.py) makes of the results in
tests/data/results: summary.md, the rows and targets of summary.json, the
charts' gnuplot scripts and data (the results folder written as DIR).

test_report.py compares the report with it.  The golden file in the tree
was made by the bench.py before the split into mbench/ (commit 4e7166f);
after an intended change of the report's output, run `make golden` and
review the diff of golden.json."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")


def report_outputs(bench_py):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "results")
        shutil.copytree(os.path.join(DATA, "results"), out)
        p = subprocess.run(["/usr/bin/python3", bench_py, "report", "--require-filled", out],
                           capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"make_golden: {bench_py} report failed ({p.returncode}): {p.stderr}")
        s = json.load(open(os.path.join(out, "summary.json")))
        charts = {}
        for name in sorted(os.listdir(os.path.join(out, "charts"))):
            if name.endswith((".gp", ".dat")):
                with open(os.path.join(out, "charts", name)) as f:
                    charts[name] = f.read().replace(out, "DIR")
        with open(os.path.join(out, "summary.md")) as f:
            md = f.read()
    return {"summary.md": md, "rows": s["rows"], "targets": s["targets"], "charts": charts}


def main():
    bench_py = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "bench.py")
    g = report_outputs(os.path.abspath(bench_py))
    with open(os.path.join(DATA, "golden.json"), "w") as f:
        json.dump(g, f, indent=0, ensure_ascii=False)
        f.write("\n")
    print(f"make_golden: {os.path.join(DATA, 'golden.json')}: {len(g['rows'])} rows, "
          f"{len(g['charts'])} chart files")


if __name__ == "__main__":
    main()
