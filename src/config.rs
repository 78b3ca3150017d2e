//! Model parameters of one simulation (what the network *is*), independent of how they were
//! written down (TOML scenario or HPCC-sim `config.txt`, see [`crate::scenario`] and
//! [`crate::hpcc`]).

use crate::engine::packet::Framing;
use crate::units::{MS, US};

/// Switch buffer admission policy.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BufferMode {
    /// Shared buffer with egress Dynamic Threshold: a queue may take a packet of `s` bytes iff
    /// `q + s ≤ α·(B − used)` and the pool has room; drop-tail otherwise.
    Lossy,
    /// No limit at all (analysis experiments). Occupancy is still measured.
    Unlimited,
    /// Lossless (PFC) with ingress accounting — requires the PFC implementation.
    Lossless,
}

/// Shared-buffer MMU parameters (per switch).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct BufferConfig {
    /// Admission policy.
    pub mode: BufferMode,
    /// Total shared buffer per switch, bytes.
    pub size_bytes: u64,
    /// Egress Dynamic Threshold α (lossy mode). α = 1 lets one congested queue take 50 %.
    pub dt_alpha: f64,
}

/// Egress scheduling among the data queues (queue 0 is always strict priority).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SchedulerKind {
    /// Per-packet round robin over non-empty, non-paused queues (HPCC-sim).
    #[serde(rename = "rr")]
    RoundRobin,
    /// Weighted round robin in packets: queue q sends up to `EgressPort::weights[q]`
    /// packets per turn (NDP: 10 from the header queue per data packet).
    #[serde(rename = "wrr")]
    Wrr,
    /// Deficit round robin with the given quantum in bytes (BFC).
    Drr {
        /// Bytes added to a queue's deficit per round.
        quantum_bytes: u32,
    },
}

/// Loss recovery at the NIC.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LossRecovery {
    /// RoCEv2 Go-Back-N (HPCC-sim) plus a retransmission timeout (TLT-sim behaviour; HPCC-sim
    /// has none, which hangs flows whose tail is lost).
    Gbn {
        /// Retransmission timeout, picoseconds (default 4 ms).
        rto_ps: u64,
        /// Minimum spacing of repeated NACKs for the same expected sequence (default 500 µs).
        nack_interval_ps: u64,
    },
    /// IRN: selective repeat (paper rule: each lost packet retransmitted once per recovery
    /// episode), BDP-capped outstanding bytes, two-level RTO.
    Irn {
        /// Timeout when ≤ 3 packets are outstanding, picoseconds (default 100 µs).
        rto_low_ps: u64,
        /// Timeout otherwise, picoseconds (default 3 ms).
        rto_high_ps: u64,
        /// Cap on outstanding bytes; 0 = the topology's max BDP.
        bdp_cap_bytes: u64,
    },
}

impl LossRecovery {
    /// Go-Back-N with its defaults.
    pub fn gbn() -> Self {
        LossRecovery::Gbn {
            rto_ps: 4 * MS,
            nack_interval_ps: 500 * US,
        }
    }
    /// IRN with its defaults.
    pub fn irn() -> Self {
        LossRecovery::Irn {
            rto_low_ps: 100 * US,
            rto_high_ps: 3 * MS,
            bdp_cap_bytes: 0,
        }
    }
}

/// ECN marking at switch egress: RED on the (port, queue) backlog left behind the departing
/// packet, evaluated at dequeue (HPCC-sim `switch-node.cc`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct EcnConfig {
    /// Marking enabled.
    pub enabled: bool,
    /// Thresholds per link rate; a port uses the entry of its rate, or else the thresholds of
    /// the nearest listed rate scaled linearly with the rate.
    pub thresholds: Vec<EcnThresholds>,
}

impl EcnConfig {
    /// HPCC `run.py` maps for host rate `bw` Gb/s: Kmin = 100·bw/25 KB... scaled per rate:
    /// 25 G → 100/400 KB, 100 G → 400/1600 KB, 400 G → 1600/6400 KB, Pmax 0.2 (K in 1000 B).
    pub fn hpcc_default() -> Self {
        let t = |g: u64| EcnThresholds {
            rate_bps: g * 1_000_000_000,
            kmin_bytes: g * 4_000,
            kmax_bytes: g * 16_000,
            pmax: 0.2,
        };
        EcnConfig {
            enabled: true,
            thresholds: vec![t(25), t(50), t(100), t(200), t(400)],
        }
    }

