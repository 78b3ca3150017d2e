#!/usr/bin/env python3
"""Split small background flows' slowdown by whether their receiver had an incast in progress.

    scripts/sfc-victim-split.py BASE_DIR SFC_DIR [--max-bytes 700]

BASE_DIR and SFC_DIR are output directories of the same workload (same seed) without and with
SFC, each with its HPCC-format `fct.txt` (`sip dip sport dport size start_ns fct_ns
standalone_ns`). A background flow (dport 100) of at most --max-bytes is a *victim* when an
incast flow (dport 200) to the same receiver is in progress in BASE_DIR's run (between its
start and its completion) at some time of the background flow's lifetime in BASE_DIR's run;
the same flows are victims in both runs. Prints, per class, the share of the flows, each run's
P50 / P95 / P99 slowdown (fct / standalone, the element at index floor(n*p)) and the ratio of
the P99s.
"""
import bisect
import sys


def read(d):
    out = []
    with open(f"{d}/fct.txt") as f:
        for line in f:
            p = line.split()
            if len(p) < 8:
                continue
            sip, dip, sport, dport = p[0], p[1], int(p[2]), int(p[3])
            size, start, fct, ideal = int(p[4]), int(p[5]), int(p[6]), int(p[7])
            out.append((sip, dip, sport, dport, size, start, fct, ideal))
    return out


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(int(len(xs) * p), len(xs) - 1)] if xs else float("nan")


def merged_intervals(flows):
    by_dst = {}
    for sip, dip, sport, dport, size, start, fct, ideal in flows:
        if dport == 200:
            by_dst.setdefault(dip, []).append((start, start + fct))
    merged = {}
    for dip, iv in by_dst.items():
        iv.sort()
        m = [list(iv[0])]
        for a, b in iv[1:]:
            if a <= m[-1][1]:
                m[-1][1] = max(m[-1][1], b)
            else:
                m.append([a, b])
        merged[dip] = ([a for a, _ in m], [b for _, b in m])
    return merged


def overlaps(merged, dip, a, b):
    if dip not in merged:
        return False
    starts, ends = merged[dip]
    i = bisect.bisect_right(starts, b) - 1  # last incast interval starting by b
    return i >= 0 and ends[i] >= a


def main():
    args = sys.argv[1:]
    max_bytes = 700
    if "--max-bytes" in args:
        k = args.index("--max-bytes")
        max_bytes = int(args[k + 1])
        del args[k : k + 2]
    base, sfc = read(args[0]), read(args[1])
    merged = merged_intervals(base)
    key = lambda r: (r[0], r[1], r[2], r[5])  # sip, dip, sport, start: one flow
    small = lambda r: r[3] == 100 and r[4] <= max_bytes
    victim = {
        key(r): overlaps(merged, r[1], r[5], r[5] + r[6]) for r in base if small(r)
    }
    sd = lambda r: r[6] / r[7]
    rows = []
    for name, test in (("all", lambda v: True), ("to an incast victim", lambda v: v),
                       ("to any other receiver", lambda v: not v)):
        b = [sd(r) for r in base if small(r) and test(victim[key(r)])]
        s = [sd(r) for r in sfc if small(r) and key(r) in victim and test(victim[key(r)])]
        rows.append((name, len(b), b, s))
    total = rows[0][1]
    print(f"| small background flows (≤ {max_bytes} B) | share | none P50 / P95 / P99 | "
          "SFC P50 / P95 / P99 | P99 none / SFC |")
    print("|---|---|---|---|---|")
    for name, n, b, s in rows:
        share = f"{n:,} flows" if name == "all" else f"{100 * n / max(total, 1):.1f} %"
        fb = " / ".join(f"{pct(b, p):.3g}" for p in (0.5, 0.95, 0.99))
        fs = " / ".join(f"{pct(s, p):.3g}" for p in (0.5, 0.95, 0.99))
        print(f"| {name} | {share} | {fb} | {fs} | {pct(b, 0.99) / pct(s, 0.99):.1f}× |")


if __name__ == "__main__":
    main()
