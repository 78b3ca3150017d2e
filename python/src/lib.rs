//! `sfc._sfc`, the native module of the `sfc` Python package: the simulator's own entry
//! points (the same code paths as `sfc run`, `sfc hpcc` and `sfc experiment run`), run on a
//! thread of their own while the calling thread waits with the GIL released, in short slices
//! between which Python's signal handlers run: Ctrl-C stops the simulation
//! ([`sfc::process::request_interrupt`]) and raises `KeyboardInterrupt`. The Python side
//! (`sfc/__init__.py`) only turns the output files into DataFrames.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

create_exception!(
    _sfc,
    SfcError,
    PyException,
    "An error of the simulator: bad input (its message names the file, line and key, as the \
     command line's does), or a run that could not complete."
);

/// How long the calling thread waits for the simulation between two looks at Python's
/// signals.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Stack of the simulation thread, bytes (the main thread's usual 8 MiB, with room).
const SIM_STACK_BYTES: usize = 16 << 20;

/// Run `f` on a thread of its own; wait for it with the GIL released, running Python's
/// signal handlers every [`SIGNAL_POLL`]. When one raises (Ctrl-C: `KeyboardInterrupt`), ask
/// the simulation to stop, wait for its thread, and raise that exception. An error of `f` is
/// an `SfcError`; a panic of `f` too, with its message.
fn interruptible<T: Send + 'static>(
    py: Python<'_>,
    f: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> PyResult<T> {
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::Builder::new()
        .name("sfc-run".into())
        .stack_size(SIM_STACK_BYTES)
        .spawn(move || {
            let _ = tx.send(f());
        })
        .map_err(|e| SfcError::new_err(format!("cannot start the simulation thread: {e}")))?;
    let mut rx = rx;
    loop {
        // The receiver is `Send`, not `Sync`: it goes to the waiting closure and back.
        let (got, back) = py.allow_threads(move || (rx.recv_timeout(SIGNAL_POLL), rx));
        rx = back;
        match got {
            Ok(r) => {
                let _ = py.allow_threads(|| handle.join());
                return r.map_err(SfcError::new_err);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Err(e) = py.check_signals() {
                    sfc::process::request_interrupt();
                    let _ = py.allow_threads(|| handle.join());
                    sfc::process::clear_interrupt();
                    return Err(e);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let why = match py.allow_threads(|| handle.join()) {
                    Err(p) => p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default(),
                    Ok(()) => String::new(),
                };
                return Err(SfcError::new_err(format!(
                    "internal error: the simulation panicked: {why}"
                )));
            }
        }
    }
}

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
/// against `dir`) with the `--set` overrides `sets`, writing its outputs into `out`, on
/// `threads` threads (`--threads`). Returns `(summary JSON, warnings)`;
/// `summary["failure"]` says whether the run failed (unfinished flows, a deadlock), as the
/// command line's exit status does; a run asked to use several threads that could not be
/// split says why in `summary["one_thread_because"]`, and in the warnings (which also say
/// when a network with fewer ToRs than `threads` used fewer threads).
#[pyfunction]
#[pyo3(signature = (text, label, dir, sets, out, threads=1))]
fn run_toml(
    py: Python<'_>,
    text: String,
    label: String,
    dir: String,
    sets: Vec<String>,
    out: String,
    threads: usize,
) -> PyResult<(String, Vec<String>)> {
    interruptible(py, move || -> Result<(String, Vec<String>), String> {
        let sc = sfc::scenario::from_str(&text, &label, Path::new(&dir), &sets)?;
        let mut warnings = sc.warnings.clone();
        let opts = sfc::report::RunOptions {
            out_dir: Some(PathBuf::from(&out)),
            progress: false,
            stream_results: false,
            on_deadlock: sfc::sim::OnDeadlock::Stop,
            threads,
        };
        let r = sfc::report::run(sc, &opts)?;
        warnings.extend(sfc::report::thread_notes(&r.summary, threads));
        let s = serde_json::to_string(&r.summary).map_err(|e| e.to_string())?;
        Ok((s, warnings))
    })
}

/// Run the HPCC ns-3 simulator config at `config` (paths inside relative to `cwd`), as `sfc
/// hpcc --threads THREADS` does. Returns the FCT output file's path (`None` without one).
#[pyfunction]
#[pyo3(signature = (config, cwd, threads=1))]
fn run_hpcc(
    py: Python<'_>,
    config: String,
    cwd: String,
    threads: usize,
) -> PyResult<Option<String>> {
    interruptible(py, move || -> Result<Option<String>, String> {
        let cwd = PathBuf::from(cwd);
        let path = PathBuf::from(&config);
        sfc::hpcc::run_config_in(&path, Some(&cwd), threads)?;
        let text = sfc::fsutil::read_text(&cwd.join(&path))?;
        let (c, _) = sfc::hpcc::HpccConfig::parse(&text, &config)?;
        let r = sfc::hpcc::resolve_with(&c, &cwd, true)?;
        Ok(r.fct_file.map(|p| p.display().to_string()))
    })
}

/// Run experiment `name` (built in, or a path to an experiment file), `quick` or at full
/// scale, `jobs` points at a time, each on `threads` threads, into `out` (`None`: the
/// command line's default). Returns the output directory.
#[pyfunction]
#[pyo3(signature = (name, quick, jobs, out=None, threads=1))]
fn run_experiment(
    py: Python<'_>,
    name: String,
    quick: bool,
    jobs: usize,
    out: Option<String>,
    threads: usize,
) -> PyResult<String> {
    interruptible(py, move || -> Result<String, String> {
        let exp = sfc::experiment::find_in(&name, None)?;
        let o = sfc::experiment::runner::RunOpts {
            quick,
            jobs: jobs.max(1),
            threads: threads.max(1),
            out: out.map(PathBuf::from),
            progress: false,
            child: None,
            ..Default::default()
        };
        let dir = sfc::experiment::runner::run(&exp, &o)?;
        Ok(dir.display().to_string())
    })
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