    /// Step marking (DCTCP-style: every packet above `k_bytes`, Kmin = Kmax, Pmax 1) at each
    /// of `rates_bps`.
    pub fn step(k_bytes: u64, rates_bps: &[u64]) -> Self {
        EcnConfig {
            enabled: true,
            thresholds: rates_bps
                .iter()
                .map(|&r| EcnThresholds {
                    rate_bps: r,
                    kmin_bytes: k_bytes,
                    kmax_bytes: k_bytes,
                    pmax: 1.0,
                })
                .collect(),
        }
    }

    /// Thresholds for a port of `rate_bps`.
    pub fn for_rate(&self, rate_bps: u64) -> Option<EcnThresholds> {
        if !self.enabled || self.thresholds.is_empty() {
            return None;
        }
        if let Some(t) = self.thresholds.iter().find(|t| t.rate_bps == rate_bps) {
            return Some(*t);
        }
        let near = self
            .thresholds
            .iter()
            .min_by_key(|t| (t.rate_bps as i128 - rate_bps as i128).unsigned_abs())?;
        let k = rate_bps as f64 / near.rate_bps as f64;
        Some(EcnThresholds {
            rate_bps,
            kmin_bytes: (near.kmin_bytes as f64 * k) as u64,
            kmax_bytes: (near.kmax_bytes as f64 * k) as u64,
            pmax: near.pmax,
        })
    }
}

/// How receivers turn CE marks into congestion notifications (DCQCN's NP).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CnpMode {
    /// HPCC-sim: every ACK echoes the CE bit of the data packet it acknowledges; no CNP packets.
    AckEcho,
    /// DCQCN paper: a separate high-priority CNP packet, at most one per flow per interval
    /// (the first CE-marked packet after the interval has elapsed triggers one immediately).
    Cnp {
        /// Minimum spacing of CNPs per flow, picoseconds (paper: 50 µs).
        interval_ps: u64,
    },
}

/// RED/ECN marking thresholds for links of one rate (HPCC-sim `KMIN_MAP`/`KMAX_MAP`/`PMAX_MAP`).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct EcnThresholds {
    /// Link rate these thresholds apply to, bits per second.
    pub rate_bps: u64,
    /// No marking at or below this backlog, bytes.
    pub kmin_bytes: u64,
    /// Always mark above this backlog, bytes.
    pub kmax_bytes: u64,
    /// Marking probability at `kmax_bytes` (linear from 0 at `kmin_bytes`).
    pub pmax: f64,
}

/// Smallest accepted payload per data packet (`network.mtu`, HPCC `PACKET_PAYLOAD_SIZE`),
/// bytes. Below it a data packet (payload + headers) is shorter on the wire than the ACK it
/// triggers, so a receiver's ACKs arrive faster than its link can send them back and pile up
/// without bound (Ethernet's own minimum payload is 46 B).
pub const MIN_MTU_BYTES: u32 = 64;

