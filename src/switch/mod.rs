//! Switch model: egress ports with N queues each, a strict-priority control class (queue 0)
//! and round-robin/DRR among data queues, per-queue pause bits, and the shared-buffer [`mmu`].
//!
//! The forwarding path (the simulator's [`crate::sim::forward`]) is a short sequence of stages; flow-control schemes
//! (SFC, PFC, ECN, …) plug in at its hook points through [`crate::scheme`], without touching
//! it: control-packet receipt, queue selection, ingress, admission, enqueue, dequeue,
//! departure and timers.

pub mod mmu;

use std::collections::VecDeque;

use crate::config::SchedulerKind;
use crate::link::{PortLink, TxPort};

/// One FIFO queue of packet slots with its byte count.
#[derive(Clone, Debug, Default)]
pub struct PktQueue {
    /// Packet slots, head first.
    pub pkts: VecDeque<u32>,
    /// Bytes queued.
    pub bytes: u64,
    /// End of the latest OFF (paused) period of this queue's priority, picoseconds (0 = never
    /// paused): written by PFC when the pause is lifted (RESUME or expiry) or by CBFC when a
    /// VL blocked for credits gets room again, read by TCD.
    pub off_end_ps: u64,
}

/// One switch egress port. `repr(C)` with the fields every packet touches (transmit state,
/// enqueue, scheduler, dequeue) in the first two cache lines, so that prefetching them covers
/// a hop.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct EgressPort {
    /// Transmit state: link, serialization, pause bits (shared with host NICs).
    pub tx: TxPort,
    /// Bytes queued over all queues.
    pub bytes: u64,
    /// Bit q set = queue q holds at least one packet.
    pub nonempty: u64,
    /// Strict-priority queues, served (lowest index first) before the round robin / DRR of
    /// the others: bit 0, the control class, always; a scheme may add data queues (BFC's
    /// first-packet queue).
    pub strict: u64,
    /// Bit q set = a scheme holds data queue q back (BFC: its head packet's flow is paused
    /// by the downstream device). Honoured by the scheduler like a PFC pause bit, but kept
    /// apart from [`TxPort::paused_mask`] so that PFC and the scheme never clear each other's.
    pub held: u64,
    /// Queues; index 0 is the strict-priority control class.
    pub queues: Vec<PktQueue>,
    /// Index in the queue monitor (`u32::MAX` = not monitored).
    pub mon: u32,
    /// The peer is a host (this is a server-facing port of a ToR).
    pub host_facing: bool,
    /// Round-robin pointer (next data queue to consider).
    pub rr: usize,
    /// DRR deficits, bytes (DRR only).
    pub deficit: Vec<i64>,
    /// Weighted round robin: packets a queue may send per turn (WRR only; empty = 1 each).
    pub weights: Vec<u16>,
    /// Weighted round robin: packets the queue at the round-robin pointer sent this turn.
    pub wrr_used: u16,
}

impl EgressPort {
    /// New idle port with `nq` queues.
    pub fn new(link: PortLink, nq: usize, host_facing: bool) -> Self {
        EgressPort {
            tx: TxPort::new(link),
            queues: vec![PktQueue::default(); nq],
            rr: 1,
            deficit: vec![0; nq],
            weights: Vec::new(),
            wrr_used: 0,
            bytes: 0,
            nonempty: 0,
            strict: 1,
            held: 0,
            host_facing,
            mon: u32::MAX,
        }
    }

    /// Append packet slot `p` of `size` bytes to queue `q`.
    #[inline]
    pub fn enqueue(&mut self, q: usize, p: u32, size: u64) {
        let qq = &mut self.queues[q];
        qq.pkts.push_back(p);
        qq.bytes += size;
        self.bytes += size;
        self.nonempty |= 1 << q;
    }

    /// The queue the scheduler will most likely serve next (round robin; DRR may differ),
    /// without changing any state: for prefetching.
    #[inline]
    pub fn next_queue_hint(&self) -> Option<usize> {
        let top = self.nonempty & self.strict & !self.tx.paused_mask;
        if top != 0 {
            return Some(top.trailing_zeros() as usize);
        }
        let ready = self.ready();
        (ready != 0).then(|| self.rr_pick(ready))
    }

    /// Non-empty data queues the round robin / DRR may serve: not strict, not paused, not
    /// held.
    #[inline(always)]
    fn ready(&self) -> u64 {
        self.nonempty & !(self.tx.paused_mask | self.held | self.strict)
    }

    /// Round robin over the data queues in `ready` (non-zero bitmask): the first at or after
    /// the round-robin pointer, wrapping.
    #[inline]
    fn rr_pick(&self, ready: u64) -> usize {
        let at_or_after = ready & (!0u64).checked_shl(self.rr as u32).unwrap_or(0);
        if at_or_after != 0 {
            at_or_after.trailing_zeros() as usize
        } else {
            ready.trailing_zeros() as usize
        }
    }

