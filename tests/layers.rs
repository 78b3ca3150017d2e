//! The module layering: a lower layer never names a higher one. Reads every source file under
//! `src/` (test code excluded) and collects the crate modules it names (`crate::module::…`
//! in code, not in comments), then checks the rules below.
//!
//! Layers, lowest first: utilities (`units`, `rng`, `fsutil`, `process`) → engine (`engine`)
//! → network (`config`: the core settings; `link`, `switch`, `host`, `topology`), congestion
//! control (`cc`), metrics and
//! workloads → scheme interface (`scheme/mod.rs`, `scheme/marking.rs`, `scheme/pause.rs`) →
//! schemes (`scheme/<name>/`) → simulator (`sim`: the event loop, the forwarding path, the
//! NIC) → run planning (`runguard`) → front-ends (`scenario`, `hpcc`, `experiment`, `bench`,
//! `report`, `plot`, the CLI), with the scheme registry (`registry`: the list of schemes and
//! the full network configuration) between the schemes and the simulator. Each rule names the
//! layer it protects, and `the_module_graph_has_no_cycle` checks the whole graph.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// One source file: where it sits in the module tree and the crate modules its code names.
struct Source {
    /// Path relative to `src/`, e.g. `scheme/tcd/switch.rs`.
    rel: String,
    /// Each `crate::a::b` path of its code as `a` or, for `crate::scheme::name`, `scheme::name`.
    names: BTreeSet<String>,
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).expect("read src") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `text` without string and character literals and without comments, so that only code
/// is searched (raw strings are not used in `src/`).
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '"' => {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                out.push_str("\"\"");
            }
            // A character literal ('x', '\n', '\''); otherwise a lifetime.
            '\'' if chars.get(i + 1) == Some(&'\\') => {
                i += 3;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
            }
            '\'' if chars.get(i + 2) == Some(&'\'') => i += 2,
            c => out.push(c),
        }
        i += 1;
    }
    out
}

/// `code` without its `#[cfg(test)]` modules (an inline `mod … { … }` is cut up to its
/// closing brace).
fn without_tests(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(i) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..i]);
        let after = &rest[i + "#[cfg(test)]".len()..];
        let item = after.trim_start();
        if !(item.starts_with("mod ") || item.starts_with("pub mod ")) {
            out.push_str("#[cfg(test)]");
            rest = after;
            continue;
        }
        let Some(open) = item.find(['{', ';']) else {
            break;
        };
        if item.as_bytes()[open] == b';' {
            rest = &item[open + 1..];
            continue;
        }
        let mut depth = 0usize;
        let mut end = item.len();
        for (k, c) in item[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The files declared as `#[cfg(test)] mod name;` (test-only files), as paths under `src/`.
fn test_only_files(root: &Path, files: &[PathBuf]) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    for f in files {
        let text = fs::read_to_string(f).expect("read source");
        let lines: Vec<&str> = text.lines().collect();
        for w in lines.windows(2) {
            let name = w[1]
                .trim()
                .trim_start_matches("pub ")
                .strip_prefix("mod ")
                .and_then(|r| r.strip_suffix(';'));
            if w[0].trim() == "#[cfg(test)]"
                && let Some(name) = name
            {
                let dir = f.parent().expect("parent");
                out.insert(dir.join(format!("{name}.rs")));
                out.insert(dir.join(name).join("mod.rs"));
            }
        }
    }
    out.retain(|p| p.starts_with(root));
    out
}

/// The crate modules named by `code`: `crate::a::…` as `a`, and `crate::scheme::b…` (or
/// `crate::scheme::{b…, …}`) also as `scheme::b` for each lowercase `b`.
fn names(code: &str) -> BTreeSet<String> {
    let word = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        rest = after;
        let first = word(after);
        out.insert(first.clone());
        let Some(r) = after[first.len()..].strip_prefix("::") else {
            continue;
        };
        if first != "scheme" {
            continue;
        }
        let items: Vec<String> = match r.strip_prefix('{') {
            Some(list) => list
                .split('}')
                .next()
                .unwrap_or("")
                .split(',')
                .map(|x| word(x.trim()))
                .collect(),
            None => vec![word(r)],
        };
        for x in items {
            if x.chars().next().is_some_and(|c| c.is_lowercase()) {
                out.insert(format!("scheme::{x}"));
            }
        }
    }
    out
}

/// Every non-test source file of the crate.
fn sources() -> Vec<Source> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let tests = test_only_files(&root, &files);
    files.sort();
    files
        .into_iter()
        .filter(|f| !tests.contains(f))
        .map(|f| {
            let text = fs::read_to_string(&f).expect("read source");
            Source {
                rel: f
                    .strip_prefix(&root)
                    .expect("under src")
                    .to_string_lossy()
                    .replace('\\', "/"),
                names: names(&without_tests(&code_only(&text))),
            }
        })
        .collect()
}

