//! Crash-safe sweeps: an `sfc experiment run` killed with SIGKILL at any instant — in the
//! middle of a point, while a point writes its CSVs, while the sweep aggregates its results
//! and draws its plots — and then run again with the same command ends with the same output
//! tree as a sweep never interrupted: the same files (no temporary file left behind), byte
//! for byte, except the fields that measure the machine (wall time, event rates, peak memory).

mod common;

use common::TempDir;
use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SFC: &str = env!("CARGO_BIN_EXE_sfc");

/// Four points (two series × two loads) of a few milliseconds of simulation each, with every
/// kind of aggregated output: `results.csv`, `bins.csv`, three plots (PNG and SVG), a claim.
const EXPERIMENT: &str = r#"[experiment]
name = "crash"
title = "crash-safe sweep"
paper = "test"
figure = "none"

[scenario]
name = "crash"
seed = 3

[scenario.topology]
kind = "star"
hosts = 8

[scenario.buffer]
size = "2MB"

[scenario.cc]
kind = "dcqcn"

[[scenario.traffic]]
kind = "poisson"
cdf = "websearch"
load = 0.5
duration = "1ms"

[[scenario.traffic]]
kind = "incast"
senders = [1, 2, 3, 4, 5, 6]
receivers = [0]
size = "100KB"
at = "50us"

[sweep]
axes = [{ key = "traffic.0.load", values = [0.3, 0.6] }]
series = [{ name = "lossy", set = [] }, { name = "lossless", set = ["buffer.mode=lossless"] }]

[[plot]]
name = "p99"
source = "summary"
x = "traffic.0.load"
y = "slowdown.p99"

[[plot]]
name = "bins"
source = "bins"
y = "p99"

[[plot]]
name = "buffer"
source = "buffer_cdf"

[[claim]]
text = "lossless P99 slowdown over lossy"
metric = "slowdown.p99"
num = "lossless"
den = "lossy"
paper_low = 0.5
paper_high = 1.0
"#;

/// `summary.json` keys that measure the machine, not the model (they differ between two
/// uninterrupted runs too).
const VOLATILE_KEYS: [&str; 4] = [
    "\"wall_seconds\":",
    "\"events_per_second\":",
    "\"packet_hops_per_second\":",
    "\"peak_rss_bytes\":",
];

/// A small deterministic generator (xorshift64*) for the kill instants.
struct Rng(u64);

