//! One run on several cores: a conservative parallel simulation whose outputs are those of
//! the sequential run, byte for byte.
//!
//! **Partitioning.** [`Partitioning::by_tor_groups`] keeps each host with its ToR, gives each
//! partition a contiguous range of ToRs and puts every other switch with most of its
//! neighbours. Each partition is a *replica*: a whole [`Simulator`] that owns the state of its
//! own nodes and of the flows they send (or receive), and executes only their events — packet
//! arrivals, transmissions, timers of its nodes; flow starts, retransmission and controller
//! timers of the flows it sends; CNP timers of the flows it receives. The state of the nodes
//! it does not own stays untouched in it.
//!
//! **Lookahead and windows.** A packet sent on a link whose ends are in different partitions
//! arrives no sooner than the link's propagation delay after it is sent; the smallest such
//! delay is the *lookahead* L (the cut fabric links' delay: 1 µs on the HPCC fat tree, 1.5 µs
//! on the SFC §5.3 topology). The partitions advance together
//! in windows `[W, W + L)`, `W` being the earliest pending event of any partition: whatever a
//! partition does in a window reaches another only at or after the window's end, so every
//! partition can execute its window alone. A link to another partition is marked
//! [`crate::link::LinkState::Remote`] in the sender's replica, so the event loop's one test for
//! a dead link also sends these transmissions off the common path. A packet crossing the cut
//! is copied (header, INT records, frame payload) into a per-pair channel when the event that
//! sent it ends (its departure stage may still mark it) and freed in its sender's arena; at
//! the next window's start the receiving partition adopts it into its own arena and schedules
//! its arrival. Threads meet at a spin barrier twice per window.
//!
//! **Order.** The event order of the sequential run is canonical ([`OrderKey`]: time, order
//! class, then the event's content — node, port, the sending port's transmission number; never
//! a packet slot or a scheduling counter), so each partition executes its events in the order
//! the sequential run gives them, and events of different partitions in one window cannot
//! affect each other. Whatever is recorded across partitions in execution order is merged by
//! that key: flow completions carry the key of the event that completed them; the PFC log is
//! ordered by (time, node, port), the canonical order of arrivals.
//!
//! **Stop.** The sequential run stops before the first event at which every flow has completed
//! and no packet is alive. Each partition knows only its own part of that condition (its
//! flows, its packets, the packets it handed over this window), so a partition about to
//! execute an event while its own part holds pauses there. At the barrier every thread applies
//! the same rule to the partitions' reports: if some partition ran to the window's end without
//! its part ever holding, the run goes on; otherwise the first point at which all parts hold is
//! found — it is after the latest event any partition executed, if every part holds now and no
//! paused partition has an earlier event pending; else the partitions behind that latest event
//! execute up to it and the rule is applied again. The run thus ends after exactly the events
//! the sequential run executes.
//!
//! **Merging.** [`ParallelSim::into_merged`] moves every node's state from its owner into
//! partition 0's replica, copies the flows' results from their senders, the open receivers
//! from their receivers, sums the counters and latency histograms, and merges the monitors:
//! the buffer and queue watermarks are kept without idle elision in the partitions, with the
//! intervals that saw an update, and the elision of the sequential run is redone on the merged
//! series ([`crate::metrics::buffer`]). The merged simulator writes the outputs.
//!
//! **The PFC deadlock watch** walks paused queues across switches: it runs between windows
//! ([`ParallelSim::check_deadlocks`]), on every switch's state moved into partition 0's
//! replica for the check, each queued packet read from its owner's arena.
//!
//! **What runs on one thread instead** (with a note why): runs with link failures (a failure
//! reroutes the whole network), a packet capture, streamed results, a transport whose host
//! half keeps per-QP state (NDP), a scheme whose host half cannot be split by host (BFC,
//! CBFC, PB-FS), a network with fewer than two ToRs or no cut link with a nonzero delay.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use super::partition::Partitioning;
use super::{Counters, Progress, Simulator};
use crate::engine::arena::PAYLOAD_WORDS;
use crate::engine::packet::{IntHop, Packet};
use crate::engine::{Event, OrderKey};

/// `delay` of [`Simulator::start_tx`] for a link to another partition
/// ([`crate::link::LinkState::Remote`]): the transmission's arrival is handed over
/// ([`Simulator::hand_over`]). Just below [`super::failure::DEAD_LINK`], so that one
/// comparison in the event loop sends both rare cases off the common path.
pub(crate) const REMOTE_LINK: u64 = u64::MAX - 1;

/// The `delay` [`Simulator::start_tx`] returns for a link that is not up in this partition:
/// [`super::failure::DEAD_LINK`] (down) or [`REMOTE_LINK`] (to another partition).
#[cold]
#[inline(never)]
pub(crate) fn delay_sentinel(state: crate::link::LinkState) -> u64 {
    match state {
        crate::link::LinkState::Remote => REMOTE_LINK,
        _ => super::failure::DEAD_LINK,
    }
}

/// A packet on a link between two partitions: the arrival event (its `pkt` field is
/// rewritten by the receiving partition), its time, the packet, and where its INT records and
/// frame payload are in the channel.
#[derive(Clone, Copy, Debug)]
struct Crossing {
    time_ps: u64,
    ev: Event,
    pkt: Packet,
    /// Index of the first INT record in [`CrossBox::ints`] (the arena's INT hops per packet
    /// follow it).
    int_at: u32,
    /// Index in [`CrossBox::payloads`], or `u32::MAX` when the slot had no payload.
    payload_at: u32,
}

/// The packets one partition hands to another in a window (reused: no allocation once warm).
#[derive(Debug, Default)]
pub(crate) struct CrossBox {
    items: Vec<Crossing>,
    ints: Vec<IntHop>,
    payloads: Vec<[u64; PAYLOAD_WORDS]>,
}

