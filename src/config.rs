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
        }
    }
}
