//! Input checks driven through the `sfc` binary: errors in a value given by `--set` or a
//! `[[compare]]` `set` cite that override (also for `buffer.switch_sizes` entries and elements
//! of lists); a bad `bfc.mode` is one error; `sfc.bloom_bits` has an upper bound; experiment
//! files are checked whole, every point, by `sfc experiment validate` and before a sweep runs.

mod common;

use common::{Run, TempDir, run_with_timeout};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const SFC: &str = env!("CARGO_BIN_EXE_sfc");

fn sfc(cwd: &Path, args: &[&str]) -> Run {
    let mut cmd = Command::new(SFC);
    cmd.args(args).current_dir(cwd);
    run_with_timeout(cmd, Duration::from_secs(60))
}

/// The `error:` lines of a run's stderr.
fn error_lines(r: &Run) -> Vec<&str> {
    r.stderr
        .lines()
        .filter(|l| l.starts_with("error:"))
        .collect()
}

/// A 4-host star (switch = node 4) with a per-switch buffer for the switch on line 7 and a
/// 2:1 incast.
const STAR: &str = r#"name = "s"
[topology]
kind = "star"
hosts = 4
[buffer]
size = "1MB"
switch_sizes = { 4 = "2MB" }
[[traffic]]
kind = "incast"
senders = [1, 2]
receivers = [0]
size = "10KB"
at = "1us"
"#;

/// An error about a `buffer.switch_sizes` entry cites where that entry came from: the `--set`
/// or `[[compare]]` `set` that gave it, the file's line for the file's own entries.
#[test]
fn switch_sizes_errors_cite_the_override_that_gave_the_entry() {
    let d = TempDir::new("inp-switch-sizes");
    d.write("s.toml", STAR);
    // A switch that does not exist, given by a --set while the file has the table.
    let r = sfc(
        d.path(),
        &["validate", "s.toml", "--set", "buffer.switch_sizes.9=2MB"],
    );
    r.assert_error(&[
        "s.toml: --set `buffer.switch_sizes.9=2MB`: `buffer.switch_sizes`: per-switch buffer: node 9 does not exist",
    ]);
    assert!(!r.stderr.contains("s.toml:7"), "{}", r.show());
    // A size too small for the file's switch, overridden by a --set.
    let r = sfc(
        d.path(),
        &["validate", "s.toml", "--set", "buffer.switch_sizes.4=1"],
    );
    r.assert_error(&[
        "s.toml: --set `buffer.switch_sizes.4=1`: `buffer.switch_sizes`: switch 4: 1 B is smaller than two packets",
    ]);
    // The file's own bad entry keeps its line while an override adds another bad entry.
    d.write(
        "t.toml",
        &STAR.replace(
            "switch_sizes = { 4 = \"2MB\" }",
            "switch_sizes = { 4 = \"1\" }",
        ),
    );
    let r = sfc(
        d.path(),
        &["validate", "t.toml", "--set", "buffer.switch_sizes.3=2MB"],
    );
    r.assert_error(&[
        "t.toml: --set `buffer.switch_sizes.3=2MB`: `buffer.switch_sizes`: per-switch buffer: node 3 is a host",
        "t.toml:7: `buffer.switch_sizes`: switch 4: 1 B is smaller than two packets",
    ]);
    // The lossless carve-out of an entry given by a [[compare]] set cites that set.
    d.write(
        "c.toml",
        &format!(
            "{STAR}[[compare]]\nname = \"small\"\nset = [\"buffer.mode=lossless\", \"buffer.switch_sizes.4=5KB\"]\n\
             [[compare]]\nname = \"tiny\"\nset = [\"buffer.switch_sizes.4=1\"]\n"
        ),
    );
    let r = sfc(d.path(), &["validate", "c.toml"]);
    r.assert_error(&[
        "c.toml [small]: --set `buffer.switch_sizes.4=5KB`: `buffer.switch_sizes`: 5000 B at switch 4 is smaller than its lossless carve-out",
        "c.toml [tiny]: --set `buffer.switch_sizes.4=1`: `buffer.switch_sizes`: switch 4: 1 B",
    ]);
    assert!(!r.stderr.contains("c.toml [small]:7"), "{}", r.show());
    assert!(!r.stderr.contains("c.toml [tiny]:7"), "{}", r.show());
}

