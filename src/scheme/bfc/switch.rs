//! The switch half of BFC: queue assignment ([`SwitchHooks::select_queue`]), per-flow
//! bookkeeping and the pause decision when a packet is queued ([`SwitchHooks::on_enqueue`]),
//! the resume decision when it leaves ([`SwitchHooks::on_departure`]), the τ tick that paces
//! resumes and sends pause frames, and — as the upstream of its neighbours — receipt of their
//! pause frames, which hold back the physical queues whose head packet they match
//! ([`crate::switch::EgressPort::held`]).

use std::collections::VecDeque;

use super::fq::FqPort;
use super::{
    BfcConfig, BfcMode, CountingBloom, FIRST_PHYSICAL, FQ_QUEUE, FlowTable, HPQ, NO_QUEUE, PAUSED,
    RESUME_PENDING, bloom_contains, threshold_bytes, vfid,
};
use crate::config::SchedulerKind;
use crate::engine::packet::{Header, Packet, PktKind, WireHeader};
use crate::scheme::bfc::wire::{BfcHdr, pause_frame_bytes};
use crate::scheme::{Emit, Env, Hop, Scheme, SwitchCtx, SwitchHooks, Verdict, hook};
use crate::scheme::{SchemeId, Setup};
use crate::switch::EgressPort;

/// Timer kinds (`which` of [`Emit::Timer`]).
pub mod timer {
    /// The τ tick of a port: resume paced flows of its physical queues, send its pause frame.
    pub const TICK: u8 = 0;
}

/// Bins of the physical-queue occupancy histogram ([`BfcSwitch::occupancy_hist`]).
pub const OCC_BINS: usize = 4096;
/// Width of one occupancy bin, bytes.
pub const OCC_BIN_BYTES: u64 = 256;

/// BFC state of one port of a switch, in its three roles.
#[derive(Clone, Debug)]
pub struct BfcPort {
    /// As an ingress: the VFIDs paused on this link (sent upstream every τ).
    pub bloom: CountingBloom,
    /// The filter changed since the last frame.
    pub dirty: bool,
    /// A tick is scheduled.
    pub armed: bool,
    /// One-hop RTT of this link, picoseconds.
    pub hrtt_ps: u64,
    /// τ of this link, picoseconds.
    pub tau_ps: u64,
    /// As an egress: flows due for resumption, per physical queue (entry ids).
    pub resume: Vec<VecDeque<u32>>,
    /// Physical queues (port queue bits) whose resume list is not empty.
    pub resume_due: u64,
    /// As an egress, under [`BfcConfig::resume_whole_queue`] only: entry ids of flows paused
    /// while queued in each physical queue, to be made due together when the queue drops to
    /// the threshold (stale ids — resumed, moved or freed since — are skipped then).
    pub paused: Vec<Vec<u32>>,
    /// As an upstream: the latest filter received from the downstream device on this link.
    pub rx_bits: [u64; 16],
    /// Size of the received filter, bits (0 = none received).
    pub rx_m: u32,
    /// Hashes of the received filter.
    pub rx_k: u32,
    /// The received filter has a bit set.
    pub rx_any: bool,
    /// Most physical queues of this egress active at once (sampled at enqueue).
    pub max_active: u32,
    /// When this port last sent its filter upstream, picoseconds (`u64::MAX` = never).
    pub last_frame_ps: u64,
    /// Empty frames to send after the filter emptied, one per τ: on a link that loses frames
    /// ([`PortLink::error_rate`](crate::link::PortLink) > 0) the one "all clear" frame may be
    /// lost, which would hold the upstream's flows for good; the paper's frames are periodic
    /// ("the subsequent retransmission, half a round trip delay later, is idempotent").
    pub empty_frames_left: u8,
    /// How many empty frames follow the first one on this link: 0 on a lossless link, else
    /// enough that all of them are lost with probability below 10⁻⁹.
    pub repeat_empty: u8,
}

/// Empty frames to repeat after the first on a link losing each frame with probability `err`
/// (all lost together with probability `err^(n+1)` < 10⁻⁹), at most 60; 0 when `err` is 0.
pub fn empty_frame_repeats(err: f64) -> u8 {
    if err <= 0.0 || err.is_nan() {
        0
    } else if err >= 1.0 {
        60
    } else {
        let n = ((1e-9f64).ln() / err.ln()).ceil() - 1.0;
        n.clamp(1.0, 60.0) as u8
    }
}

/// Counters of one switch (summed into the `bfc` summary section).
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct BfcCounters {
    /// Pause frames sent.
    pub pause_frames: u64,
    /// Pause frames received from downstream switches.
    pub frames_received: u64,
    /// Flows paused.
    pub flows_paused: u64,
    /// Flows resumed.
    pub flows_resumed: u64,
    /// Paused flows made due because their last queued packet left (§3.3: the state is
    /// reclaimed when the last packet leaves).
    pub due_last_packet: u64,
    /// Paused flows made due because a packet of theirs left with the queue at or below Th.
    pub due_threshold: u64,
    /// Paused flows made due because their queue drained to Th at another flow's departure
    /// (BFC-BufferOpt, [`BfcConfig::resume_whole_queue`], only).
    pub due_whole_queue: u64,
    /// τ ticks at which a physical queue still had due flows after resuming
    /// `resumes_per_tau` of them: how often the resume pacing held flows back.
    pub resumes_deferred: u64,
    /// Physical-queue assignments of flows.
    pub assignments: u64,
    /// Assignments to an occupied queue (no free one).
    pub collisions: u64,
    /// Entries placed in the overflow cache.
    pub overflow_cache: u64,
    /// Packets sent to the overflow queue (table and cache full).
    pub overflow_queue: u64,
    /// Data packets placed in the high-priority queue.
    pub hpq_packets: u64,
}

/// BFC on one switch.
#[derive(Clone, Debug)]
pub struct BfcSwitch {
    /// Mode.
    pub mode: BfcMode,
    /// First packets use the high-priority queue.
    pub hpq: bool,
    /// Physical queues per port.
    pub physical: usize,
    /// Port-queue bits of the physical queues.
    pub phys_mask: u64,
    /// Port queue index of the overflow queue.
    pub overflow_q: usize,
    /// VFID space.
    pub vfid_table: u32,
    /// Bloom filter bits.
    pub m_bits: u32,
    /// Bloom filter hashes.
    pub k: u32,
    /// Bloom filter bytes (frame payload).
    pub bloom_bytes: u32,
    /// Resumes per physical queue per τ.
    pub resumes_per_tau: u32,
    /// BFC-BufferOpt ([`BfcConfig::resume_whole_queue`]).
    pub resume_whole_queue: bool,
    /// Flow table.
    pub table: FlowTable,
    /// Per-port state.
    pub ports: Vec<BfcPort>,
    /// Counters.
    pub c: BfcCounters,
    /// Histogram of active physical queues of the egress at each enqueue (index = count).
    pub active_hist: Vec<u64>,
    /// Histogram of a physical queue's depth after each enqueue ([`OCC_BIN_BYTES`] bins, the
    /// last one open-ended).
    pub occupancy_hist: Vec<u64>,
    /// Deepest physical queue seen (after an enqueue), bytes.
    pub max_occupancy_bytes: u64,
    /// Ideal-FQ with the wide queue set ([`BfcConfig::wide`]): each port's physical and
    /// overflow queues live in [`Self::fq`], and its queue [`FQ_QUEUE`] stands for them.
    pub wide: bool,
    /// The network's data scheduler (what serves the wide queue sets).
    pub sched: SchedulerKind,
    /// Per port, its wide queue set: physical queues `0..physical`, then the overflow queue
    /// (empty unless [`Self::wide`]).
    pub fq: Vec<FqPort>,
    /// The wide queue a new flow's packet was given by [`SwitchHooks::select_queue`]:
    /// (packet slot, [`FQ_QUEUE`] + index in the set), for its enqueue hook.
    wide_pick: (u32, u16),
}

