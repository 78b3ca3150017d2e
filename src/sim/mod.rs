//! The simulator: owns the network state, runs the event loop, and turns the final state into
//! flow records and counters.
//!
//! A packet's life is a simple sequence of hops (htsim style): NIC arbiter → `host_transmit` (port
//! busy for the serialization time, arrival scheduled after serialization + propagation +
//! receiver pipeline delay) → switch forwarding path → … → receiving NIC, which turns the data
//! packet into its ACK *in place* and queues it for the reverse trip.
//!
//! The simulator drives the network's state machines: [`forward`] is the switch forwarding
//! path over [`crate::switch`]'s ports, queues and MMU; [`nic`] is the RDMA NIC over
//! [`crate::host`]'s QP state and transports; [`pulled`] drives a receiver-pulled transport
//! (NDP). The network modules below it hold state and pure mechanisms and never name the
//! simulator.

pub mod failure;
pub mod forward;
pub mod nic;
pub mod parallel;
pub mod partition;
pub mod pulled;

use std::collections::HashMap;

use crate::cc::CcConfig;
use crate::config::LossRecovery;
use crate::engine::arena::PacketArena;
use crate::engine::paged::PagedVec;
use crate::engine::{Event, EventQueue, NO_EGRESS};
use crate::host::{Flow, FlowSlab, FlowState, HostNic, LateCnp, RxSlot, RxState};
use crate::link::{LinkState, PortLink, TxPort};
use crate::metrics::FlowRecord;
use crate::metrics::buffer::{BufferMonitor, ThroughputMeter};
use crate::registry::{HostScheme, NetConfig, Switch, SwitchSchemes};
use crate::rng::Rng;
use crate::scheme::{Emit, Env, HostAction, Outbox};
use crate::switch::EgressPort;
use crate::switch::mmu::Mmu;
use crate::topology::routing::RouteTable;
use crate::topology::{NodeKind, TopologySpec};
use crate::units::NS;
use crate::workload::FlowSpec;
use crate::workload::stream::FlowStream;

mod stuck;
pub use stuck::OnDeadlock;

/// Which arena a node id refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeRef {
    /// Index into `Simulator::hosts`.
    Host(u32),
    /// Index into `Simulator::switches`.
    Switch(u32),
}

/// Global counters of a run.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Counters {
    /// Packets that crossed one link (one transmission).
    pub packet_hops: u64,
    /// Packets dropped by switch buffer admission.
    pub drops: u64,
    /// Packets dropped by link error models.
    pub drops_link_error: u64,
    /// Packets dropped for lack of a route (never on a validated topology).
    pub drops_no_route: u64,
    /// Data packets sent by NICs (including retransmissions).
    pub data_packets: u64,
    /// Data packets that were retransmissions.
    pub retx_packets: u64,
    /// ACKs generated.
    pub acks: u64,
    /// NACKs generated.
    pub nacks: u64,
    /// Retransmission timeouts that fired.
    pub timeouts: u64,
    /// Payload bytes delivered in order to receivers for the first time.
    pub delivered_bytes: u64,
    /// Flows completed.
    pub flows_completed: u64,
    /// Packets that reached their final destination and were consumed there.
    pub packets_consumed: u64,
    /// CNP packets sent by receivers (CNP mode).
    pub cnps: u64,
    /// Flow-control pauses of QPs, whatever scheme imposed them (SFC BTS, OnRamp): the sum of
    /// the flows' [`Flow::pauses`].
    pub qp_pauses: u64,
    /// Time QPs spent paused by flow control, picoseconds: the sum of the flows'
    /// [`Flow::paused_ps`].
    pub qp_paused_ps: u64,
}

impl Counters {
    /// Add `o`'s counts (the partitions of a run split over threads).
    pub fn add(&mut self, o: &Counters) {
        let Counters {
            packet_hops,
            drops,
            drops_link_error,
            drops_no_route,
            data_packets,
            retx_packets,
            acks,
            nacks,
            timeouts,
            delivered_bytes,
            flows_completed,
            packets_consumed,
            cnps,
            qp_pauses,
            qp_paused_ps,
        } = o;
        self.packet_hops += packet_hops;
        self.drops += drops;
        self.drops_link_error += drops_link_error;
        self.drops_no_route += drops_no_route;
        self.data_packets += data_packets;
        self.retx_packets += retx_packets;
        self.acks += acks;
        self.nacks += nacks;
        self.timeouts += timeouts;
        self.delivered_bytes += delivered_bytes;
        self.flows_completed += flows_completed;
        self.packets_consumed += packets_consumed;
        self.cnps += cnps;
        self.qp_pauses += qp_pauses;
        self.qp_paused_ps += qp_paused_ps;
    }
}

/// The whole simulated network.
pub struct Simulator {
    /// Model parameters.
    pub cfg: NetConfig,
    /// Topology.
    pub topo: TopologySpec,
    /// Routing tables.
    pub routes: RouteTable,
    /// Future events.
    pub q: EventQueue,
    /// Live packets.
    pub arena: PacketArena,
    /// Node id → host/switch index.
    pub nodes: Vec<NodeRef>,
    /// Host NICs.
    pub hosts: Vec<HostNic>,
    /// Switches.
    pub switches: Vec<Switch>,
    /// Flows, indexed as in the workload: description and result (56 B each), in pages that
    /// a run streaming its results frees as their flows retire ([`Self::stream_results`]).
    pub flows: PagedVec<Flow>,
    /// Path classes of the host pairs ([`Flow::pair_class`]): the flows' ideal FCTs.
    pub(crate) paths: PathClasses,
    /// QP state of the flows in progress, a recycled slot each: the senders of the active
    /// flows (started, not finished), and the receivers of the flows whose data is arriving
    /// (opened by a flow's first data packet at its receiver, closed when the receiver holds
    /// every byte).
    pub(crate) active: FlowSlab,
    /// Receiver CNP times of receivers closed within the last CNP interval.
    pub(crate) late_cnp: LateCnp,
    /// Counters.
    pub counters: Counters,
    /// Round-trip latency of every acknowledged data packet (one sample per ACK or NACK a
    /// sender receives: arrival − the data packet's `sent_ps`): `summary.json`'s `rtt`.
    pub rtt: crate::metrics::latency::LatencyHistogram,
    /// Per-switch shared-buffer watermarks.
    pub buffer_mon: BufferMonitor,
    /// Per-receiver goodput.
    pub throughput: ThroughputMeter,
    /// Per-sender goodput (payload delivered from each host), when `cfg.sender_throughput`.
    pub sender_throughput: Option<ThroughputMeter>,
    /// Per-port queue time series (ports listed in `cfg.queue_monitor`).
    pub queue_mon: crate::metrics::buffer::QueueSampler,
    /// Flow ids in completion order.
    pub completion_order: Vec<u32>,
    /// Controller state of the active flows (`FlowState::cc_slot`).
    pub(crate) ccs: crate::cc::CcSlab,
    /// Flow ids in start order (ties in workload order): the arrival stream.
    /// (Empty when the workload is sorted by start time: then the workload order.)
    arrivals: Vec<u32>,
    /// Index in `arrivals` of the flow whose `FlowStart` is pending.
    next_arrival: usize,
    /// The lazy source of the flows not yet taken ([`Self::with_stream`]); `None` when every
    /// flow was given up front.
    stream: Option<Box<StreamArrivals>>,
    /// Number of flows in the run, once known (`u64::MAX` while a stream still has flows).
    flows_total: u64,
    /// Where the records go in a run that streams its results ([`Self::stream_results`]);
    /// `None`: every record stays in `flows` until the end.
    pub(crate) results: Option<Box<ResultStream>>,
    /// Max base RTT over host pairs (HPCC-sim definition), picoseconds.
    pub base_rtt_ps: u64,
    /// Max BDP over host pairs (HPCC-sim definition), bytes.
    pub bdp_bytes: u64,
    /// The run's transport and its parameters (every QP runs it).
    pub transport: crate::host::transport::TransportParams,
    /// The scheme whose transport the run uses ([`crate::scheme::Scheme::transport`]), if
    /// any: its host timers are the transport's (the NIC drives them).
    pub(crate) transport_scheme: Option<crate::scheme::SchemeId>,
    /// Index in [`Self::host_schemes`] of that scheme's host half, which keeps every QP's
    /// transport state (`usize::MAX` when the transport is a built-in one).
    pub(crate) transport_host: usize,
    /// Congestion control in use.
    pub cc_cfg: CcConfig,
    /// Static environment of the schemes' hooks.
    pub env: Env,
    /// Host halves of the schemes, in registry order (one instance for all hosts each).
    pub host_schemes: Vec<HostScheme>,
    /// Some host half sees every data packet sent ([`crate::scheme::HostHooks::wants_sends`]):
    /// checked once per packet instead of asking each scheme.
    pub(crate) host_send_hooks: bool,
    /// Some host half sees every packet a NIC transmits
    /// ([`crate::scheme::HostHooks::wants_transmits`]: CBFC).
    pub(crate) host_tx_hooks: bool,
    /// The NIC sends ACK/NACKs regardless of their priority's pause bit
    /// ([`NetConfig::ack_high_prio`]), except under CBFC, where an ACK in a data VL needs
    /// that VL's credits like any packet (IB has no credit-free data VL).
    pub(crate) ack_ignores_pause: bool,
    /// Some host half vetoes single flows in the NIC arbiter
    /// ([`crate::scheme::HostHooks::may_send`]).
    pub(crate) host_gate: bool,
    /// Times the NIC arbiter picked a QP filed as ready that had nothing to send (a state
    /// change without `nic_refile`); must stay 0 ([`Self::check_invariants`]).
    pub(crate) nic_misfiled: u64,
    /// Requests of switch-side schemes waiting to be carried out (reused).
    pub(crate) outbox: Outbox<Emit>,
    /// Requests of host-side schemes waiting to be carried out (reused).
    pub(crate) host_out: Outbox<HostAction>,
    /// Random streams of the link-error model, one per receiving port (node, port), made on
    /// its first draw from the run's seed and the port: a port's losses depend on its own
    /// arrivals only, not on the order in which the whole network's events interleave.
    link_rngs: std::collections::HashMap<(u32, u16), Rng>,
    /// Some link has a nonzero error rate (otherwise arrivals skip the error model).
    link_errors: bool,
    /// PFC deadlocks found ([`Self::check_deadlocks`]).
    pub(crate) deadlock: crate::registry::DeadlockDetector,
    /// Deadlock checking period, picoseconds; `None` without lossless PFC.
    deadlock_period: Option<u64>,
    /// What a run does when it finds a PFC deadlock ([`crate::runguard::run_watched`]).
    pub on_deadlock: OnDeadlock,
    /// A stuck run's monitors sample until this time ([`Self::monitor_until`]).
    monitor_end_ps: Option<u64>,
    /// The packet capture being written ([`Self::start_capture`]); `None` = none.
    capture: Option<Box<crate::capture::Capture>>,
    /// Link-failure state; `None` in a run without link events.
    pub failures: Option<Box<failure::FailureState>>,
    /// This simulator's partition when it is one replica of a run split over threads
    /// ([`parallel`]); `None` in a run on one thread.
    pub(crate) part: Option<Box<parallel::PartView>>,
}