impl CrossBox {
    /// Append `other`'s packets (which is left empty, its buffers kept).
    fn append(&mut self, other: &mut CrossBox) {
        if self.items.is_empty() {
            std::mem::swap(self, other);
            return;
        }
        let (di, dp) = (self.ints.len() as u32, self.payloads.len() as u32);
        self.items.extend(other.items.drain(..).map(|mut c| {
            c.int_at += di;
            if c.payload_at != u32::MAX {
                c.payload_at += dp;
            }
            c
        }));
        self.ints.append(&mut other.ints);
        self.payloads.append(&mut other.payloads);
    }
}

/// What a replica knows of the partitioning, and its part of the run's bookkeeping.
#[derive(Debug)]
pub(crate) struct PartView {
    /// This replica's partition.
    pub(crate) me: u32,
    /// Partition of every node (index: node id).
    pub(crate) part_of_node: Vec<u32>,
    /// Packets handed to each partition in the current window, not yet in its channel.
    out: Vec<CrossBox>,
    /// Arrivals at other partitions launched by the event being executed: the packets stay
    /// in this arena until the event ends, since its later stages may still write them
    /// (a switch's departure stage marks ECN after the transmission started).
    launched: Vec<(u64, Event)>,
    /// Packets handed over since the partitions last took their channels' contents: alive,
    /// in no arena.
    handed: u64,
    /// Key of the event being executed.
    cur_key: Option<OrderKey>,
    /// Key of the last event executed.
    last_key: Option<OrderKey>,
    /// Key of the event that completed each flow of `completion_order`, in the same order.
    pub(crate) completion_keys: Vec<OrderKey>,
    /// Packets handed to other partitions over the run.
    crossings: u64,
}

/// How far a replica may execute events while its part of the stop condition holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Free {
    /// Not at all: it pauses before the next event.
    None,
    /// Events before this key (the stop cannot come before it).
    Below(OrderKey),
    /// Every event of the window (another partition's part does not hold in it).
    All,
}

/// Where a replica stopped in a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Halt {
    /// Before this event, its part of the stop condition holding.
    Paused(OrderKey),
    /// At the window's end (nothing left before it).
    End,
}

/// A replica's report at a barrier.
#[derive(Clone, Copy, Debug)]
struct Report {
    halt: Halt,
    /// Its part of the stop condition holds now.
    done: bool,
    /// Key of the last event it executed.
    last: Option<OrderKey>,
}

/// What every thread concludes from the reports (the same everywhere).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Decision {
    /// Every partition is at the window's end, and the run goes on.
    NextWindow,
    /// The paused partitions go on (as far as [`Free`] says) in the same window.
    Resume(Free),
    /// The run ends after the event of this key (`None`: before any event).
    Stop(Option<OrderKey>),
}

/// The rule of the module docs ("Stop").
fn decide(reports: &[Report]) -> Decision {
    let paused = reports.iter().any(|r| matches!(r.halt, Halt::Paused(_)));
    if reports.iter().any(|r| !r.done) {
        // A partition whose part never held in the window (it pauses whenever it holds), so
        // the stop is not in this window.
        return if paused {
            Decision::Resume(Free::All)
        } else {
            Decision::NextWindow
        };
    }
    let last = reports.iter().filter_map(|r| r.last).max();
    let first_pending = reports
        .iter()
        .filter_map(|r| match r.halt {
            Halt::Paused(k) => Some(k),
            Halt::End => None,
        })
        .min();
    match (last, first_pending) {
        (Some(a), Some(f)) if f < a => Decision::Resume(Free::Below(a)),
        _ => Decision::Stop(last),
    }
}

/// A sense-reversing spin barrier (spins, then yields: correct with more threads than
/// cores, fast with fewer).
struct SpinBarrier {
    n: usize,
    count: AtomicUsize,
    generation: AtomicUsize,
    /// A thread of the run panicked: the others stop waiting (and panic too) instead of
    /// spinning forever.
    failed: AtomicBool,
}

impl SpinBarrier {
    fn new(n: usize) -> Self {
        SpinBarrier {
            n,
            count: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
        }
    }

