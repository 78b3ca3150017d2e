//! The switch forwarding path: arrival → lookup (ECMP) → ingress hook → MMU admission →
//! enqueue → (when the port is free) scheduler → dequeue hook → transmit.

use crate::engine::NO_EGRESS;
use crate::engine::arena::PktKind;
use crate::rng::mix64;
use crate::sim::Simulator;

impl Simulator {
    /// Per-flow ECMP choice among `n` equal-cost ports at a switch: a hash of the 5-tuple
    /// (src, dst, sport, dport; protocol is always UDP) salted per switch, so a flow never
    /// changes path and different switches choose independently. (HPCC-sim uses murmur3 with
    /// the node id as seed; the hash differs, the distribution does not.)
    #[inline]
    pub fn ecmp_pick(seed: u64, src: u32, dst: u32, sport: u16, dport: u16, n: usize) -> usize {
        let k = ((src as u64) << 32) | dst as u64;
        let h = mix64(seed ^ mix64(k ^ mix64(((sport as u64) << 16) | dport as u64)));
        ((h as u128 * n as u128) >> 64) as usize
    }

    /// The forwarding decision of switch `s` for a packet with header `h`: the egress port
    /// (ECMP among equal-cost ports), or `NO_EGRESS` if the destination is unreachable.
    #[inline]
    pub(crate) fn switch_route(&self, s: usize, h: &crate::engine::arena::Hdr) -> u16 {
        let sw = &self.switches[s];
        let hops = self.routes.next_hops(sw.node, h.dst);
        match hops.len() {
            0 => NO_EGRESS,
            1 => hops[0],
            n => hops[Self::ecmp_pick(sw.ecmp_seed, h.src, h.dst, h.sport, h.dport, n)],
        }
    }

    /// A packet reached switch `s` on port `in_port`; `egress` is its forwarding decision at
    /// `s` (from [`Self::switch_route`], made when it was sent to this switch).
    pub(crate) fn switch_receive(&mut self, s: usize, in_port: u16, p: u32, egress: u16) {
        let now = self.q.now();
        // Read only the header fields the pipeline needs (the packet is ~200 B with INT).
        let pr = self.arena.get_mut(p);
        pr.in_port = in_port;
        let pkt = crate::engine::arena::Hdr::of(pr);
        if pkt.kind == PktKind::Pfc {
            // Hop-by-hop: PFC frames stop here.
            let node = self.switches[s].node;
            let full = *self.arena.get(p);
            self.pfc_receive(node, in_port, &full);
            self.counters.packets_consumed += 1;
            self.arena.free(p);
            return;
        }
        if pkt.kind == PktKind::Bts
            && self.switches[s].sfc.is_some()
            && self.sfc_bts_transit(s, p) == crate::sfc::switch::BtsTransit::Consumed
        {
            return;
        }
        debug_assert_eq!(
            egress,
            self.switch_route(s, &pkt),
            "stale forwarding decision"
        );
        if egress == NO_EGRESS {
            // No route: cannot happen on a validated topology; count as a drop.
            self.counters.drops_no_route += 1;
            self.arena.free(p);
            return;
        }
        let nq = self.cfg.queues_per_port;
        let q = match pkt.kind {
            PktKind::Cnp | PktKind::Bts | PktKind::Pfc => 0,
            _ => (pkt.prio as usize).min(nq - 1),
        };

        // Hook: ingress (after lookup). Schemes that act here (SFC trigger / pause cache, BFC
        // queue assignment) are added by their modules.

        // MMU admission.
        let size = pkt.size as u64;
        let sw = &mut self.switches[s];
        let mut xoff = false;
        if q != 0 {
            let admitted = match &mut sw.pfc {
                // Lossless: HPCC-sim's ingress admission (headroom overflow is the only drop).
                Some(pfc) => {
                    let ok = pfc.admit(in_port, q, size);
                    if ok {
                        pfc.charge(in_port, q, size);
                        xoff = pfc.should_pause(in_port, q);
                    } else {
                        self.counters.drops_lossless += 1;
                    }
                    ok
                }
                None => sw
                    .mmu
                    .admit(sw.ports[egress as usize].queues[q].bytes, size),
            };
            if !admitted {
                sw.mmu.drops += 1;
                self.counters.drops += 1;
                // SFC triggers at ingress, before the buffer decides (Algorithm 1): a packet
                // the MMU refuses can still signal its sender.
                if pkt.kind == PktKind::Data && sw.sfc.is_some() {
                    let depth = sw.ports[egress as usize].queues[q].bytes;
                    self.sfc_ingress(s, p, &pkt, egress, q, depth);
                }
                self.arena.free(p);
                return;
            }
            sw.mmu.charge(in_port, q, size);
            let used = sw.mmu.used_bytes;
            self.buffer_mon.update(s, now, used);
        }
        let port = &mut sw.ports[egress as usize];
        let depth_before = port.queues[q].bytes;
        port.enqueue(q, p, size);
        if port.mon != u32::MAX {
            self.queue_mon.update(port.mon as usize, now, port.bytes);
        }
        // Hook: ingress/enqueue. SFC's trigger sees the depth before this packet.
        if pkt.kind == PktKind::Data && sw.sfc.is_some() {
            self.sfc_ingress(s, p, &pkt, egress, q, depth_before);
        }
        if xoff {
            self.pfc_send(s, in_port, q, true);
        }
        self.switch_try_send(s, egress);
    }

