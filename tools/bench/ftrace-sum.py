#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Sum a function_graph trace (stdin) by function: calls, total and mean
time, largest total first.  profile.sh's PROFILE_FUNCS mode: each traced
function's time includes the traced functions it calls (listed too)."""
import collections
import re
import sys

# "  1.234 us |  f();" (a leaf) or "+ 40.9 us |  } /* f [mod] */" (funcgraph-tail)
LINE = re.compile(r"([0-9.]+) us\s*\|\s*(?:\}\s*/\*\s*([\w.]+)(?: \[\w+\])?\s*\*/"
                  r"|([\w.]+)(?: \[\w+\])?\(\);)")


def main():
    tot = collections.defaultdict(float)
    n = collections.Counter()
    for line in sys.stdin:
        m = LINE.search(line)
        if not m:
            continue
        f = m.group(2) or m.group(3)
        tot[f] += float(m.group(1))
        n[f] += 1
    print(f"{'function':36s} {'calls':>8s} {'total ms':>10s} {'mean us':>9s}")
    for f, t in sorted(tot.items(), key=lambda x: -x[1]):
        print(f"{f:36s} {n[f]:8d} {t / 1000:10.1f} {t / n[f]:9.2f}")


if __name__ == "__main__":
    main()
