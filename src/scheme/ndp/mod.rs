//! NDP — packet trimming, Return-To-Sender and a receiver-pulled transport (Handley et al.,
//! SIGCOMM'17; `specs/ndp.md`), with the SFC paper's two improvements (`seeds/sfc.txt`
//! Appendix B.4): byte-level credits and flow-level round robin at the sender.
//!
//! Switch half ([`switch`]): every egress port has a *low* queue (full data packets) and a
//! *high* queue (trimmed headers, ACKs, NACKs, PULLs) of the same byte capacity, served 10:1
//! (packets) by the core's weighted round robin ([`crate::config::SchedulerKind::Wrr`]). A
//! data packet that does not fit the low queue trims, on a coin flip, either itself or the
//! low queue's tail to a header ([`data_arrival`]); a header that does not fit the high queue
//! is returned to its sender, once, and any other control packet is dropped
//! ([`control_arrival`]).
//!
//! Host half ([`host`]): the sender sends an initial window at line rate, then as much as the
//! receiver's credit allows ([`NdpSender`]); the receiver ACKs every full packet, NACKs every
//! header and paces PULLs at its link rate through one round-robin pull queue per host
//! ([`PullQueue`], [`NdpRecv`]).

pub mod config;
pub mod host;
pub mod sender;
pub mod switch;
#[cfg(test)]
mod tests_e2e;
pub mod wire;

pub use sender::NdpSender;

use std::collections::VecDeque;

use crate::units::MS;
use wire::{NdpHdr, NdpKind};

/// The scheme's registry id ([`crate::scheme::Scheme::ID`]; its position in the registry).
pub const ID: crate::scheme::SchemeId = crate::scheme::SchemeId(6);

/// Data queue holding NDP's header/control packets (the high queue) on every port.
pub const HIGH_QUEUE: usize = 1;
/// Data queue holding NDP's full data packets (the low queue) on every port.
pub const LOW_QUEUE: usize = 2;

/// NDP parameters (`[ndp]` in scenarios).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct NdpConfig {
    /// NDP on/off (switch trimming and the NDP transport at every host).
    pub enabled: bool,
    /// Capacity of each of a port's two queues, in full-size data packets (the byte capacity
    /// is this × the wire size of an MTU data packet; the header queue gets the same bytes
    /// unless [`Self::control_queue_bytes`] says otherwise). htsim and the NDP paper: 8.
    pub queue_pkts: u32,
    /// Byte capacity of a port's header (control) queue; 0 = the data queue's (htsim). The
    /// SFC paper's NDP comparison (App. B.4): "NDP sets the size of control packet queue at
    /// 1x BDP".
    pub control_queue_bytes: u64,
    /// Packets served from the high queue per packet of the low queue when both are backlogged
    /// (htsim: 10).
    pub high_weight: u16,
    /// Initial window, payload bytes (0 = 1 BDP: max base RTT × host line rate).
    pub iw_bytes: u64,
    /// Retransmission timeout, picoseconds (a last resort: it fires only when a flow has had
    /// no ACK, NACK, PULL or returned header for this long). Default 5 ms, htsim's
    /// `DEFAULT_RTO_MIN`; its incast driver uses 50 ms.
    pub rto_ps: u64,
    /// Byte-level credits (SFC paper): a pull grants the bytes the message still misses at the
    /// receiver (at most one MTU; none = no pull) and the pacer spaces pulls by the wire time
    /// of those bytes. Off = the original NDP: one pull = one packet, spaced by an MTU
    /// packet's wire time. Either way one pull is asked for per arrival (full or trimmed).
    pub byte_credits: bool,
    /// Flow-level round robin at the sender (SFC paper): the NIC serves flows with credit in
    /// turn. Off = the original NDP's FIFO: a flow with credit keeps the NIC until its credit
    /// or data runs out.
    pub sender_rr: bool,
    /// Pull rate as a fraction of the receiver's link rate (htsim: 1).
    pub pull_rate: f64,
    /// Wire size of every NDP control packet (header, ACK, NACK, PULL), bytes (htsim: 64).
    pub header_bytes: u32,
    /// Per-packet multipath, NDP's own path selection (the paper sprays every packet over
    /// all paths; htsim's NDP source picks a path per packet): the sender gives each data
    /// packet its own UDP source port (the flow's plus a per-packet counter), so ECMP hashes
    /// every packet of a flow independently; replies to it (ACK, NACK, a trimmed header)
    /// travel the reverse of its path. Off: a flow keeps one ECMP path, as HPCC-sim routes.
    pub spray: bool,
}

