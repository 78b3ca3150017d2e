//! The switch half of PB-FS: per-egress-port slot accounting and recentBytes window, the
//! Definition 1 assessment on PBT-triggering packets, and CC-postcard generation
//! (`seeds/pbfs.txt` §III-C, Figs. 3–4).

use crate::config::CoreConfig;
use crate::engine::packet::Marks;
use crate::engine::packet::{Header, Packet, WireHeader};
use crate::scheme::pbfs::wire::{PostcardHdr, postcard_bytes};
use crate::scheme::pbfs::{
    Assessment, HOPS_HIST, PBT, PbfsConfig, PbfsDeploy, PortSlots, RECENT_BUCKETS, RecentWindow,
};
use crate::scheme::{Emit, Env, Hop, Scheme, SwitchCtx, SwitchHooks, Verdict, hook};
use crate::scheme::{SchemeId, Setup};
use crate::switch::EgressPort;

/// Counters of one switch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PbfsSwitchCounters {
    /// PBT-triggering packets that made this switch assess their egress port.
    pub marked_assessed: u64,
    /// CC-postcards generated.
    pub postcards_generated: u64,
    /// Postcards by path length (links back to the sender; last bucket = that many or more).
    pub hops_hist: [u64; HOPS_HIST],
    /// Postcards about a ToR's host-facing (down) port.
    pub postcards_tor_down: u64,
}

/// PB-FS state of one switch where it runs.
#[derive(Clone, Debug)]
pub struct PbfsSwitch {
    /// Slot length DC_RTT/(2N), picoseconds.
    pub slot_ps: u64,
    /// DC_RTT, picoseconds.
    pub dc_rtt_ps: u64,
    /// Width of one recentBytes bucket, ceil(T_Δ / 16), picoseconds.
    pub bucket_ps: u64,
    /// Slot accounting per egress port.
    pub slots: Vec<PortSlots>,
    /// recentBytes / recentMarkedBytes per egress port.
    pub recent: Vec<RecentWindow>,
    /// The assessment behind the last postcard (tests, traces).
    pub last: Option<Assessment>,
    /// Counters.
    pub counters: PbfsSwitchCounters,
}

/// DC_RTT in use: the configured one, else the topology's maximum base RTT (≥ 1 ps).
pub fn dc_rtt_ps(cfg: &PbfsConfig, env: &Env) -> u64 {
    if cfg.dc_rtt_ps > 0 {
        cfg.dc_rtt_ps
    } else {
        env.base_rtt_ps.max(1)
    }
}

/// T_Δ: the time the sender takes to send Δ full-sized packets at line rate, picoseconds.
pub fn t_delta_ps(cfg: &PbfsConfig, env: &Env, net: &CoreConfig) -> u64 {
    let full = env.sizes.data(net.mtu_bytes);
    cfg.delta as u64 * net.framing.ser_ps(full, env.host_rate_bps.max(1))
}

impl PbfsSwitch {
    /// PB-FS on a switch with `ports`.
    pub fn new(cfg: &PbfsConfig, env: &Env, net: &CoreConfig, ports: &[EgressPort]) -> Self {
        let dc_rtt = dc_rtt_ps(cfg, env);
        let n = cfg.n_slots.max(1);
        let slot_ps = (dc_rtt / (2 * n as u64)).max(1);
        let bucket_ps = t_delta_ps(cfg, env, net)
            .div_ceil(RECENT_BUCKETS as u64)
            .max(1);
        PbfsSwitch {
            slot_ps,
            dc_rtt_ps: dc_rtt,
            bucket_ps,
            slots: ports.iter().map(|_| PortSlots::new(n, slot_ps)).collect(),
            recent: vec![RecentWindow::new(bucket_ps); ports.len()],
            last: None,
            counters: PbfsSwitchCounters::default(),
        }
    }

    /// Links from switch `node` to host `dst` along the forwarding tables (first ECMP port;
    /// all shortest paths have the same length).
    fn hops_to(ctx: &SwitchCtx<'_>, dst: u32) -> u32 {
        let mut node = ctx.node;
        for hops in 1..64 {
            let Some(&port) = ctx.routes.next_hops(node, dst).first() else {
                return hops;
            };
            match ctx.routes.port_target(node, port) {
                Some((peer, _)) if peer != dst => node = peer,
                _ => return hops,
            }
        }
        64
    }

