//! The switch forwarding path: arrival → lookup (ECMP) → ingress hook → MMU admission →
//! enqueue → (when the port is free) scheduler → dequeue hook → transmit.

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

    /// A packet reached switch `s` on port `in_port`.
    pub(crate) fn switch_receive(&mut self, s: usize, in_port: u16, p: u32) {
        let now = self.q.now();
        let pkt = *self.arena.get(p);
        if pkt.kind == PktKind::Pfc {
            // Hop-by-hop PFC frames are consumed by the PFC module (lossless fabric).
            self.counters.packets_consumed += 1;
            self.arena.free(p);
            return;
        }
        // Forwarding lookup.
        let sw = &self.switches[s];
        let hops = self.routes.next_hops(sw.node, pkt.dst);
        let egress = match hops.len() {
            0 => {
                // No route: cannot happen on a validated topology; count as a drop.
                self.counters.drops_no_route += 1;
                self.arena.free(p);
                return;
            }
            1 => hops[0],
            n => hops[Self::ecmp_pick(sw.ecmp_seed, pkt.src, pkt.dst, pkt.sport, pkt.dport, n)],
        };
        let nq = self.cfg.queues_per_port;
        let q = match pkt.kind {
            PktKind::Cnp | PktKind::Bts | PktKind::Pfc => 0,
            _ => (pkt.prio as usize).min(nq - 1),
        };
        self.arena.get_mut(p).in_port = in_port;

        // Hook: ingress (after lookup). Schemes that act here (SFC trigger / pause cache, BFC
        // queue assignment) are added by their modules.

        // MMU admission.
        let size = pkt.size as u64;
        let sw = &mut self.switches[s];
        if q != 0 {
            let qb = sw.ports[egress as usize].queues[q].bytes;
            if !sw.mmu.admit(qb, size) {
                sw.mmu.drops += 1;
                self.counters.drops += 1;
                self.arena.free(p);
                return;
            }
            sw.mmu.charge(in_port, q, size);
            let used = sw.mmu.used_bytes;
            self.buffer_mon.update(s, now, used);
        }
        let port = &mut sw.ports[egress as usize];
        port.queues[q].pkts.push_back(p);
        port.queues[q].bytes += size;
        port.bytes += size;
        // Hook: enqueue.
        if !port.busy {
            self.switch_try_send(s, egress);
        }
    }

    /// Serve the next packet of port `port` of switch `s` if the port is idle.
    pub(crate) fn switch_try_send(&mut self, s: usize, port: u16) {
        let now = self.q.now();
        let sched = self.cfg.scheduler;
        let sw = &mut self.switches[s];
        let ep = &mut sw.ports[port as usize];
        if ep.busy {
            return;
        }
        let arena = &self.arena;
        let Some(q) = ep.select(sched, |p| arena.get(p).size) else {
            return;
        };
        let Some(p) = ep.queues[q].pkts.pop_front() else {
            return;
        };
        let pkt = self.arena.get(p);
        let size = pkt.size as u64;
        let in_port = pkt.in_port;
        ep.queues[q].bytes -= size;
        ep.bytes -= size;
        if q != 0 {
            sw.mmu.release(in_port, q, size);
            let used = sw.mmu.used_bytes;
            self.buffer_mon.update(s, now, used);
        }
        // Hook: dequeue (ECN marking, INT stamping, egress BTS, PFC resume) — added by the
        // schemes that need it.
        let node = self.switches[s].node;
        self.transmit(node, port, p);
    }
}
