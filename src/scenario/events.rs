//! `[[event]]` (links going down and coming back up during the run) and `[routing]` (how
//! long the forwarding tables take to follow), resolved into [`crate::config::Failures`].

use serde::Deserialize;
use toml::Spanned;

use super::{Ctx, S};
use crate::config::{Failures, LinkEvent};
use crate::registry::NetConfig;
use crate::topology::TopologySpec;

/// One `[[event]]`: a link changes state at a time.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEvent {
    /// `link_down` or `link_up`.
    pub kind: S,
    /// When (a time, e.g. `"100us"`).
    pub at: S,
    /// The link by its two end nodes, `[a, b]` (node ids; every link between them).
    pub link: Spanned<Vec<u32>>,
}

/// `[routing]`.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawRouting {
    /// Time from a link's change of state until the forwarding tables follow it (default 0).
    pub reconverge_delay: Option<S>,
    /// The switches at the ends of a changed link follow it at once (default false).
    pub local_repair: Option<bool>,
}

/// `[routing]` and the `[[event]]` list into `net.failures` (after the stop time is known):
/// every event names an existing link, takes effect before the stop time, and changes the
/// link's state (a `link_up` of a link that is up, or a `link_down` of a link already down at
/// that time, is an error).
pub(super) fn resolve_events(
    events: &[RawEvent],
    routing: &RawRouting,
    topo: &TopologySpec,
    ctx: &Ctx,
    net: &mut NetConfig,
) -> Result<(), String> {
    let delay = ctx.time(&routing.reconverge_delay, "routing.reconverge_delay", 0)?;
    let mut out = Vec::with_capacity(events.len());
    for (i, e) in events.iter().enumerate() {
        out.push(resolve_one(i, e, topo, ctx, net.stop_ps)?);
    }
    check_transitions(events, &out, ctx)?;
    net.failures = Failures {
        events: out,
        reconverge_delay_ps: delay,
        local_repair: routing.local_repair.unwrap_or(false),
    };
    Ok(())
}

/// `event[i]` checked on its own.
fn resolve_one(
    i: usize,
    e: &RawEvent,
    topo: &TopologySpec,
    ctx: &Ctx,
    stop_ps: u64,
) -> Result<LinkEvent, String> {
    let key = |k: &str| format!("event[{i}].{k}");
    let up = match e.kind.get_ref().as_str() {
        "link_down" => false,
        "link_up" => true,
        _ => {
            return Err(ctx.err(&e.kind, &key("kind"), "expected link_down or link_up"));
        }
    };
    let at_ps = ctx.time(&Some(e.at.clone()), &key("at"), 0)?;
    if at_ps >= stop_ps {
        return Err(ctx.err(
            &e.at,
            &key("at"),
            format!(
                "is not before the stop time ({}): the event would never take effect",
                crate::units::fmt_time(stop_ps)
            ),
        ));
    }
    let (a, b) = match e.link.get_ref()[..] {
        [a, b] => (a, b),
        _ => {
            return Err(ctx.err_val(
                &e.link,
                &key("link"),
                "expected the link's two end nodes, `[a, b]`",
            ));
        }
    };
    let n = topo.num_nodes() as u32;
    if a >= n || b >= n {
        return Err(ctx.err_val(
            &e.link,
            &key("link"),
            format!(
                "node {} does not exist (node ids are 0..{})",
                a.max(b),
                n.saturating_sub(1)
            ),
        ));
    }
    if !topo
        .links
        .iter()
        .any(|l| (l.a, l.b) == (a, b) || (l.a, l.b) == (b, a))
    {
        return Err(ctx.err_val(
            &e.link,
            &key("link"),
            format!("there is no link between nodes {a} and {b}"),
        ));
    }
    Ok(LinkEvent { at_ps, a, b, up })
}

/// Every event changes its link's state: replayed in time order (events at the same time in
/// the order given), a `link_up` must find the link down and a `link_down` find it up.
fn check_transitions(raw: &[RawEvent], events: &[LinkEvent], ctx: &Ctx) -> Result<(), String> {
    let mut order: Vec<usize> = (0..events.len()).collect();
    order.sort_by_key(|&i| events[i].at_ps);
    let mut down: Vec<(u32, u32)> = Vec::new();
    for i in order {
        let e = &events[i];
        let pair = (e.a.min(e.b), e.a.max(e.b));
        let is_down = down.contains(&pair);
        if e.up == is_down {
            if e.up {
                down.retain(|&p| p != pair);
            } else {
                down.push(pair);
            }
            continue;
        }
        let state = if is_down { "down" } else { "up" };
        return Err(ctx.err(
            &raw[i].kind,
            &format!("event[{i}].kind"),
            format!(
                "the link {}–{} is already {state} at {}",
                e.a,
                e.b,
                crate::units::fmt_time(e.at_ps)
            ),
        ));
    }
    Ok(())
}
