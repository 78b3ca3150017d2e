//! PFC deadlock detection: cycles of paused switch queues that can never drain (cyclic buffer
//! dependency, Hu et al., HotNets '16).
//!
//! **The wait-for relation.** A switch egress queue *E* = (switch S, port p, priority q) is
//! *blocked* when it holds packets and priority q of p is paused by the next hop D, a switch
//! whose ingress (the port facing S, q) is over XOFF. That ingress resumes S only when enough
//! of its bytes leave D, and its bytes sit in some of D's egress queues: *E* waits on every
//! egress queue of D that holds a packet that came in through that ingress (found by looking
//! at the queued packets' ingress port and priority). A blocked queue whose pausing ingress
//! has a packet in a queue that is *not* blocked can still drain (that queue moves, the
//! ingress may fall below XON): it is not stuck. Removing those, and then every queue that
//! waits on a removed one, until nothing changes, leaves the *stuck* queues: each waits only
//! on stuck queues, so following the relation from any of them runs into a cycle. That cycle
//! is what is reported, with the flows that have packets queued in it.
//!
//! **The persistence bound.** The relation is read from the switches' state, which a frame
//! in flight contradicts for a moment (a RESUME on the wire, an XOFF refresh about to land).
//! A cycle is reported only once every queue of it has been paused without a break for
//! [`Detector::bound_ps`] of the cycle:
//!
//! ```text
//! bound = 2·T_pause + Σ_{E in cycle} (bytes(E)·8 / rate(E) + delay(E))
//! T_pause = quanta · 512 / rate   (the longest pause time of the cycle's ports)
//! ```
//!
//! * `2·T_pause`: a pause whose cause is gone ends within one pause time (its frame expires,
//!   not refreshed; a refresh is sent every half pause time while the cause lasts), and a
//!   second covers a refresh or RESUME still on its way when the first ends. With
//!   `pfc.expiry = false` (pauses hold until RESUME) the configured quanta still give the
//!   nominal pause time.
//! * `Σ bytes(E)·8 / rate(E)`: the drain time of the cycle's queues at line rate. A chain of
//!   paused queues that is not a deadlock — congestion that pauses hop after hop — clears at
//!   the latest as its queues drain: had the cycle been such a chain, it would have drained
//!   within this time.
//! * `Σ delay(E)`: one frame's propagation around the cycle.
//!
//! Ordinary pauses last about the time the downstream queue needs to fall below XON, and
//! are not cycles of stuck queues in the first place (their ingress drains somewhere); the
//! bound is a few pause times, so a deadlock is named within a few pause times of forming
//! (plus the checking period, [`Detector::period_ps`]).
//!
//! **Cost.** Nothing per packet. The simulator's run loop asks for a check every
//! [`Detector::period_ps`] of simulated time while PFC is on; a check that finds no switch
//! with a pause in force reads one counter per switch, and only queues paused for at least
//! twice their pause time are looked at further. The walk reuses its buffers.

use std::collections::{HashMap, HashSet};

use crate::engine::arena::PacketArena;
use crate::scheme::Holds;
use crate::switch::Switch;

use super::switch::PfcSwitch;
use crate::units::fmt_time;

use super::quanta_ps;

/// Most flow ids a [`Deadlock`] keeps (the count is exact).
pub const MAX_FLOWS_LISTED: usize = 64;
/// Most deadlocks whose cycles are kept (the count is exact).
pub const MAX_CYCLES_KEPT: usize = 16;

/// One switch egress queue: node id, port, priority (queue index).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct QueueRef {
    /// Switch node id.
    pub node: u32,
    /// Egress port.
    pub port: u16,
    /// Priority (queue index).
    pub prio: u8,
}

impl std::fmt::Display for QueueRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}/{}", self.node, self.port, self.prio)
    }
}

