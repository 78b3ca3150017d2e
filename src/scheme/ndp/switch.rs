//! The switch half of NDP (`specs/ndp.md` §1, htsim's `CompositeQueue`): per egress port a
//! low queue for data and a high queue for headers and control packets, each of the same byte
//! capacity; trimming on a coin flip; Return-To-Sender when the header queue is full.
//!
//! Where the work happens: [`SwitchHooks::select_queue`] puts data in [`LOW_QUEUE`] and NDP
//! control packets in [`HIGH_QUEUE`]; [`SwitchHooks::on_ingress`] applies the admission rule
//! ([`data_arrival`], [`control_arrival`]); NDP owns admission on both queues
//! ([`SwitchHooks::admit`] always admits what passed ingress), so the shared-buffer MMU only
//! accounts. A trimmed or returned header is a new packet recirculated into the switch's own
//! ingress ([`Emit::Recirculate`]), where it is routed (back to the sender for a returned one)
//! and meets the high queue's rule like any arriving header. The 10:1 service is the core's
//! weighted round robin (`SchedulerKind::Wrr`, weights set when the network is built).

use crate::engine::packet::{Header, Packet, WireHeader};
use crate::scheme::ndp::host::NdpHost;
use crate::scheme::ndp::wire::{NdpHdr, NdpKind};
use crate::scheme::ndp::{
    ControlAction, DataAction, HIGH_QUEUE, LOW_QUEUE, control_arrival, data_arrival,
};
use crate::scheme::{Emit, Env, Hop, Scheme, SwitchCtx, SwitchHooks, Verdict, hook};
use crate::scheme::{SchemeId, Setup};
use crate::switch::EgressPort;

/// Counters of one NDP switch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct NdpSwitchCounters {
    /// Data packets trimmed to headers (arrivals and tails).
    pub trims: u64,
    /// Of which the low queue's tail (the rest are arriving packets).
    pub trims_tail: u64,
    /// Headers returned to their sender (header queue full).
    pub rts: u64,
    /// Trimmed headers dropped (header queue full, already returned once).
    pub drops_header: u64,
    /// ACKs dropped (header queue full).
    pub drops_ack: u64,
    /// NACKs dropped (header queue full).
    pub drops_nack: u64,
    /// PULLs dropped (header queue full).
    pub drops_pull: u64,
}

impl NdpSwitchCounters {
    /// Control packets dropped, all kinds.
    pub fn control_drops(&self) -> u64 {
        self.drops_header + self.drops_ack + self.drops_nack + self.drops_pull
    }
}

/// NDP on one switch.
#[derive(Clone, Debug)]
pub struct NdpSwitch {
    /// Byte capacity of a port's data (low) queue.
    pub cap_bytes: u64,
    /// Byte capacity of a port's header (high) queue.
    pub cap_high_bytes: u64,
    /// Wire size of a trimmed header, bytes.
    pub header_bytes: u32,
    /// Counters.
    pub c: NdpSwitchCounters,
}

/// Turn data packet `p` into its trimmed header of `bytes` wire bytes (no-op for other kinds).
#[inline]
pub fn trim(p: &mut Packet, bytes: u32) {
    if let Header::Data(d) = p.hdr {
        p.hdr = NdpHdr {
            seq: d.seq,
            payload: d.payload,
            kind: NdpKind::Header,
            ..NdpHdr::default()
        }
        .header();
        p.size = bytes;
    }
}

/// Turn trimmed header `p` into its Return-To-Sender copy: source and destination (and UDP
/// ports) swapped, marked bounced.
#[inline]
pub fn bounce(p: &mut Packet) {
    std::mem::swap(&mut p.src, &mut p.dst);
    std::mem::swap(&mut p.sport, &mut p.dport);
    NdpHdr::update(p, |n| n.bounced = true);
}

