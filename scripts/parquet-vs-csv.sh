#!/usr/bin/env bash
# Size and write time of a run's tables as CSV and as Parquet.
#
#   scripts/parquet-vs-csv.sh SFC_BINARY SCENARIO_OR_EXPERIMENT [--set KEY=VALUE …]
#
# Runs the scenario twice (`--format csv`, `--format parquet`, with `output.flows_csv = true`
# and the given overrides) into $OUT (default: a new temp directory) and prints, per table,
# the file's size and the time it took to write: from the creation of its hidden temp file
# (the file's birth time, which the rename keeps) to its last write (its mtime). For
# `flows` this includes reading the records back from the run's spill file in id order,
# which both formats do. An experiment file (one with an `[experiment]` table, e.g.
# experiments/sfc-fig8.toml) is run as its `[scenario]`, the sweep's baseline point.
set -euo pipefail
sfc=${1:?usage: $0 SFC_BINARY SCENARIO_OR_EXPERIMENT [--set KEY=VALUE …]}
scenario=${2:?usage: $0 SFC_BINARY SCENARIO_OR_EXPERIMENT [--set KEY=VALUE …]}
shift 2
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
if grep -q '^\[experiment\]' "$scenario"; then
    # The `[scenario…]` tables, with the `scenario.` prefix taken off.
    awk '/^\[/ { keep = ($0 ~ /^\[\[?scenario[].]/) } keep' "$scenario" |
        sed -e 's/^\[scenario\]$//' -e 's/^\[\[scenario\./[[/' -e 's/^\[scenario\./[/' \
            >"$out/scenario.toml"
    scenario="$out/scenario.toml"
fi
for fmt in csv parquet; do
    rm -rf "${out:?}/$fmt"
    /usr/bin/time -f "$fmt: %e s wall, %M KB peak RSS" \
        "$sfc" run "$scenario" --out "$out/$fmt" --format "$fmt" \
        --set output.flows_csv=true "$@" >"$out/$fmt.log"
done
python3 - "$out" <<'EOF'
import json, os, subprocess, sys
out = sys.argv[1]
s = json.load(open(os.path.join(out, "csv", "summary.json")))
print(f"{s['flows_total']} flows, simulation {s['wall_seconds']:.1f} s (CSV run)")
print("| table | CSV bytes | Parquet bytes | CSV write s | Parquet write s |")
print("|---|---:|---:|---:|---:|")
def stat(p):
    if not os.path.exists(p):
        return None
    born, mod, size = subprocess.check_output(["stat", "-c", "%.9W %.9Y %s", p], text=True).split()
    return int(size), float(mod) - float(born)
for t in ["flows", "buffer", "throughput", "sender_throughput", "queues"]:
    c, p = stat(f"{out}/csv/{t}.csv"), stat(f"{out}/parquet/{t}.parquet")
    if c and p:
        print(f"| {t} | {c[0]:,} | {p[0]:,} | {c[1]:.3f} | {p[1]:.3f} |")
EOF
echo "outputs in $out"
