//! A run split over threads (`--threads`, `sfc::sim::parallel`) writes exactly the files of
//! the same run on one thread: every output file of every variant compared byte for byte,
//! `summary.json` field by field without the fields that measure the run itself (wall time,
//! rates, peak memory, peak pending events and live packets, the split's own counts).

mod common;

use common::{TempDir, without_run_measures};
use std::path::{Path, PathBuf};
use std::process::Command;

const SFC: &str = env!("CARGO_BIN_EXE_sfc");

/// Every file under `dir`, relative to it, sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).expect("under dir").to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// The differences between the outputs in `a` (one thread) and `b` (several).
fn differences(a: &Path, b: &Path) -> Vec<String> {
    let (fa, fb) = (files(a), files(b));
    let mut diffs = Vec::new();
    if fa != fb {
        diffs.push(format!("file lists differ: {fa:?} vs {fb:?}"));
    }
    for f in fa.iter().filter(|f| fb.contains(f)) {
        let (x, y) = (
            std::fs::read(a.join(f)).expect("read"),
            std::fs::read(b.join(f)).expect("read"),
        );
        if f.file_name().is_some_and(|n| n == "summary.json") {
            let parse =
                |v: &[u8]| without_run_measures(serde_json::from_slice(v).expect("summary JSON"));
            let (jx, jy) = (parse(&x), parse(&y));
            if jx != jy {
                let before = diffs.len();
                let (ox, oy) = (jx.as_object().unwrap(), jy.as_object().unwrap());
                for (k, v) in ox {
                    if oy.get(k) != Some(v) {
                        diffs.push(format!("{}: `{k}` differs", f.display()));
                    }
                }
                for k in oy.keys().filter(|k| !ox.contains_key(*k)) {
                    diffs.push(format!("{}: `{k}` only with threads", f.display()));
                }
                if diffs.len() == before {
                    diffs.push(format!("{} differs", f.display()));
                }
            }
        } else if x != y {
            diffs.push(format!("{} differs", f.display()));
        }
    }
    diffs
}

/// `sfc run [scenario] --threads N --out DIR` (plus `args`); stderr.
fn run(scenario: Option<&Path>, threads: u32, out: &Path, args: &[&str]) -> String {
    let mut cmd = Command::new(SFC);
    cmd.arg("run");
    if let Some(s) = scenario {
        cmd.arg(s);
    }
    cmd.arg("--threads")
        .arg(threads.to_string())
        .arg("--out")
        .arg(out)
        .args(args);
    let o = cmd.output().expect("run sfc");
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(
        o.status.success(),
        "sfc run --threads {threads} failed:\n{stderr}"
    );
    stderr
}

/// Every `summary.json` under `dir` with its split: (`parallel.threads`,
/// `parallel.threads_asked`), `None` for a run on one thread.
fn splits(dir: &Path) -> Vec<(PathBuf, Option<(u64, u64)>)> {
    files(dir)
        .into_iter()
        .filter(|f| f.file_name().is_some_and(|n| n == "summary.json"))
        .map(|f| {
            let v: serde_json::Value =
                serde_json::from_slice(&std::fs::read(dir.join(&f)).expect("read"))
                    .expect("summary JSON");
            let p = &v["parallel"];
            let split = p["threads"].as_u64().zip(p["threads_asked"].as_u64());
            (f, split)
        })
        .collect()
}

/// The outputs of one scenario run on 1, 2 and 3 threads (`t1`, `t2`, `t3` under the
/// directory), and the stderr of the runs on 2 and 3.
struct ThreadRuns {
    dir: TempDir,
    notes: Vec<String>,
}

impl ThreadRuns {
    /// The outputs of the run on `t` threads.
    fn out(&self, t: u32) -> PathBuf {
        self.dir.path().join(format!("t{t}"))
    }

    /// `summary.json` of the run on one thread (of its variant `variant`, if it has
    /// `[[compare]]` variants).
    fn summary(&self, variant: Option<&str>) -> serde_json::Value {
        let d = variant.map_or_else(|| self.out(1), |v| self.out(1).join(v));
        serde_json::from_slice(&std::fs::read(d.join("summary.json")).expect("summary"))
            .expect("summary JSON")
    }
}

