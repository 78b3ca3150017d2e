//! The switch half of SFC: ingress trigger, Bloom suppression, BTS construction and routing,
//! pause caching at the switches a BTS crosses, the Egress-BTS variant, SFC-P conversion and
//! the optional incast estimator (Algorithm 1 of the SFC paper).

use crate::engine::arena::{Hdr, Packet, PktKind};
use crate::sfc::{SfcMode, quantize};
use crate::sim::Simulator;

/// What to do with a BTS after the transit hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BtsTransit {
    /// Keep forwarding it towards the sender.
    Forward,
    /// It was consumed here (SFC-P converted it into a PFC pause).
    Consumed,
}

/// 5-tuple key of a data packet for the Bloom filter.
#[inline]
fn flow_key(h: &Hdr) -> u64 {
    ((h.src as u64) << 40)
        ^ ((h.dst as u64) << 16)
        ^ ((h.sport as u64) << 24)
        ^ h.dport as u64
        ^ 0x11 << 56
}

impl Simulator {
    /// SFC ingress logic for a data packet just enqueued at switch `s` into (egress, q);
    /// `depth_before` is the queue depth the ingress saw before the enqueue (Tofino 2's queue
    /// depth at ingress).
    pub(crate) fn sfc_ingress(
        &mut self,
        s: usize,
        p: u32,
        h: &Hdr,
        egress: u16,
        q: usize,
        depth_before: u64,
    ) {
        let mode = self.cfg.sfc.mode;
        let now = self.q.now();
        let Some(st) = self.switches[s].sfc.as_mut() else {
            return;
        };
        if !st.enabled || mode == SfcMode::Egress {
            return;
        }
        let ep = &self.switches[s].ports[egress as usize];
        let congested = depth_before > ep.sfc_qth;
        let st = self.switches[s].sfc.as_mut().expect("checked");
        let cache_time = if matches!(mode, SfcMode::Sfc | SfcMode::SfcP) {
            st.cache.remaining(h.dst, h.prio, now)
        } else {
            0
        };
        let mut estimate = 0;
        if let Some(est) = st.estimator.as_mut() {
            let d = self.routes.host_index(h.dst).unwrap_or(0) as usize;
            // The remote bottleneck is the receiver's host link (host rate).
            estimate = est.observe(d, h.size as u64, now, self.host_rate_bps);
        }
        if !(congested || cache_time > 0 || estimate > 0) {
            return;
        }
        if st.bloom.check_and_insert(flow_key(h), now) {
            self.sfc_counters.bts_suppressed += 1;
            return;
        }
        if !congested {
            if cache_time > 0 {
                self.sfc_counters.bts_from_cache += 1;
            } else {
                self.sfc_counters.bts_from_estimator += 1;
            }
        }
        // BTS egress: the pause uses the latest depth of the data's queue (after the enqueue).
        let ep = &self.switches[s].ports[egress as usize];
        let depth_now = ep.queues[q].bytes;
        let drain = depth_now.saturating_sub(ep.sfc_qtg) as u128 * 8_000_000_000_000u128
            / ep.link.rate_bps as u128;
        let pause = (drain as u64).max(cache_time).max(estimate);
        let pause = quantize(pause, self.cfg.sfc.pause_quantum_ps);
        let cacheable = ep.host_facing && self.switches[s].tier == 1;
        self.sfc_send_bts(s, p, h, pause, cacheable);
    }

    /// Egress-BTS variant: at dequeue of data packet `p` from (port, q) of switch `s`.
    pub(crate) fn sfc_egress(&mut self, s: usize, port: u16, q: usize, p: u32) {
        let now = self.q.now();
        let Some(st) = self.switches[s].sfc.as_mut() else {
            return;
        };
        if !st.enabled {
            return;
        }
        let ep = &self.switches[s].ports[port as usize];
        let depth = ep.queues[q].bytes;
        if depth <= ep.sfc_qth {
            return;
        }
        let h = Hdr::of(self.arena.get(p));
        let drain = depth.saturating_sub(ep.sfc_qtg) as u128 * 8_000_000_000_000u128
            / ep.link.rate_bps as u128;
        let cacheable = ep.host_facing && self.switches[s].tier == 1;
        let st = self.switches[s].sfc.as_mut().expect("checked");
        if st.bloom.check_and_insert(flow_key(&h), now) {
            self.sfc_counters.bts_suppressed += 1;
            return;
        }
        let pause = quantize(drain as u64, self.cfg.sfc.pause_quantum_ps);
        self.sfc_send_bts(s, p, &h, pause, cacheable);
    }

    /// Build a BTS for data packet `p` (header `h`) and route it from switch `s` towards the
    /// data's sender through the forwarding table, in the strict-priority class.
    fn sfc_send_bts(&mut self, s: usize, p: u32, h: &Hdr, pause_ps: u64, cacheable: bool) {
        let d = *self.arena.get(p);
        let bts = self.arena.alloc(Packet {
            kind: PktKind::Bts,
            prio: d.prio,
            flag: cacheable,
            flow: d.flow,
            src: h.dst,
            dst: h.src,
            sport: h.dport,
            dport: h.sport,
            seq: d.seq,
            size: self.cfg.sfc.bts_bytes,
            ts_ps: pause_ps,
            ..Packet::default()
        });
        self.sfc_counters.bts_generated += 1;
        // Recirculate: the BTS enters this switch's own ingress (cache update, then the
        // forwarding table picks the port towards the sender; control class, no MMU).
        let egress = self.switch_route(s, &crate::engine::arena::Hdr::of(self.arena.get(bts)));
        self.switch_receive(s, 0, bts, egress);
    }

    /// A BTS traverses switch `s` (including the one that generated it): update the pause
    /// cache if it is cacheable, or (SFC-P) turn it into a PFC pause at the sender's ToR.
    pub(crate) fn sfc_bts_transit(&mut self, s: usize, p: u32) -> BtsTransit {
        let now = self.q.now();
        let mode = self.cfg.sfc.mode;
        let b = *self.arena.get(p);
        let Some(st) = self.switches[s].sfc.as_mut() else {
            return BtsTransit::Forward;
        };
        if !st.enabled {
            return BtsTransit::Forward;
        }
        if b.flag && matches!(mode, SfcMode::Sfc | SfcMode::SfcP) {
            st.cache.update(b.src, b.prio, now + b.ts_ps, now);
        }
        if mode == SfcMode::SfcP {
            // Sender-side ToR: the route to the BTS destination is a host-facing port.
            let hops = self.routes.next_hops(self.switches[s].node, b.dst);
            if let [port] = hops
                && self.switches[s].ports[*port as usize].host_facing
            {
                let port = *port;
                self.sfc_counters.sfcp_pfc_frames += 1;
                self.pfc_send_raw(s, port, b.prio as usize, b.ts_ps.max(1));
                self.counters.packets_consumed += 1;
                self.arena.free(p);
                return BtsTransit::Consumed;
            }
        }
        BtsTransit::Forward
    }
}