    fn wait(&self) {
        let g = self.generation.load(Ordering::Acquire);
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.count.store(0, Ordering::Relaxed);
            self.generation.store(g.wrapping_add(1), Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == g {
            if self.failed.load(Ordering::Relaxed) {
                panic!("another thread of this parallel run failed");
            }
            if spins < 2_000 {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// The state the threads of one [`ParallelSim::run`] share.
struct Shared<'a> {
    barrier: SpinBarrier,
    /// Each partition's next event time after taking its channels (`u64::MAX`: none).
    next: Vec<AtomicU64>,
    /// Each partition's events executed and flows completed so far (progress reports).
    events: Vec<AtomicU64>,
    completed: Vec<AtomicU64>,
    /// Reports of the current round, double-buffered by round parity.
    reports: [Vec<Mutex<Option<Report>>>; 2],
    /// Channels: `boxes[src * n + dst]`.
    boxes: &'a [Mutex<CrossBox>],
    /// Partition 0 saw an interrupt request; everyone stops at the next window.
    quit: AtomicBool,
    /// Nanoseconds each thread waited at barriers.
    wait_ns: Vec<AtomicU64>,
}

/// How a thread's part of a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ended {
    /// No event left at or before the stop time.
    RanOut,
    /// The stop condition (module docs), after the event of this key.
    Done(Option<OrderKey>),
    /// Interrupted.
    Quit,
}

/// Counts of a parallel run's synchronisation.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ParallelStats {
    /// Partitions (threads).
    pub threads: u32,
    /// Threads asked for (`--threads`): more than [`Self::threads`] when the network has
    /// fewer ToRs than that (a partition holds whole ToRs).
    pub threads_asked: u32,
    /// Window length (the lookahead), picoseconds.
    pub lookahead_ps: u64,
    /// Links cut by the partitioning.
    pub cut_links: usize,
    /// Windows executed.
    pub windows: u64,
    /// Extra rounds within windows (the stop rule's).
    pub extra_rounds: u64,
    /// Packets that crossed between partitions.
    pub crossings: u64,
    /// Events executed by each partition.
    pub events: Vec<u64>,
    /// Time each thread waited at barriers, seconds (idle time).
    pub wait_seconds: Vec<f64>,
}

/// A run split over several threads ([module docs](self)).
pub struct ParallelSim {
    reps: Vec<Simulator>,
    boxes: Vec<Mutex<CrossBox>>,
    lookahead_ps: u64,
    stats: ParallelStats,
    /// The run met its stop condition ([`Ended::Done`]).
    done: bool,
}

impl Simulator {
    /// Why this run cannot be split over threads, if it cannot ([module docs](self)).
    pub fn parallel_blocker(&self) -> Option<String> {
        if self.failures.is_some() {
            return Some("link failures reroute the whole network".into());
        }
        if self.capture.is_some() {
            return Some("a packet capture is written in event order".into());
        }
        if self.results.is_some() {
            return Some("streamed results are written in completion order".into());
        }
        if self.transport_scheme.is_some() {
            return Some("the transport's host half keeps per-QP state".into());
        }
        if let Some(s) = self.host_schemes.iter().find(|s| !s.splits_by_host()) {
            return Some(format!(
                "the {} host half keeps state across hosts",
                crate::registry::scheme_table_name(s.id())
            ));
        }
        if self.monitor_end_ps.is_some() || self.part.is_some() {
            return Some("the run already started".into());
        }
        None
    }

    /// A copy of this simulator, before its run (no capture, no streamed results).
    fn replicate(&self) -> Simulator {
        Simulator {
            cfg: self.cfg.clone(),
            topo: self.topo.clone(),
            routes: self.routes.clone(),
            q: self.q.clone(),
            arena: self.arena.clone(),
            nodes: self.nodes.clone(),
            hosts: self.hosts.clone(),
            switches: self.switches.clone(),
            flows: self.flows.clone(),
            paths: self.paths.clone(),
            active: self.active.clone(),
            late_cnp: self.late_cnp.clone(),
            counters: self.counters.clone(),
            rtt: self.rtt.clone(),
            buffer_mon: self.buffer_mon.clone(),
            throughput: self.throughput.clone(),
            sender_throughput: self.sender_throughput.clone(),
            queue_mon: self.queue_mon.clone(),
            completion_order: self.completion_order.clone(),
            ccs: self.ccs.clone(),
            arrivals: self.arrivals.clone(),
            next_arrival: self.next_arrival,
            stream: self.stream.clone(),
            flows_total: self.flows_total,
            results: None,
            base_rtt_ps: self.base_rtt_ps,
            bdp_bytes: self.bdp_bytes,
            transport: self.transport,
            transport_scheme: self.transport_scheme,
            transport_host: self.transport_host,
            cc_cfg: self.cc_cfg.clone(),
            env: self.env,
            host_schemes: self.host_schemes.clone(),
            host_send_hooks: self.host_send_hooks,
            host_tx_hooks: self.host_tx_hooks,
            ack_ignores_pause: self.ack_ignores_pause,
            host_gate: self.host_gate,
            nic_misfiled: self.nic_misfiled,
            outbox: self.outbox.clone(),
            host_out: self.host_out.clone(),
            link_rngs: self.link_rngs.clone(),
            link_errors: self.link_errors,
            deadlock: self.deadlock.clone(),
            deadlock_period: self.deadlock_period,
            on_deadlock: self.on_deadlock,
            monitor_end_ps: self.monitor_end_ps,
            capture: None,
            failures: self.failures.clone(),
            part: None,
        }
    }

    /// The partition that executes event `ev` (`part_of_node`: each node's).
    fn event_owner(&self, ev: &Event, part_of_node: &[u32]) -> u32 {
        let of_node = |n: u32| part_of_node[n as usize];
        match *ev {
            Event::Arrive { node, .. }
            | Event::Lost { node, .. }
            | Event::TxDone { node, .. }
            | Event::NicWake { node }
            | Event::SchemeTimer { node, .. } => of_node(node),
            Event::FlowStart { flow } | Event::Rto { flow } | Event::CcTimer { flow, .. } => {
                of_node(self.flows[flow as usize].src)
            }
            Event::CnpDue { flow, .. } => of_node(self.flows[flow as usize].dst),
            Event::LinkChange { .. } | Event::Reroute => 0,
        }
    }

    /// Become partition `me`'s replica: keep only its events, start only the flows it sends,
    /// count only those, and keep the monitors' series without idle elision.
    fn adopt_partition(&mut self, me: u32, parts: u32, part_of_node: &[u32]) {
        let mut pending = Vec::new();
        self.q.for_each_pending_mut(|t, ev| pending.push((t, *ev)));
        let mut q = super::event_queue_for(&self.topo, &self.cfg);
        let mut first_start = None;
        for &(t, ev) in &pending {
            match ev {
                Event::FlowStart { flow } => first_start = Some((t, flow)),
                _ if self.event_owner(&ev, part_of_node) == me => q.schedule(t, ev),
                _ => {}
            }
        }
        self.q = q;
        // The links this partition's nodes send on to another partition's.
        for (n, node) in self.nodes.clone().iter().enumerate() {
            if part_of_node[n] != me {
                continue;
            }
            let ports = match *node {
                super::NodeRef::Host(h) => std::slice::from_mut(&mut self.hosts[h as usize].tx),
                super::NodeRef::Switch(s) => {
                    for ep in self.switches[s as usize].ports.iter_mut() {
                        if part_of_node[ep.tx.link.peer as usize] != me {
                            ep.tx.link.state = crate::link::LinkState::Remote;
                        }
                    }
                    continue;
                }
            };
            for tx in ports {
                if part_of_node[tx.link.peer as usize] != me {
                    tx.link.state = crate::link::LinkState::Remote;
                }
            }
        }
        self.part = Some(Box::new(PartView {
            me,
            part_of_node: part_of_node.to_vec(),
            out: (0..parts).map(|_| CrossBox::default()).collect(),
            launched: Vec::new(),
            handed: 0,
            cur_key: None,
            last_key: None,
            completion_keys: Vec::new(),
            crossings: 0,
        }));
        if let Some((t, f)) = first_start {
            if self.starts_here(f) {
                self.q.schedule(t, Event::FlowStart { flow: f });
            } else {
                self.schedule_next_start();
            }
        }
        if self.flows_total != u64::MAX {
            self.flows_total = self.taken_total();
        }
        self.buffer_mon.keep_idle_for_merge();
        self.queue_mon.keep_idle_for_merge();
    }

    /// Does flow `g` start in this replica (it sends it)? Always, in a run on one thread.
    #[inline]
    pub(crate) fn starts_here(&self, g: u32) -> bool {
        match self.part.as_deref() {
            None => true,
            Some(pv) => pv.part_of_node[self.flows[g as usize].src as usize] == pv.me,
        }
    }

    /// The flows this run must complete among those taken: all of them, or in a replica
    /// those it sends.
    pub(crate) fn taken_total(&self) -> u64 {
        match self.part.as_deref() {
            None => self.flows.len() as u64,
            Some(pv) => self
                .flows
                .iter()
                .filter(|f| pv.part_of_node[f.src as usize] == pv.me)
                .count() as u64,
        }
    }

    /// Packet `p`'s arrival `ev` at `time_ps` is at a node of another partition: the packet
    /// goes into that partition's channel when the event being executed ends
    /// ([`Self::hand_over_launched`]).
    #[inline]
    pub(crate) fn hand_over(&mut self, time_ps: u64, ev: Event, _p: u32) {
        let Some(pv) = self.part.as_deref_mut() else {
            unreachable!("only a replica has links to other partitions");
        };
        pv.launched.push((time_ps, ev));
    }

    /// The packets launched to other partitions by the event that just ended go into their
    /// channels, in their final state, and leave this arena.
    #[inline]
    fn hand_over_launched(&mut self) {
        let Some(pv) = self.part.as_deref_mut() else {
            return;
        };
        if pv.launched.is_empty() {
            return;
        }
        let launched = std::mem::take(&mut pv.launched);
        for &(time_ps, ev) in &launched {
            self.copy_out(time_ps, ev);
        }
        let mut launched = launched;
        launched.clear();
        if let Some(pv) = self.part.as_deref_mut() {
            pv.launched = launched;
        }
    }

    /// Copy the packet of arrival `ev` (at `time_ps`, at another partition's node) into that
    /// partition's channel and free it here.
    fn copy_out(&mut self, time_ps: u64, ev: Event) {
        let Some(pv) = self.part.as_deref_mut() else {
            return;
        };
        let Event::Arrive { node, pkt: p, .. } = ev else {
            unreachable!("only arrivals cross partitions");
        };
        let b = &mut pv.out[pv.part_of_node[node as usize] as usize];
        let int_at = b.ints.len() as u32;
        b.ints.extend_from_slice(self.arena.int(p));
        let payload_at = match self.arena.payload(p) {
            Some(w) => {
                b.payloads.push(*w);
                (b.payloads.len() - 1) as u32
            }
            None => u32::MAX,
        };
        b.items.push(Crossing {
            time_ps,
            ev,
            pkt: *self.arena.get(p),
            int_at,
            payload_at,
        });
        pv.handed += 1;
        pv.crossings += 1;
        self.arena.free(p);
    }

    /// Adopt the packets of channel `b` (sent to this partition) and schedule their arrivals.
    fn take_crossings(&mut self, b: &mut CrossBox) {
        let n = self.arena.int_hops();
        for c in b.items.drain(..) {
            let i = self.arena.adopt(c.pkt);
            if n > 0 {
                let at = c.int_at as usize;
                self.arena.int_mut(i).copy_from_slice(&b.ints[at..at + n]);
            }
            if c.payload_at != u32::MAX {
                *self.arena.payload_mut(i) = b.payloads[c.payload_at as usize];
            }
            let Event::Arrive {
                node,
                port,
                egress,
                seq,
                ..
            } = c.ev
            else {
                unreachable!("only arrivals cross partitions");
            };
            self.q.schedule(
                c.time_ps,
                Event::Arrive {
                    node,
                    port,
                    pkt: i,
                    egress,
                    seq,
                },
            );
        }
        b.ints.clear();
        b.payloads.clear();
    }

    /// This replica's part of the stop condition: its flows complete, no packet alive in its
    /// arena or handed over and not yet taken.
    #[inline]
    fn part_done(&self) -> bool {
        self.traffic_done() && self.part.as_deref().is_none_or(|pv| pv.handed == 0)
    }

    /// Execute this replica's events before `end_ps` (exclusive), pausing before an event
    /// while its part of the stop condition holds unless `free` allows it.
    fn run_window(&mut self, end_ps: u64, free: Free) -> Halt {
        loop {
            let Some((t, ev)) = self.q.peek() else {
                return Halt::End;
            };
            if t >= end_ps {
                return Halt::End;
            }
            let key = OrderKey::of(t, &ev);
            let allowed = match free {
                Free::None => false,
                Free::Below(b) => key < b,
                Free::All => true,
            };
            if !allowed && self.part_done() {
                return Halt::Paused(key);
            }
            self.q.pop();
            if let Some(pv) = self.part.as_deref_mut() {
                pv.cur_key = Some(key);
            }
            if self.arena.live() >= super::PREFETCH_MIN_LIVE {
                self.prefetch_ahead();
            }
            self.dispatch(ev);
            self.hand_over_launched();
            if let Some(pv) = self.part.as_deref_mut() {
                pv.last_key = Some(key);
            }
        }
    }

    /// Record that flow `f` completed in the event being executed (a replica keeps the
    /// event's key beside its completion order, to merge the orders).
    #[inline]
    pub(crate) fn note_completion_key(&mut self) {
        if let Some(pv) = self.part.as_deref_mut() {
            pv.completion_keys
                .push(pv.cur_key.expect("completions happen in events"));
        }
    }

    /// The packets handed over in this round go into the channels of their partitions.
    fn flush_out(&mut self, me: usize, n: usize, boxes: &[Mutex<CrossBox>]) {
        let Some(pv) = self.part.as_deref_mut() else {
            return;
        };
        for (dst, b) in pv.out.iter_mut().enumerate() {
            if !b.items.is_empty() {
                let mut shared = boxes[me * n + dst].lock().expect("channel poisoned");
                shared.append(b);
            }
        }
    }
}

/// Copy packet `x` of arena `from` into arena `to` (with its INT records and payload); its
/// slot there.
fn move_packet(
    to: &mut crate::engine::arena::PacketArena,
    from: &crate::engine::arena::PacketArena,
    x: u32,
) -> u32 {
    let i = to.adopt(*from.get(x));
    let n = to.int_hops();
    if n > 0 {
        to.int_mut(i).copy_from_slice(from.int(x));
    }
    if let Some(w) = from.payload(x) {
        *to.payload_mut(i) = *w;
    }
    i
}

/// One thread's part of [`ParallelSim::run`]: partition `me` (replica `rep`) until `stop_ps`.
fn drive(
    me: usize,
    rep: &mut Simulator,
    sh: &Shared<'_>,
    lookahead_ps: u64,
    stop_ps: u64,
    mut progress: Option<&mut dyn FnMut(&Progress)>,
    flows_total: u64,
) -> (Ended, u64, u64) {
    let n = sh.next.len();
    let mut windows = 0u64;
    let mut extra = 0u64;
    let mut round = 0usize;
    let mut last_report_events = 0u64;
    let wait = |sh: &Shared<'_>| {
        let t = Instant::now();
        sh.barrier.wait();
        sh.wait_ns[me].fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
    };
    loop {
        // Take what the other partitions handed over in the last window.
        for src in 0..n {
            if src != me {
                let mut b = sh.boxes[src * n + me].lock().expect("channel poisoned");
                rep.take_crossings(&mut b);
            }
        }
        if let Some(pv) = rep.part.as_deref_mut() {
            pv.handed = 0;
        }
        sh.next[me].store(rep.q.peek_time().unwrap_or(u64::MAX), Ordering::Relaxed);
        sh.events[me].store(rep.q.events(), Ordering::Relaxed);
        sh.completed[me].store(rep.counters.flows_completed, Ordering::Relaxed);
        if let Some(p) = progress.as_deref_mut() {
            let events: u64 = sh.events.iter().map(|e| e.load(Ordering::Relaxed)).sum();
            if events >= last_report_events + 0x10000 {
                last_report_events = events;
                let now = sh.next.iter().map(|e| e.load(Ordering::Relaxed)).min();
                p(&Progress {
                    now_ps: now.unwrap_or(0).min(stop_ps),
                    events,
                    flows_completed: sh.completed.iter().map(|e| e.load(Ordering::Relaxed)).sum(),
                    flows_total,
                });
            }
            if crate::process::interrupt_requested() {
                sh.quit.store(true, Ordering::Relaxed);
            }
        }
        wait(sh);
        if sh.quit.load(Ordering::Relaxed) {
            return (Ended::Quit, windows, extra);
        }
        let w = sh
            .next
            .iter()
            .map(|e| e.load(Ordering::Relaxed))
            .min()
            .unwrap_or(u64::MAX);
        if w == u64::MAX || w > stop_ps {
            // Everyone read `next` before anyone writes it again (the next barrier).
            wait(sh);
            return (Ended::RanOut, windows, extra);
        }
        windows += 1;
        let end = w
            .saturating_add(lookahead_ps)
            .min(stop_ps.saturating_add(1));
        let mut free = Free::None;
        loop {
            let halt = rep.run_window(end, free);
            rep.flush_out(me, n, sh.boxes);
            let report = Report {
                halt,
                done: rep.part_done(),
                last: rep.part.as_deref().and_then(|pv| pv.last_key),
            };
            *sh.reports[round % 2][me].lock().expect("report poisoned") = Some(report);
            wait(sh);
            let reports: Vec<Report> = sh.reports[round % 2]
                .iter()
                .map(|r| {
                    r.lock()
                        .expect("report poisoned")
                        .expect("every thread reported")
                })
                .collect();
            round += 1;
            match decide(&reports) {
                Decision::NextWindow => break,
                Decision::Resume(f) => {
                    extra += 1;
                    free = f;
                }
                Decision::Stop(k) => return (Ended::Done(k), windows, extra),
            }
        }
    }
}

impl ParallelSim {
    /// Split `sim` (built, not yet run) over `threads` partitions, or give it back with the
    /// reason it runs on one thread.
    pub fn split(sim: Simulator, threads: usize) -> Result<ParallelSim, (Box<Simulator>, String)> {
        if threads < 2 {
            return Err((Box::new(sim), "one thread asked for".into()));
        }
        if let Some(why) = sim.parallel_blocker() {
            return Err((Box::new(sim), why));
        }
        let tors = super::partition::tors(&sim.topo).len();
        let parts = threads.min(tors);
        if parts < 2 {
            return Err((Box::new(sim), "the network has fewer than two ToRs".into()));
        }
        let p = match Partitioning::by_tor_groups(&sim.topo, parts as u32) {
            Ok(p) => p,
            Err(e) => return Err((Box::new(sim), e)),
        };
        let Some(lookahead_ps) = p.lookahead_ps.filter(|&l| l > 0) else {
            return Err((
                Box::new(sim),
                "no link between partitions has a propagation delay".into(),
            ));
        };
        let mut reps: Vec<Simulator> = (1..parts).map(|_| sim.replicate()).collect();
        reps.insert(0, sim);
        for (k, r) in reps.iter_mut().enumerate() {
            r.adopt_partition(k as u32, parts as u32, &p.part_of_node);
        }
        Ok(ParallelSim {
            boxes: (0..parts * parts).map(|_| Mutex::default()).collect(),
            lookahead_ps,
            stats: ParallelStats {
                threads: parts as u32,
                threads_asked: threads as u32,
                lookahead_ps,
                cut_links: p.cut_links,
                ..Default::default()
            },
            reps,
            done: false,
        })
    }

