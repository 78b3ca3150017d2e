//! HPCC-sim topology files (`mix/fat.txt`, `mix/topology.txt`).
//!
//! ```text
//! <node_num> <switch_num> <link_num>
//! <switch_id_1> ... <switch_id_switch_num>
//! <src> <dst> <rate> <delay> <error_rate>        (link_num times)
//! ```
//!
//! Node ids run from 0 to `node_num - 1`; listed ids are switches, the rest hosts. `rate` is an
//! ns-3 DataRate string (`100Gbps`, `400Gb/s`, bare bits/s), `delay` an ns-3 Time string
//! (`1000ns`, `0.001ms`), `error_rate` the per-packet drop probability at the receiver.
//!
//! Like HPCC-sim (C++ `>>`), the reader splits the file into whitespace-separated tokens and
//! ignores line structure, but it remembers each token's line so errors read `file:line: …`.
//! Anything after the declared `link_num` links is ignored, as HPCC-sim does, and reported as a
//! warning.

use super::shapes::{MAX_NODES, check_limits};
use super::{LinkSpec, NodeKind, TopologySpec};
use crate::units::{GBPS, NS, parse_rate_bps, parse_time_ps};
use std::fmt::Write as _;
use std::path::Path;

/// One whitespace-separated token and the (1-based) line it came from.
#[derive(Clone, Copy)]
struct Tok<'a> {
    text: &'a str,
    line: usize,
}

/// Token cursor that produces `name:line:` error messages.
struct Reader<'a> {
    name: &'a str,
    toks: Vec<Tok<'a>>,
    pos: usize,
    /// Line of the last token, for "file ends early" errors.
    last_line: usize,
    /// The link being read and the line its first field is on.
    link_start: Option<(u64, usize)>,
    /// The first link read whose five fields ran over more than one line: (link, first
    /// line, last line). HPCC-sim reads a stream of tokens, so that is legal, but it is
    /// nearly always a field missing at the end of a line, which shifts every later field.
    split: Option<(u64, usize, usize)>,
    /// The line the previous link's last field was on.
    prev_end: Option<usize>,
    /// The first link read that began on the line where the previous one ended: (link, line).
    shared: Option<(u64, usize)>,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str, name: &'a str) -> Self {
        let mut toks = Vec::new();
        for (i, line) in text.lines().enumerate() {
            for t in line.split_whitespace() {
                toks.push(Tok {
                    text: t,
                    line: i + 1,
                });
            }
        }
        let last_line = toks.last().map_or(1, |t| t.line);
        Reader {
            name,
            toks,
            pos: 0,
            last_line,
            link_start: None,
            split: None,
            prev_end: None,
            shared: None,
        }
    }

    /// Next token, or an error saying the file ended while `expecting` something.
    fn next(&mut self, expecting: impl FnOnce() -> String) -> Result<Tok<'a>, String> {
        match self.toks.get(self.pos) {
            Some(&t) => {
                self.pos += 1;
                Ok(t)
            }
            None => Err(format!(
                "{}:{}: file ends early: expected {}",
                self.name,
                self.last_line,
                expecting()
            )),
        }
    }

    /// `name:line: msg`, with a hint when the links' fields have stopped lining up with the
    /// lines (see [`Reader::split`]).
    fn err(&self, t: Tok<'_>, msg: impl std::fmt::Display) -> String {
        let mut m = format!("{}:{}: {msg}", self.name, t.line);
        let shared = match self.link_start {
            Some((k, line)) if self.prev_end == Some(line) => Some((k, line)),
            _ => self.shared,
        };
        match (self.link_start, self.split) {
            (Some((k, line)), _) if t.line != line => {
                let _ = write!(
                    m,
                    " (link {k} starts on line {line} and this field is on line {}: is a field missing on line {line}?)",
                    t.line
                );
            }
            // Only near the shift: later errors are unlikely to come from it.
            (cur, Some((k, a, b))) if cur.is_none_or(|(c, _)| c <= k + 2) => {
                let _ = write!(
                    m,
                    " (link {k}'s fields ran from line {a} to line {b}: is a field missing on line {a}?)"
                );
            }
            _ => {
                if let Some((k, line)) = shared {
                    let _ = write!(
                        m,
                        " (link {k} starts on line {line}, after link {}'s five fields: an extra field on line {line}?)",
                        k - 1
                    );
                }
            }
        }
        m
    }

    /// Next token as an unsigned integer (`what` names it in errors; `expecting` describes it
    /// if the file ends first).
    fn count(
        &mut self,
        what: &str,
        expecting: impl FnOnce() -> String,
    ) -> Result<(u64, Tok<'a>), String> {
        let t = self.next(expecting)?;
        let v = t.text.parse::<u64>().map_err(|_| {
            self.err(
                t,
                format_args!("{what} `{}` is not a non-negative integer", t.text),
            )
        })?;
        Ok((v, t))
    }

    /// Next token as a node id below `n`.
    fn node(
        &mut self,
        what: &str,
        n: u64,
        expecting: impl FnOnce() -> String,
    ) -> Result<(u32, Tok<'a>), String> {
        let (v, t) = self.count(what, expecting)?;
        if v >= n {
            return Err(self.err(
                t,
                format_args!(
                    "{what} {v} is not a node id (the file declares nodes 0..{})",
                    n - 1
                ),
            ));
        }
        Ok((v as u32, t))
    }
}

