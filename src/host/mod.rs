//! Hosts: the NIC's state — per-flow description and result ([`Flow`]), the active flows' QP
//! state ([`FlowState`] in a [`FlowSlab`]), the send arbiter ([`arbiter`]) — and the
//! transports ([`transport`]: Go-Back-N, IRN, NDP). The NIC's behaviour (arbiter loop, data
//! and ACK handling, timers, the host halves of schemes) is the simulator's
//! [`crate::sim::nic`].

pub mod arbiter;
pub mod transport;

use std::collections::VecDeque;

use crate::engine::paged::PagedVec;
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

/// One flow for the whole run: its immutable description (what the workload asked for, with
/// the UDP source port and ideal FCT the simulator assigned) and its result (written at
/// completion). Everything that changes per packet lives in [`FlowState`], in a
/// [`FlowSlab`] slot, only while the flow is active. 56 B.
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
    /// Path class of the (src, dst) pair: index of its base RTT and bottleneck in the
    /// simulator's table, for the ideal FCT ([`crate::sim::Simulator::ideal_fct_ps`]).
    pub pair_class: u16,
    /// Flow-control pauses received (SFC/OnRamp).
    pub pauses: u32,
    /// Data packets retransmitted by loss recovery (copied from the send state at
    /// completion; 0 before).
    pub retx_packets: u32,
    /// Message size, payload bytes.
    pub size_bytes: u64,
    /// Start time, picoseconds.
    pub start_ps: u64,
    /// Completion time (sender got the last ACK), picoseconds; 0 = not finished.
    pub finish_ps: u64,
    /// Total paused time (flow control), picoseconds.
    pub paused_ps: u64,
}

impl Flow {
    /// The description of workload flow `f`, with its UDP source port and path class; no
    /// result yet.
    pub fn new(f: &crate::workload::FlowSpec, sport: u16, pair_class: u16) -> Flow {
        Flow {
            src: f.src,
            dst: f.dst,
            size_bytes: f.size_bytes,
            start_ps: f.start_ps,
            sport,
            dport: f.dport,
            prio: f.prio,
            pair_class,
            pauses: 0,
            retx_packets: 0,
            paused_ps: 0,
            finish_ps: 0,
        }
    }

    /// Finished?
    #[inline]
    pub fn finished(&self) -> bool {
        self.finish_ps != 0
    }
}

/// The sender QP of an active flow (started, not finished), at `src`. Lives in a
/// [`FlowSlab`] slot from the flow's start to its completion. `repr(C)`, with what the NIC
/// arbiter and the ACK path read on every packet first (header, then send state), so that the
/// first few cache lines cover a packet. The receiver QP at `dst` is the receiver's own
/// ([`RxState`] in a [`FlowSlab`]'s receiver slots): nothing at the receiver reads the
/// sender's state.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct FlowState {
    /// The flow (index in `Simulator::flows`) owning this slot: the generation check of
    /// [`FlowSlab::get_for`] (flow ids are never reused, so a packet of a finished flow
    /// whose slot went to another flow does not match).
    pub flow: u32,
    /// Sender node (copy of the description: packets are built from the slot alone).
    pub src: u32,
    /// Receiver node.
    pub dst: u32,
    /// UDP source port.
    pub sport: u16,
    /// UDP destination port.
    pub dport: u16,
    /// Priority group.
    pub prio: u8,
    /// Wire size of the last data packet sent (HPCC pacing adjustment), bytes.
    pub last_pkt_bytes: u32,
    /// Slot of its congestion controller's state in [`crate::cc::CcSlab`].
    pub cc_slot: u32,
    /// Position in the sender NIC's arbiter ([`arbiter::NO_POS`] once removed).
    pub nic_pos: u32,
    /// Host index (not node id) of the sender.
    pub host: u32,
    /// Earliest time the next packet may leave (pacing), picoseconds.
    pub next_avail_ps: u64,
    /// The QP is paused by flow control (SFC/OnRamp) until this time, picoseconds.
    pub pause_until_ps: u64,
    /// Retransmission deadline, picoseconds (0 = disarmed): [`Self::rto_start_ps`] plus the
    /// RTO the flow's in-flight data called for when it was last evaluated (IRN: RTO_low
    /// while at most 3 MTUs are in flight, RTO_high above; re-evaluated when it falls due).
    pub rto_deadline_ps: u64,
    /// When the retransmission timer was last (re)started, picoseconds: at a send with
    /// nothing outstanding, at an ACK/NACK that made progress with data still outstanding,
    /// at a timeout.
    pub rto_start_ps: u64,
    /// Message size, payload bytes.
    pub size_bytes: u64,
    /// Sender sequence state.
    pub tx: transport::SendState,
    /// The QP's transport state (Go-Back-N, IRN or NDP: the run's transport).
    pub transport: transport::QpTransport,
    /// Time of the pending RTO check event (0 = none).
    pub rto_event_ps: u64,
    /// Time of the pending congestion-control timer event (0 = none).
    pub cc_timer_ps: u64,
}