    /// Partitions (threads).
    pub fn threads(&self) -> usize {
        self.reps.len()
    }

    /// The replicas (partition `k`'s is `k`).
    pub fn replicas(&self) -> &[Simulator] {
        &self.reps
    }

    /// Run until `cfg.stop_ps` or the stop condition, as [`Simulator::run`] does.
    pub fn run(&mut self, progress: &mut dyn FnMut(&Progress)) {
        if self.done {
            return;
        }
        let n = self.reps.len();
        let stop_ps = self.reps[0].cfg.stop_ps;
        let flows_total = self.flows_expected();
        let sh = Shared {
            barrier: SpinBarrier::new(n),
            next: (0..n).map(|_| AtomicU64::new(0)).collect(),
            events: (0..n).map(|_| AtomicU64::new(0)).collect(),
            completed: (0..n).map(|_| AtomicU64::new(0)).collect(),
            reports: [
                (0..n).map(|_| Mutex::new(None)).collect(),
                (0..n).map(|_| Mutex::new(None)).collect(),
            ],
            boxes: &self.boxes,
            quit: AtomicBool::new(false),
            wait_ns: (0..n).map(|_| AtomicU64::new(0)).collect(),
        };
        let lookahead = self.lookahead_ps;
        let (first, rest) = self.reps.split_first_mut().expect("two partitions or more");
        // A thread that panics marks the barrier failed, so that the others stop waiting for
        // it; the panic then reaches the caller.
        let guarded = |f: &mut dyn FnMut() -> (Ended, u64, u64)| match std::panic::catch_unwind(
            std::panic::AssertUnwindSafe(f),
        ) {
            Ok(r) => r,
            Err(e) => {
                sh.barrier.failed.store(true, Ordering::Relaxed);
                std::panic::resume_unwind(e)
            }
        };
        let (ended, windows, extra) = std::thread::scope(|s| {
            let (sh, guarded) = (&sh, &guarded);
            for (k, r) in rest.iter_mut().enumerate() {
                s.spawn(move || {
                    guarded(&mut || drive(k + 1, r, sh, lookahead, stop_ps, None, flows_total))
                });
            }
            guarded(&mut || {
                drive(
                    0,
                    first,
                    sh,
                    lookahead,
                    stop_ps,
                    Some(&mut *progress),
                    flows_total,
                )
            })
        });
        // What the last window handed over waits in the channels: adopted now, so that the
        // replicas' queues hold every pending event.
        for src in 0..n {
            for dst in 0..n {
                let mut b = self.boxes[src * n + dst].lock().expect("channel poisoned");
                if !b.items.is_empty() {
                    self.reps[dst].take_crossings(&mut b);
                }
            }
        }
        for r in &mut self.reps {
            if let Some(pv) = r.part.as_deref_mut() {
                pv.handed = 0;
            }
        }
        self.stats.windows += windows;
        self.stats.extra_rounds += extra;
        for (k, w) in sh.wait_ns.iter().enumerate() {
            let s = w.load(Ordering::Relaxed) as f64 * 1e-9;
            if self.stats.wait_seconds.len() <= k {
                self.stats.wait_seconds.push(0.0);
            }
            self.stats.wait_seconds[k] += s;
        }
        if let Ended::Done(_) = ended {
            self.done = true;
        }
    }

