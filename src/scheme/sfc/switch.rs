//! The switch half of SFC: ingress trigger, Bloom suppression, BTS construction, pause caching
//! at the switches a BTS crosses, the Egress-BTS variant, SFC-P conversion and the optional
//! incast estimator (Algorithm 1 of the SFC paper).

use crate::engine::packet::{DPORT_INCAST, Hdr, Packet, PktKind, WireHeader};
use crate::scheme::pause::pfc_frame;
use crate::scheme::sfc::wire::BtsHdr;
use crate::scheme::sfc::{
    Bloom, EstimatorRule, IncastEstimator, PauseCache, SfcConfig, SfcCounters, SfcDeploy, SfcMode,
    TriggerStats, quantize,
};
use crate::scheme::{Emit, Env, Hop, Scheme, SwitchCtx, SwitchHooks, Verdict, hook};
use crate::scheme::{SchemeId, Setup};
use crate::switch::EgressPort;
use crate::units::{bytes_in_ps, drain_time_ps};

/// SFC state of one switch where it runs.
#[derive(Clone, Debug)]
pub struct SfcSwitch {
    /// Variant.
    pub mode: SfcMode,
    /// Pause granularity, picoseconds.
    pub pause_quantum_ps: u64,
    /// BTS suppression.
    pub bloom: Bloom,
    /// Pause cache (SFC, SFC-P).
    pub cache: PauseCache,
    /// Incast estimator (sender-side ToRs, optional).
    pub estimator: Option<IncastEstimator>,
    /// How the estimate triggers and sizes a BTS.
    pub estimator_rule: EstimatorRule,
    /// Q_th of the remote queue the estimator models (the receiver's host port), bytes.
    pub remote_qth_bytes: u64,
    /// Q_tg of that queue, bytes.
    pub remote_qtg_bytes: u64,
    /// Trigger threshold Q_th per egress port, bytes.
    pub qth_bytes: Vec<u64>,
    /// Target depth Q_tg per egress port, bytes.
    pub qtg_bytes: Vec<u64>,
    /// Counters.
    pub counters: SfcCounters,
    /// Trigger diagnostics (`sfc.trigger_stats`, off by default).
    pub stats: Option<TriggerStats>,
    /// [`SfcConfig::bts_delay_ps`].
    pub bts_delay_ps: u64,
    /// Wire size of a BTS, bytes ([`SfcConfig::bts_bytes`]).
    pub bts_bytes: u32,
    /// BTS generated but still in the delay path, oldest first (a fixed delay keeps them in
    /// time order).
    pub delayed: std::collections::VecDeque<DelayedBts>,
}

/// A BTS on its way through the generating switch's mirror / builder / recirculation path
/// (`sfc.bts_delay`). Its pause is set when it leaves, from the congested queue's depth then:
/// the paper's egress builder "computes the BTS pause time using the latest information of
/// the data packet's output queue" (§3.1).
#[derive(Clone, Copy, Debug)]
pub struct DelayedBts {
    /// When it leaves the delay path, picoseconds.
    pub at_ps: u64,
    /// Its packet slot.
    pub slot: u32,
    /// The congested egress port and queue whose depth sets the drain time.
    pub egress: u16,
    /// Queue index at `egress`.
    pub q: u16,
    /// Lower bound of the pause from the trigger's metadata (cache entry, estimator),
    /// picoseconds.
    pub floor_ps: u64,
}

/// [`SwitchHooks::on_timer`] kind: release the BTS whose delay ended.
const TIMER_BTS: u8 = 0;

