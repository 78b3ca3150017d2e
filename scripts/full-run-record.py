#!/usr/bin/env python3
"""The record of a run of every experiment: one table per experiment and one CSV of every claim.

usage: full-run-record.py OUT_DIR [--times TIMES_TSV] [--csv CLAIMS_OUT]

OUT_DIR holds one directory per experiment, as `sfc experiment run NAME --out OUT_DIR/NAME`
(or `--seeds 1,2,3 --out OUT_DIR/NAME-seeds1-2-3`) writes it (its `claims.csv` and
`results.csv`; the experiment's name is read from `claims.csv`). TIMES_TSV, optional, has lines
`NAME<TAB>exit status<TAB>wall seconds` (the wall time of the whole `sfc experiment run`).

Prints a Markdown table on stdout, one row per experiment: its paper, points, simulated events,
the wall time (TIMES_TSV's, else the sum of the points' `wall_seconds`, marked "Σ points"), and
its claims as `sfc experiment score` counts them (point/range/bound matched of total, direction
matched of total, scored claims on three seeds or more and how many match at every seed,
calibrated, repeated). With --csv, writes every claim of every experiment (the
columns of claims.csv) into CLAIMS_OUT, for pandas.
"""
import csv
import sys
from pathlib import Path


def tally(rows):
    t = {"value": [0, 0], "direction": [0, 0], "calibrated": 0, "repeated": 0, "unaudited": 0,
         "seeds": [0, 0]}
    for r in rows:
        ok = r["verdict"] == "matches"
        if r["audited"] != "true":
            t["unaudited"] += 1
        elif r.get("scored_in"):
            t["repeated"] += 1
        elif r["calibrated"]:
            t["calibrated"] += 1
        else:
            k = "direction" if r["kind"] == "direction" else "value"
            t[k][0] += ok
            t[k][1] += 1
            n = int(r.get("seeds") or 0)
            if n >= 3:
                t["seeds"][1] += 1
                t["seeds"][0] += int(r.get("seeds_matching") or 0) == n
    return t


def main():
    args = sys.argv[1:]
    opts = {}
    for flag in ("--times", "--csv"):
        if flag in args:
            k = args.index(flag)
            opts[flag] = args[k + 1]
            del args[k : k + 2]
    out = Path(args[0])
    times = {}
    if "--times" in opts:
        for line in Path(opts["--times"]).read_text().splitlines():
            f = line.split("\t")
            if len(f) == 3:
                times[f[0]] = (int(f[1]), float(f[2]))
    every = []
    print("| experiment | paper | points | events | wall time | point/range/bound matched "
          "| direction matched | on ≥ 3 seeds (matching at every seed) | calibrated (not scored) "
          "| repeated (not scored) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for d in sorted(p for p in out.iterdir() if (p / "claims.csv").is_file()):
        with open(d / "claims.csv", newline="") as fh:
            claims = list(csv.DictReader(fh))
        every += claims
        with open(d / "results.csv", newline="") as fh:
            results = list(csv.DictReader(fh))
        events = sum(int(r["events"]) for r in results if r.get("events"))
        # The experiment's own name (a directory may be `NAME-seeds1-2-3`).
        name = claims[0]["experiment"] if claims else d.name
        if name in times or d.name in times:
            wall = f"{times.get(name, times.get(d.name))[1]:.0f} s"
        else:
            s = sum(float(r["wall_seconds"]) for r in results if r.get("wall_seconds"))
            wall = f"{s:.0f} s (Σ points)"
        paper = claims[0]["paper"] if claims else ""
        t = tally(claims)
        print(f"| `{name}` | {paper} | {len(results)} | {events / 1e6:.1f} M | {wall} "
              f"| {t['value'][0]} of {t['value'][1]} | {t['direction'][0]} of {t['direction'][1]} "
              f"| {t['seeds'][1]} ({t['seeds'][0]}) | {t['calibrated']} | {t['repeated']} |")
    if "--csv" in opts and every:
        # Every column of every file, in order of appearance (older claims.csv files lack
        # the last ones).
        fields = list(dict.fromkeys(k for r in every for k in r))
        with open(opts["--csv"], "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=fields, restval="")
            w.writeheader()
            w.writerows(every)


if __name__ == "__main__":
    main()
