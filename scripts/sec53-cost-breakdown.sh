#!/bin/bash
# Where the §5.3 benchmark's cost per packet-hop comes from: runs the
# `sec53-hadoop50-incast-none` scenario (512 hosts, FB_Hadoop 50 % + 8 % 128:1 incasts, HPCC,
# IRN, 32 MiB lossy buffers, 2 ms of arrivals) and variants of it that change one factor at a
# time, and prints wall-clock ns per packet-hop for each (one run each: this is a decomposition,
# not a benchmark; `sfc bench` is the benchmark).
# usage: scripts/sec53-cost-breakdown.sh [SFC_BINARY]   (default target/release/sfc)
set -euo pipefail
BIN=${1:-target/release/sfc}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
"$BIN" bench --print-scenario sec53-hadoop50-incast-none > "$DIR/s.toml"
NOINC=(--set 'traffic.1.duration="1ns"')
run() {
    local label=$1
    shift
    "$BIN" run "$DIR/s.toml" --no-output --json "$@" 2>/dev/null | python3 -c "
import json, sys
d = json.load(sys.stdin)
print('%-66s %6.0f ns/hop  %5.2f events/hop  %8d packets alive at peak  %5.1f s' % (
    sys.argv[1], 1e9 * d['wall_seconds'] / d['packet_hops'], d['events'] / d['packet_hops'],
    d['packets_peak_live'], d['wall_seconds']))" "$label"
}
run "the benchmark (32 MiB buffers)"
run "4 MiB buffers" --set 'buffer.size="4MiB"'
run "1 MiB buffers" --set 'buffer.size="1MiB"'
run "no incast" "${NOINC[@]}"
run "no incast, no CC" "${NOINC[@]}" --set 'cc.kind="none"'
run "no incast, no CC, WebSearch 30 % (the fat-tree bench's traffic)" "${NOINC[@]}" --set 'cc.kind="none"' --set 'traffic.0.cdf="websearch"' --set traffic.0.load=0.3
run "no incast, HPCC, WebSearch 30 %" "${NOINC[@]}" --set 'traffic.0.cdf="websearch"' --set traffic.0.load=0.3
SFC_BENCH_ONE=fattree320-websearch30 "$BIN" bench 2>/dev/null | tail -1 | python3 -c "
import json, sys
d = json.loads(sys.stdin.read())
print('%-66s %6.0f ns/hop  (sfc bench, same binary)' % ('fat tree: fattree320-websearch30', d['ns_per_packet_hop']))"
