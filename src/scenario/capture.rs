//! `[capture]`: which links a run captures into `capture.pcapng` ([`crate::capture`]).

use super::{Ctx, S};
use crate::config::{CaptureLink, CaptureSpec};
use crate::topology::TopologySpec;
use serde::Deserialize;

/// Frames a capture writes at most unless `capture.max_packets` says otherwise.
pub const DEFAULT_MAX_PACKETS: u64 = 1_000_000;
/// File bytes a capture writes at most unless `capture.max_bytes` says otherwise (1 GiB).
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;
/// Bytes kept of each frame unless `capture.snaplen` says otherwise: 0, whole frames.
/// Wireshark's InfiniBand dissector reports a RoCEv2 frame cut short as malformed ("Invalid
/// Packet Length"), so cutting (every header fits in 70 B) is only for smaller files.
pub const DEFAULT_SNAPLEN_BYTES: u32 = 0;

/// `[capture]` as written.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawCapture {
    /// Links by their two end nodes: `[[a, b], …]` (every link between them).
    pub links: Option<toml::Value>,
    /// Nodes whose every link is captured: `[n, …]`.
    pub nodes: Option<toml::Value>,
    /// Start of the capture window (default 0).
    pub start: Option<S>,
    /// End of the capture window (default: the run's end).
    pub stop: Option<S>,
    /// Only the packets of these flows (ids as in `flows.csv`); hop-by-hop frames always.
    pub flows: Option<Vec<u32>>,
    /// Frames written at most (default 1,000,000).
    pub max_packets: Option<u64>,
    /// File size at most (default 1GiB).
    pub max_bytes: Option<S>,
    /// Bytes kept of each frame, 0 = all (default 0).
    pub snaplen: Option<u32>,
}

impl RawCapture {
    /// Whether the table says anything.
    fn is_empty(&self) -> bool {
        self.links.is_none() && self.nodes.is_none()
    }
}

/// The links a capture names, each once, in the order named: what `capture.links` /
/// `capture.nodes` and `--capture` both resolve through.
struct LinkSet<'a> {
    topo: &'a TopologySpec,
    ports: Vec<Vec<crate::topology::PortSpec>>,
    links: Vec<CaptureLink>,
}

impl<'a> LinkSet<'a> {
    fn new(topo: &'a TopologySpec) -> Self {
        LinkSet {
            topo,
            ports: topo.ports(),
            links: Vec::new(),
        }
    }

    /// Node `n`, if the topology has it.
    fn node(&self, n: i64) -> Result<u32, String> {
        let count = self.topo.num_nodes();
        if (0..count as i64).contains(&n) {
            Ok(n as u32)
        } else {
            Err(format!(
                "node {n} is not in the topology (nodes 0..{count})"
            ))
        }
    }

    /// Port `i` of node `n` (a link seen from `n`), unless its link is in already.
    fn add_port(&mut self, n: u32, i: usize) {
        let p = &self.ports[n as usize][i];
        let l = CaptureLink {
            a: (n, i as u16),
            b: (p.peer, p.peer_port),
            rate_bps: self.topo.links[p.link as usize].rate_bps,
        };
        if !self.links.iter().any(|o| o.a == l.a || o.a == l.b) {
            self.links.push(l);
        }
    }

    /// Every link between nodes `a` and `b`; an error if there is none.
    fn add_pair(&mut self, a: i64, b: i64) -> Result<(), String> {
        let (a, b) = (self.node(a)?, self.node(b)?);
        let ports: Vec<usize> = (0..self.ports[a as usize].len())
            .filter(|&i| self.ports[a as usize][i].peer == b)
            .collect();
        if ports.is_empty() {
            return Err(format!("no link joins nodes {a} and {b}"));
        }
        for i in ports {
            self.add_port(a, i);
        }
        Ok(())
    }

    /// Every link of node `n`.
    fn add_node(&mut self, n: i64) -> Result<(), String> {
        let n = self.node(n)?;
        for i in 0..self.ports[n as usize].len() {
            self.add_port(n, i);
        }
        Ok(())
    }
}

/// An integer of a TOML value, or why not.
fn int_of(v: &toml::Value) -> Result<i64, String> {
    v.as_integer()
        .ok_or_else(|| "must be a node id (an integer)".to_string())
}

/// The captured links of `capture.links` and `capture.nodes`, each once, in the order given.
fn resolve_links(
    c: &RawCapture,
    topo: &TopologySpec,
    ctx: &Ctx,
) -> Result<Vec<CaptureLink>, String> {
    let mut set = LinkSet::new(topo);
    let mut errs = Vec::new();
    match &c.links {
        None => {}
        Some(toml::Value::Array(a)) => {
            for (i, v) in a.iter().enumerate() {
                let r = match v.as_array().map(|p| p.as_slice()) {
                    Some([x, y]) => int_of(x).and_then(|x| set.add_pair(x, int_of(y)?)),
                    _ => Err("must be [node, node]".into()),
                };
                if let Err(e) = r {
                    errs.push(ctx.err_key(&format!("capture.links[{i}]"), e));
                }
            }
        }
        Some(_) => errs.push(ctx.err_key("capture.links", "must be a list of [node, node]")),
    }
    match &c.nodes {
        None => {}
        Some(toml::Value::Array(a)) => {
            for (i, v) in a.iter().enumerate() {
                if let Err(e) = int_of(v).and_then(|n| set.add_node(n)) {
                    errs.push(ctx.err_key(&format!("capture.nodes[{i}]"), e));
                }
            }
        }
        Some(_) => errs.push(ctx.err_key("capture.nodes", "must be a list of node ids")),
    }
    if errs.is_empty() {
        Ok(set.links)
    } else {
        Err(errs.join("\n"))
    }
}

