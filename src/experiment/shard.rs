//! Sweeps split over machines: a deterministic share of an experiment's points per shard
//! (`sfc experiment run NAME --shard I/N`), balanced by each point's estimated cost; the sweep
//! record that lets `merge` and `status` rebuild the points from an output directory; merging
//! shards' points into one directory and writing the report; and the progress of a sweep
//! (`sfc experiment status OUT`).
//!
//! Shards are numbered from 0 (`--shard 0/4` … `--shard 3/4`), as Slurm array task ids
//! (`--array=0-3`) and Kubernetes completion indexes are, so a job passes its index as is.

use std::path::{Path, PathBuf};

use super::Experiment;
use super::runner::{Point, is_complete, point_dir};
use crate::metrics::output::write_atomic;

/// One share of a sweep: shard `index` (0-based) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This shard, from 0 to `count - 1`.
    pub index: usize,
    /// Number of shards the sweep is split into (at least 1).
    pub count: usize,
}

impl Shard {
    /// Parse `I/N` (shard I of N, I counted from 0). Errors name the value and the valid
    /// range.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let usage =
            "expected I/N, shard I of N with I counted from 0 (e.g. --shard 0/4 … --shard 3/4)";
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| format!("--shard {s}: {usage}"))?;
        let parse = |x: &str, what: &str| {
            x.trim().parse::<usize>().map_err(|_| {
                format!(
                    "--shard {s}: {what} `{}` is not a whole number; {usage}",
                    x.trim()
                )
            })
        };
        let (index, count) = (
            parse(i, "the shard index")?,
            parse(n, "the number of shards")?,
        );
        if count == 0 {
            return Err(format!(
                "--shard {s}: the number of shards must be at least 1"
            ));
        }
        if index >= count {
            return Err(format!(
                "--shard {s}: shard index {index} is out of range: the {count} shard{} are numbered from 0 to {} (0-based)",
                if count == 1 { "" } else { "s" },
                count - 1
            ));
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The estimated cost of running point `p`, a relative weight (not a time): the kilobytes its
/// flows deliver (at most what its hosts can send at line rate over the simulated time), plus
/// one per flow, plus one per simulated microsecond (the span its monitors are sized for,
/// [`crate::runguard::estimate_from_shape`]). At least 1; a point whose scenario does not
/// resolve costs 1 (its run reports the error).
pub fn point_cost(exp: &Experiment, p: &Point) -> u64 {
    let label = format!("{} [{}]", exp.source, p.id);
    let Ok((sc, stream)) =
        crate::scenario::from_str_streaming(&exp.scenario_text, &label, &exp.dir, &p.sets)
    else {
        return 1;
    };
    let owned;
    let shape = match stream.shape() {
        Some(s) => s,
        None => {
            let mut s = crate::workload::shape::FlowShape::new();
            for f in stream.clone() {
                s.add(f.start_ps, f.size_bytes);
            }
            owned = s;
            &owned
        }
    };
    let est = crate::runguard::estimate_from_shape(&sc.topo, &sc.net, 0, shape);
    let hosts = sc.topo.hosts().len() as u128;
    let rate = u128::from(sc.topo.host_rate_bps().unwrap_or(0));
    let line_rate_bytes = hosts * rate * u128::from(est.horizon_ps) / 8 / 1_000_000_000_000;
    let bytes = if line_rate_bytes > 0 {
        shape.total_bytes().min(line_rate_bytes)
    } else {
        shape.total_bytes()
    };
    let kb = u64::try_from(bytes / 1000).unwrap_or(u64::MAX);
    kb.saturating_add(shape.flows())
        .saturating_add(est.horizon_ps / 1_000_000)
        .max(1)
}

/// The estimated cost of every point of `pts` ([`point_cost`]), in order.
pub fn point_costs(exp: &Experiment, pts: &[Point]) -> Vec<u64> {
    pts.iter().map(|p| point_cost(exp, p)).collect()
}

/// The shard of each point, given the points' costs: the costliest point first (ties in
/// point order), each to the shard with the least cost so far (ties to the lowest index). The
/// same costs always give the same shares, whichever machine computes them; with more shards
/// than points, the extra shards are empty.
pub fn assign(costs: &[u64], count: usize) -> Vec<usize> {
    let count = count.max(1);
    let mut order: Vec<usize> = (0..costs.len()).collect();
    order.sort_by(|&a, &b| costs[b].cmp(&costs[a]).then(a.cmp(&b)));
    let mut load = vec![0u128; count];
    let mut shard_of = vec![0; costs.len()];
    for i in order {
        let s = (0..count)
            .min_by_key(|&s| (load[s], s))
            .expect("at least one shard");
        load[s] += u128::from(costs[i]);
        shard_of[i] = s;
    }
    shard_of
}

/// The points of `pts` that shard `shard` runs (in sweep order), with the cost of each.
pub fn shard_points<'a>(exp: &Experiment, pts: &'a [Point], shard: Shard) -> Vec<(&'a Point, u64)> {
    let costs = point_costs(exp, pts);
    let of = assign(&costs, shard.count);
    pts.iter()
        .zip(costs)
        .zip(of)
        .filter(|(_, s)| *s == shard.index)
        .map(|((p, c), _)| (p, c))
        .collect()
}

