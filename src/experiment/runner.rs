//! Running an experiment: expand the grid into points, run them in parallel (resuming points
//! whose results are complete), aggregate CSVs, draw plots, write `REPORT.md`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use super::score::{ClaimRecord, Tally};
use super::{Better, Claim, ClaimKind, Experiment, Plot};
use crate::metrics::output::write_atomic;
use crate::plot::{Chart, ChartKind, Series};

/// One run of the grid.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Directory-safe id.
    pub id: String,
    /// Series name.
    pub series: String,
    /// Axis values, in axis order: (key, value).
    pub axes: Vec<(String, toml::Value)>,
    /// Seed (if the sweep lists seeds).
    pub seed: Option<u64>,
    /// All overrides applied, in order.
    pub sets: Vec<String>,
    /// Fingerprint of what the point runs: the experiment's `[scenario]` text and this
    /// build's version (FNV-1a, hex). A finished point is reused only if it matches, so an
    /// edited experiment file or a new release reruns its points instead of reporting stale
    /// results.
    pub fingerprint: String,
}

/// FNV-1a (64 bit) of `parts`, each followed by a 0 byte; stable across builds and platforms.
/// Identity of this `sfc` build: a hash of its executable's bytes, part of every point's
/// fingerprint so that a sweep resumed with another build (a fix, a new model) re-runs its
/// points instead of mixing results of two simulators in one report (the crate version alone
/// does not change between commits). "unknown" when the executable cannot be read.
fn build_id() -> &'static str {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        // Streamed in 64 KiB reads: a point's process must not hold its executable (tens of
        // MB) in memory, its peak RSS is the point's own.
        let hash = || -> std::io::Result<u64> {
            use std::io::Read;
            let mut f = std::fs::File::open(std::env::current_exe()?)?;
            let mut buf = vec![0u8; 1 << 16];
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            loop {
                let n = f.read(&mut buf)?;
                if n == 0 {
                    return Ok(h);
                }
                for &b in &buf[..n] {
                    h ^= b as u64;
                    h = h.wrapping_mul(0x0100_0000_01b3);
                }
            }
        };
        hash().map_or_else(|_| "unknown".to_string(), |h| format!("{h:016x}"))
    })
}

