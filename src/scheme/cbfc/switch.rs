//! The switch half of CBFC: ingress accounting per (port, VL) and the periodic credit updates
//! sent upstream (receiver side), credits per egress (port, VL) that block the scheduler at
//! less than one full-size packet (sender side), and IB's FECN marking.
//!
//! Receiver: an admitted packet takes `⌈size/block⌉` blocks of its (ingress port, VL) buffer;
//! when it starts transmission downstream its blocks are freed (as PFC releases its ingress
//! bytes). Every `T_c` (per port, on a grid of multiples of `T_c` from time 0, the timer
//! running only while something changed), the port sends one FCP per VL whose FCCL
//! (`limit + blocks freed`) changed, in the control class, towards the upstream device.
//!
//! Sender: a switch egress port facing a switch spends its credits as packets start
//! transmission; when less than one full-size packet's blocks remain, the VL's bit in the
//! port's pause mask is set (the scheduler skips it, as for a PFC pause) until an FCP brings
//! room again; then the end of that OFF period is written to `PktQueue::off_end_ps`, where
//! TCD reads it (TCD-IB: its max(T_on) is `T_c`).

use crate::config::BufferMode;
use crate::engine::packet::{Header, Packet, WireHeader};
use crate::scheme::cbfc::wire::{CbfcHdr, cbfc_update};
use crate::scheme::cbfc::{Credits, LimitRule, blocks, fcp_bytes};
use crate::scheme::{Emit, Env, Hop, Scheme, SwitchCtx, SwitchHooks, Verdict, hook};
use crate::scheme::{SchemeId, Setup};
use crate::switch::EgressPort;

/// Timer kinds of the switch half (`which` of [`Emit::Timer`]).
pub mod timer {
    /// Credit-update tick of ingress port `port`.
    pub const TICK: u8 = 0;
}

/// Per-(port, VL) receiver state: the ingress buffer of the VL.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IngressVl {
    /// Blocks in the buffer.
    pub occupancy: u64,
    /// Largest occupancy seen, blocks.
    pub max_occupancy: u64,
    /// Blocks freed since the link came up.
    pub freed: u64,
    /// FCCL of the latest FCP sent (initially the limit), blocks.
    pub advertised: u64,
}

/// CBFC on one switch.
#[derive(Clone, Debug)]
pub struct CbfcSwitch {
    /// Node id (learnt at the end of the run, for the summary).
    pub node: u32,
    /// Queues (VLs) per port.
    pub nq: usize,
    /// Credit block, bytes.
    pub block_bytes: u64,
    /// Blocks of a full-size data packet: a VL with fewer available blocks is blocked.
    pub need: u64,
    /// Wire size of an FCP, bytes.
    pub fcp_bytes: u32,
    /// Credit-update period per port, picoseconds.
    pub period_ps: Vec<u64>,
    /// Credit limit per port (every VL of the port's link, both directions), blocks.
    pub limit: Vec<u64>,
    /// The egress port is credit-limited (its peer is a switch).
    pub limited: Vec<bool>,
    /// A credit-update tick is scheduled for the ingress port.
    pub armed: Vec<bool>,
    /// Receiver state per (port, VL), index `port · nq + vl`.
    pub ingress: Vec<IngressVl>,
    /// Sender state per (port, VL).
    pub credits: Vec<Credits>,
    /// FECN threshold per egress port, bytes (`u64::MAX` = no FECN marking here).
    pub fecn_threshold: Vec<u64>,
    /// FECN also at victim ports (IB's Victim_Mask).
    pub fecn_victim_mask: bool,
    /// FCPs sent.
    pub updates_sent: u64,
    /// FCPs received.
    pub updates_received: u64,
    /// Admissions beyond the credit limit (a bug if not 0: credits make them impossible).
    pub overruns: u64,
    /// Data packets FECN-marked here.
    pub fecn_marks: u64,
}