/// The core network model: everything but the topology, the traffic and the schemes' own
/// tables (the full configuration, with those tables, is [`crate::registry::NetConfig`]).
#[derive(Clone, Debug, serde::Serialize)]
pub struct CoreConfig {
    /// Master seed; every component derives its own stream from it.
    pub seed: u64,
    /// MTU payload per data packet, bytes (HPCC `PACKET_PAYLOAD_SIZE`, default 1000).
    pub mtu_bytes: u32,
    /// Packet framing and serialization convention.
    pub framing: Framing,
    /// Extra INT bytes on every data packet and ACK (HPCC: 42; 0 otherwise).
    pub int_bytes: u32,
    /// Fixed processing delay added at every switch, picoseconds (default 0).
    pub switch_delay_ps: u64,
    /// Fixed processing delay added at every receiving NIC, picoseconds (default 0).
    pub nic_delay_ps: u64,
    /// Queues per switch egress port (queue 0 = strict-priority control class).
    pub queues_per_port: usize,
    /// Data-queue scheduler.
    pub scheduler: SchedulerKind,
    /// Switch buffer model.
    pub buffer: BufferConfig,
    /// Per-switch buffer sizes that replace [`BufferConfig::size_bytes`] at those switches:
    /// (switch node id, total shared buffer in bytes), at most one entry per node. Empty =
    /// every switch has `buffer.size_bytes` (see [`CoreConfig::buffer_of`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub switch_buffer_bytes: Vec<(u32, u64)>,
    /// Each flow's controller gets the BDP of its own path (`base_rtt · bottleneck / 8` of the
    /// source–destination pair, HPCC-sim `GLOBAL_T 0`) instead of the topology's maximum BDP
    /// (`GLOBAL_T 1`, the default): the window of `dcqcn+w`, `timely+w`, `dctcp` and
    /// `cc.window = "bdp"`. The base RTT a controller is given stays the global one.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub window_per_pair: bool,
    /// NIC loss recovery.
    pub loss_recovery: LossRecovery,
    /// The NIC sends ACKs and NACKs from its strict-priority control queue regardless of their
    /// priority's PFC pause (HPCC-sim `ACK_HIGH_PRIO`: the NIC's ACK queue is queue 0, which
    /// is never paused; not under CBFC, where an ACK needs a data VL's credits). At switches
    /// they keep their flow's data priority unless [`Self::switch_ack_high_prio`].
    pub ack_high_prio: bool,
    /// Switches also put ACKs and NACKs in queue 0 — strict priority, no ingress admission,
    /// never PFC-paused — instead of their flow's data priority (HPCC-sim `SwitchNode`'s
    /// `AckHighPrio` attribute). Off by default, as in HPCC-sim, whose `third.cc` never sets
    /// it: there ACKs are queued, admitted and paused in the data priority at every switch
    /// even with `ACK_HIGH_PRIO 1`. Requires [`Self::ack_high_prio`].
    pub switch_ack_high_prio: bool,
    /// Interval of the shared-buffer watermark monitor, picoseconds (default 10 µs).
    pub buffer_sample_ps: u64,
    /// Stop the simulation at this time, picoseconds (`u64::MAX` = when traffic drains).
    pub stop_ps: u64,
    /// ECN marking.
    pub ecn: EcnConfig,
    /// Receiver congestion notification.
    pub cnp: CnpMode,
    /// Switches append INT hop records to data packets (HPCC).
    pub int_enabled: bool,
    /// Switch egress ports whose queue (all priorities, bytes) is recorded as a time series:
    /// (switch node id, port number).
    pub queue_monitor: Vec<(u32, u32)>,
    /// Interval of the queue time series (max within each interval), picoseconds.
    pub queue_monitor_ps: u64,
    /// Meter goodput per *sender* as well (per 100 µs, like the receiver meter): written to
    /// `sender_throughput.csv`, and the basis of the `fairness` section of `summary.json`
    /// (Jain's index among the senders active over each interval). Off by default: one more
    /// meter update per delivered data packet.
    pub sender_throughput: bool,
    /// Packet capture of chosen links into a pcapng file (`[capture]`, `--capture`); `None`
    /// = none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture: Option<CaptureSpec>,
    /// Links that go down and come back up during the run, and how long routing takes to
    /// follow ([`Failures`]). Empty: every link stays up.
    #[serde(skip_serializing_if = "Failures::is_empty")]
    pub failures: Failures,
}

/// One captured link: its two ends as (node id, port index), and its rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CaptureLink {
    /// One end: (node, port) — the port that transmits on the link from that node.
    pub a: (u32, u16),
    /// The other end.
    pub b: (u32, u16),
    /// Line rate, bits per second.
    pub rate_bps: u64,
}

/// What a run captures ([`crate::capture`]): frames crossing `links` (both directions)
/// whose transmission starts in `[start_ps, stop_ps)`, of `flows` (empty = every flow;
/// hop-by-hop frames, which belong to no flow, always), until `max_packets` frames or
/// `max_bytes` of file; each frame cut to `snaplen_bytes` (0 = whole).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CaptureSpec {
    /// Captured links (one pcapng interface each).
    pub links: Vec<CaptureLink>,
    /// Start of the window, picoseconds.
    pub start_ps: u64,
    /// End of the window, picoseconds (`u64::MAX` = the end of the run).
    pub stop_ps: u64,
    /// Flow ids captured (sorted); empty = all.
    pub flows: Vec<u32>,
    /// Frames written at most; the capture stops there (and says so).
    pub max_packets: u64,
    /// File bytes written at most; the capture stops before exceeding it.
    pub max_bytes: u64,
    /// Bytes of each frame kept (0 = the whole frame).
    pub snaplen_bytes: u32,
}

