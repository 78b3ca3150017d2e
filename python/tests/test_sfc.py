"""The Python package against the simulator: numbers derived by hand from the scenario,
and the same outputs as the command line."""

import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest

import sfc

ROOT = Path(__file__).resolve().parents[2]

# A 16:1 incast of 64 KB messages on a 17-host star (100 Gb/s, 1 µs links), no congestion
# control: every flow completes, the last one after 16 × 64 segments have crossed host 0's
# link (83 ns each at 100 Gb/s, HPCC framing, whole ns).
INCAST = """
name = "py-incast"
seed = 1
[topology]
kind = "star"
hosts = 17
host_rate = "100Gbps"
host_delay = "1us"
[buffer]
mode = "unlimited"
[cc]
kind = "none"
window = "none"
[[traffic]]
kind = "incast"
senders = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
receivers = [0]
size = "64KB"
at = "10us"
sync_window = "0us"
"""


def test_run_text_gives_the_flows_and_summary():
    r = sfc.run(INCAST)
    assert r.failure is None
    assert len(r.flows) == 16
    assert r.summary["flows_completed"] == 16
    assert (r.flows["size_bytes"] == 64000).all()
    # The first segments reach the switch at 10 µs + 83 ns (1,048 B at 100 Gb/s, HPCC
    # framing, whole ns) + 1 µs = 11,083 ns; host 0's port sends the 1,024 back to back, the
    # last from 11,083 + 1,023 × 83 = 95,992 ns, at host 0 at 95,992 + 83 + 1,000 = 97,075 ns;
    # its ACK (60 B: 4 ns) is at the switch at 98,079 ns and at its sender at 99,083 ns.
    last = (r.flows["start_ns"] + r.flows["fct_ns"]).max()
    assert last == 99_083


def test_dict_and_overrides_match_the_command_line(tmp_path):
    import tomllib

    doc = tomllib.loads(INCAST)
    r = sfc.run(doc, set={"buffer.mode": "lossy", "buffer.size": "512KB"}, out=tmp_path / "py")
    scen = tmp_path / "s.toml"
    scen.write_text(INCAST)
    subprocess.run(
        ["cargo", "run", "--release", "--quiet", "--manifest-path", str(ROOT / "Cargo.toml"), "--",
         "run", str(scen), "--out", str(tmp_path / "cli"),
         "--set", "buffer.mode=\"lossy\"", "--set", "buffer.size=\"512KB\""],
        check=True, capture_output=True)
    assert (tmp_path / "py" / "flows.csv").read_bytes() == (tmp_path / "cli" / "flows.csv").read_bytes()
    cli = json.loads((tmp_path / "cli" / "summary.json").read_text())
    assert r.summary["drops"] == cli["drops"] > 0


def test_slowdown_table_is_the_summarys_bins():
    r = sfc.run(INCAST)
    t = r.slowdown(p=[50, 99])
    assert list(t.columns) == ["lo_bytes", "hi_bytes", "count", "p50", "p99"]
    assert t["count"].sum() == 16
    assert t["p99"].tolist() == [b["slowdown"]["p99"] for b in r.summary["bins"]]


def test_bad_input_raises_with_the_key():
    with pytest.raises(sfc.SfcError, match="buffer.size"):
        sfc.run(INCAST, set={"buffer.size": "lots"})
    with pytest.raises(sfc.SfcError, match="no such scenario file"):
        sfc.run("does-not-exist.toml")


def test_default_scenario_variants():
    vs = sfc.variants(ROOT / "scenarios" / "default.toml")
    assert "sfc" in {k.lower() for k in vs}


# Two ToRs of four hosts under two spines, HPCC, FB_Hadoop at 60 % load for 500 µs: a run
# that splits over two threads (one partition per ToR).
LEAF_SPINE = """
name = "py-leaf-spine"
seed = 3
[topology]
kind = "leaf_spine"
spines = 2
tors = 2
hosts_per_tor = 4
host_rate = "100Gbps"
host_delay = "1us"
fabric_rate = "100Gbps"
fabric_delay = "1us"
[buffer]
mode = "lossy"
size = "4MiB"
[cc]
kind = "hpcc"
[[traffic]]
kind = "poisson"
cdf = "fb_hadoop"
load = 0.6
duration = "500us"
"""


def test_threads_give_the_same_run(tmp_path, capfd):
    one = sfc.run(LEAF_SPINE, out=tmp_path / "one")
    two = sfc.run(LEAF_SPINE, out=tmp_path / "two", threads=2)
    assert "parallel" not in one.summary
    assert two.summary["parallel"]["threads"] == 2
    assert two.summary["parallel"]["crossings"] > 0
    assert one.summary["flows_completed"] == two.summary["flows_completed"] > 10
    for f in ["flows.csv", "fct.txt", "buffer.csv"]:
        assert (tmp_path / "one" / f).read_bytes() == (tmp_path / "two" / f).read_bytes(), f
    # A one-switch star cannot be split: it runs on one thread, with a warning saying why
    # (once: the command line's note on stderr is not printed too).
    capfd.readouterr()
    with pytest.warns(UserWarning, match="one thread"):
        r = sfc.run(INCAST, threads=2)
    assert "ToR" in r.summary["one_thread_because"]
    assert "one thread" not in capfd.readouterr().err
    assert r.flows["fct_ns"].tolist() == sfc.run(INCAST).flows["fct_ns"].tolist()