impl CbfcSwitch {
    /// The FCPs of ingress `port` whose FCCL changed: send them; keep ticking while some
    /// changed.
    fn tick(&mut self, ctx: &mut SwitchCtx<'_>, port: u16) {
        let p = port as usize;
        let mut any = false;
        for vl in 1..self.nq {
            let st = &mut self.ingress[p * self.nq + vl];
            let fccl = self.limit[p] + st.freed;
            if fccl != st.advertised {
                st.advertised = fccl;
                let fcp = cbfc_update(
                    ctx.node,
                    ctx.ports[p].tx.link.peer,
                    self.fcp_bytes,
                    vl as u8,
                    fccl,
                );
                let slot = ctx.arena.alloc(fcp);
                ctx.out.push(Emit::Control { port, pkt: slot });
                self.updates_sent += 1;
                any = true;
            }
        }
        if any {
            ctx.out.push(Emit::Timer {
                at_ps: ctx.now_ps + self.period_ps[p],
                port,
                which: timer::TICK,
                arg: 0,
            });
        } else {
            self.armed[p] = false;
        }
    }
}

impl SwitchHooks for CbfcSwitch {
    fn hooks(&self) -> u16 {
        hook::ADMIT | hook::DEPARTURE
    }

    #[inline]
    fn owns(&self, pkt: &Packet) -> bool {
        CbfcHdr::is(pkt)
    }

    /// An FCP from the downstream device on `in_port`: the VL's new credit limit; a VL
    /// blocked for credits that now has room for a full-size packet is released (end of its
    /// OFF period, for TCD-IB) and the port restarted. Hop-by-hop: always consumed.
    fn on_control(&mut self, ctx: &mut SwitchCtx<'_>, p: u32, in_port: u16) -> Verdict {
        if let Some(f) = CbfcHdr::of(ctx.arena.get(p)) {
            self.updates_received += 1;
            let vl = f.vl as usize;
            let port = in_port as usize;
            if vl != 0
                && vl < self.nq
                && self.limited[port]
                && self.credits[port * self.nq + vl].update(f.fccl, self.need, ctx.now_ps)
            {
                let ep = &mut ctx.ports[port];
                ep.tx.paused_mask &= !(1u64 << vl);
                ep.queues[vl].off_end_ps = ctx.now_ps;
                ctx.out.push(Emit::Kick { port: in_port });
            }
        }
        Verdict::Consumed
    }

    /// Lossless admission: the upstream sender had credits for the packet, so its VL buffer
    /// has room; charge it (an overrun would be a bug, counted, never a drop).
    #[inline]
    fn admit(&mut self, _ctx: &mut SwitchCtx<'_>, _p: u32, at: &Hop) -> Option<bool> {
        let n = blocks(at.size, self.block_bytes);
        let i = at.in_port as usize * self.nq + at.q;
        let st = &mut self.ingress[i];
        st.occupancy += n;
        st.max_occupancy = st.max_occupancy.max(st.occupancy);
        if st.occupancy > self.limit[at.in_port as usize] {
            self.overruns += 1;
        }
        Some(true)
    }

    /// The packet started transmission: free its ingress blocks (the next tick advertises
    /// them), FECN-mark it if its egress queue is above the threshold, and spend the egress
    /// VL's credits (blocking the VL below one full-size packet).
    #[inline]
    fn on_departure(&mut self, ctx: &mut SwitchCtx<'_>, p: u32, at: &Hop) {
        if at.q == 0 {
            return;
        }
        let n = blocks(at.size, self.block_bytes);
        let ip = at.in_port as usize;
        let st = &mut self.ingress[ip * self.nq + at.q];
        st.occupancy = st.occupancy.saturating_sub(n);
        st.freed += n;
        if !self.armed[ip] {
            self.armed[ip] = true;
            let t = self.period_ps[ip];
            ctx.out.push(Emit::Timer {
                at_ps: (ctx.now_ps / t + 1) * t,
                port: at.in_port,
                which: timer::TICK,
                arg: 0,
            });
        }
        let e = at.egress as usize;
        let th = self.fecn_threshold[e];
        if th != u64::MAX {
            let qq = &ctx.ports[e].queues[at.q];
            // A victim: released from a credit block within the last credit period.
            let victim =
                qq.off_end_ps != 0 && ctx.now_ps.saturating_sub(qq.off_end_ps) < self.period_ps[e];
            if qq.bytes > th
                && (self.fecn_victim_mask || !victim)
                && let Header::Data(d) = &mut ctx.arena.get_mut(p).hdr
                && !d.ce
            {
                d.ce = true;
                self.fecn_marks += 1;
            }
        }
        if self.limited[e] && self.credits[e * self.nq + at.q].spend(n, self.need, ctx.now_ps) {
            ctx.ports[e].tx.paused_mask |= 1u64 << at.q;
        }
    }