/// Parse an HPCC-sim topology file; `name` (usually the file name) prefixes every error.
/// Warnings (ignored trailing lines) are dropped; see [`parse_with_warnings`].
pub fn parse(text: &str, name: &str) -> Result<TopologySpec, String> {
    parse_with_warnings(text, name).map(|(spec, _)| spec)
}

/// Parse an HPCC-sim topology file, returning the topology and human-readable warnings (one
/// for the lines after the declared links, which HPCC-sim ignores and so do we, giving how
/// many there were and where they start). Errors read `name:line: what was wrong`; the result
/// also passes [`TopologySpec::validate`] (whose errors are prefixed with `name`).
pub fn parse_with_warnings(text: &str, name: &str) -> Result<(TopologySpec, Vec<String>), String> {
    let mut r = Reader::new(text, name);
    let (node_num, switch_num, link_num) = r.header()?;
    let kinds = r.node_kinds(node_num, switch_num)?;
    let mut links = Vec::with_capacity(link_num.min(1 << 20) as usize);
    let mut warnings = Vec::new();
    for i in 0..link_num {
        links.push(r.link(i, link_num, &kinds, &mut warnings)?);
    }
    r.link_start = None;
    warnings.extend(r.layout_warnings(link_num));
    let spec = TopologySpec { kinds, links };
    check_limits(&spec).map_err(|e| format!("{name}: {e}"))?;
    spec.validate().map_err(|e| format!("{name}: {e}"))?;
    Ok((spec, warnings))
}

impl<'a> Reader<'a> {
    /// The first line, `<node_num> <switch_num> <link_num>`: at least one node, at most
    /// [`MAX_NODES`], no more switches than nodes.
    fn header(&mut self) -> Result<(u64, u64, u64), String> {
        let (node_num, t) = self.count("node count", || "node count".into())?;
        if node_num == 0 {
            return Err(self.err(t, "node count is 0"));
        }
        if node_num > MAX_NODES {
            return Err(self.err(
                t,
                format_args!("node count {node_num} exceeds the supported maximum of {MAX_NODES}"),
            ));
        }
        let (switch_num, t) = self.count("switch count", || "switch count".into())?;
        if switch_num > node_num {
            return Err(self.err(
                t,
                format_args!("switch count {switch_num} exceeds the node count {node_num}"),
            ));
        }
        let (link_num, _) = self.count("link count", || "link count".into())?;
        Ok((node_num, switch_num, link_num))
    }

