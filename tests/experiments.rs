//! Paper-figure experiments (`sfc experiment …`), driven through the binary: SFC Fig. 1 quick end
//! to end (outputs and the qualitative ordering of the signaling variants), a tiny §5.3-style
//! run (SFC lowers the peak buffer without costing throughput), resume after a kill, and every
//! checked-in experiment file listing, parsing and resolving.

mod common;

use common::TempDir;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime};

const SFC: &str = env!("CARGO_BIN_EXE_sfc");

fn experiments_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments")
}

/// Run `sfc ARGS` to completion; panic with its output unless it succeeds.
fn sfc_ok(args: &[&str]) -> Output {
    let out = Command::new(SFC)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("spawn sfc");
    assert!(
        out.status.success(),
        "sfc {args:?} failed ({}):\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `results.csv` as one map per row (column name → cell).
fn read_results(dir: &Path) -> Vec<BTreeMap<String, String>> {
    let p = dir.join("results.csv");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let mut lines = text.lines();
    let head: Vec<&str> = lines
        .next()
        .expect("results.csv header")
        .split(',')
        .collect();
    lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            head.iter()
                .zip(l.split(','))
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

/// `column` of the row whose `series` is `series`, as a number.
fn metric(rows: &[BTreeMap<String, String>], series: &str, column: &str) -> f64 {
    let row = rows
        .iter()
        .find(|r| r.get("series").map(String::as_str) == Some(series))
        .unwrap_or_else(|| panic!("no row for series {series:?} in {rows:?}"));
    row.get(column)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("series {series:?}: column {column} missing or not a number"))
}

fn summary(point_dir: &Path) -> serde_json::Value {
    let p = point_dir.join("summary.json");
    let t = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&t).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn mean_throughput(point_dir: &Path) -> f64 {
    let p = point_dir.join("throughput.csv");
    let t = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let col = t
        .lines()
        .next()
        .and_then(|h| h.split(',').position(|c| c == "gbps"))
        .unwrap_or_else(|| panic!("{}: no gbps column", p.display()));
    let v: Vec<f64> = t
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').nth(col)?.parse().ok())
        .collect();
    assert!(!v.is_empty(), "{}: no samples", p.display());
    v.iter().sum::<f64>() / v.len() as f64
}

// ---------------------------------------------------------------------------------------------
// (a) SFC Fig. 1, end to end
// ---------------------------------------------------------------------------------------------

/// `sfc-fig1` has no smaller variant (`--quick` runs the full 4 ms: ~2 s of simulation).
#[test]
fn fig1_end_to_end() {
    let tmp = TempDir::new("fig1");
    let out = tmp.path().join("out");
    let o = out.to_str().expect("utf-8 path");
    sfc_ok(&[
        "experiment",
        "run",
        "sfc-fig1",
        "--quick",
        "--jobs",
        "2",
        "--out",
        o,
    ]);
    for f in [
        "REPORT.md",
        "results.csv",
        "bins.csv",
        "queue_vs_time.png",
        "queue_vs_time.svg",
        "peak_buffer.png",
        "peak_buffer.svg",
    ] {
        let p = out.join(f);
        let len = std::fs::metadata(&p)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
            .len();
        assert!(len > 0, "{} is empty", p.display());
    }
    let report = std::fs::read_to_string(out.join("REPORT.md")).expect("REPORT.md");
    assert!(
        report.contains("![queue_vs_time](queue_vs_time.png)"),
        "{report}"
    );
    assert!(report.contains("Ours next to the paper"), "{report}");
    let rows = read_results(&out);
    assert_eq!(rows.len(), 5, "{rows:?}");
    let peak = |s: &str| metric(&rows, s, "peak_buffer_bytes");
    let (sfc, ingress, egress) = (
        peak("Ingress BTS + Cache"),
        peak("Ingress BTS"),
        peak("Egress BTS"),
    );
    assert!(
        sfc < ingress && ingress < egress,
        "expected SFC < Ingress BTS < Egress BTS peaks, got {sfc} / {ingress} / {egress}"
    );
    // With the senders' window, Egress BTS peaks where OnRamp settles (the paper: "equal"),
    // and OnRamp with its reduced gain settles while the straw-man keeps oscillating.
    let onramp = peak("OnRamp");
    assert!(
        (egress / onramp - 1.0).abs() < 0.15,
        "Egress BTS {egress} vs OnRamp {onramp}"
    );
    let swing = |id: &str| {
        summary(&out.join("points").join(id))["queues"][0]["second_half_swing"]
            .as_f64()
            .unwrap_or_else(|| panic!("{id}: no queues[0].second_half_swing"))
    };
    assert!(swing("OnRamp") < 0.3 && swing("OnRamp_straw-man") > 0.5);
}

// ---------------------------------------------------------------------------------------------
// (b) a tiny §5.3-style run: SFC lowers the peak buffer, throughput is unchanged
// ---------------------------------------------------------------------------------------------

/// 2 ToRs × 8 hosts under 2 spines (100 G / 400 G, full bisection), 1 µs / 1.5 µs, 32 MiB DT
/// buffer, HPCC + IRN; Hadoop 50 % for 300 µs plus one 15:1 incast of 250 KB.
const TINY_53: &str = r#"
[experiment]
name = "tiny-53"
title = "tiny §5.3-style run"

[scenario]
name = "tiny-53"
seed = 1

[scenario.topology]
kind = "leaf_spine"
spines = 2
tors = 2
hosts_per_tor = 8
host_rate = "100Gbps"
host_delay = "1us"
fabric_rate = "400Gbps"
fabric_delay = "1.5us"

[scenario.buffer]
mode = "lossy"
size = "32MiB"
dt_alpha = 1.0

[scenario.loss_recovery]
kind = "irn"

[scenario.cc]
kind = "hpcc"

[scenario.output]
flows_csv = false

[[scenario.traffic]]
kind = "poisson"
cdf = "fb_hadoop"
load = 0.5
duration = "DURATION"

[[scenario.traffic]]
kind = "incast"
senders = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
receivers = [0]
at = "50us"
sync_window = "20us"
size = "250KB"

[sweep]
series = [
  { name = "none", set = [] },
  { name = "SFC", set = ['sfc.mode="sfc"'] },
]
SEEDS

[[plot]]
name = "throughput_cdf"
source = "throughput_cdf"

[[plot]]
name = "peak_buffer"
source = "summary"
kind = "bar"
y = "peak_buffer_bytes"

[[claim]]
text = "peak buffer none / SFC"
metric = "peak_buffer_bytes"
num = "none"
den = "SFC"
paper_low = 2.5
paper_high = 3.0
"#;

#[test]
fn sfc_53_style_lowers_buffer_keeps_throughput() {
    let tmp = TempDir::new("tiny53");
    let file = tmp.write(
        "tiny-53.toml",
        &TINY_53.replace("DURATION", "300us").replace("SEEDS", ""),
    );
    let out = tmp.path().join("out");
    sfc_ok(&[
        "experiment",
        "run",
        file.to_str().expect("utf-8"),
        "--jobs",
        "2",
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    for f in ["REPORT.md", "throughput_cdf.png", "peak_buffer.svg"] {
        assert!(out.join(f).exists(), "{f} missing");
    }
    // The report's command re-runs this file (by its path), not a built-in.
    let report = std::fs::read_to_string(out.join("REPORT.md")).expect("REPORT.md");
    assert!(
        report.contains(&format!("Command: `sfc experiment run {}`", file.display())),
        "{report}"
    );
    let rows = read_results(&out);
    let peak = |s: &str| metric(&rows, s, "peak_buffer_bytes");
    assert!(
        peak("SFC") < peak("none"),
        "SFC peak {} not below none's {}",
        peak("SFC"),
        peak("none")
    );
    for s in ["none", "SFC"] {
        assert_eq!(
            metric(&rows, s, "flows_completed"),
            metric(&rows, s, "flows_total"),
            "{s}: not every flow completed"
        );
    }
    let (none, sfc) = (out.join("points/none"), out.join("points/SFC"));
    let delivered = |d: &Path| {
        summary(d)["counters"]["delivered_bytes"]
            .as_f64()
            .unwrap_or(-1.0)
    };
    assert_eq!(delivered(&none), delivered(&sfc), "delivered bytes differ");
    let (tn, ts) = (mean_throughput(&none), mean_throughput(&sfc));
    assert!(
        (tn - ts).abs() <= 0.05 * tn,
        "mean receiver throughput differs by more than 5 %: none {tn:.2} vs SFC {ts:.2} Gb/s"
    );
}

// ---------------------------------------------------------------------------------------------
// (c) resume: kill a sweep midway, re-run, completed points are not re-run
// ---------------------------------------------------------------------------------------------

/// An experiment directory with a broken file and a file defining an experiment twice: the
/// others are still listed and run; a broken file is named wherever it could matter.
#[test]
fn experiment_directory_with_broken_files() {
    let tmp = TempDir::new("expdir");
    let good = TINY_53.replace("DURATION", "200us").replace("SEEDS", "");
    tmp.write("tiny.toml", &good);
    tmp.write("broken.toml", "garbage = [\n");
    tmp.write("named.toml", "[experiment]\nname = \"named\"\n");
    let dir = tmp.path().to_str().expect("utf-8").to_string();
    let sfc = |args: &[&str]| {
        let o = Command::new(SFC).args(args).output().expect("run sfc");
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stdout).to_string(),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    // `list` shows the good one and fails naming both broken files.
    let (ok, out, err) = sfc(&["experiment", "list", "--dir", &dir]);
    assert!(!ok, "{err}");
    assert!(out.contains("tiny-53"), "{out}");
    assert!(err.contains("2 experiment files"), "{err}");
    assert!(
        err.contains("broken.toml") && err.contains("named.toml"),
        "{err}"
    );
    // The good one runs.
    let o = tmp.path().join("out");
    let run_good = || {
        sfc(&[
            "experiment",
            "run",
            "tiny-53",
            "--dir",
            &dir,
            "--quick",
            "--out",
            o.to_str().expect("utf-8"),
        ])
    };
    let (ok, _, err) = run_good();
    assert!(ok, "{err}");
    // A truncated summary.json is not a complete point: the next run says so and runs it
    // again (it was counted complete, and every later report failed "EOF while parsing").
    let none = o.join("points/none/summary.json");
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&none)
        .expect("summary.json");
    f.set_len(100).expect("truncate");
    drop(f);
    let (ok, _, err) = run_good();
    assert!(ok, "{err}");
    assert!(
        err.contains("summary.json is unusable") && err.contains("running it again"),
        "{err}"
    );
    assert!(err.contains("(1 already complete)"), "{err}");
    let text = std::fs::read_to_string(&none).expect("summary.json");
    serde_json::from_str::<serde_json::Value>(&text).expect("summary.json re-written");
    // Asking for the broken file by its name gets its own error.
    let (ok, _, err) = sfc(&["experiment", "run", "named", "--dir", &dir]);
    assert!(!ok);
    assert!(err.contains("named.toml") && err.contains("title"), "{err}");
    assert!(!err.contains("broken.toml"), "{err}");
    // An unknown name mentions the files that could hold it.
    let (ok, _, err) = sfc(&["experiment", "run", "nope", "--dir", &dir]);
    assert!(!ok);
    assert!(err.contains("no experiment named `nope`"), "{err}");
    assert!(
        err.contains("broken.toml") && err.contains("named.toml"),
        "{err}"
    );
    // Two files defining one experiment: an error naming both, not one picked silently.
    tmp.write("copy.toml", &good);
    let (ok, _, err) = sfc(&["experiment", "run", "tiny-53", "--dir", &dir]);
    assert!(!ok);
    assert!(
        err.contains("copy.toml") && err.contains("tiny.toml") && err.contains("both define"),
        "{err}"
    );
}

/// The point processes (`sfc experiment run … --point ID`) that `parent` has running now:
/// (pid, point id). Empty off Linux (read from `/proc`).
fn point_processes(parent: u32) -> Vec<(u32, String)> {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut v = Vec::new();
    for e in rd.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`: comm may hold spaces and parentheses.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|s| s.parse::<u32>().ok());
        if ppid != Some(parent) {
            continue;
        }
        let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
        if let Some(i) = args.iter().position(|a| *a == b"--point")
            && let Some(id) = args.get(i + 1)
        {
            v.push((pid, String::from_utf8_lossy(id).into_owned()));
        }
    }
    v
}

/// Whether process `pid` still runs (a zombie waiting for its new parent counts as ended).
fn process_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X")
    })
}

#[test]
fn interrupted_sweep_resumes() {
    let tmp = TempDir::new("resume");
    // 2 series × 4 seeds = 8 points of ~0.4 s each, one at a time: long enough that a test
    // thread starved by the rest of the suite still kills the sweep before it completes.
    let file = tmp.write(
        "resume.toml",
        &TINY_53
            .replace("DURATION", "5000us")
            .replace("SEEDS", "seeds = [1, 2, 3, 4]"),
    );
    let out = tmp.path().join("out");
    let args = [
        "experiment",
        "run",
        file.to_str().expect("utf-8"),
        "--jobs",
        "1",
        "--out",
        out.to_str().expect("utf-8"),
    ];
    let n_points = 8;
    let done = |dir: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join("points"))
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.path().join("summary.json"))
                    .filter(|p| p.exists())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };

    let mut child = Command::new(SFC)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn sfc");
    let t0 = Instant::now();
    // Wait for a completed point and (Linux) the process of the point running after it.
    let running = loop {
        if !done(&out).is_empty() {
            let running = point_processes(child.id());
            if !running.is_empty() || !cfg!(target_os = "linux") {
                break running;
            }
        }
        if let Some(st) = child.try_wait().expect("try_wait") {
            panic!("sweep finished ({st}) before the test could interrupt it");
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "no point completed within 30 s"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    child.kill().expect("kill the sweep");
    let killed_at = SystemTime::now();
    let _ = child.wait();
    // The killed sweep's point processes die with it (`PR_SET_PDEATHSIG`), not finish their
    // points as orphans behind the resumed sweep's back. Listing the completed points only
    // once they are gone also keeps a point finishing late from miscounting the resume.
    for (pid, point) in &running {
        let t = Instant::now();
        while process_alive(*pid) {
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "point {point} (pid {pid}) still runs 20 s after its sweep was killed"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let summary = out.join("points").join(point).join("summary.json");
        if let Ok(m) = std::fs::metadata(&summary).and_then(|m| m.modified()) {
            assert!(
                m <= killed_at + Duration::from_millis(100),
                "point {point} completed {:?} after its sweep was killed: its process outlived \
                 the sweep",
                m.duration_since(killed_at).unwrap_or_default()
            );
        }
    }
    let first: Vec<(PathBuf, SystemTime)> = done(&out)
        .into_iter()
        .map(|p| {
            let m = std::fs::metadata(&p)
                .and_then(|m| m.modified())
                .expect("mtime");
            (p, m)
        })
        .collect();
    assert!(
        !first.is_empty() && first.len() < n_points,
        "expected a partial sweep, found {} of {n_points} points complete",
        first.len()
    );
    assert!(
        !out.join("results.csv").exists(),
        "results.csv written by an interrupted sweep"
    );

    let res = sfc_ok(&args);
    let err = String::from_utf8_lossy(&res.stderr);
    assert!(
        err.contains(&format!(
            "{n_points} points ({} already complete)",
            first.len()
        )),
        "resume did not report the completed points:\n{err}"
    );
    for (p, m) in &first {
        let now = std::fs::metadata(p)
            .and_then(|m| m.modified())
            .expect("mtime");
        assert_eq!(now, *m, "{} was re-run", p.display());
    }
    assert_eq!(done(&out).len(), n_points, "not every point completed");
    let rows = read_results(&out);
    assert_eq!(rows.len(), n_points, "{rows:?}");
    for r in &rows {
        let p = r
            .get("peak_buffer_bytes")
            .and_then(|v| v.parse::<f64>().ok());
        assert!(
            p.is_some_and(|p| p > 0.0),
            "row without a peak buffer: {r:?}"
        );
    }
    assert!(out.join("REPORT.md").exists());
}

// ---------------------------------------------------------------------------------------------
// (d) every checked-in experiment lists, parses and resolves
// ---------------------------------------------------------------------------------------------

#[test]
fn every_experiment_lists_parses_and_resolves() {
    let dir = experiments_dir();
    let listing = sfc_ok(&["experiment", "list", "--dir", dir.to_str().expect("utf-8")]);
    let listing = String::from_utf8_lossy(&listing.stdout).to_string();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("experiments/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 15, "only {} experiment files", files.len());
    let mut names = Vec::new();
    let mut papers = BTreeMap::new();
    let mut scored_in = Vec::new();
    for f in &files {
        let e = sfc::experiment::Experiment::load(f).unwrap_or_else(|e| panic!("{e}"));
        papers.insert(e.meta.name.clone(), e.meta.paper.clone());
        let fname = f.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        assert_eq!(
            e.meta.name,
            fname,
            "{}: name differs from the file name",
            f.display()
        );
        assert!(
            listing.contains(&e.meta.name),
            "`sfc experiment list` does not show {}:\n{listing}",
            e.meta.name
        );
        assert!(
            !names.contains(&e.meta.name),
            "duplicate name {}",
            e.meta.name
        );
        names.push(e.meta.name.clone());
        assert!(
            !e.meta.description.trim().is_empty(),
            "{fname}: no description"
        );
        assert!(!e.plots.is_empty(), "{fname}: no plots");
        assert!(!e.claims.is_empty(), "{fname}: no claims");
        // Claims and filters refer to series and axes that exist.
        let series: Vec<&str> = e.sweep.series.iter().map(|s| s.name.as_str()).collect();
        let axes: Vec<&str> = e.sweep.axes.iter().map(|a| a.key.as_str()).collect();
        for c in &e.claims {
            // Every shipped claim is audited: a kind, and the paper's words or a source.
            assert!(
                c.kind.is_some(),
                "{fname}: claim {:?} has no `kind`",
                c.text
            );
            assert!(
                c.quote.is_some() || c.source.is_some(),
                "{fname}: claim {:?} has neither `quote` nor `source`",
                c.text
            );
            if let Some(other) = &c.scored_in {
                scored_in.push((fname.to_string(), e.meta.paper.clone(), other.clone()));
            }
            for s in std::iter::once(&c.num).chain(c.den.iter()) {
                assert!(
                    series.contains(&s.as_str()),
                    "{fname}: claim {:?}: no series {s:?}",
                    c.text
                );
            }
            for k in c.filter.keys() {
                assert!(
                    axes.contains(&k.as_str()),
                    "{fname}: claim filter on unknown axis {k}"
                );
            }
        }
        for p in &e.plots {
            for k in p.filter.keys() {
                assert!(
                    axes.contains(&k.as_str()),
                    "{fname}: plot {} filters unknown axis {k}",
                    p.name
                );
            }
        }
        // Every quick point resolves, and the first full point of every series.
        let quick = sfc::experiment::runner::points(&e, true);
        let full = sfc::experiment::runner::points(&e, false);
        assert!(!quick.is_empty() && !full.is_empty(), "{fname}: empty grid");
        assert!(
            quick.len() <= full.len(),
            "{fname}: quick has more points than full"
        );
        let mut seen = Vec::new();
        let first_full = full.iter().filter(|p| {
            let new = !seen.contains(&p.series);
            seen.push(p.series.clone());
            new
        });
        for p in quick.iter().chain(first_full) {
            sfc::scenario::from_str(
                &e.scenario_text,
                &format!("{fname} [{}]", p.id),
                &e.dir,
                &p.sets,
            )
            .unwrap_or_else(|err| panic!("{err}"));
        }
    }
    // A repeated claim names a shipped experiment of its own paper.
    for (fname, paper, other) in scored_in {
        assert_eq!(
            papers.get(&other),
            Some(&paper),
            "{fname}: `scored_in = {other:?}` is not an experiment of paper {paper}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// (e) each point runs in a process of its own
// ---------------------------------------------------------------------------------------------

#[test]
fn each_point_runs_in_its_own_process() {
    let tmp = TempDir::new("point");
    // Two series: a big run first (Google RPC, ~50 K flows), then a small one. Run one after
    // the other in one process, the second would report at least the first one's peak RSS
    // (a process's high-water mark only grows); each in its own process, it reports its own.
    let text = TINY_53
        .replace("DURATION", "300us")
        .replace("SEEDS", "")
        .replace(
            r#"  { name = "none", set = [] },
  { name = "SFC", set = ['sfc.mode="sfc"'] },"#,
            r#"  { name = "big", set = ['traffic.0.cdf="google_rpc"', 'traffic.0.duration="2ms"'] },
  { name = "small", set = [] },"#,
        )
        .replace("num = \"none\"", "num = \"big\"")
        .replace("den = \"SFC\"", "den = \"small\"");
    let file = tmp.write("tiny.toml", &text);
    let out = tmp.path().join("out");
    let f = file.to_str().expect("utf-8");
    let o = out.to_str().expect("utf-8");
    // What the sweep asks of a child: exactly one point, no report.
    sfc_ok(&["experiment", "run", f, "--out", o, "--point", "small"]);
    let dirs: Vec<String> = std::fs::read_dir(out.join("points"))
        .expect("points dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(dirs, ["small"], "one point, and only it");
    assert!(!out.join("REPORT.md").exists());
    // An unknown point is an error naming it.
    let bad = Command::new(SFC)
        .args(["experiment", "run", f, "--out", o, "--point", "nope"])
        .output()
        .expect("spawn sfc");
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("no point `nope`"), "{err}");
    // The whole sweep, one point at a time, big first.
    std::fs::remove_dir_all(&out).expect("clean");
    sfc_ok(&["experiment", "run", f, "--out", o, "--jobs", "1"]);
    let rss = |id: &str| {
        summary(&out.join("points").join(id))["peak_rss_bytes"]
            .as_u64()
            .expect("peak_rss_bytes")
    };
    let (big, small) = (rss("big"), rss("small"));
    assert!(
        small < big,
        "the small point reports {small} B, the big one {big} B: not per-process figures"
    );
    assert!(out.join("REPORT.md").exists());
}

/// A two-point experiment whose claims all compare series `A` with itself (the value is 1
/// exactly), one per kind and rule, as the score counts them by hand: point 1 matches, point
/// 1.3 (accepts 1.04–1.56) differs, upper bound 1 matches, lower bound 2 differs (2 of 4);
/// direction "higher" at exactly 1 differs (0 of 1); a calibrated point and an unaudited claim
/// are counted apart.
const AUDITED: &str = r#"[experiment]
name = "audited"
title = "audited claims"
paper = "Mini"

[scenario]
name = "audited"
stop = "20us"
[scenario.topology]
kind = "star"
hosts = 2
[[scenario.traffic]]
kind = "long_lived"
pairs = [[0, 1]]
size = "1MB"

[sweep]
series = [{ name = "A", set = [] }, { name = "B", set = ['cc.kind="dcqcn"'] }]

[[claim]]
text = "point 1"
metric = "events"
num = "A"
den = "A"
kind = "point"
paper_low = 1.0
quote = "exactly one-to-one in every run"

[[claim]]
text = "point 1.3"
metric = "events"
num = "A"
den = "A"
kind = "point"
paper_low = 1.3
quote = "a sentence the paper does not have"

[[claim]]
text = "upper bound 1"
metric = "events"
num = "A"
den = "A"
kind = "bound"
paper_high = 1.0
source = "the authors' code"

[[claim]]
text = "lower bound 2"
metric = "events"
num = "A"
den = "A"
kind = "bound"
paper_low = 2.0
source = "the authors' code"

[[claim]]
text = "direction higher"
metric = "events"
num = "A"
den = "A"
kind = "direction"
better = "higher"
source = "a talk"

[[claim]]
text = "calibrated point 1"
metric = "events"
num = "A"
den = "A"
kind = "point"
paper_low = 1.0
source = "a talk"
calibrated = [{ param = "cc.kind", why = "chosen after the run" }]

[[claim]]
text = "repeated point 1"
metric = "events"
num = "A"
den = "A"
kind = "point"
paper_low = 1.0
source = "a talk"
scored_in = "elsewhere"

[[claim]]
text = "unaudited"
metric = "events"
num = "A"
den = "A"
paper_low = 1.0
"#;

#[test]
fn claims_csv_score_and_quotes() {
    let tmp = TempDir::new("audited");
    let exps = tmp.join("exps");
    std::fs::create_dir_all(&exps).expect("mkdir");
    let file = exps.join("audited.toml");
    std::fs::write(&file, AUDITED).expect("write");
    let out = tmp.join("out");
    let out_s = out.to_str().expect("utf-8");
    // No results yet: the score names the command that produces them.
    let o = Command::new(SFC)
        .args(["experiment", "score", "audited", "--out", out_s])
        .output()
        .expect("spawn");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("sfc experiment run audited"),
        "{err}"
    );
    let dir = out.join("audited");
    sfc_ok(&[
        "experiment",
        "run",
        file.to_str().expect("utf-8"),
        "--jobs",
        "1",
        "--out",
        dir.to_str().expect("utf-8"),
    ]);
    let csv = std::fs::read_to_string(dir.join("claims.csv")).expect("claims.csv");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "experiment,paper,claim,kind,value,low,high,verdict,calibrated,audited,scored_in,\
         seeds,seeds_matching,value_min,value_max"
    );
    assert_eq!(
        lines[1],
        "audited,Mini,point 1,point,1,0.8,1.2,matches,,true,,0,0,,"
    );
    assert!(
        lines[2].starts_with("audited,Mini,point 1.3,point,1,")
            && lines[2].ends_with(",differs (ours lower),,true,,0,0,,"),
        "{}",
        lines[2]
    );
    assert_eq!(
        lines[3],
        "audited,Mini,upper bound 1,bound,1,,1,matches,,true,,0,0,,"
    );
    assert_eq!(
        lines[4],
        "audited,Mini,lower bound 2,bound,1,2,,differs (ours lower),,true,,0,0,,"
    );
    assert_eq!(
        lines[5],
        "audited,Mini,direction higher,direction,1,1,,differs (no difference),,true,,0,0,,"
    );
    assert_eq!(
        lines[6],
        "audited,Mini,calibrated point 1,point,1,0.8,1.2,matches,cc.kind,true,,0,0,,"
    );
    assert_eq!(
        lines[7],
        "audited,Mini,repeated point 1,point,1,0.8,1.2,matches,,true,elsewhere,0,0,,"
    );
    assert_eq!(
        lines[8],
        "audited,Mini,unaudited,,1,0.75,1.25,matches,,false,,0,0,,"
    );
    let report = std::fs::read_to_string(dir.join("REPORT.md")).expect("REPORT.md");
    assert!(
        report.contains("| this experiment | 2 of 4 | 0 of 1 | 0 (0) | 1 | 1 | 1 |"),
        "{report}"
    );
    assert!(report.find("## Score") < report.find("## Ours next to the paper"));
    assert!(
        report.contains(
            "| calibrated point 1 | 1 | 1 ± 20 % | matches (calibrated: cc.kind; not scored) |"
        ),
        "{report}"
    );
    assert!(
        report.contains(
            "| repeated point 1 | 1 | 1 ± 20 % | matches (scored in elsewhere; not scored here) |"
        ),
        "{report}"
    );
    let o = sfc_ok(&[
        "experiment",
        "score",
        "--out",
        out_s,
        "--dir",
        exps.to_str().expect("utf-8"),
    ]);
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("| Mini | 2 of 4 | 0 of 1 | 0 (0) | 1 | 1 | 1 |"),
        "{table}"
    );
    assert!(
        table.contains("| total | 2 of 4 | 0 of 1 | 0 (0) | 1 | 1 | 1 |"),
        "{table}"
    );
    let o = sfc_ok(&["experiment", "score", "audited", "--out", out_s, "--json"]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(j["total"]["value_matched"], 2);
    assert_eq!(j["papers"][0]["paper"], "Mini");
    // Quotes: the paper text breaks "one-to-one" across a line; the second quote is not there.
    let papers = tmp.join("papers");
    std::fs::create_dir_all(&papers).expect("mkdir");
    std::fs::write(
        papers.join("mini.txt"),
        "The ratio is exactly one-\nto-one  in every\nrun.",
    )
    .expect("write");
    let o = Command::new(SFC)
        .args([
            "experiment",
            "quotes",
            "--papers",
            papers.to_str().expect("utf-8"),
            "--dir",
            exps.to_str().expect("utf-8"),
        ])
        .output()
        .expect("spawn");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(!o.status.success(), "{text}");
    // The second claim's `quote` is on line 36 of the file.
    assert!(
        text.contains(&format!(
            "{}:36: claim `point 1.3`: quote not in",
            file.display()
        )),
        "{text}"
    );
    assert!(
        text.contains("1 quote found, 1 not found, 5 claims citing a source"),
        "{text}"
    );
}
