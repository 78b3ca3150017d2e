//! The switch half of TCD: Figure 9 at every dequeue from a data queue, CE/UE marking of data
//! packets, and the per-(port, priority) counters of the `tcd` summary section.

use crate::config::BufferMode;
use crate::engine::packet::Header;
use crate::engine::packet::Marks;
use crate::scheme::marking::{EcnThresholds, should_mark};
use crate::scheme::tcd::{CeMarking, Mark, TcdParams, TcdQueue, UE, max_ton_ps, pfc_tau_ps};
use crate::scheme::{Env, Hop, NoHost, Scheme, SwitchCtx, SwitchHooks, hook};
use crate::scheme::{SchemeId, Setup};
use crate::switch::EgressPort;

/// Marks applied at one egress (port, priority).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueMarks {
    /// Data packets marked CE here (including UE upgraded to CE).
    pub ce: u64,
    /// Data packets marked UE here.
    pub ue: u64,
    /// Packets transmitted from this queue (any kind): 0 = the queue never ran Figure 9.
    pub packets: u64,
    /// Time of the first CE mark here, picoseconds (0 = none).
    pub first_ce_ps: u64,
    /// Time of the last UE mark here, picoseconds (0 = none).
    pub last_ue_ps: u64,
}

/// TCD on one switch.
#[derive(Clone, Debug)]
pub struct TcdSwitch {
    /// Node id (learnt at the end of the run, for the summary).
    pub node: u32,
    /// Queues per port.
    pub nq: usize,
    /// Figure 9's parameters per egress port.
    pub params: Vec<TcdParams>,
    /// RED thresholds per port ([`CeMarking::Red`]; `None` = every CE decision marks).
    pub red: Vec<Option<EcnThresholds>>,
    /// State per (port, priority), index `port · nq + prio`.
    pub queues: Vec<TcdQueue>,
    /// Marks per (port, priority).
    pub marks: Vec<QueueMarks>,
    /// UE marks replaced by CE at this switch.
    pub upgrades: u64,
}

impl TcdSwitch {
    /// Figure 9's parameters of a port of `rate_bps` with propagation delay `delay_ps`:
    /// on a credit fabric (CBFC: TCD-IB) max(T_on) = the port's credit-update period T_c
    /// ([`crate::scheme::Peers::credit_period`]); otherwise
    /// max(T_on) from Eq. (3) with τ = 2·MTU/C + 2·t_p and B1 − B0 = the PFC XON hysteresis
    /// (each overridable), T = max(T_on), the threshold = the port's ECN Kmin.
    pub fn port_params(
        cfg: &Setup<'_, super::TcdConfig>,
        rate_bps: u64,
        delay_ps: u64,
    ) -> TcdParams {
        let t = cfg.own;
        let mtu = cfg.max_packet_bytes();
        let max_ton = t.max_ton_ps.unwrap_or_else(|| {
            if let Some(period) = cfg.peers.credit_period {
                // TCD-IB (fragment §4.4): the ON period of a CBFC-regulated port is cut in
                // units of the credit-update period, T_on = R_d·T_c/(R_d + ε·C) < T_c: T_c
                // is the upper bound.
                return period.at(rate_bps);
            }
            let tau = t
                .tau_ps
                .unwrap_or_else(|| pfc_tau_ps(mtu, rate_bps, delay_ps));
            let hyst = t
                .hysteresis_bytes
                .or(cfg.peers.xon_hysteresis_bytes)
                .unwrap_or(0);
            max_ton_ps(hyst, t.epsilon, rate_bps, tau)
        });
        let threshold = t.threshold_bytes.unwrap_or_else(|| {
            cfg.ecn
                .for_rate(rate_bps)
                .map_or(u64::MAX, |e| e.kmin_bytes)
        });
        TcdParams {
            max_ton_ps: max_ton.max(1),
            period_ps: t.period_ps.unwrap_or(max_ton).max(1),
            threshold_bytes: threshold,
            low_threshold_bytes: t.low_threshold_bytes.unwrap_or(mtu),
        }
    }
}

impl SwitchHooks for TcdSwitch {
    fn hooks(&self) -> u16 {
        hook::DEPARTURE
    }

    #[inline]
    fn prefetch_egress(&self, port: u16) {
        if let Some(p) = self.params.get(port as usize) {
            crate::engine::prefetch(p as *const TcdParams);
        }
    }

    /// Figure 9 for the packet leaving data queue `at.q` of `at.egress`, on the backlog it
    /// leaves behind; marks data packets (UE only if not already CE; CE replaces UE). Runs in
    /// the departure stage, like ECN: the same instant as the dequeue, the mark still travels
    /// with the header, and the stage is shared with PFC's release.
    #[inline]
    fn on_departure(&mut self, ctx: &mut SwitchCtx<'_>, p: u32, at: &Hop) {
        if at.q == 0 {
            return;
        }
        let port = at.egress as usize;
        let i = port * self.nq + at.q;
        let (Some(par), Some(st)) = (self.params.get(port), self.queues.get_mut(i)) else {
            return;
        };
        let qq = &ctx.ports[port].queues[at.q];
        let backlog = qq.bytes;
        let mark = st.on_transmit(par, ctx.now_ps, qq.off_end_ps, backlog, at.size);
        let m = &mut self.marks[i];
        m.packets += 1;
        let pk = ctx.arena.get_mut(p);
        let Header::Data(d) = &mut pk.hdr else {
            return;
        };
        match mark {
            Mark::None => {}
            // "ECN == CE?" No → "Mark(UE)".
            Mark::Ue => {
                if !d.ce {
                    pk.marks.insert(UE);
                    m.ue += 1;
                    m.last_ue_ps = ctx.now_ps;
                }
            }
            Mark::Ce => {
                let yes = match &self.red[port] {
                    None => true,
                    Some(t) => should_mark(backlog, t, ctx.rng),
                };
                if yes {
                    if pk.marks.any(UE) {
                        self.upgrades += 1;
                    }
                    pk.marks.remove(UE);
                    d.ce = true;
                    m.ce += 1;
                    if m.first_ce_ps == 0 {
                        m.first_ce_ps = ctx.now_ps;
                    }
                }
            }
        }
    }

