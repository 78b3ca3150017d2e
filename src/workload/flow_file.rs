//! The HPCC simulator's flow file (`mix/flow.txt`, written by `traffic_gen.py`):
//!
//! ```text
//! <flow_num>
//! <src> <dst> <pg> <dport> <size_bytes> <start_time_s>     (flow_num lines)
//! ```
//!
//! Start times are seconds printed as `%.9f`; they are parsed exactly into picoseconds from their
//! decimal text. Lines after the declared count are ignored (as HPCC does). Two quirks of
//! `traffic_gen.py` are tolerated with a warning: the count is overwritten in place without
//! truncation, leaving stale digits either on a line of their own (skipped) or appended to the
//! count (detected when the file holds exactly the prefix's number of flows).

use super::FlowSpec;
use crate::topology::TopologySpec;
use std::path::Path;

/// Picoseconds per second.
const PS_PER_S: u64 = 1_000_000_000_000;

/// Parse a non-negative decimal number of seconds into picoseconds, exactly for plain decimals
/// (up to 12 fractional digits; more are rounded half-up to the picosecond) and via `f64` for
/// exponent forms (`2e-3`).
fn parse_seconds_ps(tok: &str) -> Result<u64, String> {
    let t = tok.strip_prefix('+').unwrap_or(tok);
    if t.starts_with('-') {
        return Err("is negative".to_string());
    }
    if t.contains(['e', 'E']) {
        let v: f64 = t.parse().map_err(|_| "is not a number".to_string())?;
        let ps = v * PS_PER_S as f64;
        if !(ps.is_finite() && ps >= 0.0 && ps < u64::MAX as f64) {
            return Err("is out of range".to_string());
        }
        return Ok(ps.round() as u64);
    }
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    if int.is_empty() && frac.is_empty() {
        return Err("is not a number".to_string());
    }
    if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return Err("is not a decimal number".to_string());
    }
    let whole: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| "is out of range".to_string())?
    };
    let mut frac_ps: u64 = 0;
    for i in 0..12 {
        let d = frac.as_bytes().get(i).map_or(0, |b| (b - b'0') as u64);
        frac_ps = frac_ps * 10 + d;
    }
    if frac.as_bytes().get(12).is_some_and(|&b| b >= b'5') {
        frac_ps += 1;
    }
    whole
        .checked_mul(PS_PER_S)
        .and_then(|w| w.checked_add(frac_ps))
        .ok_or_else(|| "is out of range".to_string())
}

/// Parse one integer field, naming `name:line` and the field on failure.
fn field<T: std::str::FromStr>(
    tok: &str,
    idx: usize,
    what: &str,
    name: &str,
    line: usize,
) -> Result<T, String> {
    tok.parse().map_err(|_| {
        format!(
            "{name}:{line}: field {idx} ({what}) `{tok}` is not a valid {}",
            std::any::type_name::<T>()
        )
    })
}

/// Parse an HPCC flow file. `name` (usually the path) prefixes error messages as `name:line`.
///
/// Returns the flows sorted by start time (stably, keeping file order at equal times) and a list
/// of warnings (stale count digits, ignored extra lines, unsorted input). Errors: a missing or
/// malformed count, fewer flow lines than declared, a line without exactly 6 fields, an invalid
/// field (ids `u32`, pg `u8`, dport `u16`, size `u64` ≥ 1, start a non-negative decimal in
/// seconds). Whether ids are hosts is not checked here: use [`parse_with`] and
/// [`check_endpoints`] to check them while the line numbers are known.
pub fn parse(text: &str, name: &str) -> Result<(Vec<FlowSpec>, Vec<String>), String> {
    parse_with(text, name, |_| Ok(()))
}