/// One scheduled change of a link's state (scenario `[[event]]`, HPCC-sim `LINK_DOWN`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LinkEvent {
    /// When the link changes state, picoseconds.
    pub at_ps: u64,
    /// One end of the link (node id).
    pub a: u32,
    /// The other end (node id). Every link between `a` and `b` (parallel links included)
    /// changes state.
    pub b: u32,
    /// The link comes back up (`link_up`) instead of going down (`link_down`).
    pub up: bool,
}

/// Link failures of a run and the routing's reaction to them.
///
/// When a link goes down, packets on the wire on it (whose last bit has not reached the far
/// end) are lost, its two ends keep serving their queues at line rate but every packet they
/// send is lost (a port that routing has not yet withdrawn black-holes the traffic routed to
/// it), and any PFC pause in force on either end is lifted (HPCC-sim's
/// `QbbNetDevice::TakeDown` clears the port's pause state: a RESUME that can no longer
/// arrive must not hold a queue forever). All these packets count as `link_drops`.
/// `reconverge_delay_ps` after each change the ECMP next hops of every switch are computed
/// again as shortest paths over the links up at that moment.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Failures {
    /// The changes, in the order they were given (events at the same time apply in this
    /// order).
    pub events: Vec<LinkEvent>,
    /// Time from a link's change of state until the forwarding tables follow it,
    /// picoseconds. Default 0, HPCC-sim's behaviour (`TakeDownLink` recomputes the routes at
    /// the instant of the failure): a real fabric's detection and convergence time (BFD
    /// timers, routing-protocol updates; tens of ms to seconds) depends on its control
    /// plane, so it is left to the scenario to give (`routing.reconverge_delay`).
    pub reconverge_delay_ps: u64,
    /// The two switches at the ends of a link that changes state follow it at once (they see
    /// the loss of carrier); only the others wait `reconverge_delay_ps`. A spine whose
    /// downlink to a leaf failed then sends that leaf's traffic down to another leaf, which,
    /// not yet converged, may send it up again to any spine — the same one included: the
    /// down-and-up bounces and transient loops that make lossless Clos fabrics deadlock.
    pub local_repair: bool,
}

