//! The `sfc` command line, driven through the binary: `run` on small scenario files (outputs,
//! determinism, `--set`), `validate` on good and bad files, `--help`. Every bad input must give
//! exit ≠ 0, a message naming the file and the line or key, and never a panic.

mod common;

use common::{Run, TempDir, run_with_timeout};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const SFC: &str = env!("CARGO_BIN_EXE_sfc");

/// Longest any single `sfc` invocation may take before the test declares it hung.
const TIMEOUT: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Run `sfc args…` in `cwd`, killing it after `timeout`.
fn sfc_timeout(cwd: &Path, args: &[&str], timeout: Duration) -> Run {
    let mut cmd = Command::new(SFC);
    cmd.args(args).current_dir(cwd);
    run_with_timeout(cmd, timeout)
}

fn sfc(cwd: &Path, args: &[&str]) -> Run {
    sfc_timeout(cwd, args, TIMEOUT)
}

/// A tiny 4-host star: Poisson FB_Hadoop background, one explicit 3:1 incast, one long-lived
/// pair. Runs in milliseconds.
const TINY: &str = r#"# tiny test scenario
name = "tiny"
seed = 7

[topology]
kind = "star"
hosts = 4
host_rate = "100Gbps"
host_delay = "1us"

[buffer]
mode = "lossy"
size = "4MiB"

[cc]
kind = "none"

[[traffic]]
kind = "poisson"
cdf = "fb_hadoop"
load = 0.3
duration = "50us"

[[traffic]]
kind = "incast"
senders = [0, 1, 2]
receivers = [3]
size = "20KB"
at = "10us"

[[traffic]]
kind = "long_lived"
pairs = [[0, 1]]
size = "100KB"
start = "5us"
"#;

/// `TINY` with `[topology]`'s hosts line followed by `extra` lines (for bad-key tests at a
/// known line: `extra` starts on line 8).
fn tiny_with_topology_line(extra: &str) -> String {
    TINY.replacen("hosts = 4\n", &format!("hosts = 4\n{extra}"), 1)
}

/// Run the tiny scenario into `<dir>/<out>` and return the run.
fn run_tiny(d: &TempDir, scenario: &str, out: &str, sets: &[&str]) -> Run {
    let file = d.write("tiny.toml", scenario);
    let mut args = vec!["run", file.to_str().unwrap(), "--out", out];
    for s in sets {
        args.push("--set");
        args.push(s);
    }
    sfc(d.path(), &args)
}

/// Parse a CSV without quoting (what we write): header and rows of equal width.
fn parse_csv(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    assert!(text.ends_with('\n'), "CSV must end with a newline");
    assert!(!text.contains('"'), "unexpected quoting in CSV");
    assert!(!text.contains('\r'), "CSV must use \\n line endings");
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .expect("header")
        .split(',')
        .map(str::to_string)
        .collect();
    let rows: Vec<Vec<String>> = lines
        .map(|l| l.split(',').map(str::to_string).collect::<Vec<_>>())
        .collect();
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(
            r.len(),
            header.len(),
            "row {i} has {} fields, header {}",
            r.len(),
            header.len()
        );
    }
    (header, rows)
}

fn col(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("column `{name}` missing from {header:?}"))
}

fn summary(d: &TempDir, out: &str) -> serde_json::Value {
    serde_json::from_str(&d.read(&format!("{out}/summary.json"))).expect("summary.json is JSON")
}

// ---------------------------------------------------------------------------------------------
// sfc run: outputs
// ---------------------------------------------------------------------------------------------

#[test]
fn run_writes_all_outputs() {
    let d = TempDir::new("outputs");
    let r = run_tiny(&d, TINY, "out", &[]);
    r.assert_ok();
    assert!(
        r.stdout.contains("tiny"),
        "summary table names the run:\n{}",
        r.show()
    );

    // summary.json
    let s = summary(&d, "out");
    for k in [
        "flows_total",
        "flows_completed",
        "events",
        "packet_hops",
        "wall_seconds",
        "sim_time_ps",
        "drops",
        "peak_buffer_bytes",
    ] {
        assert!(
            s[k].is_number(),
            "summary `{k}` missing or not a number: {s}"
        );
    }
    let total = s["flows_total"].as_u64().unwrap();
    let completed = s["flows_completed"].as_u64().unwrap();
    assert!(
        total >= 5,
        "poisson + 3 incast + 1 long-lived flows: {total}"
    );
    assert_eq!(completed, total, "every flow completes (no stop time)");
    assert!(s["events"].as_u64().unwrap() > 0);
    assert!(s["packet_hops"].as_u64().unwrap() > 0);
    assert!(
        s["peak_buffer_bytes"].as_u64().unwrap() > 0,
        "the incast queues"
    );
    let p: Vec<f64> = ["p50", "p95", "p99", "p999"]
        .iter()
        .map(|k| {
            s["slowdown"][k]
                .as_f64()
                .unwrap_or_else(|| panic!("slowdown.{k}: {s}"))
        })
        .collect();
    assert!(p.windows(2).all(|w| w[0] <= w[1]), "{p:?}");

    // flows.csv: header + one row per flow, plain numbers.
    let (h, rows) = parse_csv(&d.read("out/flows.csv"));
    assert_eq!(rows.len() as u64, total);
    for name in [
        "id",
        "src",
        "dst",
        "sport",
        "dport",
        "size_bytes",
        "start_ns",
        "fct_ns",
        "ideal_fct_ns",
        "slowdown",
        "completed",
    ] {
        col(&h, name);
    }
    let mut ids: Vec<u64> = Vec::new();
    for r in &rows {
        for (name, v) in h.iter().zip(r) {
            assert!(
                v.parse::<f64>().is_ok_and(f64::is_finite),
                "flows.csv `{name}` = {v:?} is not a number"
            );
        }
        ids.push(r[col(&h, "id")].parse().unwrap());
        let src: u32 = r[col(&h, "src")].parse().unwrap();
        let dst: u32 = r[col(&h, "dst")].parse().unwrap();
        assert!(src < 4 && dst < 4 && src != dst, "hosts are 0..3: {r:?}");
        assert_eq!(r[col(&h, "completed")], "1");
        let fct: f64 = r[col(&h, "fct_ns")].parse().unwrap();
        let ideal: f64 = r[col(&h, "ideal_fct_ns")].parse().unwrap();
        let sd: f64 = r[col(&h, "slowdown")].parse().unwrap();
        assert!(fct > 0.0 && ideal > 0.0 && sd >= 1.0, "{r:?}");
    }
    ids.sort_unstable();
    assert_eq!(ids, (0..total).collect::<Vec<_>>(), "ids are 0..n");
    // The incast has dport 200, the rest 100.
    let dports: Vec<&str> = rows.iter().map(|r| r[col(&h, "dport")].as_str()).collect();
    assert_eq!(dports.iter().filter(|&&p| p == "200").count(), 3);

    // fct.txt: HPCC-sim format, one line per completed flow.
    let fct = d.read("out/fct.txt");
    assert_eq!(fct.lines().count() as u64, completed);
    for l in fct.lines() {
        let f: Vec<&str> = l.split(' ').collect();
        assert_eq!(f.len(), 8, "{l:?}");
        assert!(
            f[..2]
                .iter()
                .all(|x| x.len() == 8 && u32::from_str_radix(x, 16).is_ok())
        );
        assert!(f[2..].iter().all(|x| x.parse::<u64>().is_ok()), "{l:?}");
    }

    // buffer.csv: time_ns,switch,bytes with numbers; the switch of a 4-host star is node 4.
    let (h, rows) = parse_csv(&d.read("out/buffer.csv"));
    assert_eq!(h, ["time_ns", "switch", "bytes"]);
    assert!(!rows.is_empty());
    let mut peak = 0u64;
    for r in &rows {
        assert!(r[0].parse::<f64>().is_ok(), "{r:?}");
        assert_eq!(r[1], "4", "{r:?}");
        peak = peak.max(r[2].parse().unwrap());
    }
    assert_eq!(Some(peak), s["peak_buffer_bytes"].as_u64());
}

#[test]
fn run_json_flag_prints_the_summary() {
    let d = TempDir::new("json");
    let file = d.write("tiny.toml", TINY);
    let r = sfc(
        d.path(),
        &["run", file.to_str().unwrap(), "--no-output", "--json"],
    );
    r.assert_ok();
    let s: serde_json::Value = serde_json::from_str(&r.stdout).expect("stdout is JSON");
    assert_eq!(s["flows_total"], s["flows_completed"]);
    // --no-output writes nothing (not even the default out/<name>).
    let entries: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(entries, ["tiny.toml"], "--no-output wrote files");
}

#[test]
fn run_default_output_dir_is_out_name() {
    let d = TempDir::new("defout");
    let file = d.write("tiny.toml", TINY);
    sfc(d.path(), &["run", file.to_str().unwrap()]).assert_ok();
    for f in ["flows.csv", "summary.json", "fct.txt", "buffer.csv"] {
        assert!(d.join("out/tiny").join(f).exists(), "out/tiny/{f} missing");
    }
}

#[test]
fn run_flows_csv_can_be_disabled() {
    let d = TempDir::new("noflows");
    let r = run_tiny(
        &d,
        &format!("{TINY}\n[output]\nflows_csv = false\n"),
        "o",
        &[],
    );
    r.assert_ok();
    assert!(!d.join("o/flows.csv").exists());
    assert!(d.join("o/summary.json").exists());
}