fn fnv1a(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in p.as_bytes().iter().chain(std::iter::once(&0u8)) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// Digest of the input files the experiment's scenario and overrides name (`file = …` and
/// `cdf = …` values that are files, relative to the experiment's directory): their contents
/// are part of every point's fingerprint, so editing a CDF or flow file reruns the points
/// instead of reusing results of the old contents. Empty when no input file is named (the
/// fingerprint then depends on the experiment file and the point alone).
fn inputs_digest(exp: &Experiment) -> String {
    fn walk(v: &toml::Value, key: &str, out: &mut Vec<String>) {
        match v {
            toml::Value::String(s) if key == "file" || key == "cdf" => out.push(s.clone()),
            toml::Value::Table(t) => t.iter().for_each(|(k, v)| walk(v, k, out)),
            toml::Value::Array(a) => a.iter().for_each(|v| walk(v, key, out)),
            _ => {}
        }
    }
    let mut names = Vec::new();
    if let Ok(t) = toml::from_str::<toml::Table>(&exp.scenario_text) {
        walk(&toml::Value::Table(t), "", &mut names);
    }
    let sets = exp
        .sweep
        .series
        .iter()
        .flat_map(|s| s.set.iter())
        .chain(&exp.quick.set)
        .cloned()
        .chain(exp.sweep.axes.iter().chain(&exp.quick.axes).flat_map(|a| {
            a.values
                .iter()
                .map(move |v| format!("{}={}", a.key, value_str(v)))
        }));
    for x in sets {
        if let Some((k, v)) = x.split_once('=') {
            let leaf = k.trim().rsplit('.').next().unwrap_or("");
            if leaf == "file" || leaf == "cdf" {
                names.push(v.trim().trim_matches(['"', '\'']).to_string());
            }
        }
    }
    names.sort();
    names.dedup();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut any = false;
    for n in &names {
        let path = exp.dir.join(n);
        if let Ok(bytes) = std::fs::read(&path) {
            any = true;
            for &b in n
                .as_bytes()
                .iter()
                .chain(&[0u8])
                .chain(bytes.iter())
                .chain(&[0u8])
            {
                h ^= b as u64;
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    if any {
        format!("inputs {h:016x}")
    } else {
        String::new()
    }
}

/// An exclusive lock on the sweep's output directory ([`crate::runguard::lock_output_dir`]):
/// two sweeps into one directory would run and overwrite each other's points.
fn lock_dir(base: &Path) -> Result<std::fs::File, String> {
    crate::runguard::lock_output_dir(
        base,
        "another `sfc experiment run` is writing into this directory (two sweeps into one \
         directory overwrite each other's points): wait for it to finish, or give another --out",
    )
}

/// Options of `sfc experiment run`.
#[derive(Clone, Debug, Default)]
pub struct RunOpts {
    /// Use the `[quick]` variant.
    pub quick: bool,
    /// Parallel runs.
    pub jobs: usize,
    /// Output directory (default `out/experiments/<name>[-quick][-seedN | -seedsA-B-C]`).
    pub out: Option<PathBuf>,
    /// Show a progress bar.
    pub progress: bool,
    /// Run each point in its own child process (`None`: in this process, on a thread).
    pub child: Option<ChildCmd>,
    /// Run only this shard's share of the points ([`super::shard::Shard`]), without the
    /// report: `sfc experiment merge` (or a run over the whole directory) writes it.
    pub shard: Option<super::shard::Shard>,
    /// Leave out of `results.csv` and REPORT.md the fields that measure the run itself (wall
    /// times), so that two runs of the same sweep give byte-identical files.
    pub no_timings: bool,
    /// The sweep record to keep in the output directory ([`super::shard::SweepRecord`]), which
    /// `merge` and `status` read.
    pub record: Option<super::shard::SweepRecord>,
    /// Threads for each point's run (`--threads`, [`crate::report::RunOptions::threads`]):
    /// the same point files as one thread's, timings aside.
    pub threads: usize,
}

/// How to run one point in a child process: `exe args… --out BASE --point ID [--quick]`, i.e.
/// `sfc experiment run NAME [--dir D]` with the point to run. A child per point gives each
/// point's `summary.json` its own peak RSS (not its siblings') and keeps a crash in one point
/// from taking the sweep down.
#[derive(Clone, Debug)]
pub struct ChildCmd {
    /// The `sfc` executable.
    pub exe: PathBuf,
    /// Arguments before `--out`: `experiment run NAME [--dir D] [--seed N | --seeds A,B,C]`.
    pub args: Vec<std::ffi::OsString>,
}

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn value_str(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Expand the grid: axes (Cartesian) × series × seeds.
pub fn points(exp: &Experiment, quick: bool) -> Vec<Point> {
    let axes: Vec<super::Axis> = exp
        .sweep
        .axes
        .iter()
        .map(|a| {
            if quick && let Some(q) = exp.quick.axes.iter().find(|q| q.key == a.key) {
                return super::Axis {
                    key: a.key.clone(),
                    values: q.values.clone(),
                    label: a.label.clone(),
                };
            }
            a.clone()
        })
        .collect();
    let mut combos: Vec<Vec<(String, toml::Value)>> = vec![Vec::new()];
    for a in &axes {
        let mut next = Vec::new();
        for c in &combos {
            for v in &a.values {
                let mut c2 = c.clone();
                c2.push((a.key.clone(), v.clone()));
                next.push(c2);
            }
        }
        combos = next;
    }
    let seeds: Vec<Option<u64>> = if exp.sweep.seeds.is_empty() {
        vec![None]
    } else {
        exp.sweep.seeds.iter().map(|&s| Some(s)).collect()
    };
    let inputs = inputs_digest(exp);
    let mut parts = vec![
        exp.scenario_text.as_str(),
        env!("CARGO_PKG_VERSION"),
        build_id(),
    ];
    if !inputs.is_empty() {
        parts.push(&inputs);
    }
    let fingerprint = format!("{:016x}", fnv1a(&parts));
    let mut out = Vec::new();
    for s in &exp.sweep.series {
        for c in &combos {
            for &seed in &seeds {
                let mut sets = Vec::new();
                if quick {
                    sets.extend(exp.quick.set.iter().cloned());
                }
                for (k, v) in c {
                    sets.push(format!("{k}={v}"));
                }
                sets.extend(s.set.iter().cloned());
                if let Some(sd) = seed {
                    sets.push(format!("seed={sd}"));
                }
                let mut id = slug(&s.name);
                for (k, v) in c {
                    let short = k.rsplit('.').next().unwrap_or(k);
                    id.push_str(&format!("__{}={}", slug(short), slug(&value_str(v))));
                }
                if let Some(sd) = seed {
                    id.push_str(&format!("__seed={sd}"));
                }
                out.push(Point {
                    id,
                    series: s.name.clone(),
                    axes: c.clone(),
                    seed,
                    sets,
                    fingerprint: fingerprint.clone(),
                });
            }
        }
    }
    out
}

/// Directory of a point's results.
pub fn point_dir(base: &Path, p: &Point) -> PathBuf {
    base.join("points").join(&p.id)
}

/// A point is complete when its `summary.json` (written last, atomically) is a JSON object and
/// its recorded overrides and [`Point::fingerprint`] equal the current ones.
pub fn is_complete(base: &Path, p: &Point) -> bool {
    completeness(base, p).is_ok()
}

/// Whether point `p` is complete ([`is_complete`]): `Err(None)` when it has not run with this
/// configuration, `Err(Some(why))` when it has but its `summary.json` cannot be used (truncated
/// or edited by hand: a report would fail on it), so it must run again.
fn completeness(base: &Path, p: &Point) -> Result<(), Option<String>> {
    let d = point_dir(base, p);
    let Ok(rec) = std::fs::read_to_string(d.join("point.json")) else {
        return Err(None);
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&rec) else {
        return Err(None);
    };
    let same = v["sets"].as_array().is_some_and(|a| {
        a.len() == p.sets.len()
            && a.iter()
                .zip(&p.sets)
                .all(|(x, y)| x.as_str() == Some(y.as_str()))
    });
    if !(same && v["fingerprint"].as_str() == Some(p.fingerprint.as_str())) {
        return Err(None);
    }
    let f = d.join("summary.json");
    let text = match std::fs::read_to_string(&f) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(None),
        Err(e) => return Err(Some(format!("{}: {e}", f.display()))),
        Ok(t) => t,
    };
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Object(_)) => Ok(()),
        Ok(_) => Err(Some(format!("{}: not a JSON object", f.display()))),
        Err(e) => Err(Some(format!("{}: {e}", f.display()))),
    }
}

/// Run point `p` into its directory under `base`, holding the point's lock
/// ([`super::shard::lock_point`]); a point that is complete once the lock is held (another
/// shard ran it meanwhile) is left as it is.
fn run_point(exp: &Experiment, base: &Path, p: &Point, threads: usize) -> Result<(), String> {
    let d = point_dir(base, p);
    std::fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
    let _lock = super::shard::lock_point(&d, &p.id)?;
    if is_complete(base, p) {
        return Ok(());
    }
    remove_temps_in(&d);
    let rec = serde_json::json!({
        "id": p.id,
        "series": p.series,
        "sets": p.sets,
        "fingerprint": p.fingerprint,
    });
    let _ = std::fs::remove_file(d.join("summary.json"));
    write_atomic(&d.join("point.json"), rec.to_string().as_bytes()).map_err(|e| e.to_string())?;
    let label = format!("{} [{}]", exp.source, p.id);
    let (mut sc, stream) =
        crate::scenario::from_str_streaming(&exp.scenario_text, &label, &exp.dir, &p.sets)?;
    // The experiment's tables and plots read the points' CSV files.
    sc.format = crate::metrics::parquet::OutputFormat::Csv;
    crate::report::run_stream(
        sc,
        stream,
        &crate::report::RunOptions {
            out_dir: Some(d),
            progress: false,
            stream_results: true,
            on_deadlock: Default::default(),
            threads,
        },
    )
    .map_err(|e| format!("{label}: {e}"))?;
    Ok(())
}

/// Check point `p` as `sfc validate` checks a scenario: resolved with its overrides (every
/// key, value, range and cross-check), its memory estimated, the network built and every
/// flow checked against it, without running. `label` prefixes the errors; the scenario's
/// warnings are added to `warnings`.
fn check_point(
    exp: &Experiment,
    p: &Point,
    label: &str,
    warnings: &mut Vec<String>,
) -> Result<(), String> {
    // The file's own lines when the `[scenario]` table could be cut out of it (the errors
    // then cite the experiment file's lines); `--seed` is then given as an override.
    let mut sets = Vec::new();
    let text = match (&exp.scenario_lines, exp.seed_override) {
        (Some(t), seed) => {
            sets.extend(seed.map(|s| format!("seed={s}")));
            t.as_str()
        }
        (None, _) => exp.scenario_text.as_str(),
    };
    sets.extend(p.sets.iter().cloned());
    let (sc, stream) = crate::scenario::from_str_streaming(text, label, &exp.dir, &sets)?;
    warnings.extend(sc.warnings.iter().cloned());
    crate::runguard::check_memory_stream(&sc.topo, &sc.net, &stream, true)
        .map_err(|e| format!("{label}: {e}"))?;
    crate::sim::Simulator::with_stream(sc.topo, sc.net, sc.cc, stream.clone())
        .and_then(|sim| sim.check_flows(stream))
        .map_err(|e| format!("{label}: {e}"))?;
    Ok(())
}

/// What [`validate`] found: the errors of every point (each line once; an error of the
/// experiment's own `[scenario]` shows in every point, and is listed once, with the first
/// point that has it) and the distinct warnings.
#[derive(Debug, Default)]
pub struct Validation {
    /// Points checked.
    pub points: usize,
    /// Error lines, `SOURCE [POINT]…: …`.
    pub errors: Vec<String>,
    /// Warning lines, each once.
    pub warnings: Vec<String>,
}

/// Check every point of `pts` (each with whether it is a point of the `--quick` sweep) before
/// any runs: each point's scenario as `check_point` checks it. `sfc experiment validate`
/// runs this on the whole grid; [`run`] on the points it is about to run, and starts none if
/// one fails.
pub fn validate(exp: &Experiment, pts: &[(&Point, bool)]) -> Validation {
    let mut v = Validation {
        points: pts.len(),
        ..Validation::default()
    };
    let mut seen = std::collections::HashSet::new();
    let mut seen_w = std::collections::HashSet::new();
    for &(p, quick) in pts {
        let label = format!(
            "{} [{}{}]",
            exp.source,
            p.id,
            if quick { " with --quick" } else { "" }
        );
        // The same line in every point (an error of `[scenario]` itself) is shown once.
        let generic = |l: &str| l.replacen(&label, &exp.source, 1);
        let mut warnings = Vec::new();
        if let Err(e) = check_point(exp, p, &label, &mut warnings) {
            for l in e.lines() {
                if seen.insert(generic(l)) {
                    v.errors.push(l.to_string());
                }
            }
        }
        for w in warnings {
            if seen_w.insert(generic(&w)) {
                v.warnings.push(w);
            }
        }
    }
    v
}

/// Environment variable naming the pid of the sweep that started a point's process: the
/// child, which dies with its parent, exits at once if it was adopted before it could ask to.
pub const SWEEP_PID_ENV: &str = "SFC_SWEEP_PID";

/// Run point `p` in a child process (see [`ChildCmd`]).
fn run_point_child(c: &ChildCmd, base: &Path, p: &Point, quick: bool) -> Result<(), String> {
    let mut cmd = std::process::Command::new(&c.exe);
    cmd.args(&c.args)
        .arg("--out")
        .arg(base)
        .arg("--point")
        .arg(&p.id)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    if quick {
        cmd.arg("--quick");
    }
    cmd.env(SWEEP_PID_ENV, std::process::id().to_string());
    let out = cmd
        .output()
        .map_err(|e| format!("point {}: cannot start {}: {e}", p.id, c.exe.display()))?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let err = err.trim().trim_start_matches("error: ");
    #[cfg(unix)]
    if let Some(sig) = std::os::unix::process::ExitStatusExt::signal(&out.status) {
        return Err(format!(
            "point {}: its process was killed by signal {sig}{}{err}",
            p.id,
            if err.is_empty() { "" } else { ": " }
        ));
    }
    Err(if err.is_empty() {
        format!("point {}: failed ({})", p.id, out.status)
    } else {
        err.to_string()
    })
}

/// `sfc experiment run NAME --point ID --out BASE`: run the one point `id` of the sweep into
/// `base` (what [`run`] asks of each child process).
pub fn run_single(
    exp: &Experiment,
    base: &Path,
    id: &str,
    quick: bool,
    threads: usize,
) -> Result<(), String> {
    let pts = points(exp, quick);
    let p = pts.iter().find(|p| p.id == id).ok_or_else(|| {
        format!(
            "experiment `{}`{} has no point `{id}`",
            exp.meta.name,
            if quick { " (quick)" } else { "" }
        )
    })?;
    run_point(exp, base, p, threads)
}

/// Whether `name` is a temporary file that an interrupted write left behind: an output being
/// written atomically (`.NAME.tmp-PID-SEQ`, [`crate::metrics::output::write_atomic`]), a plot
/// being rendered (`.NAME.tmpPID-N.png`, [`crate::plot::render`]), a run's flow-record
/// spill file (`.sfc-records-…`) or the probe file that checks an output directory is
/// writable (`.sfc-write-probe-PID`, created and removed at once: a kill between the two
/// leaves it).
fn is_stray_temp(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('.') else {
        return false;
    };
    rest.starts_with("sfc-records-")
        || rest.starts_with("sfc-write-probe-")
        || rest.contains(".tmp-")
        || rest
            .match_indices(".tmp")
            .any(|(i, _)| rest[i + 4..].starts_with(|c: char| c.is_ascii_digit()))
}

/// Remove the temporary files a sweep killed mid-write left in `base` and its points'
/// directories (SIGKILL gives a process no chance to remove them): under the sweep's lock no
/// other process writes there, so every such file is garbage, and a resumed sweep ends with
/// the same files as one never interrupted.
pub(crate) fn remove_stray_temps(base: &Path) {
    let mut dirs = vec![base.to_path_buf()];
    if let Ok(rd) = std::fs::read_dir(base.join("points")) {
        dirs.extend(rd.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
    }
    for d in dirs {
        remove_temps_in(&d);
    }
}

/// Remove the temporary files ([`is_stray_temp`]) in directory `d` (not below it); the
/// caller holds the lock under which they are garbage.
fn remove_temps_in(d: &Path) {
    let Ok(rd) = std::fs::read_dir(d) else {
        return;
    };
    for e in rd.flatten() {
        if is_stray_temp(&e.file_name().to_string_lossy())
            && e.file_type().is_ok_and(|t| t.is_file())
        {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// The default output directory of a sweep: `out/experiments/NAME[-quick][-seed…]`.
pub fn default_out(exp: &Experiment, quick: bool) -> PathBuf {
    let mut d = exp.meta.name.clone();
    if quick {
        d.push_str("-quick");
    }
    d.push_str(&exp.seed_dir_suffix());
    PathBuf::from("out/experiments").join(d)
}

/// `sfc experiment run`: returns the output directory. With a shard ([`RunOpts::shard`]) it
/// runs that shard's points only and writes no report.
pub fn run(exp: &Experiment, o: &RunOpts) -> Result<PathBuf, String> {
    let base = o.out.clone().unwrap_or_else(|| default_out(exp, o.quick));
    if base.exists() && !base.is_dir() {
        return Err(format!(
            "{}: is an existing file, not a directory (give another --out)",
            base.display()
        ));
    }
    let pts = points(exp, o.quick);
    let mine: Vec<&Point> = match o.shard {
        Some(s) => super::shard::shard_points(exp, &pts, s)
            .into_iter()
            .map(|(p, _)| p)
            .collect(),
        None => pts.iter().collect(),
    };
    // Every point still to run is checked before any runs (a complete one ran with this
    // configuration and build): an error in the last point does not wait for the others.
    let pending: Vec<(&Point, bool)> = mine
        .iter()
        .filter(|p| !is_complete(&base, p))
        .map(|p| (*p, o.quick))
        .collect();
    let v = validate(exp, &pending);
    if !v.errors.is_empty() {
        return Err(format!(
            "experiment `{}`{}: nothing was run, its points have errors (`sfc experiment \
             validate` checks them without running):\n{}",
            exp.meta.name,
            if o.quick { " (quick)" } else { "" },
            v.errors.join("\n")
        ));
    }
    std::fs::create_dir_all(&base).map_err(|e| format!("{}: {e}", base.display()))?;
    // Shards share the directory (each point has its own lock); a whole sweep holds it
    // alone, and removes what a killed sweep left behind.
    let _lock = match o.shard {
        Some(_) => super::shard::lock_dir_shared(&base)?,
        None => lock_dir(&base)?,
    };
    if o.shard.is_none() {
        remove_stray_temps(&base);
    }
    if let Some(r) = &o.record {
        r.write(&base)?;
    }
    let todo: Vec<&Point> = mine
        .iter()
        .copied()
        .filter(|p| match completeness(&base, p) {
            Ok(()) => false,
            Err(None) => true,
            Err(Some(why)) => {
                eprintln!(
                    "{}: its summary.json is unusable ({why}): not counted as complete, running it again",
                    p.id
                );
                true
            }
        })
        .collect();
    let share = o.shard.map_or_else(
        || ":".to_string(),
        |s| format!(", shard {s}: {} of its", mine.len()),
    );
    eprintln!(
        "experiment `{}`{}{share} {} points ({} already complete), {} parallel job(s); results in {}",
        exp.meta.name,
        if o.quick { " (quick)" } else { "" },
        pts.len(),
        mine.len() - todo.len(),
        o.jobs,
        base.display()
    );
    let t0 = Instant::now();
    let ran = todo.clone();
    let done = run_points(exp, o, &base, todo);
    // (Before any error: the points that ran did so whether or not others failed.)
    if o.threads > 1
        && let Some(note) = one_thread_note(&base, &ran)
    {
        eprintln!("{note}");
    }
    done?;
    if let Some(s) = o.shard {
        eprintln!(
            "shard {s}: its {} point(s) are complete in {}; once every shard is, `sfc \
             experiment merge {}` writes the report",
            mine.len(),
            base.display(),
            base.display()
        );
        return Ok(base);
    }
    let wall = t0.elapsed().as_secs_f64();
    let failed = aggregate(exp, &base, &pts, o.quick, (!o.no_timings).then_some(wall))?;
    if !failed.is_empty() {
        // The outputs are written (and listed in REPORT.md); the run still fails.
        return Err(format!(
            "{} point(s) did not finish (results in {}; see REPORT.md):\n  {}",
            failed.len(),
            base.display(),
            failed.join("\n  ")
        ));
    }
    Ok(base)
}

/// Run the points of `todo` into `base`, `o.jobs` at a time (each in a child process when
/// `o.child` is set), with a progress bar or a line per point. Errors list every point
/// that failed.
fn run_points(exp: &Experiment, o: &RunOpts, base: &Path, todo: Vec<&Point>) -> Result<(), String> {
    let bar = if o.progress && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        let b = indicatif::ProgressBar::new(todo.len() as u64);
        if let Ok(s) = indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} points  elapsed {elapsed}  ETA {eta}  {msg}",
        ) {
            b.set_style(s);
        }
        Some(b)
    } else {
        None
    };
    let queue = Mutex::new(todo.into_iter().rev().collect::<Vec<_>>());
    let errors = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..o.jobs.max(1) {
            s.spawn(|| {
                loop {
                    if crate::process::interrupt_requested() {
                        break;
                    }
                    let Some(p) = queue.lock().expect("queue").pop() else {
                        break;
                    };
                    let t = Instant::now();
                    let r = match &o.child {
                        Some(c) => run_point_child(c, base, p, o.quick),
                        None => run_point(exp, base, p, o.threads),
                    };
                    // A child reads the experiment file again: if it (or an input) changed
                    // since the sweep started, the point ran something else.
                    let r = r.and_then(|()| {
                        if o.child.is_none() || is_complete(base, p) {
                            Ok(())
                        } else {
                            Err(format!(
                                "{}: ran a different configuration: the experiment file or one of \
                                 its input files changed while the sweep ran (run the command \
                                 again to rerun such points)",
                                p.id
                            ))
                        }
                    });
                    match r {
                        Ok(()) => {
                            if let Some(b) = &bar {
                                b.set_message(p.id.clone());
                                b.inc(1);
                            } else {
                                eprintln!("  done {} in {:.1} s", p.id, t.elapsed().as_secs_f64());
                            }
                        }
                        Err(e) => errors.lock().expect("errors").push(e),
                    }
                }
            });
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if crate::process::interrupt_requested() {
        return Err(crate::process::INTERRUPTED.into());
    }
    let errs = errors.into_inner().expect("errors");
    if !errs.is_empty() {
        return Err(format!(
            "{} point(s) failed:\n  {}",
            errs.len(),
            errs.join("\n  ")
        ));
    }
    Ok(())
}

/// The note a sweep run with `--threads N` prints when some of the points it `ran` could not
/// be split over threads: how many ran on one thread, for each reason (their `summary.json`'s
/// `one_thread_because`, [`crate::report::ThreadsUsed`]), and how many were split over fewer
/// threads than asked (networks with fewer ToRs than N: `parallel.threads` <
/// `parallel.threads_asked`). `None` when every point split over N threads.
fn one_thread_note(base: &Path, ran: &[&Point]) -> Option<String> {
    let mut why: BTreeMap<String, usize> = BTreeMap::new();
    let mut fewer: BTreeMap<u64, usize> = BTreeMap::new();
    for p in ran {
        let Ok(s) = summary_of(base, p) else {
            continue;
        };
        if let Some(w) = s.get("one_thread_because").and_then(|w| w.as_str()) {
            *why.entry(w.to_string()).or_default() += 1;
        }
        let par = &s["parallel"];
        if let (Some(t), Some(a)) = (par["threads"].as_u64(), par["threads_asked"].as_u64())
            && t < a
        {
            *fewer.entry(t).or_default() += 1;
        }
    }
    let mut lines = Vec::new();
    if !why.is_empty() {
        let n: usize = why.values().sum();
        lines.push(format!(
            "note: {n} of {} point(s) ran on one thread:",
            ran.len()
        ));
        lines.extend(why.iter().map(|(w, k)| format!("  {k} point(s): {w}")));
    }
    if !fewer.is_empty() {
        let n: usize = fewer.values().sum();
        lines.push(format!(
            "note: {n} of {} point(s) ran on fewer threads than asked (a partition holds \
             whole ToRs):",
            ran.len()
        ));
        lines.extend(
            fewer
                .iter()
                .map(|(t, k)| format!("  {k} point(s): {t} threads (the network has {t} ToRs)")),
        );
    }
    (!lines.is_empty()).then(|| lines.join("\n"))
}

fn summary_of(base: &Path, p: &Point) -> Result<serde_json::Value, String> {
    let f = point_dir(base, p).join("summary.json");
    let t = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
    serde_json::from_str(&t).map_err(|e| format!("{}: {e}", f.display()))
}

/// A CSV field (RFC 4180): quoted when it holds a comma, quote or line break, so that labels
/// such as "SFC (0.5, 1) BDP" stay one column for pandas.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Look up a dotted path in JSON (`slowdown.p99`, `sfc.bts_generated`, `counters.drops`).
/// A step may index an array (`bins.3.slowdown.p99`) or select the element of an array whose
/// field has a value (`by_dport[dport=100].slowdown.p99`, `bins[hi_bytes=1000].slowdown.p99`).
pub fn json_path(v: &serde_json::Value, path: &str) -> Option<f64> {
    let mut cur = v;
    for part in path_parts(path)? {
        cur = match part {
            PathPart::Key(k) => match (cur, k.parse::<usize>()) {
                (serde_json::Value::Array(a), Ok(i)) => a.get(i)?,
                _ => cur.get(k)?,
            },
            PathPart::Select { array, key, value } => cur
                .get(array)?
                .as_array()?
                .iter()
                .find(|e| e.get(key).is_some_and(|f| json_equals(f, value)))?,
        };
    }
    cur.as_f64()
}

/// One step of a summary metric path.
#[derive(Clone, Copy, Debug, PartialEq)]
enum PathPart<'a> {
    /// An object key, or an array index.
    Key(&'a str),
    /// `array[key=value]`: the element of `array` whose field `key` equals `value`.
    Select {
        array: &'a str,
        key: &'a str,
        value: &'a str,
    },
}

/// Split a metric path into its steps: dot-separated keys, where a step may be
/// `name[key=value]` (dots inside the brackets belong to the value). `None` if malformed.
fn path_parts(path: &str) -> Option<Vec<PathPart<'_>>> {
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        let dot = rest.find('.').unwrap_or(rest.len());
        let open = rest.find('[');
        let (part, next) = match open {
            Some(o) if o < dot => {
                let close = o + rest[o..].find(']')?;
                let (key, value) = rest[o + 1..close].split_once('=')?;
                let part = PathPart::Select {
                    array: &rest[..o],
                    key: key.trim(),
                    value: value.trim(),
                };
                let after = &rest[close + 1..];
                match after.strip_prefix('.') {
                    Some(a) => (part, a),
                    None if after.is_empty() => (part, after),
                    None => return None,
                }
            }
            _ => (
                PathPart::Key(&rest[..dot]),
                rest.get(dot + 1..).unwrap_or(""),
            ),
        };
        if matches!(part, PathPart::Key("")) || matches!(part, PathPart::Select { array: "", .. }) {
            return None;
        }
        out.push(part);
        rest = next;
    }
    (!out.is_empty()).then_some(out)
}

/// Is JSON value `f` equal to the text `value` of a path selector (numbers compared as
/// numbers, strings without quotes)?
fn json_equals(f: &serde_json::Value, value: &str) -> bool {
    match f {
        serde_json::Value::Number(n) => match (n.as_f64(), value.parse::<f64>()) {
            (Some(a), Ok(b)) => a == b,
            _ => false,
        },
        serde_json::Value::String(s) => s == value.trim_matches('"'),
        serde_json::Value::Bool(b) => value.parse::<bool>() == Ok(*b),
        _ => false,
    }
}

/// Is `path` a well-formed metric path (see [`json_path`])?
pub fn valid_metric_path(path: &str) -> bool {
    path_parts(path).is_some()
}

/// Our number for claim `c`, given `val(series, metric)` (the metric averaged over the
/// series' points): the value of `num`; with `den`, the ratio num / den; with `versus` too,
/// that ratio at `metric` divided by the same ratio at `versus` (e.g. the gain on small
/// flows over the gain on large flows).
fn claim_value(c: &Claim, val: impl Fn(&str, &str) -> Option<f64>) -> Option<f64> {
    let at = |metric: &str| match &c.den {
        Some(d) => val(&c.num, metric).zip(val(d, metric)).map(|(a, b)| a / b),
        None => val(&c.num, metric),
    };
    match &c.versus {
        Some(v) => at(&c.metric).zip(at(v)).map(|(a, b)| a / b),
        None => at(&c.metric),
    }
}

/// The verdict on our number `ours` for claim `c`: "matches" inside the values its kind
/// accepts ([`Claim::accepted`]; an unaudited claim: the paper's range widened by its own
/// tolerance, default 25 %), else which side we are on.
pub fn claim_verdict(c: &Claim, ours: Option<f64>) -> String {
    match ours {
        None => "no data".to_string(),
        // A ratio of two zeros (an infinite one is simply higher or lower than the range).
        Some(v) if v.is_nan() => "undefined (0 / 0)".to_string(),
        Some(v) => {
            let (lo, hi, closed) = c.accepted();
            let inside = if closed {
                v >= lo && v <= hi
            } else {
                // An open end: strictly beyond it (an infinite ratio is beyond 1).
                (v > lo || lo == f64::NEG_INFINITY) && (v < hi || hi == f64::INFINITY)
            };
            if inside {
                "matches".to_string()
            } else if c.kind.is_none() {
                // Unaudited: the side relative to the paper's low end.
                if v < c.paper_low.unwrap_or(f64::NEG_INFINITY) {
                    "differs (ours lower)".to_string()
                } else {
                    "differs (ours higher)".to_string()
                }
            } else if v < lo {
                "differs (ours lower)".to_string()
            } else if v > hi {
                "differs (ours higher)".to_string()
            } else {
                "differs (no difference)".to_string()
            }
        }
    }
}

/// The paper's side of claim `c` as REPORT.md shows it: an unaudited claim's range, or the
/// rule of its kind (`100 ± 20 %`, `1–2 ± 10 %`, `≤ 20`, `> 1`).
fn paper_column(c: &Claim) -> String {
    let lo = c.paper_low.unwrap_or(f64::NAN);
    let hi = c.paper_high.unwrap_or(lo);
    let range = if (hi - lo).abs() < f64::EPSILON {
        fmt_num(lo)
    } else {
        format!("{}–{}", fmt_num(lo), fmt_num(hi))
    };
    match c.kind {
        None => range,
        Some(ClaimKind::Point) => format!(
            "{range} ± {} %{}",
            if c.read_off_plot { 30 } else { 20 },
            if c.read_off_plot {
                " (read off a plot)"
            } else {
                ""
            }
        ),
        Some(ClaimKind::Range) => format!("{range} ± 10 %"),
        Some(ClaimKind::Bound) => match (c.paper_low, c.paper_high) {
            (Some(l), _) => format!("≥ {}", fmt_num(l)),
            (None, Some(h)) => format!("≤ {}", fmt_num(h)),
            (None, None) => "-".into(),
        },
        Some(ClaimKind::Direction) => match c.better {
            Some(Better::Lower) => "< 1".into(),
            _ => "> 1".into(),
        },
    }
}

fn matches_filter(p: &Point, filter: &toml::Table) -> bool {
    filter
        .iter()
        .all(|(k, v)| p.axes.iter().any(|(ak, av)| ak == k && av == v))
}

/// Series label: the series name plus the values of axes other than `except` not fixed by
/// the filter.
fn label_of(exp: &Experiment, p: &Point, except: Option<&str>, filter: &toml::Table) -> String {
    let mut l = p.series.clone();
    for (k, v) in &p.axes {
        if Some(k.as_str()) == except || filter.contains_key(k) {
            continue;
        }
        let lab = exp
            .sweep
            .axes
            .iter()
            .find(|a| &a.key == k)
            .and_then(|a| a.label.clone());
        let short = lab.unwrap_or_else(|| k.rsplit('.').next().unwrap_or(k).to_string());
        l.push_str(&format!(" {short}={}", value_str(v)));
    }
    if let Some(s) = p.seed {
        l.push_str(&format!(" seed={s}"));
    }
    l
}

fn read_csv_col(path: &Path, col: &str) -> Result<Vec<(u64, f64)>, String> {
    // Returns (time_ns, value) pairs of `col` (first column = time_ns).
    let t = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut lines = t.lines();
    let head: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let ci = head
        .iter()
        .position(|h| *h == col)
        .ok_or_else(|| format!("{}: no column {col}", path.display()))?;
    Ok(lines
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            Some((f.first()?.parse().ok()?, f.get(ci)?.parse().ok()?))
        })
        .collect())
}