    /// Packet slot at the head of queue `q`, if any.
    #[inline]
    pub fn head(&self, q: usize) -> Option<u32> {
        self.queues.get(q).and_then(|qq| qq.pkts.front().copied())
    }

    /// Remove the head of queue `q`, whose size is `size` bytes.
    #[inline]
    pub fn dequeue(&mut self, q: usize, size: impl Fn(u32) -> u64) -> Option<(u32, u64)> {
        let p = self.queues[q].pkts.pop_front()?;
        Some((p, self.account_removed(q, size(p))))
    }

    /// Byte and non-empty bookkeeping after a `s`-byte packet left queue `q`; returns `s`.
    #[inline(always)]
    fn account_removed(&mut self, q: usize, s: u64) -> u64 {
        let qq = &mut self.queues[q];
        qq.bytes -= s;
        self.bytes -= s;
        if qq.pkts.is_empty() {
            self.nonempty &= !(1 << q);
        }
        s
    }

    /// Remove the tail of queue `q` (the most recently queued packet), whose size is given by
    /// `size`, bytes: for a scheme that takes a queued packet back (NDP trims the tail).
    #[inline]
    pub fn remove_tail(&mut self, q: usize, size: impl Fn(u32) -> u64) -> Option<(u32, u64)> {
        let p = self.queues[q].pkts.pop_back()?;
        Some((p, self.account_removed(q, size(p))))
    }

    /// Would [`Self::select`] serve queue `q` if a packet were queued there and every other
    /// queue were empty (the caller checks that they are)? If so, advances the scheduler
    /// state exactly as that `select` would and returns true; otherwise changes nothing. DRR
    /// reads the head packet's size from the queue, so it always answers false (the packet
    /// takes the ordinary path).
    #[inline(always)]
    pub fn select_alone(&mut self, q: usize, sched: SchedulerKind) -> bool {
        if q >= 64 {
            return false;
        }
        match sched {
            SchedulerKind::Drr { .. } => return false,
            SchedulerKind::RoundRobin => {
                // `select` with `nonempty = 1 << q`, spelled out.
                let bit = 1u64 << q;
                if bit & self.strict & !self.tx.paused_mask != 0 {
                    return true;
                }
                if bit & !(self.tx.paused_mask | self.held | self.strict) == 0 {
                    return false;
                }
                self.rr = next_data_queue(q, self.queues.len());
                return true;
            }
            SchedulerKind::Wrr => {}
        }
        debug_assert_eq!(self.nonempty, 0, "other queues hold packets");
        self.nonempty = 1 << q;
        // Round robin and WRR never ask for a size.
        let picked = self.select(sched, |_| 0);
        self.nonempty = 0;
        debug_assert!(picked.is_none() || picked == Some(q));
        picked.is_some()
    }

    /// Pick the queue to serve next: the first non-empty strict-priority queue (queue 0, the
    /// control class, and any a scheme added), else round robin (or DRR) over the non-empty
    /// data queues that are neither paused nor held. `head_size` gives the head packet's size
    /// (DRR).
    #[inline]
    pub fn select(
        &mut self,
        sched: SchedulerKind,
        head_size: impl Fn(u32) -> u32,
    ) -> Option<usize> {
        let top = self.nonempty & self.strict & !self.tx.paused_mask;
        if top != 0 {
            return Some(top.trailing_zeros() as usize);
        }
        let n = self.queues.len();
        let ready = self.ready();
        if ready == 0 {
            return None;
        }
        match sched {
            SchedulerKind::RoundRobin => {
                let q = self.rr_pick(ready);
                self.rr = next_data_queue(q, n);
                Some(q)
            }
            SchedulerKind::Wrr => {
                // Weighted round robin in packets: the queue at the pointer keeps the turn for
                // `weights[q]` packets while it has some, then the turn passes on.
                let cur = self.rr;
                let w = self.weights.get(cur).copied().unwrap_or(1);
                if ready & (1 << cur) != 0 && self.wrr_used < w {
                    self.wrr_used += 1;
                    return Some(cur);
                }
                self.rr = next_data_queue(cur, n);
                let q = self.rr_pick(ready);
                self.rr = q;
                self.wrr_used = 1;
                Some(q)
            }
            SchedulerKind::Drr { quantum_bytes } => {
                // Classic DRR: `rr` is the queue holding the turn. It is served while its
                // deficit covers its head packet; otherwise the turn passes to the next ready
                // queue (wrapping, possibly back to itself), which gets one quantum. A queue
                // found empty when its turn ends loses its deficit; a paused or held one keeps
                // it. Each pass adds a quantum to a ready queue, so the loop ends.
                loop {
                    let q = self.rr;
                    if ready & (1u64 << q) != 0 {
                        let sz = head_size(self.queues[q].pkts[0]) as i64;
                        if self.deficit[q] >= sz {
                            self.deficit[q] -= sz;
                            return Some(q);
                        }
                    } else if self.nonempty & (1u64 << q) == 0 {
                        self.deficit[q] = 0;
                    }
                    let after = ready & (!0u64).checked_shl(q as u32 + 1).unwrap_or(0);
                    let next = if after != 0 { after } else { ready }.trailing_zeros() as usize;
                    self.rr = next;
                    self.deficit[next] += quantum_bytes as i64;
                }
            }
        }
    }
}

