//! The switch forwarding path: arrival → (scheme control packets) → lookup (ECMP) → queue
//! selection → ingress hook → admission (scheme or MMU) → enqueue hook → (when the port is
//! free) scheduler → dequeue hook → transmit → departure hook. Schemes plug in at the hooks
//! ([`crate::scheme`]); what they ask for in their outbox is carried out by
//! `Simulator::switch_flush` at the end of each stage, in order.

use crate::engine::NO_EGRESS;
use crate::engine::packet::{Hdr, Header, IntHop, PktKind};
use crate::registry::SwitchSchemes;
use crate::rng::mix64;
use crate::scheme::{Emit, Hop, SchemeId, SwitchCtx, Verdict, hook};
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
    #[inline(always)]
    pub(crate) fn switch_route(&self, s: usize, h: &Hdr) -> u16 {
        Self::route_at(&self.routes, &self.switches[s], h)
    }

    /// [`Self::switch_route`] of switch `sw` on the forwarding tables `routes`.
    #[inline(always)]
    pub(crate) fn route_at(
        routes: &crate::topology::routing::RouteTable,
        sw: &crate::registry::Switch,
        h: &Hdr,
    ) -> u16 {
        let hops = routes.next_hops(sw.node, h.dst);
        match hops.len() {
            0 => NO_EGRESS,
            1 => hops[0],
            n => hops[Self::ecmp_pick(sw.ecmp_seed, h.src, h.dst, h.sport, h.dport, n)],
        }
    }

    /// Run `f` on the schemes of switch `s`, given the set of scheme ids that implement hook
    /// `flag` (a single [`hook`] bit) and a context on that switch. Requests land in the
    /// outbox; the caller flushes.
    #[inline(always)]
    fn switch_stage<R>(
        &mut self,
        s: usize,
        flag: u16,
        f: impl FnOnce(&mut SwitchSchemes, u16, &mut SwitchCtx<'_>) -> R,
    ) -> R {
        let now_ps = self.q.now();
        let event_no = self.q.events();
        let sw = &mut self.switches[s];
        let set = sw.by_hook[hook::slot(flag)];
        let mut ctx = SwitchCtx {
            now_ps,
            node: sw.node,
            tier: sw.tier,
            ports: &mut sw.ports,
            arena: &mut self.arena,
            rng: &mut sw.rng,
            env: &self.env,
            routes: &self.routes,
            out: &mut self.outbox,
            event_no,
        };
        f(&mut sw.schemes, set, &mut ctx)
    }

    /// Run `f` on the schemes of switch `s`, then carry out their requests.
    pub(crate) fn switch_scheme_call(
        &mut self,
        s: usize,
        f: impl FnOnce(&mut SwitchSchemes, &mut SwitchCtx<'_>),
    ) {
        let start = self.outbox.len();
        self.switch_stage(s, 0, |sc, _, ctx| f(sc, ctx));
        self.switch_flush(s, start);
    }

    /// Carry out, in order, the requests schemes of switch `s` made since `start` (including
    /// those made while carrying them out), then drop them from the outbox.
    #[inline(always)]
    pub(crate) fn switch_flush(&mut self, s: usize, start: usize) {
        if self.outbox.len() > start {
            self.switch_flush_pending(s, start);
        }
    }

    /// Like [`Self::switch_flush`] for requests made since `start`, of which those before
    /// `mid` (made at an earlier stage: admission) are deferred after those made since `mid`.
    #[inline(always)]
    fn switch_flush_deferred(&mut self, s: usize, start: usize, mid: usize) {
        let len = self.outbox.len();
        if len > start {
            if mid > start && len > mid {
                self.outbox.items[start..].rotate_left(mid - start);
            }
            self.switch_flush_pending(s, start);
        }
    }

    #[inline(never)]
    fn switch_flush_pending(&mut self, s: usize, start: usize) {
        let mut i = start;
        while i < self.outbox.len() {
            let (id, e) = self.outbox.items[i];
            i += 1;
            match e {
                Emit::Recirculate(pkt) => {
                    // Recirculation: the packet enters this switch's own ingress (port 0).
                    let egress = self.switch_route(s, &Hdr::of(self.arena.get(pkt)));
                    self.switch_receive(s, 0, pkt, egress);
                }
                Emit::Control { port, pkt } => {
                    let size = self.arena.get(pkt).size as u64;
                    self.switches[s].ports[port as usize].enqueue(0, pkt, size);
                    self.switch_try_send(s, port);
                }
                Emit::Kick { port } => self.switch_try_send(s, port),
                Emit::Release { bytes } => self.switches[s].mmu.release(bytes),
                Emit::Timer {
                    at_ps,
                    port,
                    which,
                    arg,
                } => {
                    let node = self.switches[s].node;
                    self.q.schedule(
                        at_ps,
                        crate::engine::Event::SchemeTimer {
                            node,
                            port,
                            scheme: id.0,
                            which,
                            arg,
                        },
                    );
                }
                Emit::Call { port, which, arg } => {
                    self.switch_scheme_call(s, |sc, ctx| sc.on_timer(id, ctx, port, which, arg));
                }
            }
        }
        self.outbox.items.truncate(start);
    }

    /// The run ends: the schemes of switch `s` close their open intervals.
    pub(crate) fn switch_finish(&mut self, s: usize) {
        self.switch_scheme_call(s, |sc, ctx| sc.finish(ctx));
    }

    /// A scheme timer of switch `s` fired.
    pub(crate) fn switch_timer(&mut self, s: usize, id: SchemeId, port: u16, which: u8, arg: u8) {
        self.switch_scheme_call(s, |sc, ctx| sc.on_timer(id, ctx, port, which, arg));
    }

    /// A packet reached switch `s` on port `in_port`; `egress` is its forwarding decision at
    /// `s` (from [`Self::switch_route`], made when it was sent to this switch).
    pub(crate) fn switch_receive(&mut self, s: usize, in_port: u16, p: u32, egress: u16) {
        let now = self.q.now();
        let pr = self.arena.get_mut(p);
        pr.in_port = in_port;
        let pkt = Hdr::of(pr);
        let hooks = self.switches[s].hooks;
        let transport = matches!(
            pkt.kind,
            PktKind::Data | PktKind::Ack | PktKind::Nack | PktKind::Cnp
        );
        if !transport {
            // A scheme's own packet (PFC frame, BTS): its owner sees it first.
            let start = self.outbox.len();
            let v = self.switch_stage(s, 0, |sc, _, ctx| sc.on_control(ctx, p, in_port));
            self.switch_flush(s, start);
            if v == Some(Verdict::Consumed) {
                self.counters.packets_consumed += 1;
                self.arena.free(p);
                return;
            }
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
        // Queue: data, ACKs and NACKs by priority (or as a scheme assigns), control in 0.
        let nq = self.cfg.queues_per_port;
        let mut q = if transport && pkt.kind != PktKind::Cnp {
            (pkt.prio as usize).min(nq - 1)
        } else {
            0
        };
        if hooks & hook::SELECT_QUEUE != 0
            && let Some(sel) = self.switch_stage(s, hook::SELECT_QUEUE, |sc, set, ctx| {
                sc.select_queue(set, ctx, p, egress)
            })
        {
            q = sel.min(nq - 1);
        }
        let size = pkt.size as u64;
        let at = Hop {
            in_port,
            egress,
            q,
            size,
        };
        if hooks & hook::INGRESS != 0 {
            let start = self.outbox.len();
            let v = self.switch_stage(s, hook::INGRESS, |sc, set, ctx| {
                sc.on_ingress(set, ctx, p, &at)
            });
            self.switch_flush(s, start);
            match v {
                Verdict::Drop => {
                    self.counters.drops += 1;
                    self.arena.free(p);
                    return;
                }
                Verdict::Consumed => {
                    self.counters.packets_consumed += 1;
                    self.arena.free(p);
                    return;
                }
                Verdict::Pass => {}
            }
        }
        // Admission of the data classes; the control class bypasses the MMU (HPCC-sim).
        // Requests made at admission are carried out once the packet's fate is settled:
        // after the enqueue (or failure) hooks' requests.
        let admit_start = self.outbox.len();
        if q != 0 {
            let owner = if hooks & hook::ADMIT != 0 {
                self.switch_stage(s, hook::ADMIT, |sc, set, ctx| sc.admit(set, ctx, p, &at))
            } else {
                None
            };
            let sw = &mut self.switches[s];
            let admitted = match owner {
                Some(ok) => ok,
                None => sw
                    .mmu
                    .admit(sw.ports[egress as usize].queues[q].bytes, size),
            };
            if !admitted {
                self.counters.drops += 1;
                let start = self.outbox.len();
                if hooks & hook::ADMISSION_FAILURE != 0 {
                    self.switch_stage(s, hook::ADMISSION_FAILURE, |sc, set, ctx| {
                        sc.on_admission_failure(set, ctx, p, &at)
                    });
                }
                self.switch_flush_deferred(s, admit_start, start);
                self.arena.free(p);
                return;
            }
            sw.mmu.charge(size);
            let used = sw.mmu.used_bytes;
            self.buffer_mon.update(s, now, used);
        }
        let sched = self.cfg.scheduler;
        let port = &mut self.switches[s].ports[egress as usize];
        if hooks & hook::ENQUEUE == 0
            && self.outbox.len() == admit_start
            && port.nonempty == 0
            && !port.tx.busy(now)
            && port.select_alone(q, sched)
        {
            // The port is idle and every queue empty, nothing runs between the enqueue and
            // the scheduler (no enqueue hook, no request to carry out), and the scheduler
            // takes this packet (its state advanced as `select` advances it): the packet
            // leaves at once. Queueing and dequeueing it would change nothing else; the
            // queue monitor sees the same two samples.
            if port.mon != u32::MAX {
                let (mon, bytes) = (port.mon as usize, port.bytes);
                self.queue_mon.update(mon, now, bytes + size);
                self.queue_mon.update(mon, now, bytes);
            }
            self.switch_depart(s, egress, q, p, size);
            return;
        }
        let depth_before = port.queues[q].bytes;
        port.enqueue(q, p, size);
        if port.mon != u32::MAX {
            self.queue_mon.update(port.mon as usize, now, port.bytes);
        }
        let start = self.outbox.len();
        if hooks & hook::ENQUEUE != 0 {
            self.switch_stage(s, hook::ENQUEUE, |sc, set, ctx| {
                sc.on_enqueue(set, ctx, p, &at, depth_before)
            });
        }
        self.switch_flush_deferred(s, admit_start, start);
        self.switch_try_send(s, egress);
    }

    /// Serve the next packet of port `port` of switch `s` if the port is idle.
    pub(crate) fn switch_try_send(&mut self, s: usize, port: u16) {
        let now = self.q.now();
        let sched = self.cfg.scheduler;
        let sw = &mut self.switches[s];
        let ep = &mut sw.ports[port as usize];
        if ep.tx.busy(now) {
            // Still serializing: make sure the port wakes up when it is done.
            if !ep.tx.txdone_pending {
                ep.tx.txdone_pending = true;
                let (t, hint) = (ep.tx.busy_until_ps, ep.tx.hints.done);
                let node = sw.node;
                self.q
                    .schedule_hinted(t, crate::engine::Event::TxDone { node, port }, hint);
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
        self.switch_depart(s, port, q, p, size);
    }

    /// Packet `p` (`size` bytes) has just left queue `q` of port `port` of switch `s` (the
    /// scheduler chose it, or it found the port idle and its queues empty): return its
    /// buffer, stamp INT, run the dequeue hooks, start its transmission and run the departure
    /// hooks.
    #[inline(never)]
    fn switch_depart(&mut self, s: usize, port: u16, q: usize, p: u32, size: u64) {
        let now = self.q.now();
        let sw = &mut self.switches[s];
        let ep = &mut sw.ports[port as usize];
        let int_hops = self.arena.int_hops();
        let pkt = self.arena.get_mut(p);
        let in_port = pkt.in_port;
        if q != 0 {
            sw.mmu.release(size);
            let used = sw.mmu.used_bytes;
            self.buffer_mon.update(s, now, used);
            // INT: {time, tx bytes before this packet, port backlog after, line rate}.
            if self.cfg.int_enabled
                && let Header::Data(d) = &mut pkt.hdr
                && (d.int_n as usize) < int_hops
            {
                let k = d.int_n as usize;
                d.int_n += 1;
                self.arena.int_mut(p)[k] = IntHop {
                    ts_ps: now,
                    tx_bytes: ep.tx.link.tx_bytes,
                    qlen_bytes: ep.bytes.min(u32::MAX as u64) as u32,
                    rate_mbps: (ep.tx.link.rate_bps / 1_000_000) as u32,
                };
            }
        }
        let hooks = sw.hooks;
        let at = Hop {
            in_port,
            egress: port,
            q,
            size,
        };
        if hooks & hook::DEQUEUE != 0 {
            let start = self.outbox.len();
            self.switch_stage(s, hook::DEQUEUE, |sc, set, ctx| {
                sc.on_dequeue(set, ctx, p, &at)
            });
            self.switch_flush(s, start);
            self.switch_transmit(s, port, p);
        } else {
            // Nothing ran since the dequeue: the port is still at hand and the packet's size
            // is the one dequeued (what `switch_transmit` would look up again).
            let node = sw.node;
            let more = ep.nonempty != 0;
            let size = size as u32;
            let ser = self.cfg.framing.ser_ps(size, ep.tx.link.rate_bps);
            let d = Self::start_tx(&mut ep.tx, now, ser, size, more);
            self.launch(node, port, p, d);
        }
        if hooks & hook::DEPARTURE != 0 {
            let start = self.outbox.len();
            self.switch_stage(s, hook::DEPARTURE, |sc, set, ctx| {
                sc.on_departure(set, ctx, p, &at)
            });
            self.switch_flush(s, start);
            // A capture sets the departure stage on every switch ([`Self::start_capture`]):
            // a run without one pays nothing here.
            if self.capture.is_some() {
                self.capture_tx(self.switches[s].node, port, p, now);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::cc::CcConfig;
    use crate::cc::none::{NoneParams, NoneWindow};
    use crate::registry::NetConfig;
    use crate::scheme::Emit;
    use crate::sim::Simulator;
    use crate::topology::shapes;
    use crate::units::{GBPS, US};

    /// Requests made at admission are carried out after those of the later stage (enqueue or
    /// admission failure): with two control packets asked for on an idle port, the one asked
    /// for at the later stage is transmitted first and the admission one waits behind it.
    #[test]
    fn admission_requests_are_deferred_after_the_enqueue_stage() {
        let topo = shapes::star(2, 100 * GBPS, US).unwrap();
        let cc = CcConfig::None(NoneParams {
            window: NoneWindow::Unlimited,
        });
        let mut sim = Simulator::new(topo, NetConfig::default(), cc, &[]).unwrap();
        let node = sim.switches[0].node;
        let frame = |sim: &mut Simulator| {
            sim.arena
                .alloc(crate::scheme::pause::pfc_frame(node, 0, 64, 3, 0))
        };
        let (a, b) = (frame(&mut sim), frame(&mut sim));
        let start = sim.outbox.len();
        sim.outbox.current = crate::scheme::pfc::ID;
        sim.outbox.push(Emit::Control { port: 0, pkt: a }); // at admission
        let mid = sim.outbox.len();
        sim.outbox.push(Emit::Control { port: 0, pkt: b }); // at enqueue
        sim.switch_flush_deferred(0, start, mid);
        assert_eq!(sim.outbox.len(), start, "the outbox is drained");
        let port = &sim.switches[0].ports[0];
        assert!(
            port.tx.busy(sim.q.now()),
            "the enqueue-stage frame is on the wire"
        );
        assert_eq!(
            port.queues[0].pkts.iter().copied().collect::<Vec<_>>(),
            vec![a],
            "the admission-stage frame waits behind it"
        );
        // Nothing deferred: plain order.
        let (c, d) = (frame(&mut sim), frame(&mut sim));
        let start = sim.outbox.len();
        sim.outbox.push(Emit::Control { port: 1, pkt: c });
        sim.outbox.push(Emit::Control { port: 1, pkt: d });
        sim.switch_flush_deferred(0, start, start);
        let port = &sim.switches[0].ports[1];
        assert_eq!(
            port.queues[0].pkts.iter().copied().collect::<Vec<_>>(),
            vec![d]
        );
    }

    /// The INT record a switch stamps on a data packet is HPCC-sim's `SwitchNotifyDequeue`
    /// (`PushHop(now, m_txBytes[port], queue->GetNBytesTotal(), rate)`): the dequeue time,
    /// the port's bytes sent *before* this packet (control frames included: `m_txBytes` counts
    /// every packet), the port's backlog *after* the dequeue, and the port's line rate. By
    /// hand: three 1090 B data packets and one 64 B control frame queued on a 100 Gb/s port;
    /// the control frame leaves first (strict priority, no stamp); the first data packet then
    /// sees 64 B sent and 2 × 1090 = 2180 B still queued; the second 64 + 1090 = 1154 B sent
    /// and 1090 B queued.
    #[test]
    fn int_stamp_fields() {
        use crate::engine::packet::{DataHdr, Header};
        let topo = shapes::star(2, 100 * GBPS, US).unwrap();
        let cc = CcConfig::None(NoneParams {
            window: NoneWindow::Unlimited,
        });
        let cfg = NetConfig::from(crate::config::CoreConfig {
            int_enabled: true,
            ..Default::default()
        });
        let mut sim = Simulator::new(topo, cfg, cc, &[]).unwrap();
        assert!(sim.arena.int_hops() >= 1);
        let node = sim.switches[0].node;
        let data = |sim: &mut Simulator| {
            let mut pk = crate::scheme::pause::pfc_frame(node, 0, 1090, 3, 0);
            pk.hdr = Header::Data(DataHdr {
                payload: 1000,
                ..Default::default()
            });
            pk.prio = 3;
            sim.arena.alloc(pk)
        };
        let ps: Vec<u32> = (0..3).map(|_| data(&mut sim)).collect();
        let ctl = sim
            .arena
            .alloc(crate::scheme::pause::pfc_frame(node, 0, 64, 3, 0));
        for &p in &ps {
            sim.switches[0].mmu.charge(1090);
            sim.switches[0].ports[1].enqueue(3, p, 1090);
        }
        sim.switches[0].ports[1].enqueue(0, ctl, 64);
        // The control frame first (queue 0), then the data packets one by one (the port made
        // idle again by hand: the clock does not move in this test).
        sim.switch_try_send(0, 1);
        assert!(sim.switches[0].ports[1].queues[0].pkts.is_empty());
        let stamp = |sim: &mut Simulator, p: u32| {
            sim.switches[0].ports[1].tx.busy_until_ps = 0;
            sim.switch_try_send(0, 1);
            let n = match sim.arena.get(p).hdr {
                Header::Data(d) => d.int_n,
                _ => unreachable!(),
            };
            assert_eq!(n, 1);
            sim.arena.int(p)[0]
        };
        let h = stamp(&mut sim, ps[0]);
        assert_eq!(
            (h.ts_ps, h.tx_bytes, h.qlen_bytes, h.rate_mbps),
            (sim.q.now(), 64, 2180, 100_000)
        );
        let h = stamp(&mut sim, ps[1]);
        assert_eq!((h.tx_bytes, h.qlen_bytes), (64 + 1090, 1090));
        let h = stamp(&mut sim, ps[2]);
        assert_eq!((h.tx_bytes, h.qlen_bytes), (64 + 2 * 1090, 0));
    }
}
