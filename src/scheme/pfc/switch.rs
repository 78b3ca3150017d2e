//! The switch half of PFC: lossless ingress admission, PAUSE (XOFF) / RESUME (XON) frames sent
//! upstream out of the ingress port, XOFF refresh with real pause quanta, and receipt of the
//! frames a downstream switch sends (which pause this switch's egress priorities).
//!
//! Ordering follows HPCC-sim: the XOFF decision is taken when the packet is admitted and the
//! frame is sent after the packet is queued (after the other schemes' enqueue actions). A
//! packet's ingress bytes are released, and the XON decision taken, when it leaves: the frame
//! is sent right after that packet started transmission. (HPCC-sim releases and decides in
//! its dequeue notification, just before the packet's transmission starts; nothing between
//! the two changes ingress accounting, except a packet another scheme re-injects into this
//! switch at dequeue — SFC's egress-mode BTS — which is now charged before the release.)

use crate::config::BufferMode;
use crate::engine::packet::{Packet, PktKind, WireHeader};
use crate::scheme::pause::{PfcHdr, pfc_frame};
use crate::scheme::pfc::{PauseTimes, PfcState, Received, RxPort, quanta_ps};
use crate::scheme::{Emit, Env, Hop, Scheme, SwitchCtx, SwitchHooks, Verdict, hook};
use crate::scheme::{SchemeId, Setup};
use crate::switch::EgressPort;

/// Timer / deferred-call kinds of the switch half (`which` of [`Emit::Timer`] and
/// [`Emit::Call`]).
pub mod timer {
    /// A received pause of (port, prio = arg) may have expired.
    pub const EXPIRE: u8 = 0;
    /// Refresh the XOFF sent out of (port, prio = arg) if the condition persists.
    pub const REFRESH: u8 = 1;
    /// Send the XOFF decided at admission for (port, prio = arg) (deferred by the core until
    /// the packet is queued and the other schemes' enqueue actions are done).
    pub const SEND_XOFF: u8 = 2;
}

/// PFC on one switch (`repr(C)`: the per-packet accounting first).
#[derive(Clone, Debug)]
#[repr(C)]
pub struct PfcSwitch {
    /// Ingress accounting and XOFF/XON generation (lossless buffer only).
    pub lossless: Option<PfcState>,
    /// Received pauses of this switch's egress ports.
    pub rx: PauseTimes,
    /// Pause frames carry real quanta (and are refreshed) instead of holding until RESUME.
    pub expiry: bool,
    /// Quanta per PAUSE frame.
    pub quanta: u32,
    /// PAUSE frames sent (including refreshes).
    pub pauses: u64,
    /// RESUME frames sent.
    pub resumes: u64,
    /// Drops in lossless mode (headroom overflow): 0 with sane settings, unless paused NICs
    /// keep sending ACKs in the data priority ([`Self::drops_lossless_acks`]).
    pub drops_lossless: u64,
    /// Those of [`Self::drops_lossless`] that were ACKs or NACKs (sent by a paused NIC with
    /// `ack_high_prio` and queued in the data priority at switches, as in HPCC-sim).
    pub drops_lossless_acks: u64,
    /// Ingress accounting and pauses follow the packet's priority, not its egress queue: under
    /// BFC's per-flow queues (BFC, SFQ, Ideal-FQ, BFC-VFID) the queue index is a physical
    /// queue, while PFC (802.1Qbb, the backstop) pauses priorities. Without BFC queue =
    /// priority for every admitted packet and the queue is used.
    pub class_by_prio: bool,
}