    fn on_timer(&mut self, ctx: &mut SwitchCtx<'_>, port: u16, which: u8, _arg: u8) {
        if which == timer::TICK {
            self.tick(ctx, port);
        }
    }

    fn finish(&mut self, ctx: &mut SwitchCtx<'_>) {
        self.node = ctx.node;
        for c in &mut self.credits {
            c.finish(ctx.now_ps);
        }
    }
}

impl Scheme for CbfcSwitch {
    type Host = super::host::CbfcHost;
    type Config = super::CbfcConfig;
    const ID: SchemeId = super::ID;

    /// On every switch of a lossless fabric with `cbfc.enabled` (PFC is then off).
    fn build_switch(
        cfg: &Setup<'_, super::CbfcConfig>,
        env: &Env,
        _tier: u8,
        ports: &[EgressPort],
    ) -> Option<Self> {
        let c = cfg.own;
        if !c.enabled || cfg.buffer.mode != BufferMode::Lossless {
            return None;
        }
        let nq = env.queues_per_port;
        let rule = LimitRule::new(cfg, env);
        let limit: Vec<u64> = ports
            .iter()
            .map(|e| rule.blocks(e.tx.link.rate_bps, e.tx.link.delay_ps))
            .collect();
        let fecn_threshold = ports
            .iter()
            .map(|e| {
                if !c.fecn || cfg.peers.ce_precedence > Some(super::FECN_PRECEDENCE) {
                    return u64::MAX;
                }
                c.fecn_threshold_bytes.unwrap_or_else(|| {
                    cfg.ecn
                        .for_rate(e.tx.link.rate_bps)
                        .map_or(u64::MAX, |t| t.kmin_bytes)
                })
            })
            .collect();
        let mut credits = Vec::with_capacity(ports.len() * nq);
        let mut ingress = Vec::with_capacity(ports.len() * nq);
        for &l in &limit {
            for _ in 0..nq {
                credits.push(Credits::new(l));
                ingress.push(IngressVl {
                    advertised: l,
                    ..IngressVl::default()
                });
            }
        }
        Some(CbfcSwitch {
            node: 0,
            nq,
            block_bytes: c.block_bytes,
            need: blocks(cfg.max_packet_bytes(), c.block_bytes),
            fcp_bytes: fcp_bytes(c, env),
            period_ps: ports
                .iter()
                .map(|e| c.port_period_ps(e.tx.link.rate_bps))
                .collect(),
            limit,
            limited: ports.iter().map(|e| !e.host_facing).collect(),
            armed: vec![false; ports.len()],
            ingress,
            credits,
            fecn_threshold,
            fecn_victim_mask: c.fecn_victim_mask,
            updates_sent: 0,
            updates_received: 0,
            overruns: 0,
            fecn_marks: 0,
        })
    }

    /// Every NIC is a CBFC sender towards its ToR.
    fn build_host(
        cfg: &Setup<'_, super::CbfcConfig>,
        env: &Env,
        hosts: usize,
        _flows: usize,
    ) -> Option<Self::Host> {
        let c = cfg.own;
        if !c.enabled || cfg.buffer.mode != BufferMode::Lossless {
            return None;
        }
        Some(super::host::CbfcHost::new(cfg, env, hosts))
    }