/// A flow without active state (not started, or finished).
pub const NO_FLOW_SLOT: u32 = u32::MAX;

/// The receiver QP of one flow at its receiver `dst`: what arrived (reliability state) and
/// the receiver's CNP pacing. Opened by the flow's first data packet to arrive, closed when
/// the receiver holds every byte in order and owes no CNP ([`FlowSlab::rx_open`]). The
/// receiver never reads the sender's state (as in the HPCC ns-3 simulator, whose
/// `RdmaRxQueuePair` is its own object): what it does depends on the packets that reach it
/// only.
///
/// Laid out for the data path: a slot is two cache lines, the first holding what every data
/// packet reads and writes (the message size and the reliability state), the second the
/// addressing and CNP pacing read only for CNPs and at the close.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct RxState {
    /// Message size, payload bytes: the receiver is complete once `rx.expected` reaches it.
    pub size_bytes: u64,
    /// Receiver reliability state.
    pub rx: transport::RecvState,
    /// The flow owning this slot ([`NO_FLOW_SLOT`] when free).
    pub flow: u32,
    /// The flow's sender node (the CNPs' destination), from its data packets.
    pub src: u32,
    /// The receiver's node.
    pub dst: u32,
    /// The flow's UDP source port.
    pub sport: u16,
    /// The flow's UDP destination port.
    pub dport: u16,
    /// The flow's record went (its sender finished in a run streaming its results) while
    /// this receiver was still open: its map entry goes when it closes.
    pub retired: bool,
    /// A CNP is owed at the end of the current interval ([`crate::engine::Event::CnpDue`]):
    /// bit 0 the CE one, bit 1 the marked one.
    pub cnp_pending: u8,
    /// Time of the last CNP sent by the receiver for this flow (`u64::MAX` = never).
    pub last_cnp_ps: u64,
    /// Time of the last marked CNP (echoing scheme marks, [`crate::registry::ECHOED_MARKS`])
    /// sent by the receiver for this flow (`u64::MAX` = never).
    pub last_marked_cnp_ps: u64,
}

impl RxState {
    /// A fresh receiver for flow `flow` of `size_bytes` bytes, addressed as its data packet
    /// `pkt` is.
    pub fn new(flow: u32, size_bytes: u64, pkt: &crate::engine::packet::Packet) -> Self {
        RxState {
            flow,
            src: pkt.src,
            dst: pkt.dst,
            sport: pkt.sport,
            dport: pkt.dport,
            retired: false,
            size_bytes,
            rx: transport::RecvState::new(),
            last_cnp_ps: u64::MAX,
            last_marked_cnp_ps: u64::MAX,
            cnp_pending: 0,
        }
    }