/// A detected deadlock: a cycle of stuck queues.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Deadlock {
    /// Simulated time of the detection, picoseconds.
    pub detected_ps: u64,
    /// When the last queue of the cycle was paused (the cycle has been intact since),
    /// picoseconds.
    pub formed_ps: u64,
    /// The persistence bound of this cycle, picoseconds (module docs).
    pub bound_ps: u64,
    /// The cycle, each queue waiting on the next (and the last on the first).
    pub cycle: Vec<QueueRef>,
    /// Distinct flows with packets queued in the cycle's queues (ascending, at most
    /// [`MAX_FLOWS_LISTED`]).
    pub flows: Vec<u32>,
    /// Number of distinct flows with packets queued in the cycle's queues.
    pub flows_total: usize,
}

impl Deadlock {
    /// The cycle as `node:port/prio -> … -> (first again)`.
    pub fn cycle_text(&self) -> String {
        let mut s = String::new();
        for q in self.cycle.iter().chain(self.cycle.first()) {
            if !s.is_empty() {
                s.push_str(" -> ");
            }
            s.push_str(&q.to_string());
        }
        s
    }

    /// The flows with packets in the cycle, the first `n` listed and the rest counted.
    pub fn flows_text(&self, n: usize) -> String {
        let shown: Vec<String> = self.flows.iter().take(n).map(|f| f.to_string()).collect();
        let more = self.flows_total.saturating_sub(shown.len());
        if more > 0 {
            format!("{} and {more} more", shown.join(", "))
        } else {
            shown.join(", ")
        }
    }

    /// One line describing the deadlock.
    pub fn describe(&self) -> String {
        format!(
            "PFC deadlock at {}: cycle {} (paused since {}, longer than its bound {}); {} flows with packets queued in the cycle: {}",
            fmt_time(self.detected_ps),
            self.cycle_text(),
            fmt_time(self.formed_ps),
            fmt_time(self.bound_ps),
            self.flows_total,
            self.flows_text(12)
        )
    }
}

/// A blocked queue under examination.
#[derive(Clone, Copy, Debug)]
struct Node {
    q: QueueRef,
    /// Switch index.
    s: usize,
    /// Start of the pause (earliest over the pausing priorities), picoseconds.
    since_ps: u64,
    /// Successors: `succ[first..first + n]`.
    first: usize,
    n: usize,
    /// Still possibly stuck.
    alive: bool,
}

/// Where the packets queued at each switch live: one arena, or (a run split over threads,
/// [`crate::sim::parallel`]) the arena of the partition that owns each switch.
#[derive(Clone, Copy)]
pub struct Arenas<'a> {
    /// The arenas.
    pub all: &'a [&'a PacketArena],
    /// Index in `all` of each switch's arena (by switch index); empty: `all[0]` for every
    /// switch.
    pub of_switch: &'a [u16],
}

impl<'a> Arenas<'a> {
    /// The arena of switch `s`'s packets.
    #[inline]
    pub fn of(&self, s: usize) -> &'a PacketArena {
        self.all[self.of_switch.get(s).map_or(0, |&k| k as usize)]
    }
}

/// The deadlock detector of a run: the deadlocks found so far and reusable scratch space.
#[derive(Clone, Debug, Default)]
pub struct Detector {
    /// Deadlocks found (the first [`MAX_CYCLES_KEPT`]).
    pub found: Vec<Deadlock>,
    /// Number of deadlocks found (disjoint cycles).
    pub count: u64,
    /// Queues of the cycles already reported (a cycle through one of them is not reported
    /// again).
    reported: HashSet<QueueRef>,
    nodes: Vec<Node>,
    index: HashMap<QueueRef, usize>,
    succ: Vec<usize>,
    color: Vec<u8>,
    path: Vec<usize>,
    flows: Vec<u32>,
}

/// Pause time of `quanta` quanta at `rate_bps`, picoseconds (at least 1).
fn pause_ps(quanta: u32, rate_bps: u64) -> u64 {
    quanta_ps(quanta, rate_bps).max(1)
}

/// Serialization time of `bytes` at `rate_bps`, picoseconds.
fn drain_ps(bytes: u64, rate_bps: u64) -> u64 {
    (bytes as u128 * 8_000_000_000_000 / rate_bps.max(1) as u128).min(u64::MAX as u128) as u64
}

