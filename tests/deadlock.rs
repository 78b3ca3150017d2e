//! PFC deadlock detection and the report of a stuck run, driven through the `sfc` binary.
//!
//! The deadlock: a ring of four switches (4 → 5 → 6 → 7 → 4, 25 Gb/s) with a 100 Gb/s host
//! (0 to 3) on each, lossless PFC, no congestion control and no window; every host sends 16
//! flows of 10 MB to the host two switches away, through a switch between them (ECMP spreads
//! them over both ways round). The ring links carry four times what they can, the ring
//! ingresses go over XOFF, and the pauses close a cycle of queues that never drains. A fifth
//! switch (10) hangs off switch 4 with hosts 8 and 9, for an unrelated flow.
//!
//! Detection bound asserted (see `sfc::scheme::pfc::deadlock`): a cycle is reported once it
//! has persisted for `2·T_pause + Σ (queue drain + link delay)`, checked every
//! `T_pause / 2`. With 65,535 quanta at 25 Gb/s, `T_pause` = 1.342 ms; a queue holds at most
//! the 1 MiB buffer (335.5 µs at 25 Gb/s); the links' delay is 1 µs. So the detection comes at
//! most `2.5·T_pause + 4·(335.5 µs + 1 µs)` ≈ 4.70 ms after the cycle's last pause began.

mod common;

use common::{Run, TempDir, run_with_timeout};
use std::process::Command;
use std::time::Duration;

const SFC: &str = env!("CARGO_BIN_EXE_sfc");

/// The ring as a scenario (its topology and flows in `topology.txt` and `flow.txt`): lossless
/// 1 MiB buffers, Go-Back-N with a timeout beyond the run, no congestion control, 20 ms.
const RING_TOML: &str = "name = \"ring\"\nstop = \"20ms\"\n[topology]\nkind = \"file\"\n\
    file = \"topology.txt\"\n[buffer]\nmode = \"lossless\"\nsize = \"1MiB\"\n\
    [loss_recovery]\nkind = \"gbn\"\nrto = \"1000s\"\n[cc]\nkind = \"none\"\n\
    [[traffic]]\nkind = \"flow_file\"\nfile = \"flow.txt\"\n";

/// The pause time of 65,535 quanta at 25 Gb/s, picoseconds.
const T_PAUSE_PS: u64 = (65_535u128 * 512 * 1_000_000_000_000 / 25_000_000_000) as u64;
/// The drain time of the whole 1 MiB buffer at 25 Gb/s, picoseconds.
const DRAIN_PS: u64 = ((1u128 << 20) * 8 * 1_000_000_000_000 / 25_000_000_000) as u64;
/// The detection bound of the ring's 4-queue cycle (module docs), picoseconds.
const BOUND_PS: u64 = 2 * T_PAUSE_PS + 4 * (DRAIN_PS + 1_000_000);
/// The bound plus one checking period.
const DETECT_WITHIN_PS: u64 = BOUND_PS + T_PAUSE_PS / 2;

const TOPOLOGY: &str = "\
11 5 11
4 5 6 7 10
0 4 100Gbps 1000ns 0
1 5 100Gbps 1000ns 0
2 6 100Gbps 1000ns 0
3 7 100Gbps 1000ns 0
4 5 25Gbps 1000ns 0
5 6 25Gbps 1000ns 0
6 7 25Gbps 1000ns 0
7 4 25Gbps 1000ns 0
8 10 100Gbps 1000ns 0
9 10 100Gbps 1000ns 0
10 4 100Gbps 1000ns 0
";

/// The ring's flows starting at `start` (seconds, as the flow file writes it), plus the
/// unrelated flow 8 → 9 (200 MB: it delivers for 16 ms) if `other`.
fn flows(start: &str, other: bool) -> String {
    let mut lines = Vec::new();
    for k in 0..16 {
        for i in 0..4 {
            lines.push(format!(
                "{i} {} 3 {} 10000000 {start}",
                (i + 2) % 4,
                100 + k
            ));
        }
    }
    if other {
        lines.push(format!("8 9 3 200 200000000 {start}"));
    }
    format!("{}\n{}\n", lines.len(), lines.join("\n"))
}

/// `sfc hpcc` on the ring (HPCC-sim's PFC: pauses hold until RESUME), with `extra` config
/// lines and `args`.
fn hpcc_ring(tag: &str, other: bool, extra: &str, args: &[&str]) -> (TempDir, Run) {
    let d = TempDir::new(&format!("deadlock-{tag}"));
    d.write("topology.txt", TOPOLOGY);
    d.write("flow.txt", &flows("2.0", other));
    d.write(
        "config.txt",
        &format!(
            "TOPOLOGY_FILE topology.txt\nFLOW_FILE flow.txt\nFCT_OUTPUT_FILE fct.txt\n\
             SUMMARY_FILE summary.json\nCC_MODE none\nHAS_WIN 0\nBUFFER_SIZE 1\n\
             SIMULATOR_STOP_TIME 2.1\n{extra}"
        ),
    );
    let mut cmd = Command::new(SFC);
    cmd.current_dir(d.path())
        .arg("hpcc")
        .arg("config.txt")
        .args(args);
    let r = run_with_timeout(cmd, Duration::from_secs(120));
    r.assert_no_panic();
    (d, r)
}

