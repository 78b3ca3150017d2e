//! Hosts: the RDMA NIC ([`nic`]: arbiter, per-QP pacing/window/pause, ACK generation, the
//! host halves of flow-control schemes), per-QP state ([`Flow`]) and loss recovery
//! ([`recovery`]).

pub mod arbiter;
pub mod nic;
pub mod recovery;

use std::collections::VecDeque;

use crate::link::TxPort;

/// One host NIC (one port).
#[derive(Clone, Debug)]
pub struct HostNic {
    /// Node id.
    pub node: u32,
    /// Transmit state of its only port: link, serialization, PFC pause bits.
    pub tx: TxPort,
    /// ACK/NACK (and other control) packets waiting; strict priority over data.
    pub ctrl: VecDeque<u32>,
    /// Round-robin arbiter over the flows with this host as sender that have started and not
    /// finished.
    pub arb: arbiter::Arbiter,
    /// Time of the pending wake-up event (0 = none).
    pub wake_at_ps: u64,
}

/// One flow: the sender QP at `src` and the receiver QP at `dst`. `repr(C)`, with what the NIC
/// arbiter and the ACK/data paths read on every packet first (header, then send state, then
/// receive state, then the controller), so that the first few cache lines cover a packet.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct Flow {
    /// Sender node.
    pub src: u32,
    /// Receiver node.
    pub dst: u32,
    /// UDP source port.
    pub sport: u16,
    /// UDP destination port.
    pub dport: u16,
    /// Priority group (data queue at switches).
    pub prio: u8,
    /// Wire size of the last data packet sent (HPCC pacing adjustment), bytes.
    pub last_pkt_bytes: u32,
    /// Slot of its congestion controller's state in [`crate::cc::CcSlab`] while the flow is
    /// active ([`crate::cc::NO_SLOT`] before its start and after completion). In the first
    /// cache line: the event loop reads it to prefetch the controller.
    pub cc_slot: u32,
    /// Earliest time the next packet may leave (pacing), picoseconds.
    pub next_avail_ps: u64,
    /// The QP is paused by flow control (SFC/OnRamp) until this time, picoseconds.
    pub pause_until_ps: u64,
    /// Retransmission deadline, picoseconds (0 = disarmed).
    pub rto_deadline_ps: u64,
    /// Completion time (sender got the last ACK), picoseconds; 0 = not finished.
    pub finish_ps: u64,
    /// Message size, payload bytes.
    pub size_bytes: u64,
    /// Sender reliability state.
    pub tx: recovery::SendState,
    /// Receiver reliability state.
    pub rx: recovery::RecvState,
    /// Start time, picoseconds.
    pub start_ps: u64,
    /// Pauses received.
    pub pauses: u32,
    /// Total paused time, picoseconds.
    pub paused_ps: u64,
    /// Time of the pending RTO check event (0 = none).
    pub rto_event_ps: u64,
    /// Ideal (standalone) FCT, picoseconds.
    pub ideal_fct_ps: u64,
    /// Time of the pending congestion-control timer event (0 = none).
    pub cc_timer_ps: u64,
    /// Time of the last CNP sent by the receiver for this flow (`u64::MAX` = never).
    pub last_cnp_ps: u64,
    /// Time of the last UE CNP (TCD) sent by the receiver for this flow (`u64::MAX` = never).
    pub last_ue_cnp_ps: u64,
    /// Position in the sender NIC's arbiter ([`arbiter::NO_POS`] before start and after
    /// completion).
    pub nic_pos: u32,
    /// Bandwidth-delay product of this flow's path (`base_rtt · bottleneck / 8`, HPCC-sim's
    /// per-pair BDP), bytes, saturated at `u32::MAX`; used as its controller's BDP with
    /// [`crate::config::NetConfig::window_per_pair`].
    pub pair_bdp_bytes: u32,
}

impl Flow {
    /// Finished?
    #[inline]
    pub fn finished(&self) -> bool {
        self.finish_ps != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_state_is_compact() {
        // The per-flow record every flow of a run keeps from the start: no controller state
        // (in `CcSlab` while active only). Was 704 B with the controller inline.
        let n = std::mem::size_of::<Flow>();
        assert!(n <= 320, "Flow is {n} B");
    }
}