def test_hpcc_config_runs(tmp_path):
    data = ROOT / "tests" / "data" / "hpcc"
    (tmp_path / "topology.txt").write_text((data / "star2_100g.txt").read_text())
    (tmp_path / "flow.txt").write_text((data / "flows_sizes.txt").read_text())
    (tmp_path / "config.txt").write_text(
        "TOPOLOGY_FILE topology.txt\nFLOW_FILE flow.txt\nFCT_OUTPUT_FILE fct.txt\n"
        "PFC_OUTPUT_FILE pfc.txt\nCC_MODE none\nHAS_WIN 0\n")
    fct = sfc.hpcc(tmp_path / "config.txt", cwd=tmp_path)
    # HPCC-sim's own measurements of these five flows (tests/hpcc_compat.rs).
    assert sorted(fct["size_bytes"]) == [1000, 2000, 10000, 100000, 1000000]
    assert dict(zip(fct["size_bytes"], fct["fct_ns"]))[1000] == 4174
    # `threads` reaches `sfc hpcc --threads`: this one-switch star runs on one thread (a note
    # on stderr), with the same FCTs.
    fct2 = sfc.hpcc(tmp_path / "config.txt", cwd=tmp_path, threads=2)
    assert fct2.equals(fct)


def test_experiment_returns_its_points(tmp_path):
    df = sfc.experiment("ndp-incast", quick=True, jobs=1, out=tmp_path / "exp")
    assert len(df) > 0
    assert (Path(df.attrs["out"]) / "REPORT.md").exists()


# Every table: Poisson background stopped before it drains (unfinished flows: empty `fct_ns`
# and `slowdown`), two monitored queues, per-sender goodput.
TABLES = """
name = "py-tables"
seed = 3
stop = "120us"
[topology]
kind = "star"
hosts = 4
host_rate = "100Gbps"
host_delay = "1us"
[buffer]
mode = "lossy"
size = "4MiB"
[cc]
kind = "dcqcn"
[output]
queues = [[4, 0], [4, 3]]
queue_interval = "500ns"
sender_throughput = true
[[traffic]]
kind = "poisson"
cdf = "fb_hadoop"
load = 0.5
duration = "100us"
[[traffic]]
kind = "long_lived"
pairs = [[0, 1]]
size = "3MB"
start = "5us"
"""


def test_parquet_tables_equal_the_csv_tables(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    c = sfc.run(TABLES, out=tmp_path / "csv")
    p = sfc.run(TABLES, out=tmp_path / "pq", format="parquet")
    for t in ["flows", "buffer", "throughput", "sender_throughput", "queues"]:
        assert not (tmp_path / "pq" / f"{t}.csv").exists()
        assert not (tmp_path / "csv" / f"{t}.parquet").exists()
        # pyarrow's CSV parser rounds decimals correctly: times compare bit for bit.
        csv = pd.read_csv(tmp_path / "csv" / f"{t}.csv", engine="pyarrow")
        par = pd.read_parquet(tmp_path / "pq" / f"{t}.parquet")
        assert list(csv.columns) == list(par.columns), t
        assert len(par) > 0, t
        pd.testing.assert_frame_equal(csv, par, check_exact=True, check_dtype=False)
    flows = p.flows
    assert flows["fct_ns"].isna().any() and flows["fct_ns"].notna().any()
    pd.testing.assert_frame_equal(c.flows, flows, check_dtype=False)
    pd.testing.assert_frame_equal(c.queues, p.queues, check_dtype=False)
    # Typed columns: integers as int64, times and ratios as doubles, compressed.
    f = pq.ParquetFile(tmp_path / "pq" / "flows.parquet")
    types = {x.name: str(x.type) for x in f.schema_arrow}
    assert types["id"] == types["size_bytes"] == types["completed"] == "int64"
    assert types["start_ns"] == types["fct_ns"] == types["slowdown"] == "double"
    assert f.metadata.row_group(0).column(0).compression == "SNAPPY"
    assert p.summary["flows_total"] == len(flows) == len(c.flows)


# A run of minutes: a 64-host leaf–spine at 50 % load for 20 ms of arrivals.
LONG_RUN = f"""
import sys, time
import sfc
print("ready", flush=True)
t0 = time.time()
try:
    sfc.run({str(ROOT / "scenarios" / "default.toml")!r}, variant="none", out=sys.argv[1],
            set={{"traffic.0.duration": "20ms", "traffic.1.duration": "20ms"}})
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    # The next run runs: the stop request ended with the interrupted run.
    r = sfc.run({INCAST!r})
    print("again", r.summary["flows_completed"], flush=True)
    raise
"""


def test_ctrl_c_interrupts_a_run(tmp_path):
    import signal
    import sys
    import time

    out = tmp_path / "long"
    # The child starts with SIGINT at its default disposition, as in a terminal, so that
    # Python installs its KeyboardInterrupt handler even when this runner ignores SIGINT (a
    # background job of a non-interactive shell does, and a child inherits that).
    proc = subprocess.Popen([sys.executable, "-c", LONG_RUN, str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(1.5)
        assert proc.poll() is None, proc.stderr.read()
        t = time.time()
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
        waited = time.time() - t
    finally:
        proc.kill()
    assert "interrupted" in stdout, (stdout, stderr)
    assert "again 16" in stdout, (stdout, stderr)
    assert "finished" not in stdout
    assert "KeyboardInterrupt" in stderr
    assert proc.returncode != 0
    assert waited < 5, f"{waited:.1f} s from SIGINT to exit"
    # No summary (the set is incomplete) and no temporary file left.
    names = [p.name for p in out.iterdir()] if out.exists() else []
    assert "summary.json" not in names
    assert not [n for n in names if ".tmp-" in n or n.startswith(".sfc-records-")], names