/// Like [`parse`], and also run `check` on every flow as its line is read (before sorting by
/// start time), so a flow it rejects is reported as `name:line: flow `…`: <check's message>`.
/// Typically `check` is [`check_endpoints`] against the topology.
pub fn parse_with(
    text: &str,
    name: &str,
    check: impl Fn(&FlowSpec) -> Result<(), String>,
) -> Result<(Vec<FlowSpec>, Vec<String>), String> {
    let mut warnings = Vec::new();
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty())
        .peekable();
    let Some((cl, count_line)) = lines.next() else {
        return Err(format!(
            "{name}: empty flow file (expected the flow count on line 1)"
        ));
    };
    let ctoks: Vec<&str> = count_line.split_whitespace().collect();
    if ctoks.len() != 1 {
        return Err(format!(
            "{name}:{cl}: expected the flow count alone on the first line, found `{count_line}`"
        ));
    }
    let count_str = ctoks[0];
    let declared: u64 = count_str.parse().map_err(|_| {
        format!("{name}:{cl}: flow count `{count_str}` is not a non-negative integer")
    })?;
    // traffic_gen.py stale digits on a line of their own.
    if let Some(&(l2, second)) = lines.peek()
        && second.split_whitespace().count() == 1
    {
        warnings.push(format!(
            "{name}:{l2}: skipped `{second}` (stale digits of the flow count left by traffic_gen.py)"
        ));
        lines.next();
    }
    let cap = declared.min(text.len() as u64 / 12 + 1) as usize;
    let mut flows: Vec<FlowSpec> = Vec::with_capacity(cap);
    let mut line_of: Vec<usize> = Vec::with_capacity(cap);
    while (flows.len() as u64) < declared {
        let Some((ln, l)) = lines.next() else { break };
        let t: Vec<&str> = l.split_whitespace().collect();
        if t.len() != 6 {
            return Err(format!(
                "{name}:{ln}: expected `src dst pg dport size start_s` (6 fields), found {}: `{l}`",
                t.len()
            ));
        }
        let src: u32 = field(t[0], 1, "src", name, ln)?;
        let dst: u32 = field(t[1], 2, "dst", name, ln)?;
        let prio: u8 = field(t[2], 3, "pg", name, ln)?;
        if prio == 0 || prio > 7 {
            // Queue 0 is the strict-priority control class; HPCC-sim has 8 queues (pg 1..=7).
            return Err(format!(
                "{name}:{ln}: field 3 (pg) = {prio} must be in 1..=7 (queue 0 is the control class)"
            ));
        }
        let dport: u16 = field(t[3], 4, "dport", name, ln)?;
        let size_bytes: u64 = field(t[4], 5, "size", name, ln)?;
        if size_bytes == 0 {
            return Err(format!(
                "{name}:{ln}: field 5 (size) must be at least 1 byte"
            ));
        }
        let start_ps = parse_seconds_ps(t[5])
            .map_err(|e| format!("{name}:{ln}: field 6 (start_time_s) `{}` {e}", t[5]))?;
        let flow = FlowSpec {
            src,
            dst,
            size_bytes,
            start_ps,
            prio,
            dport,
        };
        check(&flow).map_err(|e| format!("{name}:{ln}: flow `{l}`: {e}"))?;
        flows.push(flow);
        line_of.push(ln);
    }
    let found = flows.len() as u64;
    if found < declared {
        // traffic_gen.py stale digits appended to the count: "995" written over "1000 ".
        let real = found.to_string();
        if found > 0 && count_str.len() > real.len() && count_str.starts_with(&real) {
            warnings.push(format!(
                "{name}:{cl}: flow count `{count_str}` taken as {found} (stale digits left by traffic_gen.py)"
            ));
        } else {
            return Err(format!(
                "{name}: declares {declared} flows but only {found} flow lines follow"
            ));
        }
    }
    let extra = lines.count();
    if extra > 0 {
        warnings.push(format!(
            "{name}: ignored {extra} line(s) after the {declared} declared flows"
        ));
    }
    if let Some(i) = flows.windows(2).position(|w| w[1].start_ps < w[0].start_ps) {
        warnings.push(format!(
            "{name}:{}: flows are not sorted by start time; sorted them (HPCC requires sorted input)",
            line_of[i + 1]
        ));
        flows.sort_by_key(|f| f.start_ps);
    }
    Ok((flows, warnings))
}

/// Read and [`parse`] a flow file (errors and warnings name the path).
pub fn load(path: &Path) -> Result<(Vec<FlowSpec>, Vec<String>), String> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: cannot read: {e}"))?;
    parse(&text, &name)
}