/// Run `scenario` on 1, 2 and 3 threads and require identical outputs, and that every run
/// (every variant) asked for N threads did split, over min(N, `tors`) partitions (a
/// partition holds whole ToRs), saying so on stderr when that is fewer than N.
fn same_on_1_2_3_threads(
    tag: &str,
    scenario: Option<&str>,
    args: &[&str],
    tors: u64,
) -> ThreadRuns {
    let runs = same_on_threads(tag, scenario, args);
    for (t, note) in [2u64, 3].into_iter().zip(&runs.notes) {
        let parts = t.min(tors);
        let got = splits(&runs.out(t as u32));
        assert!(!got.is_empty(), "{tag}: no summary.json");
        for (f, split) in got {
            assert_eq!(
                split,
                Some((parts, t)),
                "{tag}: {} on --threads {t} did not split over {parts} partitions:\n{note}",
                f.display()
            );
        }
        assert_eq!(
            note.contains(&format!("uses {parts} threads, not {t}")),
            parts < t,
            "{tag}: --threads {t}: {note}"
        );
    }
    runs
}

/// [`same_on_1_2_3_threads`] without requiring the split.
fn same_on_threads(tag: &str, scenario: Option<&str>, args: &[&str]) -> ThreadRuns {
    let d = TempDir::new(tag);
    let file = scenario.map(|text| {
        let p = d.path().join("scenario.toml");
        std::fs::write(&p, text).expect("write scenario");
        p
    });
    let one = d.path().join("t1");
    run(file.as_deref(), 1, &one, args);
    let mut notes = Vec::new();
    for t in [2, 3] {
        let out = d.path().join(format!("t{t}"));
        notes.push(run(file.as_deref(), t, &out, args));
        let diffs = differences(&one, &out);
        assert!(
            diffs.is_empty(),
            "{tag}: --threads {t} differs from one thread:\n{}",
            diffs.join("\n")
        );
    }
    ThreadRuns { dir: d, notes }
}

/// A counter of `summary.json` (`counters.NAME`).
fn counter(s: &serde_json::Value, name: &str) -> u64 {
    s["counters"][name].as_u64().unwrap_or(0)
}

/// A 32-host leaf–spine (4 ToRs, 2 spines, 2:1 oversubscribed) under the DCQCN paper's
/// preset (ECN, separate CNPs paced per flow by the receiver), a 2 MiB lossy buffer (drops,
/// NACKs, Go-Back-N retransmissions), WebSearch at 60 % plus 16:1 incasts, stopped at 600 µs
/// with flows unfinished; queue and per-sender goodput monitors on.
const DCQCN_LOSSY: &str = r#"
name = "par_dcqcn"
seed = 7
stop = "600us"

[topology]
kind = "leaf_spine"
spines = 2
tors = 4
hosts_per_tor = 8
host_rate = "100Gbps"
host_delay = "1us"
fabric_rate = "100Gbps"
fabric_delay = "1us"

[buffer]
mode = "lossy"
size = "2MiB"

[cc]
kind = "dcqcn_paper"

[output]
queues = "tor_downlinks"
sender_throughput = true
buffer_interval = "5us"

[[traffic]]
kind = "poisson"
cdf = "websearch"
load = 0.6
duration = "500us"

[[traffic]]
kind = "incast"
degree = 16
size = "100KB"
load = 0.1
sync_window = "10us"
duration = "500us"
"#;

/// Two incasts 3 ms apart on a 2-ToR leaf–spine with 1 µs monitor intervals: the buffer and
/// queue series elide the idle stretch between them (more than 1,000 intervals), which the
/// split run must redo exactly from its partitions' series.
const TWO_BURSTS: &str = r#"
name = "par_bursts"
seed = 3

[topology]
kind = "leaf_spine"
spines = 1
tors = 2
hosts_per_tor = 4
host_rate = "100Gbps"
host_delay = "1us"

[cc]
kind = "hpcc"

[output]
buffer_interval = "1us"
queues = "tor_downlinks"
queue_interval = "1us"

[[traffic]]
kind = "incast"
senders = [1, 2, 4, 5]
receivers = [0]
size = "64KB"
at = "10us"
sync_window = "0us"

[[traffic]]
kind = "incast"
senders = [0, 1, 2, 3]
receivers = [6]
size = "64KB"
at = "3ms"
sync_window = "0us"
"#;