impl Default for NdpConfig {
    fn default() -> Self {
        NdpConfig {
            enabled: false,
            queue_pkts: 8,
            control_queue_bytes: 0,
            high_weight: 10,
            iw_bytes: 0,
            rto_ps: 5 * MS,
            byte_credits: true,
            sender_rr: true,
            pull_rate: 1.0,
            header_bytes: 64,
            spray: false,
        }
    }
}

impl NdpConfig {
    /// Range problems of the parameters, as (key, message).
    pub fn issues(&self, queues_per_port: usize) -> Vec<(&'static str, String)> {
        let mut v = Vec::new();
        if !self.enabled {
            return v;
        }
        if self.queue_pkts == 0 {
            v.push(("ndp.queue_pkts", "must be at least 1 packet".into()));
        }
        if self.high_weight == 0 {
            v.push(("ndp.high_weight", "must be at least 1".into()));
        }
        if self.rto_ps == 0 {
            v.push(("ndp.rto", "must be positive".into()));
        }
        if !(self.pull_rate > 0.0 && self.pull_rate <= 1.0) {
            v.push((
                "ndp.pull_rate",
                format!("{} is not in (0, 1]", self.pull_rate),
            ));
        }
        if self.header_bytes < 20 {
            v.push(("ndp.header_bytes", "must be at least 20 bytes".into()));
        }
        if self.control_queue_bytes != 0 && self.control_queue_bytes < u64::from(self.header_bytes)
        {
            v.push((
                "ndp.control_queue",
                format!(
                    "{} B holds no header of {} B (0 = the data queue's size)",
                    self.control_queue_bytes, self.header_bytes
                ),
            ));
        }
        if queues_per_port <= LOW_QUEUE {
            v.push((
                "network.queues_per_port",
                format!("NDP needs at least {} queues per port", LOW_QUEUE + 1),
            ));
        }
        v
    }
}

/// What a switch does with a full data packet arriving for a port's low queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataAction {
    /// It fits: queue it.
    Enqueue,
    /// Trim the low queue's tail to a header (it goes to the high queue) and queue the
    /// arriving packet in its place.
    TrimTail,
    /// Trim the arriving packet to a header (it goes to the high queue).
    TrimArrival,
}

/// `specs/ndp.md` §1: a data packet of `size` bytes arrives at a low queue holding `low_bytes`
/// of capacity `cap_bytes`. If it fits it is queued; otherwise `coin` (a fair coin flip)
/// picks which of the two candidates is trimmed: the tail (`true`; only if there is one) or
/// the arrival.
#[inline]
pub fn data_arrival(low_bytes: u64, size: u64, cap_bytes: u64, coin: bool) -> DataAction {
    if low_bytes + size <= cap_bytes {
        DataAction::Enqueue
    } else if coin && low_bytes > 0 {
        DataAction::TrimTail
    } else {
        DataAction::TrimArrival
    }
}

/// What a switch does with a header or control packet arriving for a port's high queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlAction {
    /// It fits: queue it.
    Enqueue,
    /// A trimmed header that was never bounced: swap source and destination and send it back.
    ReturnToSender,
    /// Drop it.
    Drop,
}

/// `specs/ndp.md` §1: a control packet of `size` bytes arrives at a high queue holding
/// `high_bytes` of capacity `cap_bytes`; `header` = it is a trimmed header, `bounced` = it was
/// already returned once.
#[inline]
pub fn control_arrival(
    high_bytes: u64,
    size: u64,
    cap_bytes: u64,
    header: bool,
    bounced: bool,
) -> ControlAction {
    if high_bytes + size <= cap_bytes {
        ControlAction::Enqueue
    } else if header && !bounced {
        ControlAction::ReturnToSender
    } else {
        ControlAction::Drop
    }
}

