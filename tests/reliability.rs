//! No silently wrong result, no lost run, no unbounded resource use: every case below, driven
//! through the library or the `sfc` binary, gives a clear error naming the file, line or key,
//! a warning, or correct output (the book's Reliability chapter).

mod common;

use std::path::Path;

/// Every point of every shipped experiment (full and quick) resolves without an error and
/// without a warning: the stricter checks do not reject what the paper experiments need.
#[test]
fn every_experiment_point_resolves_cleanly() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
    for (path, e) in sfc::experiment::list(&dir).expect("list experiments") {
        for quick in [false, true] {
            for p in sfc::experiment::runner::points(&e, quick) {
                let sc = sfc::scenario::from_str(
                    &e.scenario_text,
                    &path.display().to_string(),
                    &dir,
                    &p.sets,
                )
                .unwrap_or_else(|err| {
                    panic!("{} point {} (quick {quick}):\n{err}", path.display(), p.id)
                });
                assert!(
                    sc.warnings.is_empty(),
                    "{} point {}: {:?}",
                    path.display(),
                    p.id,
                    sc.warnings
                );
            }
        }
    }
}

use common::{Run, TempDir, run_with_timeout};
use std::process::Command;
use std::time::Duration;

const SFC: &str = env!("CARGO_BIN_EXE_sfc");

fn sfc(cwd: &Path, args: &[&str]) -> Run {
    let mut cmd = Command::new(SFC);
    cmd.args(args).current_dir(cwd);
    run_with_timeout(cmd, Duration::from_secs(30))
}

/// A 4-host star with one 3:1 incast of 20 KB flows: completes in microseconds.
const TINY: &str = r#"name = "tiny"
seed = 7

[topology]
kind = "star"
hosts = 4
host_rate = "100Gbps"
host_delay = "1us"

[[traffic]]
kind = "incast"
senders = [0, 1, 2]
receivers = [3]
size = "20KB"
at = "1us"
"#;

/// TINY with `extra` lines appended after `[topology]`'s last key (or a new section).
fn tiny_with(section_line: &str, extra: &str) -> String {
    TINY.replacen(section_line, &format!("{section_line}\n{extra}"), 1)
}

/// `sfc validate` on `text` fails, and every needle appears in stderr.
fn assert_invalid(text: &str, needles: &[&str]) {
    let d = TempDir::new("rel-bad");
    d.write("s.toml", text);
    let r = sfc(d.path(), &["validate", "s.toml"]);
    r.assert_error(needles);
}

// Class 1: out-of-range values are errors naming the key, never a saturation.
#[test]
fn class1_out_of_range_times_and_rates() {
    let t = TINY.replace("host_delay = \"1us\"", "host_delay = \"1e30s\"");
    assert_invalid(&t, &["s.toml:8", "topology.host_delay", "out of range"]);
    // In the picosecond range but not a link delay: RTTs and timeouts must fit.
    let t = TINY.replace("host_delay = \"1us\"", "host_delay = \"2s\"");
    assert_invalid(
        &t,
        &["s.toml:8", "topology.host_delay", "longest accepted, 1s"],
    );
    let t = TINY.replace("host_rate = \"100Gbps\"", "host_rate = \"1bps\"");
    assert_invalid(
        &t,
        &["s.toml:7", "topology.host_rate", "slowest accepted link"],
    );
}

// Class 2: keys that do not apply.
#[test]
fn class2_keys_that_do_not_apply_are_errors() {
    let t = tiny_with("seed = 7", "\n[cc]\nkind = \"dcqcn\"\neta = 0.9");
    assert_invalid(
        &t,
        &[
            "s.toml",
            "`cc.eta`",
            "does not apply to cc.kind = \"dcqcn\"",
        ],
    );
    let t = tiny_with("seed = 7", "\n[cc]\nkind = \"hpcc\"\ng = 0.5");
    assert_invalid(&t, &["`cc.g`", "does not apply to cc.kind = \"hpcc\""]);
    // TIMELY's β is a fraction: NaN or out of [0, 1] is an error, not a run.
    for beta in ["nan", "1.5", "-0.1", "inf"] {
        let t = tiny_with(
            "seed = 7",
            &format!("\n[cc]\nkind = \"timely\"\nbeta = {beta}"),
        );
        assert_invalid(&t, &["cc.beta", "must be in [0, 1]"]);
    }
    let t = TINY.replace("at = \"1us\"", "at = \"1us\"\nduration = \"1ms\"");
    assert_invalid(
        &t,
        &["traffic[0].duration", "does not apply to a single incast"],
    );
    let t = TINY.replace(
        "kind = \"star\"\nhosts = 4",
        "kind = \"leaf_spine\"\nhosts = 4\nspines = 1\ntors = 2\nhosts_per_tor = 2",
    );
    assert_invalid(
        &t,
        &["s.toml:6", "`topology.hosts`", "tors × hosts_per_tor"],
    );
    let d = TempDir::new("rel-file");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hpcc/star3_100g.txt"),
        d.join("topo.txt"),
    )
    .unwrap();
    let t = TINY.replace(
        "kind = \"star\"\nhosts = 4\nhost_rate = \"100Gbps\"",
        "kind = \"file\"\nfile = \"topo.txt\"\nhost_rate = \"10Gbps\"",
    );
    d.write("s.toml", &t);
    sfc(d.path(), &["validate", "s.toml"]).assert_error(&[
        "`topology.host_rate`",
        "topology file gives every node and link",
    ]);
    // Several problems: every one is reported (validate reports them all).
    let t = tiny_with(
        "seed = 7",
        "\n[cc]\nkind = \"dcqcn\"\neta = 0.9\nw_ai = \"80B\"",
    );
    assert_invalid(&t, &["`cc.eta`", "`cc.w_ai`"]);
}

#[test]
fn class2_pfc_keys_without_lossless_warn() {
    let d = TempDir::new("rel-pfc");
    d.write("s.toml", &tiny_with("seed = 7", "\n[pfc]\nquanta = 100"));
    let r = sfc(d.path(), &["validate", "s.toml"]);
    r.assert_ok();
    assert!(
        r.stderr
            .contains("warning: s.toml:5: `pfc.quanta`: has no effect"),
        "{}",
        r.show()
    );
}

#[test]
fn class2_sfc_and_onramp_keys_while_off_warn() {
    let d = TempDir::new("rel-sfc-off");
    d.write(
        "s.toml",
        &tiny_with("seed = 7", "\n[sfc]\nqth = \"20KB\"\n[onramp]\ngain = 2.0"),
    );
    let r = sfc(d.path(), &["validate", "s.toml"]);
    r.assert_ok();
    for k in ["`sfc.qth`: has no effect", "`onramp.gain`: has no effect"] {
        assert!(r.stderr.contains(k), "missing {k}: {}", r.show());
    }
    // Switched on: no warning.
    d.write(
        "t.toml",
        &tiny_with(
            "seed = 7",
            "\n[sfc]\nmode = \"sfc\"\nqth = \"20KB\"\n[onramp]\nenabled = true\ngain = 2.0",
        ),
    );
    let r = sfc(d.path(), &["validate", "t.toml"]);
    r.assert_ok();
    assert!(!r.stderr.contains("has no effect"), "{}", r.show());
}

