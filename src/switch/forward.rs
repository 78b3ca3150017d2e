//! The switch forwarding path: arrival → (scheme control packets) → lookup (ECMP) → queue
//! selection → ingress hook → admission (scheme or MMU) → enqueue hook → (when the port is
//! free) scheduler → dequeue hook → transmit → departure hook. Schemes plug in at the hooks
//! ([`crate::scheme`]); what they ask for in their outbox is carried out by
//! [`Simulator::switch_flush`] at the end of each stage, in order.

use crate::engine::NO_EGRESS;
use crate::engine::packet::{Hdr, Header, IntHop, MAX_INT_HOPS, PktKind};
use crate::rng::mix64;
use crate::scheme::{Emit, Hop, SchemeId, SwitchCtx, SwitchHooks, SwitchScheme, Verdict, hook};
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
    pub(crate) fn switch_route(&self, s: usize, h: &Hdr) -> u16 {
        let sw = &self.switches[s];
        let hops = self.routes.next_hops(sw.node, h.dst);
        match hops.len() {
            0 => NO_EGRESS,
            1 => hops[0],
            n => hops[Self::ecmp_pick(sw.ecmp_seed, h.src, h.dst, h.sport, h.dport, n)],
        }
    }

    /// Run `f` on every scheme of switch `s` that implements hook `flag` (a single
    /// [`hook`] bit; 0 = every scheme), in registry order, with a context on that switch,
    /// until one returns `Some`. Requests land in the outbox; the caller flushes.
    #[inline(always)]
    fn switch_hooks<R>(
        &mut self,
        s: usize,
        flag: u16,
        mut f: impl FnMut(&mut SwitchScheme, &mut SwitchCtx<'_>) -> Option<R>,
    ) -> Option<R> {
        let now_ps = self.q.now();
        let event_no = self.q.events();
        let sw = &mut self.switches[s];
        let mut set: u16 = if flag == 0 {
            (1u32 << sw.schemes.len()).wrapping_sub(1) as u16
        } else {
            sw.by_hook[flag.trailing_zeros() as usize]
        };
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
        while set != 0 {
            let i = set.trailing_zeros() as usize;
            set &= set - 1;
            let sc = &mut sw.schemes[i];
            ctx.out.current = sc.id();
            if let Some(r) = f(sc, &mut ctx) {
                return Some(r);
            }
        }
        None
    }

    /// Run `f` on scheme `id` of switch `s` (if it runs there), then carry out its requests.
    fn switch_scheme_call(
        &mut self,
        s: usize,
        id: SchemeId,
        f: impl FnOnce(&mut SwitchScheme, &mut SwitchCtx<'_>),
    ) {
        let start = self.outbox.len();
        let mut f = Some(f);
        self.switch_hooks(s, 0, |sc, ctx| {
            if sc.id() == id {
                (f.take().expect("one scheme per id"))(sc, ctx);
                Some(())
            } else {
                None
            }
        });
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
                            scheme: id as u8,
                            which,
                            arg,
                        },
                    );
                }
                Emit::Call { port, which, arg } => {
                    self.switch_scheme_call(s, id, |sc, ctx| sc.on_timer(ctx, port, which, arg));
                }
            }
        }
        self.outbox.items.truncate(start);
    }

    /// The run ends: the schemes of switch `s` close their open intervals.
    pub(crate) fn switch_finish(&mut self, s: usize) {
        let start = self.outbox.len();
        self.switch_hooks(s, 0, |sc, ctx| {
            sc.finish(ctx);
            None::<()>
        });
        self.switch_flush(s, start);
    }

    /// A scheme timer of switch `s` fired.
    pub(crate) fn switch_timer(&mut self, s: usize, id: SchemeId, port: u16, which: u8, arg: u8) {
        self.switch_scheme_call(s, id, |sc, ctx| sc.on_timer(ctx, port, which, arg));
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
            let v = self.switch_hooks(s, 0, |sc, ctx| {
                sc.owns(ctx.arena.get(p))
                    .then(|| sc.on_control(ctx, p, in_port))
            });
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
            && pkt.kind == PktKind::Data
            && let Some(sel) = self.switch_hooks(s, hook::SELECT_QUEUE, |sc, ctx| {
                sc.select_queue(ctx, p, egress)
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
            let v = self.switch_hooks(s, hook::INGRESS, |sc, ctx| {
                let v = sc.on_ingress(ctx, p, &at);
                (v != Verdict::Pass).then_some(v)
            });
            self.switch_flush(s, start);
            match v {
                Some(Verdict::Drop) => {
                    self.counters.drops += 1;
                    self.arena.free(p);
                    return;
                }
                Some(Verdict::Consumed) => {
                    self.counters.packets_consumed += 1;
                    self.arena.free(p);
                    return;
                }
                _ => {}
            }
        }
        // Admission of the data classes; the control class bypasses the MMU (HPCC-sim).
        if q != 0 {
            let owner = if hooks & hook::ADMIT != 0 {
                self.switch_hooks(s, hook::ADMIT, |sc, ctx| sc.admit(ctx, p, &at))
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
                if hooks & hook::ADMISSION_FAILURE != 0 {
                    let start = self.outbox.len();
                    self.switch_hooks(s, hook::ADMISSION_FAILURE, |sc, ctx| {
                        sc.on_admission_failure(ctx, p, &at);
                        None::<()>
                    });
                    self.switch_flush(s, start);
                }
                self.arena.free(p);
                return;
            }
            sw.mmu.charge(in_port, q, size);
            let used = sw.mmu.used_bytes;
            self.buffer_mon.update(s, now, used);
        }
        let port = &mut self.switches[s].ports[egress as usize];
        let depth_before = port.queues[q].bytes;
        port.enqueue(q, p, size);
        if port.mon != u32::MAX {
            self.queue_mon.update(port.mon as usize, now, port.bytes);
        }
        if hooks & hook::ENQUEUE != 0 {
            let start = self.outbox.len();
            self.switch_hooks(s, hook::ENQUEUE, |sc, ctx| {
                sc.on_enqueue(ctx, p, &at, depth_before);
                None::<()>
            });
            self.switch_flush(s, start);
        }
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
                let t = ep.tx.busy_until_ps;
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
        if q != 0 {
            sw.mmu.release(in_port, q, size);
            let used = sw.mmu.used_bytes;
            self.buffer_mon.update(s, now, used);
            // INT: {time, tx bytes before this packet, port backlog after, line rate}.
            if self.cfg.int_enabled
                && let Header::Data(d) = &mut pkt.hdr
                && (d.int_n as usize) < MAX_INT_HOPS
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
            self.switch_hooks(s, hook::DEQUEUE, |sc, ctx| {
                sc.on_dequeue(ctx, p, &at);
                None::<()>
            });
            self.switch_flush(s, start);
        }
        let node = self.switches[s].node;
        self.transmit(node, port, p);
        if hooks & hook::DEPARTURE != 0 {
            let start = self.outbox.len();
            self.switch_hooks(s, hook::DEPARTURE, |sc, ctx| {
                sc.on_departure(ctx, &at);
                None::<()>
            });
            self.switch_flush(s, start);
        }
    }
}