/// 5-tuple key of a data packet for the Bloom filter: (src, dst) and (sport, dport, UDP)
/// packed without overlap and mixed (a 64-bit finalizer), so that distinct flows collide
/// only by chance (XORing the fields at overlapping shifts would make a sender's flows to
/// hosts d and d ± 256 with source ports s and s ^ 1 always share a key).
#[inline]
fn flow_key(h: &Hdr) -> u64 {
    #[inline]
    fn mix(mut x: u64) -> u64 {
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^= x >> 33;
        x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        x ^ (x >> 33)
    }
    let ends = ((h.src as u64) << 32) | h.dst as u64;
    let ports = ((h.sport as u64) << 16) | h.dport as u64;
    mix(mix(ends) ^ ports ^ (0x11 << 40))
}

impl SfcSwitch {
    /// SFC on a switch of `tier` with `ports`: Q_th / Q_tg default to 2 and 1 BDP of each port
    /// (base RTT × port rate); the Bloom filter resets every RTT/2 by default.
    pub fn new(cfg: &SfcConfig, env: &Env, tier: u8, ports: &[EgressPort]) -> Self {
        let bdp = |ep: &EgressPort| bytes_in_ps(env.base_rtt_ps, ep.tx.link.rate_bps);
        let reset = if cfg.bloom_reset_ps > 0 {
            cfg.bloom_reset_ps
        } else {
            (env.base_rtt_ps / 2).max(1)
        };
        let n_hosts = env.num_hosts;
        SfcSwitch {
            mode: cfg.mode,
            pause_quantum_ps: cfg.pause_quantum_ps,
            bloom: Bloom::new(cfg.bloom_bits, cfg.bloom_hashes, reset),
            cache: PauseCache::new(cfg.cache_entries),
            estimator: (cfg.estimator_tau_ps > 0 && tier == 1)
                .then(|| IncastEstimator::new(n_hosts, cfg.estimator_tau_ps)),
            estimator_rule: cfg.estimator_rule,
            remote_qth_bytes: if cfg.qth_bytes > 0 {
                cfg.qth_bytes
            } else {
                2 * bytes_in_ps(env.base_rtt_ps, env.host_rate_bps)
            },
            remote_qtg_bytes: if cfg.qtg_bytes > 0 {
                cfg.qtg_bytes
            } else {
                bytes_in_ps(env.base_rtt_ps, env.host_rate_bps)
            },
            qth_bytes: ports
                .iter()
                .map(|ep| {
                    if cfg.qth_bytes > 0 {
                        cfg.qth_bytes
                    } else {
                        2 * bdp(ep)
                    }
                })
                .collect(),
            qtg_bytes: ports
                .iter()
                .map(|ep| {
                    if cfg.qtg_bytes > 0 {
                        cfg.qtg_bytes
                    } else {
                        bdp(ep)
                    }
                })
                .collect(),
            counters: SfcCounters::default(),
            stats: cfg.trigger_stats.then(|| TriggerStats::new(reset)),
            bts_delay_ps: cfg.bts_delay_ps,
            bts_bytes: cfg.bts_bytes,
            delayed: std::collections::VecDeque::new(),
        }
    }