impl BfcSwitch {
    /// Built from `cfg` for a switch with `ports` whose data scheduler is `sched`.
    pub fn new(cfg: &BfcConfig, ports: &[EgressPort], sched: SchedulerKind) -> Self {
        let m_bits = cfg.bloom_bytes * 8;
        let p = cfg.physical_queues;
        let wide = cfg.wide();
        // Wide ports have no physical queue of their own: the set stands in for them all.
        let phys_mask = if wide {
            0
        } else {
            ((1u64 << p) - 1) << FIRST_PHYSICAL
        };
        let table_size = if cfg.mode == BfcMode::Sfq {
            1
        } else {
            cfg.vfid_table
        };
        BfcSwitch {
            mode: cfg.mode,
            hpq: cfg.hpq(),
            physical: p,
            phys_mask,
            overflow_q: if wide { FQ_QUEUE } else { FIRST_PHYSICAL + p },
            vfid_table: cfg.vfid_table,
            m_bits,
            k: cfg.bloom_hashes,
            bloom_bytes: cfg.bloom_bytes,
            resumes_per_tau: cfg.resumes_per_tau,
            resume_whole_queue: cfg.resume_whole_queue,
            table: FlowTable::new(table_size, cfg.overflow_cache),
            ports: ports
                .iter()
                .map(|e| {
                    let hrtt = cfg.hrtt_ps.unwrap_or(2 * e.tx.link.delay_ps).max(1);
                    BfcPort {
                        bloom: CountingBloom::new(m_bits, cfg.bloom_hashes),
                        dirty: false,
                        armed: false,
                        hrtt_ps: hrtt,
                        tau_ps: cfg.tau_ps.unwrap_or(hrtt / 2).max(1),
                        resume: vec![VecDeque::new(); if wide { 0 } else { p }],
                        resume_due: 0,
                        paused: vec![
                            Vec::new();
                            if cfg.resume_whole_queue && !wide {
                                p
                            } else {
                                0
                            }
                        ],
                        rx_bits: [0; 16],
                        rx_m: 0,
                        rx_k: 0,
                        rx_any: false,
                        max_active: 0,
                        last_frame_ps: u64::MAX,
                        empty_frames_left: 0,
                        repeat_empty: empty_frame_repeats(e.tx.link.error_rate),
                    }
                })
                .collect(),
            c: BfcCounters::default(),
            active_hist: vec![0; 65.max(p + 1)],
            occupancy_hist: vec![0; OCC_BINS],
            max_occupancy_bytes: 0,
            wide,
            sched,
            fq: if wide {
                ports.iter().map(|_| FqPort::new(p + 1, sched)).collect()
            } else {
                Vec::new()
            },
            wide_pick: (u32::MAX, NO_QUEUE),
        }
    }

    /// Is port queue `q` a physical queue?
    #[inline]
    fn is_physical(&self, q: usize) -> bool {
        self.phys_mask & (1u64 << q) != 0
    }

    /// Active physical queues of egress `port`: non-empty and not held by the downstream.
    #[inline]
    pub fn n_active(&self, ep: &EgressPort) -> u32 {
        (ep.nonempty & !ep.held & self.phys_mask).count_ones()
    }

    /// Pause threshold of egress `egress` for a flow from `in_port`, bytes.
    #[inline]
    pub fn threshold(&self, ctx: &SwitchCtx<'_>, in_port: u16, egress: u16) -> u64 {
        let ip = &self.ports[in_port as usize];
        let ep = &ctx.ports[egress as usize];
        threshold_bytes(
            ip.hrtt_ps,
            ip.tau_ps,
            ep.tx.link.rate_bps,
            self.n_active(ep),
        )
    }

    /// Make sure port `port`'s τ tick is scheduled (on the port's τ grid, as if the timer ran
    /// all the time).
    fn arm(&mut self, ctx: &mut SwitchCtx<'_>, port: u16) {
        let ps = &mut self.ports[port as usize];
        if !ps.armed {
            ps.armed = true;
            let at = (ctx.now_ps / ps.tau_ps + 1) * ps.tau_ps;
            ctx.out.push(Emit::Timer {
                at_ps: at,
                port,
                which: timer::TICK,
                arg: 0,
            });
        }
    }

    /// Consistency of the flow table with the ingress filters: every ingress filter holds
    /// exactly the paused entries of that ingress (a paused VFID that left the table without
    /// leaving its filter would pause the flows that share its bits forever).
    pub fn check(&self) -> Result<(), String> {
        let paused = self.table.paused_per_in_port(self.ports.len());
        for (p, (ps, n)) in self.ports.iter().zip(&paused).enumerate() {
            if ps.bloom.members != *n {
                return Err(format!(
                    "BFC ingress {p}: filter holds {} VFIDs, the table {n} paused entries",
                    ps.bloom.members
                ));
            }
        }
        Ok(())
    }

    /// Pause flow entry `id` (VFID `v`) arriving on `in_port`.
    fn pause(&mut self, ctx: &mut SwitchCtx<'_>, id: u32, v: u32, in_port: u16) {
        let e = self.table.get_mut(id);
        e.flags |= PAUSED;
        let (egress, q) = (e.egress as usize, e.queue as usize);
        if self.resume_whole_queue && self.is_physical(q) {
            self.ports[egress].paused[q - FIRST_PHYSICAL].push(id);
        }
        let ps = &mut self.ports[in_port as usize];
        ps.bloom.insert(v);
        ps.dirty = true;
        self.c.flows_paused += 1;
        self.arm(ctx, in_port);
    }

    /// Resume flow entry `id` now (remove it from its ingress filter).
    fn resume(&mut self, ctx: &mut SwitchCtx<'_>, id: u32) {
        let v = self.table.vfid_of(id);
        let e = self.table.get_mut(id);
        e.flags &= !(PAUSED | RESUME_PENDING);
        let (in_port, empty) = (e.in_port, e.packets == 0);
        if empty {
            self.table.remove(id);
        }
        let ps = &mut self.ports[in_port as usize];
        ps.bloom.remove(v);
        ps.dirty = true;
        self.c.flows_resumed += 1;
        if ps.last_frame_ps == ctx.now_ps {
            // The ingress already sent this interval's frame (its tick ran first at this
            // instant): send it again with the flow cleared, so that the resume leaves in this
            // interval ("every bloom filter interval … we take one flow off the toberesumed
            // list and clear its information from the bloom filter"), not one τ later.
            self.emit_frame(ctx, in_port);
        }
        self.arm(ctx, in_port);
    }