/// How many events ahead of the one executing the event loop prefetches a packet slot.
const PREFETCH_DISTANCE: usize = 4;

/// The event loop prefetches only while at least this many packets are alive. Below it the
/// state the next events touch is still in cache and the prefetching is pure overhead;
/// above it the prefetching pays. Measured on a 2-core machine (user seconds, alternated
/// runs): without any prefetch `fattree320-websearch30 --quick` (peak 16 K live
/// packets) 1.11 → 0.95 s and `scale-1024 --quick` (34 K) 0.72 → 0.64 s, but `scale-1024`
/// full (65 K) 4.9 → 7.0 s and the §5.3 benchmark (≈ 570 K) 12.5 → 15.5 s.
const PREFETCH_MIN_LIVE: usize = 40_000;

/// Progress report passed to the run callback.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Simulated time, picoseconds.
    pub now_ps: u64,
    /// Events executed.
    pub events: u64,
    /// Flows completed.
    pub flows_completed: u64,
    /// Flows in the workload (while a stream still gives flows: the count its memory check
    /// found, else its estimate; see [`Simulator::flows_expected`]).
    pub flows_total: u64,
}

/// A transmission just started on a port ([`Simulator::start_tx`]), for
/// [`Simulator::launch`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Departure {
    /// When it started, picoseconds.
    now: u64,
    /// Its serialization time, picoseconds.
    ser: u64,
    /// A TxDone is wanted (the port has more to send and none is pending).
    more: bool,
    /// The peer node it arrives at.
    peer: u32,
    /// The peer's port.
    peer_port: u16,
    /// Propagation delay, picoseconds ([`failure::DEAD_LINK`] when the link is down).
    delay: u64,
    /// The transmission's sequence number on the port ([`TxPort::launches`]).
    seq: u16,
    /// The port's order hints ([`TxPort::hints`]).
    hints: crate::engine::PortHints,
}

/// Per host pair quantities computed the way HPCC-sim's `third.cc` does (over one BFS shortest
/// path): base RTT = 2·Σ propagation + Σ over hops of the MTU payload's serialization (one
/// direction, no headers), each term in integer nanoseconds; bottleneck = min link rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PairMetrics {
    /// Base RTT, nanoseconds.
    pub rtt_ns: u64,
    /// Bottleneck rate, bits per second.
    pub bottleneck_bps: u64,
}

/// HPCC-sim's per-pair metrics for a path made of `links` (each `(rate_bps, delay_ps)`).
pub fn pair_metrics(links: impl Iterator<Item = (u64, u64)>, mtu_bytes: u64) -> PairMetrics {
    let mut prop_ns = 0u64;
    let mut tx_ns = 0u64;
    let mut bottleneck = u64::MAX;
    for (rate, delay_ps) in links {
        prop_ns = prop_ns.saturating_add(delay_ps / NS);
        tx_ns = tx_ns.saturating_add(mtu_bytes.saturating_mul(8_000_000_000) / rate.max(1));
        bottleneck = bottleneck.min(rate);
    }
    PairMetrics {
        rtt_ns: prop_ns.saturating_mul(2).saturating_add(tx_ns),
        bottleneck_bps: bottleneck,
    }
}

/// Bandwidth-delay product of a pair, bytes: `rtt · bottleneck / 8` (truncated), the per-pair
/// form of [`crate::topology::routing::RttBounds::max_bdp_bytes`].
pub fn pair_bdp_bytes(m: PairMetrics) -> u64 {
    let b = m.rtt_ns as u128 * m.bottleneck_bps as u128 / 8_000_000_000;
    b.min(u64::MAX as u128) as u64
}

/// HPCC-sim's "standalone" FCT of a `size`-byte flow, nanoseconds:
/// `base_rtt + (size + ⌈size/MTU⌉·hdr)·8 / bottleneck` (integer ns).
///
/// Computed in 64 bits when the bit count in ns·bit/s fits (flows up to ≈ 2 GB), else in
/// 128 bits: the same quotient, without the slow 128-bit division for every record (one per
/// flow when the statistics are computed).
pub fn ideal_fct_ns(m: PairMetrics, size: u64, mtu: u64, hdr_bytes: u64) -> u64 {
    let bps = m.bottleneck_bps.max(1);
    let ser = size
        .div_ceil(mtu.max(1))
        .checked_mul(hdr_bytes)
        .and_then(|h| h.checked_add(size))
        .and_then(|total| total.checked_mul(8 * 1_000_000_000))
        .map(|bits| u128::from(bits / bps))
        .unwrap_or_else(|| {
            let total = size as u128 + size.div_ceil(mtu.max(1)) as u128 * hdr_bytes as u128;
            total * 8 * 1_000_000_000 / bps as u128
        });
    m.rtt_ns.saturating_add(ser.min(u64::MAX as u128) as u64)
}

/// Build step of [`Simulator::new`]: the node map, one NIC per host and one switch per
/// switch node (egress ports with their links, MMU, ECMP salt and random stream), without
/// schemes.
fn build_nodes(topo: &TopologySpec, cfg: &NetConfig) -> (Vec<NodeRef>, Vec<HostNic>, Vec<Switch>) {
    let ports = topo.ports();
    let tiers = crate::topology::shapes::tiers(topo);
    let mut nodes = Vec::with_capacity(topo.num_nodes());
    let mut hosts = Vec::new();
    let mut switches = Vec::new();
    let link_of = |n: usize, i: usize| {
        let ps = ports[n][i];
        let l = &topo.links[ps.link as usize];
        PortLink {
            peer: ps.peer,
            peer_port: ps.peer_port,
            state: LinkState::Up,
            rate_bps: l.rate_bps,
            delay_ps: l.delay_ps,
            error_rate: l.error_rate,
            tx_bytes: 0,
        }
    };
    for n in 0..topo.num_nodes() {
        match topo.kinds[n] {
            NodeKind::Host => {
                nodes.push(NodeRef::Host(hosts.len() as u32));
                hosts.push(HostNic {
                    node: n as u32,
                    tx: TxPort::new(link_of(n, 0)),
                    ctrl: Default::default(),
                    arb: Default::default(),
                    wake_at_ps: 0,
                });
            }
            NodeKind::Switch => {
                nodes.push(NodeRef::Switch(switches.len() as u32));
                let eps = (0..ports[n].len())
                    .map(|i| {
                        let hf = topo.kinds[ports[n][i].peer as usize] == NodeKind::Host;
                        EgressPort::new(link_of(n, i), cfg.queues_per_port, hf)
                    })
                    .collect::<Vec<_>>();
                switches.push(Switch {
                    node: n as u32,
                    tier: tiers[n],
                    ports: eps,
                    ecmp_seed: Rng::derive(cfg.seed, "ecmp", n as u64).next_u64(),
                    mmu: Mmu::new(cfg.buffer_of(n as u32)),
                    rng: Rng::derive(cfg.seed, "ecn", n as u64),
                    schemes: SwitchSchemes::default(),
                    hooks: 0,
                    by_hook: [0; crate::scheme::hook::COUNT],
                    hooked: 0,
                });
            }
        }
    }
    (nodes, hosts, switches)
}

/// Flows converted per chunk by [`build_flows`].
const BUILD_CHUNK: usize = 1 << 16;

/// The checks of flow `i` of a workload (`i` names it in the error): both ends are hosts and
/// differ, its size is at least 1 byte, its priority a data priority.
fn check_flow(
    topo: &TopologySpec,
    cfg: &NetConfig,
    nodes: &[NodeRef],
    i: usize,
    f: &FlowSpec,
) -> Result<(), String> {
    let bad = |m: String| Err(format!("flow {i} ({} -> {}): {m}", f.src, f.dst));
    for n in [f.src, f.dst] {
        if n as usize >= topo.num_nodes() || topo.kinds[n as usize] != NodeKind::Host {
            return bad(format!("node {n} is not a host"));
        }
    }
    if f.src == f.dst {
        return bad("source and destination are the same host".into());
    }
    if f.size_bytes == 0 {
        return bad("size must be at least 1 byte".into());
    }
    if f.prio == 0 || f.prio as usize >= cfg.queues_per_port {
        return bad(format!(
            "priority {} must be in 1..{} (queue 0 is the control class)",
            f.prio, cfg.queues_per_port
        ));
    }
    if !matches!(nodes[f.src as usize], NodeRef::Host(_)) {
        return bad("source is not a host".into());
    }
    Ok(())
}

/// Build step of [`Simulator::new`]: check every flow and create its description (UDP source
/// ports numbered per host pair from 10000, as HPCC-sim; ideal FCT from the pair's path). QP
/// state is created at the flow's start. The workload list is consumed from its end, a chunk
/// at a time, releasing its memory as the descriptions are built, so that the two lists never
/// coexist in full (peak ≈ the descriptions, not the descriptions plus the workload).
fn build_flows(
    topo: &TopologySpec,
    routes: &RouteTable,
    cfg: &NetConfig,
    mut flows: Vec<FlowSpec>,
    nodes: &[NodeRef],
) -> Result<(PagedVec<Flow>, PathClasses), String> {
    let mtu = cfg.mtu_bytes as u64;
    // Check every flow first, in workload order (the first bad one is reported), and count
    // the flows of each host pair (source ports are numbered in workload order).
    let mut per_pair: HashMap<(u32, u32), u64> = HashMap::new();
    for (i, f) in flows.iter().enumerate() {
        check_flow(topo, cfg, nodes, i, f)?;
        *per_pair.entry((f.src, f.dst)).or_insert(0) += 1;
    }
    let mut classes = PathClassifier::default();
    let mut paths = PathClasses::default();
    let n = flows.len();
    // Chunks built from the end of the workload, last chunk first.
    let mut chunks: Vec<Vec<Flow>> = Vec::with_capacity(n.div_ceil(BUILD_CHUNK));
    while !flows.is_empty() {
        let tail = flows.split_off(flows.len() - flows.len().min(BUILD_CHUNK));
        flows.shrink_to_fit();
        let mut chunk = Vec::with_capacity(tail.len());
        let base = flows.len();
        for (j, f) in tail.iter().enumerate().rev() {
            // The k-th flow (from 0, workload order) of a pair gets port 10000 + k (mod 2^16).
            let k = per_pair.get_mut(&(f.src, f.dst)).expect("counted above");
            *k -= 1;
            let sport = 10000u16.wrapping_add(*k as u16);
            let class = classes.class(
                &mut paths,
                routes,
                topo,
                mtu,
                (base + j) as u32,
                f.src,
                f.dst,
            );
            chunk.push(Flow::new(f, sport, class));
        }
        chunk.reverse();
        chunks.push(chunk);
    }
    drop(flows);
    let mut fl = PagedVec::new();
    fl.reserve(n);
    while let Some(c) = chunks.pop() {
        for f in c {
            fl.push(f);
        }
    }
    Ok((fl, paths))
}

