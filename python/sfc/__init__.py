"""sfc: a packet-level datacenter network simulator, from Python.

The simulation runs in the same Rust code as the ``sfc`` command line (``sfc run``,
``sfc hpcc``, ``sfc experiment run``), on a thread of its own with the GIL released; Ctrl-C
stops it and raises ``KeyboardInterrupt``. This module only reads the output files (CSV or
Parquet) into pandas DataFrames.

>>> import sfc
>>> r = sfc.run("scenarios/default.toml")
>>> r.flows.describe()
>>> r.slowdown(p=[50, 99])
"""

from __future__ import annotations

import json
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

import pandas as pd

from . import _sfc
from ._sfc import SfcError

__all__ = ["run", "hpcc", "experiment", "Result", "SfcError", "variants", "__version__"]

__version__: str = _sfc.version()

Scenario = Union[str, os.PathLike, Mapping[str, Any]]


def _scenario_text(scenario: Scenario) -> "tuple[str, str, str]":
    """(TOML text, label for messages, directory relative paths resolve against)."""
    if isinstance(scenario, Mapping):
        return _sfc.toml_from_json(json.dumps(scenario)), "<dict>", os.getcwd()
    s = os.fspath(scenario)
    if "\n" not in s and Path(s).is_file():
        p = Path(s)
        return p.read_text(), str(p), str(p.parent.resolve())
    if "\n" in s or "=" in s:
        return s, "<text>", os.getcwd()
    raise SfcError(f"{s}: no such scenario file")


def _set_args(set: Union[None, Mapping[str, Any], Iterable[str]]) -> List[str]:
    """``--set`` overrides from a dict (values written as TOML) or a list of ``key=value``."""
    if set is None:
        return []
    if isinstance(set, Mapping):
        out = []
        for k, v in set.items():
            if isinstance(v, bool):
                val = "true" if v else "false"
            elif isinstance(v, (int, float)):
                val = repr(v)
            else:  # strings quoted, lists as arrays: JSON's spelling is TOML's here
                val = json.dumps(v)
            out.append(f"{k}={val}")
        return out
    return list(set)


def variants(scenario: Scenario) -> Dict[str, List[str]]:
    """The scenario's ``[[compare]]`` variants: name -> its overrides."""
    text, label, _ = _scenario_text(scenario)
    return {name: sets for name, sets in _sfc.variants(text, label)}


class Result:
    """The outputs of one run: ``summary`` (dict, ``summary.json``) and DataFrames read
    from the output directory on first use: ``flows`` (``flows.csv``, one row per flow),
    ``buffer``, ``throughput``, ``queues``, ``links``. A run with ``output.format =
    "parquet"`` wrote ``flows.parquet`` etc. instead: those are read (with pyarrow), with the
    same columns and values."""

    def __init__(self, out: Path, summary: Dict[str, Any], keep: Any = None):
        self.out = Path(out)
        self.summary: Dict[str, Any] = summary
        self._keep = keep  # a TemporaryDirectory holding the outputs, if any
        self._cache: Dict[str, pd.DataFrame] = {}

    def _table(self, name: str) -> pd.DataFrame:
        if name not in self._cache:
            p = self.out / name
            pq = p.with_suffix(".parquet")
            if pq.exists():
                self._cache[name] = pd.read_parquet(pq)
            elif p.exists():
                self._cache[name] = pd.read_csv(p)
            else:
                raise SfcError(f"{p}: not written by this run")
        return self._cache[name]

    @property
    def flows(self) -> pd.DataFrame:
        """One row per flow: sizes, times (ns), FCT, slowdown, retransmissions, pauses."""
        return self._table("flows.csv")

    @property
    def buffer(self) -> pd.DataFrame:
        """Shared-buffer occupancy per switch per interval (``buffer.csv``)."""
        return self._table("buffer.csv")

    @property
    def throughput(self) -> pd.DataFrame:
        """Receiver goodput per 100 µs interval (``throughput.csv``)."""
        return self._table("throughput.csv")

    @property
    def queues(self) -> pd.DataFrame:
        """Monitored egress queues (``queues.csv``; only with ``output.queues``)."""
        return self._table("queues.csv")

    @property
    def links(self) -> pd.DataFrame:
        """Bytes sent and utilization of every link direction (``links.csv``)."""
        return self._table("links.csv")

    @property
    def failure(self) -> Optional[str]:
        """Why the run failed (unfinished flows, a deadlock), or None."""
        return self.summary.get("failure")

    def slowdown(self, by: str = "size_bin", p: Sequence[float] = (50, 95, 99)) -> pd.DataFrame:
        """Slowdown percentiles as the simulator computed them (``summary.json``): per flow-size
        bin (``by="size_bin"``, the bins of ``output.size_bins``) or per destination port
        (``by="dport"``); ``p`` from 50, 95, 99, 99.9 (and ``"mean"``)."""
        keys = {50: "p50", 95: "p95", 99: "p99", 99.9: "p999", "mean": "mean"}
        cols = []
        for q in p:
            if q not in keys:
                raise SfcError(f"slowdown: p={q!r}: one of 50, 95, 99, 99.9, 'mean'")
            cols.append(keys[q])
        if by == "size_bin":
            rows = [
                {"lo_bytes": b["lo_bytes"], "hi_bytes": b["hi_bytes"], "count": b["count"],
                 **{c: b["slowdown"][c] for c in cols}}
                for b in self.summary["bins"]
            ]
        elif by == "dport":
            rows = [
                {"dport": d["dport"], "count": d["flows_completed"],
                 **{c: d["slowdown"][c] for c in cols}}
                for d in self.summary["by_dport"]
            ]
        else:
            raise SfcError(f"slowdown: by={by!r}: `size_bin` or `dport`")
        return pd.DataFrame(rows)

    def __repr__(self) -> str:
        s = self.summary
        return (f"<sfc.Result {s.get('name')!r}: {s.get('flows_completed')}/"
                f"{s.get('flows_total')} flows, P99 slowdown "
                f"{(s.get('slowdown') or {}).get('p99')}, out={str(self.out)!r}>")