/// Name of the sweep record in an experiment's output directory ([`SweepRecord`]).
pub const RECORD_FILE: &str = ".sfc-sweep.json";

/// How a sweep's points were made, kept in its output directory ([`RECORD_FILE`]) so that
/// `sfc experiment merge` and `sfc experiment status` rebuild the same points from the
/// directory alone: the experiment as named on the command line, the `--dir` it was looked up
/// in, the directory both are relative to, `--quick` and the seed arguments.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SweepRecord {
    /// The experiment's name or file, as given to `sfc experiment run`.
    pub experiment: String,
    /// `--dir`, as given.
    pub dir: Option<PathBuf>,
    /// The working directory of the run (absolute): relative names are relative to it.
    pub cwd: PathBuf,
    /// `--quick`.
    pub quick: bool,
    /// `--seed N` / `--seeds A,B,C` ([`Experiment::seed_args`]).
    pub seed_args: Vec<String>,
}

impl SweepRecord {
    /// The record of experiment `name` (with `dir`, `quick`, `seed_args`) run from the
    /// current directory.
    pub fn new(name: &str, dir: Option<&Path>, quick: bool, seed_args: Vec<String>) -> SweepRecord {
        SweepRecord {
            experiment: name.to_string(),
            dir: dir.map(Path::to_path_buf),
            cwd: std::env::current_dir().unwrap_or_default(),
            quick,
            seed_args,
        }
    }

    /// The arguments of `sfc experiment run` that make these points: `NAME [--dir D]
    /// [--quick] [--seed N | --seeds A,B,C]`.
    pub fn run_args(&self) -> Vec<String> {
        let mut a = vec![self.experiment.clone()];
        if let Some(d) = &self.dir {
            a.push("--dir".into());
            a.push(d.display().to_string());
        }
        if self.quick {
            a.push("--quick".into());
        }
        a.extend(self.seed_args.iter().cloned());
        a
    }

    /// Write the record into `base` (atomically), unless it holds this record already.
    pub fn write(&self, base: &Path) -> Result<(), String> {
        let v = serde_json::json!({
            "experiment": self.experiment,
            "dir": self.dir.as_ref().map(|d| d.display().to_string()),
            "cwd": self.cwd.display().to_string(),
            "quick": self.quick,
            "seed_args": self.seed_args,
        });
        let path = base.join(RECORD_FILE);
        let text = serde_json::to_string_pretty(&v).map_err(|e| e.to_string())? + "\n";
        // Shards write the same record: the first one's stays.
        if std::fs::read_to_string(&path).is_ok_and(|t| t == text) {
            return Ok(());
        }
        write_atomic(&path, text.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Read the record of the sweep in `base`.
    pub fn read(base: &Path) -> Result<SweepRecord, String> {
        let path = base.join(RECORD_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                format!(
                    "{}: no sweep here ({} is missing: `sfc experiment run` writes it when a sweep starts)",
                    base.display(),
                    RECORD_FILE
                )
            } else {
                format!("{}: {e}", path.display())
            }
        })?;
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let bad = |k: &str| format!("{}: `{k}` is missing or of the wrong type", path.display());
        let s = |k: &str| v[k].as_str().map(str::to_string).ok_or_else(|| bad(k));
        Ok(SweepRecord {
            experiment: s("experiment")?,
            dir: v["dir"].as_str().map(PathBuf::from),
            cwd: PathBuf::from(s("cwd")?),
            quick: v["quick"].as_bool().ok_or_else(|| bad("quick"))?,
            seed_args: v["seed_args"]
                .as_array()
                .ok_or_else(|| bad("seed_args"))?
                .iter()
                .map(|x| {
                    x.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| bad("seed_args"))
                })
                .collect::<Result<_, _>>()?,
        })
    }

    /// Load the experiment as the run did: `find_in(experiment, dir)` with the seed arguments
    /// applied. Relative names are resolved from the current directory (the caller moves to
    /// [`SweepRecord::cwd`] first).
    pub fn load(&self) -> Result<Experiment, String> {
        let mut e = super::find_in(&self.experiment, self.dir.as_deref())?;
        match self.seed_args.as_slice() {
            [] => {}
            [f, v] if f == "--seed" => {
                let s = v
                    .parse()
                    .map_err(|_| format!("bad seed `{v}` in {RECORD_FILE}"))?;
                e = e.with_seed(s)?;
            }
            [f, v] if f == "--seeds" => {
                let l = v
                    .split(',')
                    .map(|x| {
                        x.parse()
                            .map_err(|_| format!("bad seeds `{v}` in {RECORD_FILE}"))
                    })
                    .collect::<Result<Vec<u64>, String>>()?;
                e = e.with_seeds(&l)?;
            }
            other => return Err(format!("bad seed arguments {other:?} in {RECORD_FILE}")),
        }
        Ok(e)
    }
}