impl PfcSwitch {
    /// Send a PAUSE (`pause`) or RESUME for priority `q` out of `port`, towards the upstream
    /// device that feeds that ingress.
    fn send(&mut self, ctx: &mut SwitchCtx<'_>, port: u16, q: usize, pause: bool) {
        let now = ctx.now_ps;
        let Some(pfc) = self.lossless.as_mut() else {
            return;
        };
        let rate = ctx.ports[port as usize].tx.link.rate_bps;
        let dur = if !pause {
            0
        } else if self.expiry {
            quanta_ps(self.quanta, rate).max(1)
        } else {
            u64::MAX
        };
        let frame = pfc_frame(
            ctx.node,
            ctx.ports[port as usize].tx.link.peer,
            ctx.env.sizes.mac_control(),
            q as u8,
            dur,
        );
        let slot = ctx.arena.alloc(frame);
        pfc.set_paused(port, q, pause);
        if pause {
            self.pauses += 1;
            if dur != u64::MAX {
                // Refresh at half the pause time while the condition persists.
                let at = now + (dur / 2).max(1);
                pfc.set_refresh_at(port, q, at);
                ctx.out.push(Emit::Timer {
                    at_ps: at,
                    port,
                    which: timer::REFRESH,
                    arg: q as u8,
                });
            }
        } else {
            self.resumes += 1;
            pfc.set_refresh_at(port, q, 0);
        }
        ctx.out.push(Emit::Control { port, pkt: slot });
    }
}

/// The PFC priority of packet `p` (its priority group, within the port's priorities).
#[inline]
fn class_of(ctx: &SwitchCtx<'_>, p: u32) -> usize {
    (ctx.arena.get(p).prio as usize).min(ctx.ports.first().map_or(1, |e| e.queues.len()) - 1)
}

/// The pause of priority `q` of egress `port` was lifted now: record the end of its OFF
/// period (TCD's T_on starts here).
#[inline]
fn mark_off_end(ctx: &mut SwitchCtx<'_>, port: u16, q: usize) {
    if let Some(qq) = ctx.ports[port as usize].queues.get_mut(q) {
        qq.off_end_ps = ctx.now_ps;
    }
}

impl SwitchHooks for PfcSwitch {
    fn hooks(&self) -> u16 {
        if self.lossless.is_some() {
            hook::ADMIT | hook::DEPARTURE
        } else {
            0
        }
    }

    #[inline]
    fn owns(&self, pkt: &Packet) -> bool {
        PfcHdr::is(pkt)
    }

    /// A PFC frame from the downstream device on `in_port`: pause or resume this switch's
    /// egress priority on that port. Hop-by-hop: always consumed.
    fn on_control(&mut self, ctx: &mut SwitchCtx<'_>, p: u32, in_port: u16) -> Verdict {
        if let Some(f) = PfcHdr::of(ctx.arena.get(p)) {
            let tx = &mut ctx.ports[in_port as usize].tx;
            let at = RxPort {
                slot: in_port as usize,
                node: ctx.node,
                is_switch: true,
                port: in_port,
            };
            match self.rx.receive(tx, at, &f, ctx.now_ps, ctx.event_no) {
                Received::Nothing => {}
                Received::Paused(None) => {}
                Received::Paused(Some(at)) => ctx.out.push(Emit::Timer {
                    at_ps: at,
                    port: in_port,
                    which: timer::EXPIRE,
                    arg: f.prio,
                }),
                Received::Resumed => {
                    mark_off_end(ctx, in_port, f.prio as usize);
                    ctx.out.push(Emit::Kick { port: in_port });
                }
            }
        }
        Verdict::Consumed
    }

    /// HPCC-sim's ingress admission (headroom overflow is the only drop). An admitted packet
    /// that brings its ingress (port, priority) over the XOFF threshold asks for a PAUSE,
    /// which the core sends after the packet is queued (admission requests are deferred).
    #[inline]
    fn admit(&mut self, ctx: &mut SwitchCtx<'_>, p: u32, at: &Hop) -> Option<bool> {
        let q = if self.class_by_prio {
            // The control class (prio 0: ACKs with ACK_HIGH_PRIO, which BFC queues in its
            // high-priority queue) is not admitted, as in queue 0.
            match class_of(ctx, p) {
                0 => return Some(true),
                c => c,
            }
        } else {
            at.q
        };
        let pfc = self.lossless.as_mut()?;
        match pfc.admit_charge(at.in_port, q, at.size) {
            Some(pause) => {
                if pause {
                    ctx.out.push(Emit::Call {
                        port: at.in_port,
                        which: timer::SEND_XOFF,
                        arg: q as u8,
                    });
                }
                Some(true)
            }
            None => {
                self.drops_lossless += 1;
                if matches!(ctx.arena.get(p).kind(), PktKind::Ack | PktKind::Nack) {
                    self.drops_lossless_acks += 1;
                }
                Some(false)
            }
        }
    }