    /// The switch list: the kind of every node (the listed ids are switches, each once).
    fn node_kinds(&mut self, node_num: u64, switch_num: u64) -> Result<Vec<NodeKind>, String> {
        let mut kinds = vec![NodeKind::Host; node_num as usize];
        for i in 0..switch_num {
            let (id, t) = self.node("switch id", node_num, || {
                format!("switch id {} of {switch_num}", i + 1)
            })?;
            if kinds[id as usize] == NodeKind::Switch {
                return Err(self.err(t, format_args!("switch id {id} is listed twice")));
            }
            kinds[id as usize] = NodeKind::Switch;
        }
        Ok(kinds)
    }

    /// Link `i` (0-based) of the `link_num` declared: two distinct nodes, not both hosts, a
    /// rate, a delay and an error rate. A dead link (error rate 1) adds a warning.
    fn link(
        &mut self,
        i: u64,
        link_num: u64,
        kinds: &[NodeKind],
        warnings: &mut Vec<String>,
    ) -> Result<LinkSpec, String> {
        let node_num = kinds.len() as u64;
        let k = i + 1;
        let expecting = |field: &'static str| {
            move || {
                format!(
                    "{field} of link {k} (only {i} of the {link_num} declared links are complete)"
                )
            }
        };
        self.link_start = self.toks.get(self.pos).map(|t| (k, t.line));
        let (a, ta) = self.node(
            &format!("link {k}: source"),
            node_num,
            expecting("the source node"),
        )?;
        let (b, _) = self.node(
            &format!("link {k}: destination"),
            node_num,
            expecting("the destination node"),
        )?;
        if a == b {
            return Err(self.err(ta, format_args!("link {k}: node {a} is linked to itself")));
        }
        if kinds[a as usize] == NodeKind::Host && kinds[b as usize] == NodeKind::Host {
            return Err(self.err(
                ta,
                format_args!("link {k}: nodes {a} and {b} are both hosts (not in the switch list); hosts must connect to a switch"),
            ));
        }
        let what = format!("link {k} ({a} - {b})");
        let t = self.next(expecting("the rate"))?;
        let rate_bps = self.link_rate(t, &what)?;
        let t = self.next(expecting("the delay"))?;
        let delay_ps = self.link_delay(t, &what)?;
        let t = self.next(expecting("the error rate"))?;
        let error_rate = self.error_rate(t, &what)?;
        self.note_layout(k, ta, t);
        if error_rate == 1.0 {
            // Legal (a dead link), but rarely meant: flows routed over it never finish.
            warnings.push(format!(
                "{}:{}: {what}: error rate 1 drops every packet: flows routed \
                 over it never finish (a run stops only at its stop time)",
                self.name, t.line
            ));
        }
        Ok(LinkSpec {
            a,
            b,
            rate_bps,
            delay_ps,
            error_rate,
        })
    }

    /// A link's rate field (`what` names the link), in the range a link may have.
    fn link_rate(&self, t: Tok<'_>, what: &str) -> Result<u64, String> {
        parse_rate_bps(t.text)
            .and_then(|v| {
                crate::link::check_link_rate(v)
                    .map(|()| v)
                    .map_err(crate::units::UnitError)
            })
            .map_err(|e| self.err(t, format_args!("{what}: bad rate: {e}")))
    }

    /// A link's delay field (`what` names the link), in the range a link may have.
    fn link_delay(&self, t: Tok<'_>, what: &str) -> Result<u64, String> {
        let delay_ps = parse_time_ps(t.text)
            .map_err(|e| self.err(t, format_args!("{what}: bad delay: {e}")))?;
        if let Err(e) = crate::link::check_link_delay(delay_ps) {
            return Err(self.err(
                t,
                format_args!("{what}: delay `{}`: {e}; check the unit", t.text),
            ));
        }
        Ok(delay_ps)
    }

    /// A link's error-rate field (`what` names the link): a number in [0, 1].
    fn error_rate(&self, t: Tok<'_>, what: &str) -> Result<f64, String> {
        match t.text.parse::<f64>() {
            Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
            Ok(_) => Err(self.err(
                t,
                format_args!("{what}: error rate `{}` is not in [0, 1]", t.text),
            )),
            Err(_) => Err(self.err(
                t,
                format_args!("{what}: error rate `{}` is not a number", t.text),
            )),
        }
    }

    /// Record how link `k`, from its first field `first` to its last `last`, sits on the
    /// lines (see [`Reader::split`] and [`Reader::shared`]).
    fn note_layout(&mut self, k: u64, first: Tok<'_>, last: Tok<'_>) {
        if self.split.is_none() && last.line != first.line {
            self.split = Some((k, first.line, last.line));
        }
        if self.shared.is_none() && self.prev_end == Some(first.line) {
            self.shared = Some((k, first.line));
        }
        self.prev_end = Some(last.line);
    }

    /// Warnings about the file's layout once the `link_num` declared links are read: a link
    /// split over lines, a link starting where the previous one ended, and lines after the
    /// declared links (ignored).
    fn layout_warnings(&self, link_num: u64) -> Vec<String> {
        let name = self.name;
        let mut warnings = Vec::new();
        if let Some((k, a, b)) = self.split {
            warnings.push(format!(
                "{name}:{a}: link {k}'s fields run from line {a} to line {b} (HPCC-sim reads the \
                 file as a stream of tokens, so it is accepted; is a field missing on line {a}?)"
            ));
        }
        if let Some((k, line)) = self.shared {
            warnings.push(format!(
                "{name}:{line}: link {k} starts on the line where link {} ends (HPCC-sim reads the \
                 file as a stream of tokens, so it is accepted; one link per line is the format)",
                k - 1
            ));
        }
        if let Some(first) = self.toks.get(self.pos) {
            let mut lines = 0usize;
            let mut prev = 0usize;
            for t in &self.toks[self.pos..] {
                if t.line != prev {
                    lines += 1;
                    prev = t.line;
                }
            }
            warnings.push(format!(
                "{name}:{}: ignored {lines} non-empty line(s) after the {link_num} declared links \
                 (HPCC-sim reads only the declared count)",
                first.line
            ));
        }
        warnings
    }
}