/// The scheme folder a file belongs to (`scheme/tcd/switch.rs` → `tcd`), if any.
fn scheme_of(rel: &str) -> Option<&str> {
    let mut parts = rel.split('/');
    (parts.next() == Some("scheme"))
        .then(|| parts.next())
        .flatten()
        .filter(|_| rel.matches('/').count() >= 2)
}

/// The top-level module of a file (`engine/packet.rs` → `engine`, `units.rs` → `units`).
fn top_of(rel: &str) -> &str {
    rel.split('/')
        .next()
        .expect("a path")
        .trim_end_matches(".rs")
}

/// Files of `layer` (top-level modules) that name a module outside `allowed` (with their
/// own layer's modules allowed).
fn violations(layer: &[&str], allowed: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for s in sources() {
        if !layer.contains(&top_of(&s.rel)) {
            continue;
        }
        for n in &s.names {
            let top = n.split("::").next().expect("a name");
            if !layer.contains(&top) && !allowed.contains(&top) {
                out.push(format!("src/{} names crate::{n}", s.rel));
            }
        }
    }
    out
}

const UTILITIES: [&str; 4] = ["units", "rng", "fsutil", "process"];

/// The scheme registry, the simulator, run planning and the front-ends: what no lower layer
/// may name.
const ABOVE_SCHEMES: [&str; 10] = [
    "registry",
    "capture",
    "sim",
    "runguard",
    "scenario",
    "hpcc",
    "experiment",
    "bench",
    "report",
    "plot",
];

/// Files of `layer` (top-level modules) that name a module of `forbidden`.
fn naming(layer: &[&str], forbidden: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for s in sources() {
        if !layer.contains(&top_of(&s.rel)) {
            continue;
        }
        for n in &s.names {
            if forbidden.contains(&n.split("::").next().expect("a name")) {
                out.push(format!("src/{} names crate::{n}", s.rel));
            }
        }
    }
    out
}

/// The network's modules hold state and pure mechanisms; the simulator drives them (the
/// forwarding path and the NIC are `sim::forward` and `sim::nic`), so none of them names the
/// simulator or anything above it.
#[test]
fn the_network_names_nothing_above_the_schemes() {
    let v = naming(&["link", "switch", "host", "topology"], &ABOVE_SCHEMES);
    assert!(
        v.is_empty(),
        "the network layer names a higher layer:\n{}",
        v.join("\n")
    );
}

/// Metrics, workloads and congestion control are used by the simulator and the run planner,
/// never the other way round (the temporary-file registry and the memory query they need are
/// the `process` utility's).
#[test]
fn metrics_workloads_and_controllers_name_nothing_above_the_schemes() {
    let v = naming(&["metrics", "workload", "cc"], &ABOVE_SCHEMES);
    assert!(
        v.is_empty(),
        "metrics, workloads or controllers name a higher layer:\n{}",
        v.join("\n")
    );
}

/// Congestion controllers are below the schemes: a scheme reaches them through
/// `CongestionControl::on_scheme_signal` and the echoed marks of `AckInfo`, and the hold mode
/// (TCD at the reaction point) is the controllers' own (`cc::hold`). So `cc` names no scheme.
#[test]
fn controllers_name_no_scheme() {
    let v = naming(&["cc"], &["scheme"]);
    assert!(
        v.is_empty(),
        "a controller names a scheme:\n{}",
        v.join("\n")
    );
}

/// Every scheme folder: none names the simulator, run planning or a front-end.
#[test]
fn schemes_name_nothing_above_them() {
    let v = naming(&["scheme"], &ABOVE_SCHEMES);
    assert!(
        v.is_empty(),
        "a scheme names a higher layer:\n{}",
        v.join("\n")
    );
}

#[test]
fn utilities_name_only_utilities() {
    let v = violations(&UTILITIES, &[]);
    assert!(
        v.is_empty(),
        "the utility layer names a higher layer:\n{}",
        v.join("\n")
    );
}

#[test]
fn the_engine_names_only_utilities() {
    let v = violations(&["engine"], &UTILITIES);
    assert!(
        v.is_empty(),
        "the engine names a higher layer:\n{}",
        v.join("\n")
    );
}

/// The scheme folders (`src/scheme/<name>/`).
fn scheme_folders() -> BTreeSet<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/scheme");
    fs::read_dir(dir)
        .expect("read src/scheme")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().expect("name").to_string_lossy().into_owned())
        .collect()
}