/// Goodput over time from a point's `throughput.csv` (`sample,time_ns,receiver,gbps`) or
/// `sender_throughput.csv` (`who` = `sender`): per `time_ns`, the sum of `gbps` over the hosts
/// in `receivers` (every host when empty) of column `who`.
fn throughput_over_time(
    path: &Path,
    who: &str,
    receivers: &[u32],
) -> Result<BTreeMap<u64, f64>, String> {
    let t = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut lines = t.lines();
    let head: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let col = |c: &str| {
        head.iter()
            .position(|h| *h == c)
            .ok_or_else(|| format!("{}: no column {c}", path.display()))
    };
    let (ti, ri, gi) = (col("time_ns")?, col(who)?, col("gbps")?);
    let mut per_t: BTreeMap<u64, f64> = BTreeMap::new();
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        let (Some(t), Some(r), Some(g)) = (
            f.get(ti).and_then(|x| x.parse::<u64>().ok()),
            f.get(ri).and_then(|x| x.parse::<u32>().ok()),
            f.get(gi).and_then(|x| x.parse::<f64>().ok()),
        ) else {
            continue;
        };
        let e = per_t.entry(t).or_insert(0.0);
        if receivers.is_empty() || receivers.contains(&r) {
            *e += g;
        }
    }
    Ok(per_t)
}

