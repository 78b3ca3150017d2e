#!/usr/bin/env python3
"""Compare two output snapshots (scripts/snapshot-outputs.sh) file by file.

Files must be byte-identical, except for what measures the machine rather than the model:
JSON keys about wall time and memory, the `wall_s`-like CSV columns, and report lines that
print run times. Prints every difference; exits 1 if there is any.

    scripts/compare-outputs.py OLD NEW [--ignore-key KEY]... [--legacy-summary]

--legacy-summary: OLD has the summary layout from before the scheme plug-ins moved the PFC, ECN
and OnRamp counters into their own summary sections; map its keys to the new layout.
"""
import json
import os
import re
import sys

VOLATILE_KEYS = {
    "wall_seconds", "events_per_second", "packet_hops_per_second", "peak_rss_bytes",
    "wall_s", "version",
}


def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in VOLATILE_KEYS}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v


# Summary layout before the scheme plug-in refactor → after; applied to the OLD
# snapshot with --legacy-summary. Keys the refactor added are dropped from the NEW one.
LEGACY_MOVES = {
    ("counters", "pfc_pauses"): ("pfc", "pauses"),
    ("counters", "pfc_resumes"): ("pfc", "resumes"),
    ("counters", "pfc_paused_ps"): ("pfc", "paused_ps"),
    ("counters", "drops_lossless"): ("pfc", "drops_lossless"),
    ("counters", "ecn_marks"): ("ecn", "marks"),
    ("sfc", "onramp"): ("onramp", "enabled"),
    ("sfc", "onramp_pauses"): ("onramp", "pauses"),
    ("sfc", "pauses"): ("counters", "qp_pauses"),
    ("sfc", "paused_time_ps"): ("counters", "qp_paused_ps"),
}
ADDED = {("sfc", "deploy"), ("sfc", "bts_received"), ("onramp", "threshold_ps"),
         ("pfc", "enabled"), ("pfc", "frames_received"), ("ecn", "enabled")}
LEGACY_CSV = {"counters.pfc_pauses": "pfc.pauses", "counters.pfc_paused_ps": "pfc.paused_ps",
              "sfc.pauses": "counters.qp_pauses"}
ADDED_CSV = {"onramp.pauses", "time_ns", "receiver"}
# Top-level summary keys and files added by the reliability checks.
ADDED_TOP = {"complete", "flows_incomplete", "flows_not_started", "stalled", "failure",
             "stop_ps", "seed", "version", "source", "scenario"}
ADDED_FILES = {"scenario.toml"}
LEGACY = False


def legacy(v, old):
    """Bring a summary.json object of either layout to the common one."""
    if not isinstance(v, dict) or "counters" not in v:
        return v
    if old:
        for (a, k), (b, k2) in LEGACY_MOVES.items():
            if a in v and k in v[a]:
                v.setdefault(b, {})[k2] = v[a].pop(k)
        if "sfc" in v and isinstance(v["sfc"].get("mode"), str):
            v["sfc"]["mode"] = v["sfc"]["mode"].lower()
    else:
        for k in ADDED_TOP:
            v.pop(k, None)
        for a, k in ADDED:
            if a in v:
                v[a].pop(k, None)
        if "onramp" in v and "pauses" not in v["onramp"]:
            pass
    return v


def csv_rows(text):
    import csv
    import io
    lines = list(csv.reader(io.StringIO(text)))
    if not lines:
        return []
    head = lines[0]
    drop = {i for i, h in enumerate(head)
            if h in VOLATILE_KEYS or "wall" in h or "rss" in h or (LEGACY and h in ADDED_CSV)}
    return [",".join(c for i, c in enumerate(l) if i not in drop) for l in lines]


def normalise(path, data, old=False):
    if path.endswith(".json"):
        try:
            v = json.loads(data)
            if LEGACY:
                v = legacy(v, old)
            return json.dumps(strip(v), sort_keys=True, indent=1)
        except ValueError:
            return data.decode(errors="replace")
    text = data.decode(errors="replace")
    if path.endswith(".csv"):
        if LEGACY and old:
            head, _, rest = text.partition("\n")
            head = ",".join(LEGACY_CSV.get(h, h) for h in head.split(","))
            text = head + "\n" + rest
        return "\n".join(csv_rows(text))
    if path.endswith((".md", ".stdout", "stdout.txt")):
        # Run times, event rates and memory printed in reports and tables.
        text = re.sub(r"\d+(\.\d+)?\s*(s|ms|M events/s|M hops/s|MB|GB|KB)\b(?= |\||$|\))", "<t>", text, flags=re.M)
        text = re.sub(r"(wall|took|in) [0-9.]+ ?s", r"\1 <t>", text)
        text = re.sub(r"^(\s*(events|packet hops)/s\s*:).*$", r"\1 <rate>", text, flags=re.M)
        text = re.sub(r"^[0-9]+\.[0-9]+$", "<wall>", text, flags=re.M)
        return text
    return data


def files(root):
    out = {}
    for d, _, fs in os.walk(root):
        for f in fs:
            # Plots, temp files, the (empty) lock files of an experiment sweep and its
            # points, and the sweep's record of how it was started (paths of the machine).
            if f.endswith((".png", ".svg", ".tmp")) or f in (".sfc-lock", ".sfc-sweep.json"):
                continue
            p = os.path.join(d, f)
            out[os.path.relpath(p, root)] = p
    return out


def main():
    args = sys.argv[1:]
    global VOLATILE_KEYS
    while "--ignore-key" in args:
        i = args.index("--ignore-key")
        VOLATILE_KEYS = VOLATILE_KEYS | {args[i + 1]}
        del args[i:i + 2]
    global LEGACY
    if "--legacy-summary" in args:
        LEGACY = True
        args.remove("--legacy-summary")
    a, b = args
    fa, fb = files(a), files(b)
    bad = 0
    for k in sorted(set(fa) | set(fb)):
        if LEGACY and k not in fa and os.path.basename(k) in ADDED_FILES:
            continue
        if k not in fa or k not in fb:
            print(f"only in {'new' if k in fb else 'old'}: {k}")
            bad += 1
            continue
        x = normalise(k, open(fa[k], "rb").read(), old=True)
        y = normalise(k, open(fb[k], "rb").read())
        if x != y:
            bad += 1
            xs, ys = (x if isinstance(x, str) else x.decode(errors="replace")).splitlines(), \
                     (y if isinstance(y, str) else y.decode(errors="replace")).splitlines()
            diff = [(i, p, q) for i, (p, q) in enumerate(zip(xs, ys)) if p != q]
            first = diff[0] if diff else (min(len(xs), len(ys)), "<eof>", "<eof>")
            print(f"DIFFERS: {k} (line {first[0] + 1}; {len(diff)} lines differ, {len(xs)} vs {len(ys)} lines)")
            print(f"   old: {first[1][:200]}")
            print(f"   new: {first[2][:200]}")
    print(f"{len(set(fa) | set(fb))} files compared, {bad} differ")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
