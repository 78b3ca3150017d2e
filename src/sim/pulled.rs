//! The NIC side of a receiver-pulled transport (NDP's, [`crate::scheme::Scheme::transport`]
//! with [`crate::host::transport::TransportParams::receiver_driven`]): the NIC drives the
//! transport scheme's host half (a pure state machine, through the `pulled_*` hooks of
//! [`HostHooks`]) where the receiver answers and pulls itself: data arriving at a receiver,
//! the transport's control packets arriving at a host, the pull pacer's timer and a sender's
//! timeout. The host half works on the NIC's narrow context ([`crate::scheme::HostCtx`]) and returns the
//! headers of the replies and pulls; the NIC builds and queues those packets, delivers data,
//! and completes flows.

use crate::engine::packet::{DataHdr, Header, Marks, Packet};
use crate::host::{FlowSlab, NO_FLOW_SLOT, RxSlot};
use crate::scheme::{HostHooks, PulledRole, RxProgress};
use crate::sim::Simulator;
use crate::sim::nic::host_ctx;

impl Simulator {
    /// Index in `host_schemes` of the transport scheme's host half.
    fn pulled_index(&self) -> usize {
        debug_assert!(
            self.transport_host < self.host_schemes.len(),
            "a receiver-pulled transport belongs to a scheme with a host half"
        );
        self.transport_host
    }

    /// Receiver progress of flow `f` (a closed receiver holds every byte).
    fn rx_progress(&self, f: u32) -> RxProgress {
        progress_of(&self.active, f, self.flows[f as usize].size_bytes)
    }

    /// A full data packet `p` reached its receiver `h`: deliver it, answer with the reply the
    /// transport's host half gives (built in place of the data packet).
    #[inline(never)]
    pub(crate) fn pulled_receive_data(&mut self, h: usize, p: u32, pkt: &Packet, d: &DataHdr) {
        let now = self.q.now();
        let f = pkt.flow;
        let size = self.flows[f as usize].size_bytes;
        // A closed receiver holds every byte: nothing to deliver.
        let (newly, rx) = match self.rx_slot_for_data(f, pkt) {
            NO_FLOW_SLOT => (0, RxProgress::of(size, None)),
            slot => {
                let before = self.active.rx_at(slot).rx.delivered_bytes;
                self.receive_segment(slot, d, now);
                let r = self.active.rx_at(slot);
                let got = (
                    r.rx.delivered_bytes - before,
                    RxProgress::of(size, Some(&r.rx)),
                );
                if r.closable() {
                    self.close_rx(f, slot);
                }
                got
            }
        };
        self.counters.delivered_bytes += newly;
        if newly > 0 {
            self.throughput.record(self.host_index(pkt.dst), now, newly);
        }
        let i = self.pulled_index();
        let (hdr, bytes) = self
            .host_hook(h, i, |s, ctx| s.pulled_data(ctx, f, rx, d.seq, d.payload))
            .expect("the transport's host half answers data");
        self.counters.acks += 1;
        self.pulled_reply(h, p, pkt, hdr, bytes);
    }

    /// Answer packet `p` (consumed; its slot is reused) with a reply of header `hdr` and
    /// `bytes` on the wire, queued as control at host `h`.
    fn pulled_reply(&mut self, h: usize, p: u32, pkt: &Packet, hdr: Header, bytes: u32) {
        self.counters.packets_consumed += 1;
        self.arena.reuse(p);
        *self.arena.get_mut(p) = Packet::reverse_of(pkt, hdr, bytes);
        self.hosts[h].ctrl.push_back(p);
        self.host_try_send(h);
    }

    /// A control packet `p` reached host `h`: one for the flow's receiver (NDP's trimmed
    /// header, answered in place and pulled again), or one for its sender (an ACK, NACK, PULL
    /// or returned header). Another scheme's packet goes to its owner.
    #[inline(never)]
    pub(crate) fn pulled_receive_control(&mut self, h: usize, p: u32, pkt: &Packet) {
        let i = self.pulled_index();
        let Some(role) = self.host_schemes[i].pulled_role(pkt) else {
            return self.host_receive_frame(h, p, pkt);
        };
        let f = pkt.flow;
        if role == PulledRole::Receiver {
            let rx = self.rx_progress(f);
            let (hdr, bytes) = self
                .host_hook(h, i, |s, ctx| s.pulled_at_receiver(ctx, pkt, rx))
                .expect("the transport's host half answers its receiver packets");
            self.counters.nacks += 1;
            self.pulled_reply(h, p, pkt, hdr, bytes);
            return;
        }
        self.counters.packets_consumed += 1;
        self.arena.free(p);
        let slot = self.active.slot(f);
        let qp = self.active.get_for_mut(f).map(|fl| (slot, &mut fl.tx));
        self.host_schemes[i].pulled_at_sender(pkt, qp);
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
        let i = self.pulled_index();
        let start = self.host_out.len();
        let (now_ps, event_no) = (self.q.now(), self.q.events());
        self.host_out.current = self.host_schemes[i].id();
        let pull = {
            let mut ctx = host_ctx(&mut self.hosts[h], h, &mut self.host_out, now_ps, event_no);
            let (flows, qps) = (&self.flows, &self.active);
            let progress = |f: u32| progress_of(qps, f, flows[f as usize].size_bytes);
            self.host_schemes[i].pulled_pacer(&mut ctx, &progress)
        };
        self.host_apply(h, start);
        if let Some((flow, hdr, size)) = pull {
            let fl = &self.flows[flow as usize];
            let pkt = Packet {
                src: fl.dst,
                dst: fl.src,
                flow,
                size,
                sport: fl.dport,
                dport: fl.sport,
                in_port: 0,
                prio: fl.prio,
                marks: Marks::NONE,
                hdr,
            };
            let slot = self.arena.alloc(pkt);
            self.hosts[h].ctrl.push_back(slot);
            self.host_try_send(h);
        }
        self.host_hook(h, i, |s, ctx| s.pulled_rearm(ctx));
    }

    /// A sender of the receiver-pulled transport timed out (counted by its host half).
    #[inline(never)]
    pub(crate) fn pulled_timeout(&mut self) {
        let i = self.pulled_index();
        self.host_schemes[i].pulled_timeout();
    }
}

/// The progress of flow `f`'s receiver, a `size_bytes` message: nothing before its first data
/// packet, every byte once closed.
fn progress_of(qps: &FlowSlab, f: u32, size_bytes: u64) -> RxProgress {
    match qps.rx_lookup(f) {
        RxSlot::Open(i) => RxProgress::of(size_bytes, Some(&qps.rx_at(i).rx)),
        RxSlot::Closed => RxProgress::of(size_bytes, None),
        RxSlot::Unopened => RxProgress::of(size_bytes, Some(&Default::default())),
    }
}