/// The data queue after `q` (1 ≤ q < n) in round-robin order over 1..n, wrapping to 1
/// (`1 + q % (n − 1)`, without a division on the per-packet path).
#[inline(always)]
fn next_data_queue(q: usize, n: usize) -> usize {
    if q + 1 >= n { 1 } else { q + 1 }
}

/// Bit flags naming the hooks a switch-scheme instance implements, so the core skips the
/// others without a call (see [`crate::scheme::SwitchHooks::hooks`]).
pub mod hook {
    /// [`crate::scheme::SwitchHooks::select_queue`].
    pub const SELECT_QUEUE: u16 = 1 << 0;
    /// [`crate::scheme::SwitchHooks::on_ingress`].
    pub const INGRESS: u16 = 1 << 1;
    /// [`crate::scheme::SwitchHooks::admit`].
    pub const ADMIT: u16 = 1 << 2;
    /// [`crate::scheme::SwitchHooks::on_admission_failure`].
    pub const ADMISSION_FAILURE: u16 = 1 << 3;
    /// [`crate::scheme::SwitchHooks::on_enqueue`].
    pub const ENQUEUE: u16 = 1 << 4;
    /// [`crate::scheme::SwitchHooks::on_dequeue`].
    pub const DEQUEUE: u16 = 1 << 5;
    /// [`crate::scheme::SwitchHooks::on_departure`].
    pub const DEPARTURE: u16 = 1 << 6;

    /// Number of per-packet hook flags (size of a per-hook table).
    pub const COUNT: usize = 8;
    const _: () = assert!(DEPARTURE.trailing_zeros() < COUNT as u32);

    /// Index of hook `flag` (a single bit) in a per-hook table; 0 for no hook.
    #[inline(always)]
    pub const fn slot(flag: u16) -> usize {
        if flag == 0 {
            0
        } else {
            flag.trailing_zeros() as usize
        }
    }
}

/// A switch; `S` holds the switch halves of the schemes running on it (the scheme registry's
/// `SwitchSchemes`, [`crate::registry::Switch`]).
///
/// `repr(C)`: what every packet reads (ports, ECMP salt, node id, hook sets) fits in the first
/// cache line, then the buffer accounting, then the schemes.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct Switch<S> {
    /// Egress ports (port numbers as in the topology).
    pub ports: Vec<EgressPort>,
    /// Salt of this switch's ECMP hash.
    pub ecmp_seed: u64,
    /// Node id.
    pub node: u32,
    /// Union of the schemes' per-packet hook flags ([`hook`]).
    pub hooks: u16,
    /// Tier: 1 = ToR, 2 = aggregation/spine, 3 = core.
    pub tier: u8,
    /// For each hook flag bit `k` ([`hook`]), the set of scheme ids (bit =
    /// [`crate::scheme::SchemeId`]) here that implement it: a stage calls exactly those, in
    /// registry order, without touching the others.
    pub by_hook: [u16; hook::COUNT],
    /// Ids of the schemes here that have per-packet hooks (the union of `by_hook`): what the
    /// event loop prefetches.
    pub hooked: u16,
    /// Shared buffer.
    pub mmu: mmu::Mmu,
    /// Random stream of this switch (ECN marking).
    pub rng: crate::rng::Rng,
    /// Switch halves of the schemes running here (a field per registered scheme).
    pub schemes: S,
}

const _: () = assert!(std::mem::offset_of!(Switch<()>, hooked) + 2 <= 64);

/// Most schemes one switch can run at once (the registry is smaller).
pub const MAX_SCHEMES_PER_SWITCH: usize = 16;

/// An up 100 G, 1 µs link to port 0 of node 1 (unit tests).
#[cfg(test)]
pub(crate) fn test_link() -> PortLink {
    PortLink {
        peer: 1,
        peer_port: 0,
        state: crate::link::LinkState::Up,
        rate_bps: 100_000_000_000,
        delay_ps: 1_000_000,
        error_rate: 0.0,
        tx_bytes: 0,
    }
}