    /// The receiver holds every byte in order and owes no CNP: its state may go.
    #[inline]
    pub fn closable(&self) -> bool {
        self.rx.expected >= self.size_bytes && self.cnp_pending == 0
    }
}

/// Where a flow's receiver stands in a [`FlowSlab`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxSlot {
    /// No data packet of the flow has arrived yet.
    Unopened,
    /// Open, in this slot.
    Open(u32),
    /// Closed: the receiver holds every byte (a late duplicate gets the cumulative ACK of the
    /// whole message).
    Closed,
}

/// Receiver half of a slot-map entry of a closed receiver.
const RX_CLOSED: u32 = u32::MAX - 1;

/// A flow's entry in the slot map: its sender's slot and its receiver's ([`NO_FLOW_SLOT`]
/// when there is none; [`RX_CLOSED`] once the receiver closed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct QpSlots {
    /// Sender slot.
    tx: u32,
    /// Receiver slot.
    rx: u32,
}

/// The entry of a flow that has neither.
const NO_QP: QpSlots = QpSlots {
    tx: NO_FLOW_SLOT,
    rx: NO_FLOW_SLOT,
};

/// The QP state of the flows in progress, both ends: a sender [`FlowState`] slot each, taken
/// at flow start and recycled (LIFO, deterministic) at completion, and a receiver
/// [`RxState`] slot each, taken when the flow's first data packet reaches its receiver and
/// recycled when the receiver is complete, like [`crate::cc::CcSlab`], so this memory follows
/// the number of flows in progress, not the number in the run.
///
/// The two ends are separate state (the receiver never reads its sender's: a run split over
/// threads keeps them in different partitions), but one map finds both: a flow id's entry
/// holds its sender slot and its receiver slot side by side, 8 B per flow, so that a flow's
/// data packets at the receiver and its ACKs at the sender look up the same cache line. The
/// map is in pages that a run streaming its results frees as their flows retire
/// ([`Self::retire`]; a retired entry reads as no sender and a closed receiver: the flow
/// finished, so its receiver held every byte).
#[derive(Clone, Debug, Default)]
pub struct FlowSlab {
    slots: Vec<FlowState>,
    free: Vec<u32>,
    rx_slots: Vec<RxState>,
    rx_free: Vec<u32>,
    slot_of: PagedVec<QpSlots>,
    /// Most sender slots ever in use (kept when [`Self::release_memory`] drops them).
    peak: usize,
    /// Most receiver slots ever in use.
    rx_peak: usize,
}

impl FlowSlab {
    /// A slab for a run of `flows` flows, none in progress.
    pub fn new(flows: usize) -> Self {
        let mut slot_of = PagedVec::new();
        slot_of.resize(flows, NO_QP);
        FlowSlab {
            slot_of,
            ..Default::default()
        }
    }

    /// The map entry of flow `f`, created (with the entries before it) if the map does not
    /// reach it yet: flows taken from a stream as the run goes (`Simulator::with_stream`), or
    /// a run resumed after `release_memory`.
    fn entry_mut(&mut self, f: u32) -> &mut QpSlots {
        if f as usize >= self.slot_of.len() {
            self.slot_of.resize(f as usize + 1, NO_QP);
        }
        &mut self.slot_of[f as usize]
    }

    /// Make `st` the sender state of flow `st.flow` (which must be inactive); returns the
    /// slot. A recycled slot's buffer (the IRN SACK list) is reused.
    pub fn alloc(&mut self, st: FlowState) -> u32 {
        let f = st.flow;
        debug_assert_eq!(self.entry_mut(f).tx, NO_FLOW_SLOT);
        let i = match self.free.pop() {
            Some(i) => {
                let old = &mut self.slots[i as usize];
                let mut prev =
                    std::mem::replace(&mut old.transport, transport::QpTransport::Scheme);
                *old = st;
                old.transport.reuse_buffers(&mut prev);
                i
            }
            None => {
                self.slots.push(st);
                self.peak = self.slots.len();
                (self.slots.len() - 1) as u32
            }
        };
        self.entry_mut(f).tx = i;
        i
    }