def run(scenario: Scenario, set: Union[None, Mapping[str, Any], Iterable[str]] = None,
        out: Union[None, str, os.PathLike] = None, variant: Optional[str] = None,
        format: Optional[str] = None, threads: int = 1) -> Result:
    """Run a scenario: a TOML file's path, TOML text, or a dict of the same tables.

    ``set`` overrides keys as ``--set`` does (a dict ``{"buffer.size": "16MB"}`` or a list of
    ``"key=value"``); ``variant`` applies one of the scenario's ``[[compare]]`` variants first.
    Outputs go to ``out`` (default: a temporary directory kept as long as the Result), their
    tables as ``format`` says (``"csv"`` or ``"parquet"``; default: the scenario's
    ``output.format``, else CSV). ``threads`` > 1 splits the one run over that many threads
    (``--threads``): the same outputs as one thread's; a run that cannot be split runs on one
    with a warning saying why. Errors raise ``SfcError`` with the command line's
    file:line:key messages; warnings are Python warnings. The GIL is released while the
    simulation runs; Ctrl-C stops it and raises ``KeyboardInterrupt``."""
    text, label, base = _scenario_text(scenario)
    sets: List[str] = []
    if variant is not None:
        vs = dict(_sfc.variants(text, label))
        if variant not in vs:
            raise SfcError(f"{label}: no [[compare]] variant named {variant!r} (has {sorted(vs)})")
        sets += vs[variant]
    sets += _set_args(set)
    if format is not None:
        sets.append(f"output.format={json.dumps(format)}")
    keep = None
    if out is None:
        keep = tempfile.TemporaryDirectory(prefix="sfc-")
        out = keep.name
    summary, warns = _sfc.run_toml(text, label, base, sets, os.fspath(out), threads)
    for w in warns:
        warnings.warn(w, stacklevel=2)
    return Result(Path(out), json.loads(summary), keep)


FCT_COLUMNS = ["sip", "dip", "sport", "dport", "size_bytes", "start_ns", "fct_ns", "standalone_fct_ns"]


def hpcc(config: Union[str, os.PathLike], cwd: Union[None, str, os.PathLike] = None,
         threads: int = 1) -> pd.DataFrame:
    """Run an HPCC ns-3 simulator ``config.txt`` as ``sfc hpcc --threads THREADS`` does (paths
    inside relative to ``cwd``, default the current directory); returns its FCT output file as
    a DataFrame (HPCC-sim's columns: source and destination IP as hex, ports, size, start, FCT
    and standalone FCT in ns). Ctrl-C stops the run and raises ``KeyboardInterrupt``."""
    fct = _sfc.run_hpcc(os.fspath(config), os.fspath(cwd or os.getcwd()), threads)
    if fct is None:
        return pd.DataFrame(columns=FCT_COLUMNS)
    p = Path(fct) if Path(fct).is_absolute() else Path(cwd or os.getcwd()) / fct
    return pd.read_csv(p, sep=" ", header=None, names=FCT_COLUMNS, dtype={0: str, 1: str})


def experiment(name: str, quick: bool = True, jobs: int = 1,
               out: Union[None, str, os.PathLike] = None, threads: int = 1) -> pd.DataFrame:
    """Run a paper experiment (``sfc experiment run NAME --jobs JOBS --threads THREADS``; built
    in, or a path to a file) and return its points as one DataFrame (``results.csv``);
    ``.attrs["out"]`` is the output directory, whose REPORT.md, plots and ``claims.csv`` are
    the command line's. Ctrl-C stops the sweep (no further point starts) and raises
    ``KeyboardInterrupt``."""
    d = _sfc.run_experiment(name, quick, jobs, None if out is None else os.fspath(out), threads)
    df = pd.read_csv(Path(d) / "results.csv")
    df.attrs["out"] = d
    return df