/// A shell word: `s` as is when it is made of safe characters, else single-quoted.
pub fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The command that runs point `p` of the sweep recorded as `rec` into `base`.
pub fn rerun_point_command(rec: &SweepRecord, base: &Path, p: &Point) -> String {
    let mut w = vec!["sfc".to_string(), "experiment".into(), "run".into()];
    w.extend(rec.run_args());
    w.extend([
        "--out".into(),
        base.display().to_string(),
        "--point".into(),
        p.id.clone(),
    ]);
    w.iter()
        .map(|x| shell_word(x))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Open (creating it) the lock file `path` and `flock` it, shared or `exclusive`, without
/// waiting. `Ok(None)` when another process holds a conflicting lock. A file system that
/// does not support `flock` (some cluster file systems, unless mounted with it) gives the
/// file unlocked: shards then rely on the atomic writes alone.
fn flock_file(path: &Path, exclusive: bool) -> Result<Option<std::fs::File>, String> {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| {
            crate::fsutil::describe("cannot write into the output directory: creating", path, &e)
        })?;
    #[cfg(unix)]
    {
        use std::os::unix::io::AsRawFd;
        let op = if exclusive {
            libc::LOCK_EX
        } else {
            libc::LOCK_SH
        };
        // SAFETY: flock on a file descriptor this function owns.
        if unsafe { libc::flock(f.as_raw_fd(), op | libc::LOCK_NB) } != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
                return Ok(None);
            }
        }
    }
    Ok(Some(f))
}