/// Host pair → path class ([`Flow::pair_class`]): a class per distinct (base RTT, bottleneck),
/// a handful on regular topologies; past 65,535 classes a flow's metrics go to
/// [`PathClasses::overflow`].
#[derive(Clone, Debug, Default)]
struct PathClassifier {
    pair_cache: HashMap<(u32, u32), u16>,
    class_of: HashMap<PairMetrics, u16>,
}

impl PathClassifier {
    /// The class of flow `id` from `src` to `dst` (a new class is added to `paths`).
    #[allow(clippy::too_many_arguments)]
    fn class(
        &mut self,
        paths: &mut PathClasses,
        routes: &RouteTable,
        topo: &TopologySpec,
        mtu: u64,
        id: u32,
        src: u32,
        dst: u32,
    ) -> u16 {
        let class = match self.pair_cache.get(&(src, dst)) {
            Some(&c) => c,
            None => {
                let c = self.class_uncached(paths, routes, topo, mtu, src, dst);
                self.pair_cache.insert((src, dst), c);
                c
            }
        };
        if class == OVERFLOW_CLASS {
            // More than 65,535 path classes (irregular link rates and delays): this flow's
            // path metrics are kept on the side.
            let m = pair_metrics_of(routes, topo, src, dst, mtu);
            paths.overflow.insert(id, m);
        }
        class
    }

    /// The class of the path from `src` to `dst`, without the per-pair cache (a caller that
    /// caches per pair itself), and without recording an overflow flow's metrics.
    fn class_uncached(
        &mut self,
        paths: &mut PathClasses,
        routes: &RouteTable,
        topo: &TopologySpec,
        mtu: u64,
        src: u32,
        dst: u32,
    ) -> u16 {
        let m = pair_metrics_of(routes, topo, src, dst, mtu);
        *self.class_of.entry(m).or_insert_with(|| {
            if paths.classes.len() < OVERFLOW_CLASS as usize {
                paths.classes.push(m);
                (paths.classes.len() - 1) as u16
            } else {
                OVERFLOW_CLASS
            }
        })
    }
}

/// A run's flows taken from a lazy [`FlowStream`] one at a time, as the run reaches their
/// start ([`Simulator::with_stream`]): flow ids are the stream's order, which is the workload
/// order of the list the stream's generators would have built. Holds only per-host-pair
/// state (source-port counters, path classes).
#[derive(Clone)]
struct StreamArrivals {
    stream: FlowStream,
    /// Per host pair: the flows taken so far (the next one's source port is 10000 + this,
    /// mod 2^16, as [`build_flows`] numbers them) and the pair's path class (one lookup per
    /// flow).
    per_pair: HashMap<(u32, u32), (u16, u16)>,
    classes: PathClassifier,
    /// The first flow that failed [`check_flow`]: no flow is taken after it.
    error: Option<String>,
    /// The run's flow count as expected before it (the stream's estimate, or the exact count
    /// of [`Simulator::expect_flows`]), for progress reports.
    expected: u64,
}

/// Receives the record of each flow of a run that streams its results
/// ([`Simulator::stream_results`]): each completed flow's as it completes (completion order,
/// the order of HPCC-sim's `fct.txt`), then, at [`Simulator::finish`], every other flow's
/// (unfinished, `fct_ps: None`), in no particular order.
pub trait RecordSink: Send {
    /// Take one record. An error stops the writing (the run goes on; see
    /// [`Simulator::results_error`]).
    fn record(&mut self, r: &FlowRecord) -> std::io::Result<()>;
}

impl<F: FnMut(&FlowRecord) -> std::io::Result<()> + Send> RecordSink for F {
    fn record(&mut self, r: &FlowRecord) -> std::io::Result<()> {
        self(r)
    }
}

/// The state of a run that streams its results.
pub(crate) struct ResultStream {
    sink: Box<dyn RecordSink>,
    /// The first error of the sink (no record is given after it).
    error: Option<String>,
    /// Flows whose record was given (and whose memory went).
    retired: u64,
    /// [`Simulator::finish`] gave the remaining flows.
    closed: bool,
    /// Retired flows that had not started (start after the time of their retirement).
    not_started: u64,
}

/// Path class [`Flow::pair_class`] of flows whose ideal FCT is in [`PathClasses::overflow`].
const OVERFLOW_CLASS: u16 = u16::MAX;

/// The distinct (base RTT, bottleneck) of the host pairs with flows: [`Flow::pair_class`]
/// indexes them, so a flow's ideal FCT takes 2 B instead of 8.
#[derive(Clone, Debug, Default)]
pub struct PathClasses {
    /// Metrics per class.
    classes: Vec<PairMetrics>,
    /// Path metrics of the flows of class [`OVERFLOW_CLASS`], by flow id (only on topologies
    /// with more than 65,535 classes).
    overflow: HashMap<u32, PairMetrics>,
}

/// [`pair_metrics`] of the path from `src` to `dst`.
fn pair_metrics_of(
    routes: &RouteTable,
    topo: &TopologySpec,
    src: u32,
    dst: u32,
    mtu: u64,
) -> PairMetrics {
    let p = routes.path(topo, src, dst);
    pair_metrics(
        p.links.iter().map(|&l| {
            (
                topo.links[l as usize].rate_bps,
                topo.links[l as usize].delay_ps,
            )
        }),
        mtu,
    )
}

/// Build step of [`Simulator::new`]: the switch halves of the schemes on every switch, and
/// the union of their hook flags.
fn install_schemes(cfg: &NetConfig, env: &Env, switches: &mut [Switch]) {
    for sw in switches.iter_mut() {
        // A switch with its own buffer size builds its schemes (PFC's thresholds) from it.
        let mut own;
        let c = if cfg.switch_buffer_bytes.iter().any(|(n, _)| *n == sw.node) {
            own = cfg.clone();
            own.buffer = cfg.buffer_of(sw.node);
            &own
        } else {
            cfg
        };
        sw.schemes = SwitchSchemes::build(c, env, sw.tier, &sw.ports);
        sw.hooks = 0;
        sw.by_hook = [0; crate::scheme::hook::COUNT];
        sw.hooked = 0;
        for (id, h) in sw.schemes.hooks() {
            sw.hooks |= h;
            if h != 0 {
                sw.hooked |= id.bit();
            }
            for (k, set) in sw.by_hook.iter_mut().enumerate() {
                if h & (1 << k) != 0 {
                    *set |= id.bit();
                }
            }
        }
    }
}

/// Build step of [`Simulator::new`]: check the queue-monitor entries (switch, port) and tag
/// those ports.
/// The static environment of the schemes' hooks: NIC rate `host_rate_bps`, max base RTT
/// `base_rtt_ps`, `num_hosts` hosts, the configuration's queues and wire sizes.
fn scheme_env(cfg: &NetConfig, host_rate_bps: u64, base_rtt_ps: u64, num_hosts: usize) -> Env {
    Env {
        host_rate_bps,
        base_rtt_ps,
        queues_per_port: cfg.queues_per_port,
        num_hosts,
        sizes: crate::engine::packet::WireSizes {
            framing: cfg.framing,
            int_bytes: cfg.int_bytes,
            irn_sack: matches!(cfg.loss_recovery, LossRecovery::Irn { .. }),
        },
        mtu_bytes: cfg.mtu_bytes,
    }
}

/// Streaming arrivals: flow ids in start order (ties in workload order), one `FlowStart`
/// pending at a time (see `Event::FlowStart`). Workloads come sorted by start time: then the
/// arrival order is the workload order and needs no list (4 B per flow): empty.
fn arrival_order(fl: &PagedVec<Flow>) -> Vec<u32> {
    if fl.iter().is_sorted_by_key(|f| f.start_ps) {
        Vec::new()
    } else {
        let mut a: Vec<u32> = (0..fl.len() as u32).collect();
        a.sort_by_key(|&i| fl[i as usize].start_ps);
        a
    }
}

/// The flow that arrives first (given [`arrival_order`]'s `arrivals`), if any.
fn first_arrival(fl: &PagedVec<Flow>, arrivals: &[u32]) -> Option<u32> {
    if fl.is_empty() {
        None
    } else {
        Some(arrivals.first().copied().unwrap_or(0))
    }
}

/// Which per-packet host hooks some host half implements (checked once per packet instead of
/// asking each scheme).
struct HostHookFlags {
    /// [`crate::scheme::HostHooks::wants_sends`].
    sends: bool,
    /// [`crate::scheme::HostHooks::wants_transmits`].
    transmits: bool,
    /// [`crate::scheme::HostHooks::gates_sends`].
    gates: bool,
}

impl HostHookFlags {
    fn of(host_schemes: &[HostScheme]) -> Self {
        use crate::scheme::HostHooks;
        HostHookFlags {
            sends: host_schemes.iter().any(|h| h.wants_sends()),
            transmits: host_schemes.iter().any(|h| h.wants_transmits()),
            gates: host_schemes.iter().any(|h| h.gates_sends()),
        }
    }
}

/// Index in `host_schemes` of scheme `id`'s host half (`usize::MAX` for none): the host half
/// that keeps the QPs' state of a scheme's transport.
fn host_half_of(host_schemes: &[HostScheme], id: Option<crate::scheme::SchemeId>) -> usize {
    let i = host_schemes.iter().position(|s| Some(s.id()) == id);
    debug_assert!(
        id.is_none() || i.is_some(),
        "a scheme's transport needs the scheme's host half"
    );
    i.unwrap_or(usize::MAX)
}

/// The run's transport: a scheme's own ([`crate::scheme::Scheme::transport`]: NDP's), else
/// the configured loss recovery (IRN's cap on outstanding bytes defaulting to `max_bdp_bytes`).
fn transport_params(
    cfg: &NetConfig,
    env: &Env,
    max_bdp_bytes: u64,
) -> crate::host::transport::TransportParams {
    use crate::host::transport::TransportParams;
    if let Some((_, t)) = cfg.scheme_transport(env) {
        return t;
    }
    match cfg.loss_recovery {
        LossRecovery::Gbn {
            rto_ps,
            nack_interval_ps,
        } => TransportParams::gbn(rto_ps, nack_interval_ps),
        LossRecovery::Irn {
            rto_low_ps,
            rto_high_ps,
            bdp_cap_bytes,
        } => TransportParams::irn(
            rto_low_ps,
            rto_high_ps,
            if bdp_cap_bytes > 0 {
                bdp_cap_bytes
            } else {
                max_bdp_bytes
            },
        ),
    }
}

fn tag_monitored_ports(
    cfg: &NetConfig,
    nodes: &[NodeRef],
    switches: &mut [Switch],
) -> Result<(), String> {
    for (i, &(node, port)) in cfg.queue_monitor.iter().enumerate() {
        let sw = match nodes.get(node as usize) {
            Some(NodeRef::Switch(s)) => &mut switches[*s as usize],
            _ => {
                return Err(format!(
                    "queue monitor entry {i}: node {node} is not a switch"
                ));
            }
        };
        let np = sw.ports.len();
        let ep = sw.ports.get_mut(port as usize).ok_or_else(|| {
            format!("queue monitor entry {i}: switch {node} has ports 0..{np}, not {port}")
        })?;
        ep.mon = i as u32;
    }
    Ok(())
}