impl Failures {
    /// No link ever changes state.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

impl Default for CoreConfig {
    fn default() -> Self {
        CoreConfig {
            seed: 1,
            mtu_bytes: 1000,
            framing: Framing::Hpcc,
            int_bytes: 0,
            switch_delay_ps: 0,
            nic_delay_ps: 0,
            queues_per_port: 8,
            scheduler: SchedulerKind::RoundRobin,
            buffer: BufferConfig {
                mode: BufferMode::Lossy,
                size_bytes: 32 << 20,
                dt_alpha: 1.0,
            },
            switch_buffer_bytes: Vec::new(),
            window_per_pair: false,
            loss_recovery: LossRecovery::gbn(),
            ack_high_prio: false,
            switch_ack_high_prio: false,
            buffer_sample_ps: 10 * US,
            stop_ps: u64::MAX,
            ecn: EcnConfig {
                enabled: false,
                thresholds: Vec::new(),
            },
            cnp: CnpMode::AckEcho,
            int_enabled: false,
            queue_monitor: Vec::new(),
            queue_monitor_ps: US,
            sender_throughput: false,
            capture: None,
            failures: Failures::default(),
        }
    }
}

/// Shortest accepted sampling interval of the buffer and queue monitors, picoseconds (100 ns):
/// shorter intervals multiply memory and CSV size without resolving anything a packet
/// (≥ 4 ns at 100 Gb/s) would not already show.
pub const MIN_SAMPLE_INTERVAL_PS: u64 = 100 * crate::units::NS;

/// A [`CoreConfig`] field, as named by [`ConfigIssue`]: callers map it to their own spelling
/// (a scenario key and line, an HPCC-sim config key).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NetField {
    /// [`CoreConfig::mtu_bytes`].
    Mtu,
    /// [`CoreConfig::int_bytes`].
    IntBytes,
    /// [`CoreConfig::queues_per_port`].
    QueuesPerPort,
    /// The quantum of [`SchedulerKind::Drr`].
    DrrQuantum,
    /// [`BufferConfig::size_bytes`].
    BufferSize,
    /// [`BufferConfig::dt_alpha`].
    DtAlpha,
    /// The size of [`CoreConfig::switch_buffer_bytes`] for this switch node.
    SwitchBufferSize(u32),
    /// `rto_ps` of [`LossRecovery::Gbn`].
    GbnRto,
    /// `nack_interval_ps` of [`LossRecovery::Gbn`].
    GbnNackInterval,
    /// `rto_low_ps` of [`LossRecovery::Irn`].
    IrnRtoLow,
    /// `rto_high_ps` of [`LossRecovery::Irn`].
    IrnRtoHigh,
    /// [`CoreConfig::buffer_sample_ps`].
    BufferSample,
    /// [`CoreConfig::stop_ps`].
    Stop,
    /// [`CoreConfig::ecn`] thresholds (Kmin ≤ Kmax).
    Ecn,
    /// [`CoreConfig::ecn`] marking probability at Kmax.
    EcnPmax,
    /// The interval of [`CnpMode::Cnp`].
    CnpInterval,
    /// [`CoreConfig::queue_monitor_ps`].
    QueueMonitorInterval,
    /// A value of a scheme's configuration ([`crate::scheme::SchemeConfig::issues`]), or a
    /// core setting a scheme needs: its scenario key.
    Scheme(&'static str),
    /// [`CoreConfig::switch_ack_high_prio`] (needs [`CoreConfig::ack_high_prio`]).
    SwitchAckHighPrio,
}

/// One invalid [`CoreConfig`] value: which field, and what is wrong with it (without the
/// field's name, which the caller spells in its own terms).
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigIssue {
    /// The offending field.
    pub field: NetField,
    /// What is wrong, e.g. `"must be in 1..=9000 (got 0)"`.
    pub message: String,
}

impl std::fmt::Display for ConfigIssue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}: {}", self.field, self.message)
    }
}

impl CoreConfig {
    /// The buffer model of switch `node`: [`CoreConfig::buffer`] with the size replaced by the
    /// node's entry of [`CoreConfig::switch_buffer_bytes`], if it has one.
    pub fn buffer_of(&self, node: u32) -> BufferConfig {
        let mut b = self.buffer;
        if let Some(&(_, size)) = self.switch_buffer_bytes.iter().find(|(n, _)| *n == node) {
            b.size_bytes = size;
        }
        b
    }

    /// Check [`CoreConfig::switch_buffer_bytes`] against a topology: every entry names a switch,
    /// no node twice. Returns a readable error, e.g. `per-switch buffer: node 3 is a host, not a
    /// switch (switches: 8..=15)`.
    pub fn check_switch_buffers(&self, topo: &crate::topology::TopologySpec) -> Result<(), String> {
        use crate::topology::NodeKind;
        let mut seen = std::collections::HashSet::new();
        for &(node, _) in &self.switch_buffer_bytes {
            let switches = || {
                let s = topo.switches();
                match (s.first(), s.last()) {
                    (Some(a), Some(b)) if b - a + 1 == s.len() as u32 => format!("{a}..={b}"),
                    _ => format!("{} switches", s.len()),
                }
            };
            match topo.kinds.get(node as usize) {
                Some(NodeKind::Switch) => {}
                Some(NodeKind::Host) => {
                    return Err(format!(
                        "per-switch buffer: node {node} is a host, not a switch (switches: {})",
                        switches()
                    ));
                }
                None => {
                    return Err(format!(
                        "per-switch buffer: node {node} does not exist ({} nodes; switches: {})",
                        topo.kinds.len(),
                        switches()
                    ));
                }
            }
            if !seen.insert(node) {
                return Err(format!("per-switch buffer: switch {node} is given twice"));
            }
        }
        Ok(())
    }

    /// Largest data packet on the wire that occupies buffer: MTU payload + headers + INT.
    pub fn max_packet_bytes(&self) -> u64 {
        self.mtu_bytes as u64 + self.framing.data_header_bytes() as u64 + self.int_bytes as u64
    }

    /// Check every value of this configuration on its own (no topology needed): the first
    /// problem found, in field order. See [`CoreConfig::issues`] for all of them.
    pub fn validate(&self) -> Result<(), ConfigIssue> {
        match self.issues().into_iter().next() {
            Some(i) => Err(i),
            None => Ok(()),
        }
    }