    /// `cbfc`: FCPs sent and received, time (port, VL) pairs spent blocked for credits,
    /// the largest ingress occupancy (and its ratio to the limit), overruns (always 0), FECN
    /// marks, and per (switch, port, VL) that held packets or was blocked: its limit,
    /// largest occupancy and blocked time; per (host, VL) that was blocked: its blocked time.
    /// Not on lossy links: a packet lost on the wire would keep its credits (IB's FCTBS
    /// resynchronisation is not modelled).
    fn check_run(
        cfg: &Setup<'_, super::CbfcConfig>,
        _cc: &crate::cc::CcConfig,
        topo: &crate::topology::TopologySpec,
    ) -> Result<(), String> {
        if cfg.own.enabled
            && cfg.buffer.mode == BufferMode::Lossless
            && let Some(l) = topo.links.iter().find(|l| l.error_rate > 0.0)
        {
            return Err(format!(
                "cbfc.enabled: CBFC is not modelled on lossy links (link {} – {} has error rate \
                 {}): a packet lost on the wire would keep its credits, since IB's FCTBS \
                 resynchronisation is not modelled",
                l.a, l.b, l.error_rate
            ));
        }
        Ok(())
    }

    fn summary(
        switches: &[&Self],
        host: Option<&Self::Host>,
        cfg: &Setup<'_, super::CbfcConfig>,
    ) -> Option<(&'static str, serde_json::Value)> {
        if !cfg.own.enabled {
            return None;
        }
        let mut ports = Vec::new();
        let (mut blocked, mut blockings, mut max_occ, mut ratio) = (0u64, 0u64, 0u64, 0f64);
        for s in switches {
            for (i, (g, c)) in s.ingress.iter().zip(&s.credits).enumerate() {
                let port = i / s.nq;
                blocked += c.blocked_ps;
                blockings += c.blockings;
                let occ = g.max_occupancy * s.block_bytes;
                max_occ = max_occ.max(occ);
                ratio = ratio.max(g.max_occupancy as f64 / s.limit[port] as f64);
                if g.max_occupancy > 0 || c.blockings > 0 {
                    ports.push(serde_json::json!({
                        "switch": s.node,
                        "port": port,
                        "vl": i % s.nq,
                        "limit_bytes": s.limit[port] * s.block_bytes,
                        "period_ps": s.period_ps[port],
                        "max_occupancy_bytes": occ,
                        "blocked_ps": c.blocked_ps,
                        "blockings": c.blockings,
                    }));
                }
            }
        }
        let mut hosts = Vec::new();
        let mut host_blocked = 0u64;
        if let Some(h) = host {
            for (i, c) in h.credits.iter().enumerate() {
                host_blocked += c.blocked_ps;
                blockings += c.blockings;
                if c.blockings > 0 {
                    hosts.push(serde_json::json!({
                        "host": i / h.nq,
                        "vl": i % h.nq,
                        "blocked_ps": c.blocked_ps,
                        "blockings": c.blockings,
                    }));
                }
            }
        }
        Some((
            "cbfc",
            serde_json::json!({
                "enabled": true,
                "credit_updates_sent": switches.iter().map(|s| s.updates_sent).sum::<u64>(),
                "credit_updates_received": switches.iter().map(|s| s.updates_received).sum::<u64>()
                    + host.map_or(0, |h| h.updates_received),
                "switch_blocked_ps": blocked,
                "host_blocked_ps": host_blocked,
                "blockings": blockings,
                "max_occupancy_bytes": max_occ,
                "max_occupancy_over_limit": ratio,
                "overruns": switches.iter().map(|s| s.overruns).sum::<u64>(),
                "fecn_marks": switches.iter().map(|s| s.fecn_marks).sum::<u64>(),
                "ports": ports,
                "hosts": hosts,
            }),
        ))
    }
}
