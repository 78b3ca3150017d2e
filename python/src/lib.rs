//! `sfc._sfc`, the native module of the `sfc` Python package: the simulator's own entry
//! points (the same code paths as `sfc run`, `sfc hpcc` and `sfc experiment run`), called
//! with the GIL released. The Python side (`sfc/__init__.py`) only turns the output files
//! into DataFrames.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use std::path::{Path, PathBuf};

create_exception!(
    _sfc,
    SfcError,
    PyException,
    "An error of the simulator: bad input (its message names the file, line and key, as the \
     command line's does), or a run that could not complete."
);

/// The `[[compare]]` variants of the scenario `text` (`label` names it in messages):
/// `[(name, [override, …]), …]`.
#[pyfunction]
fn variants(text: &str, label: &str) -> PyResult<Vec<(String, Vec<String>)>> {
    sfc::scenario::variants(text, label).map_err(SfcError::new_err)
}

/// A scenario given as JSON (a Python dict) written as TOML text.
#[pyfunction]
fn toml_from_json(json: &str) -> PyResult<String> {
    let v: serde_json::Value =
        serde_json::from_str(json).map_err(|e| SfcError::new_err(e.to_string()))?;
    toml::to_string(&v)
        .map_err(|e| SfcError::new_err(format!("the scenario dict is not TOML: {e}")))
}

/// Run the scenario `text` (`label` names it in messages; relative input paths resolve
/// against `dir`) with the `--set` overrides `sets`, writing its outputs into `out`.
/// Returns `(summary JSON, warnings)`; `summary["failure"]` says whether the run failed
/// (unfinished flows, a deadlock), as the command line's exit status does.
#[pyfunction]
fn run_toml(
    py: Python<'_>,
    text: String,
    label: String,
    dir: String,
    sets: Vec<String>,
    out: String,
) -> PyResult<(String, Vec<String>)> {
    py.allow_threads(move || -> Result<(String, Vec<String>), String> {
        let sc = sfc::scenario::from_str(&text, &label, Path::new(&dir), &sets)?;
        let warnings = sc.warnings.clone();
        let opts = sfc::report::RunOptions {
            out_dir: Some(PathBuf::from(&out)),
            progress: false,
            stream_results: false,
            on_deadlock: sfc::sim::OnDeadlock::Stop,
        };
        let r = sfc::report::run(sc, &opts)?;
        let s = serde_json::to_string(&r.summary).map_err(|e| e.to_string())?;
        Ok((s, warnings))
    })
    .map_err(SfcError::new_err)
}

/// Run the HPCC ns-3 simulator config at `config` (paths inside relative to `cwd`), as `sfc
/// hpcc` does. Returns the FCT output file's path (`None` without one).
#[pyfunction]
fn run_hpcc(py: Python<'_>, config: String, cwd: String) -> PyResult<Option<String>> {
    py.allow_threads(move || -> Result<Option<String>, String> {
        let cwd = PathBuf::from(cwd);
        let path = PathBuf::from(&config);
        sfc::hpcc::run_config_with(&path, Some(&cwd), true)?;
        let text = sfc::fsutil::read_text(&cwd.join(&path))?;
        let (c, _) = sfc::hpcc::HpccConfig::parse(&text, &config)?;
        let r = sfc::hpcc::resolve_with(&c, &cwd, true)?;
        Ok(r.fct_file.map(|p| p.display().to_string()))
    })
    .map_err(SfcError::new_err)
}

/// Run experiment `name` (built in, or a path to an experiment file), `quick` or at full
/// scale, `jobs` points at a time, into `out` (`None`: the command line's default).
/// Returns the output directory.
#[pyfunction]
#[pyo3(signature = (name, quick, jobs, out=None))]
fn run_experiment(
    py: Python<'_>,
    name: String,
    quick: bool,
    jobs: usize,
    out: Option<String>,
) -> PyResult<String> {
    py.allow_threads(move || -> Result<String, String> {
        let exp = sfc::experiment::find_in(&name, None)?;
        let o = sfc::experiment::runner::RunOpts {
            quick,
            jobs: jobs.max(1),
            out: out.map(PathBuf::from),
            progress: false,
            child: None,
            ..Default::default()
        };
        let dir = sfc::experiment::runner::run(&exp, &o)?;
        Ok(dir.display().to_string())
    })
    .map_err(SfcError::new_err)
}

/// The version of the simulator.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The module.
#[pymodule]
fn _sfc(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SfcError", m.py().get_type::<SfcError>())?;
    m.add_function(wrap_pyfunction!(variants, m)?)?;
    m.add_function(wrap_pyfunction!(toml_from_json, m)?)?;
    m.add_function(wrap_pyfunction!(run_toml, m)?)?;
    m.add_function(wrap_pyfunction!(run_hpcc, m)?)?;
    m.add_function(wrap_pyfunction!(run_experiment, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