    /// Size the flow → slot map for `flows` flows (a streamed run whose count is known).
    pub fn reserve_flows(&mut self, flows: usize) {
        self.slot_of
            .reserve(flows.saturating_sub(self.slot_of.len()));
    }

    /// Flow `f` (finished, never to start, or left unfinished by a stopped run) is done with
    /// for good: its slot-map entry may go, with its page once every flow of the page is
    /// retired — at once if its receiver is closed (the usual case: it held every byte before
    /// the last ACK left) or never opened, else when it closes (it owes a CNP; a receiver left
    /// open by a stopped run keeps its page). A later packet of `f` finds no sender slot and a
    /// closed receiver, as for any finished flow.
    pub fn retire(&mut self, f: u32) {
        if let RxSlot::Open(i) = self.rx_lookup(f) {
            self.rx_slots[i as usize].retired = true;
            return;
        }
        if (f as usize) >= self.slot_of.len() {
            // Never started: the map has no entry for it yet.
            self.slot_of.resize(f as usize + 1, NO_QP);
        }
        self.slot_of.retire(f as usize);
    }

    /// Pages of the flow → slot map in memory (4,096 flows each).
    pub fn map_pages(&self) -> usize {
        self.slot_of.resident_pages()
    }

    /// At the end of a run: free the sender slots if no flow is active, the receiver slots
    /// if no receiver is open (a receiver owing a CNP when a stopped run ends stays), and the
    /// slot map (8 B per flow) if both went, keeping the peaks. (A flow started afterwards
    /// grows the map again.)
    pub fn release_memory(&mut self) {
        let (senders, receivers) = (self.active() == 0, self.rx_open_now() == 0);
        if senders {
            self.slots = Vec::new();
            self.free = Vec::new();
        }
        if receivers {
            self.rx_slots = Vec::new();
            self.rx_free = Vec::new();
        }
        if senders && receivers {
            self.slot_of = PagedVec::new();
        }
    }

    /// Release flow `f`'s sender slot (it must be active). Its state stays readable through
    /// no accessor: [`Self::get_for`] no longer matches.
    pub fn release(&mut self, f: u32) {
        let i = std::mem::replace(&mut self.slot_of[f as usize].tx, NO_FLOW_SLOT);
        debug_assert_ne!(i, NO_FLOW_SLOT);
        self.slots[i as usize].flow = NO_FLOW_SLOT;
        self.free.push(i);
    }

    /// Sender slot of flow `f` ([`NO_FLOW_SLOT`] if inactive or out of range).
    #[inline(always)]
    pub fn slot(&self, f: u32) -> u32 {
        self.slot_of.get(f as usize).map_or(NO_FLOW_SLOT, |e| e.tx)
    }

    /// Sender state of flow `f` if it is active.
    #[inline(always)]
    pub fn get_for(&self, f: u32) -> Option<&FlowState> {
        let s = self.slots.get(self.slot(f) as usize)?;
        (s.flow == f).then_some(s)
    }

    /// Sender state of flow `f` if it is active, mutably.
    #[inline]
    pub fn get_for_mut(&mut self, f: u32) -> Option<&mut FlowState> {
        let i = self.slot(f);
        let s = self.slots.get_mut(i as usize)?;
        (s.flow == f).then_some(s)
    }

    /// Sender state in slot `i` (which must be in use).
    #[inline]
    pub fn at(&self, i: u32) -> &FlowState {
        &self.slots[i as usize]
    }

    /// Sender state in slot `i`, mutably.
    #[inline]
    pub fn at_mut(&mut self, i: u32) -> &mut FlowState {
        &mut self.slots[i as usize]
    }

