//! A stuck run: PFC deadlock checks ([`crate::registry::DeadlockDetector`]) and where the packets
//! of unfinished flows are at the end.

use std::collections::BTreeMap;

use super::{NodeRef, Simulator};
use crate::registry::{DeadlockDetector as Detector, QueueRef};

/// What a run does when it finds a PFC deadlock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnDeadlock {
    /// Report it and stop the run (the default; `sfc` exits with
    /// [`crate::runguard::DEADLOCK_EXIT_STATUS`]).
    #[default]
    Stop,
    /// Report it and keep running (`--on-deadlock continue`).
    Continue,
}

/// Where the packets of one unfinished flow are.
#[derive(Default)]
struct FlowPlace {
    /// Packets queued at switches.
    packets: u64,
    /// The first switch queue holding one (by node, port, priority).
    at: Option<QueueRef>,
}

impl Simulator {
    /// How often the run checks for PFC deadlocks, picoseconds
    /// ([`Detector::period_ps`]); `None` when no switch runs lossless PFC.
    pub fn deadlock_period_ps(&self) -> Option<u64> {
        self.deadlock_period
    }

    /// The PFC deadlocks found so far.
    pub fn deadlocks(&self) -> &Detector {
        &self.deadlock
    }

    /// Look for new PFC deadlocks at `now_ps`, the switch state being known not to change
    /// before `horizon_ps` ([`Detector::check`]); returns how many were found. Costs one
    /// counter read per switch when no pause is in force.
    pub fn check_deadlocks(&mut self, now_ps: u64, horizon_ps: u64) -> usize {
        if self.deadlock_period.is_none() {
            return 0;
        }
        let nodes = &self.nodes;
        let all = [&self.arena];
        self.deadlock.check(
            &self.switches,
            crate::scheme::pfc::deadlock::Arenas {
                all: &all,
                of_switch: &[],
            },
            |n| match nodes.get(n as usize) {
                Some(NodeRef::Switch(s)) => Some(*s as usize),
                _ => None,
            },
            now_ps,
            horizon_ps,
        )
    }

    /// The buffer and queue monitors of a stuck run sample until `end_ps` (the detection of
    /// a deadlock, or the run's `stop` when no event was left before it): see
    /// [`crate::metrics::buffer::BufferMonitor::finish_frozen`]. Call before
    /// [`Self::finish`].
    pub fn monitor_until(&mut self, end_ps: u64) {
        self.monitor_end_ps = Some(end_ps);
    }

    /// Unfinished flows that have started, and where their packets are: queued at which
    /// switch queue (and paused by which node), or at the sender's NIC (paused or not), or
    /// nowhere (waiting for a timeout). At most `max_flows` flows are listed, by id; the
    /// rest are counted. `None` when every started flow has finished.
    pub fn stuck_report(&self, max_flows: usize) -> Option<String> {
        stuck_report_of(std::slice::from_ref(self), max_flows)
    }

    /// Switch index of node `node` (which must be a switch).
    fn switch_index(&self, node: u32) -> usize {
        match self.nodes[node as usize] {
            NodeRef::Switch(s) => s as usize,
            NodeRef::Host(_) => panic!("node {node} is not a switch"),
        }
    }
}

/// [`Simulator::stuck_report`] of a run held by `reps`: one simulator, or the replicas of a
/// run split over threads ([`super::parallel`]), each node's and flow's state read from the
/// replica that owns it.
pub(crate) fn stuck_report_of(reps: &[Simulator], max_flows: usize) -> Option<String> {
    let r0 = &reps[0];
    let owner = |n: u32| {
        r0.part
            .as_deref()
            .map_or(0, |p| p.part_of_node[n as usize] as usize)
    };
    if reps.iter().map(|r| r.active_flows()).sum::<usize>() == 0 {
        return None;
    }
    let now = reps.iter().map(|r| r.q.now()).max().unwrap_or(0);
    let sent = |f: usize| &reps[owner(r0.flows[f].src)].flows[f];
    let mut places: BTreeMap<u32, FlowPlace> = BTreeMap::new();
    let mut unfinished = 0usize;
    for (f, _) in r0.flows.iter_resident() {
        let fl = sent(f);
        if fl.finished() || fl.start_ps > now {
            continue;
        }
        unfinished += 1;
        if places.len() < max_flows {
            places.insert(f as u32, FlowPlace::default());
        }
    }
    if unfinished == 0 {
        return None;
    }
    // One pass over the switch queues, in node, port and priority order.
    for (si, sw0) in r0.switches.iter().enumerate() {
        let r = &reps[owner(sw0.node)];
        let sw = &r.switches[si];
        for (p, ep) in sw.ports.iter().enumerate() {
            for (q, queue) in ep.queues.iter().enumerate() {
                for &x in &queue.pkts {
                    let pk = r.arena.get(x);
                    if pk.is_hop_by_hop() {
                        continue;
                    }
                    if let Some(place) = places.get_mut(&pk.flow) {
                        place.packets += 1;
                        place.at.get_or_insert(QueueRef {
                            node: sw.node,
                            port: p as u16,
                            prio: q as u8,
                        });
                    }
                }
            }
        }
    }
    let mut lines = Vec::new();
    for (&f, place) in &places {
        let fl = sent(f as usize);
        let delivered = reps[owner(fl.dst)].delivered_bytes(f as usize);
        let head = format!(
            "flow {f} ({} -> {}, {} of {} B delivered)",
            fl.src, fl.dst, delivered, fl.size_bytes
        );
        let at = match place.at {
            Some(q) => {
                let r = &reps[owner(q.node)];
                let tx = &r.switches[r.switch_index(q.node)].ports[q.port as usize].tx;
                let by = if tx.paused(q.prio as usize) {
                    format!(", paused by {}", tx.link.peer)
                } else {
                    String::new()
                };
                format!(
                    "{} packets queued at switches, first at {q}{by}",
                    place.packets
                )
            }
            None => {
                let r = &reps[owner(fl.src)];
                let tx = &r.hosts[r.host_index(fl.src)].tx;
                if tx.paused(fl.prio as usize) {
                    format!(
                        "no packet queued at switches; its NIC (host {}) is paused by {}",
                        fl.src, tx.link.peer
                    )
                } else {
                    "no packet queued at switches (waiting for its sender or a timeout)".to_string()
                }
            }
        };
        lines.push(format!("  {head}: {at}"));
    }
    let more = unfinished - places.len();
    if more > 0 {
        lines.push(format!("  … and {more} more"));
    }
    Some(format!(
        "{unfinished} started flows did not finish; where their packets are:\n{}",
        lines.join("\n")
    ))
}