#[test]
fn run_with_stop_time_leaves_unfinished_flows_empty() {
    // Unfinished flows: empty fct_ns / slowdown (NaN for pandas), completed = 0, and absent
    // from fct.txt.
    let d = TempDir::new("stop");
    let r = run_tiny(&d, &format!("stop = \"12us\"\n{TINY}"), "o", &[]);
    r.assert_ok();
    let s = summary(&d, "o");
    let total = s["flows_total"].as_u64().unwrap();
    let done = s["flows_completed"].as_u64().unwrap();
    assert!(done < total, "some flows must be cut off: {s}");
    let (h, rows) = parse_csv(&d.read("o/flows.csv"));
    assert_eq!(rows.len() as u64, total);
    let (fc, sc, cc) = (col(&h, "fct_ns"), col(&h, "slowdown"), col(&h, "completed"));
    let mut n_done = 0;
    for r in &rows {
        match r[cc].as_str() {
            "1" => {
                n_done += 1;
                assert!(r[fc].parse::<f64>().is_ok() && r[sc].parse::<f64>().is_ok());
            }
            "0" => assert!(r[fc].is_empty() && r[sc].is_empty(), "{r:?}"),
            other => panic!("completed = {other:?}"),
        }
    }
    assert_eq!(n_done, done);
    assert_eq!(d.read("o/fct.txt").lines().count() as u64, done);
}

#[test]
fn run_is_deterministic() {
    let d = TempDir::new("determinism");
    run_tiny(&d, TINY, "a", &[]).assert_ok();
    run_tiny(&d, TINY, "b", &[]).assert_ok();
    for f in ["flows.csv", "fct.txt", "buffer.csv"] {
        assert!(
            d.bytes(&format!("a/{f}")) == d.bytes(&format!("b/{f}")),
            "{f} differs between two identical runs"
        );
    }
    // summary.json differs only in wall-clock fields.
    let (mut a, mut b) = (summary(&d, "a"), summary(&d, "b"));
    for s in [&mut a, &mut b] {
        let o = s.as_object_mut().unwrap();
        for k in [
            "wall_seconds",
            "events_per_second",
            "packet_hops_per_second",
            "peak_rss_bytes",
        ] {
            o.remove(k);
        }
    }
    assert_eq!(a, b);
}