/// An experiment point whose run stalls: the experiment still aggregates every point, lists
/// the failure at the top of REPORT.md, and exits non-zero naming the point.
#[test]
fn class6_experiment_points_that_fail_fail_the_experiment() {
    let d = TempDir::new("rel-exp-stall");
    // Hosts 0, 1, 2 on switch 3; every packet on host 0's link is lost.
    d.write(
        "exps/topo.txt",
        "4 1 3\n3\n0 3 100Gbps 1000ns 1\n1 3 100Gbps 1000ns 0\n2 3 100Gbps 1000ns 0\n",
    );
    d.write(
        "exps/stall.toml",
        r#"[experiment]
name = "stall"
title = "a point that stalls"

[scenario]
name = "stall"

[scenario.topology]
kind = "file"
file = "topo.txt"

[[scenario.traffic]]
kind = "long_lived"
pairs = [[1, 0]]
size = "10KB"

[sweep]
series = [
  { name = "seed 1", set = ["seed=1"] },
  { name = "seed 2", set = ["seed=2"] },
]
"#,
    );
    let r = sfc(
        d.path(),
        &[
            "experiment",
            "run",
            "stall",
            "--dir",
            "exps",
            "--out",
            "o",
            "--jobs",
            "1",
        ],
    );
    r.assert_error(&["2 point(s) did not finish", "no progress for"]);
    let report = d.read("o/REPORT.md");
    assert!(report.contains("some points did not finish"), "{report}");
    assert!(
        d.read("o/results.csv").lines().count() == 3,
        "header + 2 points"
    );
}

// Class 3: output locations are checked before simulating.
#[test]
fn class3_bad_output_locations_fail_before_the_run() {
    let d = TempDir::new("rel-out");
    d.write("s.toml", TINY);
    d.write("afile", "x");
    let r = sfc(d.path(), &["run", "s.toml", "--out", "afile"]);
    r.assert_error(&["afile", "is an existing file, not a directory"]);
    assert!(
        !r.stderr.contains("running"),
        "the run must not start:\n{}",
        r.show()
    );
    let r = sfc(d.path(), &["run", "s.toml", "--out", "afile/sub"]);
    r.assert_error(&["afile/sub"]);
}

#[test]
fn class3_hpcc_fct_output_checked_and_never_an_input() {
    let d = TempDir::new("rel-hpcc");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hpcc");
    std::fs::copy(data.join("star2_100g.txt"), d.join("topo.txt")).unwrap();
    std::fs::copy(data.join("flows_sizes.txt"), d.join("flow.txt")).unwrap();
    let cfg = |fct: &str| {
        format!(
            "TOPOLOGY_FILE topo.txt\nFLOW_FILE flow.txt\nFCT_OUTPUT_FILE {fct}\nCC_MODE none\nSIMULATOR_STOP_TIME 2.1\n"
        )
    };
    d.write("c.txt", &cfg("flow.txt"));
    let before = d.read("flow.txt");
    sfc(d.path(), &["hpcc", "c.txt"]).assert_error(&["c.txt:3", "FCT_OUTPUT_FILE", "input file"]);
    assert_eq!(d.read("flow.txt"), before, "the input must be untouched");
    d.write("c.txt", &cfg("missing/fct.txt"));
    sfc(d.path(), &["hpcc", "c.txt"]).assert_error(&["c.txt:3", "missing", "does not exist"]);
    d.write("c.txt", &cfg("."));
    sfc(d.path(), &["hpcc", "c.txt"]).assert_error(&["c.txt:3", "is a directory"]);
    // An empty flow file is refused.
    d.write("flow.txt", "0\n");
    d.write("c.txt", &cfg("fct.txt"));
    sfc(d.path(), &["hpcc", "c.txt"]).assert_error(&["FLOW_FILE", "no flows"]);
}

// Class 4: a previous run's files never sit beside a new summary.
#[test]
fn class4_stale_outputs_are_removed() {
    let d = TempDir::new("rel-stale");
    d.write("s.toml", TINY);
    d.write("o/queues.csv", "stale");
    d.write("o/summary.json", "{}");
    let r = sfc(d.path(), &["run", "s.toml", "--out", "o"]);
    r.assert_ok();
    assert!(
        !d.join("o/queues.csv").exists(),
        "stale queues.csv left behind"
    );
    assert!(d.read("o/summary.json").contains("\"complete\": true"));
    assert!(d.join("o/scenario.toml").exists());
}

// Class 5: unbounded memory, disk and time.
#[test]
fn class5_sample_intervals_and_memory_are_bounded() {
    let t = tiny_with("seed = 7", "\n[output]\nbuffer_interval = \"1ps\"");
    assert_invalid(
        &t,
        &[
            "s.toml:5",
            "output.buffer_interval",
            "shortest sampling interval",
        ],
    );
    let t = tiny_with("seed = 7", "\n[output]\nqueue_interval = \"0ns\"");
    assert_invalid(&t, &["output.queue_interval", "shortest sampling interval"]);
    // Idle simulated time costs nothing: flows at 1e6 s run at once, in a few MB, and the
    // time series start at their start (no 10^11 rows of zeros before it).
    let d = TempDir::new("rel-mem");
    d.write("s.toml", &TINY.replace("at = \"1us\"", "at = \"1e6s\""));
    let r = sfc(d.path(), &["run", "s.toml", "--out", "o"]);
    assert_eq!(r.status.and_then(|s| s.code()), Some(0), "{}", r.stderr);
    let csv = std::fs::read_to_string(d.path().join("o/buffer.csv")).unwrap();
    assert!(csv.lines().count() < 100, "{} rows", csv.lines().count());
    assert!(
        csv.lines().nth(1).unwrap().starts_with("1000000000000000,"),
        "{csv}"
    );
    // Idle time *between* flows costs nothing either: flows 1 µs and 1e6 s apart run at
    // once; the monitors keep the last busy interval, one settled interval, then jump (the
    // `time_ns` column shows the jump), and `validate` agrees (no memory refusal).
    let gap = TINY.to_string()
        + "\n[[traffic]]\nkind = \"incast\"\nsenders = [0]\nreceivers = [3]\nsize = \"1KB\"\nat = \"1e6s\"\n";
    d.write("gap.toml", &gap);
    let v = sfc(d.path(), &["validate", "gap.toml"]);
    assert_eq!(v.status.and_then(|s| s.code()), Some(0), "{}", v.stderr);
    let r = sfc(d.path(), &["run", "gap.toml", "--out", "g"]);
    assert_eq!(r.status.and_then(|s| s.code()), Some(0), "{}", r.stderr);
    let csv = std::fs::read_to_string(d.path().join("g/buffer.csv")).unwrap();
    assert!(csv.lines().count() < 100, "{} rows", csv.lines().count());
    assert!(
        csv.lines().any(|l| l.starts_with("1000000000000000,")),
        "{csv}"
    );
    assert!(d.read("g/summary.json").contains("\"flows_completed\": 4"));
    // Tens of millions of flows are refused before they are generated.
    let t = TINY.replace(
        "[[traffic]]\nkind = \"incast\"",
        "[[traffic]]\nkind = \"poisson\"\ncdf = \"websearch\"\nload = 1.0\nduration = \"1e7s\"\n\n[[traffic]]\nkind = \"incast\"",
    );
    assert_invalid(&t, &["traffic[0]", "flows"]);
}

// Class 6: impossible settings, and runs that finish having done nothing.
#[test]
fn class6_impossible_settings_are_rejected() {
    let t = tiny_with("seed = 7", "\n[buffer]\ndt_alpha = 1e-30");
    assert_invalid(
        &t,
        &[
            "s.toml:5",
            "buffer.dt_alpha",
            "every packet would be dropped",
        ],
    );
    let t = tiny_with("seed = 7", "\n[loss_recovery]\nrto = \"1ps\"");
    assert_invalid(
        &t,
        &["s.toml:5", "loss_recovery.rto", "shorter than the base RTT"],
    );
    let t = TINY.replace("seed = 7", "seed = 7\nstop = \"0ns\"");
    assert_invalid(&t, &["s.toml:3", "`stop`", "must be positive"]);
    let t = TINY.replace("seed = 7", "seed = 7\nstop = \"1us\"");
    assert_invalid(
        &t,
        &["`stop`", "every flow starts at or after the stop time"],
    );
}

