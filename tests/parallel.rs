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
                let (ox, oy) = (jx.as_object().unwrap(), jy.as_object().unwrap());
                for (k, v) in ox {
                    if oy.get(k) != Some(v) {
                        diffs.push(format!("{}: `{k}` differs", f.display()));
                    }
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

/// Run `scenario` on 1, 2 and 3 threads and require identical outputs, and that the runs
/// asked for several threads did split (no "uses one thread" note); returns their stderr.
fn same_on_1_2_3_threads(tag: &str, scenario: Option<&str>, args: &[&str]) -> Vec<String> {
    let notes = same_on_threads(tag, scenario, args);
    assert!(
        notes.iter().all(|n| !n.contains("uses one thread")),
        "{tag}: a run did not split: {notes:?}"
    );
    notes
}

/// [`same_on_1_2_3_threads`] without requiring the split.
fn same_on_threads(tag: &str, scenario: Option<&str>, args: &[&str]) -> Vec<String> {
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
    notes
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

#[test]
fn default_scenario_is_the_same_on_two_and_three_threads() {
    // HPCC with INT, IRN, and the three variants: none, OnRamp, SFC (BTS, caches, Bloom).
    same_on_1_2_3_threads("default", None, &[]);
}

#[test]
fn lossy_dcqcn_with_cnps_drops_and_a_stop_is_the_same_on_two_and_three_threads() {
    same_on_1_2_3_threads("dcqcn", Some(DCQCN_LOSSY), &[]);
}

#[test]
fn idle_elision_of_the_monitors_is_the_same_on_two_and_three_threads() {
    same_on_1_2_3_threads("bursts", Some(TWO_BURSTS), &[]);
}

#[test]
fn lossless_pfc_with_its_deadlock_watch_is_the_same_on_two_and_three_threads() {
    // The same run on a lossless buffer: PFC pauses (the PFC log and pause counts), the
    // deadlock watch between windows over every partition's switches.
    let d = TempDir::new("lossless-pfc");
    same_on_1_2_3_threads(
        "lossless",
        Some(DCQCN_LOSSY),
        &[
            "--set",
            "buffer.mode=\"lossless\"",
            "--set",
            "buffer.size=\"1MiB\"",
        ],
    );
    // The run did pause: otherwise this tests nothing PFC does.
    run(
        Some(&{
            let p = d.path().join("s.toml");
            std::fs::write(&p, DCQCN_LOSSY).unwrap();
            p
        }),
        1,
        &d.path().join("out"),
        &[
            "--set",
            "buffer.mode=\"lossless\"",
            "--set",
            "buffer.size=\"1MiB\"",
        ],
    );
    let s: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.path().join("out/summary.json")).unwrap()).unwrap();
    assert!(
        s["pfc"]["pauses"].as_u64().unwrap_or(0) > 0,
        "no PFC pause: {}",
        s["pfc"]
    );
}

#[test]
fn a_run_that_cannot_be_split_says_why_and_runs_on_one_thread() {
    // NDP: its host half keeps every QP's state by slot.
    let notes = same_on_threads(
        "ndp",
        Some(DCQCN_LOSSY),
        &[
            "--set",
            "ndp.enabled=true",
            "--set",
            "cc.kind=\"none\"",
            "--set",
            "buffer.mode=\"unlimited\"",
        ],
    );
    assert!(
        notes
            .iter()
            .all(|n| n.contains("uses one thread") && n.contains("per-QP")),
        "{notes:?}"
    );
}

#[test]
fn hpcc_mode_writes_the_same_files_on_two_threads() {
    // An HPCC-sim topology with two ToRs (nodes 8, 9) of four hosts each and one spine (10),
    // DCQCN (CC_MODE 1) on a lossy buffer, 40 flows across the ToRs from 2 s.
    let topo = "11 3 10\n8 9 10\n\
                0 8 100Gbps 0.001ms 0\n1 8 100Gbps 0.001ms 0\n2 8 100Gbps 0.001ms 0\n\
                3 8 100Gbps 0.001ms 0\n4 9 100Gbps 0.001ms 0\n5 9 100Gbps 0.001ms 0\n\
                6 9 100Gbps 0.001ms 0\n7 9 100Gbps 0.001ms 0\n\
                8 10 100Gbps 0.001ms 0\n9 10 100Gbps 0.001ms 0\n";
    let mut flows = String::from("40\n");
    for i in 0..40u32 {
        let (src, dst) = (i % 8, (i * 3 + 4) % 8);
        let dst = if dst == src { (dst + 1) % 8 } else { dst };
        flows.push_str(&format!(
            "{src} {dst} 3 100 {} {:.6}\n",
            20_000 + 7_919 * (i % 13),
            2.0 + f64::from(i) * 2e-6
        ));
    }
    let config = "TOPOLOGY_FILE topology.txt\nFLOW_FILE flow.txt\nFCT_OUTPUT_FILE fct.txt\n\
                  PFC_OUTPUT_FILE pfc.txt\nBUFFER_MODE lossy\nCC_MODE 1\nHAS_WIN 0\n\
                  ENABLE_QCN 1\n";
    let mut fct = Vec::new();
    for t in [1, 2] {
        let d = TempDir::new(&format!("hpcc{t}"));
        std::fs::write(d.path().join("topology.txt"), topo).unwrap();
        std::fs::write(d.path().join("flow.txt"), &flows).unwrap();
        std::fs::write(d.path().join("config.txt"), config).unwrap();
        let o = Command::new(SFC)
            .args(["hpcc", "config.txt", "--threads", &t.to_string()])
            .current_dir(&d.0)
            .output()
            .expect("run sfc hpcc");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "sfc hpcc --threads {t}: {err}");
        assert!(!err.contains("uses one thread"), "{err}");
        fct.push((
            std::fs::read(d.path().join("fct.txt")).unwrap(),
            std::fs::read(d.path().join("pfc.txt")).unwrap_or_default(),
        ));
    }
    assert_eq!(
        String::from_utf8_lossy(&fct[0].0).lines().count(),
        40,
        "every flow completed"
    );
    assert!(fct[0] == fct[1], "fct.txt / pfc.txt differ on two threads");
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
