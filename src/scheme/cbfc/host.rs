//! The host half of CBFC: each NIC is a credit sender towards its ToR. Every packet it puts
//! on a data VL spends that VL's credits; below one full-size packet the VL's pause bit is
//! set (the arbiter skips its QPs and ACKs, as for a PFC pause) until the ToR's FCP brings
//! room again.

use crate::engine::packet::{Packet, WireHeader};
use crate::scheme::Setup;
use crate::scheme::cbfc::wire::CbfcHdr;
use crate::scheme::cbfc::{Credits, LimitRule, blocks, vl_of};
use crate::scheme::{Env, HostAction, HostCtx, HostHooks};

/// CBFC at the NICs: credits per (host, VL), index `host · nq + vl`.
#[derive(Clone, Debug)]
pub struct CbfcHost {
    /// VLs (queues) per port.
    pub nq: usize,
    /// Credit block, bytes.
    pub block_bytes: u64,
    /// Blocks of a full-size data packet.
    pub need: u64,
    /// Credits per (host, VL); a host's limits are set from its link on first use.
    pub credits: Vec<Credits>,
    /// The host's credits were initialised from its link.
    pub ready: Vec<bool>,
    /// FCPs received.
    pub updates_received: u64,
    /// How a host link's credit limit follows from its rate and delay.
    pub rule: LimitRule,
}

impl CbfcHost {
    /// State for `hosts` NICs.
    pub fn new(cfg: &Setup<'_, super::CbfcConfig>, env: &Env, hosts: usize) -> Self {
        let nq = env.queues_per_port;
        CbfcHost {
            nq,
            block_bytes: cfg.own.block_bytes,
            need: blocks(cfg.max_packet_bytes(), cfg.own.block_bytes),
            credits: vec![Credits::default(); hosts * nq],
            ready: vec![false; hosts],
            updates_received: 0,
            rule: LimitRule::new(cfg, env),
        }
    }

    /// Set host `h`'s limits from its link (the ToR computes the same from the same link).
    #[inline]
    fn init(&mut self, ctx: &HostCtx<'_>) {
        let h = ctx.host;
        if !self.ready[h] {
            self.ready[h] = true;
            let l = &ctx.port.link;
            let limit = self.rule.blocks(l.rate_bps, l.delay_ps);
            for c in &mut self.credits[h * self.nq..(h + 1) * self.nq] {
                *c = Credits::new(limit);
            }
        }
    }
}

impl HostHooks for CbfcHost {
    #[inline]
    fn owns(&self, pkt: &Packet) -> bool {
        CbfcHdr::is(pkt)
    }

    /// An FCP from the ToR: the VL's new limit; release it if it was blocked and now has
    /// room for a full-size packet.
    fn on_control(&mut self, ctx: &mut HostCtx<'_>, pkt: &Packet) {
        let Some(f) = CbfcHdr::of(pkt) else {
            return;
        };
        self.init(ctx);
        self.updates_received += 1;
        let vl = f.vl as usize;
        if vl == 0 || vl >= self.nq {
            return;
        }
        if self.credits[ctx.host * self.nq + vl].update(f.fccl, self.need, ctx.now_ps) {
            ctx.port.paused_mask &= !(1u64 << vl);
            ctx.out.push(HostAction::Kick);
        }
    }

    fn wants_transmits(&self) -> bool {
        true
    }

    /// A packet went on the link: spend its VL's credits; block the VL below one full-size
    /// packet.
    #[inline]
    fn on_transmit(&mut self, ctx: &mut HostCtx<'_>, pkt: &Packet) {
        let vl = vl_of(pkt, self.nq);
        if vl == 0 {
            return;
        }
        self.init(ctx);
        let n = blocks(pkt.size as u64, self.block_bytes);
        if self.credits[ctx.host * self.nq + vl].spend(n, self.need, ctx.now_ps) {
            ctx.port.paused_mask |= 1u64 << vl;
        }
    }

    fn finish(&mut self, ctx: &mut HostCtx<'_>) {
        let h = ctx.host;
        for c in &mut self.credits[h * self.nq..(h + 1) * self.nq] {
            c.finish(ctx.now_ps);
        }
    }
}
