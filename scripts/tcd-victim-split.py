#!/usr/bin/env python3
"""Split the background flows' FCT gain from TCD by flow size: at most one BDP, or longer.

    scripts/tcd-victim-split.py BASE_DIR TCD_DIR [--dport 100]

BASE_DIR and TCD_DIR are `sfc run` output directories of the same workload (same seed) without
and with TCD, written with `output.flows_csv = true`. The BDP is `bdp_bytes` of BASE_DIR's
summary.json. For the flows of the destination port that completed in both runs, prints per
class the count, the geometric mean over flows of (slowdown without TCD) / (slowdown with
TCD), and each run's median and P99 slowdown (the element at index ⌊n·p⌋, as sfc's
percentiles). A flow of at most one BDP is sent whole at line rate before its first echo can
return, so no reaction to marks (CE or UE) changes its sending.
"""
import csv
import json
import math
import os
import sys


def flows(d, dport):
    with open(os.path.join(d, "flows.csv")) as f:
        return {int(r["id"]): r for r in csv.DictReader(f) if r["dport"] == dport}


def pct(xs, p):
    xs = sorted(xs)
    return xs[int(len(xs) * p)] if xs else float("nan")


def main():
    args = sys.argv[1:]
    dport = "100"
    if "--dport" in args:
        i = args.index("--dport")
        dport = args[i + 1]
        del args[i : i + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    base_dir, tcd_dir = args
    with open(os.path.join(base_dir, "summary.json")) as f:
        bdp = json.load(f)["bdp_bytes"]
    base, tcd = flows(base_dir, dport), flows(tcd_dir, dport)
    print(f"BDP {bdp} B; dport {dport}; flows completed in both runs")
    print("class      flows  share  geo-mean base/TCD  p50 base  p50 TCD  p99 base  p99 TCD")
    done = [i for i, r in base.items() if r["completed"] == "1" and tcd[i]["completed"] == "1"]
    for name, keep in [
        ("<= 1 BDP", lambda s: s <= bdp),
        ("> 1 BDP", lambda s: s > bdp),
        ("all", lambda s: True),
    ]:
        ids = [i for i in done if keep(int(base[i]["size_bytes"]))]
        if not ids:
            continue
        b = [float(base[i]["slowdown"]) for i in ids]
        t = [float(tcd[i]["slowdown"]) for i in ids]
        gm = math.exp(sum(math.log(x / y) for x, y in zip(b, t)) / len(ids))
        print(
            f"{name:9} {len(ids):6} {len(ids) / len(done):6.0%} {gm:18.3f} "
            f"{pct(b, .5):9.2f} {pct(t, .5):8.2f} {pct(b, .99):9.2f} {pct(t, .99):8.2f}"
        )


if __name__ == "__main__":
    main()
