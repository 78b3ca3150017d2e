//! `[topology]`: a built-in shape made from its keys, or an HPCC topology file.
//!
//! Every bad rate or delay and every missing shape key is reported at once; an error of the
//! shape itself cites the `--set` that changed one of its keys, else the `kind` line.

use super::{Ctx, RawTopology, S, relative_hint};
use crate::link::{check_link_delay, check_link_rate};
use crate::topology::TopologySpec;
use crate::topology::shapes;
use crate::units::{GBPS, US};

/// The built-in kinds (besides `file`).
const SHAPE_KINDS: [&str; 7] = [
    "star",
    "dumbbell",
    "leaf_spine",
    "two_dc",
    "fat_tree",
    "three_tier",
    "hpcc_fat_tree",
];

/// Resolve `[topology]` into a validated topology.
pub(super) fn resolve_topology(t: &RawTopology, ctx: &Ctx) -> Result<TopologySpec, String> {
    let kind = t.kind.get_ref().as_str();
    if kind == "file" {
        let topo = load_topology_file(t, ctx)?;
        return topo
            .validate()
            .map(|()| topo)
            .map_err(|e| ctx.err(t.file.as_ref().expect("loaded"), "topology.file", e));
    }
    // Every bad rate/delay and every missing shape key is reported at once (validate lists all
    // problems); the defaults stand in for a bad value so the later checks still run.
    let mut errs: Vec<String> = Vec::new();
    let links = link_params(t, ctx, &mut errs);
    check_shape_keys(t, kind, ctx, &mut errs);
    if !errs.is_empty() {
        return Err(errs.join("\n"));
    }
    let topo = build_shape(t, kind, &links).map_err(|e| shape_error(t, ctx, e))?;
    topo.validate()
        .map_err(|e| format!("{}: topology: {e}", ctx.file))?;
    Ok(topo)
}

/// `[topology] kind = "file"`: read and parse the HPCC topology file named by `topology.file`
/// (relative to the scenario's directory). Errors name the key, its line and the path.
fn load_topology_file(t: &RawTopology, ctx: &Ctx) -> Result<TopologySpec, String> {
    let f = t.file.as_ref().ok_or_else(|| {
        format!(
            "{}: `topology.file` is required for kind = \"file\"",
            ctx.at("topology.kind", None)
        )
    })?;
    let p = ctx.path(f.get_ref());
    let text = crate::fsutil::read_text(&p).map_err(|e| {
        ctx.err(
            f,
            "topology.file",
            format!("{e}{}", relative_hint(f.get_ref())),
        )
    })?;
    let (topo, warnings) =
        crate::topology::hpcc_file::parse_with_warnings(&text, &p.display().to_string())
            .map_err(|e| ctx.err(f, "topology.file", e))?;
    for w in warnings {
        ctx.warn(w);
    }
    Ok(topo)
}

/// Rates and one-way delays of a shape's links.
struct LinkParams {
    /// Host link rate, bits per second.
    host_rate: u64,
    /// Host link delay, picoseconds.
    host_delay: u64,
    /// Switch-to-switch link rate, bits per second.
    fabric_rate: u64,
    /// Switch-to-switch link delay, picoseconds.
    fabric_delay: u64,
    /// Gateway–spine link rate (two_dc), bits per second.
    gateway_rate: u64,
    /// Gateway–spine link delay (two_dc), picoseconds.
    gateway_delay: u64,
    /// Inter-DC link rate (two_dc), bits per second.
    dci_rate: u64,
    /// Inter-DC link delay (two_dc), picoseconds.
    dci_delay: u64,
}