#[test]
fn class6_a_run_without_progress_stops_and_fails() {
    // Every packet on host 0's link is lost: no byte is ever delivered.
    let d = TempDir::new("rel-stall");
    d.write(
        "topo.txt",
        "3 1 2\n2\n0 2 100Gbps 1000ns 1\n1 2 100Gbps 1000ns 0\n",
    );
    let t = r#"name = "lossy"
[topology]
kind = "file"
file = "topo.txt"

[[traffic]]
kind = "long_lived"
pairs = [[0, 1]]
size = "10KB"
"#;
    d.write("s.toml", t);
    let r = sfc(d.path(), &["run", "s.toml", "--out", "o"]);
    r.assert_error(&["no progress for", "1 flows started and unfinished"]);
    // `validate` already warns about the link that loses everything.
    let v = sfc(d.path(), &["validate", "s.toml"]);
    assert!(
        v.stderr.contains("has error rate 1: it loses every packet"),
        "{}",
        v.stderr
    );
    let s = d.read("o/summary.json");
    assert!(
        s.contains("\"complete\": false") && s.contains("\"flows_incomplete\": 1"),
        "{s}"
    );
    // The diagnosis's stop time is the summary's simulated time.
    let j: serde_json::Value = serde_json::from_str(&s).unwrap();
    let end = sfc::units::fmt_time(j["sim_time_ps"].as_u64().unwrap());
    assert!(
        r.stderr.contains(&format!("stopped at {end} ")),
        "{end}: {}",
        r.stderr
    );
}

// Class 7: error reporting.
#[test]
fn class7_set_errors_cite_the_set() {
    let d = TempDir::new("rel-set");
    d.write("s.toml", TINY);
    let r = sfc(
        d.path(),
        &[
            "validate",
            "s.toml",
            "--set",
            "topology.host_delay=\"1e30s\"",
        ],
    );
    r.assert_error(&["--set `topology.host_delay=\"1e30s\"`", "out of range"]);
    let r = sfc(
        d.path(),
        &["validate", "s.toml", "--set", "topology.nosuchkey=1"],
    );
    r.assert_error(&["--set `topology.nosuchkey=1`", "unknown field"]);
    // A topology shape made impossible by an override cites the override, not `kind`'s line.
    let r = sfc(
        d.path(),
        &["validate", "s.toml", "--set", "topology.hosts=1"],
    );
    r.assert_error(&["--set `topology.hosts=1`: topology:", "at least 2 hosts"]);
    // An element of a list given whole by a --set cites that --set.
    let r = sfc(
        d.path(),
        &["validate", "s.toml", "--set", "output.queues=[[0, 0]]"],
    );
    r.assert_error(&["--set `output.queues=[[0, 0]]`: `output.queues[0]`"]);
    let r = sfc(
        d.path(),
        &["validate", "s.toml", "--set", "traffic.0.receivers=[2, 3]"],
    );
    r.assert_error(&["--set `traffic.0.receivers=[2, 3]`", "exactly one receiver"]);
}

#[test]
fn class7_non_utf8_and_ecn_errors_have_positions() {
    let d = TempDir::new("rel-utf8");
    std::fs::write(d.join("s.toml"), b"name = \"x\"\n# caf\xe9\n").unwrap();
    sfc(d.path(), &["validate", "s.toml"]).assert_error(&["s.toml:2:6", "not UTF-8"]);
    let t = tiny_with("seed = 7", "\n[ecn]\nkmin = \"100KB\"\nkmax = \"10KB\"");
    assert_invalid(&t, &["s.toml:6", "ecn.kmax", "kmin ≤ kmax"]);
    // A bad pmax names pmax (it used to blame kmax).
    let t = tiny_with("seed = 7", "\n[ecn]\nkmin = \"10KB\"\npmax = -1");
    assert_invalid(&t, &["s.toml:6", "`ecn.pmax`: must be in [0, 1]"]);
    let t = tiny_with("seed = 7", "\n[output]\nqueues = [[0, 0]]");
    assert_invalid(
        &t,
        &["s.toml:5", "output.queues[0]", "node 0 is not a switch"],
    );
}

#[test]
fn class7_every_unknown_key_is_reported_with_its_line() {
    // Three misspelt keys in three sections: all three, each with its line, in one run.
    let text = tiny_with("host_delay = \"1us\"", "bogus = 1").replacen(
        "at = \"1us\"",
        "at = \"1us\"\nsise = \"20KB\"",
        1,
    ) + "\n[buffer]\nsize = \"1MB\"\nmdoe = \"lossy\"\n";
    assert_invalid(
        &text,
        &[
            "line 9",
            "unknown field `bogus`",
            "line 17",
            "unknown field `sise`",
            "line 21",
            "unknown field `mdoe`",
        ],
    );
}

#[test]
fn class7_unknown_keys_in_the_file_and_in_every_set_are_all_reported() {
    // One misspelt key in the file and two in `--set`s (with a valid one between them): all
    // three are listed, the file's with its line, each override cited as given.
    let d = TempDir::new("rel-set-many");
    d.write("s.toml", &tiny_with("host_delay = \"1us\"", "bogus = 1"));
    let r = sfc(
        d.path(),
        &[
            "validate",
            "s.toml",
            "--set",
            "cc.etaa=1",
            "--set",
            "seed=3",
            "--set",
            "buffer.mdoe=\"lossy\"",
        ],
    );
    r.assert_error(&[
        "line 9",
        "unknown field `bogus`",
        "--set `cc.etaa=1`: unknown field `etaa`",
        "--set `buffer.mdoe=\"lossy\"`: unknown field `mdoe`",
    ]);
    assert!(!r.stderr.contains("seed=3"), "{}", r.stderr);
}