    /// The packet left: release its ingress bytes; RESUME its ingress priority if that
    /// brought the ingress below the resume threshold.
    #[inline]
    fn on_departure(&mut self, ctx: &mut SwitchCtx<'_>, p: u32, at: &Hop) {
        if at.q == 0 {
            return;
        }
        let q = if self.class_by_prio {
            match class_of(ctx, p) {
                0 => return,
                c => c,
            }
        } else {
            at.q
        };
        if let Some(pfc) = &mut self.lossless {
            pfc.release(at.in_port, q, at.size);
            if pfc.should_resume(at.in_port, q) {
                self.send(ctx, at.in_port, q, false);
            }
        }
    }

    fn on_timer(&mut self, ctx: &mut SwitchCtx<'_>, port: u16, which: u8, arg: u8) {
        let q = arg as usize;
        match which {
            timer::EXPIRE => {
                let tx = &mut ctx.ports[port as usize].tx;
                if self.rx.expire(tx, port as usize, q, ctx.now_ps) {
                    mark_off_end(ctx, port, q);
                    ctx.out.push(Emit::Kick { port });
                }
            }
            timer::REFRESH => {
                if let Some(pfc) = &self.lossless {
                    let c = pfc.cell(port, q);
                    if c.refresh_at == ctx.now_ps && c.paused {
                        self.send(ctx, port, q, true);
                    }
                }
            }
            timer::SEND_XOFF => self.send(ctx, port, q, true),
            _ => {}
        }
    }

    #[inline]
    fn prefetch(&self, in_port: u16, q: usize) {
        if let Some(pfc) = &self.lossless {
            pfc.prefetch(in_port, q);
        }
    }

    /// The pauses the port received end as if a RESUME had arrived.
    fn on_link_down(&mut self, ctx: &mut SwitchCtx<'_>, port: u16) {
        let tx = &mut ctx.ports[port as usize].tx;
        self.rx.link_down(tx, port as usize, ctx.now_ps);
    }

    fn finish(&mut self, ctx: &mut SwitchCtx<'_>) {
        for (i, ep) in ctx.ports.iter().enumerate() {
            self.rx.finish(&ep.tx, i, ctx.now_ps);
        }
    }
}

impl Scheme for PfcSwitch {
    type Host = super::host::PfcHost;
    type Config = super::PfcConfig;
    const ID: SchemeId = super::ID;

    /// On every switch of a lossless fabric whose buffer no other scheme runs instead
    /// ([`crate::scheme::Peers::replaces_pfc`]: CBFC) (α of the ingress threshold scaled per port rate
    /// from the host rate).
    fn build_switch(
        cfg: &Setup<'_, super::PfcConfig>,
        env: &Env,
        _tier: u8,
        ports: &[EgressPort],
    ) -> Option<Self> {
        if cfg.buffer.mode != BufferMode::Lossless || cfg.peers.replaces_pfc.is_some() {
            return None;
        }
        let pr: Vec<(u64, u64)> = ports
            .iter()
            .map(|e| (e.tx.link.rate_bps, e.tx.link.delay_ps))
            .collect();
        Some(PfcSwitch {
            lossless: Some(PfcState::new(
                cfg.own,
                &pr,
                env.queues_per_port,
                cfg.buffer.size_bytes,
                cfg.own.nic_rate_bps.unwrap_or(env.host_rate_bps),
            )),
            rx: PauseTimes::new(ports.len(), env.queues_per_port).with_shared_queues(
                if cfg.peers.queues_by_flow {
                    // Every queue but the control class 0.
                    (u64::MAX >> (64 - env.queues_per_port)) & !1
                } else {
                    0
                },
            ),
            expiry: cfg.own.expiry,
            quanta: cfg.own.quanta,
            pauses: 0,
            resumes: 0,
            drops_lossless: 0,
            drops_lossless_acks: 0,
            class_by_prio: cfg.peers.queues_by_flow,
        })
    }