/// Build step of [`Simulator::new`]: an event queue sized so that a packet's next event
/// (serialization + propagation + pipeline delay) normally falls inside its wheel.
fn event_queue_for(topo: &TopologySpec, cfg: &NetConfig) -> EventQueue {
    let max_hop_ps = topo
        .links
        .iter()
        .map(|l| l.delay_ps + cfg.framing.ser_ps(cfg.mtu_bytes + 200, l.rate_bps))
        .max()
        .unwrap_or(0)
        + cfg.switch_delay_ps.max(cfg.nic_delay_ps);
    let mut ports = vec![0usize; topo.num_nodes()];
    for l in &topo.links {
        ports[l.a as usize] += 1;
        ports[l.b as usize] += 1;
    }
    let max_ports = ports.iter().copied().max().unwrap_or(0);
    EventQueue::for_horizon(2 * max_hop_ps).for_network(topo.num_nodes(), max_ports)
}

/// Give every port the queue's order summaries of its `TxDone` and of its transmissions'
/// arrivals ([`TxPort::hints`]).
fn set_port_hints(q: &EventQueue, hosts: &mut [HostNic], switches: &mut [Switch]) {
    let set = |node: u32, port: u16, tx: &mut TxPort| {
        tx.hints = q.port_hints(node, port, tx.link.peer, tx.link.peer_port);
    };
    for h in hosts {
        set(h.node, 0, &mut h.tx);
    }
    for s in switches {
        for (i, ep) in s.ports.iter_mut().enumerate() {
            set(s.node, i as u16, &mut ep.tx);
        }
    }
}

impl Simulator {
    /// Build a simulator for `topo` with model `cfg`, congestion control `cc` and the given
    /// flows. Errors describe bad input (unknown hosts, zero sizes, bad priorities).
    pub fn new(
        topo: TopologySpec,
        cfg: NetConfig,
        cc: CcConfig,
        flows: &[FlowSpec],
    ) -> Result<Self, String> {
        Self::with_flows(topo, cfg, cc, flows.to_vec())
    }

    /// [`Self::new`] taking the workload list, which is released while the flows'
    /// descriptions are built (for runs of millions of flows: the two lists never coexist).
    pub fn with_flows(
        topo: TopologySpec,
        cfg: NetConfig,
        cc: CcConfig,
        flows: Vec<FlowSpec>,
    ) -> Result<Self, String> {
        Self::build(topo, cfg, cc, flows, None)
    }

    /// [`Self::new`] taking the flows from a lazy stream (the scenario's generators,
    /// [`crate::scenario::from_str_streaming`]), one at a time as the run reaches each start:
    /// no workload list exists, and the run holds the flows' 56 B descriptions and results
    /// (`flows`) but no generator output. Flow ids, source ports and every output are those
    /// of [`Self::with_flows`] on the collected stream (the stream's order is the list's).
    /// Schemes that keep per-flow host state sized by the number of flows (OnRamp, PB-FS,
    /// NDP: [`crate::scheme::SchemeConfig::needs_flow_list`]): with them the stream is
    /// collected first (same results, list memory). A flow that fails the
    /// checks of [`Self::with_flows`] ends the taking of flows; [`Self::stream_error`] says
    /// which (the first one fails here).
    pub fn with_stream(
        topo: TopologySpec,
        cfg: NetConfig,
        cc: CcConfig,
        stream: FlowStream,
    ) -> Result<Self, String> {
        if cfg.schemes.needs_flow_list() {
            return Self::with_flows(topo, cfg, cc, stream.into_vec());
        }
        let mut sim = Self::build(topo, cfg, cc, Vec::new(), Some(stream))?;
        sim.flows_total = u64::MAX;
        if sim.take_flow() {
            sim.q
                .schedule(sim.flows[0].start_ps, Event::FlowStart { flow: 0 });
        }
        if let Some(e) = sim.stream_error() {
            return Err(e.to_string());
        }
        Ok(sim)
    }

    fn build(
        topo: TopologySpec,
        cfg: NetConfig,
        cc: CcConfig,
        flows: Vec<FlowSpec>,
        stream: Option<FlowStream>,
    ) -> Result<Self, String> {
        topo.validate()?;
        // Every range check of the model parameters lives in one place (`NetConfig::issues`);
        // the scenario and HPCC front ends report the same issues with their key and line.
        cfg.validate().map_err(|i| i.to_string())?;
        cfg.check_switch_buffers(&topo)?;
        let routes = RouteTable::try_build(&topo)?;
        // NIC rate: the slowest host link (PFC's α doubles per rate doubling above it).
        let host_rate = topo.host_rate_bps().unwrap_or(1);
        // Global base RTT / BDP (HPCC GLOBAL_T 1): maxima over host pairs.
        let mtu = cfg.mtu_bytes as u64;
        // DCTCP's packets-per-window estimate uses the network's MTU, as HPCC-sim's NIC `Mtu`
        // is `PACKET_PAYLOAD_SIZE` (the preset's 1000 B is only the default network's).
        let mut cc = cc;
        if let CcConfig::Dctcp(p) = &mut cc {
            p.mtu_bytes = mtu;
        }
        let bounds = routes.max_base_rtt(&topo, mtu);
        let (nodes, mut hosts, mut switches) = build_nodes(&topo, &cfg);
        let env = scheme_env(&cfg, host_rate, bounds.max_base_rtt_ps, hosts.len());
        cfg.check_run(&cc, &topo)?;
        let (fl, paths) = build_flows(&topo, &routes, &cfg, flows, &nodes)?;
        install_schemes(&cfg, &env, &mut switches);
        let host_schemes = crate::registry::build_host_schemes(&cfg, &env, hosts.len(), fl.len());
        tag_monitored_ports(&cfg, &nodes, &mut switches)?;
        let mut q = event_queue_for(&topo, &cfg);
        set_port_hints(&q, &mut hosts, &mut switches);
        let arrivals = arrival_order(&fl);
        let first = first_arrival(&fl, &arrivals);
        if let Some(first) = first {
            q.schedule(
                fl[first as usize].start_ps,
                Event::FlowStart { flow: first },
            );
        }
        let transport = transport_params(&cfg, &env, bounds.max_bdp_bytes.max(mtu));
        let transport_scheme = cfg.scheme_transport(&env).map(|(id, _)| id);
        let transport_host = host_half_of(&host_schemes, transport_scheme);
        // The time series start at the interval holding the first flow's start: idle time
        // before it (HPCC flow files start at 2 s) costs no memory and no output rows.
        let first_start_ps = match (&stream, first) {
            (Some(st), _) => st.peek().map_or(0, |f| f.start_ps),
            (None, None) => 0,
            (None, Some(f)) => fl[f as usize].start_ps,
        };
        let queue_mon = crate::metrics::buffer::QueueSampler::new(
            cfg.queue_monitor.clone(),
            cfg.queue_monitor_ps,
        )
        .with_origin(first_start_ps);
        let sw_ids = switches.iter().map(|s: &Switch| s.node).collect();
        let ack_ignores_pause = cfg.ack_high_prio && !cfg.peers().acks_need_credits;
        let int_hops = if cfg.int_enabled {
            bounds.max_switch_hops as usize
        } else {
            0
        };
        let cfg_cnp = cfg.cnp;
        let n_flows = fl.len();
        let hooks = HostHookFlags::of(&host_schemes);
        let mut sim = Simulator {
            buffer_mon: BufferMonitor::new(switches.len(), cfg.buffer_sample_ps)
                .with_node_ids(sw_ids)
                .with_origin(first_start_ps),
            throughput: ThroughputMeter::new(hosts.len(), 100 * crate::units::US),
            sender_throughput: cfg
                .sender_throughput
                .then(|| ThroughputMeter::new(hosts.len(), 100 * crate::units::US)),
            queue_mon,
            link_rngs: Default::default(),
            link_errors: topo.links.iter().any(|l| l.error_rate > 0.0),
            cfg,
            topo,
            routes,
            q,
            arena: {
                // Room for one INT record per switch a packet can cross (none without INT).
                let mut a = PacketArena::new();
                a.set_int_hops(int_hops);
                a
            },
            nodes,
            hosts,
            switches,
            active: FlowSlab::new(fl.len()),
            paths,
            late_cnp: LateCnp::new(match cfg_cnp {
                crate::config::CnpMode::Cnp { interval_ps } => interval_ps.max(1),
                _ => 0,
            }),
            flows: fl,
            ccs: Default::default(),
            arrivals,
            next_arrival: 0,
            stream: stream.map(|stream| {
                Box::new(StreamArrivals {
                    expected: stream.capacity_hint() as u64,
                    stream,
                    per_pair: HashMap::new(),
                    classes: PathClassifier::default(),
                    error: None,
                })
            }),
            flows_total: n_flows as u64,
            results: None,
            counters: Counters::default(),
            rtt: crate::metrics::latency::LatencyHistogram::new(),
            // Reserved, not touched: pages are used as flows complete (no growth copies; a
            // streamed run reserves it in `expect_flows`).
            completion_order: Vec::with_capacity(n_flows),
            base_rtt_ps: bounds.max_base_rtt_ps,
            bdp_bytes: bounds.max_bdp_bytes,
            transport,
            transport_scheme,
            transport_host,
            cc_cfg: cc,
            env,
            host_send_hooks: hooks.sends,
            nic_misfiled: 0,
            host_tx_hooks: hooks.transmits,
            ack_ignores_pause,
            host_gate: hooks.gates,
            host_schemes,
            outbox: Outbox::new(),
            host_out: Outbox::new(),
            deadlock: Default::default(),
            deadlock_period: None,
            on_deadlock: OnDeadlock::default(),
            capture: None,
            monitor_end_ps: None,
            failures: None,
            part: None,
        };
        sim.deadlock_period = crate::registry::DeadlockDetector::period_ps(&sim.switches);
        if let Some(sched) = sim.cfg.prepare_ports(&mut sim.switches) {
            sim.cfg.scheduler = sched;
        }
        sim.schedule_link_events();
        Ok(sim)
    }