fn summary(d: &TempDir, file: &str) -> serde_json::Value {
    serde_json::from_str(&d.read(file)).expect("summary.json")
}

/// The one deadlock of a run's `summary.json`: checks the ring cycle and the detection time
/// against the bound; returns (detected, formed) in picoseconds.
fn check_ring_deadlock(s: &serde_json::Value, t0_ps: u64) -> (u64, u64) {
    let dl = &s["pfc"]["deadlocks"];
    assert_eq!(dl["count"], 1, "{dl}");
    let c = &dl["cycles"][0];
    let detected = c["detected_ps"].as_u64().expect("detected_ps");
    let formed = c["formed_ps"].as_u64().expect("formed_ps");
    assert_eq!(dl["first_ps"].as_u64(), Some(detected));
    // The cycle: the four ring switches, each queue of priority 3, each waiting on the next.
    let text = c["cycle"].as_str().expect("cycle");
    let hops: Vec<&str> = text.split(" -> ").collect();
    assert_eq!(hops.len(), 5, "{text}");
    assert_eq!(hops[0], hops[4], "{text}");
    let mut nodes: Vec<u32> = hops[..4]
        .iter()
        .map(|h| {
            assert!(h.ends_with("/3"), "{text}");
            h.split(':').next().unwrap().parse().unwrap()
        })
        .collect();
    nodes.sort_unstable();
    assert_eq!(nodes, [4, 5, 6, 7], "{text}");
    // Blocked flows: ring flows (ids 0..63) with packets in the cycle's queues.
    let flows = c["flows"].as_array().expect("flows");
    assert!(!flows.is_empty() && flows.iter().all(|f| f.as_u64().unwrap() < 64));
    // Within a few pause times of forming.
    let bound = c["bound_ps"].as_u64().expect("bound_ps");
    assert!(
        (2 * T_PAUSE_PS..=BOUND_PS).contains(&bound),
        "bound {bound}"
    );
    assert!(
        formed > t0_ps && formed - t0_ps < 10_000_000_000,
        "formed at {formed}"
    );
    assert!(
        detected >= formed + bound && detected - formed <= DETECT_WITHIN_PS,
        "formed {formed}, detected {detected}, bound {bound}"
    );
    (detected, formed)
}

/// (a) The deadlock alone: named on stderr, recorded in summary.json, the run stopped with
/// exit status 3, and the unfinished flows located.
#[test]
fn ring_deadlock_is_detected_and_stops_the_run() {
    let (d, r) = hpcc_ring("alone", false, "", &[]);
    assert_eq!(r.status.and_then(|s| s.code()), Some(3), "{}", r.show());
    assert!(r.stderr.contains("PFC deadlock at"), "{}", r.show());
    assert!(
        r.stderr.contains("error: config.txt: PFC deadlock"),
        "{}",
        r.show()
    );
    let s = summary(&d, "summary.json");
    check_ring_deadlock(&s, 2_000_000_000_000);
    assert_eq!(s["complete"], false);
    assert!(s["failure"].as_str().unwrap().contains("PFC deadlock"));
    // Where the unfinished flows are: queued at a ring switch, paused by the next one; the
    // list is capped.
    assert!(
        r.stderr
            .contains("64 started flows did not finish; where their packets are:"),
        "{}",
        r.show()
    );
    assert!(r.stderr.contains("paused by"), "{}", r.show());
    assert!(r.stderr.contains("… and 54 more"), "{}", r.show());
}

/// (b) With an unrelated flow still delivering elsewhere (the no-progress watchdog cannot
/// fire): detected all the same; with `--on-deadlock continue` the run goes on, the other
/// flow completes and the run ends at its stop time with exit status 0, the deadlock
/// recorded.
#[test]
fn ring_deadlock_is_detected_while_other_traffic_flows() {
    let (d, r) = hpcc_ring("other", true, "", &[]);
    assert_eq!(r.status.and_then(|s| s.code()), Some(3), "{}", r.show());
    let s = summary(&d, "summary.json");
    let (detected, _) = check_ring_deadlock(&s, 2_000_000_000_000);
    // The other flow was still running when the deadlock was found.
    assert_eq!(s["flows_completed"], 0);
    assert!(detected < 2_016_000_000_000);

    let (d, r) = hpcc_ring("other-continue", true, "", &["--on-deadlock", "continue"]);
    r.assert_ok();
    assert!(r.stderr.contains("PFC deadlock at"), "{}", r.show());
    assert!(r.stderr.contains("PFC deadlocks: 1"), "{}", r.show());
    let s = summary(&d, "summary.json");
    check_ring_deadlock(&s, 2_000_000_000_000);
    assert_eq!(s["flows_completed"], 1);
    assert_eq!(d.read("fct.txt").lines().count(), 1);
}