/// Read and parse an HPCC-sim topology file from disk (see [`parse_with_warnings`]); errors
/// and warnings are prefixed with the path.
pub fn load(path: &Path) -> Result<(TopologySpec, Vec<String>), String> {
    let name = path.display().to_string();
    let text = crate::fsutil::read_text(path).map_err(|e| format!("topology file: {e}"))?;
    parse_with_warnings(&text, &name)
}

/// Format a rate (bits per second) as an ns-3 DataRate string: `{N}Gbps` when a whole number
/// of Gb/s, else `Mbps`, `Kbps` or plain `bps`.
pub fn format_rate(rate_bps: u64) -> String {
    if rate_bps != 0 && rate_bps.is_multiple_of(GBPS) {
        format!("{}Gbps", rate_bps / GBPS)
    } else if rate_bps != 0 && rate_bps.is_multiple_of(1_000_000) {
        format!("{}Mbps", rate_bps / 1_000_000)
    } else if rate_bps != 0 && rate_bps.is_multiple_of(1_000) {
        format!("{}Kbps", rate_bps / 1_000)
    } else {
        format!("{rate_bps}bps")
    }
}

/// Format a delay (picoseconds) as an ns-3 Time string: `{N}ns` when a whole number of
/// nanoseconds, else `{N}ps`.
pub fn format_delay(delay_ps: u64) -> String {
    if delay_ps.is_multiple_of(NS) {
        format!("{}ns", delay_ps / NS)
    } else {
        format!("{delay_ps}ps")
    }
}