impl NdpSwitch {
    /// NDP switch for `cfg` (data queue: `queue_pkts` full-size data packets; header queue:
    /// `control_queue_bytes`, or as many bytes as the data queue).
    pub fn new(cfg: &Setup<'_, super::NdpConfig>) -> Self {
        let cap = cfg.own.queue_pkts as u64 * cfg.max_packet_bytes();
        NdpSwitch {
            cap_bytes: cap,
            cap_high_bytes: match cfg.own.control_queue_bytes {
                0 => cap,
                b => b,
            },
            header_bytes: cfg.own.header_bytes,
            c: NdpSwitchCounters::default(),
        }
    }
}

impl SwitchHooks for NdpSwitch {
    fn hooks(&self) -> u16 {
        hook::SELECT_QUEUE | hook::INGRESS | hook::ADMIT
    }

    #[inline]
    fn select_queue(&mut self, ctx: &mut SwitchCtx<'_>, pkt: u32, _egress: u16) -> Option<usize> {
        let p = ctx.arena.get(pkt);
        match p.hdr {
            Header::Data(_) => Some(LOW_QUEUE),
            _ if NdpHdr::is(p) => Some(HIGH_QUEUE),
            _ => None,
        }
    }

    #[inline]
    fn on_ingress(&mut self, ctx: &mut SwitchCtx<'_>, pkt: u32, at: &Hop) -> Verdict {
        let e = at.egress as usize;
        if at.q == LOW_QUEUE {
            let low = ctx.ports[e].queues[LOW_QUEUE].bytes;
            if low + at.size <= self.cap_bytes {
                return Verdict::Pass;
            }
            let coin = ctx.rng.below(2) == 0;
            match data_arrival(low, at.size, self.cap_bytes, coin) {
                DataAction::Enqueue => Verdict::Pass,
                DataAction::TrimTail => {
                    let arena = &*ctx.arena;
                    let Some((t, bytes)) =
                        ctx.ports[e].remove_tail(LOW_QUEUE, |p| arena.get(p).size as u64)
                    else {
                        return Verdict::Pass;
                    };
                    let tp = ctx.arena.get_mut(t);
                    ctx.out.push(Emit::Release { bytes });
                    trim(tp, self.header_bytes);
                    ctx.out.push(Emit::Recirculate(t));
                    self.c.trims += 1;
                    self.c.trims_tail += 1;
                    Verdict::Pass
                }
                DataAction::TrimArrival => {
                    let mut h = *ctx.arena.get(pkt);
                    trim(&mut h, self.header_bytes);
                    let slot = ctx.arena.alloc(h);
                    ctx.out.push(Emit::Recirculate(slot));
                    self.c.trims += 1;
                    Verdict::Consumed
                }
            }
        } else if at.q == HIGH_QUEUE {
            let Some(n) = NdpHdr::of(ctx.arena.get(pkt)) else {
                return Verdict::Pass;
            };
            let high = ctx.ports[e].queues[HIGH_QUEUE].bytes;
            let header = n.kind == NdpKind::Header;
            match control_arrival(high, at.size, self.cap_high_bytes, header, n.bounced) {
                ControlAction::Enqueue => Verdict::Pass,
                ControlAction::ReturnToSender => {
                    let mut r = *ctx.arena.get(pkt);
                    bounce(&mut r);
                    let slot = ctx.arena.alloc(r);
                    ctx.out.push(Emit::Recirculate(slot));
                    self.c.rts += 1;
                    Verdict::Consumed
                }
                ControlAction::Drop => {
                    match n.kind {
                        NdpKind::Header => self.c.drops_header += 1,
                        NdpKind::Ack => self.c.drops_ack += 1,
                        NdpKind::Nack => self.c.drops_nack += 1,
                        NdpKind::Pull => self.c.drops_pull += 1,
                    }
                    Verdict::Drop
                }
            }
        } else {
            Verdict::Pass
        }
    }