/// An idle egress port with `nq` queues on [`test_link`] (unit tests).
#[cfg(test)]
pub(crate) fn test_port(nq: usize) -> EgressPort {
    EgressPort::new(test_link(), nq, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `select_alone` (the idle-port shortcut) answers, and leaves the scheduler in, exactly
    /// what queueing the packet in an otherwise empty port and calling `select` does, for
    /// round robin and WRR over random pause / hold / strict / pointer states; DRR never
    /// takes the shortcut.
    #[test]
    fn select_alone_is_select_on_an_empty_port() {
        let link = test_link();
        let mut rng = crate::rng::Rng::new(11);
        for sched in [SchedulerKind::RoundRobin, SchedulerKind::Wrr] {
            for i in 0..5_000 {
                let mut ep = EgressPort::new(link.clone(), 8, false);
                ep.tx.paused_mask = rng.below(256) & !1;
                ep.held = rng.below(256) & !1 & (rng.below(2) * 0xff);
                ep.strict = 1 | if i % 3 == 0 { 2 } else { 0 };
                ep.rr = 1 + rng.below(7) as usize;
                ep.weights = if i % 2 == 0 {
                    vec![1, 2, 3, 1, 2, 3, 1, 2]
                } else {
                    vec![]
                };
                ep.wrr_used = rng.below(3) as u16;
                let q = rng.below(8) as usize;
                let mut reference = ep.clone();
                reference.enqueue(q, 7, 1000);
                let want = reference.select(sched, |_| 1000);
                let got = ep.select_alone(q, sched);
                assert_eq!(got, want.is_some(), "{sched:?} q {q}");
                if got {
                    assert_eq!(want, Some(q));
                }
                assert_eq!(
                    (ep.rr, ep.wrr_used, ep.nonempty),
                    (reference.rr, reference.wrr_used, 0),
                    "{sched:?} q {q}: scheduler state"
                );
            }
        }
        let mut ep = EgressPort::new(link, 4, false);
        let drr = SchedulerKind::Drr {
            quantum_bytes: 1500,
        };
        assert!(!ep.select_alone(1, drr));
        assert_eq!((ep.rr, ep.deficit.clone()), (1, vec![0; 4]));
    }

    #[test]
    fn queue_hint_is_what_round_robin_serves() {
        // The prefetch hint must name the queue `select` then picks (round robin), for every
        // mix of non-empty / paused queues and pointer positions; and never change state.
        let link = test_link();
        let mut rng = crate::rng::Rng::new(5);
        for _ in 0..5_000 {
            let mut ep = EgressPort::new(link.clone(), 8, false);
            ep.nonempty = rng.below(256);
            ep.tx.paused_mask = rng.below(256) & !1;
            ep.rr = 1 + rng.below(7) as usize;
            let rr = ep.rr;
            let hint = ep.next_queue_hint();
            assert_eq!(ep.rr, rr, "hint changed state");
            let got = ep.select(SchedulerKind::RoundRobin, |_| 0);
            assert_eq!(
                hint, got,
                "nonempty {:08b} paused {:08b} rr {rr}",
                ep.nonempty, ep.tx.paused_mask
            );
        }
    }

    use super::test_port as port;

    #[test]
    fn drr_shares_bytes_equally_and_honours_strict_and_held_queues() {
        // Queue 1 holds 1000 B packets, queue 2 500 B packets, quantum 1000 B: per round
        // queue 1 sends one packet (1000 B) and queue 2 two (2 × 500 B), so after 300
        // services the bytes served differ by at most one quantum plus one packet.
        let mut ep = port(4);
        let size = |p: u32| if p < 1000 { 1000 } else { 500 };
        for i in 0..400u32 {
            ep.enqueue(1, i, 1000);
            ep.enqueue(2, 1000 + i, 500);
        }
        let sched = SchedulerKind::Drr {
            quantum_bytes: 1000,
        };
        let mut served = [0u64; 4];
        for _ in 0..300 {
            let q = ep.select(sched, size).unwrap();
            let (_, s) = ep.dequeue(q, |p| size(p) as u64).unwrap();
            served[q] += s;
        }
        assert!(
            served[1].abs_diff(served[2]) <= 2000,
            "DRR byte shares {served:?}"
        );
        // A strict data queue goes first; a held queue is skipped, keeping its packets.
        ep.strict |= 1 << 3;
        ep.enqueue(3, 5000, 100);
        assert_eq!(ep.select(sched, |_| 100), Some(3));
        ep.dequeue(3, |_| 100);
        ep.held = 1 << 1;
        for _ in 0..10 {
            assert_eq!(ep.select(sched, size), Some(2));
            ep.dequeue(2, |p| size(p) as u64);
        }
        ep.held = (1 << 1) | (1 << 2);
        assert_eq!(ep.select(sched, size), None);
        assert_eq!(ep.next_queue_hint(), None);
    }
}