#[test]
fn class7_cli_edges() {
    let d = TempDir::new("rel-cli");
    let r = sfc(d.path(), &["experiment", "run", "sfc-fig1", "--jobs", "0"]);
    assert!(!r.ok() && r.stderr.contains("--jobs"), "{}", r.show());
    d.write("out/bench.json", "[1]");
    let r = sfc(d.path(), &["bench", "--filter", "nomatch"]);
    r.assert_error(&["matches no benchmark"]);
    assert_eq!(d.read("out/bench.json"), "[1]");
    // A closed pipe ends `sfc` quietly, never with a panic.
    d.write("s.toml", TINY);
    let mut child = Command::new(SFC)
        .args(["run", "s.toml", "--no-output", "--json"])
        .current_dir(d.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_ne!(out.status.code(), Some(101), "{err}");
}

// Class 8 and the experiments built into the binary.
#[test]
fn class8_summary_records_how_to_rerun() {
    let d = TempDir::new("rel-summary");
    d.write("s.toml", TINY);
    let r = sfc(
        d.path(),
        &["run", "s.toml", "--out", "o", "--set", "seed=9"],
    );
    r.assert_ok();
    let s: serde_json::Value = serde_json::from_str(&d.read("o/summary.json")).unwrap();
    assert_eq!(s["seed"], 9);
    assert_eq!(s["scenario"]["seed"], 9);
    assert_eq!(s["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(s["complete"], true);
    let t = d.read("o/throughput.csv");
    assert!(t.starts_with("sample,time_ns,receiver,gbps\n"), "{t}");
    // Every receiver column names host 3, the incast receiver.
    assert!(
        t.lines().skip(1).all(|l| l.split(',').nth(2) == Some("3")),
        "{t}"
    );
}

#[test]
fn experiments_work_outside_the_repository() {
    let d = TempDir::new("rel-exp");
    let r = sfc(d.path(), &["experiment", "list"]);
    r.assert_ok();
    assert!(
        r.stdout.contains("sfc-fig1") && r.stdout.contains("<built-in>"),
        "{}",
        r.show()
    );
    let r = sfc(d.path(), &["experiment", "list", "--dir", "nope"]);
    r.assert_error(&["nope", "does not exist"]);
}

/// The built-in experiment list is exactly the `experiments/` directory.
#[test]
fn builtin_experiments_match_the_directory() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    files.sort();
    let mut builtin: Vec<String> = sfc::experiment::builtin::BUILTIN
        .iter()
        .map(|(n, _)| n.to_string())
        .collect();
    builtin.sort();
    assert_eq!(files, builtin, "regenerate src/experiment/builtin.rs");
    for (n, text) in sfc::experiment::builtin::BUILTIN {
        assert_eq!(std::fs::read_to_string(dir.join(n)).unwrap(), *text);
    }
}

// A bare number is read like the same number written as a string: bytes need no unit, a
// duration says which unit it wants, and a value of the wrong kind names what is expected.
#[test]
fn bare_numbers_read_like_strings() {
    let d = TempDir::new("rel-bare");
    let with = |extra: &str| TINY.to_string() + "\n[sfc]\nmode = \"sfc\"\n" + extra;
    d.write("a.toml", &with("qth = 20000\n"));
    d.write("b.toml", &with("qth = \"20000\"\n"));
    let a = sfc(d.path(), &["run", "a.toml", "--out", "a"]);
    let b = sfc(d.path(), &["run", "b.toml", "--out", "b"]);
    a.assert_ok();
    b.assert_ok();
    assert_eq!(d.read("a/flows.csv"), d.read("b/flows.csv"));
    // Not vacuous: the bare value is the threshold SFC uses. 3 senders × 20 KB into one port
    // queue up to ≈ 40 KB: above 20 000 B SFC sends BTS, with a 1 MB threshold it never does.
    d.write("c.toml", &with("qth = 1000000\n"));
    sfc(d.path(), &["run", "c.toml", "--out", "c"]).assert_ok();
    let bts = |dir: &str| -> u64 {
        let v: serde_json::Value =
            serde_json::from_str(&d.read(&format!("{dir}/summary.json"))).expect("summary.json");
        v["sfc"]["bts_generated"]
            .as_u64()
            .expect("sfc.bts_generated")
    };
    assert!(bts("a") > 0, "qth = 20000 must trigger BTS");
    assert_eq!(bts("a"), bts("b"));
    assert_eq!(bts("c"), 0);
    let t = TINY.replace("host_delay = \"1us\"", "host_delay = 1");
    assert_invalid(&t, &["s.toml:8", "topology.host_delay", "needs a unit"]);
    let t = TINY.replace("host_delay = \"1us\"", "host_delay = true");
    assert_invalid(&t, &["line 8", "expected a string", "or a number"]);
}

// Outputs never overwrite inputs, names stay inside the output
// directory, `[[compare]]` cannot be half-overridden, a variant's directory re-runs alone.
#[test]
fn class3_outputs_never_overwrite_inputs() {
    let d = TempDir::new("rel-inout");
    d.write("sc/scenario.toml", TINY);
    // `--out` the scenario's own directory: the run would write `scenario.toml` over it.
    let r = sfc(d.path(), &["run", "sc/scenario.toml", "--out", "sc"]);
    r.assert_error(&["writes `scenario.toml` there", "input file"]);
    assert_eq!(d.read("sc/scenario.toml"), TINY);
    // A flow file named like an output, inside `--out`.
    d.write("ff/fct.txt", "1\n0 3 3 100 2000 0.000001\n");
    let t = TINY.replace(
        "[[traffic]]\nkind = \"incast\"\nsenders = [0, 1, 2]\nreceivers = [3]\nsize = \"20KB\"\nat = \"1us\"\n",
        "[[traffic]]\nkind = \"flow_file\"\nfile = \"ff/fct.txt\"\n",
    );
    d.write("f.toml", &t);
    let r = sfc(d.path(), &["run", "f.toml", "--out", "ff"]);
    r.assert_error(&["writes `fct.txt` there", "ff/fct.txt"]);
    assert!(d.read("ff/fct.txt").starts_with("1\n"));
    // A name that would leave `out/`.
    let r = sfc(
        d.path(),
        &["validate", "sc/scenario.toml", "--set", "name=\"..\""],
    );
    r.assert_error(&["`name` = \"..\"", "plain name"]);
}

#[test]
fn class8_compare_variants_are_not_overridable_and_rerun_alone() {
    let d = TempDir::new("rel-cmp");
    let t = TINY.to_string()
        + "\n[[compare]]\nname = \"a\"\n\n[[compare]]\nname = \"b\"\nset = [\"seed=9\"]\n";
    d.write("c.toml", &t);
    let r = sfc(
        d.path(),
        &["run", "c.toml", "--no-output", "--set", "compare=[]"],
    );
    r.assert_error(&["--set `compare=[]`", "cannot be overridden"]);
    let r = sfc(d.path(), &["run", "c.toml", "--out", "o"]);
    assert_eq!(r.status.and_then(|s| s.code()), Some(0), "{}", r.stderr);
    // Variant b's resolved scenario has its override and no [[compare]]: it re-runs b alone,
    // with identical results.
    let sc = d.read("o/b/scenario.toml");
    assert!(!sc.contains("compare"), "{sc}");
    assert!(sc.contains("seed = 9"), "{sc}");
    let r = sfc(d.path(), &["run", "o/b/scenario.toml", "--out", "again"]);
    assert_eq!(r.status.and_then(|s| s.code()), Some(0), "{}", r.stderr);
    assert_eq!(d.read("again/fct.txt"), d.read("o/b/fct.txt"));
}

/// Variants with different networks: the header gives the range of hosts (not variant 0's),
/// every variant's error comes before anything runs, and the table has every variant.
#[test]
fn compare_variants_of_different_sizes() {
    let d = TempDir::new("rel-cmp-size");
    let t = TINY.to_string()
        + "\n[[compare]]\nname = \"small\"\n\n[[compare]]\nname = \"big\"\nset = [\"topology.hosts=9\"]\n";
    d.write("c.toml", &t);
    let r = sfc(d.path(), &["run", "c.toml", "--no-output"]);
    assert_eq!(r.status.and_then(|s| s.code()), Some(0), "{}", r.stderr);
    assert!(
        r.stderr.contains("× 2 variants (small, big): 4–9 hosts"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("at a time"), "{}", r.stderr);
    assert!(r.stdout.contains("side by side"), "{}", r.stdout);
    let rows: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.contains("completed"))
        .collect();
    assert_eq!(rows.len(), 1, "{}", r.stdout);
    assert_eq!(rows[0].matches("3/3").count(), 2, "{}", r.stdout);
    // The last variant's error stops the run before the first one runs (no output written).
    let bad = TINY.to_string()
        + "\n[[compare]]\nname = \"a\"\n\n[[compare]]\nname = \"b\"\nset = [\"topology.hosts=0\"]\n";
    d.write("bad.toml", &bad);
    let r = sfc(d.path(), &["run", "bad.toml", "--out", "o"]);
    r.assert_error(&["bad.toml [b]", "topology.hosts"]);
    assert!(
        !d.path().join("o/a").exists(),
        "variant a ran before b's error"
    );
}

#[test]
fn class6_timers_below_the_rtt_are_errors() {
    // IRN's RTO_low of 1 ps used to warn and then run forever.
    let t = tiny_with(
        "seed = 7",
        "\n[loss_recovery]\nkind = \"irn\"\nrto_low = \"1ps\"",
    );
    assert_invalid(
        &t,
        &["loss_recovery.rto_low", "1ps is shorter than the base RTT"],
    );
    let t = tiny_with(
        "seed = 7",
        "\n[loss_recovery]\nkind = \"irn\"\nrto_low = \"5ms\"\nrto_high = \"3ms\"",
    );
    assert_invalid(&t, &["loss_recovery.rto_low", "exceeds rto_high"]);
    let t = tiny_with(
        "seed = 7",
        "\n[cc]\nkind = \"none\"\n\n[ndp]\nenabled = true\nrto = \"1ps\"",
    );
    assert_invalid(&t, &["ndp.rto", "shorter than the base RTT"]);
    let t = tiny_with("seed = 7", "\n[bfc]\nenabled = true\ntau = \"1ps\"");
    assert_invalid(&t, &["bfc.tau", "1ps is below the shortest accepted"]);
}

#[test]
fn class6_a_deliberate_stop_with_unfinished_flows_says_so() {
    let d = TempDir::new("rel-stopnote");
    d.write(
        "s.toml",
        &TINY.replacen("seed = 7", "seed = 7\nstop = \"3us\"", 1),
    );
    let r = sfc(d.path(), &["run", "s.toml", "--no-output"]);
    assert_eq!(r.status.and_then(|s| s.code()), Some(0), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("note: the run stopped at `stop` = 3.00us with 0 of 3 flows completed"),
        "{}",
        r.stderr
    );
}

#[test]
fn class5_memory_limits_of_the_process_are_respected() {
    // Under `ulimit -v` (2 GB) a workload that fits the machine but not the limit is refused
    // with the estimate instead of aborting on an allocation: ≈ 30 M flows at ≈ 170 B each
    // with OnRamp, whose host half keeps every flow (the list path).
    let d = TempDir::new("rel-ulimit");
    let t = TINY.replace(
        "[[traffic]]\nkind = \"incast\"",
        "[[traffic]]\nkind = \"poisson\"\ncdf = \"websearch\"\nload = 1.0\nduration = \"1000s\"\n\n[[traffic]]\nkind = \"incast\"",
    );
    d.write("s.toml", &format!("{t}\n[onramp]\nenabled = true\n"));
    d.write("streamed.toml", &t);
    let validate = |file: &str| {
        let mut cmd = Command::new("sh");
        cmd.args([
            "-c",
            &format!("ulimit -v 2000000 && exec {SFC} validate {file}"),
        ])
        .current_dir(d.path());
        run_with_timeout(cmd, Duration::from_secs(60))
    };
    validate("s.toml").assert_error(&["memory", "available"]);
    // Without OnRamp the run streams its flows and its results: the flows cost no memory past
    // their completion, and the same 30 M flows fit the limit.
    let r = validate("streamed.toml");
    assert!(
        r.stdout.contains("29216971 flows"),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
    // A network whose ports alone exceed the limit (a 1,500 × 1,500 leaf–spine: 4.5 M ports,
    // ≈ 2.9 GB) is refused at once, before its routes are computed (about a minute).
    d.write(
        "big.toml",
        "[topology]\nkind = \"leaf_spine\"\nspines = 1500\ntors = 1500\nhosts_per_tor = 1\n\
         [[traffic]]\nkind = \"incast\"\nsenders = [0, 1]\nreceivers = [2]\nsize = \"1KB\"\nat = \"1us\"\n",
    );
    let t0 = std::time::Instant::now();
    validate("big.toml").assert_error(&[
        "big.toml",
        "4503000 ports",
        "forwarding table",
        "available",
    ]);
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
}

#[test]
fn class2_ecn_and_buffer_keys_that_cannot_act() {
    // `pmax` alone used to give Kmin = Kmax = 0: every packet marked.
    let t = tiny_with("seed = 7", "\n[ecn]\npmax = 0.5");
    assert_invalid(&t, &["ecn.pmax", "needs `ecn.kmin`"]);
    // Thresholds with marking off, and the Dynamic Threshold α of a lossless buffer: warnings.
    let d = TempDir::new("rel-ecnoff");
    d.write(
        "s.toml",
        &tiny_with("seed = 7", "\n[ecn]\nenabled = false\nkmin = \"10KB\""),
    );
    let r = sfc(d.path(), &["validate", "s.toml"]);
    assert!(
        r.stderr.contains("`ecn.kmin`: has no effect"),
        "{}",
        r.stderr
    );
    d.write(
        "l.toml",
        &tiny_with(
            "seed = 7",
            "\n[buffer]\nmode = \"lossless\"\ndt_alpha = 0.5",
        ),
    );
    let r = sfc(d.path(), &["validate", "l.toml"]);
    assert!(
        r.stderr.contains("`buffer.dt_alpha`: has no effect"),
        "{}",
        r.stderr
    );
    // File-format keys on a built-in CDF: a warning, once.
    let t = TINY.replace(
        "[[traffic]]\nkind = \"incast\"",
        "[[traffic]]\nkind = \"poisson\"\ncdf = \"websearch\"\ncdf_format = \"homa\"\nload = 0.3\nduration = \"10us\"\n\n[[traffic]]\nkind = \"incast\"",
    );
    d.write("c.toml", &t);
    let r = sfc(d.path(), &["validate", "c.toml"]);
    assert_eq!(
        r.stderr
            .matches("`traffic[0].cdf_format`: has no effect: `websearch` is a built-in CDF")
            .count(),
        1,
        "{}",
        r.stderr
    );
}

// ---------------------------------------------------------------------------------------------
// HPCC mode and output writing.
// ---------------------------------------------------------------------------------------------

/// A small HPCC-sim config: 2-host star, two small flows, HPCC. Extra lines start at line 8.
const HPCC_BASE: &str = "TOPOLOGY_FILE topo.txt\nFLOW_FILE flow.txt\nFCT_OUTPUT_FILE fct.txt\nCC_MODE 3\nSIMULATOR_STOP_TIME 0.01\nRP_TIMER 900\nEWMA_GAIN 0.00390625\n";

/// A temp dir holding the config's `topo.txt` (2 hosts, 1 switch) and `flow.txt` (2 flows).
fn hpcc_dir(tag: &str) -> TempDir {
    let d = TempDir::new(tag);
    d.write(
        "topo.txt",
        "3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000ns 0\n",
    );
    d.write(
        "flow.txt",
        "2\n0 1 3 100 10000 0.000001\n1 0 3 100 20000 0.000002\n",
    );
    d
}

/// Write `HPCC_BASE` + `extra` to `c.txt` in `d` and run `sfc hpcc c.txt` there.
fn hpcc_run(d: &TempDir, extra: &str) -> Run {
    d.write("c.txt", &format!("{HPCC_BASE}{extra}"));
    sfc(d.path(), &["hpcc", "c.txt"])
}

/// Make a FIFO at `p`.
#[cfg(unix)]
fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.to_str().expect("utf-8 path")).expect("no NUL");
    // SAFETY: `c` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// An output path that is a symbolic link is written through (the link stays, its target
/// gets the new content); a FIFO is written in place (it stays a FIFO and its reader receives
/// the FCT lines) — never replaced by a regular file.
#[cfg(unix)]
#[test]
fn hpcc16_d1_symlink_and_fifo_outputs_are_written_not_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let d = hpcc_dir("d1");
    // Symlink (to a file in another directory, holding a previous run's content).
    d.write("real/target.txt", "old content\n");
    std::os::unix::fs::symlink("real/target.txt", d.join("fct.txt")).unwrap();
    hpcc_run(&d, "").assert_ok();
    let meta = std::fs::symlink_metadata(d.join("fct.txt")).unwrap();
    assert!(meta.file_type().is_symlink(), "the link was replaced");
    let text = d.read("real/target.txt");
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(!text.contains("old content"));

    // FIFO with a reader.
    let fifo = d.join("pipe");
    mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(&fifo).unwrap_or_default())
    };
    let r = hpcc_run(&d, "FCT_OUTPUT_FILE pipe\n");
    // Unblock the reader if sfc never opened the FIFO (then the test fails below, not hangs).
    {
        use std::os::unix::fs::OpenOptionsExt;
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo);
    }
    let got = reader.join().unwrap();
    r.assert_ok();
    assert_eq!(got.lines().count(), 2, "FIFO reader got: {got:?}");
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo(),
        "the FIFO was replaced"
    );
}

