//! `output.format = "parquet"` / `sfc run --format parquet`: the same run written as CSV and
//! as Parquet holds the same tables — same columns in the same order, same rows, every value
//! equal (integers exactly; times and floats as the CSV's text parses) — read back with the
//! `parquet` crate's reader. Unknown formats are refused with the usual file:line:key error.

mod common;

use common::{Run, TempDir, run_with_timeout};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const SFC: &str = env!("CARGO_BIN_EXE_sfc");

fn sfc(cwd: &Path, args: &[&str]) -> Run {
    let mut cmd = Command::new(SFC);
    cmd.args(args).current_dir(cwd);
    run_with_timeout(cmd, Duration::from_secs(60))
}

/// A 4-host star with Poisson background, an incast and a long flow, stopped before every
/// flow is done (unfinished flows: null `fct_ns` / `slowdown`), monitoring two queues and
/// metering senders too (every table is written).
const SCENARIO: &str = r#"name = "pq"
seed = 3
stop = "120us"

[topology]
kind = "star"
hosts = 4
host_rate = "100Gbps"
host_delay = "1us"

[buffer]
mode = "lossy"
size = "4MiB"

[cc]
kind = "dcqcn"

[output]
queues = [[4, 0], [4, 3]]
queue_interval = "500ns"
sender_throughput = true

[[traffic]]
kind = "poisson"
cdf = "fb_hadoop"
load = 0.5
duration = "100us"

[[traffic]]
kind = "incast"
senders = [0, 1, 2]
receivers = [3]
size = "40KB"
at = "10us"

[[traffic]]
kind = "long_lived"
pairs = [[0, 1]]
size = "3MB"
start = "5us"
"#;

/// The CSV at `path`: header and rows of cells.
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(String::from).collect();
    let rows = lines
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    (header, rows)
}

/// Column names and every row (as fields) of the Parquet file at `path`.
fn read_parquet(path: &Path) -> (Vec<String>, Vec<Vec<Field>>) {
    let r = SerializedFileReader::try_from(path).unwrap();
    let names = r
        .metadata()
        .file_metadata()
        .schema_descr()
        .columns()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    let rows = r
        .get_row_iter(None)
        .unwrap()
        .map(|row| {
            row.unwrap()
                .get_column_iter()
                .map(|(_, f)| f.clone())
                .collect()
        })
        .collect();
    (names, rows)
}

/// `table.csv` of `csv_dir` and `table.parquet` of `pq_dir` hold the same table; returns its
/// row count.
fn same_table(csv_dir: &Path, pq_dir: &Path, table: &str) -> usize {
    let (ch, crows) = read_csv(&csv_dir.join(format!("{table}.csv")));
    let (ph, prows) = read_parquet(&pq_dir.join(format!("{table}.parquet")));
    assert_eq!(ch, ph, "{table}: columns");
    assert_eq!(crows.len(), prows.len(), "{table}: rows");
    for (i, (c, p)) in crows.iter().zip(&prows).enumerate() {
        assert_eq!(c.len(), p.len(), "{table} row {i}");
        for ((cell, field), name) in c.iter().zip(p).zip(&ch) {
            let ok = match field {
                Field::Long(v) => cell.parse::<i64>() == Ok(*v),
                // Bit for bit: the double a CSV reader parses from the exact decimal.
                Field::Double(v) => cell.parse::<f64>().map(f64::to_bits) == Ok(v.to_bits()),
                Field::Null => cell.is_empty(),
                other => panic!("{table}.{name}: unexpected type {other:?}"),
            };
            assert!(
                ok,
                "{table} row {i} {name}: CSV `{cell}`, Parquet {field:?}"
            );
        }
    }
    // Only where the CSV has text do the types differ: integers are INT64, times DOUBLE.
    crows.len()
}