fn cdf(mut v: Vec<f64>) -> Vec<(f64, f64)> {
    v.retain(|x| x.is_finite());
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let n = v.len().max(1) as f64;
    // Thin to at most ~2000 steps for plotting.
    let step = (v.len() / 2000).max(1);
    v.iter()
        .enumerate()
        .filter(|(i, _)| i % step == 0 || *i == v.len() - 1)
        .map(|(i, x)| (*x, (i + 1) as f64 / n))
        .collect()
}

/// Build one chart from the results.
fn chart_for(exp: &Experiment, base: &Path, pts: &[Point], pl: &Plot) -> Result<Chart, String> {
    let mut chart = Chart {
        title: format!("{} — {}", exp.meta.figure, pl.name),
        x_label: pl.x_label.clone().unwrap_or_default(),
        y_label: pl.y_label.clone().unwrap_or_default(),
        kind: ChartKind::Line,
        log_x: pl.log_x,
        log_y: pl.log_y,
        x_categories: Vec::new(),
        series: Vec::new(),
        hlines: pl.hlines.clone(),
    };
    let sel: Vec<&Point> = pts
        .iter()
        .filter(|p| matches_filter(p, &pl.filter))
        .collect();
    match pl.source.as_str() {
        "summary" => summary_chart(&mut chart, exp, base, &sel, pl)?,
        "bins" => bins_chart(&mut chart, exp, base, &sel, pl)?,
        "buffer_cdf" | "throughput_cdf" => cdf_chart(&mut chart, exp, base, &sel, pl)?,
        "queue" | "buffer_time" | "throughput_time" => time_chart(&mut chart, exp, base, &sel, pl)?,
        other => return Err(format!("unknown plot source {other}")),
    }
    Ok(chart)
}

/// Points of a `summary` plot grouped by series label (in first-seen order): each point's
/// x (its value of the `x` axis, else the y label as a category) and `y` metric × `scale`.
type SummaryGroups = (BTreeMap<String, Vec<(toml::Value, f64)>>, Vec<String>);

/// `source = "summary"`: one value of `summary.json` per point against a sweep axis. A line
/// chart when every x is a number (unless `kind = "bar"`), else grouped bars with the x
/// values as categories.
fn summary_chart(
    chart: &mut Chart,
    exp: &Experiment,
    base: &Path,
    sel: &[&Point],
    pl: &Plot,
) -> Result<(), String> {
    let (groups, order) = summary_groups(exp, base, sel, pl)?;
    let numeric = groups
        .values()
        .flatten()
        .all(|(x, _)| x.as_float().is_some() || x.as_integer().is_some());
    if numeric && pl.kind.as_deref() != Some("bar") {
        chart.kind = ChartKind::Line;
        let as_f = |x: &toml::Value| {
            x.as_float()
                .or_else(|| x.as_integer().map(|i| i as f64))
                .unwrap_or(f64::NAN)
        };
        for l in order {
            let mut pts: Vec<(f64, f64)> = groups[&l].iter().map(|(x, y)| (as_f(x), *y)).collect();
            pts.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal));
            chart.series.push(Series {
                name: l,
                points: pts,
            });
        }
    } else {
        chart.kind = ChartKind::Bar;
        let mut cats: Vec<String> = Vec::new();
        for v in groups.values().flatten() {
            let c = value_str(&v.0);
            if !cats.contains(&c) {
                cats.push(c);
            }
        }
        for l in order {
            let pts = groups[&l]
                .iter()
                .map(|(x, y)| {
                    (
                        cats.iter().position(|c| *c == value_str(x)).unwrap_or(0) as f64,
                        *y,
                    )
                })
                .collect();
            chart.series.push(Series {
                name: l,
                points: pts,
            });
        }
        chart.x_categories = cats;
    }
    Ok(())
}

/// The points of a `summary` plot, grouped (see [`SummaryGroups`]).
fn summary_groups(
    exp: &Experiment,
    base: &Path,
    sel: &[&Point],
    pl: &Plot,
) -> Result<SummaryGroups, String> {
    let scale = pl.scale.unwrap_or(1.0);
    let xk = pl.x.as_deref().unwrap_or_default();
    let yk = pl.y.as_deref().unwrap_or_default();
    let mut groups: BTreeMap<String, Vec<(toml::Value, f64)>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for p in sel {
        let s = summary_of(base, p)?;
        let y = json_path(&s, yk).unwrap_or(f64::NAN) * scale;
        let x = p
            .axes
            .iter()
            .find(|(k, _)| k == xk)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| {
                toml::Value::String(pl.y_label.clone().unwrap_or_else(|| yk.to_string()))
            });
        let l = label_of(exp, p, Some(xk), &pl.filter);
        if !groups.contains_key(&l) {
            order.push(l.clone());
        }
        groups.entry(l).or_default().push((x, y));
    }
    Ok((groups, order))
}

/// `source = "bins"`: a slowdown percentile (`y`, default p99) per flow-size bin, one series
/// per point, the bins' upper bounds as categories.
fn bins_chart(
    chart: &mut Chart,
    exp: &Experiment,
    base: &Path,
    sel: &[&Point],
    pl: &Plot,
) -> Result<(), String> {
    let scale = pl.scale.unwrap_or(1.0);
    let pct = pl.y.as_deref().unwrap_or("p99");
    chart.kind = if pl.kind.as_deref() == Some("bar") {
        ChartKind::Bar
    } else {
        ChartKind::Line
    };
    for p in sel {
        let s = summary_of(base, p)?;
        let bins = s["bins"].as_array().cloned().unwrap_or_default();
        if chart.x_categories.is_empty() {
            chart.x_categories = bins
                .iter()
                .map(|b| crate::units::fmt_bytes(b["hi_bytes"].as_u64().unwrap_or(0)))
                .collect();
        }
        let pts = bins
            .iter()
            .enumerate()
            .map(|(i, b)| {
                (
                    i as f64,
                    b["slowdown"][pct].as_f64().unwrap_or(f64::NAN) * scale,
                )
            })
            .collect();
        chart.series.push(Series {
            name: label_of(exp, p, None, &pl.filter),
            points: pts,
        });
    }
    Ok(())
}