    /// Take the next flow of the stream ([`Self::with_stream`]) into `flows`, with its
    /// source port and path class as [`build_flows`] gives them. `false` when there is no
    /// stream, it is exhausted (then the run's flow count is known) or a flow failed its
    /// checks.
    fn take_flow(&mut self) -> bool {
        let Some(st) = self.stream.as_deref_mut() else {
            return false;
        };
        if st.error.is_some() {
            return false;
        }
        let Some(f) = st.stream.next() else {
            // A source that could not give all its flows (a flow file's read error) ends the
            // taking of flows as a bad flow does.
            if let Some(e) = st.stream.error() {
                st.error = Some(e.to_string());
            }
            self.flows_total = self.taken_total();
            return false;
        };
        let id = self.flows.len();
        let check = check_flow(&self.topo, &self.cfg, &self.nodes, id, &f).and_then(|()| {
            // A stream is sorted by start time; one that goes back in time (a flow file
            // changed while read) would start flows late with a wrong FCT.
            match self
                .flows
                .len()
                .checked_sub(1)
                .and_then(|k| self.flows.get(k))
            {
                Some(prev) if f.start_ps < prev.start_ps => Err(format!(
                    "flow {id} ({} -> {}): starts at {} ps, before the flow before it ({} ps): \
                     the flows are not sorted by start time",
                    f.src, f.dst, f.start_ps, prev.start_ps
                )),
                _ => Ok(()),
            }
        });
        if let Err(e) = check {
            st.error = Some(e);
            // No flow is taken after it: the run ends when the taken ones are done.
            self.flows_total = self.taken_total();
            return false;
        }
        let mtu = self.cfg.mtu_bytes as u64;
        // Ideal paths are those with every link up.
        let routes = self
            .failures
            .as_ref()
            .and_then(|f| f.static_routes.as_deref())
            .unwrap_or(&self.routes);
        let (classes, paths, topo) = (&mut st.classes, &mut self.paths, &self.topo);
        let e = st.per_pair.entry((f.src, f.dst)).or_insert_with(|| {
            (
                0,
                classes.class_uncached(paths, routes, topo, mtu, f.src, f.dst),
            )
        });
        let sport = 10000u16.wrapping_add(e.0);
        e.0 = e.0.wrapping_add(1);
        let class = e.1;
        if class == OVERFLOW_CLASS {
            // Past 65,535 path classes every flow's path metrics are kept on the side.
            paths
                .overflow
                .insert(id as u32, pair_metrics_of(routes, topo, f.src, f.dst, mtu));
        }
        self.flows.push(Flow::new(&f, sport, class));
        true
    }

    /// Check each flow of `flows` as [`Self::with_flows`] checks a list (endpoints are hosts,
    /// size, priority; flow ids from 0 in the given order), keeping nothing: the number of
    /// flows, or the first bad flow's error. For `sfc validate` on a scenario's stream.
    pub fn check_flows(&self, flows: impl Iterator<Item = FlowSpec>) -> Result<u64, String> {
        let mut n = 0u64;
        for (i, f) in flows.enumerate() {
            check_flow(&self.topo, &self.cfg, &self.nodes, i, &f)?;
            n += 1;
        }
        Ok(n)
    }

    /// Take every flow the stream still holds (a run that ended before their start, at
    /// `stop` or stalled): their records exist, never started, as with a workload list.
    pub fn take_remaining_flows(&mut self) {
        // Streaming results: the flows taken so far and unfinished go first (once).
        self.retire_rest();
        while self.take_flow() {
            if self.results.is_some() {
                // Never started: its record goes now, and its memory with it.
                self.retire(self.flows.len() as u32 - 1);
            }
        }
    }

    /// Stream this run's results to `sink` instead of keeping them ([`RecordSink`] says in
    /// which order): each flow's 56 B description and result and its 8 B slot-map entry are
    /// released as its record is given, a page of 4,096 flows at a time
    /// ([`crate::engine::paged`]), so a run of any length holds the flows in progress and no
    /// record. Afterwards [`Self::records_iter`], [`Self::flow_record`],
    /// [`Self::records_in_completion_order`] and `flows` cover no retired flow, and
    /// `completion_order` stays empty: the sink has it all.
    ///
    /// Call before the run. Refused (`false`, nothing changes) once a flow has completed, and
    /// with a scheme that needs the flow list (OnRamp, PB-FS, NDP), whose host halves read
    /// finished flows' descriptions.
    pub fn stream_results(&mut self, sink: Box<dyn RecordSink>) -> bool {
        if self.counters.flows_completed > 0 || self.cfg.schemes.needs_flow_list() {
            return false;
        }
        // The sink has the completion order: no list of it (nor its reservation).
        self.completion_order = Vec::new();
        self.results = Some(Box::new(ResultStream {
            sink,
            error: None,
            retired: 0,
            closed: false,
            not_started: 0,
        }));
        true
    }

    /// Drop the [`RecordSink`] of a run streaming its results (after [`Self::finish`]: every
    /// record has been given), so that what it holds (files) can go; the counts stay.
    pub fn close_results(&mut self) {
        if let Some(rs) = self.results.as_deref_mut() {
            rs.sink = Box::new(|_: &FlowRecord| Ok(()));
        }
    }

    /// The first error of the [`RecordSink`] of a run streaming its results.
    pub fn results_error(&self) -> Option<&str> {
        self.results.as_ref().and_then(|r| r.error.as_deref())
    }

    /// Flows whose record went to the [`RecordSink`] (0 unless streaming results).
    pub fn retired_flows(&self) -> u64 {
        self.results.as_ref().map_or(0, |r| r.retired)
    }

    /// Flows that start after `end_ps` and did not finish: never started in a run that ended
    /// at `end_ps` (call after [`Self::take_remaining_flows`]; a run streaming its results
    /// counts them as it retires them, at its end).
    pub fn flows_not_started(&self, end_ps: u64) -> u64 {
        match self.results.as_deref() {
            Some(rs) if rs.closed => rs.not_started,
            _ => self
                .flows
                .iter()
                .filter(|f| f.start_ps > end_ps && !f.finished())
                .count() as u64,
        }
    }

    /// Pages of per-flow memory held (flow table and flow → slot map, 4,096 flows each): in a
    /// run streaming its results, the pages with a flow not yet retired.
    pub fn flow_pages(&self) -> (usize, usize) {
        (self.flows.resident_pages(), self.active.map_pages())
    }

    /// Give flow `f`'s record to the sink and release its memory (streaming results only).
    pub(crate) fn retire(&mut self, f: u32) {
        let rec = self.flow_record(f as usize);
        let Some(rs) = self.results.as_deref_mut() else {
            return;
        };
        if rs.error.is_none()
            && let Err(e) = rs.sink.record(&rec)
        {
            rs.error = Some(format!("writing flow {f}'s record: {e}"));
        }
        rs.retired += 1;
        if rec.fct_ps.is_none() && rec.start_ps > self.q.now() {
            rs.not_started += 1;
        }
        self.flows.retire(f as usize);
        self.active.retire(f);
        if !self.paths.overflow.is_empty() {
            self.paths.overflow.remove(&f);
        }
    }

    /// At the end of a run streaming its results: the record of every flow taken and not yet
    /// given (started and unfinished, or taken and never started), once; the flows the
    /// stream still holds are given as [`Self::take_remaining_flows`] takes them.
    fn retire_rest(&mut self) {
        match self.results.as_deref_mut() {
            Some(rs) if !rs.closed => rs.closed = true,
            _ => return,
        }
        let rest: Vec<u32> = self
            .flows
            .iter_resident()
            .filter(|(_, fl)| !fl.finished())
            .map(|(f, _)| f as u32)
            .collect();
        for f in rest {
            self.retire(f);
        }
    }

    /// Every flow of the run (also those a stream has yet to give) completed and no packet is
    /// alive.
    pub fn all_flows_done(&self) -> bool {
        self.counters.flows_completed == self.flows_total && self.arena.live() == 0
    }

    /// The first flow of the stream that failed its checks, or why the stream ended early (a
    /// flow file that could no longer be read): the run took no flow after it.
    pub fn stream_error(&self) -> Option<&str> {
        self.stream.as_ref().and_then(|s| s.error.as_deref())
    }

    /// The run's flow count: exact once known, else the flows taken plus the stream's
    /// estimate of those left (for progress reports).
    pub fn flows_expected(&self) -> u64 {
        match &self.stream {
            Some(st) if self.flows_total == u64::MAX => st.expected.max(self.flows.len() as u64),
            _ => self.flows_total,
        }
    }

    /// A streamed run's flow count, known in advance (the memory check counts it): progress
    /// reports use it, and the per-flow lists are reserved at their final size.
    pub fn expect_flows(&mut self, n: u64) {
        if let Some(st) = self.stream.as_deref_mut() {
            st.expected = n;
            let more = (n as usize).saturating_sub(self.flows.len());
            self.flows.reserve(more);
            self.completion_order
                .reserve_exact((n as usize).saturating_sub(self.completion_order.len()));
            self.active.reserve_flows(n as usize);
        }
    }