    /// Counts of the run's synchronisation so far.
    pub fn stats(&self) -> ParallelStats {
        let mut s = self.stats.clone();
        s.events = self.reps.iter().map(|r| r.q.events()).collect();
        s.crossings = self
            .reps
            .iter()
            .filter_map(|r| r.part.as_deref().map(|p| p.crossings))
            .sum();
        s
    }

    /// The stop time of the run, picoseconds.
    pub fn stop_ps(&self) -> u64 {
        self.reps[0].cfg.stop_ps
    }

    /// Set the stop time of every partition.
    pub fn set_stop_ps(&mut self, t: u64) {
        for r in &mut self.reps {
            r.cfg.stop_ps = t;
        }
    }

    /// The time of the last event executed by any partition.
    pub fn now(&self) -> u64 {
        self.reps.iter().map(|r| r.q.now()).max().unwrap_or(0)
    }

    /// The earliest pending event of any partition.
    pub fn peek_time(&mut self) -> Option<u64> {
        self.reps.iter_mut().filter_map(|r| r.q.peek_time()).min()
    }

    /// Events executed.
    pub fn events(&self) -> u64 {
        self.reps.iter().map(|r| r.q.events()).sum()
    }

    /// The run's counters (sums of the partitions').
    pub fn counters(&self) -> Counters {
        let mut c = Counters::default();
        for r in &self.reps {
            c.add(&r.counters);
        }
        c
    }