#[test]
fn run_is_deterministic_with_cc_and_lossless() {
    // The same with a congestion controller and PFC, if available.
    let sc = TINY
        .replace("kind = \"none\"", "kind = \"dcqcn\"")
        .replace("mode = \"lossy\"", "mode = \"lossless\"");
    let d = TempDir::new("determinism-cc");
    let r = run_tiny(&d, &sc, "a", &[]);
    if !r.ok() {
        // Not implemented yet: refused by key.
        r.assert_error(&["tiny.toml"]);
        return;
    }
    run_tiny(&d, &sc, "b", &[]).assert_ok();
    for f in ["flows.csv", "fct.txt", "buffer.csv"] {
        assert!(
            d.bytes(&format!("a/{f}")) == d.bytes(&format!("b/{f}")),
            "{f} differs between two identical runs"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// --set
// ---------------------------------------------------------------------------------------------

#[test]
fn set_seed_equals_editing_the_file() {
    let d = TempDir::new("set-seed");
    run_tiny(&d, TINY, "base", &[]).assert_ok();
    run_tiny(&d, TINY, "set", &["seed=8"]).assert_ok();
    run_tiny(&d, &TINY.replace("seed = 7", "seed = 8"), "edit", &[]).assert_ok();
    assert!(
        d.bytes("set/flows.csv") == d.bytes("edit/flows.csv"),
        "--set seed=8 differs from seed = 8 in the file"
    );
    assert!(
        d.bytes("set/flows.csv") != d.bytes("base/flows.csv"),
        "--set seed=8 had no effect"
    );
}

#[test]
fn set_array_element_and_string_values() {
    let d = TempDir::new("set-load");
    run_tiny(&d, TINY, "base", &[]).assert_ok();
    // Triple the Poisson load: more flows.
    run_tiny(&d, TINY, "load", &["traffic.0.load=0.9"]).assert_ok();
    let n = |o: &str| summary(&d, o)["flows_total"].as_u64().unwrap();
    assert!(n("load") > n("base"), "{} vs {}", n("load"), n("base"));
    // Equal to editing the file.
    run_tiny(
        &d,
        &TINY.replacen("load = 0.3", "load = 0.9", 1),
        "edit",
        &[],
    )
    .assert_ok();
    assert!(d.bytes("load/flows.csv") == d.bytes("edit/flows.csv"));
    // String values, quoted or bare, and several --set at once.
    run_tiny(
        &d,
        TINY,
        "multi",
        &[
            "buffer.size=\"8MiB\"",
            "topology.host_delay=2us",
            "traffic.1.size=30KB",
        ],
    )
    .assert_ok();
    let (h, rows) = parse_csv(&d.read("multi/flows.csv"));
    let (sz, dp) = (col(&h, "size_bytes"), col(&h, "dport"));
    assert!(
        rows.iter()
            .filter(|r| r[dp] == "200")
            .all(|r| r[sz] == "30000"),
        "traffic.1.size override not applied"
    );
    // A new key in an existing table.
    run_tiny(&d, TINY, "newkey", &["network.mtu=500"]).assert_ok();
}

#[test]
fn set_bad_paths_error_cleanly() {
    let d = TempDir::new("set-bad");
    for (set, needles) in [
        ("traffic.9.load=0.5", &["--set", "traffic.9"][..]),
        ("traffic.x.load=0.5", &["--set", "traffic.x"][..]),
        ("noequals", &["--set", "noequals"][..]),
        ("topology.kind.x=1", &["--set", "topology.kind.x"][..]),
        ("topology.spinez=4", &["spinez"][..]),
        ("traffic.0.load=abc", &["load"][..]),
        ("topology.hosts=1", &["tiny.toml", "hosts"][..]),
        (
            "topology.host_rate=\"1Gbq\"",
            &["tiny.toml", "topology.host_rate", "1Gbq"][..],
        ),
        ("=3", &["--set"][..]),
        // Errors in a value a --set gave cite that --set: a zero duration, and an element
        // set inside a list.
        ("traffic=[]", &["--set `traffic=[]`", "no traffic"][..]),
        (
            "traffic.0.duration=\"0us\"",
            &["--set `traffic.0.duration=\"0us\"`", "must be > 0"][..],
        ),
        (
            "buffer.switch_sizes.2=\"1MB\"",
            &[
                "--set `buffer.switch_sizes.2=\"1MB\"`",
                "buffer.switch_sizes",
            ][..],
        ),
    ] {
        let r = run_tiny(&d, TINY, "o", &[set]);
        r.assert_error(needles);
        assert!(
            !d.join("o").exists(),
            "--set {set}: outputs written despite the error"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// sfc validate
// ---------------------------------------------------------------------------------------------

#[test]
fn validate_good_scenarios() {
    let d = TempDir::new("validate-good");
    let file = d.write("tiny.toml", TINY);
    let r = sfc(d.path(), &["validate", file.to_str().unwrap()]);
    r.assert_ok();
    assert!(r.stdout.contains("ok"), "{}", r.show());
    assert!(r.stdout.contains("4 hosts"), "{}", r.show());
    // validate writes nothing.
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    // With overrides.
    let r = sfc(
        d.path(),
        &[
            "validate",
            file.to_str().unwrap(),
            "--set",
            "topology.hosts=8",
        ],
    );
    r.assert_ok();
    assert!(r.stdout.contains("8 hosts"), "{}", r.show());
}

#[test]
fn validate_shipped_scenarios() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let d = TempDir::new("validate-shipped");
    let mut n = 0;
    for e in std::fs::read_dir(&root).expect("scenarios/") {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            n += 1;
            sfc(d.path(), &["validate", p.to_str().unwrap()]).assert_ok();
        }
    }
    assert!(n >= 2, "expected default.toml and the examples");
}

#[test]
fn incast_star_example_runs() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/incast_star.toml");
    let d = TempDir::new("incast-star");
    let r = sfc(
        d.path(),
        &["run", p.to_str().unwrap(), "--out", "o", "--json"],
    );
    r.assert_ok();
    let s = summary(&d, "o");
    assert_eq!(s["flows_total"], 16);
    assert_eq!(s["flows_completed"], 16);
    assert_eq!(s["drops"], 0, "unlimited buffer never drops");
    // 16 × 64 KB arrive together at one 100 G port: nearly all but one flow's worth queues.
    assert!(s["peak_buffer_bytes"].as_u64().unwrap() > 15 * 64_000 * 9 / 10);
}

// ---------------------------------------------------------------------------------------------
// Bad scenarios: exit ≠ 0, message with the file name and the line or key, no panic
// ---------------------------------------------------------------------------------------------

/// Validate and run `text` (as `bad.toml`); both must fail with all `needles` on stderr.
fn assert_bad(text: &str, needles: &[&str]) {
    let d = TempDir::new("bad");
    let file = d.write("bad.toml", text);
    let f = file.to_str().unwrap();
    let mut all = vec!["bad.toml"];
    all.extend_from_slice(needles);
    sfc(d.path(), &["validate", f]).assert_error(&all);
    sfc(d.path(), &["run", f, "--out", "o"]).assert_error(&all);
    assert!(!d.join("o").exists(), "outputs written for a bad scenario");
}

const STAR4: &str = "[topology]\nkind = \"star\"\nhosts = 4\n";

/// Write `toml` as `name` in `d`, run it with `sfc run --out o` (it must succeed) and return
/// its `o/summary.json`.
fn run_summary(d: &TempDir, name: &str, toml: &str) -> serde_json::Value {
    let file = d.write(name, toml);
    sfc(d.path(), &["run", file.to_str().unwrap(), "--out", "o"]).assert_ok();
    serde_json::from_str(&std::fs::read_to_string(d.join("o/summary.json")).unwrap()).unwrap()
}

/// A small incast on [`STAR4`]: hosts 1–3 send 50 KB each to host 0.
const INCAST: &str = "[[traffic]]\nkind = \"incast\"\nsenders = [1, 2, 3]\nreceivers = [0]\nsize = \"50KB\"\nat = \"1us\"\n";

/// Values found by adversarial testing that validated but then hung a run or exhausted memory
/// (DCQCN timers of 0 ps, PAUSE refreshes faster than the link, ACKs longer than data
/// packets, lognormal gaps that all round to zero, incast events of 10⁹ flows, a BFC τ
/// derived from a tiny HRTT): each is refused up front, naming its key and the limit. Values
/// a run could otherwise silently change or ignore: each is an error naming its key.
#[test]
fn bad_values_are_refused_not_silently_adjusted() {
    assert_bad(
        &format!("{STAR4}[cc]\nkind = \"none\"\nwindow = \"0B\"\n{INCAST}"),
        &["cc.window", "0 bytes"],
    );
    assert_bad(
        &format!("{STAR4}[sfc]\nmode = \"sfc\"\nbloom_bits = 0\n{INCAST}"),
        &["sfc.bloom_bits", "at least 64"],
    );
    assert_bad(
        &format!("{STAR4}[sfc]\nmode = \"sfc\"\ncache_entries = 0\n{INCAST}"),
        &["sfc.cache_entries", "at least 1"],
    );
    for pairs in ["[[1, 2, 3]]", "[[1]]", "[[1, 2, 99]]"] {
        assert_bad(
            &format!(
                "{STAR4}[[traffic]]\nkind = \"long_lived\"\npairs = {pairs}\nsize = \"1MB\"\n"
            ),
            &["pairs", "two host ids"],
        );
    }
    // An empty CDF name names the key and the built-in CDFs, not an OS error.
    assert_bad(
        &format!(
            "{STAR4}[[traffic]]\nkind = \"poisson\"\ncdf = \"\"\nload = 0.5\nduration = \"100us\"\n"
        ),
        &["traffic[0].cdf", "not a CDF file", "websearch"],
    );
    // A flow file's sizes have the scenario's cap (1 PB): beyond it the ideal FCT overflowed.
    let d = TempDir::new("bigflow");
    d.write("flows.txt", "1\n1 2 3 100 1000000000000000001 0.000001\n");
    let f = d.write(
        "s.toml",
        &format!("{STAR4}[[traffic]]\nkind = \"flow_file\"\nfile = \"flows.txt\"\n"),
    );
    sfc(d.path(), &["validate", f.to_str().unwrap()]).assert_error(&[
        "flows.txt:2",
        "field 5 (size)",
        "1 PB",
    ]);
}

#[test]
fn bad_values_that_would_storm_or_exhaust_memory() {
    for key in ["alpha_timer", "dec_interval", "rp_timer"] {
        for v in ["0us", "99ns"] {
            assert_bad(
                &format!("{STAR4}[cc]\nkind = \"dcqcn\"\n{key} = \"{v}\"\n{INCAST}"),
                &[&format!("cc.{key}"), "100.0ns"],
            );
        }
    }
    assert_bad(
        &format!("{STAR4}[buffer]\nmode = \"lossless\"\n[pfc]\nquanta = 7\n{INCAST}"),
        &["pfc.quanta", "8..=65535"],
    );
    // An increase step above line rate is a unit slip; the defaults are far below it.
    for (kind, key) in [
        ("dcqcn", "ai"),
        ("dcqcn", "hai"),
        ("timely", "hai"),
        ("dctcp", "ai"),
        ("hpcc", "ai"),
    ] {
        assert_bad(
            &format!("{STAR4}[cc]\nkind = \"{kind}\"\n{key} = \"1000Tbps\"\n{INCAST}"),
            &[
                &format!("bad.toml:6: `cc.{key}`"),
                "above the fastest host link rate",
            ],
        );
    }
    // With NICs of 2 and 100 Gb/s, a 5 Gb/s step (sized for the fast ones) is accepted.
    let d = TempDir::new("mixed-rates");
    d.write(
        "topo.txt",
        "3 1 2\n2\n0 2 2Gbps 1000ns 0\n1 2 100Gbps 1000ns 0\n",
    );
    let f = d.write(
        "s.toml",
        "[topology]\nkind = \"file\"\nfile = \"topo.txt\"\n[cc]\nkind = \"dcqcn\"\nhai = \"5Gbps\"\n\
         [[traffic]]\nkind = \"incast\"\nsenders = [1]\nreceivers = [0]\nsize = \"10KB\"\nat = \"1us\"\n",
    );
    sfc(d.path(), &["validate", f.to_str().unwrap()]).assert_ok();
    assert_bad(
        &format!("{STAR4}[network]\nmtu = 63\n{INCAST}"),
        &["network.mtu", "64..=9000", "ACK"],
    );
    assert_bad(
        &format!(
            "{STAR4}[[traffic]]\nkind = \"lognormal\"\ncdf = \"websearch\"\nload = 0.5\nduration = \"200us\"\nsigma = 5.5\n"
        ),
        &["sigma", "0..=5"],
    );
    assert_bad(
        &format!(
            "{STAR4}[[traffic]]\nkind = \"incast\"\ndegree = 4000000000\nrepeat_senders = true\nsize = \"10KB\"\nload = 0.1\nduration = \"200us\"\n"
        ),
        &["degree", "at most 100000"],
    );
    assert_bad(
        &format!(
            "{STAR4}[buffer]\nmode = \"lossless\"\n[bfc]\nenabled = true\nhrtt = \"150ns\"\n{INCAST}"
        ),
        &["bfc.hrtt", "75.0ns", "100.0ns"],
    );
    // Without either, τ defaults to each port's link delay: 50 ns links are refused too.
    assert_bad(
        &format!(
            "[topology]\nkind = \"star\"\nhosts = 4\nhost_delay = \"50ns\"\n[buffer]\nmode = \"lossless\"\n[bfc]\nenabled = true\n{INCAST}"
        ),
        &["bfc.tau", "50.0ns", "100.0ns"],
    );
    // The limits themselves are accepted.
    let d = TempDir::new("limits");
    for extra in [
        "[cc]\nkind = \"dcqcn\"\nalpha_timer = \"100ns\"\n",
        "[buffer]\nmode = \"lossless\"\n[pfc]\nquanta = 8\n",
        "[network]\nmtu = 64\n",
        "[buffer]\nmode = \"lossless\"\n[bfc]\nenabled = true\nhrtt = \"200ns\"\n",
        "[buffer]\nmode = \"lossless\"\n[bfc]\nenabled = true\ntau = \"100ns\"\n",
    ] {
        let f = d.write("ok.toml", &format!("{STAR4}{extra}{INCAST}"));
        sfc(d.path(), &["validate", f.to_str().unwrap()]).assert_ok();
    }
    let f = d.write(
        "ok.toml",
        &format!(
            "{STAR4}[[traffic]]\nkind = \"lognormal\"\ncdf = \"websearch\"\nload = 0.5\nduration = \"200us\"\nsigma = 5\n"
        ),
    );
    sfc(d.path(), &["validate", f.to_str().unwrap()]).assert_ok();
}

#[test]
fn bad_unknown_key() {
    assert_bad(
        &tiny_with_topology_line("spinez = 4\n"),
        &["line 8", "spinez"],
    );
    assert_bad(&format!("bogus = 1\n{STAR4}"), &["line 1", "bogus"]);
    assert_bad(
        &format!("{STAR4}[buffer]\nsize = \"1MB\"\nalpha = 1.0\n"),
        &["line 6", "alpha"],
    );
    assert_bad(
        &format!("{STAR4}[[traffic]]\nkind = \"all_to_all\"\nsize = \"1KB\"\nsizes = \"2KB\"\n"),
        &["line 7", "sizes"],
    );
    assert_bad(&format!("{STAR4}[outputs]\n"), &["line 4", "outputs"]);
    // Lines starting with `[` inside an unknown table (a nested array, a multi-line string)
    // do not end it: the unknown keys after it are still all reported, and a `--set` one.
    let d = TempDir::new("bad-nested");
    let f = d.write(
        "bad.toml",
        &format!(
            "bogus1 = 1\n{STAR4}[bogus]\nx = [\n  [1, 2],\n  [3],\n]\ns = \"\"\"\n[not a header]\n\"\"\"\n\
             [buffer]\nbogus3 = 1\n{INCAST}bogus4 = 2\n"
        ),
    );
    let r = sfc(
        d.path(),
        &["validate", f.to_str().unwrap(), "--set", "buffer.bogus5=1"],
    );
    r.assert_error(&[
        "`bogus1`",
        "`bogus`",
        "`bogus3`",
        "`bogus4`",
        "--set `buffer.bogus5=1`",
    ]);
    assert!(
        !r.stderr.contains("`x`") && !r.stderr.contains("`s`"),
        "{}",
        r.show()
    );
    // The keys of an unknown table belong to it: they are not listed again as unknown keys of
    // the table before it (`[topology]`).
    for header in ["[outputs]", "[[traffik]]"] {
        let d = TempDir::new("bad-table");
        let f = d.write(
            "bad.toml",
            &format!("{STAR4}{header}\nflows_csv = false\n[cc]\nkindd = \"none\"\n"),
        );
        let r = sfc(d.path(), &["validate", f.to_str().unwrap()]);
        r.assert_error(&["line 4", &header.replace(['[', ']'], ""), "line 7", "kindd"]);
        assert!(
            !r.stderr.contains("`flows_csv`"),
            "a key of the unknown table {header} reported on its own:\n{}",
            r.show()
        );
    }
}

/// A `--set` of one element of a table is not blamed for an error in another element that
/// the file wrote: the file's line is cited.
#[test]
fn set_of_one_element_is_not_blamed_for_the_files() {
    let d = TempDir::new("set-element");
    let f = d.write(
        "s.toml",
        &format!("{STAR4}[buffer]\nswitch_sizes = {{ 2 = \"1MB\" }}\n{INCAST}"),
    );
    let f = f.to_str().unwrap();
    for sets in [&[][..], &["--set", "buffer.switch_sizes.4=\"2MB\""][..]] {
        let mut args = vec!["validate", f];
        args.extend_from_slice(sets);
        let r = sfc(d.path(), &args);
        r.assert_error(&["s.toml:5: `buffer.switch_sizes`", "node 2 is a host"]);
        assert!(!r.stderr.contains("--set"), "{}", r.show());
    }
}

/// A check that fails on a value the user never wrote says it is the default, so nobody
/// looks for a line that is not there; a value the user gave is cited at its line.
#[test]
fn errors_on_defaults_say_so() {
    let slow = "[topology]\nkind = \"star\"\nhosts = 4\nhost_rate = \"1Mbps\"\n";
    assert_bad(
        &format!("{slow}{INCAST}"),
        &["`loss_recovery.rto` (not set: its default)", "base RTT"],
    );
    let d = TempDir::new("given-rto");
    let f = d.write(
        "bad.toml",
        &format!("{slow}[loss_recovery]\nkind = \"gbn\"\nrto = \"4ms\"\n{INCAST}"),
    );
    let r = sfc(d.path(), &["validate", f.to_str().unwrap()]);
    r.assert_error(&["bad.toml:7", "`loss_recovery.rto`", "base RTT"]);
    assert!(!r.stderr.contains("its default"), "{}", r.show());
}

/// Extreme floats are echoed in scientific notation, not as hundreds of digits.
#[test]
fn extreme_floats_in_errors_are_short() {
    let d = TempDir::new("long-float");
    let f = d.write("s.toml", &format!("{STAR4}{INCAST}"));
    for (set, want) in [
        ("buffer.dt_alpha=1e-30", "1e-30 × buffer"),
        ("network.mtu=1e308", "floating point `1e308`"),
    ] {
        let r = sfc(d.path(), &["validate", f.to_str().unwrap(), "--set", set]);
        r.assert_error(&[want]);
        assert!(!r.stderr.contains(&"0".repeat(25)), "{}", r.show());
    }
}

/// Every `u64` is a seed: above TOML's integer range as a decimal string, in the file or
/// through `--set`; negative or fractional seeds are refused naming the accepted forms.
#[test]
fn seeds_cover_the_whole_u64_range() {
    let d = TempDir::new("seed-range");
    let big = "18446744073709551615";
    run_tiny(
        &d,
        &TINY.replace("seed = 7", &format!("seed = \"{big}\"")),
        "file",
        &[],
    )
    .assert_ok();
    run_tiny(&d, TINY, "set", &[&format!("seed={big}")]).assert_ok();
    run_tiny(&d, TINY, "base", &[]).assert_ok();
    assert_eq!(summary(&d, "file")["seed"].as_u64(), Some(u64::MAX));
    assert!(d.bytes("file/flows.csv") == d.bytes("set/flows.csv"));
    assert!(d.bytes("file/flows.csv") != d.bytes("base/flows.csv"));
    for bad in ["-1", "1.5", "\"12x\"", "\"18446744073709551616\""] {
        assert_bad(
            &TINY.replace("seed = 7", &format!("seed = {bad}")),
            &["seed", "18446744073709551615", "as a string"],
        );
    }
}

#[test]
fn bad_unit() {
    assert_bad(
        &format!("{STAR4}host_rate = \"100Gbq\"\n"),
        &["bad.toml:4:", "topology.host_rate", "100Gbq"],
    );
    assert_bad(
        &format!("{STAR4}host_delay = \"1000\"\n"),
        &["bad.toml:4:", "topology.host_delay"],
    );
    assert_bad(
        &format!("{STAR4}[buffer]\nsize = \"32Mb\"\n"),
        &["bad.toml:5:", "buffer.size", "32Mb"],
    );
    assert_bad(
        &format!(
            "{STAR4}[[traffic]]\nkind = \"all_to_all\"\nsize = \"1KB\"\nstart = \"5 parsecs\"\n"
        ),
        &["bad.toml:7:", "traffic[0].start"],
    );
}

#[test]
fn bad_wrong_type() {
    assert_bad(
        "[topology]\nkind = \"star\"\nhosts = \"four\"\n",
        &["line 3", "hosts"],
    );
    assert_bad(
        "[topology]\nkind = \"star\"\nhosts = 4.5\n",
        &["line 3", "hosts"],
    );
}

#[test]
fn bad_negative_or_zero_values() {
    assert_bad(
        "[topology]\nkind = \"star\"\nhosts = -2\n",
        &["line 3", "hosts"],
    );
    assert_bad(
        &format!("{STAR4}host_rate = \"0Gbps\"\n"),
        &["bad.toml:4:", "topology.host_rate"],
    );
    assert_bad(
        &format!("{STAR4}host_delay = \"-1us\"\n"),
        &["bad.toml:4:", "topology.host_delay"],
    );
    assert_bad(
        &format!("{STAR4}[buffer]\nsize = \"0B\"\n"),
        &["buffer.size"],
    );
    assert_bad(
        &format!("{STAR4}[buffer]\ndt_alpha = -1.0\n"),
        &["buffer.dt_alpha"],
    );
    assert_bad(&format!("{STAR4}[network]\nmtu = 0\n"), &["network.mtu"]);
    assert_bad(
        &format!("{STAR4}[network]\nqueues_per_port = 0\n"),
        &["network.queues_per_port"],
    );
    assert_bad(
        &format!("{STAR4}[cc]\nkind = \"dctcp\"\n[network]\ncnp = \"cnp\"\n"),
        &["network.cnp", "DCTCP never reads"],
    );
    assert_bad(
        &format!("{STAR4}[network]\nswitch_ack_high_prio = true\n"),
        &["network.switch_ack_high_prio", "needs `ack_high_prio`"],
    );
    assert_bad(
        &format!("{STAR4}[loss_recovery]\nrto = \"0us\"\n"),
        &["loss_recovery.rto"],
    );
    assert_bad(
        &format!("{STAR4}[output]\nbuffer_interval = \"0us\"\n"),
        &["output.buffer_interval"],
    );
    assert_bad(
        &format!("{STAR4}[output]\nsize_bins = 0\n"),
        &["output.size_bins"],
    );
    assert_bad(
        &format!("{STAR4}[cc]\nkind = \"none\"\nwindow = \"0bdp\"\n"),
        &["bad.toml:6:", "cc.window"],
    );
    for load in ["0.0", "-0.5", "1.5"] {
        assert_bad(
            &format!(
                "{STAR4}[[traffic]]\nkind = \"poisson\"\ncdf = \"fb_hadoop\"\nload = {load}\nduration = \"10us\"\n"
            ),
            &["traffic[0]", "load"],
        );
    }
    assert_bad(
        &format!(
            "{STAR4}[[traffic]]\nkind = \"poisson\"\ncdf = \"fb_hadoop\"\nload = 0.5\nduration = \"0us\"\n"
        ),
        &["traffic[0].duration"],
    );
    assert_bad(
        &format!("{STAR4}[[traffic]]\nkind = \"all_to_all\"\nsize = \"0B\"\n"),
        &["traffic[0]", "size"],
    );
}

#[test]
fn bad_impossible_topology() {
    assert_bad(
        "[topology]\nkind = \"star\"\nhosts = 1\n",
        &["topology", "hosts"],
    );
    assert_bad(
        "[topology]\nkind = \"star\"\nhosts = 0\n",
        &["topology", "hosts"],
    );
    assert_bad(
        "[topology]\nkind = \"leaf_spine\"\nspines = 0\ntors = 2\nhosts_per_tor = 2\n",
        &["topology", "spine"],
    );
    assert_bad(
        "[topology]\nkind = \"fat_tree\"\nk = 3\n",
        &["topology", "k"],
    );
    assert_bad(
        "[topology]\nkind = \"dumbbell\"\nleft_hosts = 0\nright_hosts = 2\n",
        &["topology", "left"],
    );
    assert_bad(
        "[topology]\nkind = \"star\"\nhosts = 4000000000\n",
        &["topology", "maximum"],
    );
    assert_bad(
        "[topology]\nkind = \"ring\"\nhosts = 4\n",
        &["bad.toml:2:", "topology.kind", "ring"],
    );
}

#[test]
fn bad_missing_sections_and_syntax() {
    assert_bad("", &["topology"]);
    assert_bad("[topology]\nhosts = 4\n", &["kind"]);
    assert_bad("[topology\nkind = \"star\"\n", &["line 1"]);
    assert_bad(
        &format!("{STAR4}[[traffic]]\nsize = \"1KB\"\n"),
        &["line 4", "kind"],
    );
}

#[test]
fn bad_unknown_traffic_kind() {
    assert_bad(
        &format!("{STAR4}[[traffic]]\nkind = \"burst\"\nsize = \"1KB\"\n"),
        &["bad.toml:5:", "traffic[0].kind", "burst"],
    );
}

#[test]
fn bad_unknown_cc_and_buffer_mode() {
    assert_bad(
        &format!("{STAR4}[cc]\nkind = \"tcp_reno\"\n"),
        &["bad.toml:5:", "cc.kind", "tcp_reno"],
    );
    assert_bad(
        &format!("{STAR4}[buffer]\nmode = \"infinite\"\n"),
        &["bad.toml:5:", "buffer.mode", "infinite"],
    );
    assert_bad(
        &format!("{STAR4}[loss_recovery]\nkind = \"sack\"\n"),
        &["bad.toml:5:", "loss_recovery.kind"],
    );
    assert_bad(
        &format!("{STAR4}[network]\nframing = \"wifi\"\n"),
        &["bad.toml:5:", "network.framing"],
    );
    assert_bad(
        &format!("{STAR4}[network]\nscheduler = \"fifo\"\n"),
        &["bad.toml:5:", "network.scheduler"],
    );
}

#[test]
fn bad_missing_cdf_file() {
    assert_bad(
        &format!(
            "{STAR4}[[traffic]]\nkind = \"poisson\"\ncdf = \"no_such_cdf.txt\"\nload = 0.5\nduration = \"10us\"\n"
        ),
        &["traffic[0].cdf", "no_such_cdf.txt"],
    );
}

#[test]
fn bad_cdf_file_contents() {
    let d = TempDir::new("badcdf");
    d.write("cdf.txt", "100 0\n50 50\n1000 100\n");
    let file = d.write(
        "bad.toml",
        &format!(
            "{STAR4}[[traffic]]\nkind = \"poisson\"\ncdf = \"cdf.txt\"\nload = 0.5\nduration = \"10us\"\n"
        ),
    );
    sfc(d.path(), &["validate", file.to_str().unwrap()]).assert_error(&["cdf.txt"]);
}

#[test]
fn cdf_file_relative_to_the_scenario() {
    // A CDF file next to the scenario, run from another directory.
    let d = TempDir::new("cdfrel");
    d.write("sub/cdf.txt", "1000 0\n5000 50\n20000 100\n");
    let file = d.write(
        "sub/s.toml",
        &format!(
            "{STAR4}[[traffic]]\nkind = \"poisson\"\ncdf = \"cdf.txt\"\nload = 0.5\nduration = \"20us\"\n"
        ),
    );
    let r = sfc(
        d.path(),
        &["run", file.to_str().unwrap(), "--out", "o", "--no-output"],
    );
    r.assert_ok();
}

#[test]
fn bad_incast_degree_larger_than_hosts() {
    assert_bad(
        &format!(
            "{STAR4}[[traffic]]\nkind = \"incast\"\ndegree = 8\nsize = \"10KB\"\nload = 0.1\nduration = \"100us\"\n"
        ),
        &["traffic[0]", "degree", "8"],
    );
    // The receiver among the explicit senders.
    assert_bad(
        &format!(
            "{STAR4}[[traffic]]\nkind = \"incast\"\nsenders = [0, 1, 3]\nreceivers = [3]\nsize = \"10KB\"\nat = \"1us\"\n"
        ),
        &["traffic[0]", "3"],
    );
}

#[test]
fn periodic_incast_total_size_and_fan_in_keys() {
    // Each exclusive pair, and the repeat rule, names its keys.
    assert_bad(
        &format!(
            "{STAR4}[[traffic]]\nkind = \"incast\"\ndegree = 2\nsize = \"10KB\"\nload = 0.1\nperiod = \"10us\"\nduration = \"100us\"\n"
        ),
        &["traffic[0].period", "traffic[0].load"],
    );
    assert_bad(
        &format!(
            "{STAR4}[[traffic]]\nkind = \"incast\"\ndegree = 2\nsize = \"10KB\"\ntotal_size = \"20KB\"\nperiod = \"10us\"\nduration = \"100us\"\n"
        ),
        &["traffic[0].total_size", "traffic[0].size"],
    );
    assert_bad(
        &format!(
            "{STAR4}[[traffic]]\nkind = \"incast\"\ndegree = 8\ntotal_size = \"20KB\"\nperiod = \"10us\"\nduration = \"100us\"\n"
        ),
        &["traffic[0].degree", "repeat_senders"],
    );
    assert_bad(
        &format!(
            "{STAR4}[[traffic]]\nkind = \"incast\"\ndegree = 2\nsize = \"1KB\"\nperiod = \"0us\"\nduration = \"100us\"\n"
        ),
        &["traffic[0].period", "> 0"],
    );
    assert_bad(
        &format!(
            "{STAR4}[[traffic]]\nkind = \"long_lived\"\nfan_in = 1\npairs = [[0, 1]]\nsize = \"1KB\"\n"
        ),
        &["traffic[0].fan_in", "traffic[0].pairs"],
    );
    assert_bad(
        &format!("{STAR4}[[traffic]]\nkind = \"long_lived\"\nfan_in = 4\nsize = \"1KB\"\n"),
        &["traffic[0].fan_in", "1..=3"],
    );
    assert_bad(
        &format!(
            "{STAR4}[[traffic]]\nkind = \"poisson\"\ncdf = \"fb_hadoop\"\nload = 0.1\nduration = \"10us\"\nperiod = \"1us\"\n"
        ),
        &["traffic[0].period"],
    );
    // A valid periodic incast with repeated senders and a total size: 8 flows of 2,500 B per
    // event (3 senders, 3 + 3 + 2 flows), events at 0 and 10 µs.
    let d = TempDir::new("periodic");
    let s = run_summary(
        &d,
        "p.toml",
        &format!(
            "{STAR4}[[traffic]]\nkind = \"incast\"\ndegree = 8\ntotal_size = \"20KB\"\nperiod = \"10us\"\nrepeat_senders = true\nduration = \"20us\"\n[output]\nflows_csv = true\n"
        ),
    );
    assert_eq!(s["flows_total"], 16);
    assert_eq!(s["flows_completed"], 16);
    let fct = std::fs::read_to_string(d.join("o/fct.txt")).unwrap();
    assert!(
        fct.lines()
            .all(|l| l.split_whitespace().nth(4) == Some("2500")),
        "{fct}"
    );
}

/// `link_utilization.host_down`: one 1 MB flow 0 → 1 on a 4-host star (100 G). The switch
/// port to host 1 carries exactly the data, 1,000 packets × 1,048 B; the port to host 0 the
/// ACKs; the other two nothing. host_down = the mean over the four ports of bytes · 8 /
/// (100 Gb/s · sim time).
#[test]
fn host_down_utilization_is_the_mean_over_ports_facing_hosts() {
    let d = TempDir::new("hostdown");
    let s = run_summary(
        &d,
        "u.toml",
        &format!(
            "{STAR4}[cc]\nkind = \"none\"\n[[traffic]]\nkind = \"long_lived\"\npairs = [[0, 1]]\nsize = \"1MB\"\n"
        ),
    );
    let t_ps = s["sim_time_ps"].as_f64().unwrap();
    let links = std::fs::read_to_string(d.join("o/links.csv")).unwrap();
    let mut bytes = [0f64; 4];
    for l in links.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        let (node, peer): (u32, u32) = (f[0].parse().unwrap(), f[2].parse().unwrap());
        if node == 4 && peer < 4 {
            bytes[peer as usize] = f[4].parse().unwrap();
        }
    }
    assert_eq!(bytes[1], 1_048_000.0, "data into host 1");
    assert!(bytes[0] > 0.0, "ACKs into host 0");
    assert_eq!((bytes[2], bytes[3]), (0.0, 0.0));
    let want = bytes
        .iter()
        .map(|b| b * 8.0 / (100e9 * t_ps / 1e12))
        .sum::<f64>()
        / 4.0;
    let got = s["link_utilization"]["host_down"].as_f64().unwrap();
    assert!((got - want).abs() < 1e-12, "host_down {got} vs {want}");
}

/// `throughput` in summary.json: one 5 MB flow 0 → 1 on a 4-host 100 G star, no CC. A
/// 1,048 B packet takes 83 ns (HPCC framing: 83.84 ns truncated to whole ns, the book's model chapter),
/// so an interval of 100 µs the transfer covers whole delivers ⌊100,000 / 83⌋ or one more
/// packet of 1,000 B: 1,204 or 1,205, 96.32 or 96.40 Gb/s. 5,000 packets last 415 µs: at most
/// 6 intervals (the first and last cut short, with less), at least 3 whole ones, so the
/// median and P90 are the whole intervals' rate and P10 a partial one's. The mean is the
/// samples' average, which the CSV gives too.
#[test]
fn summary_throughput_percentiles_of_the_receiver_samples() {
    let d = TempDir::new("tputsum");
    let s = run_summary(
        &d,
        "u.toml",
        &format!(
            "{STAR4}[cc]\nkind = \"none\"\n[[traffic]]\nkind = \"long_lived\"\npairs = [[0, 1]]\nsize = \"5MB\"\n"
        ),
    );
    let t = &s["throughput"];
    let n = t["samples"].as_u64().unwrap();
    assert!((4..=6).contains(&n), "{t}");
    let whole = |g: f64| [96.32, 96.40].iter().any(|w| (g - w).abs() < 1e-9);
    let p50 = t["p50_gbps"].as_f64().unwrap();
    assert!(whole(p50), "median {p50}: {t}");
    assert!(whole(t["p90_gbps"].as_f64().unwrap()), "{t}");
    assert!(
        t["p10_gbps"].as_f64().unwrap() < 96.3,
        "a partial interval: {t}"
    );
    let csv = std::fs::read_to_string(d.join("o/throughput.csv")).unwrap();
    let vals: Vec<f64> = csv
        .lines()
        .skip(1)
        .map(|l| l.rsplit(',').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(vals.len() as u64, n);
    let mean = vals.iter().sum::<f64>() / vals.len() as f64;
    assert!(
        (t["mean_gbps"].as_f64().unwrap() - mean).abs() < 1e-9,
        "{t}"
    );
}

/// `output.sender_throughput`: two 5 MB flows 0 → 2 and 1 → 2 on a 100 G star with an
/// unlimited buffer and no CC. Both senders run at line rate into one FIFO port, whose
/// arrivals alternate between the two ingress links, so each gets 50 Gb/s: Jain's index is 1
/// in every 100 µs interval both cover (5 MB at 50 Gb/s = 800 µs, so at least 6 whole
/// intervals). Only senders 0 and 1 appear in `sender_throughput.csv`, each with its
/// 5,000,000 payload bytes over its rows.
#[test]
fn sender_throughput_and_fairness_of_two_equal_flows() {
    let d = TempDir::new("fairness");
    let file = d.write(
        "f.toml",
        &format!(
            "{STAR4}[buffer]\nmode = \"unlimited\"\n[cc]\nkind = \"none\"\n[output]\nsender_throughput = true\n\
             [[traffic]]\nkind = \"long_lived\"\npairs = [[0, 2], [1, 2]]\nsize = \"5MB\"\n"
        ),
    );
    sfc(d.path(), &["run", file.to_str().unwrap(), "--out", "o"]).assert_ok();
    let s = summary(&d, "o");
    let f = &s["fairness"];
    assert!(f["intervals"].as_u64().unwrap() >= 6, "{f}");
    assert!(f["jain_min"].as_f64().unwrap() > 0.999, "{f}");
    assert!(f["jain_mean"].as_f64().unwrap() > 0.999, "{f}");
    let (h, rows) = parse_csv(&d.read("o/sender_throughput.csv"));
    let (ti, si, gi) = (col(&h, "time_ns"), col(&h, "sender"), col(&h, "gbps"));
    let end_ns = s["sim_time_ps"].as_f64().unwrap() / 1e3;
    let mut bytes = [0f64; 4];
    for r in &rows {
        let t: f64 = r[ti].parse().unwrap();
        let dur_ns = (end_ns - t).min(100_000.0);
        bytes[r[si].parse::<usize>().unwrap()] += r[gi].parse::<f64>().unwrap() * dur_ns / 8.0;
    }
    for (h, b) in bytes.iter().enumerate() {
        let want = if h < 2 { 5e6 } else { 0.0 };
        assert!((b - want).abs() < 1.0, "sender {h}: {b} bytes");
    }
    // Off by default: no file, no section.
    let file = d.write(
        "g.toml",
        &format!("{STAR4}[cc]\nkind = \"none\"\n[[traffic]]\nkind = \"long_lived\"\npairs = [[0, 2]]\nsize = \"1MB\"\n"),
    );
    sfc(d.path(), &["run", file.to_str().unwrap(), "--out", "p"]).assert_ok();
    assert!(summary(&d, "p").get("fairness").is_none());
    assert!(!d.join("p/sender_throughput.csv").exists());
}

#[test]
fn bad_traffic_missing_keys() {
    for (body, key) in [
        (
            "kind = \"poisson\"\ncdf = \"fb_hadoop\"\nduration = \"10us\"\n",
            "traffic[0].load",
        ),
        (
            "kind = \"poisson\"\nload = 0.3\nduration = \"10us\"\n",
            "traffic[0].cdf",
        ),
        ("kind = \"all_to_all\"\n", "traffic[0].size"),
        (
            "kind = \"long_lived\"\nsize = \"1KB\"\n",
            "traffic[0].pairs",
        ),
        (
            "kind = \"incast\"\nsize = \"1KB\"\nload = 0.1\nduration = \"10us\"\n",
            "traffic[0].degree",
        ),
        ("kind = \"flow_file\"\n", "traffic[0].file"),
    ] {
        assert_bad(&format!("{STAR4}[[traffic]]\n{body}"), &[key]);
    }
}

#[test]
fn bad_cc_parameter_for_the_wrong_controller() {
    assert_bad(
        &format!("{STAR4}[cc]\nkind = \"none\"\nai = \"50Mbps\"\n"),
        &["cc.ai"],
    );
}

#[test]
fn bad_scenario_file_path() {
    let d = TempDir::new("nofile");
    for cmd in ["run", "validate"] {
        sfc(d.path(), &[cmd, "no_such_scenario.toml"]).assert_error(&["no_such_scenario.toml"]);
    }
}

#[test]
fn bad_output_dir_is_a_file() {
    let d = TempDir::new("outfile");
    d.write("occupied", "x");
    let file = d.write("tiny.toml", TINY);
    sfc(
        d.path(),
        &["run", file.to_str().unwrap(), "--out", "occupied"],
    )
    .assert_error(&["occupied"]);
}

#[test]
fn bad_traffic_hosts_name_the_scenario() {
    assert_bad(
        &format!(
            "{STAR4}[[traffic]]\nkind = \"poisson\"\ncdf = \"fb_hadoop\"\nload = 0.5\nduration = \"10us\"\nhosts = [0, 9]\n"
        ),
        &["traffic[0]", "9"],
    );
    assert_bad(
        &format!("{STAR4}[[traffic]]\nkind = \"long_lived\"\npairs = [[1, 99]]\nsize = \"1KB\"\n"),
        &["traffic[0]", "99"],
    );
    assert_bad(
        &format!("{STAR4}[[traffic]]\nkind = \"all_to_all\"\nsize = \"1KB\"\nprio = 9\n"),
        &["traffic[0].prio"],
    );
}

#[test]
fn bad_missing_topology_key_names_the_file() {
    assert_bad("[topology]\nkind = \"star\"\n", &["topology.hosts"]);
    assert_bad(
        "[topology]\nkind = \"leaf_spine\"\nspines = 2\n",
        &["topology.tors"],
    );
    assert_bad("[topology]\nkind = \"file\"\n", &["topology.file"]);
}

#[test]
fn bad_missing_input_file_names_the_key() {
    assert_bad(
        "[topology]\nkind = \"file\"\nfile = \"no_such_topology.txt\"\n",
        &["topology.file", "no_such_topology.txt"],
    );
    assert_bad(
        &format!("{STAR4}[[traffic]]\nkind = \"flow_file\"\nfile = \"no_such_flows.txt\"\n"),
        &["traffic[0].file", "no_such_flows.txt"],
    );
}

#[test]
fn bad_traffic_values_name_the_offending_key() {
    assert_bad(
        &format!(
            "{STAR4}[[traffic]]\nkind = \"incast\"\ndegree = 8\nsize = \"10KB\"\nload = 0.1\nduration = \"100us\"\n"
        ),
        &["traffic[0].degree"],
    );
    assert_bad(
        &format!(
            "{STAR4}[[traffic]]\nkind = \"poisson\"\ncdf = \"fb_hadoop\"\nload = 1.5\nduration = \"10us\"\n"
        ),
        &["traffic[0].load"],
    );
}

#[test]
fn bad_traffic_lists_and_priorities_name_the_key() {
    assert_bad(
        &format!("{STAR4}[[traffic]]\nkind = \"all_to_all\"\nsize = \"1KB\"\nhosts = [1, 2, 1]\n"),
        &["bad.toml:7:", "traffic[0].hosts", "1"],
    );
    assert_bad(
        &format!("{STAR4}[[traffic]]\nkind = \"all_to_all\"\nsize = \"0B\"\n"),
        &["traffic[0].size"],
    );
    assert_bad(
        &format!(
            "{STAR4}[[traffic]]\nkind = \"incast\"\nsenders = [0, 4]\nreceivers = [3]\nsize = \"10KB\"\nat = \"1us\"\n"
        ),
        &["traffic[0].senders", "4", "switch"],
    );
    // The default priority (3) does not fit 2 queues per port.
    assert_bad(
        &format!(
            "{STAR4}[network]\nqueues_per_port = 2\n[[traffic]]\nkind = \"all_to_all\"\nsize = \"1KB\"\n"
        ),
        &["traffic[0]", "prio", "queues_per_port"],
    );
}

#[test]
fn bad_flow_file_endpoint_names_its_line() {
    // The bad flow (to switch 4) is on line 3 but starts first.
    let d = TempDir::new("badflowfile");
    d.write("flows.txt", "2\n0 1 3 100 1000 2.5\n0 4 3 100 1000 2.1\n");
    let file = d.write(
        "bad.toml",
        &format!("{STAR4}[[traffic]]\nkind = \"flow_file\"\nfile = \"flows.txt\"\n"),
    );
    sfc(d.path(), &["validate", file.to_str().unwrap()]).assert_error(&[
        "bad.toml",
        "traffic[0]",
        "flows.txt:3:",
        "not a host",
    ]);
}

#[test]
fn buffer_smaller_than_a_packet_terminates() {
    let d = TempDir::new("tinybuf");
    let file = d.write(
        "s.toml",
        &format!(
            "{STAR4}[buffer]\nsize = \"1KB\"\n[[traffic]]\nkind = \"all_to_all\"\nsize = \"10KB\"\n"
        ),
    );
    let r = sfc_timeout(
        d.path(),
        &["run", file.to_str().unwrap(), "--no-output"],
        Duration::from_secs(10),
    );
    // Either refused up front (naming the file and buffer.size) or finished.
    assert!(r.status.is_some(), "sfc run did not terminate in 10 s");
    if !r.ok() {
        r.assert_error(&["s.toml", "buffer.size"]);
    }
}

#[test]
fn huge_rto_terminates() {
    // 1e8 s saturates to u64::MAX ps. Either run (no flow needs the RTO) or refuse by key.
    let d = TempDir::new("hugerto");
    let file = d.write(
        "s.toml",
        &format!(
            "{STAR4}[loss_recovery]\nrto = \"1e8s\"\n[[traffic]]\nkind = \"all_to_all\"\nsize = \"10KB\"\n"
        ),
    );
    let r = sfc_timeout(
        d.path(),
        &["run", file.to_str().unwrap(), "--no-output", "--json"],
        Duration::from_secs(10),
    );
    assert!(r.status.is_some(), "sfc run did not terminate in 10 s");
    if !r.ok() {
        r.assert_error(&["s.toml", "loss_recovery.rto"]);
    }
}

// ---------------------------------------------------------------------------------------------
// Help
// ---------------------------------------------------------------------------------------------

#[test]
fn run_help_mentions_outputs() {
    let d = TempDir::new("help");
    let r = sfc(d.path(), &["run", "--help"]);
    r.assert_ok();
    for w in [
        "flows.csv",
        "summary.json",
        "fct.txt",
        "buffer.csv",
        "--set",
        "--out",
    ] {
        assert!(
            r.stdout.contains(w),
            "`sfc run --help` lacks {w}:\n{}",
            r.stdout
        );
    }
}

#[test]
fn help_lists_subcommands() {
    let d = TempDir::new("help");
    let r = sfc(d.path(), &["--help"]);
    r.assert_ok();
    for w in ["run", "validate", "hpcc", "bench"] {
        assert!(
            r.stdout.contains(w),
            "`sfc --help` lacks {w}:\n{}",
            r.stdout
        );
    }
    let r = sfc(d.path(), &["hpcc", "--help"]);
    r.assert_ok();
    assert!(r.stdout.contains("current directory"), "{}", r.stdout);
}

#[test]
fn help_mentions_outputs() {
    let d = TempDir::new("help");
    let r = sfc(d.path(), &["--help"]);
    r.assert_ok();
    assert!(
        r.stdout.contains("flows.csv") && r.stdout.contains("summary.json"),
        "{}",
        r.stdout
    );
}

#[test]
fn bad_command_line_usage() {
    let d = TempDir::new("usage");
    let cases: [&[&str]; 4] = [
        &["frobnicate"],
        &["run", "--bogus-flag"],
        &["validate"],
        &[],
    ];
    for args in cases {
        let r = sfc(d.path(), args);
        assert!(!r.ok(), "sfc {args:?} succeeded");
        assert!(r.status.unwrap().code().is_some());
        r.assert_no_panic();
        assert!(!r.stderr.is_empty(), "sfc {args:?}: no message");
    }
}

#[test]
fn bench_repeat_keeps_every_run_and_reports_scaling() {
    // Two runs of the two smallest leaf-spine benchmarks in quick mode (well under a second).
    let d = TempDir::new("bench-repeat");
    let r = sfc(
        d.path(),
        &["bench", "--quick", "--filter", "scale-", "--repeat", "2"],
    );
    r.assert_ok();
    assert!(
        r.stdout.contains("cost per packet-hop, 1,024 vs 64 hosts"),
        "{}",
        r.stdout
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("out/bench.json")).unwrap())
            .unwrap();
    let runs = json.as_array().unwrap();
    assert_eq!(runs.len(), 3, "scale-64, scale-256, scale-1024");
    for b in runs {
        let all = b["wall_seconds_all"].as_array().unwrap();
        assert_eq!(all.len(), 2);
        let best = b["wall_seconds"].as_f64().unwrap();
        assert!(all.iter().all(|w| w.as_f64().unwrap() >= best));
        assert!(b["packet_hops"].as_u64().unwrap() > 0);
        // A leaf–spine path is 2 links (same ToR) or 4 (through a spine): hops per packet
        // lies between them unless packets were dropped on the way or PFC frames (one hop
        // each) were sent.
        let (hops, packets) = (
            b["packet_hops"].as_f64().unwrap(),
            b["packets"].as_f64().unwrap(),
        );
        let hpp = b["hops_per_packet"].as_f64().unwrap();
        assert!((hpp - hops / packets).abs() < 1e-9);
        let lossless = b["drops"].as_u64() == Some(0) && b["pfc_pauses"].as_u64() == Some(0);
        let low = if lossless { 2.0 } else { 1.0 };
        assert!((low..=4.0).contains(&hpp), "{hpp} hops per packet");
        let per_packet = b["ns_per_packet"].as_f64().unwrap();
        assert!((per_packet / b["ns_per_packet_hop"].as_f64().unwrap() - hpp).abs() < 1e-6);
    }
    sfc(d.path(), &["bench", "--repeat", "0"]).assert_error(&["--repeat"]);
}

/// `--partitions`: one profiled run per benchmark; every partition count sees the same
/// events, one partition has nothing cut and a bound of 1, more partitions cut links and
/// have a window of the cut links' delay; a count of 0 is refused.
#[test]
fn bench_partitions_profile_the_same_run_per_count() {
    let d = TempDir::new("bench-partitions");
    let r = sfc(
        d.path(),
        &[
            "bench",
            "--quick",
            "--filter",
            "scale-64",
            "--partitions",
            "1,2,4",
        ],
    );
    r.assert_ok();
    assert!(
        r.stdout.contains("spin barrier among 2 threads"),
        "{}",
        r.stdout
    );
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(d.path().join("out/bench-partitions.json")).unwrap(),
    )
    .unwrap();
    let b = &json.as_array().unwrap()[0];
    let parts = b["partitions"].as_array().unwrap();
    assert_eq!(parts.len(), 3);
    let events = b["events"].as_u64().unwrap();
    assert!(events > 0);
    for p in parts {
        assert_eq!(p["events"].as_u64(), Some(events));
        let per: u64 = p["events_per_part"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert_eq!(per, events);
        let (crit, windows) = (
            p["critical_events"].as_u64().unwrap(),
            p["windows"].as_u64().unwrap(),
        );
        assert!(crit <= events && windows >= 1);
    }
    assert_eq!(parts[0]["cut_links"].as_u64(), Some(0));
    assert_eq!(parts[0]["speedup_bound"].as_f64(), Some(1.0));
    for p in &parts[1..] {
        assert!(p["cut_links"].as_u64().unwrap() > 0);
        assert!(p["lookahead_ps"].as_u64().unwrap() > 0);
        assert!(p["speedup_bound"].as_f64().unwrap() > 1.0);
    }
    sfc(d.path(), &["bench", "--partitions", "0"]).assert_error(&["--partitions"]);
}

#[test]
fn bench_against_another_build_alternates_and_checks_the_run() {
    // This binary against itself: both sides run the same simulation, so "same run" must hold;
    // every run of both sides is kept.
    let d = TempDir::new("bench-against");
    let me = env!("CARGO_BIN_EXE_sfc");
    let r = sfc(
        d.path(),
        &[
            "bench",
            "--quick",
            "--filter",
            "scale-64",
            "--repeat",
            "3",
            "--against",
            me,
        ],
    );
    r.assert_ok();
    let row = r
        .stdout
        .lines()
        .find(|l| l.starts_with("scale-64"))
        .unwrap_or_else(|| panic!("no scale-64 row:\n{}", r.stdout));
    assert!(row.trim_end().ends_with("yes"), "{row}");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(d.path().join("out/bench-compare.json")).unwrap(),
    )
    .unwrap();
    let b = &json.as_array().unwrap()[0];
    assert_eq!(b["name"], "scale-64");
    assert_eq!(b["same_run"], true);
    for side in ["ours_wall_seconds", "theirs_wall_seconds"] {
        let w = b[side].as_array().unwrap();
        assert_eq!(w.len(), 3, "{side}");
        assert!(
            w.windows(2).all(|p| p[0].as_f64() <= p[1].as_f64()),
            "sorted: {w:?}"
        );
    }
    let best = b["ours_wall_seconds"][0].as_f64().unwrap();
    let theirs = b["theirs_wall_seconds"][0].as_f64().unwrap();
    assert!((b["speedup_best"].as_f64().unwrap() - theirs / best).abs() < 1e-12);
    assert_eq!(b["ours"][0]["events"], b["theirs"][0]["events"]);
    // Another build that simulated a different run (other event count) is flagged, and one
    // that lacks the benchmark is reported and skipped without failing the command.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let fake = |name: &str, body: &str| {
            let p = d.path().join(name);
            // Answers `--version` as an sfc binary does (the probe before benchmarking).
            std::fs::write(
                &p,
                format!(
                    "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'sfc 0.0.0-fake'; exit 0; fi\n{body}\n"
                ),
            )
            .unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
            p.to_str().unwrap().to_string()
        };
        let other = fake(
            "other-run",
            r#"echo '{"wall_seconds": 1000.0, "events": 1, "packet_hops": 1}'"#,
        );
        let against = |bin: &str| {
            let r = sfc(
                d.path(),
                &["bench", "--quick", "--filter", "scale-64", "--against", bin],
            );
            r.assert_ok();
            r
        };
        // A program that is not sfc is refused before any benchmark runs.
        for not_sfc in ["/bin/true", "/bin/echo"] {
            if std::path::Path::new(not_sfc).exists() {
                let r = sfc(
                    d.path(),
                    &[
                        "bench",
                        "--quick",
                        "--filter",
                        "scale-64",
                        "--against",
                        not_sfc,
                    ],
                );
                r.assert_error(&["--against", "not `sfc …`"]);
            }
        }
        let r = against(&other);
        let row = r
            .stdout
            .lines()
            .find(|l| l.starts_with("scale-64"))
            .unwrap();
        assert!(row.trim_end().ends_with("no"), "{row}");
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(d.path().join("out/bench-compare.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(json[0]["same_run"], false);
        assert!(
            json[0]["speedup_best"].as_f64().unwrap() > 1.0,
            "1000 s against ours"
        );
        let lacking = fake("lacking", "echo 'unknown benchmark' >&2; exit 1");
        let r = against(&lacking);
        assert!(
            r.stdout.contains("not run by the other build"),
            "{}",
            r.stdout
        );
        assert!(r.stdout.contains("unknown benchmark"), "{}", r.stdout);
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(d.path().join("out/bench-compare.json")).unwrap(),
        )
        .unwrap();
        assert!(
            json[0]["error"]
                .as_str()
                .unwrap()
                .contains("unknown benchmark")
        );
    }
    // Clear errors: a missing binary, and --against with --print-scenario.
    sfc(d.path(), &["bench", "--quick", "--against", "no/such/sfc"])
        .assert_error(&["no such file"]);
    sfc(
        d.path(),
        &[
            "bench",
            "--print-scenario",
            "sec53-hadoop50-incast-none",
            "--against",
            me,
        ],
    )
    .assert_error(&["cannot be used with"]);
}

