//! Measurements: per-flow records and slowdown statistics ([`stats`]), output writers
//! ([`output`]), the per-switch buffer monitor ([`buffer`]) and the packet round-trip latency
//! histogram ([`latency`]).

pub mod buffer;
pub mod fairness;
pub mod latency;
pub mod output;
pub mod parquet;
pub mod spill;
pub mod stats;

/// What we know about one flow at the end of a run.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FlowRecord {
    /// Flow index (order in the workload).
    pub id: u32,
    /// Sender node id.
    pub src: u32,
    /// Receiver node id.
    pub dst: u32,
    /// UDP source port (assigned per (src, dst) pair from 10000 as HPCC-sim does).
    pub sport: u16,
    /// UDP destination port (100 background, 200 incast by HPCC convention).
    pub dport: u16,
    /// Message size, payload bytes.
    pub size_bytes: u64,
    /// Flow start, picoseconds.
    pub start_ps: u64,
    /// Flow completion time (start → sender gets the ACK of the last byte), picoseconds;
    /// `None` when the flow did not finish before the end of the run.
    pub fct_ps: Option<u64>,
    /// Ideal ("standalone") FCT as HPCC-sim computes it, picoseconds.
    pub ideal_fct_ps: u64,
    /// Data packets retransmitted by loss recovery.
    pub retx_packets: u64,
    /// Number of flow-control pauses the sender QP received (SFC/OnRamp; 0 otherwise).
    pub pauses: u32,
    /// Total time the sender QP spent paused by flow control, picoseconds.
    pub paused_ps: u64,
}

impl FlowRecord {
    /// FCT / ideal FCT, clamped to ≥ 1 as HPCC's analysis does; `None` if unfinished.
    pub fn slowdown(&self) -> Option<f64> {
        self.fct_ps
            .map(|f| (f as f64 / self.ideal_fct_ps.max(1) as f64).max(1.0))
    }
}