/// (c) With a retransmission timeout far beyond the stop time, the event list runs out once
/// the ring is frozen: the deadlock is found at the end (dated when its bound had passed).
#[test]
fn ring_deadlock_is_detected_when_the_event_list_runs_out() {
    let (d, r) = hpcc_ring("rto", false, "GBN_RTO_US 1e9\n", &[]);
    assert_eq!(r.status.and_then(|s| s.code()), Some(3), "{}", r.show());
    let s = summary(&d, "summary.json");
    let (detected, _) = check_ring_deadlock(&s, 2_000_000_000_000);
    // The clock stopped at the last event, before the detection.
    assert!(s["sim_time_ps"].as_u64().unwrap() < detected, "{s}");
    assert_eq!(s["counters"]["timeouts"], 0);
}

/// A scenario of the same ring (`sfc run`, PFC pauses with real quanta, refreshed): the
/// deadlock is named in the stdout summary; `buffer.csv` runs until the detection (the run
/// stops) or, with `--on-deadlock continue` and a timeout beyond `stop`, until `stop`, the
/// frozen ring buffers showing in its last rows.
#[test]
fn scenario_ring_deadlock_and_frozen_buffers() {
    let d = TempDir::new("deadlock-scenario");
    d.write("topology.txt", TOPOLOGY);
    d.write("flow.txt", &flows("0.000001", false));
    d.write("ring.toml", RING_TOML);
    let run = |out: &str, args: &[&str]| {
        let mut cmd = Command::new(SFC);
        cmd.current_dir(d.path())
            .args(["run", "ring.toml", "--out", out])
            .args(args);
        let r = run_with_timeout(cmd, Duration::from_secs(120));
        r.assert_no_panic();
        r
    };
    // The last row's time and the ring switches' levels there.
    let last_rows = |file: &str| -> (u64, Vec<u64>) {
        let text = d.read(file);
        let rows: Vec<Vec<u64>> = text
            .lines()
            .skip(1)
            .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
            .collect();
        let t = rows.last().expect("rows")[0];
        let levels = rows
            .iter()
            .filter(|r| r[0] == t && (4..=7).contains(&r[1]))
            .map(|r| r[2])
            .collect();
        (t, levels)
    };

    let r = run("stop", &[]);
    assert_eq!(r.status.and_then(|s| s.code()), Some(3), "{}", r.show());
    assert!(r.stdout.contains("PFC deadlocks"), "{}", r.show());
    let s = summary(&d, "stop/summary.json");
    let (detected, _) = check_ring_deadlock(&s, 0);
    let (t, levels) = last_rows("stop/buffer.csv");
    assert!(
        t <= detected / 1000 && t + 10_000 > detected / 1000,
        "{t} ns"
    );
    assert!(
        levels.len() == 4 && levels.iter().all(|&b| b > 100_000),
        "{levels:?}"
    );

    let r = run("continue", &["--on-deadlock", "continue"]);
    r.assert_ok();
    assert!(r.stdout.contains("PFC deadlocks"), "{}", r.show());
    assert!(r.stderr.contains("did not finish"), "{}", r.show());
    let (t, frozen) = last_rows("continue/buffer.csv");
    assert_eq!(t, 19_990_000, "the last interval before stop");
    assert_eq!(frozen, levels, "frozen until stop");
}

