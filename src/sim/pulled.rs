//! The NIC side of a receiver-pulled transport (NDP, [`crate::scheme::ndp`]): the NIC drives
//! NDP's host half ([`NdpHost`], a pure state machine) at the points where the run's
//! transport says the receiver answers and pulls itself
//! ([`crate::host::transport::TransportParams::receiver_driven`]): data arriving at a
//! receiver, NDP control packets arriving at a host, the pull pacer's timer and a sender's
//! timeout. The host half works on the NIC's narrow context ([`HostCtx`]) and returns the
//! credit to carry; the NIC builds and queues the ACK, NACK and PULL packets, delivers data,
//! and completes flows.

use crate::engine::packet::{DataHdr, Marks, Packet, WireHeader};
use crate::host::FlowState;
use crate::host::transport::Transport;
use crate::registry::HostScheme;
use crate::scheme::HostCtx;
use crate::scheme::ndp::host::{NdpHost, RxProgress};
use crate::scheme::ndp::wire::{NdpHdr, NdpKind};
use crate::sim::Simulator;
use crate::sim::nic::host_ctx;

/// The NDP host half among the host halves (present when NDP is the transport).
fn ndp_of(hs: &mut [HostScheme]) -> &mut NdpHost {
    hs.iter_mut()
        .find_map(as_ndp)
        .expect("NDP host state exists when NDP is the transport")
}