    /// Serve the next packet of port `port` of switch `s` if the port is idle.
    pub(crate) fn switch_try_send(&mut self, s: usize, port: u16) {
        let now = self.q.now();
        let sched = self.cfg.scheduler;
        let sw = &mut self.switches[s];
        let ep = &mut sw.ports[port as usize];
        // Busy until `busy_until_ps` inclusive: a port that finishes exactly now takes its next
        // packet in its TxDone event, after every packet arriving at this instant (arrivals
        // are ordered before departures at equal times). 0 = freed by its TxDone.
        if ep.busy_until_ps >= now && ep.busy_until_ps != 0 {
            // Still serializing: make sure the port wakes up when it is done.
            if !ep.txdone_pending {
                ep.txdone_pending = true;
                let t = ep.busy_until_ps;
                let node = sw.node;
                self.q
                    .schedule(t, crate::engine::Event::TxDone { node, port });
            }
            return;
        }
        let arena = &self.arena;
        let Some(q) = ep.select(sched, |p| arena.get(p).size) else {
            return;
        };
        let Some((p, size)) = ep.dequeue(q, |p| arena.get(p).size as u64) else {
            return;
        };
        if ep.mon != u32::MAX {
            self.queue_mon.update(ep.mon as usize, now, ep.bytes);
        }
        // The next packet of this queue leaves no earlier than one serialization from now:
        // start loading it (it was queued long ago and is out of cache).
        if let Some(next) = ep.head(q) {
            self.arena.prefetch(next);
        }
        let pkt = self.arena.get_mut(p);
        let in_port = pkt.in_port;
        let mut xon = false;
        if q != 0 {
            sw.mmu.release(in_port, q, size);
            if let Some(pfc) = &mut sw.pfc {
                pfc.release(in_port, q, size);
                xon = pfc.should_resume(in_port, q);
            }
            let used = sw.mmu.used_bytes;
            self.buffer_mon.update(s, now, used);
            // Hook: dequeue. ECN: RED on the backlog left behind this packet (HPCC-sim).
            if pkt.kind == PktKind::Data {
                if let Some(t) = &ep.ecn
                    && crate::switch::ecn::should_mark(ep.queues[q].bytes, t, &mut sw.rng)
                {
                    pkt.ce = true;
                    self.counters.ecn_marks += 1;
                }
                // INT: {time, tx bytes before this packet, port backlog after, line rate}.
                if self.cfg.int_enabled && (pkt.int_n as usize) < crate::engine::arena::MAX_INT_HOPS
                {
                    let k = pkt.int_n as usize;
                    pkt.int_n += 1;
                    self.arena.int_mut(p)[k] = crate::engine::arena::IntHop {
                        ts_ps: now,
                        tx_bytes: ep.link.tx_bytes,
                        qlen_bytes: ep.bytes.min(u32::MAX as u64) as u32,
                        rate_mbps: (ep.link.rate_bps / 1_000_000) as u32,
                    };
                }
            }
        }
        if self.cfg.sfc.mode == crate::sfc::SfcMode::Egress
            && self.switches[s].sfc.is_some()
            && self.arena.get(p).kind == PktKind::Data
        {
            self.sfc_egress(s, port, q, p);
        }
        let node = self.switches[s].node;
        self.transmit(node, port, p);
        if xon {
            self.pfc_send(s, in_port, q, false);
        }
    }
}