/// `source = "buffer_cdf"` / `"throughput_cdf"`: the distribution of a point's buffer
/// samples or receiver throughputs, one CDF per point.
fn cdf_chart(
    chart: &mut Chart,
    exp: &Experiment,
    base: &Path,
    sel: &[&Point],
    pl: &Plot,
) -> Result<(), String> {
    let scale = pl.scale.unwrap_or(1.0);
    chart.kind = ChartKind::Cdf;
    for p in sel {
        let (file, col) = if pl.source == "buffer_cdf" {
            ("buffer.csv", "bytes")
        } else {
            ("throughput.csv", "gbps")
        };
        let vals: Vec<f64> = read_csv_col(&point_dir(base, p).join(file), col)?
            .into_iter()
            .map(|(_, v)| v * scale)
            .collect();
        chart.series.push(Series {
            name: label_of(exp, p, None, &pl.filter),
            points: cdf(vals),
        });
    }
    Ok(())
}

/// `source = "queue"` / `"buffer_time"` / `"throughput_time"`: a time series per point (x in
/// nanoseconds).
fn time_chart(
    chart: &mut Chart,
    exp: &Experiment,
    base: &Path,
    sel: &[&Point],
    pl: &Plot,
) -> Result<(), String> {
    let scale = pl.scale.unwrap_or(1.0);
    chart.kind = ChartKind::Line;
    for p in sel {
        let pts = time_series(base, p, pl)?
            .into_iter()
            .map(|(t, v)| (t as f64 / 1000.0, v * scale))
            .collect();
        chart.series.push(Series {
            name: label_of(exp, p, None, &pl.filter),
            points: pts,
        });
    }
    Ok(())
}

/// Point `p`'s values per sample time (picoseconds) for a time-series plot: the throughput
/// of the plot's receivers (or senders), the queue bytes summed over ports, or the buffer
/// bytes of the fullest switch.
fn time_series(base: &Path, p: &Point, pl: &Plot) -> Result<BTreeMap<u64, f64>, String> {
    if pl.source == "throughput_time" {
        return if pl.senders.is_empty() {
            let path = point_dir(base, p).join("throughput.csv");
            throughput_over_time(&path, "receiver", &pl.receivers)
        } else {
            let path = point_dir(base, p).join("sender_throughput.csv");
            throughput_over_time(&path, "sender", &pl.senders)
        };
    }
    let (file, col) = if pl.source == "queue" {
        ("queues.csv", "bytes")
    } else {
        ("buffer.csv", "bytes")
    };
    let rows = read_csv_col(&point_dir(base, p).join(file), col)?;
    // Sum over ports (queue) or max over switches (buffer) per time.
    let mut per_t: BTreeMap<u64, f64> = BTreeMap::new();
    for (t, v) in rows {
        let e = per_t.entry(t).or_insert(0.0);
        if pl.source == "queue" {
            *e += v;
        } else {
            *e = e.max(v);
        }
    }
    Ok(per_t)
}

/// A claim's value: [`fmt_num`], with a ratio of two zeros shown as `0 / 0` and one over
/// zero as `∞`.
fn fmt_ours(v: f64) -> String {
    if v.is_nan() {
        "0 / 0".into()
    } else if v.is_infinite() {
        if v > 0.0 { "∞" } else { "−∞" }.into()
    } else {
        fmt_num(v)
    }
}

/// Why claim `c` has no value, when a metric path it reads is in none of the points'
/// `summary.json` files (`summaries`): a misspelt path, or a field this scenario does not
/// write. `None` when the paths exist (the series had no completed point).
fn no_data_reason(c: &Claim, summaries: &[serde_json::Value]) -> Option<String> {
    if summaries.is_empty() {
        return Some("no completed point".into());
    }
    std::iter::once(&c.metric)
        .chain(c.versus.as_ref())
        .find(|m| summaries.iter().all(|s| json_path(s, m).is_none()))
        .map(|m| format!("no point's summary.json has `{m}`"))
}

fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v.abs() >= 1e6 || (v != 0.0 && v.abs() < 1e-3) {
        format!("{v:.3e}")
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// The `summary.json` values of each point in `results.csv`, in column order.
const RESULT_METRICS: [&str; 19] = [
    "flows_total",
    "flows_completed",
    "slowdown.p50",
    "slowdown.p95",
    "slowdown.p99",
    "slowdown.p999",
    "peak_buffer_bytes",
    "drops",
    "pfc.pauses",
    "pfc.paused_ps",
    "sfc.bts_generated",
    "sfc.bts_suppressed",
    "sfc.bts_reduction",
    "sfc.max_bloom_occupancy",
    "sfc.max_cache_occupancy",
    "counters.qp_pauses",
    "onramp.pauses",
    "events",
    "wall_seconds",
];

/// Write results.csv, bins.csv, plots and REPORT.md. Returns the points whose run reported a
/// failure (`failure` in their `summary.json`: a stalled run, or flows left unfinished without
/// a deliberate `stop`), as `id: reason` — they are aggregated like the others and listed at
/// the top of REPORT.md, so a figure never silently includes a broken run.
///
/// `wall`: this invocation's wall time, seconds; `None` leaves every wall time out of
/// `results.csv` (its `wall_seconds` column) and REPORT.md, whose files then depend only on
/// the points' results.
pub fn aggregate(
    exp: &Experiment,
    base: &Path,
    pts: &[Point],
    quick: bool,
    wall: Option<f64>,
) -> Result<Vec<String>, String> {
    let (failed, sum_wall) = write_tables(exp, base, pts, wall.is_some())?;
    let mut report = report_header(exp, pts, quick, wall.map(|w| (sum_wall, w)));
    let claims = claims_section(exp, base, pts);
    if !exp.claims.is_empty() {
        report.push_str(&super::score::markdown(&Tally::of(&claims.records)));
        report.push('\n');
    }
    report.push_str(&plots_section(exp, base, pts)?);
    if !exp.claims.is_empty() {
        report.push_str(&claims.markdown);
    }
    report.push_str("Data: `results.csv` (one row per point), `bins.csv` (slowdown per size bin), `claims.csv` (one row per claim: its value, the values that match and the verdict), `points/<id>/` (each run's outputs).\n");
    if !failed.is_empty() {
        report = with_failure_warning(&report, &failed);
    }
    write_atomic(
        &base.join("claims.csv"),
        super::score::claims_csv(&claims.records).as_bytes(),
    )
    .map_err(|e| e.to_string())?;
    write_atomic(&base.join("REPORT.md"), report.as_bytes()).map_err(|e| e.to_string())?;
    Ok(failed)
}

/// Write `results.csv` (one row per point: id, series, axis values, seed, [`RESULT_METRICS`])
/// and `bins.csv` (the slowdown of each flow-size bin of each point). Returns the failed
/// points (`id: reason`) and the points' total simulation wall time, seconds. Without
/// `timings`, `results.csv` has no `wall_seconds` column.
fn write_tables(
    exp: &Experiment,
    base: &Path,
    pts: &[Point],
    timings: bool,
) -> Result<(Vec<String>, f64), String> {
    let metrics = result_metrics(timings);
    let axis_keys: Vec<String> = exp.sweep.axes.iter().map(|a| a.key.clone()).collect();
    let mut csv = String::from("id,series,");
    for k in &axis_keys {
        csv.push_str(k);
        csv.push(',');
    }
    csv.push_str("seed,");
    csv.push_str(&metrics.join(","));
    csv.push('\n');
    let mut bins_csv = String::from("id,series,bin,lo_bytes,hi_bytes,count,p50,p95,p99,p999\n");
    let mut sum_wall = 0.0;
    let mut failed = Vec::new();
    for p in pts {
        let s = summary_of(base, p)?;
        if let Some(f) = s.get("failure").and_then(|f| f.as_str()) {
            failed.push(format!("{}: {f}", p.id));
        }
        sum_wall += json_path(&s, "wall_seconds").unwrap_or(0.0);
        csv.push_str(&results_row(p, &s, &axis_keys, metrics));
        bins_csv.push_str(&bins_rows(p, &s));
    }
    write_atomic(&base.join("results.csv"), csv.as_bytes()).map_err(|e| e.to_string())?;
    write_atomic(&base.join("bins.csv"), bins_csv.as_bytes()).map_err(|e| e.to_string())?;
    Ok((failed, sum_wall))
}

/// The columns of [`RESULT_METRICS`] in `results.csv`: all, or without `timings` all but
/// `wall_seconds` (the last).
fn result_metrics(timings: bool) -> &'static [&'static str] {
    if timings {
        &RESULT_METRICS
    } else {
        &RESULT_METRICS[..RESULT_METRICS.len() - 1]
    }
}

/// The `results.csv` row of point `p` with summary `s`: its id, series, axis values, seed
/// and `metrics`.
fn results_row(p: &Point, s: &serde_json::Value, axis_keys: &[String], metrics: &[&str]) -> String {
    let mut row = format!("{},{},", csv_field(&p.id), csv_field(&p.series));
    for k in axis_keys {
        let v = p
            .axes
            .iter()
            .find(|(ak, _)| ak == k)
            .map(|(_, v)| value_str(v))
            .unwrap_or_default();
        row.push_str(&csv_field(&v));
        row.push(',');
    }
    row.push_str(&p.seed.map(|s| s.to_string()).unwrap_or_default());
    for m in metrics {
        row.push(',');
        if let Some(v) = json_path(s, m) {
            row.push_str(&format!("{v}"));
        }
    }
    row.push('\n');
    row
}

/// The `bins.csv` rows of point `p` with summary `s`, one per flow-size bin.
fn bins_rows(p: &Point, s: &serde_json::Value) -> String {
    let mut rows = String::new();
    for (i, b) in s["bins"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        rows.push_str(&format!(
            "{},{},{i},{},{},{},{},{},{},{}\n",
            csv_field(&p.id),
            csv_field(&p.series),
            b["lo_bytes"],
            b["hi_bytes"],
            b["count"],
            b["slowdown"]["p50"],
            b["slowdown"]["p95"],
            b["slowdown"]["p99"],
            b["slowdown"]["p999"]
        ));
    }
    rows
}