// ---------------------------------------------------------------------------------------------
// Robustness: sums past the clock, unbounded tables, oversized inputs
// ---------------------------------------------------------------------------------------------

/// Each time is capped at 1e7 s, but a start plus a window or a duration could pass the end of
/// the u64 picosecond clock (≈ 1.8e7 s) and wrap or saturate silently: refused, naming the
/// keys. So are an SFC BTS delay above 1 s (like link delays), a pause quantum above 1 ms and
/// an OnRamp gain above 100 (huge gains overflowed the pause end).
#[test]
fn times_past_the_clock_are_refused() {
    assert_bad(
        &format!(
            "{STAR4}[[traffic]]\nkind = \"incast\"\nsenders = [1, 2, 3]\nreceivers = [0]\nsize = \"50KB\"\nat = \"1e7s\"\nsync_window = \"1e7s\"\n"
        ),
        &["`traffic[0].at` + `traffic[0].sync_window`", "time range"],
    );
    assert_bad(
        &format!(
            "{STAR4}[[traffic]]\nkind = \"poisson\"\ncdf = \"fb_hadoop\"\nload = 1e-9\nstart = \"1e7s\"\nduration = \"1e7s\"\n"
        ),
        &["`traffic[0].start` + `traffic[0].duration`", "time range"],
    );
    assert_bad(
        &format!(
            "{STAR4}[[traffic]]\nkind = \"incast\"\ndegree = 2\nsize = \"1KB\"\nperiod = \"1s\"\nstart = \"5e6s\"\nduration = \"4e6s\"\nsync_window = \"2e6s\"\n"
        ),
        &["`traffic[0].sync_window`", "time range"],
    );
    for (set, needles) in [
        ("bts_delay = \"1e7s\"", ["sfc.bts_delay", "1s"]),
        ("pause_quantum = \"2ms\"", ["sfc.pause_quantum", "1ms"]),
    ] {
        assert_bad(
            &format!("{STAR4}[sfc]\nmode = \"sfc\"\n{set}\n{INCAST}"),
            &needles,
        );
    }
    for g in ["1e14", "1e300", "101.0"] {
        assert_bad(
            &format!("{STAR4}[onramp]\nenabled = true\ngain = {g}\n{INCAST}"),
            &["onramp.gain", "at most 100"],
        );
    }
    // A flow file's start times have the same range.
    let d = TempDir::new("flowclock");
    d.write("flows.txt", "1\n1 2 3 100 1000 18446744.07370955\n");
    let f = d.write(
        "s.toml",
        &format!("{STAR4}[[traffic]]\nkind = \"flow_file\"\nfile = \"flows.txt\"\n"),
    );
    sfc(d.path(), &["validate", f.to_str().unwrap()]).assert_error(&[
        "flows.txt:2",
        "field 6",
        "time range",
    ]);
    // `sfc trace`: start + time past the clock, and more hosts than a topology may have.
    sfc(
        d.path(),
        &[
            "trace", "--hosts", "4", "--start", "1e7s", "--time", "1e7s", "-o", "t.txt",
        ],
    )
    .assert_error(&["--start + --time", "time range"]);
    sfc(d.path(), &["trace", "--hosts", "100000000", "-o", "t.txt"])
        .assert_error(&["--hosts 100000000", "4194304"]);
    assert!(!d.join("t.txt").exists());
}