/// `h` as NDP's host half, if it is.
fn as_ndp(h: &mut HostScheme) -> Option<&mut NdpHost> {
    match h {
        HostScheme::Ndp(n) => Some(n),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

impl Simulator {
    /// The NDP host half (present when NDP is the transport).
    #[inline]
    pub fn ndp_host(&mut self) -> &mut NdpHost {
        ndp_of(&mut self.host_schemes)
    }

    /// Receiver progress of flow `f` (a finished flow's receiver holds every byte).
    fn rx_progress(&self, f: u32) -> RxProgress {
        RxProgress::of(
            self.flows[f as usize].size_bytes,
            self.active.get_for(f).map(|s| &s.rx),
        )
    }

    /// Run `f` on the NDP host half with a context on host `h`, then carry out its requests
    /// (the pacer's timer).
    fn ndp_hook<R>(&mut self, h: usize, f: impl FnOnce(&mut NdpHost, &mut HostCtx<'_>) -> R) -> R {
        let i = self
            .host_schemes
            .iter_mut()
            .position(|s| as_ndp(s).is_some())
            .expect("NDP host state exists when NDP is the transport");
        self.host_hook(h, i, |sc, ctx| {
            f(as_ndp(sc).expect("the NDP host half"), ctx)
        })
    }

    /// A full data packet `p` reached its receiver `h`: deliver it, answer with an ACK
    /// (built in place of the data packet) carrying the credit the host half grants.
    #[inline(never)]
    pub(crate) fn pulled_receive_data(&mut self, h: usize, p: u32, pkt: &Packet, d: &DataHdr) {
        let now = self.q.now();
        let f = pkt.flow;
        let size = self.flows[f as usize].size_bytes;
        // A finished flow's receiver holds every byte: nothing to deliver.
        let (newly, rx) = match self.active.get_for_mut(f) {
            Some(fl) => {
                let before = fl.rx.delivered_bytes;
                fl.transport
                    .on_data(&mut fl.rx, d.seq, d.payload, now, &self.transport);
                (
                    fl.rx.delivered_bytes - before,
                    RxProgress::of(size, Some(&fl.rx)),
                )
            }
            None => (0, RxProgress::of(size, None)),
        };
        self.counters.delivered_bytes += newly;
        if newly > 0 {
            self.throughput.record(self.host_index(pkt.dst), now, newly);
        }
        let pull_bytes = self.ndp_hook(h, |n, ctx| n.on_data(ctx, f, rx));
        self.counters.acks += 1;
        self.pulled_reply(
            h,
            p,
            pkt,
            d.seq,
            d.payload,
            rx.expected,
            pull_bytes,
            NdpKind::Ack,
        );
    }

    /// Answer packet `p` (consumed; its slot is reused) with an NDP ACK or NACK for segment
    /// `seq` of `payload` bytes, queued as control at host `h`.
    #[allow(clippy::too_many_arguments)]
    fn pulled_reply(
        &mut self,
        h: usize,
        p: u32,
        pkt: &Packet,
        seq: u64,
        payload: u32,
        cum_ack: u64,
        pull_bytes: u64,
        kind: NdpKind,
    ) {
        self.counters.packets_consumed += 1;
        self.arena.reuse(p);
        let reply = Packet::reverse_of(
            pkt,
            NdpHdr {
                seq,
                cum_ack,
                pull_bytes,
                payload,
                kind,
                bounced: false,
            }
            .header(),
            self.cfg.schemes.ndp.header_bytes,
        );
        *self.arena.get_mut(p) = reply;
        self.hosts[h].ctrl.push_back(p);
        self.host_try_send(h);
    }

    /// An NDP control packet `p` reached host `h`: a trimmed header at its receiver (NACKed
    /// in place and pulled again), or an ACK, NACK, PULL or returned header at its sender.
    /// Another scheme's packet goes to its owner.
    #[inline(never)]
    pub(crate) fn pulled_receive_control(&mut self, h: usize, p: u32, pkt: &Packet) {
        let Some(n) = NdpHdr::of(pkt) else {
            return self.host_receive_frame(h, p, pkt);
        };
        let n = &n;
        let f = pkt.flow;
        if n.kind == NdpKind::Header && !n.bounced {
            let rx = self.rx_progress(f);
            let pull_bytes = self.ndp_hook(h, |nd, ctx| nd.on_header(ctx, f, rx));
            self.counters.nacks += 1;
            self.pulled_reply(
                h,
                p,
                pkt,
                n.seq,
                n.payload,
                rx.expected,
                pull_bytes,
                NdpKind::Nack,
            );
            return;
        }
        self.counters.packets_consumed += 1;
        self.arena.free(p);
        let qp = self.active.get_for_mut(f).and_then(|fl| {
            let FlowState { transport, tx, .. } = fl;
            transport.ndp_mut().map(|s| (s, tx))
        });
        ndp_of(&mut self.host_schemes).on_sender_packet(qp, n);
        let Some(fl) = self.active.get_for(f) else {
            return; // finished
        };
        if fl.tx.done() {
            self.finish_flow(f);
        } else {
            self.arm_rto(f);
            self.nic_refile(f);
            self.host_try_send(h);
        }
    }

    /// Host `h`'s pull pacer fires: send the next pull (round robin over flows), re-arm.
    #[inline(never)]
    pub(crate) fn pulled_timer(&mut self, h: usize) {
        let start = self.host_out.len();
        let (now_ps, event_no) = (self.q.now(), self.q.events());
        self.host_out.current = self
            .transport_scheme
            .expect("a receiver-pulled transport belongs to a scheme");
        let pull = {
            let mut ctx = host_ctx(&mut self.hosts[h], h, &mut self.host_out, now_ps, event_no);
            let (flows, active) = (&self.flows, &self.active);
            ndp_of(&mut self.host_schemes).on_pacer(&mut ctx, |f| {
                RxProgress::of(
                    flows[f as usize].size_bytes,
                    active.get_for(f).map(|s| &s.rx),
                )
            })
        };
        self.host_apply(h, start);
        if let Some(pull) = pull {
            let fl = &self.flows[pull.flow as usize];
            let pkt = Packet {
                src: fl.dst,
                dst: fl.src,
                flow: pull.flow,
                size: self.cfg.schemes.ndp.header_bytes,
                sport: fl.dport,
                dport: fl.sport,
                in_port: 0,
                prio: fl.prio,
                marks: Marks::NONE,
                hdr: NdpHdr {
                    cum_ack: pull.cum_ack,
                    pull_bytes: pull.granted,
                    kind: NdpKind::Pull,
                    ..NdpHdr::default()
                }
                .header(),
            };
            let slot = self.arena.alloc(pkt);
            self.hosts[h].ctrl.push_back(slot);
            self.host_try_send(h);
        }
        self.ndp_hook(h, |n, ctx| n.pacer_rearm(ctx));
    }

    /// A sender of the receiver-pulled transport timed out (counted by its host half).
    #[inline(never)]
    pub(crate) fn pulled_timeout(&mut self) {
        self.ndp_host().on_timeout();
    }
}
