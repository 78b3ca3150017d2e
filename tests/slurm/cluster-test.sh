#!/usr/bin/env bash
# Sharded experiments on a real Slurm: bring up a single-node Slurm (munged, slurmctld and
# slurmd in the background, state under a temporary directory), submit a --quick
# experiment as a 3-task job array plus the dependent merge job (`sfc experiment slurm
# --submit`), wait for both, and check that the merged CSVs, plots, REPORT.md and claims.csv
# equal those of the same experiment run on this machine without shards, byte for byte
# (both with --no-timings).
#
#   tests/slurm/cluster-test.sh [SFC_BINARY]     # as root; default target/release/sfc
#
# Needs Debian's `slurm-wlm` and `munge` (apt-get install -y slurm-wlm munge). Without
# `sbatch` it prints that it was skipped and exits 0 (SFC_REQUIRE_SLURM=1 makes that an
# error). With SFC_SLURM_EXISTING=1 it uses the Slurm already configured on the machine
# (its default partition) instead of starting one.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SFC=$(realpath "${1:-$ROOT/target/release/sfc}")
EXPERIMENT=${SFC_SLURM_EXPERIMENT:-tcd-victim}
SHARDS=3

skip() {
    if [ "${SFC_REQUIRE_SLURM:-0}" = 1 ]; then
        echo "slurm test: FAILED: $1 (SFC_REQUIRE_SLURM=1)" >&2
        exit 1
    fi
    echo "slurm test: SKIPPED: $1"
    exit 0
}
command -v sbatch >/dev/null 2>&1 || skip "sbatch not found (apt-get install -y slurm-wlm munge)"

T=$(mktemp -d /tmp/sfc-slurm.XXXXXX)
PIDS=()
cleanup() {
    local rc=$?
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    if [ "$rc" -ne 0 ]; then
        echo "--- logs (kept in $T)" >&2
        tail -n 20 "$T"/*.log "$T"/out/slurm/*.log 2>/dev/null >&2 || true
    else
        rm -rf "$T"
    fi
    exit "$rc"
}
trap cleanup EXIT

if [ "${SFC_SLURM_EXISTING:-0}" != 1 ]; then
    [ "$(id -u)" -eq 0 ] || skip "starting a private Slurm needs root (or set SFC_SLURM_EXISTING=1)"
    for b in munged slurmctld slurmd; do
        command -v "$b" >/dev/null 2>&1 || [ -x "/usr/sbin/$b" ] || skip "$b not found"
    done
    export PATH="$PATH:/usr/sbin"
    # munge: the key the package made, a private socket and state.
    mkdir -p "$T/munge"
    if [ ! -s /etc/munge/munge.key ]; then
        mungekey --create --keyfile "$T/munge/munge.key" 2>/dev/null ||
            dd if=/dev/urandom of="$T/munge/munge.key" bs=1 count=1024 2>/dev/null
        KEY="$T/munge/munge.key"
    else
        KEY=/etc/munge/munge.key
    fi
    chmod 711 "$T/munge"
    cp "$KEY" "$T/munge/key" && chmod 400 "$T/munge/key"
    SOCK="$T/munge/munge.socket"
    munged --force --foreground --key-file="$T/munge/key" --socket="$SOCK" \
        --pid-file="$T/munge/munged.pid" --log-file="$T/munged.log" \
        --seed-file="$T/munge/seed" >"$T/munged.out" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
    [ -S "$SOCK" ] || { echo "munged did not start" >&2; exit 1; }
    H=$(hostname -s)
    mkdir -p "$T/state" "$T/spool"
    cat >"$T/slurm.conf" <<CONF
ClusterName=sfctest
SlurmctldHost=$H
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCK
SlurmctldPort=${SFC_SLURM_PORT:-16817}
SlurmdPort=$(( ${SFC_SLURM_PORT:-16817} + 1 ))
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
MinJobAge=600
NodeName=$H CPUs=$(nproc) State=UNKNOWN
PartitionName=sfc Nodes=$H Default=YES MaxTime=INFINITE State=UP
CONF
    export SLURM_CONF="$T/slurm.conf"
    slurmctld -D -f "$SLURM_CONF" >"$T/slurmctld.out" 2>&1 &
    PIDS+=($!)
    slurmd -D -f "$SLURM_CONF" >"$T/slurmd.out" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 100); do
        sinfo -h -o %T 2>/dev/null | grep -q idle && break
        sleep 0.2
    done
    sinfo -h -o %T 2>/dev/null | grep -q idle || { echo "the Slurm node did not come up" >&2; sinfo >&2 || true; exit 1; }
fi
echo "slurm test: $(sinfo --version), node up; $EXPERIMENT --quick in $SHARDS shards"

# The reference: the same experiment on this machine, without shards.
"$SFC" experiment run "$EXPERIMENT" --quick --jobs 2 --no-timings --out "$T/local" >/dev/null 2>"$T/local.log"

# The sharded run: array + merge, submitted, then waited for.
cd "$T"
"$SFC" experiment slurm "$EXPERIMENT" --quick --out "$T/out" --shards "$SHARDS" --cpus-per-task 1 \
    --no-timings --submit | tee "$T/submit.txt"
MERGE=$(sed -n 's/.*merge job \([0-9]*\).*/\1/p' "$T/submit.txt")
[ -n "$MERGE" ] || { echo "no merge job id in the output" >&2; exit 1; }
state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -1; }
deadline=$(( $(date +%s) + ${SFC_SLURM_TIMEOUT:-300} ))
while :; do
    s=$(state "$MERGE")
    case "$s" in
        COMPLETED) break ;;
        FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE)
            echo "merge job $MERGE ended $s" >&2; exit 1 ;;
    esac
    if [ "$(date +%s)" -gt "$deadline" ]; then
        echo "timed out waiting for merge job $MERGE (state ${s:-unknown})" >&2
        squeue >&2 || true
        exit 1
    fi
    sleep 1
done
ran=$(ls "$T/out/slurm"/shard-*.log | wc -l)
[ "$ran" -eq "$SHARDS" ] || { echo "expected $SHARDS shard logs, found $ran" >&2; exit 1; }

# Byte for byte: every file the report consists of, and every point's results (the
# points' summary.json hold their own wall time and memory: compared without them).
n=0
for f in "$T/local"/*; do
    b=$(basename "$f")
    [ -f "$f" ] || continue
    cmp "$f" "$T/out/$b" || { echo "differs: $b" >&2; exit 1; }
    n=$((n + 1))
done
for d in "$T/local/points"/*; do
    for f in "$d"/*; do
        b=$(basename "$f"); p=$(basename "$d")
        [ "$b" = summary.json ] && continue
        cmp "$f" "$T/out/points/$p/$b" || { echo "differs: points/$p/$b" >&2; exit 1; }
        n=$((n + 1))
    done
done
echo "slurm test: PASSED: merged outputs of $SHARDS Slurm array tasks equal the unsharded run ($n files identical)"
