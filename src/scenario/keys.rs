//! Keys that do not apply: a key the chosen kind does not read is an error naming the key
//! (the user believes it has an effect and it has none), or a warning where it is harmless
//! (`[pfc]` settings without a lossless buffer, a scheme's settings with the scheme off —
//! which a `[[compare]]` variant may switch on; the schemes list theirs,
//! [`crate::scheme::SchemeConfig::inert`]).

use super::{Ctx, RawScenario, RawTraffic};
use crate::registry::SchemeConfigs;
use crate::scenario::cc;
use crate::scheme::KeyView;

/// Record an error for every present key of `present` that `allowed` does not list.
fn only(
    ctx: &Ctx,
    errs: &mut Vec<String>,
    prefix: &str,
    present: &[(&str, bool)],
    allowed: &[&str],
    why: &str,
) {
    for (k, p) in present {
        if *p && !allowed.contains(k) {
            let key = format!("{prefix}{k}");
            errs.push(ctx.err_key(&key, format!("does not apply {why}")));
        }
    }
}

/// Check every section's keys against the kinds chosen in the scenario and the schemes'
/// settings (`schemes`, read from their tables).
pub(super) fn check_applicable(
    raw: &RawScenario,
    schemes: &SchemeConfigs,
    ctx: &Ctx,
    errs: &mut Vec<String>,
) {
    topology(raw, ctx, errs);
    cc_keys(raw, ctx, errs);
    for (i, tr) in raw.traffic.iter().enumerate() {
        traffic(i, tr, ctx, errs);
    }
    let n = &raw.network;
    let drr = n.scheduler.as_ref().is_some_and(|s| s.get_ref() == "drr");
    if n.drr_quantum.is_some() && !drr {
        errs.push(ctx.err_key(
            "network.drr_quantum",
            "applies only with `network.scheduler = \"drr\"`",
        ));
    }
    let lr = &raw.loss_recovery;
    let irn = lr.kind.as_ref().is_some_and(|k| k.get_ref() == "irn");
    let (kind, allowed): (&str, &[&str]) = if irn {
        ("irn", &["rto_low", "rto_high", "bdp_cap"])
    } else {
        ("gbn", &["rto", "nack_interval"])
    };
    only(
        ctx,
        errs,
        "loss_recovery.",
        &[
            ("rto", lr.rto.is_some()),
            ("nack_interval", lr.nack_interval.is_some()),
            ("rto_low", lr.rto_low.is_some()),
            ("rto_high", lr.rto_high.is_some()),
            ("bdp_cap", lr.bdp_cap.is_some()),
        ],
        allowed,
        &format!("to loss_recovery.kind = \"{kind}\""),
    );
    let lossless = raw
        .buffer
        .mode
        .as_ref()
        .is_some_and(|m| m.get_ref() == "lossless");
    for refused in schemes.refused() {
        for key in refused.keys {
            if ctx.given(key) {
                errs.push(ctx.err_key(key, refused.why));
            }
        }
    }
    for inert in schemes.inert(&KeyView { lossless }) {
        for key in inert.keys {
            if ctx.given(key) {
                ctx.warn(ctx.err_key(key, inert.why));
            }
        }
    }
    // Buffer keys the chosen mode does not read: warnings (a `[[compare]]` variant may change
    // the mode).
    let mode = raw
        .buffer
        .mode
        .as_ref()
        .map_or("lossy", |m| m.get_ref().as_str());
    if raw.buffer.dt_alpha.is_some() && mode != "lossy" {
        ctx.warn(ctx.err_key(
            "buffer.dt_alpha",
            format!(
                "has no effect with buffer.mode = \"{mode}\": the Dynamic Threshold admits packets only in lossy mode (lossless: `pfc.alpha`)"
            ),
        ));
    }
    // (`buffer.size` with "unlimited" is not flagged: sweeps switch a sized base to
    // "unlimited" for an infinite-buffer reference, e.g. bfc-fig5's Ideal-FQ.)
}