/// The link rates and delays, each defaulting to the one it refines (host links: 100 Gb/s,
/// 1 µs; the fabric: the host links; the gateways: the fabric; the inter-DC link: the
/// gateways' rate and the fabric's delay). A bad value is pushed to `errs` and its default
/// stands in for it.
fn link_params(t: &RawTopology, ctx: &Ctx, errs: &mut Vec<String>) -> LinkParams {
    let mut keep = |r: Result<u64, String>, fallback: u64| {
        r.unwrap_or_else(|e| {
            errs.push(e);
            fallback
        })
    };
    let host_rate = keep(
        link_rate(ctx, &t.host_rate, "topology.host_rate", 100 * GBPS),
        100 * GBPS,
    );
    let host_delay = keep(
        link_delay(ctx, &t.host_delay, "topology.host_delay", US),
        US,
    );
    let fabric_rate = keep(
        link_rate(ctx, &t.fabric_rate, "topology.fabric_rate", host_rate),
        host_rate,
    );
    let fabric_delay = keep(
        link_delay(ctx, &t.fabric_delay, "topology.fabric_delay", host_delay),
        host_delay,
    );
    let gateway_rate = keep(
        link_rate(ctx, &t.gateway_rate, "topology.gateway_rate", fabric_rate),
        fabric_rate,
    );
    let gateway_delay = keep(
        link_delay(
            ctx,
            &t.gateway_delay,
            "topology.gateway_delay",
            fabric_delay,
        ),
        fabric_delay,
    );
    let dci_rate = keep(
        link_rate(ctx, &t.dci_rate, "topology.dci_rate", gateway_rate),
        gateway_rate,
    );
    let dci_delay = keep(
        link_delay(ctx, &t.dci_delay, "topology.dci_delay", fabric_delay),
        fabric_delay,
    );
    LinkParams {
        host_rate,
        host_delay,
        fabric_rate,
        fabric_delay,
        gateway_rate,
        gateway_delay,
        dci_rate,
        dci_delay,
    }
}

/// A link rate key (`default` when not given), in the range a link may have.
fn link_rate(ctx: &Ctx, v: &Option<S>, key: &str, default: u64) -> Result<u64, String> {
    let r = ctx.rate(v, key, default)?;
    if let Some(s) = v {
        check_link_rate(r).map_err(|e| ctx.err(s, key, e))?;
    }
    Ok(r)
}

/// A link delay key (`default` when not given), in the range a link may have.
fn link_delay(ctx: &Ctx, v: &Option<S>, key: &str, default: u64) -> Result<u64, String> {
    let d = ctx.time(v, key, default)?;
    if let Some(s) = v {
        check_link_delay(d).map_err(|e| ctx.err(s, key, e))?;
    }
    Ok(d)
}

/// The keys a shape needs, each with whether it was given.
fn required_keys(t: &RawTopology, kind: &str) -> Vec<(&'static str, bool)> {
    match kind {
        "star" => vec![("hosts", t.hosts.is_some())],
        "dumbbell" => vec![
            ("left_hosts", t.left_hosts.is_some()),
            ("right_hosts", t.right_hosts.is_some()),
        ],
        "leaf_spine" => vec![
            ("spines", t.spines.is_some()),
            ("tors", t.tors.is_some()),
            ("hosts_per_tor", t.hosts_per_tor.is_some()),
        ],
        "two_dc" => vec![
            ("spines", t.spines.is_some()),
            ("tors", t.tors.is_some()),
            ("hosts_per_tor", t.hosts_per_tor.is_some()),
            ("dci_delay", t.dci_delay.is_some()),
        ],
        "fat_tree" => vec![("k", t.k.is_some())],
        "three_tier" => vec![
            ("pods", t.pods.is_some()),
            ("tors_per_pod", t.tors_per_pod.is_some()),
            ("aggs_per_pod", t.aggs_per_pod.is_some()),
            ("cores_per_agg", t.cores_per_agg.is_some()),
            ("hosts_per_tor", t.hosts_per_tor.is_some()),
        ],
        _ => Vec::new(),
    }
}

/// Push to `errs` the shape keys `kind` needs and were not given, and an unknown `kind`.
fn check_shape_keys(t: &RawTopology, kind: &str, ctx: &Ctx, errs: &mut Vec<String>) {
    let missing: Vec<String> = required_keys(t, kind)
        .iter()
        .filter(|(_, given)| !given)
        .map(|(k, _)| format!("`topology.{k}`"))
        .collect();
    if !missing.is_empty() {
        errs.push(format!(
            "{}: topology kind `{kind}` needs {}",
            ctx.at("topology.kind", Some(t.kind.span())),
            missing.join(", ")
        ));
    }
    if !SHAPE_KINDS.contains(&kind) {
        errs.push(ctx.err(
            &t.kind,
            "topology.kind",
            format!("unknown topology kind `{kind}` (star, dumbbell, leaf_spine, two_dc, fat_tree, three_tier, hpcc_fat_tree, file)"),
        ));
    }
}