/// Scheme tables allocated at every switch are bounded or counted: `sfc.cache_entries` above
/// 65536 is refused (4294967295 aborted allocating 68 GB), and BFC's flow table at the
/// documented maximum `bfc.vfid_table` (≈ 800 MB per switch, 36 GB on a k = 6 fat tree) is in
/// the memory estimate, so the run is refused before allocating, naming the key.
#[test]
fn scheme_tables_are_bounded_and_counted() {
    assert_bad(
        &format!("{STAR4}[sfc]\nmode = \"sfc\"\ncache_entries = 4294967295\n{INCAST}"),
        &["sfc.cache_entries", "65536"],
    );
    let d = TempDir::new("bfctable");
    d.write(
        "ft.toml",
        "[topology]\nkind = \"fat_tree\"\nk = 6\n[buffer]\nmode = \"lossless\"\n\
         [bfc]\nenabled = true\nvfid_table = 16777216\n\
         [[traffic]]\nkind = \"incast\"\nsenders = [1, 2, 3]\nreceivers = [0]\nsize = \"50KB\"\nat = \"1us\"\n",
    );
    for cmd in ["validate ft.toml", "run ft.toml --out o"] {
        let mut c = Command::new("sh");
        c.args(["-c", &format!("ulimit -v 2000000 && exec {SFC} {cmd}")])
            .current_dir(d.path());
        run_with_timeout(c, TIMEOUT).assert_error(&["ft.toml:", "`bfc.vfid_table`", "45 switches"]);
    }
    assert!(!d.join("o").exists());
    // The default table fits.
    sfc(
        d.path(),
        &["validate", "ft.toml", "--set", "bfc.vfid_table=16384"],
    )
    .assert_ok();
}

