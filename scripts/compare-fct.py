#!/usr/bin/env python3
"""Compare two FCT files in HPCC-sim's format flow by flow (e.g. HPCC-sim's and `sfc hpcc`'s
for the same config).

    scripts/compare-fct.py REF.txt OTHER.txt [--bins K] [--top N]

Lines are `sip dip sport dport size_bytes start_ns fct_ns standalone_fct_ns`; a flow is
identified by (sip, dip, sport, dport), which both simulators assign the same way from the
flow file. Prints, over the flows both files hold:

- per size bin the P50/P95/P99 slowdown of both files and their ratio (OTHER / REF). The bins
  are K groups of equal flow count (default 10) of the flows sorted by size, then by REF's
  start time, as HPCC's `fct_analysis.py` and sfc's `SizeBins::EqualCount` cut them; slowdown
  is `fct / standalone_fct`, at least 1; percentile p of n sorted values is the one at index
  floor(p·n) (sfc's and `fct_analysis.py`'s convention);
- the distribution of the per-flow FCT ratio OTHER / REF, and the share of flows with equal
  FCTs or within 1 %, 5 %, 10 %, 25 %;
- the N flows (default 15) whose FCTs differ most (by |log ratio|).
"""
import argparse
import math


def load(path):
    flows = {}
    with open(path) as f:
        for line in f:
            x = line.split()
            if len(x) < 8:
                continue
            key = (x[0], x[1], int(x[2]), int(x[3]))
            flows[key] = (int(x[4]), int(x[5]), int(x[6]), int(x[7]))
    return flows


def pct(sorted_values, p):
    return sorted_values[min(int(math.floor(len(sorted_values) * p)), len(sorted_values) - 1)]


def slowdown(rec):
    return max(1.0, rec[2] / rec[3]) if rec[3] > 0 else 1.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("ref")
    ap.add_argument("other")
    ap.add_argument("--bins", type=int, default=10)
    ap.add_argument("--top", type=int, default=15)
    a = ap.parse_args()
    ref, oth = load(a.ref), load(a.other)
    keys = sorted(set(ref) & set(oth), key=lambda k: (ref[k][0], ref[k][1], k))
    n = len(keys)
    print(f"flows: {a.ref} {len(ref)}, {a.other} {len(oth)}, in both {n}")
    if n == 0:
        return
    ps = (0.5, 0.95, 0.99)
    print(f"{'size bin (bytes)':>23} {'flows':>5} | {'ref P50':>7} {'P95':>6} {'P99':>6} | "
          f"{'oth P50':>7} {'P95':>6} {'P99':>6} | {'ratio P50':>9} {'P95':>5} {'P99':>5}")
    k = max(1, a.bins)
    for i in range(k):
        g = keys[i * n // k:(i + 1) * n // k]
        if not g:
            continue
        sr = sorted(slowdown(ref[x]) for x in g)
        so = sorted(slowdown(oth[x]) for x in g)
        pr = [pct(sr, p) for p in ps]
        po = [pct(so, p) for p in ps]
        rr = [o / r for o, r in zip(po, pr)]
        print(f"{ref[g[0]][0]:>11}-{ref[g[-1]][0]:<11} {len(g):>5} | "
              f"{pr[0]:7.3f} {pr[1]:6.3f} {pr[2]:6.3f} | {po[0]:7.3f} {po[1]:6.3f} {po[2]:6.3f} | "
              f"{rr[0]:9.3f} {rr[1]:5.3f} {rr[2]:5.3f}")
    sr = sorted(slowdown(ref[x]) for x in keys)
    so = sorted(slowdown(oth[x]) for x in keys)
    print("all flows: ref P50/P95/P99 %.3f %.3f %.3f, other %.3f %.3f %.3f"
          % tuple([pct(sr, p) for p in ps] + [pct(so, p) for p in ps]))
    r = sorted(oth[x][2] / ref[x][2] for x in keys)
    same = sum(1 for x in keys if oth[x][2] == ref[x][2])

    def within(t):
        return sum(1 for v in r if abs(v - 1) <= t) / n

    print("per-flow FCT ratio other/ref: min %.3f P1 %.3f P5 %.3f P25 %.3f P50 %.3f P75 %.3f "
          "P95 %.3f P99 %.3f max %.3f; geometric mean %.4f"
          % (r[0], pct(r, .01), pct(r, .05), pct(r, .25), pct(r, .5), pct(r, .75), pct(r, .95),
             pct(r, .99), r[-1], math.exp(sum(math.log(v) for v in r) / n)))
    print(f"equal FCT: {same} ({same / n:.1%}); within 1 %: {within(.01):.1%}, 5 %: "
          f"{within(.05):.1%}, 10 %: {within(.1):.1%}, 25 %: {within(.25):.1%}")
    print("most different flows (sip dip sport dport size start_ns | ref fct_ns, other fct_ns, "
          "ratio, standalone_ns):")
    for x in sorted(keys, key=lambda x: -abs(math.log(oth[x][2] / ref[x][2])))[:a.top]:
        print(f"  {x[0]} {x[1]} {x[2]} {x[3]} {ref[x][0]} {ref[x][1]} | {ref[x][2]} {oth[x][2]} "
              f"{oth[x][2] / ref[x][2]:.3f} {ref[x][3]}")


if __name__ == "__main__":
    main()