impl Rng {
    /// A number in [0, 1).
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `sfc experiment run exp.toml --out OUT --jobs 2` in `dir`, in a process group of its own
/// (its points' processes with it).
fn start(dir: &Path, out: &str) -> std::process::Child {
    Command::new(SFC)
        .args(["experiment", "run", "exp.toml", "--out", out, "--jobs", "2"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("spawn sfc")
}

/// Run the sweep to its end; it must succeed. Returns how long it took.
fn complete(dir: &Path, out: &str) -> Duration {
    let t = Instant::now();
    let status = start(dir, out).wait().expect("wait");
    assert!(status.success(), "sweep into {out} failed: {status}");
    t.elapsed()
}

/// Start the sweep and SIGKILL it after `after` (the sweep process alone, its points' processes
/// dying with it, or, with `group`, every process of the sweep at once), unless it ended
/// first. Returns whether it was killed.
fn kill_after(dir: &Path, out: &str, after: Duration, group: bool) -> bool {
    let mut child = start(dir, out);
    let t = Instant::now();
    while t.elapsed() < after {
        if let Some(status) = child.try_wait().expect("wait") {
            assert!(status.success(), "sweep into {out} failed: {status}");
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    if group {
        // SAFETY: a signal to the process group this test created for the sweep.
        unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
    } else {
        let _ = child.kill();
    }
    let _ = child.wait();
    true
}

/// Every file under `root` (relative path → contents), with the machine-dependent fields
/// masked: [`VOLATILE_KEYS`] in `summary.json`, the `wall_seconds` column of `results.csv`,
/// the wall-time line of `REPORT.md`.
fn tree(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, d: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(d).expect("read_dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                walk(root, &p, out);
                continue;
            }
            let rel = p.strip_prefix(root).expect("under root").to_path_buf();
            let bytes = std::fs::read(&p).expect("read");
            let name = rel.file_name().unwrap().to_string_lossy().into_owned();
            let masked = match name.as_str() {
                "summary.json" => mask_lines(&bytes, |l| {
                    VOLATILE_KEYS.iter().any(|k| l.trim_start().starts_with(k))
                }),
                "REPORT.md" => mask_lines(&bytes, |l| l.contains("s of simulation wall time")),
                "results.csv" => {
                    let text = String::from_utf8(bytes).expect("utf-8");
                    let head: Vec<&str> = text.lines().next().unwrap_or("").split(',').collect();
                    let col = head.iter().position(|h| *h == "wall_seconds");
                    text.lines()
                        .map(|l| {
                            let mut f: Vec<&str> = l.split(',').collect();
                            if let Some(c) = col
                                && c < f.len()
                            {
                                f[c] = "<wall>";
                            }
                            f.join(",") + "\n"
                        })
                        .collect::<String>()
                        .into_bytes()
                }
                _ => bytes,
            };
            out.insert(rel, masked);
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// `bytes` with every line for which `volatile` holds replaced by `<masked>`.
fn mask_lines(bytes: &[u8], volatile: impl Fn(&str) -> bool) -> Vec<u8> {
    let text = String::from_utf8_lossy(bytes);
    text.split_inclusive('\n')
        .map(|l| if volatile(l) { "<masked>\n" } else { l })
        .collect::<String>()
        .into_bytes()
}

/// The sweep, killed at seeded pseudo-random instants over its whole length and each time
/// started again until it ends, gives byte-identical outputs to an uninterrupted sweep (four
/// output directories, each killed first at an instant of a whole sweep); then the same once
/// the points are complete, with kills while it aggregates (results, plots, REPORT.md).
#[test]
fn a_sweep_killed_at_any_instant_resumes_to_identical_outputs() {
    let d = TempDir::new("crash-safe");
    d.write("exp.toml", EXPERIMENT);
    let clean_time = complete(d.path(), "clean");
    let clean = tree(&d.join("clean"));
    // Kill instants are drawn over a warm sweep's length (the first run may be slower).
    let clean_time = clean_time.min(complete(d.path(), "warm"));
    assert!(
        clean.keys().any(|p| p.ends_with("p99.png")) && clean.contains_key(Path::new("REPORT.md")),
        "{:?}",
        clean.keys()
    );
    let same_as_clean = |out: &str, kills: &[String]| {
        let resumed = tree(&d.join(out));
        let names = |t: &BTreeMap<PathBuf, Vec<u8>>| t.keys().cloned().collect::<Vec<_>>();
        assert_eq!(
            names(&resumed),
            names(&clean),
            "{out}: the files differ after kills at {kills:?}"
        );
        for (p, bytes) in &clean {
            assert!(
                resumed[p] == *bytes,
                "{out}/{} differs after kills at {kills:?}:\n--- clean ---\n{}\n--- resumed ---\n{}",
                p.display(),
                String::from_utf8_lossy(bytes),
                String::from_utf8_lossy(&resumed[p])
            );
        }
    };

    let mut rng = Rng(0x5fc_c0ff_ee15_600d);
    let mut killed = 0;
    for k in 0..4 {
        let out = format!("crashed{k}");
        let mut kills = Vec::new();
        // Killed anywhere in a sweep's length (in a point, between points, while writing or
        // aggregating), then resumed and killed again, until a run ends by itself.
        for i in 0..6 {
            // The first kill within the sweep's first 80 %, the next anywhere up to its end.
            let span = if i == 0 { 0.8 } else { 1.1 };
            let after = clean_time.mul_f64(span * rng.next());
            if !kill_after(d.path(), &out, after, (k + i) % 2 == 1) {
                break;
            }
            kills.push(format!("{} ms", after.as_millis()));
        }
        complete(d.path(), &out);
        if k == 0 {
            // With every point complete a run only aggregates: kills while it merges.
            let aggregate_time = complete(d.path(), &out);
            for i in 0..6 {
                let after = aggregate_time.mul_f64(rng.next());
                if kill_after(d.path(), &out, after, i % 2 == 0) {
                    kills.push(format!("{} ms (aggregating)", after.as_millis()));
                }
            }
            complete(d.path(), &out);
        }
        killed += kills.len();
        same_as_clean(&out, &kills);
    }
    assert!(
        killed >= 4,
        "only {killed} sweeps were killed before they ended"
    );

    // The temporary files a process killed in the middle of a write leaves (an atomic write's
    // `.NAME.tmp-PID-SEQ`, a plot's `.NAME.tmpPID-N.png`, a point's flow-record spill file),
    // as the kills above rarely land inside one: the resumed sweep removes them.
    let point = clean
        .keys()
        .find(|p| p.ends_with("point.json"))
        .and_then(|p| p.parent())
        .expect("a point directory")
        .to_path_buf();
    for junk in [
        PathBuf::from(".results.csv.tmp-999999-0"),
        PathBuf::from(".REPORT.md.tmp-999999-3"),
        PathBuf::from(".p99.tmp999999-0.png"),
        PathBuf::from(".bins.tmp999999-1.svg"),
        point.join(".point.json.tmp-999999-0"),
        point.join(".summary.json.tmp-999999-7"),
        point.join(".sfc-records-999999-0.spill"),
    ] {
        d.write(&format!("crashed1/{}", junk.display()), "partial");
    }
    complete(d.path(), "crashed1");
    same_as_clean("crashed1", &["after writes cut short".to_string()]);
}