impl Detector {
    /// The checking period of a run on `switches`, picoseconds: half the longest pause time
    /// of any PFC switch port, at least 10 µs; `None` if no switch runs lossless PFC (then
    /// nothing is ever checked).
    pub fn period_ps<S: Holds<PfcSwitch>>(switches: &[Switch<S>]) -> Option<u64> {
        let mut longest = None;
        for sw in switches {
            let Some(pfc) = sw.schemes.get().filter(|p| p.lossless.is_some()) else {
                continue;
            };
            for ep in &sw.ports {
                let t = pause_ps(pfc.quanta, ep.tx.link.rate_bps);
                longest = Some(longest.map_or(t, |l: u64| l.max(t)));
            }
        }
        longest.map(|t| (t / 2).max(10 * crate::units::US))
    }

    /// Is a received pause in force at some switch egress?
    pub fn any_paused<S: Holds<PfcSwitch>>(switches: &[Switch<S>]) -> bool {
        switches
            .iter()
            .any(|sw| sw.schemes.get().is_some_and(|p| p.rx.held() > 0))
    }

    /// The persistence bound of a cycle of `queues`, picoseconds (module docs).
    pub fn bound_ps<S: Holds<PfcSwitch>>(
        switches: &[Switch<S>],
        queues: &[(usize, QueueRef)],
    ) -> u64 {
        let mut t_pause = 0u64;
        let mut sum = 0u64;
        for &(s, q) in queues {
            let sw = &switches[s];
            let ep = &sw.ports[q.port as usize];
            let quanta = sw.schemes.get().map_or(65535, |p| p.quanta);
            let rate = ep.tx.link.rate_bps;
            t_pause = t_pause.max(pause_ps(quanta, rate));
            let bytes = ep.queues.get(q.prio as usize).map_or(0, |x| x.bytes);
            sum = sum
                .saturating_add(drain_ps(bytes, rate))
                .saturating_add(ep.tx.link.delay_ps);
        }
        t_pause.saturating_mul(2).saturating_add(sum)
    }

    /// Look for new deadlocks at simulated time `now_ps`. The switch state is known not to
    /// change before `horizon_ps` (≥ `now_ps`; `now_ps` in a running simulation, later when
    /// no event remains before the run's end): a cycle counts as persisting from its
    /// formation to `horizon_ps`, and is dated at the later of `now_ps` and its formation
    /// plus its bound. `switch_of` maps a node id to its switch index (`None`: a host).
    /// Returns how many new deadlocks were found (each in [`Self::found`] while there is
    /// room, and counted in [`Self::count`]).
    pub fn check<S: Holds<PfcSwitch>>(
        &mut self,
        switches: &[Switch<S>],
        arena: Arenas<'_>,
        switch_of: impl Fn(u32) -> Option<usize>,
        now_ps: u64,
        horizon_ps: u64,
    ) -> usize {
        if !Self::any_paused(switches) {
            return 0;
        }
        self.collect_blocked(switches, &switch_of, horizon_ps);
        if self.nodes.len() < 2 {
            return 0;
        }
        self.link(switches, &arena, &switch_of);
        self.prune();
        self.find_cycles(switches, &arena, now_ps, horizon_ps)
    }