/// `sfc hpcc c.txt | head -1` — stdout closed before the first line — still writes
/// fct.txt and exits 0 (not 141, SIGPIPE).
#[test]
fn hpcc16_d2_closed_stdout_does_not_stop_the_run() {
    let d = hpcc_dir("d2");
    d.write("c.txt", HPCC_BASE);
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let mut child = Command::new(SFC)
        .args(["hpcc", "c.txt"])
        .current_dir(d.path())
        .stdin(std::process::Stdio::null())
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        assert!(std::time::Instant::now() < deadline, "sfc hung");
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(0), "status {status:?}, stderr:\n{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(d.read("fct.txt").lines().count(), 2);
}

/// Two output keys naming one file — the same name, `./name`, an absolute path, or a
/// symbolic link to it — are refused before the run, naming both keys and both lines.
#[test]
fn hpcc16_d3_two_outputs_naming_one_file_are_refused() {
    let d = hpcc_dir("d3");
    let abs = d.join("fct.txt").display().to_string();
    #[cfg(unix)]
    std::os::unix::fs::symlink("fct.txt", d.join("alias.txt")).unwrap();
    let mut cases = vec![
        "SUMMARY_FILE fct.txt\n".to_string(),
        "SUMMARY_FILE ./fct.txt\n".to_string(),
        format!("BUFFER_MON_FILE {abs}\n"),
    ];
    #[cfg(unix)]
    cases.push("PFC_OUTPUT_FILE alias.txt\n".to_string());
    for extra in &cases {
        let r = hpcc_run(&d, extra);
        let key = extra.split(' ').next().unwrap();
        r.assert_error(&[
            "c.txt:8",
            key,
            "names the same file as FCT_OUTPUT_FILE (c.txt:3)",
        ]);
        assert!(!d.join("fct.txt").exists(), "{extra}: ran anyway");
    }
    // Distinct files are fine.
    hpcc_run(&d, "SUMMARY_FILE s.json\n").assert_ok();
}