/// REPORT.md's title, description, the command that re-runs it and the wall times
/// (`walls`: the points' simulations and this invocation, seconds; `None` leaves them out).
fn report_header(
    exp: &Experiment,
    pts: &[Point],
    quick: bool,
    walls: Option<(f64, f64)>,
) -> String {
    let mut report = String::new();
    report.push_str(&format!("# {}\n\n", exp.meta.title));
    let times = walls.map_or_else(String::new, |(sum_wall, wall)| {
        format!(", {sum_wall:.1} s of simulation wall time (this invocation: {wall:.1} s)")
    });
    report.push_str(&format!(
        "{} {} — {}\n\nCommand: `sfc experiment run {}{}{}` — {} points{times}.\n\n",
        exp.meta.paper,
        exp.meta.figure,
        exp.meta.description.trim(),
        // A file read from disk is named by its path (`run` accepts one), so the command
        // re-runs that file, not a built-in of the same name.
        if std::path::Path::new(&exp.source).is_file() {
            exp.source.clone()
        } else {
            exp.meta.name.clone()
        },
        if quick { " --quick" } else { "" },
        exp.seed_args()
            .iter()
            .map(|a| format!(" {a}"))
            .collect::<String>(),
        pts.len(),
    ));
    if quick {
        report.push_str("**Quick variant**: smaller or shorter than the paper's setting (same structure); numbers are indicative only.\n\n");
    }
    report
}

/// Render every plot of the experiment next to the report and return their REPORT.md
/// sections: the figure, and for line and bar charts of per-point values its data table.
fn plots_section(exp: &Experiment, base: &Path, pts: &[Point]) -> Result<String, String> {
    let mut report = String::new();
    for pl in &exp.plots {
        let chart = chart_for(exp, base, pts, pl)?;
        crate::plot::render(&chart, &base.join(&pl.name))?;
        report.push_str(&format!(
            "## {}\n\n![{}]({}.png)\n\n",
            pl.name, pl.name, pl.name
        ));
        if matches!(chart.kind, ChartKind::Line | ChartKind::Bar)
            && pl.source != "queue"
            && pl.source != "buffer_time"
        {
            report.push_str(&data_table(pl, &chart));
        }
    }
    Ok(report)
}

/// A chart's data as a Markdown table: rows = x (or category), columns = series.
fn data_table(pl: &Plot, chart: &Chart) -> String {
    let mut report = String::new();
    let mut xs: Vec<f64> = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    xs.dedup();
    report.push_str(&format!(
        "| {} |",
        if pl.x_label.is_some() {
            pl.x_label.clone().unwrap_or_default()
        } else {
            "x".into()
        }
    ));
    for s in &chart.series {
        report.push_str(&format!(" {} |", s.name));
    }
    report.push_str("\n|---|");
    for _ in &chart.series {
        report.push_str("---|");
    }
    report.push('\n');
    for x in xs {
        let xl = if !chart.x_categories.is_empty() {
            chart
                .x_categories
                .get(x as usize)
                .cloned()
                .unwrap_or_default()
        } else {
            fmt_num(x)
        };
        report.push_str(&format!("| {xl} |"));
        for s in &chart.series {
            let v = s.points.iter().find(|p| p.0 == x).map_or(f64::NAN, |p| p.1);
            report.push_str(&format!(" {} |", fmt_num(v)));
        }
        report.push('\n');
    }
    report.push('\n');
    report
}

/// The claims of an experiment evaluated: REPORT.md's table and one record per claim.
struct Claims {
    /// REPORT.md's "Ours next to the paper" section.
    markdown: String,
    /// Each claim's value and verdict (`claims.csv`, the score).
    records: Vec<ClaimRecord>,
}

