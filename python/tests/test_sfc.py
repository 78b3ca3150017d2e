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


def test_experiment_returns_its_points(tmp_path):
    df = sfc.experiment("ndp-incast", quick=True, jobs=1, out=tmp_path / "exp")
    assert len(df) > 0
    assert (Path(df.attrs["out"]) / "REPORT.md").exists()