/// A memory refusal in HPCC mode names the config line of SIMULATOR_STOP_TIME and gives
/// advice in config keys, not scenario keys.
#[test]
fn hpcc16_d11_memory_refusal_names_the_stop_time_line() {
    let d = hpcc_dir("d11");
    // Two 1 PB flows keep the fabric busy for ~8·10⁴ s of the 10⁶ s: billions of samples.
    // (A long stop time alone costs nothing: idle stretches are not stored.)
    d.write(
        "flow.txt",
        "2\n0 1 3 100 1000000000000000 0.000001\n1 0 3 100 1000000000000000 0.000002\n",
    );
    let r = hpcc_run(&d, "SIMULATOR_STOP_TIME 1e6\n");
    r.assert_error(&[
        "c.txt:8",
        "SIMULATOR_STOP_TIME 1e6",
        "of memory",
        "an earlier SIMULATOR_STOP_TIME",
    ]);
    assert!(!r.stderr.contains("output.buffer_interval"), "{}", r.show());
    assert!(!r.stderr.contains("`stop`"), "{}", r.show());
}

/// Retransmission timeouts are checked against the base RTT as in TOML scenarios: a
/// go-back-N timeout below it is an error; IRN's low timeout below it a warning.
#[test]
fn hpcc16_d12_timeouts_below_the_base_rtt() {
    let d = hpcc_dir("d12");
    hpcc_run(&d, "GBN_RTO_US 0.001\n").assert_error(&[
        "c.txt:8",
        "GBN_RTO_US 0.001",
        "shorter than the base RTT",
    ]);
    // IRN's RTO_low below the RTT: an error too (it would fire before any ACK, forever).
    hpcc_run(&d, "IRN_RTO_LOW_US 0.001\nLOSS_RECOVERY irn\n").assert_error(&[
        "c.txt:8",
        "`IRN_RTO_LOW_US 0.001`",
        "shorter than the base RTT",
    ]);
    hpcc_run(&d, "LOSS_RECOVERY irn\nIRN_RTO_HIGH_US 0.001\n").assert_error(&[
        "c.txt:9",
        "IRN_RTO_HIGH_US",
        "shorter than the base RTT",
    ]);
}

/// Every config problem is reported, in file order, each with its line — not only one.
#[test]
fn hpcc16_d13_every_config_problem_is_reported_in_file_order() {
    let d = hpcc_dir("d13");
    let in_order = |r: &Run, needles: &[&str]| {
        r.assert_error(&[]);
        let mut at = 0;
        for n in needles {
            let i = r.stderr[at..]
                .find(n)
                .unwrap_or_else(|| panic!("`{n}` missing or out of order:\n{}", r.show()));
            at += i + n.len();
        }
    };
    let r = hpcc_run(
        &d,
        "ENABLE_TRACE 1\nL2_BACK_TO_ZERO 1\nRATE_BOUND 0\nGLOBAL_T 0\n",
    );
    in_order(
        &r,
        &[
            "c.txt:8: `ENABLE_TRACE 1`",
            "c.txt:9: `L2_BACK_TO_ZERO 1`",
            "c.txt:10: `RATE_BOUND 0`",
            "c.txt:11: `GLOBAL_T 0`",
        ],
    );
    let r = hpcc_run(
        &d,
        "BUFFER_SIZE abc\nU_TARGET 2\nPACKET_PAYLOAD_SIZE 0\nSEED\nFRAMING hpcc ethernet\n",
    );
    in_order(
        &r,
        &[
            "c.txt:8: `BUFFER_SIZE abc`",
            "c.txt:9: `U_TARGET 2`",
            "c.txt:10: `PACKET_PAYLOAD_SIZE 0`",
            "c.txt:11: `SEED` has no value",
            "c.txt:12: `FRAMING hpcc ethernet`: takes one value",
        ],
    );
    assert_eq!(r.stderr.matches("error:").count(), 5, "{}", r.show());
}

/// Keys the chosen settings never read warn "has no effect" (the run goes on, as a TOML
/// scenario's scheme keys while the scheme is off); malformed ECN maps are errors even when
/// the map is unused.
#[test]
fn hpcc16_d17_keys_without_effect_warn_and_malformed_maps_fail() {
    let d = hpcc_dir("d17");
    for (extra, key) in [
        ("PFC_EXPIRY 1\nBUFFER_MODE lossy\n", "PFC_EXPIRY"),
        ("SFC_QTH_BYTES 100000\n", "SFC_QTH_BYTES"),
        ("ONRAMP_GAIN 2\n", "ONRAMP_GAIN"),
        ("IRN_RTO_LOW_US 50\n", "IRN_RTO_LOW_US"),
        ("LOSS_RECOVERY irn\nGBN_RTO_US 5000\n", "GBN_RTO_US"),
        ("DT_ALPHA 0.5\n", "DT_ALPHA"),
        ("KMIN_MAP 1 100000000000 400\n", "KMIN_MAP"),
    ] {
        let r = hpcc_run(&d, extra);
        r.assert_ok();
        let w = r
            .stderr
            .lines()
            .find(|l| l.contains(&format!("`{key} ")))
            .unwrap_or_else(|| panic!("{extra}: no warning for {key}:\n{}", r.show()));
        assert!(
            w.starts_with("warning: c.txt:") && w.contains("has no effect"),
            "{w}"
        );
    }
    hpcc_run(&d, "KMIN_MAP 2 100000000000 400\n").assert_error(&[
        "c.txt:8",
        "KMIN_MAP",
        "declares 2 rate/value pairs",
    ]);
    hpcc_run(
        &d,
        "KMIN_MAP 1 100000000000 400 999 999\nKMAX_MAP 1 100000000000 1600\nPMAX_MAP 1 100000000000 0.2\n",
    )
    .assert_error(&["c.txt:8", "KMIN_MAP", "has 4 values after the count"]);
    hpcc_run(
        &d,
        "KMIN_MAP 1 100000000000 400\nKMAX_MAP 1 100000000000 1600\nPMAX_MAP 1 100000000000 2\n",
    )
    .assert_error(&["c.txt:10", "PMAX_MAP", "at most 1"]);
}

