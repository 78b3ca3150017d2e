//! The host half of PB-FS: sender marking (paper Fig. 2) and the reaction to CC-postcards
//! (Algorithm 1). The new rate is handed to the flow's congestion controller with
//! [`HostAction::SetRate`] (see [`crate::cc::SchemeSignal::SetRate`] for what each
//! controller does with it).

use crate::engine::packet::{Marks, Packet, WireHeader};
use crate::scheme::pbfs::switch::dc_rtt_ps;
use crate::scheme::pbfs::wire::PostcardHdr;
use crate::scheme::pbfs::{PBT, PbfsConfig, PbfsFlow, reaction};
use crate::scheme::{AckEvent, Env, HostAction, HostCtx, HostHooks};
use crate::units::bytes_in_ps;

/// PB-FS at the senders: per-flow marking and Algorithm 1 state.
#[derive(Clone, Debug)]
pub struct PbfsHost {
    /// Δ, packets.
    pub delta: u32,
    /// μ.
    pub mu: f64,
    /// DC_RTT, picoseconds.
    pub dc_rtt_ps: u64,
    /// I_min, bytes.
    pub i_min_bytes: u64,
    /// MaxRate: the sender's line rate, bits per second.
    pub max_rate_bps: u64,
    /// Smallest flow using PB-FS, T·τ, wire bytes (what the line carries in τ: the paper's
    /// flows that need at least τ "to transmit all their data").
    pub min_flow_bytes: u64,
    /// Payload bytes per full data packet (the scenario's MTU payload).
    pub mtu_bytes: u64,
    /// Bytes a data packet adds to its payload (headers, INT).
    pub packet_overhead_bytes: u64,
    /// Per-flow state (index = flow).
    pub flows: Vec<PbfsFlow>,
    /// PBT-triggering packets sent.
    pub marked_packets: u64,
    /// Postcards that reached their sender.
    pub postcards_received: u64,
    /// Postcards that arrived after their flow's PBT interval (or for a flow not using PB-FS).
    pub postcards_ignored: u64,
    /// Rates set by postcards.
    pub rate_updates: u64,
}

impl PbfsHost {
    /// PB-FS for `flows` flows on NICs of `env.host_rate_bps`. τ defaults to DC_RTT/2 and
    /// I_min to 20 % of the maximum BDP (max base RTT × host rate).
    pub fn new(cfg: &PbfsConfig, env: &Env, flows: usize) -> Self {
        let dc_rtt = dc_rtt_ps(cfg, env);
        let tau = if cfg.tau_ps > 0 {
            cfg.tau_ps
        } else {
            dc_rtt / 2
        };
        let i_min = if cfg.i_min_bytes > 0 {
            cfg.i_min_bytes
        } else {
            bytes_in_ps(env.base_rtt_ps, env.host_rate_bps) / 5
        };
        PbfsHost {
            delta: cfg.delta.max(1),
            mu: cfg.mu,
            dc_rtt_ps: dc_rtt,
            i_min_bytes: i_min,
            max_rate_bps: env.host_rate_bps,
            min_flow_bytes: bytes_in_ps(tau, env.host_rate_bps),
            mtu_bytes: u64::from(env.mtu_bytes.max(1)),
            packet_overhead_bytes: u64::from(env.sizes.data(0)),
            flows: vec![PbfsFlow::default(); flows],
            marked_packets: 0,
            postcards_received: 0,
            postcards_ignored: 0,
            rate_updates: 0,
        }
    }
}

impl HostHooks for PbfsHost {
    fn wants_acks(&self) -> bool {
        true
    }

    fn wants_sends(&self) -> bool {
        true
    }

    #[inline]
    fn owns(&self, pkt: &Packet) -> bool {
        PostcardHdr::is(pkt)
    }

    /// Fig. 2: flows of at least T·τ bytes mark packets Δ, 2Δ, … until the first ACK or
    /// postcard.
    #[inline]
    fn on_data_send(&mut self, _ctx: &mut HostCtx<'_>, flow: u32, flow_bytes: u64) -> Marks {
        let min = self.min_flow_bytes;
        let wire = flow_bytes + flow_bytes.div_ceil(self.mtu_bytes) * self.packet_overhead_bytes;
        let Some(f) = self.flows.get_mut(flow as usize) else {
            return Marks::NONE;
        };
        let m = f.on_send(|| wire >= min, self.delta, self.max_rate_bps);
        self.marked_packets += m as u64;
        if m { PBT } else { Marks::NONE }
    }

    /// Algorithm 1, HandleCCPostcard.
    fn on_control(&mut self, ctx: &mut HostCtx<'_>, pkt: &Packet) {
        let Some(pc) = PostcardHdr::of(pkt) else {
            return;
        };
        self.postcards_received += 1;
        let Some(f) = self.flows.get_mut(pkt.flow as usize) else {
            return;
        };
        if f.uses {
            f.postcards += 1;
            f.first.get_or_insert(pc);
        }
        if !f.uses || f.ignore {
            f.marking = false;
            f.ignored += 1;
            self.postcards_ignored += 1;
            return;
        }
        let r = reaction(&pc, self.delta, self.dc_rtt_ps, self.i_min_bytes, self.mu);
        if let Some(rate_bps) = f.on_postcard(pc.switch, r.c, self.max_rate_bps) {
            self.rate_updates += 1;
            ctx.out.push(HostAction::SetRate {
                flow: pkt.flow,
                rate_bps,
            });
        }
    }

    /// Algorithm 1, HandleAck: the PBT interval ends at the first ACK after a PB-FS rate
    /// update or on which the controller changed the rate.
    fn on_ack(&mut self, _ctx: &mut HostCtx<'_>, ev: &AckEvent<'_>) {
        if let Some(f) = self.flows.get_mut(ev.flow as usize)
            && f.uses
        {
            f.on_ack(ev.rate_changed, ev.rate_bps);
        }
    }
}