    /// The congestion controller of flow `f` while it is active (started, not finished);
    /// `None` before its start and after its completion (its state is recycled).
    pub fn flow_cc(&self, f: usize) -> Option<crate::cc::CcRef<'_>> {
        let st = self.active.get_for(f.try_into().ok()?)?;
        Some(self.ccs.get(st.cc_slot))
    }

    /// The QP state of flow `f` while it is active (started, not finished); `None` before its
    /// start and after its completion (its slot is recycled).
    pub fn flow_state(&self, f: usize) -> Option<&FlowState> {
        self.active.get_for(f.try_into().ok()?)
    }

    /// The receiver QP state of flow `f` while it is open (from its first data packet's
    /// arrival until its receiver holds every byte and owes no CNP); `None` otherwise.
    pub fn rx_state(&self, f: usize) -> Option<&RxState> {
        self.active.rx_get_for(f.try_into().ok()?)
    }

    /// Payload bytes flow `f`'s receiver has accepted: all of them once its receiver holds
    /// every byte, none before its first data packet arrives (nor once retired,
    /// [`Self::stream_results`]).
    pub fn delivered_bytes(&self, f: usize) -> u64 {
        let Ok(id) = u32::try_from(f) else {
            return 0;
        };
        match self.active.rx_lookup(id) {
            RxSlot::Open(i) => self.active.rx_at(i).rx.delivered_bytes,
            // Closed: the receiver holds every byte (a retired flow's record is gone: a run
            // streaming its results keeps no count).
            RxSlot::Closed => self.flows.get(f).map_or(0, |fl| fl.size_bytes),
            RxSlot::Unopened => 0,
        }
    }

    /// Flows active now (started, not finished).
    pub fn active_flows(&self) -> usize {
        self.active.active()
    }

    /// Most flows active at once (QP state slots ever created).
    pub fn flow_slots_peak(&self) -> usize {
        self.active.peak()
    }

    /// Most congestion controllers alive at once: the flows active at the same time, not
    /// all flows of the run.
    pub fn cc_slots_peak(&self) -> usize {
        self.ccs.peak()
    }

    /// Host index of node `node` (which must be a host).
    #[inline]
    pub fn host_index(&self, node: u32) -> usize {
        match self.nodes[node as usize] {
            NodeRef::Host(h) => h as usize,
            NodeRef::Switch(_) => panic!("node {node} is not a host"),
        }
    }

    /// Transmit state of port `port` of `node`.
    #[inline]
    pub fn tx_port(&self, node: u32, port: u16) -> &TxPort {
        match self.nodes[node as usize] {
            NodeRef::Host(h) => &self.hosts[h as usize].tx,
            NodeRef::Switch(s) => &self.switches[s as usize].ports[port as usize].tx,
        }
    }

    /// Start serializing packet `p` on port `port` of switch `s` (the port must be idle).
    #[inline(always)]
    pub(crate) fn switch_transmit(&mut self, s: usize, port: u16, p: u32) {
        let now = self.q.now();
        let size = self.arena.get(p).size;
        let sw = &mut self.switches[s];
        let node = sw.node;
        let ep = &mut sw.ports[port as usize];
        let more = ep.nonempty != 0;
        let ser = self.cfg.framing.ser_ps(size, ep.tx.link.rate_bps);
        let d = Self::start_tx(&mut ep.tx, now, ser, size, more);
        self.launch(node, port, p, d);
    }

    /// Start serializing packet `p` on the NIC of host `h` (the link must be idle).
    #[inline(always)]
    pub(crate) fn host_transmit(&mut self, h: usize, p: u32) {
        let now = self.q.now();
        let size = self.arena.get(p).size;
        let nic = &mut self.hosts[h];
        let node = nic.node;
        let more = !nic.ctrl.is_empty() || !nic.arb.is_empty();
        let ser = self.cfg.framing.ser_ps(size, nic.tx.link.rate_bps);
        let d = Self::start_tx(&mut nic.tx, now, ser, size, more);
        self.launch(node, 0, p, d);
        if self.host_tx_hooks {
            self.host_transmitted(h, p);
            // A capture turns the transmit hooks on ([`Self::start_capture`]).
            if self.capture.is_some() {
                self.capture_tx(node, 0, p, now);
            }
        }
    }

    /// The port `tx` is busy until `now + ser` sending `size` bytes; a TxDone is wanted only if
    /// it has `more` to send and none is pending. Returns what [`Self::launch`] needs to know
    /// about the transmission.
    #[inline(always)]
    pub(crate) fn start_tx(
        tx: &mut TxPort,
        now: u64,
        ser: u64,
        size: u32,
        more: bool,
    ) -> Departure {
        tx.busy_until_ps = now + ser;
        let seq = tx.launches;
        tx.launches = seq.wrapping_add(1);
        let more = more && !tx.txdone_pending;
        if more {
            tx.txdone_pending = true;
        }
        let link = &mut tx.link;
        link.tx_bytes += size as u64;
        let delay = if link.state == LinkState::Up {
            link.delay_ps
        } else {
            parallel::delay_sentinel(link.state)
        };
        Departure {
            now,
            ser,
            more,
            peer: link.peer,
            peer_port: link.peer_port,
            delay,
            seq,
            hints: tx.hints,
        }
    }

    /// The events of packet `p`'s transmission `d` ([`Self::start_tx`]) on port `port` of
    /// `node`: its TxDone (if wanted) and the packet's arrival at the peer.
    #[inline(always)]
    pub(crate) fn launch(&mut self, node: u32, port: u16, p: u32, d: Departure) {
        let Departure {
            now,
            ser,
            more,
            peer,
            peer_port,
            delay,
            seq,
            hints,
        } = d;
        if more {
            self.q
                .schedule_hinted(now + ser, Event::TxDone { node, port }, hints.done);
        }
        if delay >= parallel::REMOTE_LINK {
            // The link is down, or leads to another partition: off the common path.
            return self.launch_rare(node, port, p, delay);
        }
        let proc = match self.nodes[peer as usize] {
            NodeRef::Host(_) => self.cfg.nic_delay_ps,
            NodeRef::Switch(_) => self.cfg.switch_delay_ps,
        };
        let arrive = now + ser + delay + proc;
        self.counters.packet_hops += 1;
        // The packet is in cache now; the next switch's forwarding decision is made here so
        // that the event loop knows which egress queue to prefetch before it arrives.
        let egress = self.egress_at(peer, p);
        self.q.schedule_hinted(
            arrive,
            Event::Arrive {
                node: peer,
                port: peer_port,
                pkt: p,
                egress,
                seq,
            },
            hints.arrive,
        );
    }

    /// The egress port switch `peer` will pick for packet `p` ([`Event::Arrive::egress`]);
    /// [`NO_EGRESS`] at a host or for a hop-by-hop frame.
    #[inline(always)]
    fn egress_at(&self, peer: u32, p: u32) -> u16 {
        match self.nodes[peer as usize] {
            NodeRef::Switch(ps) => {
                let pk = self.arena.get(p);
                if pk.is_hop_by_hop() {
                    // A hop-by-hop frame (PFC or BFC pause, CBFC credit update): consumed at the
                    // next switch, never routed.
                    NO_EGRESS
                } else {
                    let h = crate::engine::packet::Hdr::of(pk);
                    self.switch_route(ps as usize, &h)
                }
            }
            NodeRef::Host(_) => NO_EGRESS,
        }
    }

    /// The rest of [`Self::launch`] for packet `p` just sent on port `port` of `node` (its
    /// TxDone is scheduled) when the link is not up in this simulator (`delay` from
    /// [`Self::start_tx`]): down, the packet is lost; leading to another partition of a run
    /// split over threads ([`parallel`]), its arrival is handed to the peer's partition. What
    /// the transmission was is read back from the port, so the common path passes nothing.
    #[cold]
    #[inline(never)]
    fn launch_rare(&mut self, node: u32, port: u16, p: u32, delay: u64) {
        let now = self.q.now();
        let tx = self.tx_port(node, port);
        let seq = tx.launches.wrapping_sub(1);
        if delay == failure::DEAD_LINK {
            // The packet is lost (freed once the sender is done with it).
            self.q.schedule(
                now,
                Event::Lost {
                    node,
                    port,
                    at_sender: true,
                    seq,
                    pkt: p,
                },
            );
            return;
        }
        let (peer, peer_port) = (tx.link.peer, tx.link.peer_port);
        let done_ps = tx.busy_until_ps;
        let proc = match self.nodes[peer as usize] {
            NodeRef::Host(_) => self.cfg.nic_delay_ps,
            NodeRef::Switch(_) => self.cfg.switch_delay_ps,
        };
        let arrive = done_ps + tx.link.delay_ps + proc;
        self.counters.packet_hops += 1;
        let egress = self.egress_at(peer, p);
        let ev = Event::Arrive {
            node: peer,
            port: peer_port,
            pkt: p,
            egress,
            seq,
        };
        self.hand_over(arrive, ev, p);
    }

    /// Software prefetch for the events about to run. By the time a packet arrives, the state
    /// it touches (its arena slot, the egress port and queue, its flow at a host) has left
    /// the cache: a hop's propagation delay is tens of thousands of events away on a large
    /// network. Three stages: `2·PREFETCH_DISTANCE` events ahead, load the packet and the
    /// egress port; `PREFETCH_DISTANCE` ahead, follow them (the queue, the flow, a receiver's
    /// slot-map entry); `PREFETCH_DISTANCE / 2` ahead, what those name (the flow's controller,
    /// the receiver's slot). Only hints: nothing here changes state or can fail.
    #[inline(always)]
    fn prefetch_ahead(&self) {
        use crate::engine::prefetch;
        let far = self.q.peek_ahead(2 * PREFETCH_DISTANCE);
        if let Some(&Event::TxDone { node, port }) = far
            && let Some(NodeRef::Switch(s)) = self.nodes.get(node as usize)
            && let Some(ep) = self.switches[*s as usize].ports.get(port as usize)
        {
            let line = ep as *const EgressPort as *const u8;
            prefetch(line);
            prefetch(line.wrapping_add(64));
            self.prefetch_schemes(*s as usize);
        }
        if let Some(&Event::Arrive {
            node, pkt, egress, ..
        }) = far
        {
            self.arena.prefetch(pkt);
            if self.cfg.int_enabled {
                // Stamped at switch dequeue, read by HPCC at the sender.
                self.arena.prefetch_int(pkt);
            }
            if let Some(NodeRef::Switch(s)) = self.nodes.get(node as usize)
                && let Some(ep) = self.switches[*s as usize].ports.get(egress as usize)
            {
                let line = ep as *const EgressPort as *const u8;
                prefetch(line);
                prefetch(line.wrapping_add(64));
                self.prefetch_schemes(*s as usize);
            }
        }
        match self.q.peek_ahead(PREFETCH_DISTANCE) {
            Some(&Event::Arrive {
                node,
                port,
                pkt,
                egress,
                ..
            }) => match self.nodes.get(node as usize) {
                Some(NodeRef::Switch(s)) => {
                    let sw = &self.switches[*s as usize];
                    if let Some(ep) = sw.ports.get(egress as usize)
                        && let Some(p) = self.arena.try_get(pkt)
                        && let Some(q) = ep.queues.get(p.prio as usize)
                    {
                        prefetch(q as *const _);
                        let qi = p.prio as usize;
                        use crate::scheme::hook::{ADMIT, DEPARTURE, DEQUEUE, slot};
                        if sw.hooks & ADMIT != 0 {
                            sw.schemes.prefetch(sw.by_hook[slot(ADMIT)], port, qi);
                        }
                        // The packet leaves at once if the port is idle.
                        if sw.hooks & (DEQUEUE | DEPARTURE) != 0 && !ep.tx.busy(self.q.now()) {
                            let set = sw.by_hook[slot(DEQUEUE)] | sw.by_hook[slot(DEPARTURE)];
                            sw.schemes.prefetch_egress(set, egress);
                        }
                    }
                }
                Some(NodeRef::Host(_)) => {
                    if let Some(p) = self.arena.try_get(pkt) {
                        // Data: the receiver's slot-map entry (its slot follows in the next
                        // stage, without waiting for the entry here). Otherwise the flow's
                        // sender state: header and send state (the controller follows in the
                        // next stage, through the slot's first line).
                        if matches!(p.hdr, crate::engine::packet::Header::Data(_)) {
                            self.active.prefetch_map(p.flow);
                        } else {
                            self.active.prefetch(p.flow);
                        }
                    }
                }
                None => {}
            },
            Some(&Event::TxDone { node, port }) => {
                if let Some(NodeRef::Switch(s)) = self.nodes.get(node as usize) {
                    let sw = &self.switches[*s as usize];
                    if let Some(ep) = sw.ports.get(port as usize)
                        && let Some(q) = ep.next_queue_hint()
                        && let Some(qq) = ep.queues.get(q)
                    {
                        prefetch(qq as *const _);
                    }
                    use crate::scheme::hook::{DEPARTURE, DEQUEUE, slot};
                    if sw.hooks & (DEQUEUE | DEPARTURE) != 0 {
                        let set = sw.by_hook[slot(DEQUEUE)] | sw.by_hook[slot(DEPARTURE)];
                        sw.schemes.prefetch_egress(set, port);
                    }
                }
            }
            _ => {}
        }
        // Third stage, half as far: a data packet's receiver slot (its map entry came a stage
        // ago); an arrival at a host of another packet (ACK, CNP) runs the flow's controller,
        // which lives in the controller slab; the flow's first line (prefetched a stage ago)
        // names its slot.
        // (Arrivals at hosts carry no forwarding decision: testing that first spares the node
        // lookup for arrivals at switches.)
        match self.q.peek_ahead(PREFETCH_DISTANCE / 2) {
            Some(&Event::Arrive {
                node, pkt, egress, ..
            }) if egress == NO_EGRESS => {
                if let Some(NodeRef::Host(_)) = self.nodes.get(node as usize)
                    && let Some(p) = self.arena.try_get(pkt)
                {
                    if matches!(p.hdr, crate::engine::packet::Header::Data(_)) {
                        self.active.rx_prefetch(p.flow);
                    } else if let Some(f) = self.active.get_for(p.flow) {
                        self.ccs.prefetch(f.cc_slot);
                    }
                }
            }
            // A switch port about to pick its next packet: the head of the queue it will
            // serve (the queue's line came a stage ago). The packet has waited in the queue
            // since it arrived, long out of cache on deep queues, and the dequeue reads its
            // size and writes its INT record (`perf` on the §5.3 run: those two accesses were
            // ≈ 15 % of `switch_try_send`).
            Some(&Event::TxDone { node, port }) => {
                if let Some(NodeRef::Switch(s)) = self.nodes.get(node as usize)
                    && let Some(ep) = self.switches[*s as usize].ports.get(port as usize)
                    && let Some(q) = ep.next_queue_hint()
                    && let Some(p) = ep.head(q)
                {
                    self.arena.prefetch(p);
                    if self.cfg.int_enabled {
                        self.arena.prefetch_int(p);
                    }
                }
            }
            _ => {}
        }
    }

    /// Prefetch the per-packet state of switch `s` beyond its first line (read by the
    /// caller): the buffer accounting and the hot lines of each scheme with per-packet hooks,
    /// ahead of the hooks that will run there.
    #[inline]
    fn prefetch_schemes(&self, s: usize) {
        let sw = &self.switches[s];
        crate::engine::prefetch(std::ptr::addr_of!(sw.mmu) as *const u8);
        if sw.hooked != 0 {
            sw.schemes.prefetch_state(sw.hooked);
        }
    }

    /// The next uniform draw in [0, 1) of the link-error stream of port `port` of `node`.
    #[inline(never)]
    fn link_error(&mut self, node: u32, port: u16) -> f64 {
        let seed = self.cfg.seed;
        self.link_rngs
            .entry((node, port))
            .or_insert_with(|| {
                Rng::derive(
                    seed,
                    "link-errors",
                    (u64::from(node) << 16) | u64::from(port),
                )
            })
            .f64()
    }

    #[inline(always)]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::Arrive {
                node,
                port,
                pkt,
                egress,
                ..
            } => {
                if self.link_errors {
                    // The link is the same in both directions: the receiving port's own.
                    let err = self.tx_port(node, port).link.error_rate;
                    if err > 0.0 && self.link_error(node, port) < err {
                        self.counters.drops_link_error += 1;
                        self.arena.free(pkt);
                        return;
                    }
                }
                match self.nodes[node as usize] {
                    NodeRef::Host(h) => self.host_receive(h as usize, pkt),
                    NodeRef::Switch(s) => self.switch_receive(s as usize, port, pkt, egress),
                }
            }
            Event::TxDone { node, port } => {
                let now = self.q.now();
                let tx = match self.nodes[node as usize] {
                    NodeRef::Host(h) => &mut self.hosts[h as usize].tx,
                    NodeRef::Switch(s) => &mut self.switches[s as usize].ports[port as usize].tx,
                };
                tx.txdone_pending = false;
                if tx.busy_until_ps <= now {
                    tx.busy_until_ps = 0;
                }
                match self.nodes[node as usize] {
                    NodeRef::Host(h) => self.host_try_send(h as usize),
                    NodeRef::Switch(s) => self.switch_try_send(s as usize, port),
                }
            }
            Event::NicWake { node } => {
                let h = self.host_index(node);
                if self.hosts[h].wake_at_ps == self.q.now() {
                    self.hosts[h].wake_at_ps = 0;
                }
                self.host_try_send(h);
            }
            Event::FlowStart { flow } => {
                // Streaming arrivals: schedule the next flow start, then start this one.
                self.schedule_next_start();
                self.flow_start(flow)
            }
            Event::Rto { flow } => self.rto_fire(flow),
            Event::LinkChange { event } => self.link_change(event),
            Event::Reroute => self.reroute(),
            Event::Lost { pkt, .. } => self.lost(pkt),
            Event::CcTimer { flow, .. } => self.cc_timer_fire(flow),
            Event::CnpDue { flow, marked } => self.cnp_due_fire(flow, marked),
            Event::SchemeTimer {
                node,
                port,
                scheme,
                which,
                arg,
            } => {
                let Some(id) = crate::registry::scheme_id(scheme) else {
                    return;
                };
                match self.nodes[node as usize] {
                    NodeRef::Switch(s) => self.switch_timer(s as usize, id, port, which, arg),
                    NodeRef::Host(h) => self.host_timer(h as usize, id, which, arg),
                }
            }
        }
    }

    /// Schedule the start of the flow after the one whose start is pending (`next_arrival`),
    /// taking it from the stream if need be. In a replica of a run split over threads
    /// ([`parallel`]), the next flow it sends: the others are taken and passed over.
    pub(crate) fn schedule_next_start(&mut self) {
        loop {
            self.next_arrival += 1;
            let k = self.next_arrival;
            let next = if self.arrivals.is_empty() {
                if k == self.flows.len() && self.stream.is_some() {
                    self.take_flow();
                }
                (k < self.flows.len()).then_some(k as u32)
            } else {
                self.arrivals.get(k).copied()
            };
            let Some(g) = next else {
                return;
            };
            if self.starts_here(g) {
                let t = self.flows[g as usize].start_ps;
                self.q.schedule(t, Event::FlowStart { flow: g });
                return;
            }
        }
    }

    /// Run until no events remain or `cfg.stop_ps` is reached. `progress` is called every
    /// 65,536 events; there the run also stops early when
    /// [`crate::process::request_interrupt`] asked it to.
    ///
    /// A run streaming its results ([`Self::stream_results`]) ends for good at
    /// [`Self::take_remaining_flows`] (which `runguard::run_watched` calls) or
    /// [`Self::finish`]: every record has gone to the sink, and `run` then does nothing.
    pub fn run(&mut self, progress: &mut dyn FnMut(&Progress)) {
        if self.results.as_ref().is_some_and(|r| r.closed) {
            return;
        }
        let stop = self.cfg.stop_ps;
        loop {
            if self.traffic_done() {
                break;
            }
            let Some((_, ev)) = self.q.pop_until(stop) else {
                break;
            };
            if self.arena.live() >= PREFETCH_MIN_LIVE {
                self.prefetch_ahead();
            }
            self.dispatch(ev);
            if self.q.events() & 0xFFFF == 0 {
                progress(&Progress {
                    now_ps: self.q.now(),
                    events: self.q.events(),
                    flows_completed: self.counters.flows_completed,
                    flows_total: self.flows_expected(),
                });
                if crate::process::interrupt_requested() {
                    break;
                }
            }
        }
    }

    /// All traffic delivered and acknowledged, no packet alive: only stale timers remain, and
    /// the event loop ends here.
    #[inline(always)]
    pub(crate) fn traffic_done(&self) -> bool {
        self.counters.flows_completed == self.flows_total && self.arena.live() == 0
    }

    /// Close the measurements at the current time (buffer watermarks, throughput intervals,
    /// PFC pauses still in force). Call once after the last `run`; `run` may be called again
    /// (with a later `cfg.stop_ps`) before that without disturbing any measurement.
    pub fn finish(&mut self) {
        self.take_remaining_flows();
        let end = self.q.now();
        self.schemes_finish();
        match self.monitor_end_ps {
            // A stuck run: the frozen queues show until its end.
            Some(e) => {
                self.buffer_mon.finish_frozen(e.max(end));
                self.queue_mon.finish_frozen(e.max(end));
            }
            None => {
                self.buffer_mon.finish(end);
                self.queue_mon.finish(end);
            }
        }
        self.throughput.finish(end);
        if let Some(m) = &mut self.sender_throughput {
            m.finish(end);
        }
        // With every flow finished, the QP state and controller slots, the flow → slot map
        // (8 B per flow) and, with no packet alive, the packet slots are no longer needed:
        // freed before the statistics and output files are made.
        self.active.release_memory();
        self.ccs.release_memory();
        self.arena.release_memory();
    }

    /// Run without progress reporting.
    pub fn run_quiet(&mut self) {
        self.run(&mut |_| {});
    }

    /// The record of flow `f` (built from its description and result; an unfinished flow's
    /// retransmissions come from its active state).
    pub fn flow_record(&self, f: usize) -> FlowRecord {
        let fl = &self.flows[f];
        let retx_packets = match self.flow_state(f) {
            Some(s) => s.tx.retx_packets,
            None => fl.retx_packets as u64,
        };
        FlowRecord {
            id: f as u32,
            src: fl.src,
            dst: fl.dst,
            sport: fl.sport,
            dport: fl.dport,
            size_bytes: fl.size_bytes,
            start_ps: fl.start_ps,
            fct_ps: fl.finished().then(|| fl.finish_ps - fl.start_ps),
            ideal_fct_ps: self.ideal_fct_of(f, fl),
            retx_packets,
            pauses: fl.pauses,
            paused_ps: fl.paused_ps,
        }
    }

    /// Ideal (standalone) FCT of flow `f`, picoseconds: HPCC-sim's `base_rtt + wire bytes ·
    /// 8 / bottleneck` ([`ideal_fct_ns`]) over its pair's path.
    pub fn ideal_fct_ps(&self, f: usize) -> u64 {
        self.ideal_fct_of(f, &self.flows[f])
    }

    /// [`Self::ideal_fct_ps`] of flow `f` whose description is `fl` (one table lookup per
    /// record).
    #[inline]
    fn ideal_fct_of(&self, f: usize, fl: &Flow) -> u64 {
        let hdr = self.cfg.framing.data_header_bytes() as u64;
        ideal_fct_ns(
            self.pair_class_metrics(f, fl.pair_class),
            fl.size_bytes,
            self.cfg.mtu_bytes as u64,
            hdr,
        ) * NS
    }

    /// Base RTT and bottleneck of flow `f`'s path (from its path class).
    fn pair_of(&self, f: usize) -> PairMetrics {
        self.pair_class_metrics(f, self.flows[f].pair_class)
    }

    /// Base RTT and bottleneck of path class `c` (flow `f`'s, for an overflow class).
    #[inline]
    fn pair_class_metrics(&self, f: usize, c: u16) -> PairMetrics {
        if c == OVERFLOW_CLASS {
            self.paths
                .overflow
                .get(&(f as u32))
                .copied()
                .unwrap_or(PairMetrics {
                    rtt_ns: 0,
                    bottleneck_bps: 1,
                })
        } else {
            self.paths.classes[c as usize]
        }
    }

    /// Bandwidth-delay product of flow `f`'s own path, bytes ([`pair_bdp_bytes`]): its
    /// controller's BDP with [`crate::config::CoreConfig::window_per_pair`] (HPCC-sim
    /// `GLOBAL_T 0`).
    pub fn pair_bdp_bytes(&self, f: usize) -> u64 {
        pair_bdp_bytes(self.pair_of(f))
    }

    /// Every flow's record, in workload order, built one at a time (no copy of all records).
    pub fn records_iter(&self) -> impl ExactSizeIterator<Item = FlowRecord> + Clone + '_ {
        (0..self.flows.len()).map(|f| self.flow_record(f))
    }

    /// One record per flow, in workload order (a copy of all records: for tests and small
    /// runs; the output path streams [`Self::records_iter`]).
    pub fn flow_records(&self) -> Vec<FlowRecord> {
        self.records_iter().collect()
    }

    /// The record of completed flow `f` as `fct.txt` lists it, for each flow in completion
    /// order.
    pub fn records_in_completion_order(&self) -> impl Iterator<Item = FlowRecord> + '_ {
        self.completion_order
            .iter()
            .map(|&f| self.flow_record(f as usize))
    }

    /// Every link direction: (node, port, peer node, rate bps, bytes sent, utilization over the
    /// simulated time).
    pub fn link_stats(&self) -> Vec<(u32, u16, u32, u64, u64, f64)> {
        let t = self.q.now().max(1) as f64;
        let util = |l: &PortLink| l.tx_bytes as f64 * 8.0 / (l.rate_bps as f64 * t / 1e12);
        let mut v = Vec::new();
        for h in &self.hosts {
            v.push((
                h.node,
                0,
                h.tx.link.peer,
                h.tx.link.rate_bps,
                h.tx.link.tx_bytes,
                util(&h.tx.link),
            ));
        }
        for s in &self.switches {
            for (i, p) in s.ports.iter().enumerate() {
                v.push((
                    s.node,
                    i as u16,
                    p.tx.link.peer,
                    p.tx.link.rate_bps,
                    p.tx.link.tx_bytes,
                    util(&p.tx.link),
                ));
            }
        }
        v
    }

    /// Every scheme's warnings about the finished run ([`crate::scheme::Scheme::warnings`]),
    /// in registry order.
    pub fn scheme_warnings(&self) -> Vec<String> {
        let per_switch: Vec<&SwitchSchemes> = self.switches.iter().map(|s| &s.schemes).collect();
        crate::registry::warnings(&per_switch, &self.host_schemes, &self.cfg, &self.topo)
    }

    /// Every scheme's `summary.json` section (name, object), in registry order.
    pub fn scheme_summaries(&self) -> Vec<(&'static str, serde_json::Value)> {
        let per_switch: Vec<&SwitchSchemes> = self.switches.iter().map(|s| &s.schemes).collect();
        crate::registry::summaries(&per_switch, &self.host_schemes, &self.cfg)
    }

    /// One numeric counter of a scheme's summary section (e.g. `("pfc", "pauses")`); 0 if the
    /// section or key does not exist.
    pub fn scheme_stat(&self, section: &str, key: &str) -> u64 {
        self.scheme_summaries()
            .iter()
            .find(|(n, _)| *n == section)
            .and_then(|(_, v)| v.get(key))
            .and_then(|v| v.as_u64())
            .unwrap_or(0)
    }

    /// Capture the frames of the configured links (`cfg.capture`) into the pcapng file at
    /// `path` ([`crate::capture`]). Nothing without a capture configured. The capture rides
    /// on stages that run anyway when a scheme asks for them — the switches' departure stage
    /// (after which a frame is final: ECN marks CE there) and the NICs' transmit hooks — so a
    /// run without a capture tests nothing more per packet.
    pub fn start_capture(&mut self, path: &std::path::Path) -> Result<(), String> {
        if let Some(spec) = &self.cfg.capture {
            self.capture = Some(Box::new(crate::capture::Capture::create(spec, path)?));
            self.host_tx_hooks = true;
            for sw in &mut self.switches {
                sw.hooks |= crate::scheme::hook::DEPARTURE;
            }
        }
        Ok(())
    }

    /// Finish the capture (its file moved into place), if one runs.
    pub fn finish_capture(&mut self) -> Result<Option<crate::capture::CaptureSummary>, String> {
        self.capture.take().map(|c| c.finish()).transpose()
    }

    /// Packet `p` started its transmission on port `port` of `node` at `now`: to the
    /// capture. Called once the packet is final — after a switch's departure hooks, which
    /// may mark it (ECN's CE).
    #[cold]
    #[inline(never)]
    pub(crate) fn capture_tx(&mut self, node: u32, port: u16, p: u32, now: u64) {
        let peer = self.tx_port(node, port).link.peer;
        let pkt = *self.arena.get(p);
        let size = self.flows.get(pkt.flow as usize).map(|f| f.size_bytes);
        let mtu = self.cfg.mtu_bytes;
        let int = self.arena.int(p);
        let int = &int[..(pkt.int_n() as usize).min(int.len())];
        if let Some(c) = self.capture.as_deref_mut() {
            c.tap(now, node, port, peer, &pkt, int, mtu, size);
        }
    }

    /// Every PFC frame received by a switch or NIC, in the order received (HPCC-sim
    /// `PFC_OUTPUT_FILE`).
    pub fn pause_log(&self) -> Vec<crate::registry::PauseRecord> {
        crate::registry::pause_log(&self.switches, &self.host_schemes)
    }

    /// Max over switches of peak shared-buffer use, bytes.
    pub fn peak_buffer_bytes(&self) -> u64 {
        self.switches
            .iter()
            .map(|s| s.mmu.peak_bytes)
            .max()
            .unwrap_or(0)
    }

    /// Check conservation invariants; returns a description of the first violation:
    /// packets created = consumed + dropped + alive (queued or on a wire); per-queue, per-port
    /// and MMU byte counters consistent with the queue contents.
    pub fn check_invariants(&self) -> Result<(), String> {
        if self.q.tie_collisions() > 0 {
            return Err(format!(
                "event order: {} pairs of different events with the same (time, class, content) key",
                self.q.tie_collisions()
            ));
        }
        for (n, node) in self.nodes.iter().enumerate() {
            let ports = match *node {
                NodeRef::Host(_) => 1,
                NodeRef::Switch(s) => self.switches[s as usize].ports.len(),
            };
            for port in 0..ports as u16 {
                let tx = self.tx_port(n as u32, port);
                let want = self
                    .q
                    .port_hints(n as u32, port, tx.link.peer, tx.link.peer_port);
                if tx.hints != want {
                    return Err(format!(
                        "event order: node {n} port {port} has stale order hints"
                    ));
                }
            }
        }
        if self.nic_misfiled > 0 {
            return Err(format!(
                "NIC arbiter: {} picks of a QP filed as ready with nothing to send",
                self.nic_misfiled
            ));
        }
        let c = &self.counters;
        let link_drops = self.failures.as_ref().map_or(0, |f| f.link_drops);
        let dropped = c.drops + c.drops_link_error + c.drops_no_route + link_drops;
        let created = self.arena.created();
        if created != c.packets_consumed + dropped + self.arena.live() as u64 {
            return Err(format!(
                "packet conservation: created {created} != consumed {} + dropped {dropped} + alive {}",
                c.packets_consumed,
                self.arena.live()
            ));
        }
        for s in &self.switches {
            s.schemes
                .check()
                .map_err(|e| format!("switch {}: {e}", s.node))?;
        }
        for s in &self.switches {
            let mut total = 0u64;
            for (pi, p) in s.ports.iter().enumerate() {
                let mut pb = 0;
                for (qi, q) in p.queues.iter().enumerate() {
                    let b: u64 = q
                        .pkts
                        .iter()
                        .map(|&x| self.arena.get(x).size as u64)
                        .sum::<u64>()
                        + s.schemes
                            .bytes_held_aside(pi, qi, &self.arena)
                            .map_err(|e| format!("switch {}: {e}", s.node))?;
                    if b != q.bytes {
                        return Err(format!(
                            "switch {} port {pi} queue {qi}: counted {} B, holds {b} B",
                            s.node, q.bytes
                        ));
                    }
                    pb += b;
                    if qi != 0 {
                        total += b;
                    }
                }
                if pb != p.bytes {
                    return Err(format!(
                        "switch {} port {pi}: port count {} != {pb}",
                        s.node, p.bytes
                    ));
                }
            }
            if total != s.mmu.used_bytes {
                return Err(format!(
                    "switch {}: MMU says {} B used, queues hold {total} B",
                    s.node, s.mmu.used_bytes
                ));
            }
        }
        Ok(())
    }
}