    /// Send ingress `port`'s filter to its upstream device now.
    fn emit_frame(&mut self, ctx: &mut SwitchCtx<'_>, port: u16) {
        let ps = &mut self.ports[port as usize];
        if ps.bloom.members == 0 {
            ps.empty_frames_left = if ps.dirty {
                ps.repeat_empty
            } else {
                ps.empty_frames_left.saturating_sub(1)
            };
        }
        ps.dirty = false;
        ps.last_frame_ps = ctx.now_ps;
        let bits = ps.bloom.bits;
        let frame = Packet {
            src: ctx.node,
            dst: ctx.ports[port as usize].tx.link.peer,
            size: pause_frame_bytes(&ctx.env.sizes, self.bloom_bytes),
            prio: 0,
            hdr: BfcHdr {
                bits: self.m_bits as u16,
                hashes: self.k as u8,
            }
            .header(),
            ..Packet::default()
        };
        let slot = ctx.arena.alloc(frame);
        *ctx.arena.payload_mut(slot) = bits;
        ctx.out.push(Emit::Control { port, pkt: slot });
        self.c.pause_frames += 1;
    }

    /// Recompute whether physical (or overflow) queue `q` of egress `port` is held: its head
    /// packet's flow matches the latest filter from downstream.
    #[inline]
    fn check_head(&self, ctx: &mut SwitchCtx<'_>, port: u16, q: usize) {
        let ps = &self.ports[port as usize];
        let ep = &ctx.ports[port as usize];
        let hold = ps.rx_any
            && match ep.head(q) {
                Some(h) => {
                    let p = ctx.arena.get(h);
                    p.kind() == PktKind::Data
                        && bloom_contains(
                            &ps.rx_bits,
                            ps.rx_m,
                            ps.rx_k,
                            vfid(p.src, p.dst, p.sport, p.dport, self.vfid_table),
                        )
                }
                None => false,
            };
        let ep = &mut ctx.ports[port as usize];
        if hold {
            ep.held |= 1u64 << q;
        } else {
            ep.held &= !(1u64 << q);
        }
    }

    /// The τ tick of `port`.
    fn tick(&mut self, ctx: &mut SwitchCtx<'_>, port: u16) {
        self.ports[port as usize].armed = false;
        // Resume pacing: at most `resumes_per_tau` flows per physical queue of this egress.
        let mut due = self.ports[port as usize].resume_due;
        while due != 0 {
            let q = due.trailing_zeros() as usize;
            due &= due - 1;
            let mut left = self.resumes_per_tau;
            while left > 0 {
                let Some(id) = self.ports[port as usize].resume[q - FIRST_PHYSICAL].pop_front()
                else {
                    break;
                };
                // Skip stale items (the flow was paused again while waiting).
                if self.table.get(id).has(RESUME_PENDING) {
                    self.resume(ctx, id);
                    left -= 1;
                }
            }
            let list = &self.ports[port as usize].resume[q - FIRST_PHYSICAL];
            if list.is_empty() {
                self.ports[port as usize].resume_due &= !(1u64 << q);
            } else if left == 0
                && list
                    .iter()
                    .any(|&id| self.table.get(id).has(RESUME_PENDING))
            {
                self.c.resumes_deferred += 1;
            }
        }
        // The pause frame of this link, to its upstream device.
        let ps = &self.ports[port as usize];
        if ps.bloom.members > 0 || ps.dirty || ps.empty_frames_left > 0 {
            self.emit_frame(ctx, port);
        }
        let ps = &self.ports[port as usize];
        if ps.bloom.members > 0 || ps.resume_due != 0 || ps.empty_frames_left > 0 {
            self.arm(ctx, port);
        }
    }

    /// A packet of flow entry `id` left physical queue `q` of `at.egress`: free the entry of
    /// an unpaused flow with nothing left here; make a paused flow due when this was its last
    /// packet or the queue is now at or below Th.
    fn departed(&mut self, ctx: &mut SwitchCtx<'_>, at: &Hop, q: usize, id: u32) {
        let e = self.table.get_mut(id);
        if e.packets == 0 {
            e.queue = NO_QUEUE;
        }
        let (paused, pending, left) = (e.has(PAUSED), e.has(RESUME_PENDING), e.packets);
        if !paused {
            if left == 0 {
                self.table.remove(id);
            }
            return;
        }
        if pending {
            return;
        }
        let due = left == 0
            || ctx.ports[at.egress as usize].queues[q].bytes
                <= self.threshold(ctx, at.in_port, at.egress);
        if due {
            if left == 0 {
                self.c.due_last_packet += 1;
            } else {
                self.c.due_threshold += 1;
            }
            self.table.get_mut(id).flags |= RESUME_PENDING;
            let ps = &mut self.ports[at.egress as usize];
            ps.resume[q - FIRST_PHYSICAL].push_back(id);
            ps.resume_due |= 1u64 << q;
            self.arm(ctx, at.egress);
        }
    }

    /// BFC-BufferOpt ([`BfcConfig::resume_whole_queue`]): a departure left physical queue `q`
    /// of `at.egress`; if it is now at or below the threshold, every flow paused while queued
    /// in it (and still paused there) becomes due.
    fn resume_queue_if_drained(&mut self, ctx: &mut SwitchCtx<'_>, at: &Hop, q: usize) {
        let egress = at.egress as usize;
        if self.ports[egress].paused[q - FIRST_PHYSICAL].is_empty()
            || ctx.ports[egress].queues[q].bytes > self.threshold(ctx, at.in_port, at.egress)
        {
            return;
        }
        let mut list = std::mem::take(&mut self.ports[egress].paused[q - FIRST_PHYSICAL]);
        let mut any = false;
        for &id in &list {
            let e = self.table.get_mut(id);
            if e.has(PAUSED)
                && !e.has(RESUME_PENDING)
                && e.egress as usize == egress
                && e.queue as usize == q
            {
                e.flags |= RESUME_PENDING;
                self.ports[egress].resume[q - FIRST_PHYSICAL].push_back(id);
                self.c.due_whole_queue += 1;
                any = true;
            }
        }
        list.clear();
        // Keep the list's capacity: no allocation per drain.
        self.ports[egress].paused[q - FIRST_PHYSICAL] = list;
        if any {
            self.ports[egress].resume_due |= 1u64 << q;
            self.arm(ctx, at.egress);
        }
    }