/// Topology keys per kind.
fn topology(raw: &RawScenario, ctx: &Ctx, errs: &mut Vec<String>) {
    let t = &raw.topology;
    let kind = t.kind.get_ref().as_str();
    let allowed: &[&str] = match kind {
        "star" => &["hosts", "host_rate", "host_delay"],
        "dumbbell" => &[
            "left_hosts",
            "right_hosts",
            "host_rate",
            "host_delay",
            "fabric_rate",
            "fabric_delay",
        ],
        "leaf_spine" => &[
            "spines",
            "tors",
            "hosts_per_tor",
            "links_per_spine",
            "host_rate",
            "host_delay",
            "fabric_rate",
            "fabric_delay",
        ],
        "two_dc" => &[
            "spines",
            "tors",
            "hosts_per_tor",
            "links_per_spine",
            "host_rate",
            "host_delay",
            "fabric_rate",
            "fabric_delay",
            "gateway_rate",
            "gateway_delay",
            "dci_rate",
            "dci_delay",
        ],
        "fat_tree" => &[
            "k",
            "host_rate",
            "host_delay",
            "fabric_rate",
            "fabric_delay",
        ],
        "three_tier" => &[
            "pods",
            "tors_per_pod",
            "aggs_per_pod",
            "cores_per_agg",
            "hosts_per_tor",
            "host_rate",
            "host_delay",
            "fabric_rate",
            "fabric_delay",
        ],
        "hpcc_fat_tree" => &[],
        "file" => &["file"],
        _ => return, // reported by the topology step
    };
    let why = match kind {
        "hpcc_fat_tree" => {
            "to kind = \"hpcc_fat_tree\" (HPCC's fixed 320-host tree: 100/400 Gb/s, 1 µs links)"
        }
        "file" => "to kind = \"file\" (the topology file gives every node and link)",
        "leaf_spine" => {
            "to kind = \"leaf_spine\" (hosts = tors × hosts_per_tor; rates and delays per tier)"
        }
        "two_dc" => {
            "to kind = \"two_dc\" (two leaf–spine DCs; gateway_* and dci_* for the gateways and their link)"
        }
        _ => "",
    };
    let why = if why.is_empty() {
        format!("to kind = \"{kind}\"")
    } else {
        why.to_string()
    };
    only(
        ctx,
        errs,
        "topology.",
        &[
            ("hosts", t.hosts.is_some()),
            ("left_hosts", t.left_hosts.is_some()),
            ("right_hosts", t.right_hosts.is_some()),
            ("spines", t.spines.is_some()),
            ("tors", t.tors.is_some()),
            ("hosts_per_tor", t.hosts_per_tor.is_some()),
            ("links_per_spine", t.links_per_spine.is_some()),
            ("k", t.k.is_some()),
            ("pods", t.pods.is_some()),
            ("tors_per_pod", t.tors_per_pod.is_some()),
            ("aggs_per_pod", t.aggs_per_pod.is_some()),
            ("cores_per_agg", t.cores_per_agg.is_some()),
            ("host_rate", t.host_rate.is_some()),
            ("host_delay", t.host_delay.is_some()),
            ("fabric_rate", t.fabric_rate.is_some()),
            ("fabric_delay", t.fabric_delay.is_some()),
            ("gateway_rate", t.gateway_rate.is_some()),
            ("gateway_delay", t.gateway_delay.is_some()),
            ("dci_rate", t.dci_rate.is_some()),
            ("dci_delay", t.dci_delay.is_some()),
            ("file", t.file.is_some()),
        ],
        allowed,
        &why,
    );
}

/// `[cc]` parameters per controller.
fn cc_keys(raw: &RawScenario, ctx: &Ctx, errs: &mut Vec<String>) {
    let c = &raw.cc;
    let kind = c
        .kind
        .as_ref()
        .map(|k| k.get_ref().as_str())
        .unwrap_or("none");
    let Ok(setup) = cc::preset(kind, 100 * crate::units::GBPS) else {
        return; // reported by the cc step
    };
    use crate::cc::CcConfig;
    let allowed: &[&str] = match setup.cc {
        CcConfig::None(_) => &["window", "window_scope"],
        CcConfig::Dcqcn(_) => &[
            "tcd",
            "window",
            "window_scope",
            "var_win",
            "min_rate",
            "ai",
            "hai",
            "g",
            "alpha_timer",
            "dec_interval",
            "rp_timer",
            "fast_recovery",
        ],
        CcConfig::Dctcp(_) => &[
            "window",
            "window_scope",
            "var_win",
            "min_rate",
            "ai",
            "g",
            "slow_start",
        ],
        CcConfig::Hpcc(_) => &["min_rate", "ai", "eta", "max_stage", "w_ai", "reaction"],
        CcConfig::Timely(_) => &[
            "tcd",
            "window",
            "window_scope",
            "var_win",
            "min_rate",
            "ai",
            "hai",
            "t_low",
            "t_high",
            "beta",
        ],
    };
    only(
        ctx,
        errs,
        "cc.",
        &[
            ("window", c.window.is_some()),
            ("window_scope", c.window_scope.is_some()),
            ("var_win", c.var_win.is_some()),
            ("min_rate", c.min_rate.is_some()),
            ("ai", c.ai.is_some()),
            ("hai", c.hai.is_some()),
            ("g", c.g.is_some()),
            ("alpha_timer", c.alpha_timer.is_some()),
            ("dec_interval", c.dec_interval.is_some()),
            ("rp_timer", c.rp_timer.is_some()),
            ("fast_recovery", c.fast_recovery.is_some()),
            ("slow_start", c.slow_start.is_some()),
            ("eta", c.eta.is_some()),
            ("max_stage", c.max_stage.is_some()),
            ("w_ai", c.w_ai.is_some()),
            ("reaction", c.reaction.is_some()),
            ("t_low", c.t_low.is_some()),
            ("t_high", c.t_high.is_some()),
            ("beta", c.beta.is_some()),
            ("tcd", c.hold.is_some()),
        ],
        allowed,
        &format!("to cc.kind = \"{kind}\" ({})", setup.cc.name()),
    );
    if c.ai.is_some() && c.w_ai.is_some() {
        errs.push(ctx.err_key(
            "cc.w_ai",
            "give either `cc.ai` (a rate) or `cc.w_ai` (bytes), not both",
        ));
    }
}