/// `[capture]` against the topology: `None` when nothing is captured.
pub(super) fn resolve_capture(
    c: &RawCapture,
    topo: &TopologySpec,
    ctx: &Ctx,
) -> Result<Option<CaptureSpec>, String> {
    if c.is_empty() {
        for (given, key) in [
            (c.start.is_some(), "capture.start"),
            (c.stop.is_some(), "capture.stop"),
            (c.flows.is_some(), "capture.flows"),
            (c.max_packets.is_some(), "capture.max_packets"),
            (c.max_bytes.is_some(), "capture.max_bytes"),
            (c.snaplen.is_some(), "capture.snaplen"),
        ] {
            if given {
                ctx.warn(ctx.err_key(
                    key,
                    "has no effect: nothing is captured without `capture.links` or `capture.nodes`",
                ));
            }
        }
        return Ok(None);
    }
    let links = resolve_links(c, topo, ctx)?;
    let start_ps = ctx.time(&c.start, "capture.start", 0)?;
    let stop_ps = ctx.time(&c.stop, "capture.stop", u64::MAX)?;
    if stop_ps <= start_ps {
        return Err(ctx.err_key(
            "capture.stop",
            "must be after `capture.start`: the capture window is empty",
        ));
    }
    let max_packets = c.max_packets.unwrap_or(DEFAULT_MAX_PACKETS);
    if max_packets == 0 {
        return Err(ctx.err_key("capture.max_packets", "must be at least 1"));
    }
    let max_bytes = ctx.bytes(&c.max_bytes, "capture.max_bytes", DEFAULT_MAX_BYTES)?;
    let snaplen_bytes = c.snaplen.unwrap_or(DEFAULT_SNAPLEN_BYTES);
    if snaplen_bytes != 0 && snaplen_bytes < 14 {
        return Err(ctx.err_key(
            "capture.snaplen",
            "must be 0 (whole frames) or at least 14 (an Ethernet header)",
        ));
    }
    let mut flows = c.flows.clone().unwrap_or_default();
    flows.sort_unstable();
    flows.dedup();
    Ok(Some(CaptureSpec {
        links,
        start_ps,
        stop_ps,
        flows,
        max_packets,
        max_bytes,
        snaplen_bytes,
    }))
}

/// The `--capture WHAT` argument: comma-separated items, `A-B` (every link between nodes A
/// and B) or `N` (every link of node N). Returns the (links, nodes) it names.
pub fn parse_capture_arg(what: &str) -> Result<(Vec<[u32; 2]>, Vec<u32>), String> {
    let bad = |item: &str| {
        format!(
            "--capture `{what}`: `{item}` is neither a node id (every link of that node) nor \
             `A-B` (the links between nodes A and B)"
        )
    };
    let (mut links, mut nodes) = (Vec::new(), Vec::new());
    for item in what.split(',').map(str::trim) {
        match item.split_once('-') {
            Some((a, b)) => {
                let a = a.trim().parse::<u32>().map_err(|_| bad(item))?;
                let b = b.trim().parse::<u32>().map_err(|_| bad(item))?;
                links.push([a, b]);
            }
            None => nodes.push(item.parse::<u32>().map_err(|_| bad(item))?),
        }
    }
    Ok((links, nodes))
}

/// `--capture WHAT` on `sfc run`: the `--set` overrides of `capture.links` and
/// `capture.nodes` it stands for (the rest of `[capture]`, if the scenario has one, applies).
pub fn capture_sets(what: &str) -> Result<Vec<String>, String> {
    let (links, nodes) = parse_capture_arg(what)?;
    let links: Vec<String> = links.iter().map(|[a, b]| format!("[{a}, {b}]")).collect();
    let nodes: Vec<String> = nodes.iter().map(u32::to_string).collect();
    Ok(vec![
        format!("capture.links=[{}]", links.join(", ")),
        format!("capture.nodes=[{}]", nodes.join(", ")),
    ])
}

/// `--capture WHAT` on `sfc hpcc` (no `[capture]` table there): the links it names on
/// `topo`, the whole run, the default caps and snap length.
pub fn capture_spec_from_arg(what: &str, topo: &TopologySpec) -> Result<CaptureSpec, String> {
    let (pairs, nodes) = parse_capture_arg(what)?;
    let mut set = LinkSet::new(topo);
    let named = |e: String| format!("--capture `{what}`: {e}");
    for [a, b] in pairs {
        set.add_pair(a as i64, b as i64).map_err(named)?;
    }
    for x in nodes {
        set.add_node(x as i64).map_err(named)?;
    }
    let links = set.links;
    Ok(CaptureSpec {
        links,
        start_ps: 0,
        stop_ps: u64::MAX,
        flows: Vec::new(),
        max_packets: DEFAULT_MAX_PACKETS,
        max_bytes: DEFAULT_MAX_BYTES,
        snaplen_bytes: DEFAULT_SNAPLEN_BYTES,
    })
}