    /// Occupancy tail: the smallest depth (bytes, bin upper edge) at or below which a
    /// fraction `p` of the enqueue-time samples of physical queues lie.
    pub fn occupancy_quantile(hist: &[u64], p: f64) -> u64 {
        let total: u64 = hist.iter().sum();
        if total == 0 {
            return 0;
        }
        let want = (p * total as f64).ceil() as u64;
        let mut acc = 0;
        for (i, &h) in hist.iter().enumerate() {
            acc += h;
            if acc >= want {
                return (i as u64 + 1) * OCC_BIN_BYTES;
            }
        }
        hist.len() as u64 * OCC_BIN_BYTES
    }
}

/// Ideal-FQ with the wide queue set ([`super::fq`]): the port's queue [`FQ_QUEUE`] holds the
/// bytes of every packet of the set but only the staged packet's slot.
impl BfcSwitch {
    /// Queue selection of a data packet of a flow with no queue yet at a wide port (no free
    /// physical queue among the port's own: it has none): a free queue of the set, else a
    /// random one (a collision), as [`SwitchHooks::select_queue`] picks among a port's own.
    /// Returns [`FQ_QUEUE`] + its index (the core puts every index past the port's last queue
    /// in that last queue, `FQ_QUEUE`) and remembers it for the enqueue hook.
    #[inline(never)]
    fn wide_select(&mut self, ctx: &mut SwitchCtx<'_>, pkt: u32, egress: u16) -> usize {
        let free = self.fq[egress as usize]
            .nonempty
            .first_absent_below(self.physical);
        let i = match free {
            Some(i) => i,
            None => ctx.rng.below(self.physical as u64) as usize,
        };
        let q = FQ_QUEUE + i;
        self.wide_pick = (pkt, q as u16);
        q
    }

    /// A packet went into the port's [`FQ_QUEUE`]: move it into its queue of the set (its
    /// bytes stay counted in the port's queue), restage the set's choice if that queue was
    /// empty, and do the bookkeeping of [`SwitchHooks::on_enqueue`] for its queue.
    fn wide_enqueue(&mut self, ctx: &mut SwitchCtx<'_>, pkt: u32, at: &Hop) {
        let egress = at.egress as usize;
        let p = ctx.arena.get(pkt);
        let v = vfid(p.src, p.dst, p.sport, p.dport, self.vfid_table);
        let entry = self.table.lookup(v, at.in_port, at.egress);
        let q = match entry.map(|id| self.table.get(id).queue) {
            Some(q) if q != NO_QUEUE => q as usize,
            _ if self.wide_pick.0 == pkt => self.wide_pick.1 as usize,
            // Queue selection found no room in the flow table: the overflow queue.
            _ => FQ_QUEUE + self.physical,
        };
        self.wide_pick = (u32::MAX, NO_QUEUE);
        let i = q - FQ_QUEUE;
        let ep = &mut ctx.ports[egress];
        let taken = ep.queues[FQ_QUEUE].pkts.pop_back();
        debug_assert_eq!(taken, Some(pkt), "the packet is the port's last queued");
        let fq = &mut self.fq[egress];
        let depth_before = fq.queues[i].bytes;
        if fq.push(i, pkt, at.size) && fq.unstage().is_some() {
            // A queue turned non-empty: the round robin may now choose it first.
            ep.queues[FQ_QUEUE].pkts.pop_front();
        }
        if fq.staged().is_none() {
            let arena = &*ctx.arena;
            if let Some((_, h)) = fq.stage(self.sched, |p| arena.get(p).size) {
                ep.queues[FQ_QUEUE].pkts.push_back(h);
            }
        }
        debug_assert_eq!(ep.queues[FQ_QUEUE].pkts.len(), 1);
        if i == self.physical {
            self.c.overflow_queue += 1;
            return;
        }
        let n_active = fq.nonempty.len() - fq.nonempty.contains(self.physical) as u32;
        let depth = fq.queues[i].bytes;
        self.count_enqueue(egress, n_active, depth);
        self.track_flow(entry, v, at, q, depth_before);
    }

    /// Occupancy statistics of an enqueue into a physical queue of `egress`: `n_active`
    /// active queues, the queue now `depth` bytes deep.
    fn count_enqueue(&mut self, egress: usize, n_active: u32, depth: u64) {
        let ps = &mut self.ports[egress];
        ps.max_active = ps.max_active.max(n_active);
        self.active_hist[n_active as usize] += 1;
        self.occupancy_hist[((depth / OCC_BIN_BYTES) as usize).min(OCC_BINS - 1)] += 1;
        self.max_occupancy_bytes = self.max_occupancy_bytes.max(depth);
    }

    /// The flow table entry of a packet of VFID `v` queued in physical queue `q` (`found`:
    /// its entry if the lookup found one, else it is inserted), with its assignment counted
    /// (a collision when the queue held bytes before, `depth_before`) and its packet counted.
    /// `None` when the table has no room (the packet stays untracked).
    fn track_flow(
        &mut self,
        found: Option<u32>,
        v: u32,
        at: &Hop,
        q: usize,
        depth_before: u64,
    ) -> Option<u32> {
        let id = match found {
            Some(id) => id,
            None => {
                let id = self.table.insert(v, at.in_port, at.egress)?;
                if self.table.in_cache(id) {
                    self.c.overflow_cache += 1;
                }
                id
            }
        };
        let e = self.table.get_mut(id);
        if e.queue == NO_QUEUE {
            e.queue = q as u16;
            self.c.assignments += 1;
            if depth_before > 0 {
                self.c.collisions += 1;
            }
        }
        e.packets += 1;
        Some(id)
    }

    /// The flow-table entry of the departing packet `pkt`, its packet count taken down by
    /// one (the counterpart of [`Self::track_flow`]); `None` when its flow is not tracked.
    fn untrack(&mut self, ctx: &SwitchCtx<'_>, pkt: u32, at: &Hop) -> Option<u32> {
        let p = ctx.arena.get(pkt);
        let v = vfid(p.src, p.dst, p.sport, p.dport, self.vfid_table);
        let id = self.table.lookup(v, at.in_port, at.egress)?;
        let e = self.table.get_mut(id);
        e.packets = e.packets.saturating_sub(1);
        Some(id)
    }

    /// The port took the staged packet `pkt` of its wide queue set: commit the choice, stage
    /// the next one, and do the flow bookkeeping of [`SwitchHooks::on_departure`].
    fn wide_dequeue(&mut self, ctx: &mut SwitchCtx<'_>, pkt: u32, at: &Hop) {
        let egress = at.egress as usize;
        let fq = &mut self.fq[egress];
        let (i, p) = fq.pop_staged(at.size);
        debug_assert_eq!(p, pkt, "the port sent the staged packet");
        let arena = &*ctx.arena;
        if let Some((_, h)) = fq.stage(self.sched, |p| arena.get(p).size) {
            let ep = &mut ctx.ports[egress];
            ep.queues[FQ_QUEUE].pkts.push_back(h);
            ep.nonempty |= 1u64 << FQ_QUEUE;
        }
        if i == self.physical {
            return;
        }
        let Some(id) = self.untrack(ctx, pkt, at) else {
            return;
        };
        if self.table.get_mut(id).packets == 0 {
            self.table.remove(id);
        }
    }
}

impl SwitchHooks for BfcSwitch {
    fn check(&self) -> Result<(), String> {
        BfcSwitch::check(self)
    }