/// A lossless buffer smaller than its PFC carve-out (every port's headroom plus the
/// per-ingress reserves) was accepted and occupancy exceeded the buffer (2096 B peaked at
/// 116 KB); so was a reserve or a CBFC credit limit larger than the whole buffer. Each is an
/// error naming the key and the bytes.
#[test]
fn lossless_carve_out_must_fit_the_buffer() {
    let lossless = |extra: &str| {
        format!("{STAR4}[buffer]\nmode = \"lossless\"\n{extra}[cc]\nkind = \"dcqcn\"\n{INCAST}")
    };
    assert_bad(
        &lossless("size = 2096\n"),
        &[
            "buffer.size",
            "2096 B at switch 4",
            "lossless carve-out, 166384 B",
        ],
    );
    assert_bad(
        &lossless("size = \"1MB\"\n[pfc]\nreserve = \"1GB\"\n"),
        &["buffer.size", "lossless carve-out", "reserve 1000000000 B"],
    );
    assert_bad(
        &lossless("size = \"1MB\"\nswitch_sizes = { 4 = 2096 }\n"),
        &["buffer.switch_sizes", "2096 B at switch 4"],
    );
    assert_bad(
        &lossless("size = \"1MB\"\n[cbfc]\nenabled = true\nlimit = \"1GB\"\n"),
        &["cbfc.limit", "more than the switch buffer"],
    );
    // A buffer that holds the carve-out runs.
    let d = TempDir::new("carve");
    let s = run_summary(&d, "ok.toml", &lossless("size = \"1MB\"\n"));
    assert!(s["peak_buffer_bytes"].as_u64().unwrap() <= 1_000_000, "{s}");
}