    fn finish(&mut self, ctx: &mut SwitchCtx<'_>) {
        self.node = ctx.node;
        for (q, m) in self.queues.iter_mut().zip(&self.marks) {
            if m.packets > 0 {
                q.finish(ctx.now_ps);
            }
        }
    }
}

impl Scheme for TcdSwitch {
    type Host = NoHost;
    type Config = super::TcdConfig;
    const ID: SchemeId = super::ID;
    /// UE ([`UE`]).
    const MARK: Marks = UE;
    /// Receivers echo UE (on ACKs, or as the UE variant of a CNP).
    const ECHO_MARK: bool = true;

    /// On every switch of a lossless fabric with `tcd.enabled` (it then replaces plain ECN
    /// marking, see [`crate::scheme::ecn`]).
    fn build_switch(
        cfg: &Setup<'_, super::TcdConfig>,
        env: &Env,
        _tier: u8,
        ports: &[EgressPort],
    ) -> Option<Self> {
        if !cfg.own.enabled || cfg.buffer.mode != BufferMode::Lossless {
            return None;
        }
        let nq = env.queues_per_port;
        let params = ports
            .iter()
            .map(|e| Self::port_params(cfg, e.tx.link.rate_bps, e.tx.link.delay_ps))
            .collect();
        let red = ports
            .iter()
            .map(|e| match cfg.own.ce_marking {
                CeMarking::Step => None,
                CeMarking::Red => cfg.ecn.for_rate(e.tx.link.rate_bps),
            })
            .collect();
        Some(TcdSwitch {
            node: 0,
            nq,
            params,
            red,
            queues: vec![TcdQueue::default(); ports.len() * nq],
            marks: vec![QueueMarks::default(); ports.len() * nq],
            upgrades: 0,
        })
    }

    /// `tcd`: marks, time per state (summed over the (port, priority) pairs that transmitted),
    /// transitions, the longest ON period ended by a PAUSE (and its largest ratio to the port's
    /// max(T_on)), and the same per (switch, port, priority) for every pair that left the
    /// non-congestion state or marked a packet.
    fn summary(
        switches: &[&Self],
        _host: Option<&NoHost>,
        cfg: &Setup<'_, super::TcdConfig>,
    ) -> Option<(&'static str, serde_json::Value)> {
        if !cfg.own.enabled {
            return None;
        }
        let mut time = [0u64; 3];
        let mut transitions = 0u64;
        let (mut ce, mut ue) = (0u64, 0u64);
        let mut ports = Vec::new();
        let (mut max_on, mut on_periods, mut on_ratio) = (0u64, 0u64, 0f64);
        for s in switches {
            for (i, (q, m)) in s.queues.iter().zip(&s.marks).enumerate() {
                if m.packets == 0 {
                    continue;
                }
                for (t, q_t) in time.iter_mut().zip(&q.time_in_ps) {
                    *t += q_t;
                }
                transitions += q.transitions;
                ce += m.ce;
                ue += m.ue;
                max_on = max_on.max(q.max_on_ps);
                on_periods += q.on_periods;
                let port = i / s.nq;
                on_ratio = on_ratio.max(q.max_on_ps as f64 / s.params[port].max_ton_ps as f64);
                if q.transitions > 0 || m.ce > 0 || m.ue > 0 {
                    ports.push(serde_json::json!({
                        "switch": s.node,
                        "port": port,
                        "prio": i % s.nq,
                        "max_ton_ps": s.params[port].max_ton_ps,
                        "time_ps": state_times(&q.time_in_ps),
                        "transitions": q.transitions,
                        "ce_marks": m.ce,
                        "ue_marks": m.ue,
                        "packets": m.packets,
                        "on_periods": q.on_periods,
                        "max_on_ps": q.max_on_ps,
                    }));
                }
            }
        }
        Some((
            "tcd",
            serde_json::json!({
                "enabled": true,
                "ce_marks": ce,
                "ue_marks": ue,
                "ue_upgraded_to_ce": switches.iter().map(|s| s.upgrades).sum::<u64>(),
                "time_ps": state_times(&time),
                "transitions": transitions,
                "on_periods": on_periods,
                "max_on_ps": max_on,
                "max_on_over_max_ton": on_ratio,
                "ports": ports,
            }),
        ))
    }
}

fn state_times(t: &[u64; 3]) -> serde_json::Value {
    use crate::scheme::tcd::TcdState as S;
    serde_json::json!({
        S::NonCongestion.name(): t[0],
        S::Undetermined.name(): t[1],
        S::Congestion.name(): t[2],
    })
}