    /// The packets of a wide port's queue set other than the staged one (which is in the
    /// port's [`FQ_QUEUE`]), checked queue by queue.
    fn bytes_held_aside(
        &self,
        port: usize,
        q: usize,
        arena: &crate::engine::arena::PacketArena,
    ) -> Result<u64, String> {
        if !self.wide || q != FQ_QUEUE {
            return Ok(0);
        }
        let fq = &self.fq[port];
        let mut aside = 0;
        for (i, fqq) in fq.queues.iter().enumerate() {
            let b: u64 = fqq.pkts.iter().map(|&p| arena.get(p).size as u64).sum();
            if b != fqq.bytes || fqq.pkts.is_empty() == fq.nonempty.contains(i) {
                return Err(format!(
                    "BFC port {port} per-flow queue {i}: counted {} B, holds {b} B in {} packets",
                    fqq.bytes,
                    fqq.pkts.len()
                ));
            }
            aside += b;
            if fq.staged() == Some(i) {
                aside -= arena.get(fqq.pkts[0]).size as u64;
            }
        }
        if fq.staged().is_none() != fq.nonempty.is_empty() {
            return Err(format!("BFC port {port}: packets queued, none staged"));
        }
        Ok(aside)
    }

    fn hooks(&self) -> u16 {
        let wide = if self.wide { hook::DEQUEUE } else { 0 };
        hook::SELECT_QUEUE | hook::ENQUEUE | hook::DEPARTURE | wide
    }

    #[inline]
    fn owns(&self, pkt: &Packet) -> bool {
        BfcHdr::is(pkt)
    }

    /// A pause frame from the downstream device on `in_port`: it replaces the filter of that
    /// link; every physical queue of egress `in_port` is checked against it.
    fn on_control(&mut self, ctx: &mut SwitchCtx<'_>, p: u32, in_port: u16) -> Verdict {
        if let Some(h) = BfcHdr::of(ctx.arena.get(p))
            && let Some(words) = ctx.arena.payload(p)
        {
            let words = *words;
            let ps = &mut self.ports[in_port as usize];
            ps.rx_bits = words;
            ps.rx_m = h.bits as u32;
            ps.rx_k = h.hashes as u32;
            ps.rx_any = words.iter().any(|&w| w != 0);
            self.c.frames_received += 1;
            let before = ctx.ports[in_port as usize].held;
            let mut qs =
                ctx.ports[in_port as usize].nonempty & (self.phys_mask | (1u64 << self.overflow_q));
            while qs != 0 {
                let q = qs.trailing_zeros() as usize;
                qs &= qs - 1;
                self.check_head(ctx, in_port, q);
            }
            if before & !ctx.ports[in_port as usize].held != 0 {
                ctx.out.push(Emit::Kick { port: in_port });
            }
        }
        Verdict::Consumed
    }

    #[inline]
    fn select_queue(&mut self, ctx: &mut SwitchCtx<'_>, pkt: u32, egress: u16) -> Option<usize> {
        let p = ctx.arena.get(pkt);
        let d = match p.hdr {
            Header::Data(d) => d,
            Header::Ack(_) | Header::Nack(_) => {
                // ACKs and NACKs: the strict high-priority queue.
                ctx.ports[egress as usize].strict |= 1u64 << HPQ;
                return Some(HPQ);
            }
            // CNPs and other schemes' packets: the default (the control class).
            _ => return None,
        };
        let first = self.hpq && d.seq == 0 && !d.retx;
        let v = vfid(p.src, p.dst, p.sport, p.dport, self.vfid_table);
        let in_port = p.in_port;
        if self.mode == BfcMode::Sfq {
            return Some(FIRST_PHYSICAL + v as usize % self.physical);
        }
        let entry = self.table.lookup(v, in_port, egress);
        if let Some(id) = entry {
            let q = self.table.get(id).queue;
            if q != NO_QUEUE {
                return Some(q as usize);
            }
        } else if first {
            ctx.ports[egress as usize].strict |= 1u64 << HPQ;
            return Some(HPQ);
        } else if !self.table.has_room(v) {
            self.wide_pick.0 = u32::MAX;
            return Some(self.overflow_q);
        }
        if !self.mode.dynamic() {
            return Some(FIRST_PHYSICAL + v as usize % self.physical);
        }
        let free = self.phys_mask & !ctx.ports[egress as usize].nonempty;
        Some(if free != 0 {
            free.trailing_zeros() as usize
        } else if self.wide {
            self.wide_select(ctx, pkt, egress)
        } else {
            FIRST_PHYSICAL + ctx.rng.below(self.physical as u64) as usize
        })
    }

    fn on_enqueue(&mut self, ctx: &mut SwitchCtx<'_>, pkt: u32, at: &Hop, depth_before: u64) {
        let q = at.q;
        if q == HPQ {
            if ctx.arena.get(pkt).kind() == PktKind::Data {
                self.c.hpq_packets += 1;
            }
            return;
        }
        if depth_before == 0 && self.ports[at.egress as usize].rx_any {
            // A new head packet: the upstream role checks it against the downstream filter.
            self.check_head(ctx, at.egress, q);
        }
        if q == self.overflow_q {
            if self.wide {
                return self.wide_enqueue(ctx, pkt, at);
            }
            self.c.overflow_queue += 1;
            return;
        }
        if !self.is_physical(q) {
            return;
        }
        let ep = &ctx.ports[at.egress as usize];
        let n_active = self.n_active(ep);
        let depth = ep.queues[q].bytes;
        self.count_enqueue(at.egress as usize, n_active, depth);
        if self.mode == BfcMode::Sfq {
            return;
        }
        let p = ctx.arena.get(pkt);
        let v = vfid(p.src, p.dst, p.sport, p.dport, self.vfid_table);
        let found = self.table.lookup(v, at.in_port, at.egress);
        // No room cannot happen (queue selection saw room): the packet stays untracked.
        let Some(id) = self.track_flow(found, v, at, q, depth_before) else {
            return;
        };
        if !self.mode.pauses() {
            return;
        }
        let e = self.table.get_mut(id);
        let (paused, pending) = (e.has(PAUSED), e.has(RESUME_PENDING));
        if !paused || pending {
            let th = self.threshold(ctx, at.in_port, at.egress);
            if depth > th {
                if pending {
                    // Still too much queued: it stays paused (its resume-list item is stale).
                    self.table.get_mut(id).flags &= !RESUME_PENDING;
                    if self.resume_whole_queue {
                        self.ports[at.egress as usize].paused[q - FIRST_PHYSICAL].push(id);
                    }
                } else {
                    self.pause(ctx, id, v, at.in_port);
                }
            }
        }
    }