    #[inline]
    fn admit(&mut self, _ctx: &mut SwitchCtx<'_>, _pkt: u32, at: &Hop) -> Option<bool> {
        (at.q == LOW_QUEUE || at.q == HIGH_QUEUE).then_some(true)
    }
}

impl Scheme for NdpSwitch {
    type Host = NdpHost;
    type Config = super::NdpConfig;
    const ID: SchemeId = super::ID;

    fn build_switch(
        cfg: &Setup<'_, super::NdpConfig>,
        _env: &Env,
        _tier: u8,
        _ports: &[EgressPort],
    ) -> Option<Self> {
        cfg.own.enabled.then(|| NdpSwitch::new(cfg))
    }

    /// NDP is its own transport, receiver-pulled, without a congestion controller.
    fn check_run(
        cfg: &Setup<'_, super::NdpConfig>,
        cc: &crate::cc::CcConfig,
        _topo: &crate::topology::TopologySpec,
    ) -> Result<(), String> {
        if cfg.own.enabled && !matches!(cc, crate::cc::CcConfig::None(_)) {
            return Err(format!(
                "NDP is its own transport (receiver-pulled, no congestion control): set cc.mode \
                 = \"none\" (got {})",
                cc.name()
            ));
        }
        Ok(())
    }

    /// NDP's transport ([`super::sender`], kept by the host half) for every QP: the NIC
    /// serves one QP while it has credit unless `sender_rr`, the receiver answers and pulls
    /// itself, and the retransmission timer runs with nothing outstanding.
    fn transport(
        cfg: &Setup<'_, super::NdpConfig>,
        _env: &Env,
    ) -> Option<crate::host::transport::TransportParams> {
        let c = cfg.own;
        c.enabled.then(|| crate::host::transport::TransportParams {
            sender_fifo: !c.sender_rr,
            receiver_driven: true,
            idle_timer: true,
            ..crate::host::transport::TransportParams::scheme(c.rto_ps)
        })
    }

    /// Weighted round robin between the header and data queues on every port.
    fn prepare_ports(
        cfg: &Setup<'_, super::NdpConfig>,
        ports: &mut [EgressPort],
    ) -> Option<crate::config::SchedulerKind> {
        cfg.own.enabled.then(|| {
            super::host::install_wrr(cfg.own, ports);
            crate::config::SchedulerKind::Wrr
        })
    }

    fn build_host(
        cfg: &Setup<'_, super::NdpConfig>,
        env: &Env,
        hosts: usize,
        flows: usize,
    ) -> Option<NdpHost> {
        cfg.own
            .enabled
            .then(|| NdpHost::new(cfg, env, hosts, flows))
    }

    fn summary(
        switches: &[&Self],
        host: Option<&NdpHost>,
        cfg: &Setup<'_, super::NdpConfig>,
    ) -> Option<(&'static str, serde_json::Value)> {
        if !cfg.own.enabled {
            return None;
        }
        let mut c = NdpSwitchCounters::default();
        for s in switches {
            c.trims += s.c.trims;
            c.trims_tail += s.c.trims_tail;
            c.rts += s.c.rts;
            c.drops_header += s.c.drops_header;
            c.drops_ack += s.c.drops_ack;
            c.drops_nack += s.c.drops_nack;
            c.drops_pull += s.c.drops_pull;
        }
        let h = host.map(|h| h.c).unwrap_or_default();
        Some((
            "ndp",
            serde_json::json!({
                "config": cfg.own,
                "trims": c.trims,
                "trims_tail": c.trims_tail,
                "rts": c.rts,
                "control_drops": c.control_drops(),
                "drops_header": c.drops_header,
                "drops_ack": c.drops_ack,
                "drops_nack": c.drops_nack,
                "drops_pull": c.drops_pull,
                "pulls": h.pulls,
                "pulls_piggybacked": h.pulls_piggybacked,
                "acks": h.acks,
                "nacks": h.nacks,
                "rts_received": h.rts_received,
                "timeouts": h.timeouts,
            }),
        ))
    }
}