/// REPORT.md's "Ours next to the paper" table: each claim's value in our runs, the paper's
/// value (or its kind's rule) and the verdict. With several seeds, "ours" is the mean over the
/// seeds of the claim's value at each seed, and a fifth column gives the claim at each seed
/// alone and how many of them match (a verdict that flips with the seed is a sampling
/// question, not a model one).
fn claims_section(exp: &Experiment, base: &Path, pts: &[Point]) -> Claims {
    let mut report = String::new();
    let seeds = &exp.sweep.seeds;
    let per_seed = seeds.len() > 1;
    report.push_str("## Ours next to the paper\n\n");
    if per_seed {
        report.push_str(&format!(
            "\"ours\" is the mean of the claim's values at the {} seeds ({}), the verdict that \
             mean's; the last column is the claim at each seed alone.\n\n| claim | ours | paper | verdict | per seed |\n|---|---|---|---|---|\n",
            seeds.len(),
            seeds
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    } else {
        report.push_str("| claim | ours | paper | verdict |\n|---|---|---|---|\n");
    }
    let summaries: Vec<serde_json::Value> = pts
        .iter()
        .filter_map(|p| summary_of(base, p).ok())
        .collect();
    let mut records = Vec::new();
    for c in &exp.claims {
        let (row, rec) = claim_row(exp, c, per_seed, base, pts, &summaries);
        report.push_str(&row);
        records.push(rec);
    }
    report.push('\n');
    Claims {
        markdown: report,
        records,
    }
}

/// The row of claim `c` in the claims table (with the per-seed column when `per_seed`) and
/// its record; `summaries` are the points' `summary.json` (to say why a claim has no data).
fn claim_row(
    exp: &Experiment,
    c: &Claim,
    per_seed: bool,
    base: &Path,
    pts: &[Point],
    summaries: &[serde_json::Value],
) -> (String, ClaimRecord) {
    // The mean of `metric` over the points of `series` that pass the claim's filter (and
    // have `seed`, when given).
    let val = |series: &str, metric: &str, seed: Option<u64>| -> Option<f64> {
        let vals: Vec<f64> = pts
            .iter()
            .filter(|p| p.series == series && matches_filter(p, &c.filter))
            .filter(|p| seed.is_none() || p.seed == seed)
            .filter_map(|p| summary_of(base, p).ok().and_then(|s| json_path(&s, metric)))
            .collect();
        (!vals.is_empty()).then(|| vals.iter().sum::<f64>() / vals.len() as f64)
    };
    // With seeds: the claim at each seed alone, and the mean of those values.
    let each: Vec<Option<f64>> = if per_seed {
        exp.sweep
            .seeds
            .iter()
            .map(|&sd| claim_value(c, |series, metric| val(series, metric, Some(sd))))
            .collect()
    } else {
        Vec::new()
    };
    // A seed whose value is 0 / 0 (NaN: both sides of a ratio zero, e.g. no incast at that
    // seed) has no value, as a seed without data: the mean and the spread are over the others.
    let at_seeds: Vec<f64> = each
        .iter()
        .flatten()
        .copied()
        .filter(|v| !v.is_nan())
        .collect();
    let ours = if per_seed {
        if !at_seeds.is_empty() {
            Some(at_seeds.iter().sum::<f64>() / at_seeds.len() as f64)
        } else if each.iter().flatten().any(|v| v.is_nan()) {
            Some(f64::NAN)
        } else {
            None
        }
    } else {
        claim_value(c, |series, metric| val(series, metric, None))
    };
    let mut verdict = claim_verdict(c, ours);
    if ours.is_none()
        && let Some(why) = no_data_reason(c, summaries)
    {
        verdict.push_str(&format!(" ({why})"));
    }
    let calibrated: Vec<&str> = c.calibrated.iter().map(|k| k.param.as_str()).collect();
    let shown = match (&c.scored_in, calibrated.is_empty()) {
        (Some(e), _) => format!("{verdict} (scored in {e}; not scored here)"),
        (None, true) => verdict.clone(),
        (None, false) => format!(
            "{verdict} (calibrated: {}; not scored)",
            calibrated.join(", ")
        ),
    };
    let mut row = format!(
        "| {} | {} | {} | {} |",
        c.text,
        ours.map_or("-".into(), fmt_ours),
        paper_column(c),
        shown
    );
    let ok = each
        .iter()
        .filter(|&&v| claim_verdict(c, v) == "matches")
        .count();
    let lo = at_seeds.iter().copied().reduce(f64::min);
    let hi = at_seeds.iter().copied().reduce(f64::max);
    if per_seed {
        row.push_str(&format!(
            " {} ({ok} of {} match) |",
            each.iter()
                .map(|v| v.map_or("-".into(), fmt_ours))
                .collect::<Vec<_>>()
                .join(" / "),
            each.len()
        ));
    }
    row.push('\n');
    let (low, high, _) = c.accepted();
    let rec = ClaimRecord {
        experiment: exp.meta.name.clone(),
        paper: exp.meta.paper.clone(),
        claim: c.text.clone(),
        kind: c.kind.map_or(String::new(), |k| k.name().to_string()),
        value: ours,
        low: low.is_finite().then_some(low),
        high: high.is_finite().then_some(high),
        verdict,
        calibrated: calibrated.join(";"),
        audited: c.kind.is_some(),
        scored_in: c.scored_in.clone().unwrap_or_default(),
        seeds: at_seeds.len() as u32,
        seeds_matching: ok as u32,
        value_min: lo,
        value_max: hi,
    };
    (row, rec)
}

/// `report` with a warning listing the `failed` points after its first paragraph (the
/// title).
fn with_failure_warning(report: &str, failed: &[String]) -> String {
    let mut warn = String::from(
        "> **Warning: some points did not finish** — their numbers below are from incomplete runs:\n",
    );
    for f in failed {
        warn.push_str(&format!(">\n> - {f}\n"));
    }
    warn.push('\n');
    match report.find("\n\n") {
        Some(i) => format!("{}\n\n{warn}{}", &report[..i], &report[i + 2..]),
        None => format!("{warn}{report}"),
    }
}

#[cfg(test)]
mod csv_tests {
    #[test]
    fn labels_with_commas_are_quoted() {
        assert_eq!(super::csv_field("SFC (0.5, 1) BDP"), "\"SFC (0.5, 1) BDP\"");
        assert_eq!(super::csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(super::csv_field("none"), "none");
    }

    /// The temp files of interrupted writes are recognised, outputs and the lock are not.
    #[test]
    fn stray_temps_are_recognised() {
        for t in [
            ".results.csv.tmp-123-0",
            ".REPORT.md.tmp-9-12",
            ".p99.tmp4567-0.png",
            ".bins.tmp1-3.svg",
            ".sfc-records-77-0.spill",
            ".sfc-write-probe-11490",
        ] {
            assert!(super::is_stray_temp(t), "{t}");
        }
        for f in [
            ".sfc-lock",
            "results.csv",
            "p99.png",
            "tmp-1",
            ".tmp",
            ".x.tmpfile",
            "a.tmp-1",
        ] {
            assert!(!super::is_stray_temp(f), "{f}");
        }
    }
}

#[cfg(test)]
mod path_tests {
    use super::*;

    fn summary() -> serde_json::Value {
        serde_json::json!({
            "slowdown": {"p99": 8.0},
            "bins": [
                {"hi_bytes": 1000, "slowdown": {"p99": 6.0}},
                {"hi_bytes": 250000, "slowdown": {"p99": 3.0}},
            ],
            "by_dport": [
                {"dport": 100, "slowdown": {"p99": 5.0}},
                {"dport": 200, "slowdown": {"p99": 12.0}},
            ],
            "sfc": {"mode": "sfc"},
        })
    }

    #[test]
    fn paths_index_and_select_array_elements() {
        let s = summary();
        assert_eq!(json_path(&s, "slowdown.p99"), Some(8.0));
        assert_eq!(json_path(&s, "bins.1.slowdown.p99"), Some(3.0));
        assert_eq!(json_path(&s, "by_dport[dport=100].slowdown.p99"), Some(5.0));
        assert_eq!(
            json_path(&s, "by_dport[dport=200].slowdown.p99"),
            Some(12.0)
        );
        assert_eq!(json_path(&s, "bins[hi_bytes=1000].slowdown.p99"), Some(6.0));
        assert_eq!(json_path(&s, "bins[hi_bytes=1e3].slowdown.p99"), Some(6.0));
        // No such element / field: no value, not a wrong one.
        assert_eq!(json_path(&s, "by_dport[dport=300].slowdown.p99"), None);
        assert_eq!(json_path(&s, "bins[lo_bytes=0].slowdown.p99"), None);
        // A string field is not a number.
        assert_eq!(json_path(&s, "sfc.mode"), None);
    }

    #[test]
    fn malformed_paths_are_rejected() {
        for p in [
            "",
            "a..b",
            ".a",
            "bins[hi_bytes=1000",
            "bins[hi_bytes]",
            "[dport=100].x",
            "bins[hi_bytes=1]x",
        ] {
            assert!(!valid_metric_path(p), "{p}");
        }
        for p in [
            "a",
            "bins.0.slowdown.p99",
            "by_dport[dport=100].slowdown.p99",
        ] {
            assert!(valid_metric_path(p), "{p}");
        }
    }

    fn claim(den: Option<&str>, versus: Option<&str>) -> super::super::Claim {
        super::super::Claim {
            text: "t".into(),
            metric: "small".into(),
            versus: versus.map(String::from),
            num: "none".into(),
            den: den.map(String::from),
            filter: Default::default(),
            paper_low: Some(1.0),
            paper_high: None,
            tolerance: None,
            quote: None,
            source: None,
            kind: None,
            read_off_plot: false,
            better: None,
            calibrated: Vec::new(),
            scored_in: None,
        }
    }

    /// A claim of `kind` on the paper's `low` (and `high`), as the file would write it.
    fn audited(kind: &str, low: Option<f64>, high: Option<f64>) -> super::super::Claim {
        let mut c = claim(Some("SFC"), None);
        c.kind = Some(match kind {
            "point" => super::super::ClaimKind::Point,
            "range" => super::super::ClaimKind::Range,
            "bound" => super::super::ClaimKind::Bound,
            _ => super::super::ClaimKind::Direction,
        });
        c.paper_low = low;
        c.paper_high = high;
        c
    }

    /// The tolerance rule of each kind at its edges, by hand: point 100 ± 20 % = [80, 120]
    /// (± 30 % = [70, 130] read off a plot); range [50, 200] ± 10 % = [45, 220]; bound exact;
    /// direction strictly above / below 1.
    #[test]
    fn each_kind_has_one_tolerance_rule() {
        let v = |c: &super::super::Claim, x: f64| claim_verdict(c, Some(x));
        let point = audited("point", Some(100.0), None);
        for (x, want) in [
            (80.0, "matches"),
            (120.0, "matches"),
            (100.0, "matches"),
            (79.9, "differs (ours lower)"),
            (120.1, "differs (ours higher)"),
        ] {
            assert_eq!(v(&point, x), want, "point 100, ours {x}");
        }
        let mut plot = point.clone();
        plot.read_off_plot = true;
        assert_eq!(v(&plot, 70.0), "matches");
        assert_eq!(v(&plot, 130.0), "matches");
        assert_eq!(v(&plot, 69.9), "differs (ours lower)");
        assert_eq!(v(&plot, 130.1), "differs (ours higher)");
        let range = audited("range", Some(50.0), Some(200.0));
        assert_eq!(v(&range, 45.0), "matches");
        assert_eq!(v(&range, 220.0), "matches");
        assert_eq!(v(&range, 44.9), "differs (ours lower)");
        assert_eq!(v(&range, 220.1), "differs (ours higher)");
        let upper = audited("bound", None, Some(20.0));
        assert_eq!(v(&upper, 20.0), "matches");
        assert_eq!(v(&upper, -5.0), "matches");
        assert_eq!(v(&upper, 20.001), "differs (ours higher)");
        let lower = audited("bound", Some(2.0), None);
        assert_eq!(v(&lower, 2.0), "matches");
        assert_eq!(v(&lower, f64::INFINITY), "matches");
        assert_eq!(v(&lower, 1.999), "differs (ours lower)");
        let mut higher = audited("direction", None, None);
        higher.better = Some(super::super::Better::Higher);
        assert_eq!(v(&higher, 1.001), "matches");
        assert_eq!(v(&higher, f64::INFINITY), "matches");
        assert_eq!(v(&higher, 1.0), "differs (no difference)");
        assert_eq!(v(&higher, 0.5), "differs (ours lower)");
        let mut lower_is_better = higher.clone();
        lower_is_better.better = Some(super::super::Better::Lower);
        assert_eq!(v(&lower_is_better, 0.0), "matches");
        assert_eq!(v(&lower_is_better, 0.999), "matches");
        assert_eq!(v(&lower_is_better, 1.0), "differs (no difference)");
        assert_eq!(v(&lower_is_better, 3.0), "differs (ours higher)");
        assert_eq!(claim_verdict(&higher, Some(f64::NAN)), "undefined (0 / 0)");
        assert_eq!(claim_verdict(&higher, None), "no data");
        // The same claim with a calibrated parameter: the same verdict, never scored.
        let mut cal = point.clone();
        cal.calibrated.push(super::super::Calibration {
            param: "sfc.bts_delay".into(),
            why: "w".into(),
            paper_value: None,
        });
        assert_eq!(v(&cal, 100.0), "matches");
        assert!(point.scored() && !cal.scored());
        // Repeated from the experiment that scores it: the same verdict, not scored here.
        let mut rep = point.clone();
        rep.scored_in = Some("other".into());
        assert_eq!(v(&rep, 100.0), "matches");
        assert!(!rep.scored());
        // Unaudited: today's rule, the paper's range widened by the claim's tolerance (25 %
        // by default), the side taken from the paper's low end.
        let mut old = claim(Some("SFC"), None);
        old.paper_high = Some(2.0);
        assert!(!old.scored());
        assert_eq!(v(&old, 0.75), "matches");
        assert_eq!(v(&old, 2.5), "matches");
        assert_eq!(v(&old, 0.74), "differs (ours lower)");
        assert_eq!(v(&old, 2.51), "differs (ours higher)");
        old.tolerance = Some(0.0);
        assert_eq!(v(&old, 0.99), "differs (ours lower)");
        assert_eq!(v(&old, 1.0), "matches");
    }

    /// REPORT.md's paper column: an unaudited claim's range, or its kind's rule.
    #[test]
    fn paper_column_shows_the_rule() {
        assert_eq!(paper_column(&claim(None, None)), "1");
        assert_eq!(
            paper_column(&audited("point", Some(1.24), None)),
            "1.240 ± 20 %"
        );
        assert_eq!(
            paper_column(&audited("range", Some(2.0), Some(3.0))),
            "2–3 ± 10 %"
        );
        assert_eq!(paper_column(&audited("bound", None, Some(0.0))), "≤ 0");
        assert_eq!(paper_column(&audited("bound", Some(5.0), None)), "≥ 5");
        let mut d = audited("direction", None, None);
        d.better = Some(super::super::Better::Lower);
        assert_eq!(paper_column(&d), "< 1");
    }

    #[test]
    fn claim_values_are_values_ratios_and_ratios_of_ratios() {
        // none: small 6, large 3; SFC: small 2, large 2.
        let val = |series: &str, metric: &str| -> Option<f64> {
            Some(match (series, metric) {
                ("none", "small") => 6.0,
                ("none", "large") => 3.0,
                ("SFC", "small") => 2.0,
                ("SFC", "large") => 2.0,
                _ => return None,
            })
        };
        assert_eq!(claim_value(&claim(None, None), val), Some(6.0));
        assert_eq!(claim_value(&claim(Some("SFC"), None), val), Some(3.0));
        // Gain on small flows (3×) over the gain on large ones (1.5×) = 2.
        assert_eq!(
            claim_value(&claim(Some("SFC"), Some("large")), val),
            Some(2.0)
        );
        assert_eq!(claim_value(&claim(Some("other"), None), val), None);
    }

    /// The build identity in every fingerprint: the hash of the running executable, stable
    /// within a process (so the sweep and its point processes agree).
    #[test]
    fn build_id_hashes_the_executable() {
        let id = build_id();
        assert_eq!(id.len(), 16, "{id}");
        assert!(id.chars().all(|c| c.is_ascii_hexdigit()), "{id}");
        assert_eq!(id, build_id());
    }

    /// Zeros in a ratio claim: 0 / 0 is undefined (not "no data", not a match), x / 0 is
    /// above any paper range; a missing value names the metric path no summary has.
    #[test]
    fn ratio_claims_with_zeros_and_missing_paths() {
        let zeros = |_: &str, _: &str| Some(0.0);
        let c = claim(Some("SFC"), None);
        let v = claim_value(&c, zeros);
        assert!(v.is_some_and(f64::is_nan));
        assert_eq!(claim_verdict(&c, v), "undefined (0 / 0)");
        assert_eq!(fmt_ours(v.unwrap()), "0 / 0");
        let over_zero = |series: &str, _: &str| Some(if series == "none" { 5.0 } else { 0.0 });
        let v = claim_value(&c, over_zero);
        assert_eq!(v, Some(f64::INFINITY));
        assert_eq!(claim_verdict(&c, v), "differs (ours higher)");
        assert_eq!(fmt_ours(f64::INFINITY), "∞");
        assert_eq!(claim_verdict(&c, None), "no data");

        let sums = [
            serde_json::json!({"small": 1.0}),
            serde_json::json!({"large": 2.0}),
        ];
        assert_eq!(no_data_reason(&claim(None, None), &sums), None);
        assert_eq!(
            no_data_reason(&claim(None, Some("huge")), &sums).as_deref(),
            Some("no point's summary.json has `huge`")
        );
        assert_eq!(
            no_data_reason(&claim(None, None), &[]).as_deref(),
            Some("no completed point")
        );
    }

    #[test]
    fn throughput_over_time_sums_the_chosen_receivers() {
        let dir = std::env::temp_dir().join(format!("sfc-tput-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("throughput.csv");
        std::fs::write(
            &f,
            "sample,time_ns,receiver,gbps\n0,0,1,10.0\n1,0,2,5.5\n2,100000,1,7.0\n3,200000,2,1.5\n",
        )
        .unwrap();
        let only2 = throughput_over_time(&f, "receiver", &[2]).unwrap();
        // Every time that appears keeps a point (0 when receiver 2 had no sample there).
        assert_eq!(
            only2.into_iter().collect::<Vec<_>>(),
            vec![(0, 5.5), (100_000, 0.0), (200_000, 1.5)]
        );
        let all = throughput_over_time(&f, "receiver", &[]).unwrap();
        assert_eq!(all[&0], 15.5);
        assert_eq!(all[&100_000], 7.0);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// `sfc experiment run --seed N`: the scenario's seed is replaced (the same as editing the
    /// file's `seed = …`: same point ids and overrides, another fingerprint), and a seed
    /// above TOML's integer range is written as a string the scenario reads. (The output directory and REPORT.md's
    /// command line were checked by hand: `sfc-fig15-quick-seed2`, `--quick --seed 2`.)
    #[test]
    fn seed_override_is_the_edited_file() {
        let text = include_str!("../../experiments/sfc-fig15.toml");
        let dir = std::path::Path::new(".");
        let exp = crate::experiment::Experiment::parse(text, "f", dir).unwrap();
        let edited = text.replacen("seed = 1", "seed = 7", 1);
        let by_hand = crate::experiment::Experiment::parse(&edited, "f", dir).unwrap();
        let seeded = exp.clone().with_seed(7).unwrap();
        assert_eq!(seeded.seed_override, Some(7));
        assert_eq!(seeded.seed_args(), ["--seed", "7"]);
        assert_eq!(seeded.seed_dir_suffix(), "-seed7");
        assert!(exp.seed_args().is_empty() && exp.seed_dir_suffix().is_empty());
        assert_eq!(seeded.scenario_text, by_hand.scenario_text);
        let (a, b) = (points(&seeded, true), points(&exp, true));
        assert_eq!(a, points(&by_hand, true));
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b) {
            assert_eq!((&x.id, &x.sets), (&y.id, &y.sets));
            assert_ne!(x.fingerprint, y.fingerprint, "{}", x.id);
        }
        // Seeds above TOML's integer range go into the scenario as a decimal string, which
        // the scenario reads as that u64.
        let big = exp.clone().with_seed(u64::MAX).unwrap();
        let sc: toml::Table = toml::from_str(&big.scenario_text).unwrap();
        assert_eq!(sc["seed"].as_str(), Some("18446744073709551615"));
        let sc = crate::scenario::from_str(&big.scenario_text, "f", dir, &[]).unwrap();
        assert_eq!(sc.net.seed, u64::MAX);
        // The scenario the points run carries the seed.
        let sc: toml::Table = toml::from_str(&seeded.scenario_text).unwrap();
        assert_eq!(sc["seed"].as_integer(), Some(7));
    }

    /// `--seeds A,B,…`: every point runs once per seed; REPORT.md checks each claim on the
    /// seeds' mean (the fourth column, as without seeds) and at each seed alone (a fifth
    /// column with the count that match), so a verdict that flips with the seed shows.
    #[test]
    fn seeds_report_the_mean_and_each_seed() {
        let text = r#"
[experiment]
name = "seeds-test"
title = "t"
paper = "p"
figure = "f"
description = "d"
[scenario]
name = "s"
seed = 1
[scenario.topology]
kind = "star"
hosts = 2
[[scenario.traffic]]
kind = "long_lived"
pairs = [[0, 1]]
[sweep]
series = [{ name = "none", set = [] }, { name = "SFC", set = [] }]
[[claim]]
text = "peak ratio"
metric = "peak_buffer_bytes"
num = "none"
den = "SFC"
paper_low = 2.5
paper_high = 3.0
tolerance = 0.1
[[claim]]
text = "drop ratio"
metric = "drops"
num = "none"
den = "SFC"
paper_low = 2.0
paper_high = 3.0
tolerance = 0.1
"#;
        let dir = std::path::Path::new(".");
        let exp = crate::experiment::Experiment::parse(text, "t", dir).unwrap();
        assert!(exp.clone().with_seeds(&[]).is_err());
        assert!(
            exp.clone()
                .with_seeds(&[2, 1, 2])
                .unwrap_err()
                .contains("repeated")
        );
        let big = exp.clone().with_seeds(&[u64::MAX, 1]).unwrap();
        assert_eq!(big.sweep.seeds, [1, u64::MAX]);
        assert!(
            points(&big, false)
                .iter()
                .any(|p| p.sets.contains(&"seed=18446744073709551615".to_string()))
        );
        let sorted = exp.clone().with_seeds(&[3, 1, 2]).unwrap();
        assert_eq!(sorted.sweep.seeds, [1, 2, 3]);
        let exp = exp.with_seeds(&[1, 2, 3]).unwrap();
        assert_eq!(exp.seed_args(), ["--seeds", "1,2,3"]);
        assert_eq!(exp.seed_dir_suffix(), "-seeds1-2-3");
        // A single --seed cannot override a sweep that sets each point's seed.
        let one = exp.clone().with_seed(9).unwrap_err();
        assert!(one.contains("--seeds"), "{one}");
        let pts = points(&exp, false);
        assert_eq!(pts.len(), 6);
        let base = std::env::temp_dir().join(format!("sfc-seeds-{}", std::process::id()));
        // Seed 1: 30 / 10 = 3.0 (matches), seed 2: 40 / 10 = 4.0 (differs), seed 3: 20 / 40 =
        // 0.5 (differs, lower); their mean 2.5 matches (the ratio of the metrics' means,
        // 30 / 20 = 1.5, would not).
        for p in &pts {
            let v = match (p.series.as_str(), p.seed) {
                ("none", Some(1)) => 30.0,
                ("none", Some(2)) => 40.0,
                ("none", Some(3)) => 20.0,
                ("SFC", Some(3)) => 40.0,
                _ => 10.0,
            };
            let d = point_dir(&base, p);
            std::fs::create_dir_all(&d).unwrap();
            // Drops: 4 / 2 at seed 1, 6 / 2 at seed 2, 0 / 0 at seed 3 (no value there).
            let drops = match (p.series.as_str(), p.seed) {
                ("none", Some(1)) => 4.0,
                ("none", Some(2)) => 6.0,
                (_, Some(3)) => 0.0,
                _ => 2.0,
            };
            std::fs::write(
                d.join("summary.json"),
                serde_json::json!({ "peak_buffer_bytes": v, "drops": drops, "complete": true })
                    .to_string(),
            )
            .unwrap();
        }
        aggregate(&exp, &base, &pts, false, Some(0.0)).unwrap();
        let report = std::fs::read_to_string(base.join("REPORT.md")).unwrap();
        let row = report
            .lines()
            .find(|l| l.starts_with("| peak ratio |"))
            .expect("claim row");
        assert_eq!(
            row, "| peak ratio | 2.500 | 2.500–3 | matches | 3 / 4 / 0.500 (1 of 3 match) |",
            "{report}"
        );
        // claims.csv: the mean, the seeds, how many match alone, the spread.
        let csv = std::fs::read_to_string(base.join("claims.csv")).unwrap();
        let recs = crate::experiment::score::parse_claims_csv(&csv, "claims.csv").unwrap();
        let seeds_cols = |i: usize| {
            let r = &recs[i];
            (r.value, r.seeds, r.seeds_matching, r.value_min, r.value_max)
        };
        assert_eq!(seeds_cols(0), (Some(2.5), 3, 1, Some(0.5), Some(4.0)));
        // A seed at 0 / 0 has no value: the mean of 2 and 3 over the two others.
        assert_eq!(seeds_cols(1), (Some(2.5), 2, 2, Some(2.0), Some(3.0)));
        assert_eq!(recs[1].verdict, "matches");
        assert!(report.contains("| claim | ours | paper | verdict | per seed |"));
        assert!(
            report.contains("`sfc experiment run seeds-test --seeds 1,2,3`"),
            "{report}"
        );
        let _ = std::fs::remove_dir_all(&base);
    }

    /// A finished point is reused only while the experiment's scenario is the one it ran:
    /// editing `[scenario]` (here its seed) changes every point's fingerprint, so the sweep
    /// reruns them instead of reporting the old results.
    #[test]
    fn finished_points_are_reused_only_for_the_same_scenario() {
        let text = include_str!("../../experiments/sfc-fig15.toml");
        let dir = std::path::Path::new(".");
        let exp = crate::experiment::Experiment::parse(text, "f", dir).unwrap();
        let base = std::env::temp_dir().join(format!("sfc-reuse-{}", std::process::id()));
        let p = &points(&exp, true)[0];
        let d = point_dir(&base, p);
        std::fs::create_dir_all(&d).unwrap();
        let rec = serde_json::json!({"id": p.id, "series": p.series, "sets": p.sets,
            "fingerprint": p.fingerprint});
        std::fs::write(d.join("point.json"), rec.to_string()).unwrap();
        assert!(!is_complete(&base, p), "no summary.json yet");
        std::fs::write(d.join("summary.json"), "{}").unwrap();
        assert!(is_complete(&base, p));
        // A truncated (or otherwise unparsable) summary.json is not complete: it runs again
        // (it was counted complete, and every later report failed on it).
        for bad in ["{\"flows\": {\"count\": 1", "", "[1, 2]"] {
            std::fs::write(d.join("summary.json"), bad).unwrap();
            assert!(!is_complete(&base, p), "{bad:?}");
            assert!(matches!(completeness(&base, p), Err(Some(_))), "{bad:?}");
        }
        std::fs::write(d.join("summary.json"), "{}").unwrap();
        let edited = text.replacen("seed = 1", "seed = 2", 1);
        assert_ne!(edited, text);
        let exp2 = crate::experiment::Experiment::parse(&edited, "f", dir).unwrap();
        let p2 = &points(&exp2, true)[0];
        assert_eq!(
            (&p2.id, &p2.sets),
            (&p.id, &p.sets),
            "same point, other scenario"
        );
        assert!(!is_complete(&base, p2), "stale result reused");
        // A record from before fingerprints existed is not trusted either.
        let old = serde_json::json!({"id": p.id, "series": p.series, "sets": p.sets});
        std::fs::write(d.join("point.json"), old.to_string()).unwrap();
        assert!(!is_complete(&base, p));
        let _ = std::fs::remove_dir_all(&base);
    }
}