/// A k = 4 fat tree (16 hosts, 8 ToRs in 4 pods: a partition holds a group of ToRs, an
/// aggregation switch follows its pod) on a lossless buffer, WebSearch at 50 % plus 8:1
/// incasts, stopped at 400 µs, with the ECN and delay schemes as variants: DCTCP, TIMELY,
/// DCQCN with TCD, and HPCC with RED and IRN on a lossy buffer.
const FAT_TREE_SCHEMES: &str = r#"
name = "par_fattree"
seed = 5
stop = "400us"

[topology]
kind = "fat_tree"
k = 4
host_rate = "100Gbps"
host_delay = "1us"
fabric_rate = "100Gbps"

[buffer]
mode = "lossless"
size = "1MiB"

[cc]
kind = "dctcp"

[output]
queues = "tor_downlinks"

[[traffic]]
kind = "poisson"
cdf = "websearch"
load = 0.5
duration = "300us"

[[traffic]]
kind = "incast"
degree = 8
size = "64KB"
load = 0.1
sync_window = "5us"
duration = "300us"

[[compare]]
name = "dctcp"

[[compare]]
name = "timely"
set = ['cc.kind="timely"']

[[compare]]
name = "dcqcn-tcd"
set = ['cc.kind="dcqcn"', "tcd.enabled=true"]

[[compare]]
name = "hpcc-red-irn"
set = ['cc.kind="hpcc"', 'buffer.mode="lossy"', "red.enabled=true", 'loss_recovery.kind="irn"']
"#;

#[test]
fn default_scenario_is_the_same_on_two_and_three_threads() {
    // HPCC with INT, IRN, and the three variants: none, OnRamp, SFC (BTS, caches, Bloom).
    let r = same_on_1_2_3_threads("default", None, &[], 4);
    let sfc = r.summary(Some("sfc"));
    assert!(
        sfc["sfc"]["bts_generated"].as_u64().unwrap_or(0) > 0,
        "no BTS: {}",
        sfc["sfc"]
    );
}

#[test]
fn lossy_dcqcn_with_cnps_drops_and_a_stop_is_the_same_on_two_and_three_threads() {
    let r = same_on_1_2_3_threads("dcqcn", Some(DCQCN_LOSSY), &[], 4);
    // What the scenario is for: CNPs, drops, NACKs and Go-Back-N retransmissions, and
    // flows still running at the stop.
    let s = r.summary(None);
    for c in ["cnps", "drops", "nacks", "retx_packets"] {
        assert!(counter(&s, c) > 0, "no {c}: {}", s["counters"]);
    }
    assert!(
        s["flows_incomplete"].as_u64().unwrap_or(0) > 0,
        "every flow finished"
    );
}

#[test]
fn idle_elision_of_the_monitors_is_the_same_on_two_and_three_threads() {
    // Two ToRs: three threads split it in two, and say so.
    let r = same_on_1_2_3_threads("bursts", Some(TWO_BURSTS), &[], 2);
    // The buffer series elides the idle stretch between the bursts: of the ~2,800 1 µs
    // intervals between 200 µs and 3 ms (× 3 switches), a handful of rows remain.
    let csv = std::fs::read_to_string(r.out(1).join("buffer.csv")).expect("buffer.csv");
    let times: Vec<u64> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    let idle = times
        .iter()
        .filter(|&&t| (200_000..3_000_000).contains(&t))
        .count();
    assert!(idle < 30, "{idle} rows in the idle stretch");
    assert!(
        times.iter().any(|&t| t > 3_000_000),
        "no row after the second burst"
    );
}

#[test]
fn lossless_pfc_with_its_deadlock_watch_is_the_same_on_two_and_three_threads() {
    // The same run on a lossless buffer: PFC pauses (the PFC log and pause counts), the
    // deadlock watch between windows over every partition's switches.
    let r = same_on_1_2_3_threads(
        "lossless",
        Some(DCQCN_LOSSY),
        &[
            "--set",
            "buffer.mode=\"lossless\"",
            "--set",
            "buffer.size=\"1MiB\"",
        ],
        4,
    );
    // The run did pause: otherwise this tests nothing PFC does.
    let s = r.summary(None);
    assert!(
        s["pfc"]["pauses"].as_u64().unwrap_or(0) > 0,
        "no PFC pause: {}",
        s["pfc"]
    );
}