    /// Every NIC understands PFC (SFC-P pauses NICs even in a lossy fabric).
    fn build_host(
        _cfg: &Setup<'_, super::PfcConfig>,
        env: &Env,
        hosts: usize,
        _flows: usize,
    ) -> Option<Self::Host> {
        Some(super::host::PfcHost {
            rx: PauseTimes::new(hosts, env.queues_per_port),
        })
    }

    /// Packets dropped in the lossless fabric (PFC headroom overflow, which sane settings
    /// never cause), naming the usual cause when ACKs were among them: NICs with
    /// `ack_high_prio` send ACKs while paused, and switches queue them in the data priority
    /// (HPCC-sim's behaviour) unless `switch_ack_high_prio`; and, drops or not, pauses that
    /// hold until a RESUME on links that drop packets (HPCC-sim's rule, `pfc.expiry = false`,
    /// the `sfc hpcc` default): a lost RESUME pauses its port for the rest of the run
    /// (`specs/pfc.md` §3.1), with no other symptom than flows that never finish.
    fn warnings(
        switches: &[&Self],
        _host: Option<&Self::Host>,
        cfg: &Setup<'_, super::PfcConfig>,
        topo: &crate::topology::TopologySpec,
    ) -> Vec<String> {
        let mut v = Vec::new();
        let n: u64 = switches.iter().map(|s| s.drops_lossless).sum();
        if n > 0 {
            let acks: u64 = switches.iter().map(|s| s.drops_lossless_acks).sum();
            v.push(if acks > 0 && cfg.ack_high_prio && !cfg.switch_ack_high_prio {
                format!(
                    "warning: {n} packets dropped in the lossless fabric (PFC headroom overflow), {acks} \
                     of them ACK/NACKs: with ACK_HIGH_PRIO a paused NIC still sends its ACKs, and the \
                     switches queue them in the data priority, as HPCC-sim does \
                     (`network.switch_ack_high_prio = true` puts them in queue 0 at switches)"
                )
            } else {
                format!(
                    "warning: {n} packets dropped in the lossless fabric (PFC headroom overflow, {acks} \
                     of them ACK/NACKs): check the headroom settings"
                )
            });
        }
        let lossy = topo.links.iter().filter(|l| l.error_rate > 0.0).count();
        if cfg.buffer.mode == BufferMode::Lossless
            && !cfg.own.expiry
            && cfg.peers.replaces_pfc.is_none()
            && lossy > 0
        {
            v.push(format!(
                "warning: PFC pauses hold until a RESUME (HPCC-sim's rule: PFC_EXPIRY 0, pfc.expiry = \
                 false) and {lossy} links drop packets (error rate > 0): a RESUME lost on one pauses \
                 its port for the rest of the run (PFC_EXPIRY 1 / pfc.expiry = true makes pauses \
                 expire and be refreshed)"
            ));
        }
        v
    }

    fn summary(
        switches: &[&Self],
        host: Option<&Self::Host>,
        cfg: &Setup<'_, super::PfcConfig>,
    ) -> Option<(&'static str, serde_json::Value)> {
        Some((
            "pfc",
            serde_json::json!({
                "enabled": cfg.buffer.mode == BufferMode::Lossless && cfg.peers.replaces_pfc.is_none(),
                "pauses": switches.iter().map(|s| s.pauses).sum::<u64>(),
                "resumes": switches.iter().map(|s| s.resumes).sum::<u64>(),
                "paused_ps": switches.iter().map(|s| s.rx.paused_ps).sum::<u64>()
                    + host.map_or(0, |h| h.rx.paused_ps),
                "drops_lossless": switches.iter().map(|s| s.drops_lossless).sum::<u64>(),
                "drops_lossless_acks": switches.iter().map(|s| s.drops_lossless_acks).sum::<u64>(),
                "frames_received": switches.iter().map(|s| s.rx.log.len()).sum::<usize>()
                    + host.map_or(0, |h| h.rx.log.len()),
            }),
        ))
    }
}