    /// Send the sender of data packet `p` a CC-postcard built from assessment `a` of egress
    /// port `egress`: re-injected into this switch's ingress, routed back in the control
    /// class.
    fn send_postcard(&mut self, ctx: &mut SwitchCtx<'_>, p: u32, egress: u16, a: &Assessment) {
        let d = *ctx.arena.get(p);
        let (recent, marked) = self.recent[egress as usize].read(ctx.now_ps);
        let hops = Self::hops_to(ctx, d.src);
        let sat = |x: u64| x.min(u32::MAX as u64) as u32;
        let hdr = PostcardHdr {
            switch: ctx.node,
            i_p_bytes: sat(a.i_p),
            q1_bytes: sat(a.q1),
            rate_mbps: sat(ctx.ports[egress as usize].tx.link.rate_bps / 1_000_000),
            recent_bytes: sat(recent),
            recent_marked_bytes: sat(marked),
            hops: hops.min(255) as u8,
        };
        let mut pc = Packet::reverse_of(&d, hdr.header(), postcard_bytes(&ctx.env.sizes));
        pc.src = ctx.node;
        pc.prio = 0;
        let slot = ctx.arena.alloc(pc);
        self.counters.postcards_generated += 1;
        self.counters.hops_hist[(hops as usize).min(HOPS_HIST - 1)] += 1;
        if ctx.tier == 1 && ctx.ports[egress as usize].host_facing {
            self.counters.postcards_tor_down += 1;
        }
        self.last = Some(*a);
        ctx.out.push(Emit::Recirculate(slot));
    }
}

impl SwitchHooks for PbfsSwitch {
    fn hooks(&self) -> u16 {
        hook::INGRESS | hook::DEPARTURE
    }

    #[inline]
    fn owns(&self, pkt: &Packet) -> bool {
        PostcardHdr::is(pkt)
    }

    /// Postcards are forwarded untouched.
    fn on_control(&mut self, _ctx: &mut SwitchCtx<'_>, _p: u32, _in_port: u16) -> Verdict {
        Verdict::Pass
    }

    /// Every packet forwarded to `at.egress` counts in the port's slot and recent window
    /// (after the lookup, before admission). A PBT-triggering data packet then makes the
    /// switch assess the port (Definition 1) and, if congested, send a postcard.
    #[inline]
    fn on_ingress(&mut self, ctx: &mut SwitchCtx<'_>, p: u32, at: &Hop) -> Verdict {
        let now = ctx.now_ps;
        let e = at.egress as usize;
        let q_now = ctx.ports[e].bytes;
        let s = &mut self.slots[e];
        s.roll(now, q_now);
        s.add(at.size);
        let pk = ctx.arena.get(p);
        let marked = matches!(pk.hdr, Header::Data(_)) && pk.marks.any(PBT);
        self.recent[e].add(now, at.size, marked);
        if marked {
            self.counters.marked_assessed += 1;
            let a = self.slots[e].assess(ctx.ports[e].tx.link.rate_bps, self.dc_rtt_ps);
            if a.congested {
                self.send_postcard(ctx, p, at.egress, &a);
            }
        }
        Verdict::Pass
    }

    /// A departure changes the queue: roll the slots with the queue as it was before it (the
    /// departure stage, shared with ECN and PFC; the port's backlog is what the dequeue left).
    #[inline]
    fn on_departure(&mut self, ctx: &mut SwitchCtx<'_>, _p: u32, at: &Hop) {
        let e = at.egress as usize;
        let q_before = ctx.ports[e].bytes + at.size;
        self.slots[e].roll(ctx.now_ps, q_before);
    }
}

impl Scheme for PbfsSwitch {
    type Host = super::host::PbfsHost;
    type Config = super::PbfsConfig;
    const ID: SchemeId = super::ID;
    /// PBT-triggering ([`PBT`]), set by the sender.
    const MARK: Marks = PBT;

    fn build_switch(
        cfg: &Setup<'_, super::PbfsConfig>,
        env: &Env,
        tier: u8,
        ports: &[EgressPort],
    ) -> Option<Self> {
        let c = cfg.own;
        let here = match c.deploy {
            PbfsDeploy::All => true,
            PbfsDeploy::Tor => tier == 1,
        };
        (c.enabled && here).then(|| PbfsSwitch::new(c, env, cfg.core, ports))
    }

    fn build_host(
        cfg: &Setup<'_, super::PbfsConfig>,
        env: &Env,
        _hosts: usize,
        flows: usize,
    ) -> Option<Self::Host> {
        cfg.own
            .enabled
            .then(|| super::host::PbfsHost::new(cfg.own, env, flows))
    }

    fn summary(
        switches: &[&Self],
        host: Option<&Self::Host>,
        cfg: &Setup<'_, super::PbfsConfig>,
    ) -> Option<(&'static str, serde_json::Value)> {
        cfg.own
            .enabled
            .then(|| ("pbfs", super::summary_json(switches, host, cfg)))
    }
}