#[test]
fn a_fat_tree_with_dctcp_timely_tcd_and_red_is_the_same_on_two_and_three_threads() {
    let r = same_on_1_2_3_threads("fattree", Some(FAT_TREE_SCHEMES), &[], 8);
    let tcd = r.summary(Some("dcqcn-tcd"));
    assert!(
        tcd["tcd"]["ue_marks"].as_u64().unwrap_or(0) > 0,
        "TCD marked nothing"
    );
    assert!(
        tcd["pfc"]["pauses"].as_u64().unwrap_or(0) > 0,
        "no PFC pause under TCD"
    );
    let red = r.summary(Some("hpcc-red-irn"));
    assert!(counter(&red, "drops") > 0, "RED dropped nothing");
}

#[test]
fn a_run_that_cannot_be_split_says_why_and_runs_on_one_thread() {
    // Schemes whose host half keeps per-QP or cross-host state: NDP (the transport), BFC,
    // CBFC and PB-FS (host halves). Each variant on 2 and 3 threads writes one thread's
    // files, says why on stderr and in its summary.
    const SCHEMES: &str = r#"
[[compare]]
name = "ndp"
set = ["ndp.enabled=true", 'cc.kind="none"', 'buffer.mode="unlimited"']

[[compare]]
name = "bfc"
set = ["bfc.enabled=true", 'cc.kind="none"']

[[compare]]
name = "cbfc"
set = ["cbfc.enabled=true", 'buffer.mode="lossless"']

[[compare]]
name = "pbfs"
set = ["pbfs.enabled=true", 'cc.kind="hpcc"']
"#;
    let text = format!("{DCQCN_LOSSY}{SCHEMES}");
    let r = same_on_threads("one-thread", Some(&text), &[]);
    for t in [2, 3] {
        for (f, split) in splits(&r.out(t)) {
            assert_eq!(split, None, "{} split", f.display());
        }
    }
    for (v, why) in [
        ("ndp", "per-QP"),
        ("bfc", "bfc host half"),
        ("cbfc", "cbfc host half"),
        ("pbfs", "pbfs host half"),
    ] {
        let out = r.out(2).join(v).join("summary.json");
        let s: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&out).expect("summary")).expect("JSON");
        let got = s["one_thread_because"].as_str().unwrap_or_default();
        assert!(got.contains(why), "{v}: {got:?}");
        assert!(
            r.notes
                .iter()
                .all(|n| n.contains(&format!("[{v}]: note: this run uses one thread: {got}"))),
            "{v}: {:?}",
            r.notes
        );
    }
}