    /// Prefetch hint for the first four cache lines of flow `f`'s sender slot (no effect on
    /// state; any `f`). Reads the slot-map entry.
    #[inline(always)]
    pub fn prefetch(&self, f: u32) {
        if let Some(s) = self.slots.get(self.slot(f) as usize) {
            let line = s as *const FlowState as *const u8;
            for k in 0..4 {
                crate::engine::prefetch(line.wrapping_add(64 * k));
            }
        }
    }

    /// Prefetch hint for flow `f`'s slot-map entry (no effect on state; any `f`).
    #[inline(always)]
    pub fn prefetch_map(&self, f: u32) {
        if let Some(s) = self.slot_of.get(f as usize) {
            crate::engine::prefetch(s as *const QpSlots as *const u8);
        }
    }

    /// Most flows active at once (sender slots ever created).
    pub fn peak(&self) -> usize {
        self.peak
    }

    /// Flows active now (sender slots in use).
    pub fn active(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Where flow `f`'s receiver stands.
    #[inline(always)]
    pub fn rx_lookup(&self, f: u32) -> RxSlot {
        match self.slot_of.get(f as usize) {
            None if (f as usize) < self.slot_of.len() => RxSlot::Closed,
            None => RxSlot::Unopened,
            Some(e) => match e.rx {
                NO_FLOW_SLOT => RxSlot::Unopened,
                RX_CLOSED => RxSlot::Closed,
                i => RxSlot::Open(i),
            },
        }
    }

    /// Open flow `f`'s receiver (it must be unopened) for a `size_bytes` message whose data
    /// packet `pkt` just arrived; returns the slot. A recycled slot's out-of-order list is
    /// reused.
    pub fn rx_open(&mut self, f: u32, size_bytes: u64, pkt: &crate::engine::packet::Packet) -> u32 {
        debug_assert_eq!(self.entry_mut(f).rx, NO_FLOW_SLOT);
        let st = RxState::new(f, size_bytes, pkt);
        let i = match self.rx_free.pop() {
            Some(i) => {
                let old = &mut self.rx_slots[i as usize];
                let mut ooo = std::mem::take(&mut old.rx.ooo);
                *old = st;
                ooo.clear();
                old.rx.ooo = ooo;
                i
            }
            None => {
                self.rx_slots.push(st);
                self.rx_peak = self.rx_peak.max(self.rx_slots.len());
                (self.rx_slots.len() - 1) as u32
            }
        };
        self.entry_mut(f).rx = i;
        i
    }

    /// Close flow `f`'s receiver (open in slot `i`): the slot is recycled, later packets of
    /// `f` find it closed.
    pub fn rx_close(&mut self, f: u32, i: u32) {
        debug_assert_eq!(self.slot_of[f as usize].rx, i);
        self.slot_of[f as usize].rx = RX_CLOSED;
        let st = &mut self.rx_slots[i as usize];
        st.flow = NO_FLOW_SLOT;
        let retired = std::mem::take(&mut st.retired);
        self.rx_free.push(i);
        if retired {
            self.slot_of.retire(f as usize);
        }
    }

    /// Make flow `f`'s receiver here what it is in `other` (the slab of another partition of
    /// a run split over threads, which owns `f`'s receiver): open with a copy of its state,
    /// or closed, or untouched if it never opened. The sender half of the entry is left.
    pub fn rx_copy_entry(&mut self, f: u32, other: &FlowSlab) {
        match other.rx_lookup(f) {
            RxSlot::Unopened => {}
            RxSlot::Closed => {
                if let RxSlot::Open(i) = self.rx_lookup(f) {
                    self.rx_close(f, i);
                }
                if (f as usize) >= self.slot_of.len() {
                    self.slot_of.resize(f as usize + 1, NO_QP);
                }
                // (A retired entry already reads as closed.)
                if let Some(e) = self.slot_of.get_mut(f as usize) {
                    e.rx = RX_CLOSED;
                }
            }
            RxSlot::Open(j) => {
                let src = other.rx_at(j);
                let i = match self.rx_lookup(f) {
                    RxSlot::Open(i) => i,
                    _ => {
                        self.entry_mut(f).rx = NO_FLOW_SLOT;
                        let pkt = crate::engine::packet::Packet {
                            src: src.src,
                            dst: src.dst,
                            sport: src.sport,
                            dport: src.dport,
                            ..Default::default()
                        };
                        self.rx_open(f, src.size_bytes, &pkt)
                    }
                };
                self.rx_slots[i as usize] = src.clone();
            }
        }
    }

    /// Receiver state in slot `i` (which must be open).
    #[inline]
    pub fn rx_at(&self, i: u32) -> &RxState {
        &self.rx_slots[i as usize]
    }

    /// Receiver state in slot `i`, mutably.
    #[inline]
    pub fn rx_at_mut(&mut self, i: u32) -> &mut RxState {
        &mut self.rx_slots[i as usize]
    }

    /// Flow `f`'s receiver state if it is open.
    #[inline]
    pub fn rx_get_for(&self, f: u32) -> Option<&RxState> {
        match self.rx_lookup(f) {
            RxSlot::Open(i) => Some(self.rx_at(i)),
            _ => None,
        }
    }

    /// Prefetch hint for flow `f`'s receiver slot (no effect on state; any `f`). Reads the
    /// slot-map entry.
    #[inline(always)]
    pub fn rx_prefetch(&self, f: u32) {
        if let RxSlot::Open(i) = self.rx_lookup(f)
            && let Some(s) = self.rx_slots.get(i as usize)
        {
            let line = s as *const RxState as *const u8;
            crate::engine::prefetch(line);
            crate::engine::prefetch(line.wrapping_add(64));
        }
    }

    /// Most receivers open at once.
    pub fn rx_peak(&self) -> usize {
        self.rx_peak
    }

    /// Receivers open now.
    pub fn rx_open_now(&self) -> usize {
        self.rx_slots.len() - self.rx_free.len()
    }
}

/// The receiver's CNP pacing times of recently closed receivers (CNP mode only). A late data
/// packet (a duplicate still in flight when the receiver got its last byte) may carry a
/// mark; whether it triggers a CNP depends on the last CNP time, which must outlive the
/// receiver's released state by one CNP interval. Kept only while it still suppresses a CNP
/// (a time `t` with `t + interval > now`); an absent entry means "due", like never. Pruned
/// when it doubles, so it holds about the flows finished within one interval.
#[derive(Clone, Debug, Default)]
pub struct LateCnp {
    /// Flow → (last CNP time, last marked CNP time), picoseconds (`u64::MAX` = none).
    map: std::collections::HashMap<u32, (u64, u64)>,
    /// CNP interval, picoseconds (0 = not in CNP mode: nothing kept).
    interval_ps: u64,
    /// Size at which to prune next.
    prune_at: usize,
}

impl LateCnp {
    /// A table for CNP interval `interval_ps` (0: CNP mode off, the table stays empty).
    pub fn new(interval_ps: u64) -> Self {
        LateCnp {
            map: Default::default(),
            interval_ps,
            prune_at: 1024,
        }
    }

