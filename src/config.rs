//! Model parameters of one simulation (what the network *is*), independent of how they were
//! written down (TOML scenario or HPCC-sim `config.txt`, see [`crate::scenario`] and
//! [`crate::hpcc`]).

use crate::units::{MS, US};

/// How packet sizes and serialization times are computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Framing {
    /// HPCC-sim conventions: data = payload + 48 B (+ INT), ACK/NACK 60 B (88 B with HPCC INT),
    /// no preamble/IFG/FCS, serialization truncated to whole nanoseconds. Our default, so that
    /// numbers compare with the papers.
    Hpcc,
    /// Realistic RoCEv2 over Ethernet: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 +
    /// FCS 4 = 62 B per data frame, ACK = 62 + AETH 4 = 66 B (64 B minimum frame), plus
    /// preamble/SFD 8 B and inter-frame gap 12 B of wire time per frame; exact picosecond
    /// serialization.
    Ethernet,
}

impl Framing {
    /// Header bytes of a data packet (buffer-occupying), excluding INT.
    pub fn data_header_bytes(self) -> u32 {
        match self {
            Framing::Hpcc => 48,
            Framing::Ethernet => 62,
        }
    }
    /// Size of an ACK/NACK without INT.
    pub fn ack_bytes(self) -> u32 {
        match self {
            Framing::Hpcc => 60,
            Framing::Ethernet => 66,
        }
    }
    /// Size of an ACK/NACK carrying `int_bytes` of INT: HPCC-sim pads the 46 B of headers
    /// (+ INT) to at least 60 B (so 60 B without INT or with TIMELY's 8 B, 88 B with HPCC's
    /// 42 B); Ethernet framing adds the INT to its 66 B frame.
    pub fn ack_size(self, int_bytes: u32) -> u32 {
        match self {
            Framing::Hpcc => (46 + int_bytes).max(60),
            Framing::Ethernet => 66 + int_bytes,
        }
    }
    /// Minimum frame: control frames (PFC, BTS, CNP) are padded to at least this.
    pub fn min_frame_bytes(self) -> u32 {
        match self {
            Framing::Hpcc => 0,
            Framing::Ethernet => 64,
        }
    }
    /// Wire-only overhead per frame (preamble, SFD, IFG): serialized but never buffered.
    pub fn wire_overhead_bytes(self) -> u32 {
        match self {
            Framing::Hpcc => 0,
            Framing::Ethernet => 20,
        }
    }
    /// Serialization time of a `size_bytes` frame at `rate_bps`, picoseconds.
    #[inline]
    pub fn ser_ps(self, size_bytes: u32, rate_bps: u64) -> u64 {
        match self {
            Framing::Hpcc => crate::units::ser_time_ps_hpcc(size_bytes as u64, rate_bps),
            Framing::Ethernet => crate::units::ser_time_ps(size_bytes as u64 + 20, rate_bps),
        }
    }
}

/// Switch buffer admission policy.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
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
pub enum SchedulerKind {
    /// Per-packet round robin over non-empty, non-paused queues (HPCC-sim).
    RoundRobin,
    /// Deficit round robin with the given quantum in bytes (BFC).
    Drr {
        /// Bytes added to a queue's deficit per round.
        quantum_bytes: u32,
    },
}

/// Loss recovery at the NIC.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
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

/// PFC (lossless fabric) parameters, HPCC-sim's switch MMU model (`specs/pfc.md`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PfcConfig {
    /// Guaranteed bytes per ingress (port, priority) before the shared pool is used (4 KiB).
    pub reserve_bytes: u64,
    /// XON hysteresis: resume when shared use + this ≤ threshold (3 KiB).
    pub resume_offset_bytes: u64,
    /// Headroom per port = factor × link rate × one-way delay (HPCC-sim: 3).
    pub headroom_factor: f64,
    /// Fixed extra headroom per port, bytes (e.g. 2 MTU), added to the above.
    pub headroom_extra_bytes: u64,
    /// α of the ingress dynamic threshold at host-rate ports (HPCC-sim 1/8); it doubles for
    /// every doubling of the port rate above the host rate, up to 1 (400 G → 1/2).
    pub alpha_host: f64,
    /// Pause frames carry real quanta and expire unless refreshed (the switch refreshes XOFF
    /// at half the pause time). `false` = HPCC-sim: a PAUSE holds until an explicit RESUME.
    pub expiry: bool,
    /// Pause quanta in a PAUSE frame (max 65535; one quantum = 512 bit times).
    pub quanta: u32,
}

impl Default for PfcConfig {
    fn default() -> Self {
        PfcConfig {
            reserve_bytes: 4096,
            resume_offset_bytes: 3072,
            headroom_factor: 3.0,
            headroom_extra_bytes: 0,
            alpha_host: 0.125,
            expiry: true,
            quanta: 65535,
        }
    }
}

/// Everything about the network model except topology and traffic.
#[derive(Clone, Debug, serde::Serialize)]
pub struct NetConfig {
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
    /// NIC loss recovery.
    pub loss_recovery: LossRecovery,
    /// NIC ACK queue priority is 0 (strict, never PFC-paused) instead of the data priority.
    pub ack_high_prio: bool,
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
    /// PFC parameters (used in [`BufferMode::Lossless`]).
    pub pfc: PfcConfig,
    /// SFC (switch-side flow control) parameters.
    pub sfc: crate::scheme::sfc::SfcConfig,
    /// OnRamp (end-to-end flow control) parameters.
    pub onramp: crate::scheme::onramp::OnRampConfig,
    /// Switch egress ports whose queue (all priorities, bytes) is recorded as a time series:
    /// (switch node id, port number).
    pub queue_monitor: Vec<(u32, u32)>,
    /// Interval of the queue time series (max within each interval), picoseconds.
    pub queue_monitor_ps: u64,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig {
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
            loss_recovery: LossRecovery::gbn(),
            ack_high_prio: false,
            buffer_sample_ps: 10 * US,
            stop_ps: u64::MAX,
            ecn: EcnConfig {
                enabled: false,
                thresholds: Vec::new(),
            },
            cnp: CnpMode::AckEcho,
            int_enabled: false,
            pfc: PfcConfig::default(),
            sfc: crate::scheme::sfc::SfcConfig::default(),
            onramp: crate::scheme::onramp::OnRampConfig::default(),
            queue_monitor: Vec::new(),
            queue_monitor_ps: US,
        }
    }
}