#[test]
fn hpcc_mode_writes_the_same_files_on_two_and_three_threads() {
    // An HPCC-sim topology with three ToRs (nodes 12, 13, 14) of four hosts each and one
    // spine (15), DCQCN (CC_MODE 1) on a lossless buffer (PFC pauses in pfc.txt) with every
    // output file sfc hpcc writes: FCT, PFC, the buffer monitor, the summary.
    let mut topo = String::from("16 4 15\n12 13 14 15\n");
    for h in 0..12u32 {
        topo.push_str(&format!("{h} {} 100Gbps 0.001ms 0\n", 12 + h / 4));
    }
    for t in 12..15u32 {
        topo.push_str(&format!("{t} 15 100Gbps 0.001ms 0\n"));
    }
    let mut flows = String::from("60\n");
    for i in 0..60u32 {
        let (src, dst) = (i % 12, (i * 5 + 4) % 12);
        let dst = if dst == src { (dst + 1) % 12 } else { dst };
        flows.push_str(&format!(
            "{src} {dst} 3 100 {} {:.6}\n",
            20_000 + 7_919 * (i % 13),
            2.0 + f64::from(i) * 2e-6
        ));
    }
    let config = "TOPOLOGY_FILE topology.txt\nFLOW_FILE flow.txt\nFCT_OUTPUT_FILE fct.txt\n\
                  PFC_OUTPUT_FILE pfc.txt\n\
                  BUFFER_MON_FILE buffer.txt\nSUMMARY_FILE summary.json\n\
                  BUFFER_MODE lossless\nBUFFER_SIZE 1\nCC_MODE 1\nHAS_WIN 0\nENABLE_QCN 1\n";
    let d = TempDir::new("hpcc-threads");
    let mut outs = Vec::new();
    for t in [1u32, 2, 3] {
        let dir = d.path().join(format!("t{t}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("topology.txt"), &topo).unwrap();
        std::fs::write(dir.join("flow.txt"), &flows).unwrap();
        std::fs::write(dir.join("config.txt"), config).unwrap();
        let o = Command::new(SFC)
            .args(["hpcc", "config.txt", "--threads", &t.to_string()])
            .current_dir(&dir)
            .output()
            .expect("run sfc hpcc");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "sfc hpcc --threads {t}: {err}");
        outs.push(dir);
    }
    for (t, out) in [2u64, 3].into_iter().zip(&outs[1..]) {
        let diffs = differences(&outs[0], out);
        assert!(diffs.is_empty(), "--threads {t}:\n{}", diffs.join("\n"));
        assert_eq!(
            splits(out),
            vec![(PathBuf::from("summary.json"), Some((t, t)))]
        );
    }
    let read = |f: &str| std::fs::read_to_string(outs[0].join(f)).expect(f);
    assert_eq!(read("fct.txt").lines().count(), 60, "every flow completed");
    for f in ["pfc.txt", "buffer.txt"] {
        assert!(!read(f).is_empty(), "{f} is empty: it compares nothing");
    }
}

#[test]
fn a_sweep_on_threads_writes_the_points_of_one_thread() {
    // The tiny sweep on a 2-ToR leaf–spine instead of a star: every point splits, and its
    // files equal the one-thread sweep's.
    let text = common::TINY_SWEEP.replace(
        "kind = \"star\"\nhosts = 4",
        "kind = \"leaf_spine\"\nspines = 1\ntors = 2\nhosts_per_tor = 2",
    );
    assert_ne!(text, common::TINY_SWEEP);
    let d = TempDir::new("sweep-split");
    let file = d.path().join("tiny.toml");
    std::fs::write(&file, text).unwrap();
    for t in ["1", "2"] {
        let o = Command::new(SFC)
            .args(["experiment", "run"])
            .arg(&file)
            .args(["--threads", t, "--jobs", "1", "--no-timings", "--out"])
            .arg(d.path().join(format!("t{t}")))
            .output()
            .expect("run sfc experiment");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{err}");
        assert!(!err.contains("one thread"), "{err}");
    }
    let (one, two) = (d.path().join("t1"), d.path().join("t2"));
    let diffs = differences(&one.join("points"), &two.join("points"));
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
    assert_eq!(
        std::fs::read(one.join("results.csv")).unwrap(),
        std::fs::read(two.join("results.csv")).unwrap()
    );
    let got = splits(&two.join("points"));
    assert_eq!(got.len(), 6);
    assert!(got.iter().all(|(_, s)| *s == Some((2, 2))), "{got:?}");
}

#[test]
fn a_sweep_on_threads_says_which_points_ran_on_one_thread() {
    // Six points on a one-switch star: none can be split (fewer than two ToRs).
    let d = TempDir::new("sweep-threads");
    let file = d.path().join("tiny.toml");
    std::fs::write(&file, common::TINY_SWEEP).unwrap();
    let out = d.path().join("out");
    let o = Command::new(SFC)
        .args(["experiment", "run"])
        .arg(&file)
        .args(["--threads", "2", "--jobs", "1", "--out"])
        .arg(&out)
        .output()
        .expect("run sfc experiment");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("note: 6 of 6 point(s) ran on one thread")
            && err.contains("6 point(s): the network has fewer than two ToRs"),
        "{err}"
    );
    // Once for the sweep, not once per point between the progress lines.
    assert!(!err.contains("this run uses one thread"), "{err}");
    let mut summaries = 0;
    for p in std::fs::read_dir(out.join("points")).unwrap() {
        let s: serde_json::Value =
            serde_json::from_slice(&std::fs::read(p.unwrap().path().join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(
            s["one_thread_because"], "the network has fewer than two ToRs",
            "{s}"
        );
        summaries += 1;
    }
    assert_eq!(summaries, 6);
}