/// The value of a shape key, or an error naming it.
fn need<T: Copy>(v: Option<T>, key: &str, kind: &str) -> Result<T, String> {
    v.ok_or_else(|| format!("`{key}` is required for kind = \"{kind}\""))
}

/// Build the shape `kind` (one of [`SHAPE_KINDS`]) from its keys and link parameters.
fn build_shape(t: &RawTopology, kind: &str, l: &LinkParams) -> Result<TopologySpec, String> {
    match kind {
        "star" => shapes::star(
            need(t.hosts, "topology.hosts", "star")?,
            l.host_rate,
            l.host_delay,
        ),
        "dumbbell" => shapes::dumbbell(
            need(t.left_hosts, "topology.left_hosts", "dumbbell")?,
            need(t.right_hosts, "topology.right_hosts", "dumbbell")?,
            l.host_rate,
            l.host_delay,
            l.fabric_rate,
            l.fabric_delay,
        ),
        "leaf_spine" => shapes::leaf_spine(leaf_spine(t, kind, l)?),
        "two_dc" => shapes::two_dc(shapes::TwoDc {
            dc: leaf_spine(t, kind, l)?,
            gateway_rate_bps: l.gateway_rate,
            gateway_delay_ps: l.gateway_delay,
            dci_rate_bps: l.dci_rate,
            dci_delay_ps: l.dci_delay,
        }),
        "fat_tree" => shapes::fat_tree(
            need(t.k, "topology.k", "fat_tree")?,
            l.host_rate,
            l.host_delay,
            l.fabric_rate,
            l.fabric_delay,
        ),
        "three_tier" => shapes::three_tier(shapes::ThreeTier {
            pods: need(t.pods, "topology.pods", "three_tier")?,
            tors_per_pod: need(t.tors_per_pod, "topology.tors_per_pod", "three_tier")?,
            aggs_per_pod: need(t.aggs_per_pod, "topology.aggs_per_pod", "three_tier")?,
            cores_per_agg: need(t.cores_per_agg, "topology.cores_per_agg", "three_tier")?,
            hosts_per_tor: need(t.hosts_per_tor, "topology.hosts_per_tor", "three_tier")?,
            host_rate_bps: l.host_rate,
            host_delay_ps: l.host_delay,
            fabric_rate_bps: l.fabric_rate,
            fabric_delay_ps: l.fabric_delay,
        }),
        _ => shapes::hpcc_fat_tree_320(),
    }
}

/// The leaf-spine of a `leaf_spine` topology, or of each data center of a `two_dc` one.
fn leaf_spine(t: &RawTopology, kind: &str, l: &LinkParams) -> Result<shapes::LeafSpine, String> {
    Ok(shapes::LeafSpine {
        spines: need(t.spines, "topology.spines", kind)?,
        tors: need(t.tors, "topology.tors", kind)?,
        hosts_per_tor: need(t.hosts_per_tor, "topology.hosts_per_tor", kind)?,
        host_rate_bps: l.host_rate,
        host_delay_ps: l.host_delay,
        fabric_rate_bps: l.fabric_rate,
        fabric_delay_ps: l.fabric_delay,
        links_per_spine: t.links_per_spine.unwrap_or(1),
    })
}

/// A shape error comes from the shape's keys together: cite the `--set` that changed one of
/// them if there is one (the user's own edit), else the `kind` line.
fn shape_error(t: &RawTopology, ctx: &Ctx, e: String) -> String {
    let set = ctx
        .sets
        .iter()
        .rev()
        .find(|s| s.trim_start().starts_with("topology."));
    match set {
        Some(s) => format!("{}: --set `{s}`: topology: {e}", ctx.file),
        None => format!(
            "{}: topology: {e}",
            ctx.at("topology.kind", Some(t.kind.span()))
        ),
    }
}