impl crate::metrics::stats::Records for Simulator {
    fn count(&self) -> usize {
        self.flows.len()
    }
    fn record(&self, i: usize) -> FlowRecord {
        self.flow_record(i)
    }
}

#[cfg(test)]
mod tests {
    use super::{PairMetrics, ideal_fct_ns};

    /// The 64-bit fast path gives the 128-bit formula's answer, on both sides of the
    /// overflow boundary and at the extremes (zero MTU or rate, `u64::MAX` sizes).
    #[test]
    fn ideal_fct_matches_the_wide_formula() {
        let wide = |m: PairMetrics, size: u64, mtu: u64, hdr: u64| {
            let total = size as u128 + size.div_ceil(mtu.max(1)) as u128 * hdr as u128;
            let ser = total * 8 * 1_000_000_000 / m.bottleneck_bps.max(1) as u128;
            m.rtt_ns.saturating_add(ser.min(u64::MAX as u128) as u64)
        };
        let limit = u64::MAX / 8_000_000_000; // largest total that fits in 64 bits
        let mut rng = crate::rng::Rng::new(17);
        let mut sizes = vec![0, 1, 999, 1000, 1001, limit - 1, limit, limit + 1, u64::MAX];
        sizes.extend((0..2_000).map(|_| rng.next_u64() >> rng.below(64)));
        for &size in &sizes {
            for (mtu, hdr) in [(1000, 48), (0, 48), (1, 0), (4096, 1 << 20), (9000, 78)] {
                for bps in [0, 1, 25_000_000_000, 100_000_000_000, u64::MAX] {
                    let m = PairMetrics {
                        rtt_ns: 8_000,
                        bottleneck_bps: bps,
                    };
                    assert_eq!(
                        ideal_fct_ns(m, size, mtu, hdr),
                        wide(m, size, mtu, hdr),
                        "size {size} mtu {mtu} hdr {hdr} bps {bps}"
                    );
                }
            }
        }
        // A 1000 B flow, 1 MTU, 48 B header at 100 Gb/s: 8 µs + 1048·8/100 ns = 8,083 ns.
        let m = PairMetrics {
            rtt_ns: 8_000,
            bottleneck_bps: 100_000_000_000,
        };
        assert_eq!(ideal_fct_ns(m, 1000, 1000, 48), 8_083);
    }
}
