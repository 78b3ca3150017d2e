//! The book's scenario reference (`docs/src/scenarios.md`) against the parser: every key the
//! chapter documents is accepted by `sfc validate` (no "unknown field"), a key it does not
//! document is rejected (so the check can fail), and every key that the shipped scenarios and
//! experiments use is documented. The reference cannot drift from the code without this
//! test failing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Documented keys per table: `""` for the top level, `"topology"`, `"traffic"`, … Read from
/// the key tables (header row `| key | …`) under each `## \`[table]\`` / `## Top level` heading.
fn documented() -> BTreeMap<String, BTreeSet<String>> {
    let text = std::fs::read_to_string(root().join("docs/src/scenarios.md")).unwrap();
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut table: Option<String> = None;
    let mut in_key_table = false;
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            in_key_table = false;
            table = if h.starts_with("Top level") {
                Some(String::new())
            } else if let Some(rest) = h.strip_prefix("`[") {
                let name = rest.trim_start_matches('[');
                let end = name.find(']').expect("table heading");
                Some(name[..end].to_string())
            } else {
                None
            };
            continue;
        }
        if line.starts_with("| key |") {
            in_key_table = table.is_some();
            continue;
        }
        if !line.starts_with('|') {
            in_key_table = false;
            continue;
        }
        if !in_key_table || line.starts_with("|---") {
            continue;
        }
        let first = line[1..].split('|').next().unwrap_or("");
        // The first cell: one or more `key` names, comma-separated.
        for part in first.split('`').skip(1).step_by(2) {
            if !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            {
                out.entry(table.clone().unwrap())
                    .or_default()
                    .insert(part.to_string());
            }
        }
    }
    out
}

/// A small valid scenario with one generator, so that `traffic.0.KEY` exists.
const BASE: &str = r#"
name = "ref"
[topology]
kind = "star"
hosts = 4
[[traffic]]
kind = "incast"
senders = [1, 2]
receivers = [0]
size = "4KB"
at = "1us"
"#;