/// Take the lock of a point's directory `d` (`.sfc-lock` in it, `flock`), held while the
/// returned file is open: two processes never run one point at once. Tries for about a
/// second (a `status` probing the lock holds it for an instant) before giving up.
pub fn lock_point(d: &Path, id: &str) -> Result<std::fs::File, String> {
    crate::fsutil::check_output_dir(d)?;
    std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    for _ in 0..20 {
        if let Some(f) = flock_file(&d.join(".sfc-lock"), true)? {
            return Ok(f);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Err(format!(
        "{}: point {id} is being run by another process (a duplicate shard, or a sweep into \
         the same directory)",
        d.display()
    ))
}

/// Whether a process holds the lock of point directory `d` (it is running the point).
pub fn point_running(d: &Path) -> bool {
    let path = d.join(".sfc-lock");
    path.is_file() && matches!(flock_file(&path, false), Ok(None))
}

/// A shared lock on the sweep directory `base` (`.sfc-lock`): shards running into one
/// directory hold it together; a sweep or merge that writes the report holds it alone
/// ([`crate::runguard::lock_output_dir`]), so neither starts while the other runs.
pub fn lock_dir_shared(base: &Path) -> Result<std::fs::File, String> {
    crate::fsutil::check_output_dir(base)?;
    std::fs::create_dir_all(base).map_err(|e| format!("{}: {e}", base.display()))?;
    flock_file(&base.join(".sfc-lock"), false)?.ok_or_else(|| {
        format!(
            "{}: a sweep or merge is writing this directory's report: wait for it to \
             finish, or give another --out",
            base.display()
        )
    })
}

/// Copy point `p`'s results from the shard directory `from` into `base` (which lacks them):
/// every file of the point's directory, each written atomically, `summary.json` (the
/// completion marker) last and the old one removed first.
fn copy_point(from: &Path, base: &Path, p: &Point) -> Result<(), String> {
    let (src, dst) = (point_dir(from, p), point_dir(base, p));
    std::fs::create_dir_all(&dst).map_err(|e| format!("{}: {e}", dst.display()))?;
    let _ = std::fs::remove_file(dst.join("summary.json"));
    let mut names: Vec<std::ffi::OsString> = std::fs::read_dir(&src)
        .map_err(|e| format!("{}: {e}", src.display()))?
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name())
        .filter(|n| !n.to_string_lossy().starts_with('.'))
        .collect();
    // summary.json last, the others in name order.
    names.sort_by_key(|n| (n == "summary.json", n.clone()));
    for n in names {
        let bytes =
            std::fs::read(src.join(&n)).map_err(|e| format!("{}: {e}", src.join(&n).display()))?;
        write_atomic(&dst.join(&n), &bytes)
            .map_err(|e| format!("{}: {e}", dst.join(&n).display()))?;
    }
    Ok(())
}

/// Bring into `base` every point of `pts` that `base` lacks and one of `shard_dirs` holds
/// complete (the first such directory). Returns how many were copied.
pub fn gather(base: &Path, shard_dirs: &[PathBuf], pts: &[Point]) -> Result<usize, String> {
    let mut copied = 0;
    for p in pts {
        if is_complete(base, p) {
            continue;
        }
        if let Some(from) = shard_dirs.iter().find(|d| is_complete(d, p)) {
            copy_point(from, base, p)?;
            copied += 1;
        }
    }
    Ok(copied)
}

/// State of one point of a sweep directory ([`point_state`]).
#[derive(Clone, Debug, PartialEq)]
pub enum PointState {
    /// Complete with this configuration and build.
    Done,
    /// Complete, but its run reported a failure (`failure` in `summary.json`), or its
    /// `summary.json` cannot be read: the reason.
    Failed(String),
    /// A process holds the point's lock.
    Running,
    /// Not run (or interrupted, or run with another configuration or build): a note, empty
    /// when it never started.
    Missing(String),
}

/// The state of point `p` in sweep directory `base`.
pub fn point_state(base: &Path, p: &Point) -> PointState {
    let d = point_dir(base, p);
    if point_running(&d) {
        return PointState::Running;
    }
    if is_complete(base, p) {
        let s = std::fs::read_to_string(d.join("summary.json")).unwrap_or_default();
        let v: serde_json::Value = serde_json::from_str(&s).unwrap_or_default();
        return match v.get("failure").and_then(|f| f.as_str()) {
            Some(f) => PointState::Failed(f.to_string()),
            None => PointState::Done,
        };
    }
    let Ok(rec) = std::fs::read_to_string(d.join("point.json")) else {
        return PointState::Missing(String::new());
    };
    let v: serde_json::Value = serde_json::from_str(&rec).unwrap_or_default();
    if v["fingerprint"].as_str() != Some(p.fingerprint.as_str()) {
        return PointState::Missing("ran with another build or experiment file: runs again".into());
    }
    match std::fs::read_to_string(d.join("summary.json")) {
        Ok(_) => PointState::Failed("its summary.json is unusable: runs again".into()),
        Err(_) => PointState::Missing("interrupted: runs again".into()),
    }
}

/// `sfc experiment merge`: bring into `base` the complete points of `shard_dirs` that it
/// lacks ([`gather`]), then, if every point of the sweep recorded as `rec` is complete, write
/// the CSVs, plots, REPORT.md and `claims.csv` as `sfc experiment run` does (without wall
/// times unless `timings`). Missing points are an error listing each with the command that
/// runs it; nothing is written then. Failed points are aggregated and listed, and fail the
/// merge, as they fail a run.
pub fn merge(
    exp: &Experiment,
    rec: &SweepRecord,
    base: &Path,
    shard_dirs: &[PathBuf],
    timings: bool,
) -> Result<(), String> {
    let t0 = std::time::Instant::now();
    let _lock = crate::runguard::lock_output_dir(
        base,
        "shards or a sweep are still running in this directory (`sfc experiment status` shows \
         them): wait for them to finish",
    )?;
    super::runner::remove_stray_temps(base);
    rec.write(base)?;
    let pts = super::runner::points(exp, rec.quick);
    let copied = gather(base, shard_dirs, &pts)?;
    if copied > 0 {
        eprintln!("{copied} point(s) copied into {}", base.display());
    }
    let missing: Vec<&Point> = pts.iter().filter(|p| !is_complete(base, p)).collect();
    if !missing.is_empty() {
        return Err(missing_message(exp, rec, base, pts.len(), &missing));
    }
    let wall = t0.elapsed().as_secs_f64();
    let failed = super::runner::aggregate(exp, base, &pts, rec.quick, timings.then_some(wall))?;
    if !failed.is_empty() {
        return Err(format!(
            "{} point(s) did not finish (results in {}; see REPORT.md):\n  {}",
            failed.len(),
            base.display(),
            failed.join("\n  ")
        ));
    }
    Ok(())
}

/// The error of a merge with `missing` points: each with its state and the command that runs
/// it, then the command that runs them all and writes the report.
fn missing_message(
    exp: &Experiment,
    rec: &SweepRecord,
    base: &Path,
    total: usize,
    missing: &[&Point],
) -> String {
    let mut m = format!(
        "experiment `{}`{}: {} of the {total} points are not complete in {} (no report was \
         written); run each with:",
        exp.meta.name,
        if rec.quick { " (quick)" } else { "" },
        missing.len(),
        base.display()
    );
    for p in missing {
        let note = match point_state(base, p) {
            PointState::Running => " (running)".to_string(),
            PointState::Missing(n) if !n.is_empty() => format!(" ({n})"),
            _ => String::new(),
        };
        m.push_str(&format!(
            "\n  {}{note}\n    {}",
            p.id,
            rerun_point_command(rec, base, p)
        ));
    }
    let mut all = vec!["sfc".to_string(), "experiment".into(), "run".into()];
    all.extend(rec.run_args());
    all.extend(["--out".into(), base.display().to_string()]);
    m.push_str(&format!(
        "\nor run them all and write the report: {}",
        all.iter()
            .map(|w| shell_word(w))
            .collect::<Vec<_>>()
            .join(" ")
    ));
    m
}

/// A sweep directory's progress ([`status`]).
#[derive(Clone, Debug, Default)]
pub struct Status {
    /// Points complete with this configuration and build.
    pub done: Vec<String>,
    /// Points a process is running.
    pub running: Vec<String>,
    /// Points that finished with a failure, with the reason.
    pub failed: Vec<(String, String)>,
    /// Points not run (or interrupted, or stale), with a note.
    pub missing: Vec<(String, String)>,
    /// Estimated cost ([`point_cost`]) of all points, of the finished ones (done or failed)
    /// and of the others.
    pub cost_total: u64,
    /// Estimated cost of the finished points.
    pub cost_finished: u64,
    /// Seconds of simulation wall time the finished points took (`wall_seconds`).
    pub wall_finished: f64,
}

impl Status {
    /// Whether every point has finished (done or failed): nothing runs or is missing.
    pub fn complete(&self) -> bool {
        self.running.is_empty() && self.missing.is_empty()
    }

    /// Estimated seconds until the unfinished points are done: their cost at the pace of the
    /// finished ones (wall seconds per cost unit), shared by the running points (at least
    /// one). `None` before any point has finished.
    pub fn eta_seconds(&self) -> Option<f64> {
        if self.cost_finished == 0 || self.wall_finished <= 0.0 {
            return None;
        }
        let left = self.cost_total.saturating_sub(self.cost_finished) as f64;
        let pace = self.wall_finished / self.cost_finished as f64;
        Some(left * pace / self.running.len().max(1) as f64)
    }
}

/// The state of every point of the sweep `exp` (`quick`) in `base`.
pub fn status(exp: &Experiment, quick: bool, base: &Path) -> Status {
    let pts = super::runner::points(exp, quick);
    let mut st = Status::default();
    for p in &pts {
        let cost = point_cost(exp, p);
        st.cost_total = st.cost_total.saturating_add(cost);
        let state = point_state(base, p);
        if matches!(state, PointState::Done | PointState::Failed(_)) {
            st.cost_finished = st.cost_finished.saturating_add(cost);
            let s = std::fs::read_to_string(point_dir(base, p).join("summary.json"))
                .unwrap_or_default();
            let v: serde_json::Value = serde_json::from_str(&s).unwrap_or_default();
            st.wall_finished += v["wall_seconds"].as_f64().unwrap_or(0.0);
        }
        match state {
            PointState::Done => st.done.push(p.id.clone()),
            PointState::Running => st.running.push(p.id.clone()),
            PointState::Failed(why) => st.failed.push((p.id.clone(), why)),
            PointState::Missing(note) => st.missing.push((p.id.clone(), note)),
        }
    }
    st
}

/// `seconds` as `1 h 02 m`, `3 m 20 s` or `42 s`.
fn fmt_duration(seconds: f64) -> String {
    let s = seconds.round().max(0.0) as u64;
    if s >= 3600 {
        format!("{} h {:02} m", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{} m {:02} s", s / 60, s % 60)
    } else {
        format!("{s} s")
    }
}

/// [`Status`] as `sfc experiment status` prints it: a count per state, the points that are
/// not done (at most 20 per state), the share of the estimated cost finished and the ETA.
pub fn status_text(exp: &Experiment, quick: bool, base: &Path, st: &Status) -> String {
    let total = st.done.len() + st.running.len() + st.failed.len() + st.missing.len();
    let mut t = format!(
        "experiment `{}`{} in {}: {total} points\n",
        exp.meta.name,
        if quick { " (quick)" } else { "" },
        base.display()
    );
    let list = |t: &mut String, items: Vec<String>| {
        for i in items.iter().take(20) {
            t.push_str(&format!("    {i}\n"));
        }
        if items.len() > 20 {
            t.push_str(&format!("    … and {} more\n", items.len() - 20));
        }
    };
    let with_note = |v: &[(String, String)]| -> Vec<String> {
        v.iter()
            .map(|(id, n)| {
                if n.is_empty() {
                    id.clone()
                } else {
                    format!("{id} ({n})")
                }
            })
            .collect()
    };
    t.push_str(&format!("  done     {}\n", st.done.len()));
    t.push_str(&format!("  running  {}\n", st.running.len()));
    list(&mut t, st.running.clone());
    t.push_str(&format!("  failed   {}\n", st.failed.len()));
    list(&mut t, with_note(&st.failed));
    t.push_str(&format!("  missing  {}\n", st.missing.len()));
    list(&mut t, with_note(&st.missing));
    let pct = 100.0 * st.cost_finished as f64 / st.cost_total.max(1) as f64;
    let eta = if st.complete() {
        "every point has finished: `sfc experiment merge` writes the report".to_string()
    } else {
        match st.eta_seconds() {
            Some(s) => format!(
                "ETA {} (the finished points' pace, {} point(s) at once)",
                fmt_duration(s),
                st.running.len().max(1)
            ),
            None => "ETA unknown until a point finishes".to_string(),
        }
    };
    t.push_str(&format!(
        "{pct:.0} % of the estimated cost finished; {eta}\n"
    ));
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_values_are_checked() {
        assert_eq!(Shard::parse("0/4"), Ok(Shard { index: 0, count: 4 }));
        assert_eq!(Shard::parse("3/4").unwrap().to_string(), "3/4");
        let e = Shard::parse("4/4").unwrap_err();
        assert!(e.contains("out of range") && e.contains("0 to 3"), "{e}");
        assert!(Shard::parse("0/0").unwrap_err().contains("at least 1"));
        assert!(Shard::parse("1").unwrap_err().contains("expected I/N"));
        assert!(
            Shard::parse("-1/2")
                .unwrap_err()
                .contains("not a whole number")
        );
        assert!(Shard::parse("a/2").unwrap_err().contains("`a`"));
    }

    #[test]
    fn shares_balance_cost_not_count() {
        // One big point and four small ones: the big one alone, the small ones together.
        let of = assign(&[100, 10, 10, 10, 10], 2);
        assert_eq!(of, [0, 1, 1, 1, 1]);
        // Equal costs: round robin in point order.
        assert_eq!(assign(&[1, 1, 1, 1], 2), [0, 1, 0, 1]);
        // More shards than points: the extra shards are empty, each point in one shard.
        let of = assign(&[5, 3], 4);
        assert_eq!(of, [0, 1]);
    }

    #[test]
    fn shell_words_are_quoted_when_needed() {
        assert_eq!(shell_word("a-b/c.toml"), "a-b/c.toml");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