/// The same run as CSV (default) and as Parquet (`--format parquet` and `output.format`),
/// with results streamed (the default) and kept (OnRamp keeps its records): equal tables.
#[test]
fn parquet_tables_equal_the_csv_tables() {
    let d = TempDir::new("parquet");
    let f = d.write("pq.toml", SCENARIO);
    let f = f.to_str().unwrap();
    for (tag, extra) in [
        ("streamed", &[][..]),
        ("kept", &["--set", "onramp.enabled=true"][..]),
    ] {
        let (c, p, q) = (
            format!("csv-{tag}"),
            format!("pq-{tag}"),
            format!("pqset-{tag}"),
        );
        let mut args = vec!["run", f, "--out", &c];
        args.extend(extra);
        sfc(d.path(), &args).assert_ok();
        let mut args = vec!["run", f, "--out", &p, "--format", "parquet"];
        args.extend(extra);
        sfc(d.path(), &args).assert_ok();
        let mut args = vec!["run", f, "--out", &q, "--set", "output.format=\"parquet\""];
        args.extend(extra);
        sfc(d.path(), &args).assert_ok();
        let (cd, pd) = (d.join(&c), d.join(&p));
        let flows = same_table(&cd, &pd, "flows");
        assert!(flows > 20, "{tag}: {flows} flows");
        let (_, rows) = read_csv(&cd.join("flows.csv"));
        assert!(
            rows.iter().any(|r| r[13] == "0") && rows.iter().any(|r| r[13] == "1"),
            "{tag}: both finished and unfinished flows"
        );
        for t in ["buffer", "throughput", "sender_throughput", "queues"] {
            assert!(same_table(&cd, &pd, t) > 0, "{tag}: {t} empty");
        }
        for t in [
            "flows",
            "buffer",
            "throughput",
            "sender_throughput",
            "queues",
        ] {
            assert!(!pd.join(format!("{t}.csv")).exists(), "{tag}: {t}.csv");
            assert!(
                !cd.join(format!("{t}.parquet")).exists(),
                "{tag}: {t}.parquet"
            );
            assert_eq!(
                d.bytes(&format!("{p}/{t}.parquet")),
                d.bytes(&format!("{q}/{t}.parquet")),
                "{tag}: {t}: --format and output.format"
            );
        }
        // The rest of the outputs do not depend on the format.
        for f in ["fct.txt", "links.csv"] {
            assert_eq!(
                d.bytes(&format!("{c}/{f}")),
                d.bytes(&format!("{p}/{f}")),
                "{f}"
            );
        }
        // No temp file left behind.
        for e in std::fs::read_dir(&pd).unwrap() {
            let n = e.unwrap().file_name().to_string_lossy().to_string();
            assert!(!n.contains(".tmp-"), "{tag}: {n}");
        }
    }
}

/// A Parquet run into a directory that held a CSV run (and the reverse) leaves only the new
/// run's tables.
#[test]
fn switching_formats_leaves_no_stale_tables() {
    let d = TempDir::new("parquet-switch");
    let f = d.write("pq.toml", SCENARIO);
    let f = f.to_str().unwrap();
    sfc(d.path(), &["run", f, "--out", "o"]).assert_ok();
    sfc(d.path(), &["run", f, "--out", "o", "--format", "parquet"]).assert_ok();
    assert!(d.join("o/flows.parquet").exists() && !d.join("o/flows.csv").exists());
    sfc(d.path(), &["run", f, "--out", "o", "--format", "csv"]).assert_ok();
    assert!(!d.join("o/flows.parquet").exists() && d.join("o/flows.csv").exists());
}

/// An unknown format: the file:line:key error, before any run.
#[test]
fn unknown_format_is_an_error_at_its_line() {
    let d = TempDir::new("parquet-bad");
    let text = SCENARIO.replace("[output]\n", "[output]\nformat = \"feather\"\n");
    let f = d.write("bad.toml", &text);
    let line = text.lines().position(|l| l.starts_with("format")).unwrap() + 1;
    let r = sfc(d.path(), &["run", f.to_str().unwrap(), "--out", "o"]);
    r.assert_error(&[
        &format!("bad.toml:{line}"),
        "output.format",
        "expected `csv` or `parquet`",
    ]);
    let r = sfc(
        d.path(),
        &["run", f.to_str().unwrap(), "--format", "feather"],
    );
    assert!(!r.ok());
}