fn validate(dir: &Path, file_text: &str, sets: &[String]) -> String {
    let file = dir.join("s.toml");
    std::fs::write(&file, file_text).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sfc"));
    cmd.arg("validate").arg(&file);
    for s in sets {
        cmd.arg("--set").arg(s);
    }
    let o = cmd.output().unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn unknown(msg: &str) -> bool {
    msg.contains("unknown field") || msg.contains("unknown key")
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sfc-scenario-ref-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A key given in `table` (as the scenario's own TOML would place it).
fn probe(dir: &Path, table: &str, key: &str) -> String {
    match table {
        "" => validate(dir, &format!("{key} = 1\n{BASE}"), &[]),
        "compare" => validate(dir, &format!("{BASE}\n[[compare]]\n{key} = 1\n"), &[]),
        "traffic" => validate(dir, BASE, &[format!("traffic.0.{key}=1")]),
        t => validate(dir, BASE, &[format!("{t}.{key}=1")]),
    }
}

#[test]
fn every_documented_scenario_key_is_accepted() {
    let doc = documented();
    for t in [
        "", "topology", "network", "buffer", "cc", "traffic", "output",
    ] {
        assert!(
            doc.get(t).is_some_and(|k| k.len() > 1),
            "the reference documents no keys of `[{t}]`: {doc:?}"
        );
    }
    let dir = temp_dir("accept");
    let mut rejected = Vec::new();
    for (table, keys) in &doc {
        for key in keys {
            let msg = probe(&dir, table, key);
            if unknown(&msg) {
                rejected.push(format!("[{table}] {key}: {}", msg.trim()));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        rejected.is_empty(),
        "docs/src/scenarios.md documents keys the parser rejects:\n{}",
        rejected.join("\n")
    );
}

#[test]
fn an_undocumented_key_is_rejected() {
    // The probe above can only fail if the parser really reports unknown keys this way.
    let dir = temp_dir("reject");
    for (table, key) in [
        ("", "no_such_key"),
        ("cc", "etaa"),
        ("traffic", "no_such_key"),
        ("compare", "no_such_key"),
    ] {
        let msg = probe(&dir, table, key);
        assert!(unknown(&msg), "[{table}] {key} was not rejected: {msg}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Keys a scenario document uses: `(table, key)` for the top level, every table and every
/// entry of an array of tables (nested tables such as `buffer.switch_sizes` stop at their key).
fn keys_of(doc: &toml::Table, out: &mut BTreeSet<(String, String)>) {
    for (k, v) in doc {
        match v {
            toml::Value::Table(t) => {
                for key in t.keys() {
                    out.insert((k.clone(), key.clone()));
                }
            }
            toml::Value::Array(a) if a.iter().all(|x| x.is_table()) && !a.is_empty() => {
                for x in a {
                    for key in x.as_table().unwrap().keys() {
                        out.insert((k.clone(), key.clone()));
                    }
                }
            }
            _ => {
                out.insert((String::new(), k.clone()));
            }
        }
    }
}

/// `table.key` (or `table.N.key`, or a top-level `key`) of an override `key=value`.
fn key_of_set(s: &str) -> (String, String) {
    let path = s.split('=').next().unwrap().trim();
    let parts: Vec<&str> = path
        .split('.')
        .filter(|p| p.parse::<u64>().is_err())
        .collect();
    match parts.as_slice() {
        [k] => (String::new(), k.to_string()),
        [t, k, ..] => (t.to_string(), k.to_string()),
        _ => panic!("override {s}"),
    }
}

fn sets_in(v: &toml::Value, out: &mut BTreeSet<(String, String)>) {
    match v {
        toml::Value::Table(t) => {
            for (k, x) in t {
                if k == "set" {
                    for s in x.as_array().into_iter().flatten() {
                        if let Some(s) = s.as_str() {
                            out.insert(key_of_set(s));
                        }
                    }
                } else {
                    sets_in(x, out);
                }
            }
        }
        toml::Value::Array(a) => a.iter().for_each(|x| sets_in(x, out)),
        _ => {}
    }
}

#[test]
fn every_key_the_shipped_files_use_is_documented() {
    let doc = documented();
    let mut used = BTreeSet::new();
    for entry in std::fs::read_dir(root().join("scenarios")).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "toml") {
            let t: toml::Table = std::fs::read_to_string(&p).unwrap().parse().unwrap();
            keys_of(&t, &mut used);
            sets_in(&toml::Value::Table(t), &mut used);
        }
    }
    for entry in std::fs::read_dir(root().join("experiments")).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "toml") {
            let t: toml::Table = std::fs::read_to_string(&p).unwrap().parse().unwrap();
            if let Some(toml::Value::Table(s)) = t.get("scenario") {
                keys_of(s, &mut used);
            }
            // Series, quick and axis overrides name scenario keys too.
            sets_in(&toml::Value::Table(t.clone()), &mut used);
            let sweep = t.get("sweep");
            let quick = t.get("quick");
            for axes in [sweep, quick]
                .into_iter()
                .flatten()
                .filter_map(|s| s.get("axes").and_then(|a| a.as_array()))
            {
                for a in axes {
                    if let Some(k) = a.get("key").and_then(|k| k.as_str()) {
                        used.insert(key_of_set(k));
                    }
                }
            }
        }
    }
    let missing: Vec<String> = used
        .iter()
        .filter(|(t, k)| !doc.get(t).is_some_and(|ks| ks.contains(k)))
        .map(|(t, k)| {
            if t.is_empty() {
                k.clone()
            } else {
                format!("{t}.{k}")
            }
        })
        .collect();
    assert!(
        missing.is_empty(),
        "keys used by scenarios/ or experiments/ but not documented in docs/src/scenarios.md: {missing:?}"
    );
}

/// The parser's own list of a table's keys (serde's "expected one of `a`, `b`" after an unknown
/// key), where the error gives one: every key in it is documented under that table.
#[test]
fn every_key_the_parser_lists_is_documented() {
    let doc = documented();
    let dir = temp_dir("list");
    let mut missing = Vec::new();
    let mut listed = 0;
    for table in doc.keys() {
        let msg = probe(&dir, table, "no_such_key");
        let Some(i) = msg.find("expected one of ") else {
            continue;
        };
        let rest = &msg[i + "expected one of ".len()..];
        let rest = rest.lines().next().unwrap_or("");
        for key in rest.split('`').skip(1).step_by(2) {
            listed += 1;
            // The top level lists the tables too (`cc`, `traffic`, …).
            let is_table = table.is_empty() && doc.contains_key(key);
            if !is_table && !doc[table].contains(key) {
                missing.push(if table.is_empty() {
                    key.to_string()
                } else {
                    format!("{table}.{key}")
                });
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(listed > 50, "the parser listed only {listed} keys");
    assert!(
        missing.is_empty(),
        "keys the parser accepts but docs/src/scenarios.md does not document: {missing:?}"
    );
}