    /// The ingress trigger (Algorithm 1) for data packet `p` going to `at`; `depth` is the
    /// queue depth the ingress pipeline sees (Tofino 2's queue depth at ingress: before this
    /// packet).
    fn ingress(&mut self, ctx: &mut SwitchCtx<'_>, p: u32, at: &Hop, depth: u64) {
        let now = ctx.now_ps;
        let h = Hdr::of(ctx.arena.get(p));
        let congested = depth > self.qth_bytes[at.egress as usize];
        let cache_time = if matches!(self.mode, SfcMode::Sfc | SfcMode::SfcP) {
            self.cache.lookup(h.dst, h.prio, now)
        } else {
            0
        };
        let mut estimate = 0;
        // The estimator is the sender-side ToR's view of traffic it sends towards a remote
        // receiver (§3.3: "aggregate traffic towards a common receiver as seen by the
        // sender-side ToR"): packets from its own servers (a server-facing ingress) to another
        // ToR (a fabric-facing egress). The receiver's ToR sees the real queue, and a local
        // receiver's queue is this switch's own (counting it too would make the receiver's ToR
        // estimate from traffic that arrived over the fabric).
        if let Some(est) = self.estimator.as_mut()
            && ctx.ports[at.in_port as usize].host_facing
            && !ctx.ports[at.egress as usize].host_facing
        {
            let d = ctx.routes.host_index(h.dst).unwrap_or(0) as usize;
            // The remote bottleneck is the receiver's host link (host rate).
            let rate = ctx.env.host_rate_bps;
            estimate = match self.estimator_rule {
                EstimatorRule::Queue => est.observe_above(
                    d,
                    h.size as u64,
                    now,
                    rate,
                    self.remote_qth_bytes,
                    self.remote_qtg_bytes,
                ),
                EstimatorRule::Any => est.observe(d, h.size as u64, now, rate),
            };
        }
        if !(congested || cache_time > 0 || estimate > 0) {
            return;
        }
        let suppressed = self.bloom.check_and_insert(flow_key(&h), now);
        if let Some(st) = self.stats.as_mut() {
            st.record(
                (h.src, h.dst, h.sport, h.dport),
                h.dport == DPORT_INCAST,
                congested,
                suppressed,
                now,
            );
        }
        if suppressed {
            self.counters.bts_suppressed += 1;
            return;
        }
        if !congested {
            if cache_time > 0 {
                self.counters.bts_from_cache += 1;
            } else {
                self.counters.bts_from_estimator += 1;
            }
        }
        // BTS egress: the pause uses the latest depth of the data's queue (after the enqueue,
        // or when a delayed BTS leaves its switch).
        let cacheable = ctx.ports[at.egress as usize].host_facing && ctx.tier == 1;
        self.send_bts(ctx, p, at, cache_time.max(estimate), cacheable);
    }

    /// Pause time of a BTS leaving now for queue `q` of port `egress`: drain the queue's
    /// current depth down to Q_tg at the port's rate, at least `floor_ps`, rounded up to the
    /// pause quantum.
    fn pause_now(&self, ctx: &SwitchCtx<'_>, egress: usize, q: usize, floor_ps: u64) -> u64 {
        let ep = &ctx.ports[egress];
        let drain = drain_time_ps(
            ep.queues[q].bytes.saturating_sub(self.qtg_bytes[egress]),
            ep.tx.link.rate_bps,
        );
        quantize(drain.max(floor_ps), self.pause_quantum_ps)
    }

    /// Build a BTS for data packet `p` (congesting queue `at.q` of port `at.egress`; pause at
    /// least `floor_ps`) and re-inject it into this switch's ingress, where the forwarding
    /// table routes it towards the data's sender in the strict-priority class — at once, or
    /// `bts_delay_ps` later with the pause recomputed then ([`DelayedBts`]).
    fn send_bts(
        &mut self,
        ctx: &mut SwitchCtx<'_>,
        p: u32,
        at: &Hop,
        floor_ps: u64,
        cacheable: bool,
    ) {
        let pause_ps = self.pause_now(ctx, at.egress as usize, at.q, floor_ps);
        let d = *ctx.arena.get(p);
        let bts = Packet::reverse_of(
            &d,
            BtsHdr {
                pause_ps,
                cacheable,
                origin: ctx.node,
            }
            .header(),
            self.bts_bytes,
        );
        let slot = ctx.arena.alloc(bts);
        self.counters.bts_generated += 1;
        if self.bts_delay_ps == 0 {
            ctx.out.push(Emit::Recirculate(slot));
        } else {
            let at_ps = ctx.now_ps.saturating_add(self.bts_delay_ps);
            self.delayed.push_back(DelayedBts {
                at_ps,
                slot,
                egress: at.egress,
                q: at.q as u16,
                floor_ps,
            });
            ctx.out.push(Emit::Timer {
                at_ps,
                port: 0,
                which: TIMER_BTS,
                arg: 0,
            });
        }
    }
}