/// Input files are read with limits: a flow file (or one named by an HPCC config) without
/// line breaks stops at the first line past 1 MiB, naming the file and line (`/dev/zero`
/// grew to 16 GB before aborting).
#[test]
fn endless_input_files_are_refused() {
    let d = TempDir::new("devzero");
    let f = d.write(
        "z.toml",
        &format!("{STAR4}[[traffic]]\nkind = \"flow_file\"\nfile = \"/dev/zero\"\n"),
    );
    sfc(d.path(), &["validate", f.to_str().unwrap()]).assert_error(&[
        "traffic[0].file",
        "/dev/zero:1",
        "line longer than 1048576 bytes",
    ]);
    d.write(
        "topo.txt",
        "3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n",
    );
    let c = d.write(
        "config.txt",
        "TOPOLOGY_FILE topo.txt\nFLOW_FILE /dev/zero\nCC_MODE none\nFCT_OUTPUT_FILE fct.txt\n",
    );
    sfc(d.path(), &["hpcc", c.to_str().unwrap()]).assert_error(&[
        "FLOW_FILE",
        "/dev/zero:1",
        "line longer",
    ]);
}

/// An explicit 0 for a key whose default is derived (`sfc.qth`, `sfc.qtg`, `sfc.bloom_reset`,
/// `onramp.threshold`) silently meant the default: now an error saying to omit the key.
#[test]
fn explicit_zero_is_not_the_default() {
    for (section, kv, key) in [
        ("[sfc]\nmode = \"sfc\"", "qth = 0", "sfc.qth"),
        ("[sfc]\nmode = \"sfc\"", "qtg = \"0B\"", "sfc.qtg"),
        (
            "[sfc]\nmode = \"sfc\"",
            "bloom_reset = \"0us\"",
            "sfc.bloom_reset",
        ),
        (
            "[onramp]\nenabled = true",
            "threshold = \"0us\"",
            "onramp.threshold",
        ),
    ] {
        assert_bad(
            &format!("{STAR4}{section}\n{kv}\n{INCAST}"),
            &[key, "must be positive", "omit the key for the"],
        );
    }
}

/// `sfc run` locks its output directory: while another process holds it, a run into it stops
/// at once and leaves the directory's files alone (a second run used to delete the first's
/// spill file mid-run); once released, the same run succeeds.
#[test]
fn run_output_directory_is_locked() {
    let d = TempDir::new("runlock");
    let out = d.path().join("out");
    let lock = sfc::runguard::lock_output_dir(&out, "held by the test").unwrap();
    std::fs::write(out.join(".sfc-records-other.spill"), b"another run's").unwrap();
    let r = run_tiny(&d, TINY, "out", &[]);
    r.assert_error(&["another `sfc run` is writing into this directory"]);
    assert!(
        out.join(".sfc-records-other.spill").exists(),
        "the locked-out run removed a file of the running one"
    );
    // Side-by-side variants lock their parent directory the same way.
    let variants = format!(
        "{TINY}\n[[compare]]\nname = \"a\"\n\n[[compare]]\nname = \"b\"\nset = ['cc.kind=\"dcqcn\"']\n"
    );
    run_tiny(&d, &variants, "out", &[])
        .assert_error(&["another `sfc run` is writing into this directory"]);
    drop(lock);
    run_tiny(&d, TINY, "out", &[]).assert_ok();
}