/// An element of a list in the file, changed by a `--set` of that element, cites the `--set`.
#[test]
fn list_element_overrides_cite_the_set() {
    let d = TempDir::new("inp-list-element");
    d.write(
        "s.toml",
        &STAR.replace("[[traffic]]", "[output]\nqueues = [[4, 0]]\n[[traffic]]"),
    );
    let r = sfc(
        d.path(),
        &["validate", "s.toml", "--set", "traffic.0.senders.1=9"],
    );
    r.assert_error(&["s.toml: --set `traffic.0.senders.1=9`: `traffic[0].senders` = [1, 9]"]);
    let r = sfc(
        d.path(),
        &["validate", "s.toml", "--set", "output.queues.0.0=9"],
    );
    r.assert_error(&["s.toml: --set `output.queues.0.0=9`: `output.queues[0]`"]);
    // The file's own error still cites its line.
    d.write(
        "t.toml",
        &STAR.replace("senders = [1, 2]", "senders = [1, 9]"),
    );
    let r = sfc(d.path(), &["validate", "t.toml"]);
    r.assert_error(&["t.toml:10: `traffic[0].senders` = [1, 9]"]);
}

/// A scheme table with a bad value is that one error: its own checks, which would judge a
/// half-read table, are skipped (a bad `bfc.mode` is not also a `network.queues_per_port`
/// error computed from the default `bfc.queues`).
#[test]
fn a_bad_bfc_mode_is_one_error() {
    let d = TempDir::new("inp-bfc-mode");
    d.write(
        "s.toml",
        &format!(
            "{STAR}[network]\nqueues_per_port = 11\n[bfc]\nenabled = true\nmode = \"foo\"\nqueues = 8\n"
        ),
    );
    let r = sfc(d.path(), &["validate", "s.toml"]);
    r.assert_error(&[
        "s.toml:18: `bfc.mode` = \"foo\": expected `bfc`, `vfid`, `sfq` or `ideal_fq`",
    ]);
    assert_eq!(error_lines(&r).len(), 1, "{}", r.show());
    // The same through overrides.
    let r = sfc(
        d.path(),
        &[
            "validate",
            "s.toml",
            "--set",
            "bfc.mode=bar",
            "--set",
            "network.queues_per_port=11",
        ],
    );
    r.assert_error(&["--set `bfc.mode=bar`: `bfc.mode` = \"bar\""]);
    assert_eq!(error_lines(&r).len(), 1, "{}", r.show());
    // Neither a check of the failed table's own nor one of another key that reads it: a bad
    // `[tcd]` value beside `cc.tcd` is that one error.
    d.write("t.toml", STAR);
    let r = sfc(
        d.path(),
        &[
            "validate",
            "t.toml",
            "--set",
            "tcd.enabled=true",
            "--set",
            "tcd.ce_marking=x",
            "--set",
            "cc.kind=dcqcn",
            "--set",
            "cc.tcd=true",
        ],
    );
    r.assert_error(&["--set `tcd.ce_marking=x`: `tcd.ce_marking` = \"x\""]);
    assert_eq!(error_lines(&r).len(), 1, "{}", r.show());
    // With a good mode the queue count is checked as before.
    let r = sfc(
        d.path(),
        &[
            "validate",
            "s.toml",
            "--set",
            "bfc.mode=sfq",
            "--set",
            "network.queues_per_port=12",
        ],
    );
    r.assert_error(&[
        "network.queues_per_port",
        "must be bfc.queues + 3 = 11 under BFC (got 12)",
    ]);
}

/// `sfc.bloom_bits` is bounded above (the filter is allocated at every SFC switch).
#[test]
fn sfc_bloom_bits_is_bounded() {
    let d = TempDir::new("inp-bloom");
    d.write("s.toml", &format!("{STAR}[sfc]\nmode = \"sfc\"\n"));
    let r = sfc(
        d.path(),
        &["validate", "s.toml", "--set", "sfc.bloom_bits=1048577"],
    );
    r.assert_error(&[
        "--set `sfc.bloom_bits=1048577`: `sfc.bloom_bits`: must be in 64..=1048576 (got 1048577)",
    ]);
    sfc(
        d.path(),
        &["validate", "s.toml", "--set", "sfc.bloom_bits=1048576"],
    )
    .assert_ok();
    sfc(
        d.path(),
        &["validate", "s.toml", "--set", "sfc.bloom_bits=63"],
    )
    .assert_error(&["`sfc.bloom_bits`: must be at least 64 (got 63)"]);
}