    /// The blocked queues paused for at least twice their pause time by `horizon_ps` (a
    /// cycle's bound is at least that): `nodes` and `index`.
    fn collect_blocked<S: Holds<PfcSwitch>>(
        &mut self,
        switches: &[Switch<S>],
        switch_of: &impl Fn(u32) -> Option<usize>,
        horizon_ps: u64,
    ) {
        self.nodes.clear();
        self.index.clear();
        for (s, sw) in switches.iter().enumerate() {
            let Some(pfc) = sw.schemes.get() else {
                continue;
            };
            if pfc.lossless.is_none() || pfc.rx.held() == 0 {
                continue;
            }
            let nq = pfc.rx.priorities();
            for (p, ep) in sw.ports.iter().enumerate() {
                if ep.tx.paused_mask == 0 {
                    continue;
                }
                let Some(d) = switch_of(ep.tx.link.peer) else {
                    continue;
                };
                let Some(down) = switches[d].schemes.get().and_then(|x| x.lossless.as_ref()) else {
                    continue;
                };
                let min_age = pause_ps(pfc.quanta, ep.tx.link.rate_bps).saturating_mul(2);
                for (q, queue) in ep.queues.iter().enumerate().skip(1) {
                    if !ep.tx.paused(q) || queue.pkts.is_empty() {
                        continue;
                    }
                    // The pausing priorities: q itself, or under BFC's shared queues every
                    // paused data priority whose ingress downstream is over XOFF.
                    let mut since = None;
                    for c in 1..nq {
                        if !pfc.class_by_prio && c != q {
                            continue;
                        }
                        if let Some(t) = pfc.rx.paused_since(p, c)
                            && down.cell(ep.tx.link.peer_port, c).paused
                        {
                            since = Some(since.map_or(t, |x: u64| x.min(t)));
                        }
                    }
                    let Some(since) = since else { continue };
                    if horizon_ps.saturating_sub(since) < min_age {
                        continue;
                    }
                    let r = QueueRef {
                        node: sw.node,
                        port: p as u16,
                        prio: q as u8,
                    };
                    self.index.insert(r, self.nodes.len());
                    self.nodes.push(Node {
                        q: r,
                        s,
                        since_ps: since,
                        first: 0,
                        n: 0,
                        alive: true,
                    });
                }
            }
        }
    }

    /// The successors of every blocked queue: the downstream queues holding a packet of its
    /// pausing ingress. A queue whose ingress has a packet in a queue that is not blocked
    /// (or none at all) is not alive.
    fn link<S: Holds<PfcSwitch>>(
        &mut self,
        switches: &[Switch<S>],
        arena: &Arenas<'_>,
        switch_of: &impl Fn(u32) -> Option<usize>,
    ) {
        self.succ.clear();
        for i in 0..self.nodes.len() {
            let n = self.nodes[i];
            let sw = &switches[n.s];
            let ep = &sw.ports[n.q.port as usize];
            let pfc = sw.schemes.get().expect("blocked queues run PFC");
            let d = switch_of(ep.tx.link.peer).expect("blocked queues face a switch");
            let down_sw = &switches[d];
            let down_pfc = down_sw.schemes.get().expect("checked when collected");
            let down = down_pfc.lossless.as_ref().expect("checked when collected");
            let in_port = ep.tx.link.peer_port;
            let nq = pfc.rx.priorities();
            // The pausing classes (as in `collect_blocked`), as a bit set.
            let mut classes = 0u64;
            for c in 1..nq.min(64) {
                if (pfc.class_by_prio || c == n.q.prio as usize)
                    && pfc.rx.paused_since(n.q.port as usize, c).is_some()
                    && down.cell(in_port, c).paused
                {
                    classes |= 1 << c;
                }
            }
            let first = self.succ.len();
            let mut drains = false;
            for (e, dep) in down_sw.ports.iter().enumerate() {
                for (r, queue) in dep.queues.iter().enumerate().skip(1) {
                    if !down_pfc.class_by_prio && classes & (1 << r) == 0 {
                        continue;
                    }
                    let holds = queue.pkts.iter().any(|&x| {
                        let pk = arena.of(d).get(x);
                        let class = if down_pfc.class_by_prio {
                            pk.prio as usize
                        } else {
                            r
                        };
                        pk.in_port == in_port && class < 64 && classes & (1 << class) != 0
                    });
                    if !holds {
                        continue;
                    }
                    let key = QueueRef {
                        node: down_sw.node,
                        port: e as u16,
                        prio: r as u8,
                    };
                    match self.index.get(&key) {
                        Some(&j) => self.succ.push(j),
                        None => drains = true,
                    }
                }
            }
            let node = &mut self.nodes[i];
            node.first = first;
            node.n = self.succ.len() - first;
            node.alive = !drains && node.n > 0;
        }
    }