/// SIMULATOR_STOP_TIME above the 1e7 s limit of every duration is an error (never "no
/// stop"); BUFFER_SIZE above the 1 PB cap of every size is an error.
#[test]
fn hpcc16_d18_stop_time_and_buffer_size_limits() {
    let d = hpcc_dir("d18");
    for v in ["1e30", "2e7"] {
        hpcc_run(&d, &format!("SIMULATOR_STOP_TIME {v}\n")).assert_error(&[
            "c.txt:8",
            "SIMULATOR_STOP_TIME",
            "out of range",
            "1e7 s",
        ]);
    }
    hpcc_run(&d, "BUFFER_SIZE 1e30\n").assert_error(&["c.txt:8", "BUFFER_SIZE", "out of range"]);
}

/// An interrupted `sfc hpcc` leaves no stale outputs of a previous run beside its own
/// (those the config names are removed before the run), and its message does not mention a
/// `summary.json` this mode does not write.
#[cfg(unix)]
#[test]
fn hpcc16_d20_interrupted_run_leaves_no_stale_outputs() {
    use std::io::BufRead;
    let d = hpcc_dir("d20");
    // One 40 GB flow: seconds of wall time.
    d.write("big.txt", "1\n0 1 3 100 40000000000 0.000001\n");
    d.write("fct.txt", "stale fct\n");
    d.write("bm.txt", "stale buffer monitor\n");
    d.write("s.json", "{\"stale\": true}\n");
    d.write(
        "c.txt",
        &format!(
            "{HPCC_BASE}FLOW_FILE big.txt\nSIMULATOR_STOP_TIME 10\nBUFFER_MON_FILE bm.txt\nSUMMARY_FILE s.json\n"
        ),
    );
    let mut child = Command::new(SFC)
        .args(["hpcc", "c.txt"])
        .current_dir(d.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    // "maxRtt=…", then "Running Simulation." once the stale outputs are gone.
    while out.read_line(&mut line).unwrap_or(0) > 0 && !line.contains("Running Simulation") {}
    assert!(line.contains("Running Simulation"), "{line}");
    // SAFETY: signalling our own child by its pid.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(!err.contains("summary.json"), "{err}");
    for f in ["fct.txt", "bm.txt", "s.json"] {
        assert!(
            !d.join(f).exists(),
            "stale {f} left beside the interrupted run"
        );
    }
}

#[test]
fn class3_trace_refuses_bad_rates_empty_traces_and_its_own_inputs() {
    let d = TempDir::new("rel-trace");
    d.write(
        "topo.txt",
        "3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000ns 0\n",
    );
    // --out naming the topology input: refused, the topology intact.
    let r = sfc(
        d.path(),
        &["trace", "--topology", "topo.txt", "--out", "./topo.txt"],
    );
    r.assert_error(&["--out ./topo.txt", "is the input file"]);
    assert!(d.read("topo.txt").starts_with("3 1 2\n"));
    let r = sfc(
        d.path(),
        &["trace", "--hosts", "4", "--bw", "1bps", "--out", "f.txt"],
    );
    r.assert_error(&["--bw", "below the slowest accepted link"]);
    // 2 hosts, 1 ns of arrivals: no flow at all — an error, not an empty file with exit 0.
    let r = sfc(
        d.path(),
        &["trace", "--hosts", "2", "--time", "1ns", "--out", "f.txt"],
    );
    r.assert_error(&["no flows generated"]);
    assert!(!d.path().join("f.txt").exists());
    // Options that would be ignored are refused: --hosts beside --topology, incast options
    // without --incast-degree.
    let r = sfc(
        d.path(),
        &[
            "trace",
            "--topology",
            "topo.txt",
            "--hosts",
            "4",
            "--out",
            "f.txt",
        ],
    );
    r.assert_error(&["--hosts", "--topology"]);
    for opt in [
        ["--incast-size", "1MB"],
        ["--incast-load", "0.1"],
        ["--sync-window", "5us"],
    ] {
        let r = sfc(
            d.path(),
            &["trace", "--hosts", "4", opt[0], opt[1], "--out", "f.txt"],
        );
        r.assert_error(&[opt[0], "--incast-degree"]);
    }
    assert!(!d.path().join("f.txt").exists());
}

#[test]
fn class6_controller_settings_that_contradict_each_other() {
    let t = tiny_with(
        "seed = 7",
        "\n[cc]\nkind = \"timely\"\nt_low = \"500us\"\nt_high = \"50us\"",
    );
    assert_invalid(&t, &["cc.t_low", "must be below t_high"]);
    let t = tiny_with(
        "seed = 7",
        "\n[cc]\nkind = \"dcqcn\"\nmin_rate = \"400Gbps\"",
    );
    assert_invalid(&t, &["cc.min_rate", "above the host link rate 100Gbps"]);
    let t = tiny_with("seed = 7", "\n[cc]\nkind = \"none\"\nwindow = \"1e30bdp\"");
    assert_invalid(&t, &["cc.window", "BDP multiple must be in (0, 1e6]"]);
    // A CDF file with a size beyond any accepted message.
    let d = TempDir::new("rel-cdfbig");
    d.write("big.txt", "100 0\n1e16 100\n");
    let t = TINY.replace(
        "[[traffic]]\nkind = \"incast\"",
        "[[traffic]]\nkind = \"poisson\"\ncdf = \"big.txt\"\nload = 0.3\nduration = \"10us\"\n\n[[traffic]]\nkind = \"incast\"",
    );
    d.write("s.toml", &t);
    let r = sfc(d.path(), &["validate", "s.toml"]);
    r.assert_error(&["big.txt:2", "above the largest accepted message"]);
}

#[test]
fn class7_every_problem_of_a_traffic_generator_is_listed() {
    // Three independent mistakes in one generator: all three in one `validate`.
    let t = TINY.replace(
        "[[traffic]]\nkind = \"incast\"",
        "[[traffic]]\nkind = \"poisson\"\ncdf = \"nosuch.txt\"\nload = 2.0\nduration = \"5 parsecs\"\n\n[[traffic]]\nkind = \"incast\"",
    );
    assert_invalid(
        &t,
        &[
            "traffic[0].duration",
            "traffic[0].load",
            ":12: `traffic[0].cdf` = \"nosuch.txt\"",
        ],
    );
}

#[test]
fn class7_every_topology_and_queue_list_problem_is_listed() {
    // Two bad link values and three missing shape keys: all in one `validate`.
    let t = TINY
        .replace("kind = \"star\"\nhosts = 4", "kind = \"leaf_spine\"")
        .replace("host_rate = \"100Gbps\"", "host_rate = \"1e30Gbps\"")
        .replace("host_delay = \"1us\"", "host_delay = \"-1us\"");
    assert_invalid(
        &t,
        &[
            "`topology.host_rate`",
            "`topology.host_delay`",
            "`topology.spines`, `topology.tors`, `topology.hosts_per_tor`",
        ],
    );
    // Every bad `output.queues` entry, not only the first (node 4 is the star's switch).
    let t = tiny_with(
        "seed = 7",
        "\n[output]\nqueues = [[4, 1], [999, 0], \"x\", [4, 99]]",
    );
    assert_invalid(
        &t,
        &[
            "`output.queues[1]`: node 999 is not a switch",
            "`output.queues[2]`: must be [switch_node, port]",
            "`output.queues[3]`: switch 4 has ports 0..4, not 99",
        ],
    );
}

#[test]
fn class2_var_win_without_a_window_is_an_error() {
    // DCQCN has no window: `var_win` alone would be ignored.
    let t = tiny_with("seed = 7", "\n[cc]\nkind = \"dcqcn\"\nvar_win = false");
    assert_invalid(
        &t,
        &["s.toml:6", "`cc.var_win`", "has no effect without a window"],
    );
    let t = tiny_with(
        "seed = 7",
        "\n[cc]\nkind = \"dcqcn+w\"\nwindow = \"none\"\nvar_win = true",
    );
    assert_invalid(&t, &["`cc.var_win`", "has no effect without a window"]);
    // With a windowed kind it applies (no error), alone or with a window.
    for extra in [
        "\n[cc]\nkind = \"dcqcn+w\"\nvar_win = false",
        "\n[cc]\nkind = \"timely\"\nwindow = \"bdp\"\nvar_win = false",
    ] {
        let d = TempDir::new("rel-vwin");
        d.write("s.toml", &tiny_with("seed = 7", extra));
        let r = sfc(d.path(), &["validate", "s.toml"]);
        assert_eq!(
            r.status.and_then(|s| s.code()),
            Some(0),
            "{extra}: {}",
            r.stderr
        );
    }
}

#[test]
fn class3_dangling_symlink_out_names_the_missing_target() {
    let d = TempDir::new("rel-dangle");
    d.write("s.toml", TINY);
    std::os::unix::fs::symlink("nowhere/out", d.join("o")).unwrap();
    let r = sfc(d.path(), &["run", "s.toml", "--out", "o"]);
    r.assert_error(&["is a symbolic link to nowhere/out, which does not exist"]);
}

/// Class 8: docs/src/scenarios.md documents every `summary.json` key — top-level keys, the keys
/// of every section and of their list entries — for a run of every scheme.
#[test]
fn class8_every_summary_key_is_documented() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let docs = std::fs::read_to_string(root.join("docs/src/scenarios.md")).unwrap();
    let start = docs
        .find("### `summary.json` keys")
        .expect("summary key section");
    let section = &docs[start..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let documented = |k: &str| {
        section.match_indices(k).any(|(i, _)| {
            let before = section[..i].chars().next_back().unwrap_or(' ');
            let after = section[i + k.len()..].chars().next().unwrap_or(' ');
            let word = |c: char| c.is_alphanumeric() || c == '_';
            !word(before) && !word(after)
        })
    };
    fn keys(v: &serde_json::Value, depth: usize, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    out.push(k.clone());
                    if depth < 3 && k != "scenario" {
                        keys(x, depth + 1, out);
                    }
                }
            }
            serde_json::Value::Array(a) => {
                for x in a.iter().take(2) {
                    keys(x, depth, out);
                }
            }
            _ => {}
        }
    }
    let scen = root.join("scenarios/incast_star.toml");
    let runs: &[&[&str]] = &[
        &[],
        &["sfc.mode=\"sfc\""],
        &["sfc.mode=\"sfc\"", "sfc.trigger_stats=true"],
        &["onramp.enabled=true"],
        &["buffer.mode=\"lossless\""],
        &["pbfs.enabled=true"],
        &["ndp.enabled=true"],
        &["bfc.enabled=true"],
        &["cbfc.enabled=true", "buffer.mode=\"lossless\""],
        &[
            "tcd.enabled=true",
            "buffer.mode=\"lossless\"",
            "cc.kind=\"dcqcn\"",
            "cc.window=\"none\"",
        ],
    ];
    let mut missing = std::collections::BTreeSet::new();
    for sets in runs {
        let mut args = vec!["run", scen.to_str().unwrap(), "--json", "--no-output"];
        for s in *sets {
            args.extend(["--set", s]);
        }
        let r = sfc(root, &args);
        assert_eq!(
            r.status.and_then(|s| s.code()),
            Some(0),
            "{sets:?}: {}",
            r.stderr
        );
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        let mut ks = Vec::new();
        keys(&v, 0, &mut ks);
        for k in ks {
            if !documented(&k) {
                missing.insert(k);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "undocumented summary.json keys: {missing:?}"
    );
}

/// The summary of `sfc run` on scenario `text` (`--no-output --json`).
fn run_json(text: &str) -> serde_json::Value {
    let d = TempDir::new("rel-json");
    d.write("s.toml", text);
    let r = sfc(d.path(), &["run", "s.toml", "--no-output", "--json"]);
    assert_eq!(r.status.and_then(|s| s.code()), Some(0), "{}", r.stderr);
    serde_json::from_str(&r.stdout).expect("summary JSON")
}

/// A star of `hosts` at 100 G (1 µs links), unlimited buffer (nothing is ever lost), no CC,
/// IRN with the `[loss_recovery]` lines `irn_extra`; traffic is appended by the caller.
fn irn_star(hosts: u32, irn_extra: &str) -> String {
    format!(
        "name = \"irn\"\nseed = 1\n[topology]\nkind = \"star\"\nhosts = {hosts}\n\
         host_rate = \"100Gbps\"\nhost_delay = \"1us\"\n[buffer]\nmode = \"unlimited\"\n\
         [cc]\nkind = \"none\"\nwindow = \"none\"\n[loss_recovery]\nkind = \"irn\"\n{irn_extra}"
    )
}

/// IRN's retransmission timer (`specs/irn.md` §3.4: RTO_low while at most 3 packets are in
/// flight, RTO_high otherwise; restarted on ACK/NACK while data is outstanding). Star of 18
/// hosts at 100 G, unlimited buffer (nothing can be lost), no CC: 16 × 2 MB into host 0 from
/// 10 µs leave their NICs in 160 µs, so at 300 µs host 0's port holds ≈ 32 MB − 290 µs ×
/// 12.5 GB/s ≈ 28 MB. A 20 KB flow starting then sends its 20 packets at once and waits
/// ≈ 2.3 ms for its first ACK: more than RTO_low (100 µs), less than RTO_high (3 ms). With 20
/// packets in flight RTO_high applies: no timeout, no retransmission. (The timer used to take
/// RTO_low at the first packet and keep it: 1 timeout and 20 retransmissions of data that
/// was never lost.)
#[test]
fn irn_timer_uses_rto_high_with_more_than_three_packets_in_flight() {
    let text = irn_star(18, "bdp_cap = \"10MB\"")
        + r#"
[[traffic]]
kind = "incast"
senders = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
receivers = [0]
size = "2MB"
at = "10us"
[[traffic]]
kind = "incast"
senders = [17]
receivers = [0]
size = "20KB"
at = "300us"
"#;
    let s = run_json(&text);
    assert_eq!(s["drops"], 0);
    assert_eq!(s["counters"]["timeouts"], 0, "{}", s["counters"]);
    assert_eq!(s["counters"]["retx_packets"], 0, "{}", s["counters"]);
    // The 20 KB flow did wait longer than RTO_low: its FCT is above 2 ms.
    let small = s["bins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["lo_bytes"].as_u64() <= Some(20_000) && b["hi_bytes"].as_u64() >= Some(20_000))
        .expect("a bin holds the 20 KB flow");
    assert!(
        small["fct_us"]["max"].as_f64().unwrap() > 2_000.0,
        "{small}"
    );
}

/// A flow with nothing outstanding has no running timer: one 200 KB flow on a 2-host star,
/// unlimited buffer, paused again and again by OnRamp (threshold 1 ns, gain 100 — each pause
/// far longer than RTO_low) after its data in flight was acknowledged. Nothing is lost, so a
/// correct timer never fires. (It used to keep running from the last ACK: 6 timeouts.)
#[test]
fn irn_timer_stops_when_nothing_is_outstanding() {
    let text = irn_star(2, "")
        + r#"
[onramp]
enabled = true
threshold = "1ns"
gain = 100.0
[[traffic]]
kind = "incast"
senders = [1]
receivers = [0]
size = "200KB"
at = "10us"
"#;
    let s = run_json(&text);
    assert_eq!(s["drops"], 0);
    assert!(
        s["onramp"]["pauses"].as_u64().unwrap() > 0,
        "{}",
        s["onramp"]
    );
    assert_eq!(s["counters"]["timeouts"], 0, "{}", s["counters"]);
    assert_eq!(s["counters"]["retx_packets"], 0);
}