    fn on_departure(&mut self, ctx: &mut SwitchCtx<'_>, pkt: u32, at: &Hop) {
        let q = at.q;
        if q == HPQ || q == 0 {
            return;
        }
        if self.ports[at.egress as usize].rx_any {
            self.check_head(ctx, at.egress, q);
        } else {
            ctx.ports[at.egress as usize].held &= !(1u64 << q);
        }
        if !self.is_physical(q) || self.mode == BfcMode::Sfq {
            return;
        }
        let Some(id) = self.untrack(ctx, pkt, at) else {
            return;
        };
        self.departed(ctx, at, q, id);
        if self.resume_whole_queue {
            self.resume_queue_if_drained(ctx, at, q);
        }
    }

    /// Wide ports only ([`Self::hooks`]): the staged packet of the wide queue set left.
    fn on_dequeue(&mut self, ctx: &mut SwitchCtx<'_>, pkt: u32, at: &Hop) {
        if at.q == FQ_QUEUE {
            self.wide_dequeue(ctx, pkt, at);
        }
    }

    fn on_timer(&mut self, ctx: &mut SwitchCtx<'_>, port: u16, which: u8, _arg: u8) {
        if which == timer::TICK && (port as usize) < self.ports.len() {
            self.tick(ctx, port);
        }
    }
}

impl Scheme for BfcSwitch {
    type Host = super::host::BfcHost;
    type Config = super::BfcConfig;
    const ID: SchemeId = super::ID;

    fn build_switch(
        cfg: &Setup<'_, super::BfcConfig>,
        _env: &Env,
        _tier: u8,
        ports: &[EgressPort],
    ) -> Option<Self> {
        cfg.own
            .enabled
            .then(|| BfcSwitch::new(cfg.own, ports, cfg.scheduler))
    }

    fn build_host(
        cfg: &Setup<'_, super::BfcConfig>,
        _env: &Env,
        hosts: usize,
        _flows: usize,
    ) -> Option<Self::Host> {
        (cfg.own.enabled && cfg.own.mode.pauses())
            .then(|| super::host::BfcHost::new(hosts, cfg.own.vfid_table))
    }

