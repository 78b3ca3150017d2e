//! Traffic: flow-size distributions ([`cdf`]), arrival processes and traffic patterns
//! ([`traffic`]), the HPCC-sim flow-file format ([`flow_file`]), and the lazy merge of several
//! generators into one sorted flow stream ([`stream`]).

pub mod cdf;
pub mod flow_file;
pub mod shape;
pub mod stream;
pub mod trace_cmd;
pub mod traffic;

use crate::engine::packet::DPORT_BACKGROUND;

/// One flow (an RDMA message on its own QP) to be simulated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    /// Sending host (node id).
    pub src: u32,
    /// Receiving host (node id).
    pub dst: u32,
    /// Message size, payload bytes (≥ 1).
    pub size_bytes: u64,
    /// Start time, picoseconds.
    pub start_ps: u64,
    /// Priority group / egress queue index for data (HPCC-sim `pg`, normally 3).
    pub prio: u8,
    /// Destination port; HPCC convention: 100 = background traffic, 200 = incast.
    pub dport: u16,
}

impl FlowSpec {
    /// A background flow with the HPCC conventions (priority group 3, dport 100).
    pub fn background(src: u32, dst: u32, size_bytes: u64, start_ps: u64) -> FlowSpec {
        FlowSpec {
            src,
            dst,
            size_bytes,
            start_ps,
            prio: traffic::DEFAULT_PRIO,
            dport: DPORT_BACKGROUND,
        }
    }
}