/// A small experiment: a star, one incast, an axis over the flow size and two series; the
/// `[scenario.buffer]` size is on line 14.
fn experiment(buffer_size: &str, sizes: &str, series_b: &str) -> String {
    format!(
        r#"[experiment]
name = "tiny"
title = "tiny"

[scenario]
name = "tiny"
seed = 1

[scenario.topology]
kind = "star"
hosts = 4

[scenario.buffer]
size = "{buffer_size}"

[[scenario.traffic]]
kind = "incast"
senders = [1, 2, 3]
receivers = [0]
size = "20KB"
at = "1us"

[sweep]
axes = [{{ key = "traffic.0.size", values = [{sizes}] }}]
series = [{{ name = "a", set = [] }}, {{ name = "b", set = [{series_b}] }}]

[quick]
axes = [{{ key = "traffic.0.size", values = ["10KB"] }}]
"#
    )
}

/// Experiment files are checked whole: `sfc experiment validate` resolves every point of the
/// sweep and of its `--quick` variant and lists every error (each once, an error of
/// `[scenario]` at the experiment file's line), and `sfc experiment run` refuses to start a
/// sweep any point of which does not check, listing the same errors.
#[test]
fn experiments_are_checked_whole_before_any_point_runs() {
    let d = TempDir::new("inp-exp-validate");
    d.write(
        "good.toml",
        &experiment("1MB", r#""20KB", "40KB""#, r#""buffer.size=2MB""#),
    );
    let r = sfc(d.path(), &["experiment", "validate", "good.toml"]);
    r.assert_ok();
    assert!(
        r.stdout
            .contains("good.toml: ok — 4 points, 2 points with --quick checked"),
        "{}",
        r.show()
    );
    // A bad axis value (one point), a bad series override (every point of the series) and a
    // bad value of the scenario itself (every point: listed once, at its line).
    d.write(
        "bad.toml",
        &experiment("1x", r#""20KB", "2MBx""#, r#""buffer.switch_sizes.9=1MB""#),
    );
    let r = sfc(d.path(), &["experiment", "validate", "bad.toml"]);
    r.assert_error(&[
        "bad.toml [a__size=20KB]:14: `buffer.size` = \"1x\"",
        "bad.toml [a__size=2MBx]: --set `traffic.0.size=\"2MBx\"`: `traffic[0].size` = \"2MBx\"",
        "bad.toml [b__size=20KB]: --set `buffer.switch_sizes.9=1MB`: `buffer.switch_sizes`: per-switch buffer: node 9 does not exist",
    ]);
    let errs = error_lines(&r);
    assert_eq!(
        errs.iter().filter(|l| l.contains("`buffer.size`")).count(),
        1,
        "{}",
        r.show()
    );
    assert_eq!(
        errs.iter().filter(|l| l.contains("node 9")).count(),
        1,
        "{}",
        r.show()
    );
    // --quick: only the quick points.
    d.write(
        "quick.toml",
        &experiment("1MB", r#""20KB""#, "").replace("10KB", "0B"),
    );
    let r = sfc(
        d.path(),
        &["experiment", "validate", "quick.toml", "--quick"],
    );
    r.assert_error(&["quick.toml [a__size=0B with --quick]", "traffic[0].size"]);
    // A sweep does not start: nothing is written, every error is listed.
    let r = sfc(
        d.path(),
        &["experiment", "run", "bad.toml", "--out", "o", "--jobs", "1"],
    );
    r.assert_error(&[
        "experiment `tiny`: nothing was run",
        "bad.toml [a__size=20KB]:14: `buffer.size`",
        "bad.toml [a__size=2MBx]: --set `traffic.0.size=\"2MBx\"`",
        "bad.toml [b__size=20KB]: --set `buffer.switch_sizes.9=1MB`",
    ]);
    assert!(
        !d.join("o").exists(),
        "a sweep that does not check wrote {}",
        r.show()
    );
}