impl SwitchHooks for SfcSwitch {
    fn hooks(&self) -> u16 {
        match self.mode {
            SfcMode::Off => 0,
            SfcMode::Egress => hook::DEQUEUE,
            _ => hook::ENQUEUE | hook::ADMISSION_FAILURE,
        }
    }

    #[inline]
    fn owns(&self, pkt: &Packet) -> bool {
        BtsHdr::is(pkt)
    }

    /// A BTS traverses this switch (including the one that generated it): update the pause
    /// cache if it is cacheable and was generated elsewhere, or (SFC-P) turn it into a PFC
    /// pause at the sender's ToR.
    ///
    /// The cache holds congestion of *remote* points (Algorithm 1 line 3, §3.4, Fig. 4: the
    /// BTS of SW3 is cached at SW1). The generating switch's own BTS re-enters its ingress
    /// here only because we route it by recirculation; in the paper's pipeline the mirrored
    /// copy is built at egress and leaves. Caching it would also loop: a cache hit answers
    /// with the remaining time rounded up to the pause quantum, which, cached again, moves the
    /// entry's end later on every hit, so the entry outlives the congestion (measured on the
    /// §5.3 Table 2 run: 98 % of all BTS were such hits, the Bloom reduction fell to 28 %).
    /// Tested: `tests/sfc.rs::a_switch_does_not_cache_its_own_bts`.
    fn on_control(&mut self, ctx: &mut SwitchCtx<'_>, p: u32, _in_port: u16) -> Verdict {
        let now = ctx.now_ps;
        let b = *ctx.arena.get(p);
        let Some(bts) = BtsHdr::of(&b) else {
            return Verdict::Pass;
        };
        if bts.cacheable
            && bts.origin != ctx.node
            && matches!(self.mode, SfcMode::Sfc | SfcMode::SfcP)
        {
            self.cache.update(b.src, b.prio, now + bts.pause_ps, now);
        }
        if self.mode == SfcMode::SfcP {
            // Sender-side ToR: the route to the BTS destination is a host-facing port.
            if let [port] = *ctx.routes.next_hops(ctx.node, b.dst)
                && ctx.ports[port as usize].host_facing
            {
                self.counters.sfcp_pfc_frames += 1;
                let frame = pfc_frame(
                    ctx.node,
                    ctx.ports[port as usize].tx.link.peer,
                    ctx.env.sizes.mac_control(),
                    b.prio,
                    bts.pause_ps.max(1),
                );
                let slot = ctx.arena.alloc(frame);
                ctx.out.push(Emit::Control { port, pkt: slot });
                return Verdict::Consumed;
            }
        }
        Verdict::Pass
    }

    #[inline]
    fn on_enqueue(&mut self, ctx: &mut SwitchCtx<'_>, p: u32, at: &Hop, depth_before: u64) {
        if ctx.arena.get(p).kind() == PktKind::Data {
            self.ingress(ctx, p, at, depth_before);
        }
    }

    /// SFC triggers at ingress, before the buffer decides (Algorithm 1): a packet the MMU
    /// refuses can still signal its sender.
    fn on_admission_failure(&mut self, ctx: &mut SwitchCtx<'_>, p: u32, at: &Hop) {
        if ctx.arena.get(p).kind() == PktKind::Data {
            let depth = ctx.ports[at.egress as usize].queues[at.q].bytes;
            self.ingress(ctx, p, at, depth);
        }
    }

    /// A delayed BTS (`sfc.bts_delay`) leaves the delay path: into this switch's forwarding.
    fn on_timer(&mut self, ctx: &mut SwitchCtx<'_>, _port: u16, which: u8, _arg: u8) {
        if which != TIMER_BTS {
            return;
        }
        while let Some(&b) = self.delayed.front()
            && b.at_ps <= ctx.now_ps
        {
            self.delayed.pop_front();
            let pause = self.pause_now(ctx, b.egress as usize, b.q as usize, b.floor_ps);
            BtsHdr::update(ctx.arena.get_mut(b.slot), |h| h.pause_ps = pause);
            ctx.out.push(Emit::Recirculate(b.slot));
        }
    }