    fn summary(
        switches: &[&Self],
        host: Option<&Self::Host>,
        cfg: &Setup<'_, super::BfcConfig>,
    ) -> Option<(&'static str, serde_json::Value)> {
        if switches.is_empty() {
            return None;
        }
        let mut c = BfcCounters::default();
        let bins = switches.iter().map(|s| s.active_hist.len()).max();
        let mut active = vec![0u64; bins.unwrap_or(65)];
        let mut occ = vec![0u64; OCC_BINS];
        let mut max_active = 0u32;
        let mut table_peak = 0usize;
        let mut max_occ = 0u64;
        for s in switches {
            let x = &s.c;
            c.pause_frames += x.pause_frames;
            c.frames_received += x.frames_received;
            c.flows_paused += x.flows_paused;
            c.flows_resumed += x.flows_resumed;
            c.due_last_packet += x.due_last_packet;
            c.due_threshold += x.due_threshold;
            c.due_whole_queue += x.due_whole_queue;
            c.resumes_deferred += x.resumes_deferred;
            c.assignments += x.assignments;
            c.collisions += x.collisions;
            c.overflow_cache += x.overflow_cache;
            c.overflow_queue += x.overflow_queue;
            c.hpq_packets += x.hpq_packets;
            for (a, b) in active.iter_mut().zip(&s.active_hist) {
                *a += b;
            }
            for (a, b) in occ.iter_mut().zip(&s.occupancy_hist) {
                *a += b;
            }
            max_active = max_active.max(s.ports.iter().map(|p| p.max_active).max().unwrap_or(0));
            table_peak = table_peak.max(s.table.peak_used);
            max_occ = max_occ.max(s.max_occupancy_bytes);
        }
        let samples: u64 = active.iter().sum();
        let mut acc = 0u64;
        let cdf: Vec<serde_json::Value> = active
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(i, n)| {
                acc += n;
                serde_json::json!([i, acc as f64 / samples.max(1) as f64])
            })
            .collect();
        let q = |p| BfcSwitch::occupancy_quantile(&occ, p);
        Some((
            "bfc",
            serde_json::json!({
                "mode": cfg.own.mode,
                "physical_queues": cfg.own.physical_queues,
                "high_priority_queue": cfg.own.hpq(),
                "pause_frames": c.pause_frames,
                "frames_received_switches": c.frames_received,
                "frames_received_hosts": host.map_or(0, |h| h.frames_received),
                "flows_paused": c.flows_paused,
                "flows_resumed": c.flows_resumed,
                "due_last_packet": c.due_last_packet,
                "due_threshold": c.due_threshold,
                "due_whole_queue": c.due_whole_queue,
                "resumes_deferred": c.resumes_deferred,
                "assignments": c.assignments,
                "collisions": c.collisions,
                "collision_fraction": if c.assignments > 0 {
                    c.collisions as f64 / c.assignments as f64
                } else {
                    0.0
                },
                "overflow_cache_entries": c.overflow_cache,
                "overflow_queue_packets": c.overflow_queue,
                "hpq_packets": c.hpq_packets,
                "max_active_queues_per_port": max_active,
                "active_queues_cdf": cdf,
                "flow_table_peak_entries_per_switch": table_peak,
                "physical_queue_occupancy_bytes": {
                    "p50": q(0.5), "p90": q(0.9), "p99": q(0.99), "p999": q(0.999),
                    "max": max_occ, "bin_bytes": OCC_BIN_BYTES,
                },
            }),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::arena::PacketArena;
    use crate::engine::packet::Framing;
    use crate::engine::packet::{DataHdr, WireSizes};
    use crate::link::PortLink;
    use crate::rng::Rng;
    use crate::scheme::Outbox;
    use crate::topology::routing::RouteTable;
    use crate::units::{GBPS, US};

    /// A switch with two 100 G, 1 µs ports (0 = from the upstream, 1 = the egress), driven by
    /// hand: HRTT = 2 µs, τ = 1 µs.
    struct Rig {
        sw: BfcSwitch,
        ports: Vec<EgressPort>,
        arena: PacketArena,
        rng: Rng,
        env: Env,
        routes: RouteTable,
        out: Outbox<Emit>,
        now_ps: u64,
    }

    impl Rig {
        fn new(cfg: &BfcConfig) -> Rig {
            Rig::with_links(cfg, &[(100 * GBPS, US), (100 * GBPS, US)])
        }

        /// A switch whose port `i` has link `links[i]` = (rate, one-way delay).
        fn with_links(cfg: &BfcConfig, links: &[(u64, u64)]) -> Rig {
            let ports: Vec<EgressPort> = links
                .iter()
                .map(|&(rate_bps, delay_ps)| {
                    let link = PortLink {
                        peer: 9,
                        peer_port: 0,
                        state: crate::link::LinkState::Up,
                        rate_bps,
                        delay_ps,
                        error_rate: 0.0,
                        tx_bytes: 0,
                    };
                    EgressPort::new(link, cfg.queues_per_port(), false)
                })
                .collect();
            let topo = crate::topology::shapes::star(2, 100 * GBPS, US).unwrap();
            Rig {
                sw: BfcSwitch::new(
                    cfg,
                    &ports,
                    SchedulerKind::Drr {
                        quantum_bytes: 1000,
                    },
                ),
                ports,
                arena: PacketArena::new(),
                rng: Rng::new(1),
                env: Env {
                    host_rate_bps: 100 * GBPS,
                    base_rtt_ps: 4 * US,
                    queues_per_port: cfg.queues_per_port(),
                    num_hosts: 2,
                    sizes: WireSizes {
                        framing: Framing::Hpcc,
                        int_bytes: 0,
                        irn_sack: false,
                    },
                    mtu_bytes: 1000,
                },
                routes: RouteTable::try_build(&topo).unwrap(),
                out: Outbox::new(),
                now_ps: 0,
            }
        }

        fn with<R>(&mut self, f: impl FnOnce(&mut BfcSwitch, &mut SwitchCtx<'_>) -> R) -> R {
            let mut ctx = SwitchCtx {
                now_ps: self.now_ps,
                node: 0,
                tier: 1,
                ports: &mut self.ports,
                arena: &mut self.arena,
                rng: &mut self.rng,
                env: &self.env,
                routes: &self.routes,
                out: &mut self.out,
                event_no: 0,
            };
            f(&mut self.sw, &mut ctx)
        }

        /// A 1000 B data packet (not a first packet) of flow `src` arrives on `in_port` for
        /// egress 1: queue selection, enqueue, enqueue hook. Returns its queue.
        fn arrive(&mut self, src: u32, in_port: u16) -> usize {
            let p = self.arena.alloc(Packet {
                src,
                dst: 100,
                size: 1000,
                sport: 7,
                dport: 100,
                in_port,
                hdr: Header::Data(DataHdr {
                    seq: 1000,
                    payload: 952,
                    ..DataHdr::default()
                }),
                ..Packet::default()
            });
            let q = self.with(|s, c| s.select_queue(c, p, 1)).unwrap();
            let before = self.ports[1].queues[q].bytes;
            self.ports[1].enqueue(q, p, 1000);
            let at = Hop {
                in_port,
                egress: 1,
                q,
                size: 1000,
            };
            self.with(|s, c| s.on_enqueue(c, p, &at, before));
            q
        }

        /// The head of queue `q` of egress 1 leaves.
        fn depart(&mut self, q: usize) {
            let (p, size) = self.ports[1].dequeue(q, |_| 1000).unwrap();
            let at = Hop {
                in_port: self.arena.get(p).in_port,
                egress: 1,
                q,
                size,
            };
            self.with(|s, c| s.on_departure(c, p, &at));
            self.arena.free(p);
        }

        fn tick(&mut self, port: u16) {
            self.with(|s, c| s.on_timer(c, port, timer::TICK, 0));
        }

        fn entry(&self, src: u32, in_port: u16) -> super::super::FlowEntry {
            let v = vfid(src, 100, 7, 100, self.sw.vfid_table);
            *self
                .sw
                .table
                .get(self.sw.table.lookup(v, in_port, 1).unwrap())
        }
    }

    fn cfg() -> BfcConfig {
        BfcConfig {
            enabled: true,
            ..BfcConfig::default()
        }
    }

    #[test]
    fn hrtt_and_threshold_per_port_from_the_link_delay() {
        // A gateway: port 0 = the 100 G inter-DC link with 200 µs of propagation, port 1 = a
        // 10 G DC link, port 2 = a 100 G DC link, both 1 µs.
        let cfg = BfcConfig {
            enabled: true,
            ..Default::default()
        };
        let mut rig = Rig::with_links(
            &cfg,
            &[(100 * GBPS, 200 * US), (10 * GBPS, US), (100 * GBPS, US)],
        );
        // HRTT = 2 × the link's one-way delay, τ = HRTT / 2, per port.
        let p = &rig.sw.ports;
        assert_eq!((p[0].hrtt_ps, p[0].tau_ps), (400 * US, 200 * US));
        assert_eq!((p[1].hrtt_ps, p[1].tau_ps), (2 * US, US));
        assert_eq!((p[2].hrtt_ps, p[2].tau_ps), (2 * US, US));
        // The threshold takes the HRTT and τ of the flow's ingress and μ of its egress (one
        // active queue at an idle port):
        // from the long link to 10 G: (400 + 200) µs × 10 Gb/s = 6,000,000 bit = 750,000 B;
        // from the long link to 100 G: 600 µs × 100 Gb/s / 8 = 7,500,000 B;
        // from a 1 µs link to the long link: (2 + 1) µs × 100 Gb/s / 8 = 37,500 B;
        // from a 1 µs link to 10 G: 3 µs × 10 Gb/s / 8 = 3,750 B.
        let th = rig.with(|sw, ctx| {
            [
                sw.threshold(ctx, 0, 1),
                sw.threshold(ctx, 0, 2),
                sw.threshold(ctx, 1, 0),
                sw.threshold(ctx, 2, 1),
            ]
        });
        assert_eq!(th, [750_000, 7_500_000, 37_500, 3_750]);
        // A global `bfc.hrtt` overrides every port (τ = its half).
        let fixed = BfcConfig {
            hrtt_ps: Some(10 * US),
            ..cfg
        };
        let rig = Rig::with_links(&fixed, &[(100 * GBPS, 200 * US), (10 * GBPS, US)]);
        assert!(
            rig.sw
                .ports
                .iter()
                .all(|p| p.hrtt_ps == 10 * US && p.tau_ps == 5 * US)
        );
    }

    #[test]
    fn pause_and_resume_one_flow_at_exactly_the_threshold() {
        // One flow, so N_active = 1: Th = (2 µs + 1 µs) × 100 Gb/s / 8 = 37,500 B. The 37th
        // packet leaves the queue at 37,000 B ≤ Th; the 38th brings it to 38,000 B > Th and
        // pauses the flow: its VFID enters the filter of ingress 0.
        let mut r = Rig::new(&cfg());
        let v = vfid(1, 100, 7, 100, r.sw.vfid_table);
        for i in 1..=37 {
            let q = r.arrive(1, 0);
            assert_eq!(q, FIRST_PHYSICAL, "the first free physical queue");
            assert_eq!(r.sw.c.flows_paused, 0, "paused after {i} packets");
        }
        r.arrive(1, 0);
        assert_eq!(r.sw.c.flows_paused, 1);
        assert!(r.entry(1, 0).has(PAUSED));
        assert!(r.sw.ports[0].bloom.contains(v));
        // More packets in flight keep it paused (no second pause).
        r.arrive(1, 0);
        assert_eq!(r.sw.c.flows_paused, 1);
        // 39 packets: the first departure leaves 38,000 B > Th, the second 37,000 B ≤ Th:
        // only then is the flow due for resumption.
        r.depart(FIRST_PHYSICAL);
        assert!(!r.entry(1, 0).has(RESUME_PENDING));
        r.depart(FIRST_PHYSICAL);
        assert!(r.entry(1, 0).has(RESUME_PENDING));
        assert!(
            r.sw.ports[0].bloom.contains(v),
            "resumed only at the τ tick"
        );
        r.now_ps = US;
        r.tick(1);
        assert_eq!(r.sw.c.flows_resumed, 1);
        assert!(!r.entry(1, 0).has(PAUSED));
        assert!(!r.sw.ports[0].bloom.contains(v));
        // The tick of ingress 0 sends the (now empty, changed) filter upstream.
        r.tick(0);
        assert_eq!(r.sw.c.pause_frames, 1);
        assert!(
            r.out
                .items
                .iter()
                .any(|(_, e)| matches!(e, Emit::Control { port: 0, .. }))
        );
    }

    #[test]
    fn at_most_one_resume_per_queue_per_tau() {
        // One physical queue, so flows 1 and 2 (ingresses 0 and 1... both on ingress 0 here)
        // share it. Both are paused above Th; both become due when the queue drains; one tick
        // resumes exactly one, the next tick the other.
        let mut r = Rig::new(&BfcConfig {
            physical_queues: 1,
            ..cfg()
        });
        for _ in 0..40 {
            r.arrive(1, 0);
            r.arrive(2, 0);
        }
        assert_eq!(r.sw.c.flows_paused, 2);
        assert!(r.sw.c.collisions >= 1, "the second flow collided");
        for _ in 0..80 {
            r.depart(FIRST_PHYSICAL);
        }
        assert_eq!(r.sw.ports[1].resume[0].len(), 2);
        r.now_ps = US;
        r.tick(1);
        assert_eq!(r.sw.c.flows_resumed, 1, "one resume per queue per τ");
        assert_eq!(r.sw.c.resumes_deferred, 1, "the pacing held one flow back");
        r.now_ps = 2 * US;
        r.tick(1);
        assert_eq!(r.sw.c.flows_resumed, 2);
        // Both flows left the switch entirely: their entries are gone, the queue is free.
        assert_eq!(r.sw.table.table_used + r.sw.table.cache_used, 0);
    }

    #[test]
    fn buffer_opt_makes_every_paused_flow_of_a_drained_queue_due() {
        // One physical queue (N_active = 1, Th = 37,500 B = 37 packets). Arrivals: 40 packets
        // of flow 1 (paused at its 38th), 40 of flow 2 (paused at its first: the queue is above
        // Th), 10 more of flow 1. 53 departures take the queue from 90 to 37 packets ≤ Th; the
        // 53rd packet to leave is flow 2's (packets 41–80), and flow 1's last 10 are at the tail.
        // BFC (§3.4–3.5): only flow 2 is due — flow 1 becomes due when a packet of its own
        // leaves (the 81st departure). BFC-BufferOpt (§3.5's strawman): both are due at once.
        for whole in [false, true] {
            let mut r = Rig::new(&BfcConfig {
                physical_queues: 1,
                resume_whole_queue: whole,
                resumes_per_tau: if whole { 1000 } else { 1 },
                ..cfg()
            });
            for _ in 0..40 {
                r.arrive(1, 0);
            }
            for _ in 0..40 {
                r.arrive(2, 0);
            }
            for _ in 0..10 {
                r.arrive(1, 0);
            }
            assert_eq!(r.sw.c.flows_paused, 2);
            for _ in 0..52 {
                r.depart(FIRST_PHYSICAL);
            }
            assert!(!r.entry(1, 0).has(RESUME_PENDING), "38 packets > Th");
            assert!(!r.entry(2, 0).has(RESUME_PENDING));
            r.depart(FIRST_PHYSICAL);
            assert!(
                r.entry(2, 0).has(RESUME_PENDING),
                "its packet left at 37 ≤ Th"
            );
            assert_eq!(r.entry(1, 0).has(RESUME_PENDING), whole);
            assert_eq!(r.sw.ports[1].resume[0].len(), if whole { 2 } else { 1 });
            assert_eq!(r.sw.c.due_threshold, 1, "flow 2, by its own departure");
            assert_eq!(r.sw.c.due_whole_queue, whole as u64, "flow 1, by its queue");
            r.now_ps = US;
            r.tick(1);
            assert_eq!(r.sw.c.flows_resumed, if whole { 2 } else { 1 });
            if !whole {
                // BFC: flow 1 is due only once one of its packets leaves (departure 81).
                for _ in 53..80 {
                    r.depart(FIRST_PHYSICAL);
                }
                assert!(!r.entry(1, 0).has(RESUME_PENDING));
                r.depart(FIRST_PHYSICAL);
                assert!(r.entry(1, 0).has(RESUME_PENDING));
            }
        }
    }

    #[test]
    fn dynamic_assignment_distinct_queues_collisions_and_release() {
        // 20 flows (< 32 queues) get 20 distinct queues and no collision.
        let mut r = Rig::new(&cfg());
        let qs: std::collections::HashSet<usize> = (0..20).map(|f| r.arrive(f, 0)).collect();
        assert_eq!(qs.len(), 20);
        assert_eq!(r.sw.c.collisions, 0);
        // 20 more: the first 12 take the remaining free queues, the last 8 collide.
        for f in 20..40 {
            r.arrive(f, 0);
        }
        assert_eq!(r.sw.c.assignments, 40);
        assert_eq!(r.sw.c.collisions, 8);
        // A queue whose last packet leaves is free again: drain queue FIRST_PHYSICAL + 31
        // (flow 31 and a colliding one), then a new flow gets exactly that queue.
        let last = FIRST_PHYSICAL + 31;
        while r.ports[1].queues[last].bytes > 0 {
            r.depart(last);
        }
        assert_eq!(r.arrive(1000, 0), last);
        assert_eq!(r.sw.c.collisions, 8);
    }

    #[test]
    fn upstream_holds_a_queue_whose_head_matches_the_filter() {
        let mut r = Rig::new(&cfg());
        let q1 = r.arrive(1, 0);
        let q2 = r.arrive(2, 0);
        // A filter from the downstream of egress 1 that pauses flow 1.
        let mut f = CountingBloom::new(1024, 4);
        f.insert(vfid(1, 100, 7, 100, r.sw.vfid_table));
        let frame = r.arena.alloc(Packet {
            hdr: BfcHdr {
                bits: 1024,
                hashes: 4,
            }
            .header(),
            ..Packet::default()
        });
        *r.arena.payload_mut(frame) = f.bits;
        assert_eq!(r.with(|s, c| s.on_control(c, frame, 1)), Verdict::Consumed);
        assert_eq!(r.ports[1].held, 1u64 << q1);
        let q = r.ports[1].select(crate::config::SchedulerKind::RoundRobin, |_| 1000);
        assert_eq!(q, Some(q2), "the held queue is skipped");
        // An empty filter releases it (and kicks the port).
        let frame = r.arena.alloc(Packet {
            hdr: BfcHdr {
                bits: 1024,
                hashes: 4,
            }
            .header(),
            ..Packet::default()
        });
        *r.arena.payload_mut(frame) = [0; 16];
        r.with(|s, c| s.on_control(c, frame, 1));
        assert_eq!(r.ports[1].held, 0);
        assert!(
            r.out
                .items
                .iter()
                .any(|(_, e)| matches!(e, Emit::Kick { port: 1 }))
        );
    }
}