/// A scheme names no other scheme (what two schemes share lives in the scheme interface or
/// below) and no traffic generation (the workload is above the schemes).
#[test]
fn schemes_name_no_other_scheme_and_no_workload() {
    let folders = scheme_folders();
    assert!(
        folders.contains("tcd") && folders.contains("cbfc"),
        "{folders:?}"
    );
    let mut v = Vec::new();
    for s in sources() {
        let Some(own) = scheme_of(&s.rel) else {
            continue;
        };
        for n in &s.names {
            let sibling = n
                .strip_prefix("scheme::")
                .is_some_and(|x| x != own && folders.contains(x));
            if sibling || n == "workload" {
                v.push(format!("src/{} names crate::{n}", s.rel));
            }
        }
    }
    assert!(
        v.is_empty(),
        "a scheme names a sibling or a higher layer:\n{}",
        v.join("\n")
    );
}

/// The module graph's node of a file: its scheme folder (`scheme::tcd`) or its top-level
/// module (`scheme` for the scheme interface's files).
fn node_of(rel: &str) -> String {
    match scheme_of(rel) {
        Some(s) => format!("scheme::{s}"),
        None => top_of(rel).to_string(),
    }
}

/// A cycle of the directed graph `edges` (node → the nodes it names), as its nodes in order,
/// if there is one.
fn find_cycle(edges: &std::collections::BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    // Depth-first search; 1 = on the current path, 2 = done.
    fn visit(
        n: &str,
        edges: &std::collections::BTreeMap<String, BTreeSet<String>>,
        state: &mut std::collections::BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        path.push(n.to_string());
        for m in edges.get(n).into_iter().flatten() {
            match state.get(m.as_str()) {
                Some(1) => {
                    let start = path.iter().position(|x| x == m).expect("on the path");
                    let mut c = path[start..].to_vec();
                    c.push(m.clone());
                    return Some(c);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(m, edges, state, path) {
                        return Some(c);
                    }
                }
            }
        }
        path.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = std::collections::BTreeMap::new();
    for n in edges.keys() {
        if !state.contains_key(n.as_str())
            && let Some(c) = visit(n, edges, &mut state, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

/// The whole module graph — top-level modules, with each scheme folder a node of its own —
/// has no import cycle: every module sits strictly above the modules it names, so the layers
/// above are a partial order the code cannot quietly break.
#[test]
fn the_module_graph_has_no_cycle() {
    let mut edges: std::collections::BTreeMap<String, BTreeSet<String>> = Default::default();
    for s in sources() {
        let from = node_of(&s.rel);
        if from == "main" || from == "lib" {
            continue;
        }
        let to = edges.entry(from.clone()).or_default();
        for n in &s.names {
            let node = if n.starts_with("scheme::") {
                n.clone()
            } else {
                n.split("::").next().expect("a name").to_string()
            };
            if node != from {
                to.insert(node);
            }
        }
    }
    assert!(edges.len() > 20, "{edges:?}");
    if let Some(c) = find_cycle(&edges) {
        panic!("import cycle: {}", c.join(" → "));
    }
    // The search finds a planted one.
    let mut planted = edges.clone();
    planted
        .entry("engine".into())
        .or_default()
        .insert("sim".into());
    assert!(find_cycle(&planted).is_some());
}

/// The scanner itself: comments, strings and test modules are not code; a sibling scheme
/// and the scheme interface are told apart.
#[test]
fn the_scanner_reads_code_only() {
    let text = "use crate::units::US; // crate::sim\n/// [`crate::sim::Simulator`]\n\
                let s = \"crate::sim \\\" crate::host\"; let c = '\"'; let q = '\\'';\n\
                fn f<'a>(x: &'a str) {}\n\
                use crate::scheme::{Env, marking, cbfc::Credits};\n\
                use crate::scheme::tcd::TcdParams;\n\
                #[cfg(test)]\nmod tests {\n    use crate::sim::Simulator;\n    fn f() { {} }\n}\n\
                use crate::engine::Event;\n";
    let got = names(&without_tests(&code_only(text)));
    let want: BTreeSet<String> = [
        "units",
        "scheme",
        "scheme::marking",
        "scheme::cbfc",
        "scheme::tcd",
        "engine",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(got, want);
    assert_eq!(scheme_of("scheme/tcd/switch.rs"), Some("tcd"));
    assert_eq!(scheme_of("scheme/mod.rs"), None);
    assert_eq!(scheme_of("scheme/marking.rs"), None);
    assert_eq!(top_of("engine/packet.rs"), "engine");
}