    /// Egress-BTS variant: at dequeue of a data packet from a queue still deeper than Q_th.
    fn on_dequeue(&mut self, ctx: &mut SwitchCtx<'_>, p: u32, at: &Hop) {
        if ctx.arena.get(p).kind() != PktKind::Data {
            return;
        }
        let now = ctx.now_ps;
        let e = at.egress as usize;
        let ep = &ctx.ports[e];
        let depth = ep.queues[at.q].bytes;
        if depth <= self.qth_bytes[e] {
            return;
        }
        let cacheable = ep.host_facing && ctx.tier == 1;
        let h = Hdr::of(ctx.arena.get(p));
        let suppressed = self.bloom.check_and_insert(flow_key(&h), now);
        if let Some(st) = self.stats.as_mut() {
            st.record(
                (h.src, h.dst, h.sport, h.dport),
                h.dport == DPORT_INCAST,
                true,
                suppressed,
                now,
            );
        }
        if suppressed {
            self.counters.bts_suppressed += 1;
            return;
        }
        self.send_bts(ctx, p, at, 0, cacheable);
    }
}

impl Scheme for SfcSwitch {
    type Host = super::host::SfcHost;
    type Config = super::SfcConfig;
    const ID: SchemeId = super::ID;

    fn build_switch(
        cfg: &Setup<'_, super::SfcConfig>,
        env: &Env,
        tier: u8,
        ports: &[EgressPort],
    ) -> Option<Self> {
        let sc = cfg.own;
        let here = match sc.deploy {
            SfcDeploy::Tor => tier == 1,
            SfcDeploy::All => true,
        };
        (sc.mode != SfcMode::Off && here).then(|| SfcSwitch::new(sc, env, tier, ports))
    }

    fn build_host(
        cfg: &Setup<'_, super::SfcConfig>,
        _env: &Env,
        _hosts: usize,
        _flows: usize,
    ) -> Option<Self::Host> {
        (cfg.own.mode != SfcMode::Off).then(super::host::SfcHost::default)
    }

    fn summary(
        switches: &[&Self],
        host: Option<&Self::Host>,
        cfg: &Setup<'_, super::SfcConfig>,
    ) -> Option<(&'static str, serde_json::Value)> {
        Some(("sfc", super::summary_json(switches, host, cfg)))
    }
}

#[cfg(test)]
mod key_tests {
    use super::flow_key;
    use crate::engine::packet::{Hdr, PktKind};

    fn hdr(src: u32, dst: u32, sport: u16, dport: u16) -> Hdr {
        Hdr {
            kind: PktKind::Data,
            prio: 3,
            src,
            dst,
            sport,
            dport,
            size: 1048,
        }
    }

    /// Distinct 5-tuples get distinct keys, including pairs a packing of fewer bits would
    /// merge (destinations d and d + 256 with source ports s and s ^ 1, 512-host ids).
    #[test]
    fn bloom_keys_of_distinct_flows_differ() {
        let mut seen = std::collections::HashSet::new();
        for src in [0u32, 7, 300] {
            for dst in 0..600u32 {
                for sport in [10_000u16, 10_001, 10_002, 10_003] {
                    for dport in [100u16, 200] {
                        assert!(
                            seen.insert(flow_key(&hdr(src, dst, sport, dport))),
                            "key collision at {src} → {dst}, ports {sport}/{dport}"
                        );
                    }
                }
            }
        }
        assert_ne!(
            flow_key(&hdr(5, 20, 10_000, 100)),
            flow_key(&hdr(5, 20 + 256, 10_001, 100))
        );
    }
}