/// Format an error rate like HPCC's files (`0.000000`) when six decimals represent it exactly,
/// else with the shortest representation that reads back to the same value.
fn format_error_rate(e: f64) -> String {
    let six = format!("{e:.6}");
    if six.parse::<f64>() == Ok(e) {
        six
    } else {
        format!("{e}")
    }
}

/// Write `spec` in HPCC-sim's topology format (header, switch ids, one line per link in
/// declaration order; rates via [`format_rate`], delays via [`format_delay`]). The output
/// reads back to an identical [`TopologySpec`] with [`parse`].
pub fn write(spec: &TopologySpec) -> String {
    let switches = spec.switches();
    let mut out = String::with_capacity(64 + 40 * spec.links.len());
    let _ = writeln!(
        out,
        "{} {} {}",
        spec.kinds.len(),
        switches.len(),
        spec.links.len()
    );
    let ids: Vec<String> = switches.iter().map(u32::to_string).collect();
    out.push_str(&ids.join(" "));
    out.push('\n');
    for l in &spec.links {
        let _ = writeln!(
            out,
            "{} {} {} {} {}",
            l.a,
            l.b,
            format_rate(l.rate_bps),
            format_delay(l.delay_ps),
            format_error_rate(l.error_rate)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::US;

    const FAT: &str = include_str!("../../data/hpcc/fat.txt");
    const STAR: &str = include_str!("../../data/hpcc/topology.txt");

    #[test]
    fn parse_fat() {
        let (s, w) = parse_with_warnings(FAT, "fat.txt").unwrap();
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(s.num_nodes(), 376);
        assert_eq!(s.hosts(), (0..320).collect::<Vec<_>>());
        assert_eq!(s.switches(), (320..376).collect::<Vec<_>>());
        assert_eq!(s.links.len(), 480);
        assert_eq!(
            s.links[0],
            LinkSpec {
                a: 0,
                b: 320,
                rate_bps: 100 * GBPS,
                delay_ps: US,
                error_rate: 0.0
            }
        );
        assert_eq!(s.links[479].rate_bps, 400 * GBPS);
        // The writer reproduces the file byte for byte (apart from the trailing blank line).
        assert_eq!(write(&s).trim_end(), FAT.trim_end());
        assert_eq!(parse(&write(&s), "w").unwrap(), s);
    }

    #[test]
    fn parse_star_crlf_with_trailing_lines() {
        let (s, w) = parse_with_warnings(STAR, "topology.txt").unwrap();
        assert_eq!(s.num_nodes(), 66);
        assert_eq!(s.switches(), vec![0]);
        assert_eq!(s.hosts().len(), 65);
        assert_eq!(s.links.len(), 65);
        assert!(
            s.links
                .iter()
                .all(|l| l.rate_bps == 100 * GBPS && l.delay_ps == US)
        );
        assert_eq!(w.len(), 1);
        assert!(w[0].starts_with("topology.txt:68: ignored"), "{}", w[0]);
        let round = parse(&write(&s), "w").unwrap();
        assert_eq!(round, s);
        assert!(write(&s).contains("0 1 100Gbps 1000ns 0.000000\n"));
    }

    #[test]
    fn formats() {
        assert_eq!(format_rate(25 * GBPS), "25Gbps");
        assert_eq!(format_rate(2_500_000_000), "2500Mbps");
        assert_eq!(format_rate(1_234), "1234bps");
        assert_eq!(format_delay(1_500 * NS), "1500ns");
        assert_eq!(format_delay(1_500), "1500ps");
        assert_eq!(format_error_rate(0.0), "0.000000");
        assert_eq!(format_error_rate(1e-7), "0.0000001");
        let mut s = crate::topology::shapes::star(2, 1_234_000, 1_500).unwrap();
        s.links[0].error_rate = 0.123456789;
        assert_eq!(parse(&write(&s), "w").unwrap(), s);
    }

    fn err(text: &str) -> String {
        parse(text, "t.txt").unwrap_err()
    }

    /// A field missing or extra on one line shifts every later field (the file is a token
    /// stream, as in HPCC-sim): the error then points at the line where the shift began.
    #[test]
    fn shifted_fields_point_at_their_line() {
        let head = "4 1 3\n3\n";
        let rest = "2 3 10Gbps 1us 0\n";
        // Error rate missing on line 3: link 1 takes line 4's first field as its error rate.
        let e = err(&format!("{head}0 3 10Gbps 1us\n1 3 10Gbps 1us 0\n{rest}"));
        assert!(
            e.starts_with("t.txt:4: link 2: destination `10Gbps`"),
            "{e}"
        );
        assert!(
            e.ends_with(
                "(link 1's fields ran from line 3 to line 4: is a field missing on line 3?)"
            ),
            "{e}"
        );
        // Delay missing: the error is inside link 1 itself.
        let e = err(&format!("{head}0 3 10Gbps\n1 3 10Gbps 1us 0\n{rest}"));
        assert!(e.starts_with("t.txt:4: link 1 (0 - 3): bad delay"), "{e}");
        assert!(e.ends_with("(link 1 starts on line 3 and this field is on line 4: is a field missing on line 3?)"), "{e}");
        // An extra field: link 2 starts at the end of line 3.
        let e = err(&format!(
            "{head}0 3 10Gbps 1us 0 7\n1 3 10Gbps 1us 0\n{rest}"
        ));
        assert!(
            e.starts_with("t.txt:3: link 2: source 7 is not a node id"),
            "{e}"
        );
        assert!(
            e.ends_with(
                "(link 2 starts on line 3, after link 1's five fields: an extra field on line 3?)"
            ),
            "{e}"
        );
        // Lines that do not line up but parse are accepted (HPCC-sim reads tokens), warned.
        let (_, w) = parse_with_warnings(
            &format!("{head}0 3 10Gbps 1us 0 1 3\n10Gbps 1us 0\n{rest}"),
            "t.txt",
        )
        .unwrap();
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].starts_with("t.txt:3: link 2's fields run from line 3 to line 4"));
        assert!(w[1].starts_with("t.txt:3: link 2 starts on the line where link 1 ends"));
        // One link per line: no hint, no warning.
        let (_, w) = parse_with_warnings(
            &format!("{head}0 3 10Gbps 1us 0\n1 3 10Gbps 1us 0\n{rest}"),
            "t.txt",
        )
        .unwrap();
        assert!(w.is_empty(), "{w:?}");
        let e = err(&format!("{head}0 3 10Gbps 1us 0\n1 9 10Gbps 1us 0\n{rest}"));
        assert!(e.ends_with("(the file declares nodes 0..3)"), "{e}");
    }

    #[test]
    fn errors_name_file_and_line() {
        let ok = "3 1 2\n2\n0 2 10Gbps 1us 0\n1 2 10Gbps 1us 0\n";
        assert!(parse(ok, "t.txt").is_ok());
        assert_eq!(err(""), "t.txt:1: file ends early: expected node count");
        assert!(err("3 1\n").contains("t.txt:1: file ends early"));
        assert!(err("x 1 2\n").starts_with("t.txt:1: node count `x`"));
        assert!(err("3 4 2\n").contains("switch count 4 exceeds"));
        assert!(err("0 0 0\n").contains("node count is 0"));
        assert!(err("99999999999 1 0\n").contains("supported maximum"));
        let e = err("3 2 2\n2\n\n");
        assert_eq!(e, "t.txt:2: file ends early: expected switch id 2 of 2");
        let e = err("3 2 2\n2 2\n0 2 10Gbps 1us 0\n1 2 10Gbps 1us 0\n");
        assert_eq!(e, "t.txt:2: switch id 2 is listed twice");
        let e = err("3 1 2\n5\n");
        assert!(
            e.starts_with("t.txt:2: switch id 5 is not a node id"),
            "{e}"
        );
        let e = err("3 1 2\n2\n0 2 10Gbps 1us 0\n1 7 10Gbps 1us 0\n");
        assert!(
            e.starts_with("t.txt:4: link 2: destination 7 is not a node id"),
            "{e}"
        );
        let e = err("3 1 2\n2\n0 2 10Gbps 1us 0\n1 2 10Gbq 1us 0\n");
        assert!(
            e.starts_with("t.txt:4: link 2 (1 - 2): bad rate: `10Gbq`"),
            "{e}"
        );
        let e = err("3 1 2\n2\n0 2 10Gbps 1us 0\n1 2 10Gbps 1 0\n");
        assert!(e.starts_with("t.txt:4: link 2 (1 - 2): bad delay"), "{e}");
        let e = err("3 1 2\n2\n0 2 10Gbps 1us 0\n1 2 10Gbps 1e40s 0\n");
        assert!(
            e.contains("t.txt:4: link 2 (1 - 2): bad delay: `1e40s`: duration out of range"),
            "{e}"
        );
        // In range for a time, but not for a link (base RTTs and timeouts must fit).
        let e = err("3 1 2\n2\n0 2 10Gbps 1us 0\n1 2 10Gbps 2s 0\n");
        assert!(
            e.contains("t.txt:4: link 2 (1 - 2): delay `2s`: one-way delay 2.000s is above the longest accepted, 1s"),
            "{e}"
        );
        let e = err("3 1 2\n2\n0 2 10Gbps 1us 0\n1 2 1bps 1us 0\n");
        assert!(
            e.contains("t.txt:4: link 2 (1 - 2): bad rate: rate 1 bps is below"),
            "{e}"
        );
        let e = err("3 1 2\n2\n0 2 10Gbps 1us 0\n1 2 10Gbps 1us zero\n");
        assert!(
            e.contains("t.txt:4: link 2 (1 - 2): error rate `zero` is not a number"),
            "{e}"
        );
        let e = err("3 1 2\n2\n0 2 10Gbps 1us 0\n1 2 10Gbps 1us 1.5\n");
        assert!(e.contains("not in [0, 1]"), "{e}");
        let e = err("3 1 2\n2\n0 2 10Gbps 1us nan\n1 2 10Gbps 1us 0\n");
        assert!(e.starts_with("t.txt:3:"), "{e}");
        let e = err("3 1 3\n2\n0 2 10Gbps 1us 0\n1 2 10Gbps 1us 0\n");
        assert!(
            e.contains(
                "t.txt:4: file ends early: expected the source node of link 3 (only 2 of the 3"
            ),
            "{e}"
        );
        let e = err("3 1 2\n2\n0 2 10Gbps 1us 0\n1 2 10Gbps\n");
        assert!(e.contains("the delay of link 2"), "{e}");
        let e = err("3 1 2\n2\n0 2 10Gbps 1us 0\n2 2 10Gbps 1us 0\n");
        assert!(
            e.contains("t.txt:4: link 2: node 2 is linked to itself"),
            "{e}"
        );
        let e = err("3 1 2\n2\n0 1 10Gbps 1us 0\n1 2 10Gbps 1us 0\n");
        assert!(
            e.contains("t.txt:3: link 1: nodes 0 and 1 are both hosts"),
            "{e}"
        );
        // Structural problems found by validate() are prefixed with the file name.
        let e = err("4 1 2\n3\n0 3 10Gbps 1us 0\n1 3 10Gbps 1us 0\n");
        assert!(e.starts_with("t.txt: host 2 has no link"), "{e}");
        // Tokens may be spread over lines like C++ `>>` allows.
        assert!(parse("3 1 2 2 0 2 10Gbps\n1us 0 1\n2 10Gbps 1us 0", "t.txt").is_ok());
    }
}