    /// Every invalid value of this configuration, in field order. The single place where
    /// [`CoreConfig`] values are range-checked: the scenario and HPCC-sim readers map each
    /// [`NetField`] to the key the user wrote.
    pub fn issues(&self) -> Vec<ConfigIssue> {
        let mut v = Vec::new();
        self.packet_issues(&mut v);
        self.buffer_issues(&mut v);
        self.timing_issues(&mut v);
        self.marking_issues(&mut v);
        v
    }

    /// [`Self::issues`]: Packet size, queues and scheduler.
    fn packet_issues(&self, v: &mut Vec<ConfigIssue>) {
        let mut bad = |field: NetField, message: String| v.push(ConfigIssue { field, message });
        if !(MIN_MTU_BYTES..=9000).contains(&self.mtu_bytes) {
            bad(
                NetField::Mtu,
                format!(
                    "must be in {MIN_MTU_BYTES}..=9000 bytes (got {}; below {MIN_MTU_BYTES} a data \
                     packet is shorter on the wire than its ACK, and the ACKs pile up without bound \
                     at the receiver)",
                    self.mtu_bytes
                ),
            );
        }
        if self.int_bytes > 1024 {
            bad(
                NetField::IntBytes,
                format!("must be at most 1024 bytes (got {})", self.int_bytes),
            );
        }
        if !(2..=64).contains(&self.queues_per_port) {
            bad(
                NetField::QueuesPerPort,
                format!(
                    "must be in 2..=64 (got {}): queue 0 is the control class, data needs another",
                    self.queues_per_port
                ),
            );
        }
        if self.switch_ack_high_prio && !self.ack_high_prio {
            bad(
                NetField::SwitchAckHighPrio,
                "needs `ack_high_prio`: ACKs in queue 0 at switches but paused with the data at \
                 the NIC is not a configuration HPCC-sim has"
                    .into(),
            );
        }
        if let SchedulerKind::Drr { quantum_bytes: 0 } = self.scheduler {
            bad(NetField::DrrQuantum, "must be at least 1 byte".into());
        }
    }

    /// [`Self::issues`]: The shared buffer: sizes and the dynamic threshold.
    fn buffer_issues(&self, v: &mut Vec<ConfigIssue>) {
        let mut bad = |field: NetField, message: String| v.push(ConfigIssue { field, message });
        let pkt = self.max_packet_bytes();
        let b = &self.buffer;
        if b.size_bytes == 0 {
            bad(NetField::BufferSize, "must be positive".into());
        } else if b.mode != BufferMode::Unlimited && b.size_bytes < 2 * pkt {
            bad(
                NetField::BufferSize,
                format!(
                    "{} B is smaller than two packets ({pkt} B each): nothing could ever be forwarded",
                    b.size_bytes
                ),
            );
        }
        for &(node, size) in &self.switch_buffer_bytes {
            if b.mode != BufferMode::Unlimited && size < 2 * pkt {
                bad(
                    NetField::SwitchBufferSize(node),
                    format!(
                        "switch {node}: {size} B is smaller than two packets ({pkt} B each): nothing could ever be forwarded"
                    ),
                );
            } else if b.mode == BufferMode::Lossy && b.dt_alpha * (size as f64) < pkt as f64 {
                bad(
                    NetField::SwitchBufferSize(node),
                    format!(
                        "switch {node}: {} × buffer {size} B admits less than one packet ({pkt} B) into an empty queue",
                        b.dt_alpha
                    ),
                );
            }
        }
        if !(b.dt_alpha.is_finite() && b.dt_alpha > 0.0) {
            bad(
                NetField::DtAlpha,
                format!("must be a positive number (got {})", b.dt_alpha),
            );
        } else if b.mode == BufferMode::Lossy && b.dt_alpha * (b.size_bytes as f64) < pkt as f64 {
            bad(
                NetField::DtAlpha,
                format!(
                    "{} × buffer {} B admits less than one packet ({pkt} B) into an empty queue: every packet would be dropped",
                    b.dt_alpha, b.size_bytes
                ),
            );
        }
    }