    /// Every flow completed and no packet alive (or, with a stream, every flow taken).
    pub fn all_flows_done(&self) -> bool {
        self.reps.iter().all(|r| r.all_flows_done())
    }

    /// Flows started and unfinished.
    pub fn active_flows(&self) -> usize {
        self.reps.iter().map(|r| r.active_flows()).sum()
    }

    /// Flows the run is expected to have (as [`Simulator::flows_expected`]).
    pub fn flows_expected(&self) -> u64 {
        self.reps[0].flows_expected()
    }

    /// A scheme counter summed over the partitions (each counts its own nodes).
    pub fn scheme_stat(&self, section: &str, key: &str) -> u64 {
        self.reps.iter().map(|r| r.scheme_stat(section, key)).sum()
    }

    /// The monitors of every partition sample until `end_ps` (a stuck run).
    pub fn monitor_until(&mut self, end_ps: u64) {
        for r in &mut self.reps {
            r.monitor_until(end_ps);
        }
    }

    /// Take the flows a stream still holds, in every partition.
    pub fn take_remaining_flows(&mut self) {
        for r in &mut self.reps {
            r.take_remaining_flows();
        }
    }

    /// Flows in the run (once every flow is taken).
    pub fn flows_len(&self) -> u64 {
        self.reps[0].flows.len() as u64
    }

    /// Flows not started by `end_ps`.
    pub fn flows_not_started(&self, end_ps: u64) -> u64 {
        self.reps[0].flows_not_started(end_ps)
    }

    /// How often the run checks for PFC deadlocks ([`Simulator::deadlock_period_ps`]).
    pub fn deadlock_period_ps(&self) -> Option<u64> {
        self.reps[0].deadlock_period_ps()
    }