    /// Remove every queue that waits on a removed one, until nothing changes: what remains
    /// waits only on itself (each alive queue has an alive successor).
    fn prune(&mut self) {
        loop {
            let mut changed = false;
            for i in 0..self.nodes.len() {
                let n = self.nodes[i];
                if n.alive
                    && self.succ[n.first..n.first + n.n]
                        .iter()
                        .any(|&j| !self.nodes[j].alive)
                {
                    self.nodes[i].alive = false;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// Follow the relation from each alive queue to a cycle; report each new cycle that has
    /// persisted for its bound.
    fn find_cycles<S: Holds<PfcSwitch>>(
        &mut self,
        switches: &[Switch<S>],
        arena: &Arenas<'_>,
        now_ps: u64,
        horizon_ps: u64,
    ) -> usize {
        self.color.clear();
        self.color.resize(self.nodes.len(), 0);
        let mut new = 0;
        for start in 0..self.nodes.len() {
            if !self.nodes[start].alive || self.color[start] != 0 {
                continue;
            }
            self.path.clear();
            let mut i = start;
            // 1: on the current path, 2: done.
            while self.color[i] == 0 {
                self.color[i] = 1;
                self.path.push(i);
                i = self.succ[self.nodes[i].first];
            }
            let cycle_at = (self.color[i] == 1)
                .then(|| self.path.iter().position(|&k| k == i).expect("on the path"));
            for &k in &self.path {
                self.color[k] = 2;
            }
            let Some(at) = cycle_at else { continue };
            let members: Vec<(usize, QueueRef)> = self.path[at..]
                .iter()
                .map(|&k| (self.nodes[k].s, self.nodes[k].q))
                .collect();
            if members.iter().any(|(_, q)| self.reported.contains(q)) {
                continue;
            }
            let formed = self.path[at..]
                .iter()
                .map(|&k| self.nodes[k].since_ps)
                .max()
                .unwrap_or(0);
            let bound = Self::bound_ps(switches, &members);
            if horizon_ps.saturating_sub(formed) < bound {
                continue;
            }
            // Flows with packets in the cycle's queues.
            self.flows.clear();
            for &(s, q) in &members {
                let queue = &switches[s].ports[q.port as usize].queues[q.prio as usize];
                for &x in &queue.pkts {
                    let pk = arena.of(s).get(x);
                    if !pk.is_hop_by_hop() {
                        self.flows.push(pk.flow);
                    }
                }
            }
            self.flows.sort_unstable();
            self.flows.dedup();
            // Rotate so that the smallest queue comes first (a stable name for the cycle).
            let mut cycle: Vec<QueueRef> = members.iter().map(|&(_, q)| q).collect();
            if let Some(m) = (0..cycle.len()).min_by_key(|&k| cycle[k]) {
                cycle.rotate_left(m);
            }
            self.reported.extend(cycle.iter().copied());
            self.count += 1;
            new += 1;
            if self.found.len() < MAX_CYCLES_KEPT {
                self.found.push(Deadlock {
                    detected_ps: now_ps.max(formed.saturating_add(bound)).min(horizon_ps),
                    formed_ps: formed,
                    bound_ps: bound,
                    cycle,
                    flows: self.flows.iter().take(MAX_FLOWS_LISTED).copied().collect(),
                    flows_total: self.flows.len(),
                });
            }
        }
        new
    }

    /// The `pfc.deadlocks` object of `summary.json`: `count`, `first_ps` (detection time of
    /// the first, `null` if none) and `cycles` (the first [`MAX_CYCLES_KEPT`]).
    pub fn summary(&self) -> serde_json::Value {
        serde_json::json!({
            "count": self.count,
            "first_ps": self.found.first().map(|d| d.detected_ps),
            "cycles": self.found.iter().map(|d| serde_json::json!({
                "detected_ps": d.detected_ps,
                "formed_ps": d.formed_ps,
                "bound_ps": d.bound_ps,
                "cycle": d.cycle_text(),
                "queues": d.cycle,
                "flows_total": d.flows_total,
                "flows": d.flows,
            })).collect::<Vec<_>>(),
        })
    }
}