    /// [`Self::issues`]: Loss-recovery timers, monitor intervals and the stop time.
    fn timing_issues(&self, v: &mut Vec<ConfigIssue>) {
        let mut bad = |field: NetField, message: String| v.push(ConfigIssue { field, message });
        match self.loss_recovery {
            LossRecovery::Gbn {
                rto_ps,
                nack_interval_ps,
            } => {
                if rto_ps == 0 {
                    bad(NetField::GbnRto, "must be positive".into());
                }
                if nack_interval_ps == 0 {
                    bad(NetField::GbnNackInterval, "must be positive".into());
                }
            }
            LossRecovery::Irn {
                rto_low_ps,
                rto_high_ps,
                ..
            } => {
                if rto_low_ps == 0 {
                    bad(NetField::IrnRtoLow, "must be positive".into());
                }
                if rto_high_ps == 0 {
                    bad(NetField::IrnRtoHigh, "must be positive".into());
                }
            }
        }
        if self.buffer_sample_ps < MIN_SAMPLE_INTERVAL_PS {
            bad(
                NetField::BufferSample,
                format!(
                    "{} is below the shortest sampling interval, 100ns",
                    crate::units::fmt_time(self.buffer_sample_ps)
                ),
            );
        }
        if self.queue_monitor_ps < MIN_SAMPLE_INTERVAL_PS {
            bad(
                NetField::QueueMonitorInterval,
                format!(
                    "{} is below the shortest sampling interval, 100ns",
                    crate::units::fmt_time(self.queue_monitor_ps)
                ),
            );
        }
        if self.stop_ps == 0 {
            bad(
                NetField::Stop,
                "must be positive: a run stopped at time 0 simulates nothing".into(),
            );
        }
    }

    /// [`Self::issues`]: ECN thresholds, CNP spacing and PFC.
    fn marking_issues(&self, v: &mut Vec<ConfigIssue>) {
        let mut bad = |field: NetField, message: String| v.push(ConfigIssue { field, message });
        for t in &self.ecn.thresholds {
            if !(0.0..=1.0).contains(&t.pmax) {
                bad(
                    NetField::EcnPmax,
                    format!("must be in [0, 1] (got {} at {} bps)", t.pmax, t.rate_bps),
                );
                break;
            }
            if t.kmin_bytes > t.kmax_bytes {
                bad(
                    NetField::Ecn,
                    format!(
                        "needs kmin ≤ kmax (got kmin {} B, kmax {} B at {} bps)",
                        t.kmin_bytes, t.kmax_bytes, t.rate_bps
                    ),
                );
                break;
            }
        }
        if let CnpMode::Cnp { interval_ps: 0 } = self.cnp {
            bad(NetField::CnpInterval, "must be positive".into());
        }
    }
}

impl CoreConfig {
    /// Checks that need the topology's maximum base RTT (`base_rtt_ps`, as
    /// [`crate::topology::routing::RouteTable::max_base_rtt`] computes it): a retransmission
    /// timeout shorter than the base RTT fires before any ACK can arrive, for every packet.
    /// Returns (errors, warnings); IRN's low timeout below the RTT is only a warning (it applies
    /// to the last few packets of a window and recovers).
    pub fn rtt_issues(&self, base_rtt_ps: u64) -> (Vec<ConfigIssue>, Vec<ConfigIssue>) {
        let (mut errs, warns) = (Vec::new(), Vec::new());
        let short = |t: u64| shorter_than_rtt(t, base_rtt_ps);
        match self.loss_recovery {
            LossRecovery::Gbn { rto_ps, .. } if rto_ps > 0 && rto_ps < base_rtt_ps => {
                errs.push(ConfigIssue {
                    field: NetField::GbnRto,
                    message: short(rto_ps),
                })
            }
            LossRecovery::Irn {
                rto_low_ps,
                rto_high_ps,
                ..
            } => {
                if rto_high_ps > 0 && rto_high_ps < base_rtt_ps {
                    errs.push(ConfigIssue {
                        field: NetField::IrnRtoHigh,
                        message: short(rto_high_ps),
                    });
                }
                // RTO_low serves flows with few packets outstanding: below the RTT it fires
                // before any of them can be ACKed, over and over (a 1 ps RTO_low never ends).
                if rto_low_ps > 0 && rto_low_ps < base_rtt_ps {
                    errs.push(ConfigIssue {
                        field: NetField::IrnRtoLow,
                        message: short(rto_low_ps),
                    });
                }
                if rto_low_ps > rto_high_ps && rto_high_ps > 0 {
                    errs.push(ConfigIssue {
                        field: NetField::IrnRtoLow,
                        message: format!(
                            "{} exceeds rto_high ({}): IRN's short timeout must be the shorter",
                            crate::units::fmt_time(rto_low_ps),
                            crate::units::fmt_time(rto_high_ps)
                        ),
                    });
                }
            }
            _ => {}
        }
        (errs, warns)
    }
}