/// A receiving host's pull queue: per-flow round robin over the flows with pending pulls
/// (htsim's fair pull queue). The pending count of each flow lives with the flow (a slice
/// indexed by flow), so one queue costs only its ring.
#[derive(Clone, Debug, Default)]
pub struct PullQueue {
    /// Flows with at least one pending pull, in service order (each at most once).
    ring: VecDeque<u32>,
}

impl PullQueue {
    /// Queue one pull for `flow`; `pending` is the per-flow pending-pull count.
    #[inline]
    pub fn request(&mut self, flow: u32, pending: &mut [u32]) {
        let p = &mut pending[flow as usize];
        *p += 1;
        if *p == 1 {
            self.ring.push_back(flow);
        }
    }

    /// Take the next pull, round robin over flows; `None` when nothing is pending. Flows whose
    /// pulls were flushed (count 0) are skipped.
    #[inline]
    pub fn next(&mut self, pending: &mut [u32]) -> Option<u32> {
        while let Some(f) = self.ring.pop_front() {
            let p = &mut pending[f as usize];
            if *p == 0 {
                continue;
            }
            *p -= 1;
            if *p > 0 {
                self.ring.push_back(f);
            }
            return Some(f);
        }
        None
    }

    /// No flow has a pending pull (flushed flows may still sit in the ring until skipped).
    #[inline]
    pub fn is_empty(&self, pending: &[u32]) -> bool {
        self.ring.iter().all(|&f| pending[f as usize] == 0)
    }

    /// Drop every pending pull of `flow` (it completed): htsim's `release_pulls`.
    #[inline]
    pub fn flush(flow: u32, pending: &mut [u32]) {
        pending[flow as usize] = 0;
    }
}

/// The pull pacer of one receiving host: one PULL every `drain` (the wire time of the bytes
/// it pulls at the pull rate).
#[derive(Clone, Debug, Default)]
pub struct PullPacer {
    /// Flows with pending pulls.
    pub queue: PullQueue,
    /// Earliest time the next pull may leave, picoseconds.
    pub next_free_ps: u64,
    /// Time of the pending pacer event (0 = none), picoseconds.
    pub timer_ps: u64,
}

impl PullPacer {
    /// May a pull leave now (piggybacked on an ACK/NACK being sent) instead of waiting in the
    /// queue? Only if no other pull waits and a pull-time has passed since the last one.
    #[inline]
    pub fn can_send_now(&self, now_ps: u64, pending: &[u32]) -> bool {
        now_ps >= self.next_free_ps && self.queue.is_empty(pending)
    }

    /// A pull whose pulled bytes take `drain_ps` on the receiver's link left at `now_ps`.
    #[inline]
    pub fn sent(&mut self, now_ps: u64, drain_ps: u64) {
        self.next_free_ps = now_ps.max(self.next_free_ps) + drain_ps;
    }
}

/// Receiver-side NDP state of one flow.
#[derive(Clone, Copy, Debug, Default)]
pub struct NdpRecv {
    /// Cumulative credit granted to the flow, payload bytes (carried by every ACK, NACK and
    /// PULL).
    pub granted: u64,
    /// Every byte has arrived: pending pulls are flushed and no more are asked for.
    pub done: bool,
}

impl NdpRecv {
    /// Credit for one pull when the message still misses `missing_bytes` at the receiver:
    /// packet-level = one MTU (a packet, whatever is missing); byte-level = what is missing,
    /// at most one MTU (0 = nothing missing: the pull is skipped).
    #[inline]
    pub fn grant(&mut self, mtu: u64, byte_credits: bool, missing_bytes: u64) -> u64 {
        let g = if byte_credits {
            missing_bytes.min(mtu)
        } else {
            mtu
        };
        self.granted += g;
        g
    }
}