    /// Does time `t` still suppress a CNP at `now`?
    #[inline]
    fn live(&self, t: u64, now: u64) -> bool {
        t != u64::MAX && t.saturating_add(self.interval_ps) > now
    }

    /// Flow `f`'s receiver closed at `now` with CNP times `(cnp, marked)`.
    pub fn remember(&mut self, f: u32, (cnp, marked): (u64, u64), now: u64) {
        if self.interval_ps == 0 || !(self.live(cnp, now) || self.live(marked, now)) {
            return;
        }
        self.map.insert(f, (cnp, marked));
        if self.map.len() >= self.prune_at {
            let iv = self.interval_ps;
            let live = |t: u64| t != u64::MAX && t.saturating_add(iv) > now;
            self.map.retain(|_, &mut (a, b)| live(a) || live(b));
            self.prune_at = (2 * self.map.len()).max(1024);
        }
    }

    /// The last CNP time (`marked`: marked CNP) of finished flow `f`, to read and update.
    pub fn get_mut(&mut self, f: u32, marked: bool) -> &mut u64 {
        let e = self.map.entry(f).or_insert((u64::MAX, u64::MAX));
        if marked { &mut e.1 } else { &mut e.0 }
    }

    /// Entries held now.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// No entries?
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_record_is_compact() {
        // The per-flow record every flow of a run keeps (description + result): was 320 B
        // with the send/receive state inline, 704 B with the controller too.
        let n = std::mem::size_of::<Flow>();
        assert!(n <= 56, "Flow is {n} B");
    }