/// `[[traffic]]` keys per generator kind.
fn traffic(i: usize, tr: &RawTraffic, ctx: &Ctx, errs: &mut Vec<String>) {
    let kind = tr.kind.get_ref().as_str();
    let single = tr.at.is_some();
    let allowed: &[&str] = match kind {
        "poisson" => &[
            "cdf",
            "remote_fraction",
            "cdf_format",
            "cdf_unit_bytes",
            "load",
            "load_basis",
            "start",
            "duration",
            "hosts",
            "prio",
        ],
        "lognormal" => &[
            "cdf",
            "remote_fraction",
            "cdf_format",
            "cdf_unit_bytes",
            "load",
            "load_basis",
            "sigma",
            "start",
            "duration",
            "hosts",
            "prio",
        ],
        "incast" if single => &[
            "size",
            "senders",
            "receivers",
            "at",
            "sync_window",
            "stagger",
            "prio",
        ],
        "incast" => &[
            "size",
            "degree",
            "load",
            "load_basis",
            "start",
            "duration",
            "hosts",
            "receivers",
            "sync_window",
            "period",
            "repeat_senders",
            "total_size",
            "prio",
        ],
        "all_to_all" | "permutation" => &["hosts", "size", "start", "prio"],
        "long_lived" if tr.fan_in.is_some() => &["fan_in", "hosts", "size", "start", "prio"],
        "long_lived" => &["pairs", "fan_in", "size", "start", "prio"],
        "flow_file" => &["file", "prio"],
        _ => return, // reported by the traffic step
    };
    let why = if kind == "incast" && single {
        "to a single incast (`at` given: senders → one receiver at that time)".to_string()
    } else {
        format!("to {kind} traffic")
    };
    only(
        ctx,
        errs,
        &format!("traffic[{i}]."),
        &[
            ("cdf", tr.cdf.is_some()),
            ("cdf_format", tr.cdf_format.is_some()),
            ("cdf_unit_bytes", tr.cdf_unit_bytes.is_some()),
            ("load", tr.load.is_some()),
            ("load_basis", tr.load_basis.is_some()),
            ("sigma", tr.sigma.is_some()),
            ("start", tr.start.is_some()),
            ("duration", tr.duration.is_some()),
            ("hosts", tr.hosts.is_some()),
            ("receivers", tr.receivers.is_some()),
            ("degree", tr.degree.is_some()),
            ("size", tr.size.is_some()),
            ("sync_window", tr.sync_window.is_some()),
            ("period", tr.period.is_some()),
            ("repeat_senders", tr.repeat_senders.is_some()),
            ("fan_in", tr.fan_in.is_some()),
            ("total_size", tr.total_size.is_some()),
            ("pairs", tr.pairs.is_some()),
            ("senders", tr.senders.is_some()),
            ("stagger", tr.stagger.is_some()),
            ("at", tr.at.is_some()),
            ("file", tr.file.is_some()),
            ("remote_fraction", tr.remote_fraction.is_some()),
            ("prio", tr.prio.is_some()),
        ],
        allowed,
        &why,
    );
    if tr.cdf_unit_bytes.is_some() && tr.cdf_format.as_deref() != Some("homa") {
        errs.push(ctx.err_key(
            &format!("traffic[{i}].cdf_unit_bytes"),
            "applies only with `cdf_format = \"homa\"`",
        ));
    }
}