/// An ACK, NACK, PULL or returned header `n` of its flow reached sender `s`, whose sequence
/// state is `tx`: the segment's fate, then (all but a returned header) the receiver's
/// cumulative credit and cumulative ACK.
pub fn sender_on_control(
    s: &mut NdpSender,
    tx: &mut crate::host::transport::SendState,
    n: &NdpHdr,
) {
    let mtu = tx.mtu;
    match n.kind {
        NdpKind::Header => s.on_return(n.seq, n.payload, mtu),
        NdpKind::Ack => s.on_acked(n.seq, mtu),
        NdpKind::Nack => s.on_nack(n.seq, mtu),
        NdpKind::Pull => {}
    }
    if n.kind != NdpKind::Header {
        s.on_pull(n.pull_bytes);
        tx.snd_una = tx.snd_una.max(n.cum_ack.min(tx.size));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The trimming rule of `specs/ndp.md` §1 on a queue of exactly 8 packets of 1048 B
    /// (1000 B payload + 48 B HPCC framing): capacity 8 × 1048 = 8384 B.
    #[test]
    fn ninth_packet_trims_one_of_two_candidates() {
        let (size, cap) = (1048u64, 8 * 1048u64);
        // Packets 1..8 fit: 7 × 1048 + 1048 = 8384 ≤ 8384.
        for k in 0..8u64 {
            assert_eq!(data_arrival(k * size, size, cap, true), DataAction::Enqueue);
        }
        // The 9th: 8384 + 1048 > 8384 → heads trims the tail, tails the arrival.
        assert_eq!(data_arrival(cap, size, cap, true), DataAction::TrimTail);
        assert_eq!(data_arrival(cap, size, cap, false), DataAction::TrimArrival);
        // A packet larger than an empty queue can only trim itself.
        assert_eq!(data_arrival(0, cap + 1, cap, true), DataAction::TrimArrival);
    }

    /// Header queue of 8384 B holds 131 headers of 64 B (131 × 64 = 8384); the 132nd header
    /// is returned to its sender, a returned header or another control packet is dropped.
    #[test]
    fn full_header_queue_returns_headers_and_drops_the_rest() {
        let cap = 8 * 1048u64;
        assert_eq!(
            control_arrival(130 * 64, 64, cap, true, false),
            ControlAction::Enqueue
        );
        assert_eq!(
            control_arrival(131 * 64, 64, cap, true, false),
            ControlAction::ReturnToSender
        );
        assert_eq!(
            control_arrival(131 * 64, 64, cap, true, true),
            ControlAction::Drop
        );
        assert_eq!(
            control_arrival(131 * 64, 64, cap, false, false),
            ControlAction::Drop
        );
    }

    #[test]
    fn pull_queue_is_round_robin_per_flow_and_flushes() {
        let mut pending = vec![0u32; 4];
        let mut q = PullQueue::default();
        // Flow 0 asks 3 pulls, flow 2 asks 1, flow 3 asks 2.
        for f in [0, 0, 0, 2, 3, 3] {
            q.request(f, &mut pending);
        }
        let mut order = Vec::new();
        while let Some(f) = q.next(&mut pending) {
            order.push(f);
        }
        assert_eq!(order, vec![0, 2, 3, 0, 3, 0]);
        assert!(q.is_empty(&pending));
        // Flushing a flow removes its pulls; the others keep their turn.
        for f in [1, 1, 2] {
            q.request(f, &mut pending);
        }
        PullQueue::flush(1, &mut pending);
        assert!(!q.is_empty(&pending));
        assert_eq!(q.next(&mut pending), Some(2));
        assert_eq!(q.next(&mut pending), None);
    }

    #[test]
    fn pacer_piggybacks_only_when_idle() {
        let pending = vec![0u32; 2];
        let mut p = PullPacer::default();
        assert!(p.can_send_now(0, &pending));
        p.sent(0, 84_000);
        assert!(!p.can_send_now(83_999, &pending));
        assert!(p.can_send_now(84_000, &pending));
    }

    #[test]
    fn receiver_grants_packets_or_missing_bytes() {
        // Byte-level: a 2500 B message missing 2500, 500, 0 B gets 1000, 500, 0 B of credit.
        let mut r = NdpRecv::default();
        assert_eq!(r.grant(1000, true, 2500), 1000);
        assert_eq!(r.grant(1000, true, 500), 500);
        assert_eq!(r.grant(1000, true, 0), 0);
        assert_eq!(r.granted, 1500);
        // Packet-level: one MTU per pull, whatever is missing.
        let mut r = NdpRecv::default();
        assert_eq!(r.grant(1000, false, 300), 1000);
        assert_eq!(r.granted, 1000);
    }
}