    /// The PFC deadlocks found so far (partition 0 keeps the detector).
    pub fn deadlocks(&self) -> &crate::registry::DeadlockDetector {
        self.reps[0].deadlocks()
    }

    /// [`Simulator::check_deadlocks`] over the whole network, between windows: when some
    /// partition holds a received pause, every switch's state is moved into partition 0's
    /// replica for the check (packets read from their owners' arenas) and moved back.
    pub fn check_deadlocks(&mut self, now_ps: u64, horizon_ps: u64) -> usize {
        if self.reps[0].deadlock_period.is_none() {
            return 0;
        }
        let paused = self
            .reps
            .iter()
            .any(|r| crate::registry::DeadlockDetector::any_paused(&r.switches));
        if !paused {
            return 0;
        }
        let (first, rest) = self.reps.split_first_mut().expect("partitions");
        let pv = first.part.as_deref().expect("a replica");
        let owner: Vec<u16> = first
            .switches
            .iter()
            .map(|s| pv.part_of_node[s.node as usize] as u16)
            .collect();
        let swap = |first: &mut Simulator, rest: &mut [Simulator]| {
            for (s, &k) in owner.iter().enumerate() {
                if k != 0 {
                    std::mem::swap(
                        &mut first.switches[s],
                        &mut rest[k as usize - 1].switches[s],
                    );
                }
            }
        };
        swap(first, rest);
        let found = {
            let mut all: Vec<&crate::engine::arena::PacketArena> = vec![&first.arena];
            all.extend(rest.iter().map(|r| &r.arena));
            let nodes = &first.nodes;
            first.deadlock.check(
                &first.switches,
                crate::scheme::pfc::deadlock::Arenas {
                    all: &all,
                    of_switch: &owner,
                },
                |n| match nodes.get(n as usize) {
                    Some(super::NodeRef::Switch(s)) => Some(*s as usize),
                    _ => None,
                },
                now_ps,
                horizon_ps,
            )
        };
        swap(first, rest);
        found
    }

    /// Where the unfinished flows' packets are (as [`Simulator::stuck_report`]), from every
    /// partition's switches.
    pub fn stuck_report(&self, max_flows: usize) -> Option<String> {
        super::stuck::stuck_report_of(&self.reps, max_flows)
    }

