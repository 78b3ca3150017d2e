//! The switch half of RED: per (egress port, data queue) state, the drop decision at ingress
//! (after the forwarding lookup, before buffer admission) and the note that a queue went empty
//! at departure (the idle-time correction's start).

use crate::engine::packet::Header;
use crate::scheme::red::{Decision, RedParams, RedQueue};
use crate::scheme::{Env, Hop, NoHost, Scheme, SwitchCtx, SwitchHooks, Verdict, hook};
use crate::scheme::{SchemeId, Setup};
use crate::switch::EgressPort;

/// RED on one switch.
#[derive(Clone, Debug)]
pub struct RedSwitch {
    /// Parameters (thresholds in bytes).
    pub params: RedParams,
    /// Queues per port (state index = port × this + queue).
    pub queues_per_port: usize,
    /// Transmission time of a full-size data packet at each port's rate, picoseconds (the
    /// unit of the idle decay).
    pub pkt_time_ps: Vec<u64>,
    /// State per (port, queue); queue 0 (control class) is never used.
    pub queues: Vec<RedQueue>,
    /// Data packets dropped because avg ≥ max_th.
    pub forced_drops: u64,
    /// Data packets dropped with probability p_a (min_th ≤ avg < max_th).
    pub early_drops: u64,
}

impl RedSwitch {
    /// RED state of (`port`, `q`).
    #[inline]
    pub fn queue(&self, port: u16, q: usize) -> &RedQueue {
        &self.queues[port as usize * self.queues_per_port + q]
    }
}

impl SwitchHooks for RedSwitch {
    fn hooks(&self) -> u16 {
        hook::INGRESS | hook::DEPARTURE
    }

    /// Update the average of the packet's queue and decide: data packets of the data queues
    /// only.
    fn on_ingress(&mut self, ctx: &mut SwitchCtx<'_>, pkt: u32, at: &Hop) -> Verdict {
        if at.q == 0 || !matches!(ctx.arena.get(pkt).hdr, Header::Data(_)) {
            return Verdict::Pass;
        }
        let port = at.egress as usize;
        let q_bytes = ctx.ports[port].queues[at.q].bytes;
        let pkt_time = self.pkt_time_ps[port];
        let i = port * self.queues_per_port + at.q;
        let st = &mut self.queues[i];
        st.update_avg(&self.params, q_bytes, ctx.now_ps, pkt_time);
        let rng = &mut *ctx.rng;
        match st.decide(&self.params, at.size, || rng.f64()) {
            Decision::Enqueue => Verdict::Pass,
            Decision::EarlyDrop => {
                self.early_drops += 1;
                Verdict::Drop
            }
            Decision::ForcedDrop => {
                self.forced_drops += 1;
                Verdict::Drop
            }
        }
    }

    /// The packet left its queue: if the queue is now empty, its idle time starts.
    fn on_departure(&mut self, ctx: &mut SwitchCtx<'_>, _pkt: u32, at: &Hop) {
        if at.q != 0 && ctx.ports[at.egress as usize].queues[at.q].bytes == 0 {
            let i = at.egress as usize * self.queues_per_port + at.q;
            self.queues[i].idle_since_ps = ctx.now_ps;
        }
    }
}

impl Scheme for RedSwitch {
    type Host = NoHost;
    type Config = super::RedConfig;
    const ID: SchemeId = super::ID;

    /// Every switch, when `red.enabled`.
    fn build_switch(
        cfg: &Setup<'_, super::RedConfig>,
        _env: &Env,
        _tier: u8,
        ports: &[EgressPort],
    ) -> Option<Self> {
        let c = cfg.own;
        if !c.enabled {
            return None;
        }
        let max_packet = cfg.max_packet_bytes();
        let (min_th, max_th) = c.thresholds(max_packet);
        let nq = ports.iter().map(|p| p.queues.len()).max().unwrap_or(0);
        Some(RedSwitch {
            params: RedParams {
                min_th: min_th as f64,
                max_th: max_th as f64,
                max_p: c.max_p,
                weight: c.weight,
                max_packet_bytes: max_packet as f64,
            },
            queues_per_port: nq,
            pkt_time_ps: ports
                .iter()
                .map(|p| cfg.framing.ser_ps(max_packet as u32, p.tx.link.rate_bps))
                .collect(),
            queues: vec![RedQueue::default(); ports.len() * nq],
            forced_drops: 0,
            early_drops: 0,
        })
    }

    /// `red` (only when `red.enabled`): drops by kind, summed over switches.
    fn summary(
        switches: &[&Self],
        _host: Option<&NoHost>,
        cfg: &Setup<'_, super::RedConfig>,
    ) -> Option<(&'static str, serde_json::Value)> {
        let c = cfg.own;
        if !c.enabled {
            return None;
        }
        let (min_th, max_th) = c.thresholds(cfg.max_packet_bytes());
        Some((
            "red",
            serde_json::json!({
                "min_th_bytes": min_th,
                "max_th_bytes": max_th,
                "forced_drops": switches.iter().map(|s| s.forced_drops).sum::<u64>(),
                "early_drops": switches.iter().map(|s| s.early_drops).sum::<u64>(),
            }),
        ))
    }
}