/// The ring's deadlock found by a run split over two threads (`--threads 2`: the deadlock
/// watch runs between windows over every partition's switches; the five ToRs are split in
/// two): the same exit status, deadlock report, stuck-flow report and output files as one
/// thread's (`summary.json` without the run's own measures).
#[test]
fn scenario_ring_deadlock_is_found_the_same_on_two_threads() {
    let d = TempDir::new("deadlock-threads");
    d.write("topology.txt", TOPOLOGY);
    d.write("flow.txt", &flows("0.000001", false));
    d.write("ring.toml", RING_TOML);
    let run = |threads: &str| {
        let mut cmd = Command::new(SFC);
        cmd.current_dir(d.path()).args([
            "run",
            "ring.toml",
            "--out",
            &format!("t{threads}"),
            "--threads",
            threads,
        ]);
        let r = run_with_timeout(cmd, Duration::from_secs(120));
        r.assert_no_panic();
        r
    };
    let (one, two) = (run("1"), run("2"));
    assert_eq!(one.status.and_then(|s| s.code()), Some(3), "{}", one.show());
    assert_eq!(two.status.and_then(|s| s.code()), Some(3), "{}", two.show());
    assert_eq!(
        summary(&d, "t2/summary.json")["parallel"]["threads"],
        2,
        "the run did not split: {}",
        two.show()
    );
    // The deadlock and stuck-flow reports (stderr), apart from the line naming the outputs.
    let reports = |r: &Run| -> Vec<String> {
        r.stderr
            .lines()
            .filter(|l| !l.contains("wall") && !l.starts_with("outputs written"))
            .map(String::from)
            .collect()
    };
    assert_eq!(reports(&one), reports(&two));
    // Every file both runs write (the same list), byte for byte; the summaries below.
    let listing = |t: &str| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d.path().join(t))
            .expect("outputs")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(listing("t1"), listing("t2"));
    for f in ["flows.csv", "fct.txt", "buffer.csv", "links.csv"] {
        assert!(listing("t1").contains(&f.to_string()), "{f} not written");
    }
    for f in listing("t1").iter().filter(|f| *f != "summary.json") {
        assert_eq!(
            d.read(&format!("t1/{f}")),
            d.read(&format!("t2/{f}")),
            "{f} differs"
        );
    }
    let (s1, s2) = (
        common::without_run_measures(summary(&d, "t1/summary.json")),
        common::without_run_measures(summary(&d, "t2/summary.json")),
    );
    assert_eq!(s1, s2);
    check_ring_deadlock(&s1, 0);
}

/// Every `deadlocks` object in `v` (any depth): their counts.
fn deadlock_counts(v: &serde_json::Value, out: &mut Vec<u64>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                if k == "deadlocks" {
                    out.push(x["count"].as_u64().expect("count"));
                } else {
                    deadlock_counts(x, out);
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| deadlock_counts(x, out)),
        _ => {}
    }
}

/// Every `summary.json` under `dir`.
fn summaries_under(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            summaries_under(&p, out);
        } else if p.file_name().is_some_and(|n| n == "summary.json") {
            out.push(p);
        }
    }
}

/// No false alarm: every scenario of the repository and a representative set of the quick
/// experiments that run lossless PFC (HPCC, BFC, SFC, PB-FS and TCD ones, incasts and
/// workloads on stars, leaf–spines and fat trees) run without a deadlock reported.
#[test]
fn no_deadlock_in_repository_scenarios_and_lossless_experiments() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pfc_runs = 0;
    let mut scenarios: Vec<_> = std::fs::read_dir(root.join("scenarios"))
        .expect("scenarios")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    scenarios.sort();
    assert!(scenarios.len() >= 4);
    for sc in &scenarios {
        let mut cmd = Command::new(SFC);
        cmd.arg("run").arg(sc).args(["--json", "--no-output"]);
        let r = run_with_timeout(cmd, Duration::from_secs(300));
        r.assert_ok();
        assert!(!r.stderr.contains("PFC deadlock"), "{}", r.show());
        let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
        let mut counts = Vec::new();
        deadlock_counts(&v, &mut counts);
        assert!(
            counts.iter().all(|&c| c == 0),
            "{}: {counts:?}",
            sc.display()
        );
        pfc_runs += counts.len();
    }
    let d = TempDir::new("deadlock-experiments");
    for e in [
        "hpcc-fig13",
        "hpcc-fig14",
        "bfc-fig10",
        "bfc-fig12",
        "sfc-fig5",
        "sfc-fig6",
        "pbfs-fig5",
        "tcd-ton",
        "tcd-victim",
    ] {
        let out = d.join(e);
        let mut cmd = Command::new(SFC);
        cmd.args(["experiment", "run", e, "--quick", "--jobs", "2", "--out"])
            .arg(&out);
        let r = run_with_timeout(cmd, Duration::from_secs(600));
        r.assert_ok();
        let mut files = Vec::new();
        summaries_under(&out, &mut files);
        assert!(!files.is_empty(), "{e}: no summary.json");
        for f in files {
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&f).expect("read")).expect("json");
            let mut counts = Vec::new();
            deadlock_counts(&v, &mut counts);
            assert!(
                counts.iter().all(|&c| c == 0),
                "{}: {counts:?}",
                f.display()
            );
            assert!(v["failure"].is_null(), "{}: {}", f.display(), v["failure"]);
            pfc_runs += counts.len();
        }
    }
    // The runs checked had PFC on (the `pfc.deadlocks` record exists only then).
    assert!(pfc_runs >= 40, "{pfc_runs} runs with PFC");
}