    /// One simulator holding the whole run's state, for its outputs (it is not run further):
    /// every node's state from its owner, the flows' results from their senders, counters,
    /// histograms and monitors merged ([module docs](self)).
    pub fn into_merged(mut self) -> Simulator {
        self.take_remaining_flows();
        let now = self.now();
        let events = self.events();
        let mut reps = std::mem::take(&mut self.reps);
        let mut rest = reps.split_off(1);
        let mut m = reps.pop().expect("partition 0");
        let pv = m.part.take().expect("a replica");
        let owner = |n: u32| pv.part_of_node[n as usize] as usize;
        // Nodes.
        let mut moved = vec![0usize; rest.len() + 1];
        for (id, node) in m.nodes.clone().iter().enumerate() {
            let k = owner(id as u32);
            if k == 0 {
                continue;
            }
            let r = &mut rest[k - 1];
            // The packets the node holds move into partition 0's arena with it.
            match *node {
                super::NodeRef::Host(h) => {
                    std::mem::swap(&mut m.hosts[h as usize], &mut r.hosts[h as usize]);
                    for x in m.hosts[h as usize].ctrl.iter_mut() {
                        *x = move_packet(&mut m.arena, &r.arena, *x);
                        moved[k] += 1;
                    }
                }
                super::NodeRef::Switch(s) => {
                    std::mem::swap(&mut m.switches[s as usize], &mut r.switches[s as usize]);
                    for ep in m.switches[s as usize].ports.iter_mut() {
                        for q in ep.queues.iter_mut() {
                            for x in q.pkts.iter_mut() {
                                *x = move_packet(&mut m.arena, &r.arena, *x);
                                moved[k] += 1;
                            }
                        }
                    }
                }
            }
        }
        // One network again: no link leads to another partition.
        for tx in m.hosts.iter_mut().map(|h| &mut h.tx).chain(
            m.switches
                .iter_mut()
                .flat_map(|s| s.ports.iter_mut().map(|e| &mut e.tx)),
        ) {
            if tx.link.state == crate::link::LinkState::Remote {
                tx.link.state = crate::link::LinkState::Up;
            }
        }
        // Packets on the wires between partitions' nodes are alive too (in no queue).
        for (k, r) in rest.iter().enumerate() {
            m.arena
                .count_alive_elsewhere(r.arena.live().saturating_sub(moved[k + 1]));
        }
        // Flows: results from the sender, QP state of unfinished ones, receivers from theirs.
        let host_owner: Vec<usize> = m.hosts.iter().map(|h| owner(h.node)).collect();
        for f in 0..m.flows.len() {
            let (src, dst) = (m.flows[f].src, m.flows[f].dst);
            let (ks, kd) = (owner(src), owner(dst));
            if ks != 0 {
                let r = &rest[ks - 1];
                m.flows[f] = r.flows[f].clone();
                if let Some(st) = r.active.get_for(f as u32) {
                    let mut st = st.clone();
                    st.cc_slot = m.ccs.alloc(r.ccs.cloned(st.cc_slot));
                    m.active.alloc(st);
                }
            }
            if kd != 0 {
                let r = &rest[kd - 1];
                m.active.rx_copy_entry(f as u32, &r.active);
            }
        }
        // Host halves of schemes: each host's and flow's state from its owner.
        for r in &rest {
            let k = r.part.as_deref().map_or(0, |p| p.me as usize);
            let flows = &m.flows;
            let theirs_host = |h: usize| host_owner[h] == k;
            let theirs_flow = |f: u32| flows.get(f as usize).is_some_and(|fl| owner(fl.src) == k);
            for (a, b) in m.host_schemes.iter_mut().zip(&r.host_schemes) {
                a.absorb(b, &theirs_host, &theirs_flow);
            }
        }
        // Counters, histograms, meters.
        let mut order: Vec<(OrderKey, u32)> = pv
            .completion_keys
            .iter()
            .copied()
            .zip(m.completion_order.iter().copied())
            .collect();
        for r in &rest {
            m.counters.add(&r.counters);
            m.rtt.merge(&r.rtt);
            m.nic_misfiled += r.nic_misfiled;
            m.throughput.merge(&r.throughput);
            if let (Some(a), Some(b)) = (&mut m.sender_throughput, &r.sender_throughput) {
                a.merge(b);
            }
            m.arena.count_created(r.arena.created());
            let rp = r.part.as_deref().expect("a replica");
            order.extend(
                rp.completion_keys
                    .iter()
                    .copied()
                    .zip(r.completion_order.iter().copied()),
            );
        }
        order.sort_by_key(|&(k, _)| k);
        m.completion_order = order.into_iter().map(|(_, f)| f).collect();
        let switch_owner: Vec<usize> = m.switches.iter().map(|s| owner(s.node)).collect();
        use crate::metrics::buffer::{BufferMonitor, QueueSampler};
        let no_buf = || BufferMonitor::new(0, 0);
        let no_queue = || QueueSampler::new(Vec::new(), 0);
        let mut bufs = vec![std::mem::replace(&mut m.buffer_mon, no_buf())];
        let mut queues = vec![std::mem::replace(&mut m.queue_mon, no_queue())];
        for r in &mut rest {
            bufs.push(std::mem::replace(&mut r.buffer_mon, no_buf()));
            queues.push(std::mem::replace(&mut r.queue_mon, no_queue()));
        }
        m.buffer_mon =
            crate::metrics::buffer::BufferMonitor::merge_partitions(bufs, |i| switch_owner[i]);
        let queue_owner: Vec<usize> = queues[0]
            .keys()
            .iter()
            .map(|&(node, _)| owner(node))
            .collect();
        m.queue_mon =
            crate::metrics::buffer::QueueSampler::merge_partitions(queues, |i| queue_owner[i]);
        m.flows_total = m.flows.len() as u64;
        m.q.advance_clock(now);
        let collisions: u64 = rest.iter().map(|r| r.q.tie_collisions()).sum();
        m.q.count_events(events - m.q.events(), collisions);
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys of events at time `t` (ps) at node `n` (NIC wake-ups: one per node and instant).
    fn k(t: u64, n: u32) -> OrderKey {
        OrderKey::of(t, &Event::NicWake { node: n })
    }

    fn rep(halt: Halt, done: bool, last: Option<OrderKey>) -> Report {
        Report { halt, done, last }
    }

    #[test]
    fn a_partition_whose_part_never_held_keeps_the_run_going() {
        // Partition 1 ran to the window's end with traffic of its own: whatever partition 0
        // paused for, the stop is not in this window.
        let r = [
            rep(Halt::Paused(k(5, 0)), true, Some(k(3, 0))),
            rep(Halt::End, false, Some(k(9, 1))),
        ];
        assert_eq!(decide(&r), Decision::Resume(Free::All));
        let r = [
            rep(Halt::End, false, Some(k(3, 0))),
            rep(Halt::End, true, Some(k(9, 1))),
        ];
        assert_eq!(decide(&r), Decision::NextWindow);
    }

    #[test]
    fn the_stop_is_after_the_latest_event_when_nothing_is_pending_before_it() {
        // Both parts hold; the latest event executed anywhere is partition 1's at 9, and
        // partition 0's next event (12) comes after it: the sequential run stops after 9.
        let r = [
            rep(Halt::Paused(k(12, 0)), true, Some(k(3, 0))),
            rep(Halt::End, true, Some(k(9, 1))),
        ];
        assert_eq!(decide(&r), Decision::Stop(Some(k(9, 1))));
        // Both at the window's end, both holding.
        let r = [
            rep(Halt::End, true, Some(k(4, 0))),
            rep(Halt::End, true, None),
        ];
        assert_eq!(decide(&r), Decision::Stop(Some(k(4, 0))));
        // Nothing executed at all, and nothing to do: stop before any event.
        let r = [rep(Halt::End, true, None), rep(Halt::End, true, None)];
        assert_eq!(decide(&r), Decision::Stop(None));
    }

    #[test]
    fn a_partition_behind_the_latest_event_catches_up_to_it_first() {
        // Partition 0 paused at 5 while partition 1 ran to 9: in the sequential run,
        // partition 0's event at 5 comes before 9 (when partition 1's part did not hold
        // yet), so it executes; events from 9 on wait for the rule again.
        let r = [
            rep(Halt::Paused(k(5, 0)), true, Some(k(3, 0))),
            rep(Halt::End, true, Some(k(9, 1))),
        ];
        assert_eq!(decide(&r), Decision::Resume(Free::Below(k(9, 1))));
        // Same instant, order by node: node 0's event at 9 precedes node 1's.
        let r = [
            rep(Halt::Paused(k(9, 0)), true, None),
            rep(Halt::End, true, Some(k(9, 1))),
        ];
        assert_eq!(decide(&r), Decision::Resume(Free::Below(k(9, 1))));
    }

    #[test]
    fn crossings_keep_their_records_when_channels_are_appended() {
        let pkt = Packet::default();
        let ev = Event::Arrive {
            node: 1,
            port: 0,
            pkt: 0,
            egress: 0,
            seq: 0,
        };
        let mut a = CrossBox::default();
        a.items.push(Crossing {
            time_ps: 1,
            ev,
            pkt,
            int_at: 0,
            payload_at: u32::MAX,
        });
        a.ints.push(IntHop::default());
        let mut b = CrossBox::default();
        b.items.push(Crossing {
            time_ps: 2,
            ev,
            pkt,
            int_at: 0,
            payload_at: 0,
        });
        b.ints.push(IntHop::default());
        b.payloads.push([7; PAYLOAD_WORDS]);
        a.append(&mut b);
        assert!(b.items.is_empty() && b.ints.is_empty() && b.payloads.is_empty());
        assert_eq!(a.items.len(), 2);
        assert_eq!((a.items[1].int_at, a.items[1].payload_at), (1, 0));
        assert_eq!(a.payloads[0], [7; PAYLOAD_WORDS]);
    }
}