/// The message for a timeout `t_ps` shorter than the base RTT `base_rtt_ps`.
pub fn shorter_than_rtt(t_ps: u64, base_rtt_ps: u64) -> String {
    format!(
        "{} is shorter than the base RTT ({}): every packet would time out before its ACK could arrive",
        crate::units::fmt_time(t_ps),
        crate::units::fmt_time(base_rtt_ps)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rto_shorter_than_the_rtt_is_an_error() {
        let mut c = CoreConfig {
            loss_recovery: LossRecovery::Gbn {
                rto_ps: 1,
                nack_interval_ps: US,
            },
            ..Default::default()
        };
        let (e, w) = c.rtt_issues(10 * US);
        assert_eq!((e.len(), w.len()), (1, 0));
        assert_eq!(e[0].field, NetField::GbnRto);
        c.loss_recovery = LossRecovery::Irn {
            rto_low_ps: US,
            rto_high_ps: 10 * US,
            bdp_cap_bytes: 0,
        };
        // rto_high = RTT is accepted; rto_low below it is an error too (it would fire before
        // any ACK, forever).
        let (e, w) = c.rtt_issues(10 * US);
        assert_eq!((e.len(), w.len()), (1, 0));
        assert_eq!(e[0].field, NetField::IrnRtoLow);
        // rto_low above rto_high: an error.
        c.loss_recovery = LossRecovery::Irn {
            rto_low_ps: 20 * US,
            rto_high_ps: 15 * US,
            bdp_cap_bytes: 0,
        };
        let (e, _) = c.rtt_issues(10 * US);
        assert_eq!(e.len(), 1);
        assert!(
            e[0].message.contains("exceeds rto_high"),
            "{}",
            e[0].message
        );
    }

    fn fields(c: &CoreConfig) -> Vec<NetField> {
        c.issues().into_iter().map(|i| i.field).collect()
    }

    #[test]
    fn default_is_valid() {
        assert_eq!(CoreConfig::default().validate(), Ok(()));
    }

    #[test]
    fn each_bad_value_names_its_field() {
        let mut c = CoreConfig {
            mtu_bytes: 0,
            queues_per_port: 1,
            stop_ps: 0,
            buffer_sample_ps: 1,
            ..Default::default()
        };
        c.buffer.dt_alpha = f64::NAN;
        assert_eq!(
            fields(&c),
            [
                NetField::Mtu,
                NetField::QueuesPerPort,
                NetField::DtAlpha,
                NetField::BufferSample,
                NetField::Stop
            ]
        );
        assert_eq!(c.validate().unwrap_err().field, NetField::Mtu);
    }

    #[test]
    fn dt_alpha_must_admit_one_packet() {
        // Lossy, 32 MiB: α·B must reach one 1048 B packet (1000 payload + 48 header):
        // α = 1048 / 33554432 ≈ 3.1e-5 is the limit.
        let mut c = CoreConfig::default();
        c.buffer.dt_alpha = 1e-30;
        assert_eq!(fields(&c), [NetField::DtAlpha]);
        c.buffer.dt_alpha = 1048.0 / (32u64 << 20) as f64;
        assert_eq!(fields(&c), []);
        // Unlimited buffers ignore α's size.
        c.buffer.dt_alpha = 1e-30;
        c.buffer.mode = BufferMode::Unlimited;
        assert_eq!(fields(&c), []);
    }

    #[test]
    fn buffer_must_hold_two_packets() {
        let mut c = CoreConfig::default();
        c.buffer.size_bytes = 2 * 1048 - 1;
        c.buffer.dt_alpha = 1.0;
        assert!(fields(&c).contains(&NetField::BufferSize));
        c.buffer.size_bytes = 2 * 1048;
        assert_eq!(fields(&c), []);
    }
}