    #[test]
    fn a_receiver_slot_is_two_lines_with_the_data_path_in_the_first() {
        use std::mem::{offset_of, size_of};
        assert_eq!(size_of::<RxState>(), 128);
        assert_eq!(offset_of!(RxState, size_bytes), 0);
        let rx_end = offset_of!(RxState, rx) + size_of::<transport::RecvState>();
        assert!(rx_end <= 64, "the reliability state ends at byte {rx_end}");
    }

    #[test]
    fn late_cnp_times_outlive_the_flow_by_one_interval() {
        let mut t = LateCnp::new(10);
        // A CNP at 5 still suppresses at 8 (until 15): kept.
        t.remember(1, (5, u64::MAX), 8);
        assert_eq!(*t.get_mut(1, false), 5);
        assert_eq!(*t.get_mut(1, true), u64::MAX);
        // One at 0 no longer suppresses at 10, none at all: nothing kept, reads as "never".
        t.remember(2, (0, u64::MAX), 10);
        t.remember(3, (u64::MAX, u64::MAX), 10);
        assert_eq!(t.len(), 1);
        assert_eq!(*t.get_mut(2, false), u64::MAX);
        // Off (not CNP mode): never kept.
        let mut off = LateCnp::new(0);
        off.remember(1, (5, 5), 6);
        assert!(off.is_empty());
        // Pruned as it grows: expired entries go, live ones stay.
        let mut p = LateCnp::new(10);
        for f in 0..5000u32 {
            p.remember(f, (f as u64 * 100, u64::MAX), f as u64 * 100 + 1);
        }
        assert!(p.len() < 2048, "{} entries", p.len());
        assert_eq!(*p.get_mut(4999, false), 499_900);
    }

    #[test]
    fn slab_recycles_and_checks_the_owner() {
        let st = |flow| FlowState {
            flow,
            src: 0,
            dst: 1,
            sport: 10000,
            dport: 100,
            prio: 3,
            last_pkt_bytes: 0,
            cc_slot: 0,
            nic_pos: 0,
            host: 0,
            next_avail_ps: 0,
            pause_until_ps: 0,
            rto_deadline_ps: 0,
            rto_start_ps: 0,
            size_bytes: 1000,
            tx: transport::SendState::new(1000, 1000),
            transport: transport::QpTransport::Gbn(transport::gbn::Gbn),
            rto_event_ps: 0,
            cc_timer_ps: 0,
        };
        let mut s = FlowSlab::new(3);
        let a = s.alloc(st(0));
        assert_eq!(s.get_for(0).map(|x| x.flow), Some(0));
        s.release(0);
        assert!(s.get_for(0).is_none());
        // Flow 1 takes the recycled slot; flow 0 (finished) must not see it.
        let b = s.alloc(st(1));
        assert_eq!(a, b);
        assert!(s.get_for(0).is_none() && s.get_for_mut(0).is_none());
        assert_eq!(s.get_for(1).map(|x| x.flow), Some(1));
        assert_eq!((s.peak(), s.active()), (1, 1));
        assert!(s.get_for(7).is_none());
    }
}