/// Format flows as an HPCC flow file: the count, then `src dst pg dport size start_s` per flow
/// in the given order, with the start in seconds as `%.9f` (rounded to the nearest ns).
pub fn write(flows: &[FlowSpec]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(16 + flows.len() * 40);
    let _ = writeln!(s, "{}", flows.len());
    for f in flows {
        let ns = f.start_ps / 1000 + u64::from(f.start_ps % 1000 >= 500);
        let _ = writeln!(
            s,
            "{} {} {} {} {} {}.{:09}",
            f.src,
            f.dst,
            f.prio,
            f.dport,
            f.size_bytes,
            ns / 1_000_000_000,
            ns % 1_000_000_000
        );
    }
    s
}

/// Write flows to `path` in the HPCC flow-file format (see [`write`]).
pub fn save(path: &Path, flows: &[FlowSpec]) -> Result<(), String> {
    std::fs::write(path, write(flows)).map_err(|e| format!("{}: cannot write: {e}", path.display()))
}

/// Check one flow's endpoints against `topo`: both must be hosts, and they must differ.
/// Errors say which endpoint is wrong and why (see [`TopologySpec::check_host`]); the caller
/// adds where the flow came from.
pub fn check_endpoints(f: &FlowSpec, topo: &TopologySpec) -> Result<(), String> {
    topo.check_host(f.src).map_err(|e| format!("source {e}"))?;
    topo.check_host(f.dst)
        .map_err(|e| format!("destination {e}"))?;
    if f.src == f.dst {
        return Err(format!(
            "source and destination are the same host ({}); a flow needs two different hosts",
            f.src
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{NS, SEC};
    use crate::workload::{DPORT_BACKGROUND, DPORT_INCAST};

    #[test]
    fn seconds_exact() {
        assert_eq!(parse_seconds_ps("2.000000000"), Ok(2 * SEC));
        assert_eq!(parse_seconds_ps("2.000000001"), Ok(2 * SEC + NS));
        assert_eq!(parse_seconds_ps("2.123456789"), Ok(2_123_456_789 * NS));
        assert_eq!(parse_seconds_ps("0.000000000001"), Ok(1));
        assert_eq!(parse_seconds_ps("0.0000000000015"), Ok(2));
        assert_eq!(parse_seconds_ps("0.0000000000014999"), Ok(1));
        assert_eq!(parse_seconds_ps("3"), Ok(3 * SEC));
        assert_eq!(parse_seconds_ps("3."), Ok(3 * SEC));
        assert_eq!(parse_seconds_ps(".5"), Ok(SEC / 2));
        assert_eq!(parse_seconds_ps("+1.5"), Ok(3 * SEC / 2));
        assert_eq!(parse_seconds_ps("2e-3"), Ok(2_000_000_000));
        assert_eq!(parse_seconds_ps("1.5E0"), Ok(3 * SEC / 2));
        for bad in ["-1", "1.2.3", "abc", ".", "", "1e400", "99999999999", "1x"] {
            assert!(parse_seconds_ps(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn parse_basic_and_round_trip() {
        let text =
            "3\r\n0 1 3 100 1000 2.000000000\r\n2 1 3 200 5 2.000001500\r\n1 0 3 100 77 2.5\r\n";
        let (f, w) = parse(text, "flow.txt").unwrap();
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(f.len(), 3);
        assert_eq!(
            f[1],
            FlowSpec {
                src: 2,
                dst: 1,
                size_bytes: 5,
                start_ps: 2 * SEC + 1500 * NS,
                prio: 3,
                dport: DPORT_INCAST
            }
        );
        assert_eq!(f[2].dport, DPORT_BACKGROUND);
        let out = write(&f);
        assert_eq!(out.lines().next(), Some("3"));
        assert!(out.contains("1 0 3 100 77 2.500000000\n"));
        let (g, w) = parse(&out, "rt").unwrap();
        assert!(w.is_empty());
        assert_eq!(f, g);
    }

    #[test]
    fn round_trip_generated() {
        let cdf = crate::workload::cdf::builtin("websearch").unwrap();
        let hosts: Vec<u32> = (0..8).collect();
        let flows = crate::workload::traffic::poisson(
            &hosts,
            &cdf,
            0.5,
            100_000_000_000,
            2 * SEC,
            SEC / 100,
            5,
        )
        .unwrap();
        assert!(flows.len() > 100);
        let (back, w) = parse(&write(&flows), "gen").unwrap();
        assert!(w.is_empty());
        assert_eq!(back, flows);
        let dir = std::env::temp_dir().join(format!("sfc_flow_file_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("flow.txt");
        save(&p, &flows).unwrap();
        assert_eq!(load(&p).unwrap().0, flows);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn write_rounds_to_ns() {
        let f = FlowSpec {
            src: 1,
            dst: 2,
            size_bytes: 9,
            start_ps: 1_999_999_999_999,
            prio: 3,
            dport: 100,
        };
        assert_eq!(write(&[f]), "1\n1 2 3 100 9 2.000000000\n");
    }

    #[test]
    fn traffic_gen_quirks() {
        // Stale digits on their own line.
        let (f, w) = parse("2\n0\n0 1 3 100 10 2.0\n1 0 3 100 10 2.1\n", "q").unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("q:2"), "{w:?}");
        // Stale digits appended to the count ("2" written over "10 ").
        let (f, w) = parse("20 \n0 1 3 100 10 2.0\n1 0 3 100 10 2.1\n", "q").unwrap();
        assert_eq!(f.len(), 2);
        assert!(w[0].contains("q:1") && w[0].contains("stale"), "{w:?}");
        // Extra lines are ignored with a warning.
        let (f, w) = parse("1\n0 1 3 100 10 2.0\n1 0 3 100 10 2.1\nnotes here\n", "q").unwrap();
        assert_eq!(f.len(), 1);
        assert!(w[0].contains("ignored 2"), "{w:?}");
        // Unsorted input is sorted stably with a warning naming the first offending line.
        let (f, w) = parse(
            "3\n0 1 3 100 1 2.5\n1 0 3 100 2 2.1\n2 0 3 100 3 2.1\n",
            "q",
        )
        .unwrap();
        assert_eq!(
            f.iter().map(|x| x.size_bytes).collect::<Vec<_>>(),
            vec![2, 3, 1]
        );
        assert!(w[0].contains("q:3"), "{w:?}");
        let (f, _) = parse("0\n", "q").unwrap();
        assert!(f.is_empty());
    }

    #[test]
    fn errors_name_line_and_field() {
        let cases = [
            ("", "q:"),
            ("x\n", "q:1"),
            ("2 3\n", "q:1"),
            ("2\n0 1 3 100 10 2.0\n", "only 1"),
            ("3\n0 1 3 100 10 2.0\n", "only 1"),
            ("1\n0 1 3 100 10\n", "q:2"),
            ("1\n\n0 -1 3 100 10 2.0\n", "q:3: field 2 (dst)"),
            ("1\n0 1 300 100 10 2.0\n", "field 3 (pg)"),
            ("1\n0 1 3 70000 10 2.0\n", "field 4 (dport)"),
            ("1\n0 1 3 100 0 2.0\n", "field 5 (size)"),
            ("1\n0 1 3 100 1.5 2.0\n", "field 5 (size)"),
            ("1\n0 1 3 100 10 -2.0\n", "field 6 (start_time_s)"),
            ("2\n0 1 3 100 10 2.0\n0 1 3 100 10 zz\n", "q:3: field 6"),
        ];
        for (text, want) in cases {
            let e = parse(text, "q").unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn endpoint_errors_name_the_line_before_sorting() {
        // Star of 2 hosts (0, 1) and a switch (2).
        let topo = crate::topology::shapes::star(2, 100_000_000_000, 1_000_000).unwrap();
        let check = |f: &FlowSpec| check_endpoints(f, &topo);
        let ok = "2\n0 1 3 100 10 2.5\n1 0 3 100 10 2.1\n";
        let (f, w) = parse_with(ok, "q", check).unwrap();
        assert_eq!(f[0].src, 1, "sorted by start time");
        assert_eq!(w.len(), 1, "{w:?}");
        // The bad flow is on line 3 but starts first.
        let e = parse_with("2\n0 1 3 100 10 2.5\n0 2 3 100 10 2.1\n", "q", check).unwrap_err();
        assert!(
            e.starts_with("q:3: ") && e.contains("destination node 2 is a switch, not a host"),
            "{e}"
        );
        let e = parse_with("1\n9 1 3 100 10 2.0\n", "q", check).unwrap_err();
        assert!(e.starts_with("q:2: ") && e.contains("source node 9"), "{e}");
        let e = parse_with("1\n1 1 3 100 10 2.0\n", "q", check).unwrap_err();
        assert!(e.starts_with("q:2: ") && e.contains("same host"), "{e}");
    }
}
