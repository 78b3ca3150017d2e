#!/usr/bin/env bash
# Run a build of `sfc` over every input whose outputs must stay bit-identical across a
# refactoring: every scenario in scenarios/, the built-in default, every experiment's --quick
# run, and `sfc hpcc` on the test configs (several CC modes, lossless PFC, SFC keys).
#
#   scripts/snapshot-outputs.sh BIN OUTDIR      # e.g. target/release/sfc /tmp/snap-new
#   scripts/compare-outputs.py OLD NEW           # then compare two snapshots
#
# Set SNAP_SKIP_EXPERIMENTS=1 to skip the (≈5 min) experiment runs.
set -euo pipefail
BIN=$(realpath "$1")
OUT=$2
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
cd "$ROOT"
for s in scenarios/*.toml; do
  n=$(basename "$s" .toml)
  "$BIN" run "$s" --out "$OUT/scenario-$n" >"$OUT/scenario-$n.stdout" 2>/dev/null
done
"$BIN" run --out "$OUT/default-builtin" >"$OUT/default-builtin.stdout" 2>/dev/null
# HPCC drop-in configs on the test fixtures.
H="$ROOT/tests/data/hpcc"
hp() { # name topology flows extra-lines
  local d="$OUT/hpcc-$1"; mkdir -p "$d"
  cp "$H/$2" "$d/topology.txt"; cp "$H/$3" "$d/flow.txt"
  printf 'TOPOLOGY_FILE topology.txt\nFLOW_FILE flow.txt\nFCT_OUTPUT_FILE fct.txt\nPFC_OUTPUT_FILE pfc.txt\nSUMMARY_FILE summary.json\nBUFFER_MON_FILE buffer.txt\n%b' "$4" >"$d/config.txt"
  (cd "$d" && "$BIN" hpcc config.txt >stdout.txt 2>/dev/null)
}
hp none-lossy star2_100g.txt flows_sizes.txt 'CC_MODE none\nHAS_WIN 0\nBUFFER_MODE lossy\n'
hp none-25g star2_25g_receiver.txt flows_25g.txt 'CC_MODE none\nHAS_WIN 0\nBUFFER_MODE lossy\n'
for m in 1 3 7 8; do
  hp "cc$m-incast-pfc" star3_100g.txt flows_incast.txt "CC_MODE $m\nHAS_WIN 1\nVAR_WIN 1\nBUFFER_SIZE 1\nKMAX_MAP 1 100000000000 160\nKMIN_MAP 1 100000000000 40\nPMAX_MAP 1 100000000000 0.2\n"
done
hp sfc-incast star3_100g.txt flows_incast.txt 'CC_MODE 3\nHAS_WIN 1\nVAR_WIN 1\nBUFFER_MODE lossy\nSFC_MODE sfc\nSFC_QTH_BYTES 20000\nSFC_QTG_BYTES 10000\n'
hp sfcp-incast star3_100g.txt flows_incast.txt 'CC_MODE 1\nBUFFER_SIZE 2\nSFC_MODE sfcp\nSFC_QTH_BYTES 20000\n'
hp egress-incast star3_100g.txt flows_incast.txt 'CC_MODE none\nHAS_WIN 0\nBUFFER_MODE lossy\nSFC_MODE egress\nSFC_QTH_BYTES 20000\n'
hp onramp-incast star3_100g.txt flows_incast.txt 'CC_MODE 1\nBUFFER_MODE lossy\nONRAMP 1\n'
hp repo-mix hpcc_repo_topology.txt hpcc_repo_flow.txt 'CC_MODE 1\nSIMULATOR_STOP_TIME 2.001\n'
if [ "${SNAP_SKIP_EXPERIMENTS:-0}" != 1 ]; then
  for e in experiments/*.toml; do
    n=$(basename "$e" .toml)
    "$BIN" experiment run "$n" --quick --jobs "${JOBS:-2}" --out "$OUT/exp-$n" >/dev/null 2>&1 || echo "experiment $n failed" >&2
  done
fi
echo "snapshot written to $OUT"
