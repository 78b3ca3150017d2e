//! The RDMA NIC: arbiter, data-packet construction, ACK/NACK generation, ACK processing,
//! retransmission timers and per-QP flow-control pauses.
//!
//! Arbiter (HPCC-sim `RdmaEgressQueue::GetNextQindex`): when the link is free, send a queued
//! ACK/NACK first (strict priority, unless its priority is PFC-paused); otherwise round-robin
//! over the active QPs starting after the last one served, taking the first that is *eligible*:
//! its priority not PFC-paused, not paused by flow control (SFC/OnRamp), something to send,
//! window not full, pacing time reached. If none is eligible, wake up at the earliest pacing or
//! pause end among the QPs that only wait for time.
//!
//! Host halves of schemes ([`crate::scheme::HostHooks`]) see the packets of their kinds (BTS,
//! PFC frames) and every ACK after the CC; their requests (pause a QP, restart the arbiter,
//! set a timer) are carried out by `Simulator::host_apply`.
//!
//! What a QP sends next, how it takes an ACK or NACK, a timeout and its retransmission timer,
//! and what a receiver answers to data, are its transport's ([`crate::host::transport`]: the
//! run's Go-Back-N, IRN or NDP, behind one trait). The receiver's state is its own
//! ([`crate::host::RxState`], opened by a flow's first data packet): it never reads the
//! sender's QP, so its transport is picked by the run's transport kind. A transport whose
//! receiver answers and pulls itself (NDP) is driven from [`crate::sim::pulled`].

use crate::cc::{AckInfo, CongestionControl, SchemeSignal};
use crate::engine::Event;
use crate::engine::packet::{AckHdr, DataHdr, Header, Marks, Packet, PktKind};
use crate::host::arbiter::{Class, NO_POS};
use crate::host::transport::gbn::Gbn;
use crate::host::transport::{Response, SendState, Transport, TransportKind, irn, on_transport};
use crate::host::{FlowState, NO_FLOW_SLOT, RxSlot};
use crate::registry::{ECHOED_MARKS, HostScheme};
use crate::scheme::{AckEvent, HostAction, HostCtx, HostHooks, SchemeId};
use crate::sim::Simulator;

/// The narrow context a host half sees at host `h` (NIC `nic`): the clock, the host, its
/// link, and the outbox its requests go to (current scheme set by the caller).
#[inline]
pub(crate) fn host_ctx<'a>(
    nic: &'a mut crate::host::HostNic,
    h: usize,
    out: &'a mut crate::scheme::Outbox<HostAction>,
    now_ps: u64,
    event_no: u64,
) -> HostCtx<'a> {
    HostCtx {
        now_ps,
        node: nic.node,
        host: h,
        port: &mut nic.tx,
        out,
        event_no,
    }
}

impl Simulator {
    /// Start flow `f`: its QP state (send/receive, timers, controller) is created in a free
    /// slot and joins the sender's arbiter.
    pub(crate) fn flow_start(&mut self, f: u32) {
        let d = &self.flows[f as usize];
        let h = self.host_index(d.src);
        let now = self.q.now();
        // Controller and QP state live while the flow is active (built now, recycled at
        // completion).
        let line = self.hosts[h].tx.link.rate_bps;
        let bdp = if self.cfg.window_per_pair {
            self.pair_bdp_bytes(f as usize).max(1)
        } else {
            self.bdp_bytes
        };
        let cc = self.cc_cfg.build(line, self.base_rtt_ps, bdp);
        let cc_slot = self.ccs.alloc(cc);
        let mtu = self.cfg.mtu_bytes as u64;
        let st = FlowState {
            flow: f,
            src: d.src,
            dst: d.dst,
            sport: d.sport,
            dport: d.dport,
            prio: d.prio,
            last_pkt_bytes: 0,
            cc_slot,
            nic_pos: NO_POS,
            host: h as u32,
            next_avail_ps: now,
            pause_until_ps: 0,
            rto_deadline_ps: 0,
            rto_start_ps: 0,
            size_bytes: d.size_bytes,
            tx: SendState::new(d.size_bytes, mtu),
            transport: self.transport.new_qp(),
            rto_event_ps: 0,
            cc_timer_ps: 0,
        };
        let prio = d.prio;
        let i = self.active.alloc(st);
        if let Some(s) = self.host_schemes.get_mut(self.transport_host) {
            s.qp_open(i, d.size_bytes, mtu);
        }
        self.active.at_mut(i).nic_pos = self.hosts[h].arb.add(f, prio, i);
        self.nic_refile_at(h, i);
        self.host_try_send(h);
    }

    /// What flow `f`'s QP at host `h` can do now (see [`crate::host::arbiter`]): blocked
    /// (window full or nothing to send), ready, or waiting for its pacing time or pause end.
    /// A wait that ends before the NIC's link is free again counts as ready: the arbiter only
    /// picks when the link is idle, so nothing can tell the difference, and the common case
    /// (pacing at line rate) costs no timer.
    #[inline]
    fn nic_class(&self, h: usize, i: u32) -> Class {
        let fl = self.active.at(i);
        if self.next_segment(i).is_none() {
            return Class::Blocked;
        }
        let ready = fl.next_avail_ps.max(fl.pause_until_ps);
        if ready > self.q.now().max(self.hosts[h].tx.busy_until_ps) {
            Class::Wait(ready)
        } else {
            Class::Ready
        }
    }

    /// The segment the active flow in slot `i` would send next, if its window (the
    /// controller's, as its transport caps it) allows one.
    #[inline]
    fn next_segment(&self, i: u32) -> Option<crate::host::transport::Segment> {
        let fl = self.active.at(i);
        let cc_win = self.ccs.get(fl.cc_slot).window_bytes();
        on_transport!(&fl.transport, t => {
            let win = t.window_bytes(cc_win, &self.transport);
            t.peek(&fl.tx, fl.tx.inflight() < win)
        }, scheme => {
            let new_allowed = fl.tx.inflight() < cc_win;
            self.host_schemes[self.transport_host].qp_peek(i, &fl.tx, new_allowed)
        })
    }

    /// Re-file flow `f` in its sender's arbiter after something that decides whether it may
    /// send changed (a send, an ACK, a CNP, a controller timer, a timeout, a pause, a rate).
    /// Every such change must be followed by this call, or the QP stays in a stale class.
    #[inline]
    pub(crate) fn nic_refile(&mut self, f: u32) {
        let i = self.active.slot(f);
        if i == NO_FLOW_SLOT {
            return; // not started, or finished
        }
        let h = self.active.at(i).host as usize;
        self.nic_refile_at(h, i);
    }

    /// [`Self::nic_refile`] for the active flow in slot `i`, whose sender is host `h`.
    #[inline]
    fn nic_refile_at(&mut self, h: usize, i: u32) {
        let pos = self.active.at(i).nic_pos;
        let c = self.nic_class(h, i);
        self.hosts[h].arb.set(pos, c);
    }

    /// The arbiter's pick at host `h` among the QPs that no host half vetoes (out of line:
    /// only BFC gates sends).
    #[inline(never)]
    fn pick_gated(&mut self, h: usize, now: u64, paused: u64) -> Option<(u32, u32)> {
        let (flows, schemes) = (&self.flows, &self.host_schemes);
        self.hosts[h].arb.pick(now, paused, |f| {
            let fl = &flows[f as usize];
            let key = crate::scheme::FlowKey {
                flow: f,
                src: fl.src,
                dst: fl.dst,
                sport: fl.sport,
                dport: fl.dport,
            };
            schemes
                .iter()
                .all(|s| !s.gates_sends() || s.may_send(h, &key))
        })
    }

    /// Run the NIC arbiter of host `h` if its link is idle.
    pub(crate) fn host_try_send(&mut self, h: usize) {
        let now = self.q.now();
        if self.hosts[h].tx.busy(now) {
            // Still serializing: wake up when done (at most one pending TxDone).
            let nic = &mut self.hosts[h];
            if !nic.tx.txdone_pending {
                nic.tx.txdone_pending = true;
                let (t, node, hint) = (nic.tx.busy_until_ps, nic.node, nic.tx.hints.done);
                self.q
                    .schedule_hinted(t, Event::TxDone { node, port: 0 }, hint);
            }
            return;
        }
        // 1. Control packets, strict priority.
        if let Some(&p) = self.hosts[h].ctrl.front() {
            let prio = if self.ack_ignores_pause {
                0
            } else {
                self.arena.get(p).prio
            };
            if prio == 0 || !self.hosts[h].tx.paused(prio as usize) {
                self.hosts[h].ctrl.pop_front();
                self.host_transmit(h, p);
                return;
            }
        }
        // 2. Round robin over the ready QPs whose priority is not PFC-paused and that no host
        // half vetoes (BFC: the flow matches the ToR's pause filter; only when some scheme
        // gates sends).
        let paused = self.hosts[h].tx.paused_mask;
        let picked = if self.host_gate {
            self.pick_gated(h, now, paused)
        } else {
            self.hosts[h].arb.pick(now, paused, |_| true)
        };
        if let Some((pos, f)) = picked {
            let i = self.hosts[h].arb.slot_at(pos);
            debug_assert_eq!(i, self.active.slot(f), "arbiter slot of flow {f}");
            let Some(seg) = self.next_segment(i) else {
                // A state change without `nic_refile`: a bug, but recoverable; counted, and
                // `check_invariants` reports it.
                debug_assert!(false, "flow {f} filed as ready with nothing to send");
                self.nic_misfiled += 1;
                self.nic_refile(f);
                return self.host_try_send(h);
            };
            // Send it. (A FIFO transport, NDP without sender round robin: the flow keeps the
            // NIC while it has credit and data, the original NDP's FIFO send queue.)
            let stay = self.transport.sender_fifo;
            self.hosts[h].arb.served(pos, stay);
            let size = self.env.sizes.data(seg.len);
            let fl = self.active.at_mut(i);
            let mut cc = self.ccs.get_mut(fl.cc_slot);
            on_transport!(&mut fl.transport, t => t.commit(&mut fl.tx, seg), scheme => {
                self.host_schemes[self.transport_host].qp_commit(i, &mut fl.tx, seg)
            });
            let rate = cc.rate_bps().max(1);
            // The pacing gap as HPCC-sim's `RdmaHw::UpdateNextAvail` computes it for every QP
            // ([`crate::engine::packet::Framing::pace_ps`]; with HPCC framing only).
            let gap = self.cfg.framing.pace_ps(size, rate);
            fl.next_avail_ps = now + gap;
            fl.last_pkt_bytes = size;
            cc.on_send(now, size as u64);
            let pkt = Packet {
                src: fl.src,
                dst: fl.dst,
                flow: f,
                size,
                sport: fl.sport.wrapping_add(seg.entropy),
                dport: fl.dport,
                in_port: 0,
                prio: fl.prio,
                marks: Marks::NONE,
                hdr: Header::Data(DataHdr {
                    seq: seg.seq,
                    sent_ps: now,
                    payload: seg.len,
                    retx: seg.retx,
                    ce: false,
                    int_n: 0,
                }),
            };
            if seg.retx {
                self.counters.retx_packets += 1;
            }
            self.counters.data_packets += 1;
            let bytes = fl.size_bytes;
            if fl.rto_deadline_ps == 0 {
                self.arm_rto_at(i);
            }
            let mut pkt = pkt;
            // Host halves of schemes that see data packets (and may mark them).
            for k in 0..if self.host_send_hooks {
                self.host_schemes.len()
            } else {
                0
            } {
                if self.host_schemes[k].wants_sends() {
                    let mut marks = Marks::NONE;
                    self.host_hook(h, k, |sc, ctx| marks = sc.on_data_send(ctx, f, bytes));
                    pkt.marks.insert(marks);
                }
            }
            let p = self.arena.alloc(pkt);
            self.host_transmit(h, p);
            // Filed after `host_transmit`, which set when the link is free again.
            self.nic_refile_at(h, i);
            return;
        }
        // Nothing can send now: wake up when the earliest wait (of an unpaused priority) ends.
        if let Some(min_wake) = self.hosts[h].arb.next_wake(paused) {
            let w = self.hosts[h].wake_at_ps;
            if w <= now || min_wake < w {
                self.hosts[h].wake_at_ps = min_wake;
                let node = self.hosts[h].node;
                self.q.schedule(min_wake, Event::NicWake { node });
            }
        }
    }

    /// A packet reached host `h`.
    pub(crate) fn host_receive(&mut self, h: usize, p: u32) {
        let pkt = *self.arena.get(p);
        match pkt.hdr {
            Header::Data(d) if self.transport.receiver_driven => {
                self.pulled_receive_data(h, p, &pkt, &d)
            }
            Header::Data(d) => self.host_receive_data(h, p, &pkt, &d),
            Header::Scheme(_) if self.transport.receiver_driven => {
                self.pulled_receive_control(h, p, &pkt)
            }
            Header::Ack(a) | Header::Nack(a) => {
                self.host_receive_ack(p, &pkt, &a);
                self.counters.packets_consumed += 1;
                self.arena.free(p);
                self.host_try_send(h);
            }
            Header::Cnp => {
                let f = pkt.flow;
                let now = self.q.now();
                if let Some(fl) = self.active.get_for(f) {
                    let mut cc = self.ccs.get_mut(fl.cc_slot);
                    if !pkt.marks.is_empty() {
                        cc.on_scheme_signal(now, SchemeSignal::Marked(pkt.marks));
                    } else {
                        cc.on_feedback(now);
                    }
                    self.sync_cc_timer(f);
                    self.nic_refile(f);
                }
                self.counters.packets_consumed += 1;
                self.arena.free(p);
                self.host_try_send(h);
            }
            Header::Scheme(_) => self.host_receive_frame(h, p, &pkt),
        }
    }

    /// A scheme's own packet `p` (BTS, PFC frame, …) reached host `h`: the host half that
    /// owns it acts on it; it is consumed.
    pub(crate) fn host_receive_frame(&mut self, h: usize, p: u32, pkt: &Packet) {
        if let Some(i) = self.host_schemes.iter().position(|s| s.owns(pkt)) {
            let payload = self.arena.payload(p).copied();
            self.host_hook(h, i, |sc, ctx| sc.on_frame(ctx, pkt, payload.as_ref()));
        }
        self.counters.packets_consumed += 1;
        self.arena.free(p);
    }

    /// Run `f` on host scheme `i` with a context on host `h`, then carry out its requests.
    /// Never inlined: scheme hooks stay out of the NIC's per-packet functions (instruction
    /// cache; see [`crate::scheme`]'s `outlined`).
    #[inline(never)]
    pub(crate) fn host_hook<R>(
        &mut self,
        h: usize,
        i: usize,
        f: impl FnOnce(&mut HostScheme, &mut HostCtx<'_>) -> R,
    ) -> R {
        let start = self.host_out.len();
        let (now_ps, event_no) = (self.q.now(), self.q.events());
        let sc = &mut self.host_schemes[i];
        self.host_out.current = sc.id();
        let mut ctx = host_ctx(&mut self.hosts[h], h, &mut self.host_out, now_ps, event_no);
        let r = f(sc, &mut ctx);
        self.host_apply(h, start);
        r
    }

    /// Carry out, in order, the requests host schemes made for host `h` since `start`.
    #[inline(never)]
    pub(crate) fn host_apply(&mut self, h: usize, start: usize) {
        let mut i = start;
        // A rate set by a scheme can make a QP sendable (a larger variable window) or move its
        // pacing time: the NIC re-runs its arbiter afterwards, as after an ACK.
        let mut rate_set = false;
        while i < self.host_out.len() {
            let (id, a) = self.host_out.items[i];
            i += 1;
            match a {
                HostAction::PauseQp { flow, until_ps } => self.pause_qp(flow, until_ps),
                HostAction::Kick => {
                    // A kick may mean new vetoes (BFC's filter): re-check the QPs set aside.
                    self.hosts[h].arb.ungate_all();
                    self.host_try_send(h)
                }
                HostAction::SetRate { flow, rate_bps } => {
                    if let Some(fl) = self.active.get_for(flow) {
                        let now = self.q.now();
                        self.ccs
                            .get_mut(fl.cc_slot)
                            .on_scheme_signal(now, SchemeSignal::SetRate(rate_bps));
                        self.sync_cc_timer(flow);
                        self.nic_refile(flow);
                        rate_set = true;
                    }
                }
                HostAction::Timer { at_ps, which, arg } => {
                    let node = self.hosts[h].node;
                    self.q.schedule(
                        at_ps,
                        Event::SchemeTimer {
                            node,
                            port: 0,
                            scheme: id.0,
                            which,
                            arg,
                        },
                    );
                }
            }
        }
        self.host_out.items.truncate(start);
        if rate_set {
            self.host_try_send(h);
        }
    }

    /// A scheme timer of host `h` fired.
    pub(crate) fn host_timer(&mut self, h: usize, id: SchemeId, which: u8, arg: u8) {
        if self.transport.receiver_driven && self.transport_scheme == Some(id) {
            // The transport's own timer (NDP's pull pacer) sends packets: the NIC drives it.
            self.pulled_timer(h);
            return;
        }
        if let Some(i) = self.host_schemes.iter().position(|s| s.id() == id) {
            self.host_hook(h, i, |sc, ctx| sc.on_timer(ctx, which, arg));
        }
    }

    /// Host `h` put packet `p` on its link: the host halves that want it see it (CBFC spends
    /// the credits of the packet's virtual lane).
    #[inline(never)]
    pub(crate) fn host_transmitted(&mut self, h: usize, p: u32) {
        let pkt = *self.arena.get(p);
        for i in 0..self.host_schemes.len() {
            if self.host_schemes[i].wants_transmits() {
                self.host_hook(h, i, |sc, ctx| sc.on_transmit(ctx, &pkt));
            }
        }
    }

    /// The run ends: every scheme closes its open intervals (switch halves per switch, host
    /// halves per host).
    pub(crate) fn schemes_finish(&mut self) {
        for s in 0..self.switches.len() {
            self.switch_finish(s);
        }
        for h in 0..self.hosts.len() {
            for i in 0..self.host_schemes.len() {
                self.host_hook(h, i, |sc, ctx| sc.finish(ctx));
            }
        }
    }

    fn host_receive_data(&mut self, h: usize, p: u32, pkt: &Packet, d: &DataHdr) {
        let now = self.q.now();
        let f = pkt.flow;
        let i = self.rx_slot_for_data(f, pkt);
        let (resp, newly) = if i != NO_FLOW_SLOT {
            let r = self.active.rx_at_mut(i);
            let before = r.rx.delivered_bytes;
            let resp = self.receive_segment(i, d, now);
            (resp, self.active.rx_at(i).rx.delivered_bytes - before)
        } else {
            // The receiver closed (it holds every byte): a late (duplicate) data packet gets
            // the cumulative ACK, as the released state would have answered (see
            // `Transport::on_data`).
            // (A retired flow's description is gone with its page, in a run streaming its
            // results: its sender ignores the ACK whatever it acknowledges, and switches do
            // not read ACK sequence numbers, so `u64::MAX` changes nothing.)
            let size = self
                .flows
                .get(f as usize)
                .map_or(u64::MAX, |fl| fl.size_bytes);
            (Response::Ack(size), 0)
        };
        self.counters.delivered_bytes += newly;
        if newly > 0 {
            self.throughput.record(self.host_index(pkt.dst), now, newly);
            if self.sender_throughput.is_some() {
                let s = self.host_index(pkt.src);
                if let Some(m) = &mut self.sender_throughput {
                    m.record(s, now, newly);
                }
            }
        }
        // DCQCN paper NP: a separate CNP, at once if none went out in the last interval, else
        // one when the interval ends ("at most one CNP packet every N microseconds for the
        // flow, if any packet that arrives within that time window was marked").
        if d.ce
            && let crate::config::CnpMode::Cnp { interval_ps } = self.cfg.cnp
            && self.cnp_due(f, i, false, now, interval_ps)
        {
            let mut cnp = Packet::reverse_of(pkt, Header::Cnp, self.env.sizes.cnp());
            cnp.prio = 0;
            let cnp = self.arena.alloc(cnp);
            self.counters.cnps += 1;
            self.hosts[h].ctrl.push_back(cnp);
        }
        // A scheme mark receivers echo (TCD's UE, never set together with CE) gets the marked
        // variant of the CNP, at most one per flow per interval, paced separately so that it
        // never delays a CE CNP (TCD paper's NP).
        let echoed = pkt.marks.and(ECHOED_MARKS);
        if !echoed.is_empty()
            && let crate::config::CnpMode::Cnp { interval_ps } = self.cfg.cnp
            && self.cnp_due(f, i, true, now, interval_ps)
        {
            let mut cnp = Packet::reverse_of(pkt, Header::Cnp, self.env.sizes.cnp());
            cnp.prio = 0;
            cnp.marks = echoed;
            let cnp = self.arena.alloc(cnp);
            self.counters.cnps += 1;
            self.hosts[h].ctrl.push_back(cnp);
        }
        if i != NO_FLOW_SLOT && self.active.rx_at(i).closable() {
            self.close_rx(f, i);
        }
        let echo_ce = d.ce && self.cfg.cnp == crate::config::CnpMode::AckEcho;
        let echo_marks = if self.cfg.cnp == crate::config::CnpMode::AckEcho {
            echoed
        } else {
            Marks::NONE
        };
        let (nack, ack_seq, sack_seq, sack_len) = match resp {
            Response::None => {
                self.counters.packets_consumed += 1;
                self.arena.free(p);
                return;
            }
            Response::Ack(a) => (false, a, 0, 0),
            Response::Nack(a, s, l) => (true, a, s, l),
        };
        let kind = if nack { PktKind::Nack } else { PktKind::Ack };
        // The data packet is consumed; its slot is reused for the ACK (keeping the INT records
        // and the timestamp), which counts as a new packet.
        self.counters.packets_consumed += 1;
        self.arena.reuse(p);
        let hdr = AckHdr {
            ack_seq,
            echo_sent_ps: d.sent_ps,
            data_rx_ps: now,
            // IRN SACK block: at most one MTU (≤ 65,535 B) long, above the cumulative ACK and
            // within the BDP-capped window. A block below the cumulative ACK carries nothing
            // the sender can use (it ignores blocks below `snd_una`): sent as no block.
            sack_off: (sack_seq.saturating_sub(ack_seq)).min(u32::MAX as u64) as u32,
            sack_len: if sack_seq >= ack_seq {
                sack_len.min(u16::MAX as u32) as u16
            } else {
                0
            },
            ce_echo: echo_ce,
            int_n: d.int_n,
        };
        let mut ack = Packet::reverse_of(
            pkt,
            if nack {
                Header::Nack(hdr)
            } else {
                Header::Ack(hdr)
            },
            self.env.sizes.ack(nack),
        );
        ack.marks = echo_marks;
        if self.ack_ignores_pause && self.cfg.switch_ack_high_prio {
            // HPCC-sim `SwitchNode`'s `AckHighPrio`: ACKs and NACKs travel in the highest
            // priority, queue 0, at every switch (`SendToDev` puts them in qIndex 0): strict
            // priority, no ingress admission, never PFC-paused. Otherwise (HPCC-sim's
            // default, `third.cc` never sets it) they keep the data priority at switches; the
            // NIC still sends them ignoring the pause with `ACK_HIGH_PRIO` (`host_try_send`).
            ack.prio = 0;
        }
        *self.arena.get_mut(p) = ack;
        if kind == PktKind::Ack {
            self.counters.acks += 1;
        } else {
            self.counters.nacks += 1;
        }
        self.hosts[h].ctrl.push_back(p);
        self.host_try_send(h);
    }

    fn host_receive_ack(&mut self, p: u32, pkt: &Packet, a: &AckHdr) {
        let f = pkt.flow;
        let now = self.q.now();
        // The data packet's round trip (a late ACK of a finished flow included).
        self.rtt.record(now.saturating_sub(a.echo_sent_ps));
        let i = self.active.slot(f);
        if i == NO_FLOW_SLOT {
            return; // a late ACK of a finished flow
        }
        let fl = self.active.at_mut(i);
        let nack = pkt.kind() == PktKind::Nack;
        let sack = nack.then(|| a.sack());
        let newly = on_transport!(&mut fl.transport, t => t.on_ack(&mut fl.tx, a.ack_seq, nack, sack),
            scheme => self.host_schemes[self.transport_host].qp_on_ack(i, &mut fl.tx, a.ack_seq, nack, sack));
        let mut cc = self.ccs.get_mut(fl.cc_slot);
        let old_rate = cc.rate_bps();
        let info = AckInfo {
            now_ps: now,
            ack_seq: a.ack_seq,
            newly_acked_bytes: newly,
            snd_nxt: fl.tx.snd_nxt,
            ce_echo: a.ce_echo,
            marks: pkt.marks,
            rtt_ps: now.saturating_sub(a.echo_sent_ps),
            nack,
            int: &self.arena.int(p)[..a.int_n as usize],
        };
        cc.on_ack(&info);
        let rate_bps = cc.rate_bps();
        let rate_changed = rate_bps != old_rate;
        if cc.adjusts_pacing() && fl.last_pkt_bytes > 0 {
            // HPCC-sim ChangeRate: nextAvail += tx(last, new) − tx(last, old).
            let new_rate = cc.rate_bps();
            if new_rate != old_rate {
                let f_ = self.cfg.framing;
                let t_new = f_.ser_ps(fl.last_pkt_bytes, new_rate.max(1));
                let t_old = f_.ser_ps(fl.last_pkt_bytes, old_rate.max(1));
                fl.next_avail_ps = (fl.next_avail_ps + t_new).saturating_sub(t_old);
            }
        }
        // Host halves of schemes that react to ACKs (OnRamp).
        for k in 0..self.host_schemes.len() {
            if self.host_schemes[k].wants_acks() {
                let fl = self.active.at(i);
                let ev = AckEvent {
                    flow: f,
                    ack: a,
                    pause_until_ps: fl.pause_until_ps,
                    done: fl.tx.done(),
                    rate_changed,
                    rate_bps,
                };
                let h = fl.host as usize;
                self.host_hook(h, k, |sc, ctx| sc.on_ack(ctx, &ev));
            }
        }
        // (A host hook cannot finish or start a flow: the slot is still flow `f`'s.)
        if self.active.at(i).tx.done() {
            self.finish_flow(f);
        } else {
            let fl = self.active.at(i);
            let idle = fl.tx.max_sent <= fl.tx.snd_una && !self.transport.idle_timer;
            if idle {
                // Nothing outstanding: the timer stops (it restarts with the next send), so a
                // flow held back by a pause, its pacing or its window cannot time out.
                // (Unless the transport keeps it: NDP's is the last resort when a pull is
                // lost.)
                let fl = self.active.at_mut(i);
                fl.rto_deadline_ps = 0;
            } else if newly > 0 || nack {
                // Restart the timer on progress with data outstanding (TLT-sim re-arms on
                // every ACK with data outstanding).
                self.arm_rto_at(i);
            }
            self.sync_cc_timer(f);
            self.nic_refile(f);
        }
    }

    /// Flow `f` (active) completed now: its result is recorded, its QP leaves the arbiter and
    /// its controller and QP state are released for reuse.
    pub(crate) fn finish_flow(&mut self, f: u32) {
        let now = self.q.now();
        let i = self.active.slot(f);
        let st = self.active.at_mut(i);
        let (h, pos, cc_slot) = (st.host as usize, st.nic_pos, st.cc_slot);
        let retx = st.tx.retx_packets;
        st.nic_pos = NO_POS;
        let fl = &mut self.flows[f as usize];
        fl.finish_ps = now;
        fl.retx_packets = retx.min(u32::MAX as u64) as u32;
        self.ccs.release(cc_slot);
        if let Some(s) = self.host_schemes.get_mut(self.transport_host) {
            s.qp_close(i);
        }
        self.active.release(f);
        self.counters.flows_completed += 1;
        if pos != NO_POS {
            let act = &mut self.active;
            self.hosts[h].arb.remove(pos, |g, np| {
                if let Some(s) = act.get_for_mut(g) {
                    s.nic_pos = np;
                }
            });
        }
        if self.results.is_some() {
            // Streaming results: the record goes now, and the flow's memory with it.
            self.retire(f);
        } else {
            self.completion_order.push(f);
            self.note_completion_key();
        }
    }

    /// The receiver slot of flow `f` for its data packet `pkt` arriving now: opened by the
    /// flow's first data packet; [`NO_FLOW_SLOT`] once closed (the receiver holds every byte).
    #[inline]
    pub(crate) fn rx_slot_for_data(&mut self, f: u32, pkt: &Packet) -> u32 {
        match self.active.rx_lookup(f) {
            RxSlot::Open(i) => i,
            RxSlot::Closed => NO_FLOW_SLOT,
            RxSlot::Unopened => match self.flows.get(f as usize) {
                Some(fl) => {
                    let size = fl.size_bytes;
                    self.active.rx_open(f, size, pkt)
                }
                None => NO_FLOW_SLOT,
            },
        }
    }

    /// Receiver slot `i` takes data segment `d` arriving at `now`: what the run's transport
    /// answers (the receiver's own state only: the sender's QP is not read).
    #[inline]
    pub(crate) fn receive_segment(&mut self, i: u32, d: &DataHdr, now: u64) -> Response {
        let p = &self.transport;
        let r = &mut self.active.rx_at_mut(i).rx;
        match p.kind {
            TransportKind::Gbn => Gbn.on_data(r, d.seq, d.payload, now, p),
            TransportKind::Irn => irn::on_data(r, d.seq, d.payload, now, 0),
            TransportKind::Scheme => {
                self.host_schemes[self.transport_host].qp_on_data(r, d.seq, d.payload, now, p)
            }
        }
    }

    /// Flow `f`'s receiver (slot `i`) holds every byte and owes no CNP: its state goes; its
    /// CNP times stay one interval for late marks ([`crate::host::LateCnp`]).
    pub(crate) fn close_rx(&mut self, f: u32, i: u32) {
        let r = self.active.rx_at(i);
        let cnp = (r.last_cnp_ps, r.last_marked_cnp_ps);
        self.late_cnp.remember(f, cnp, self.q.now());
        self.active.rx_close(f, i);
    }

    /// Whether the receiver of flow `f` (slot `i`, or [`NO_FLOW_SLOT`] once closed) sends a
    /// CNP (`marked`: the marked variant) now for a marked data packet arriving at `now`: yes
    /// if none went out in the last `interval_ps` (the time is recorded); otherwise the mark
    /// is remembered and one CNP goes out when that interval ends ([`Event::CnpDue`],
    /// [`Self::cnp_due_fire`]; DCQCN-sim keeps the mark the same way, to its next 50 µs tick).
    /// A closed receiver's late marks are not carried over.
    fn cnp_due(&mut self, f: u32, i: u32, marked: bool, now: u64, interval_ps: u64) -> bool {
        let bit = if marked { 2 } else { 1 };
        let (last, pending) = if i != NO_FLOW_SLOT {
            let fl = self.active.rx_at_mut(i);
            let last = if marked {
                &mut fl.last_marked_cnp_ps
            } else {
                &mut fl.last_cnp_ps
            };
            (last, Some(&mut fl.cnp_pending))
        } else {
            (self.late_cnp.get_mut(f, marked), None)
        };
        if *last == u64::MAX || now >= *last + interval_ps {
            *last = now;
            return true;
        }
        if let Some(pending) = pending
            && *pending & bit == 0
        {
            *pending |= bit;
            let at = *last + interval_ps;
            self.q.schedule(at, Event::CnpDue { flow: f, marked });
        }
        false
    }

    /// The interval after flow `f`'s last CNP (`marked`: the UE variant) ended with a mark owed:
    /// its receiver sends that CNP now, whether or not the sender has finished meanwhile (the
    /// receiver cannot know; it stays open while it owes a CNP).
    pub(crate) fn cnp_due_fire(&mut self, f: u32, marked: bool) {
        let RxSlot::Open(i) = self.active.rx_lookup(f) else {
            return;
        };
        let bit = if marked { 2 } else { 1 };
        let now = self.q.now();
        let fl = self.active.rx_at_mut(i);
        if fl.cnp_pending & bit == 0 {
            return;
        }
        fl.cnp_pending &= !bit;
        if marked {
            fl.last_marked_cnp_ps = now;
        } else {
            fl.last_cnp_ps = now;
        }
        let cnp = Packet {
            src: fl.dst,
            dst: fl.src,
            flow: f,
            size: self.env.sizes.cnp(),
            sport: fl.dport,
            dport: fl.sport,
            in_port: 0,
            prio: 0,
            marks: if marked { ECHOED_MARKS } else { Marks::NONE },
            hdr: Header::Cnp,
        };
        let dst = fl.dst;
        let h = self.host_index(dst);
        let cnp = self.arena.alloc(cnp);
        self.counters.cnps += 1;
        self.hosts[h].ctrl.push_back(cnp);
        if self.active.rx_at(i).closable() {
            self.close_rx(f, i);
        }
        self.host_try_send(h);
    }

    /// The RTO to use now for the active flow in slot `i` (its transport's timer).
    fn rto_for(&self, i: u32) -> u64 {
        let fl = self.active.at(i);
        on_transport!(&fl.transport, t => t.rto_ps(&fl.tx, &self.transport),
            scheme => self.transport.rto_ps)
    }

    /// (Re)arm flow `f`'s retransmission timer. Lazy scheme: at most one pending check event
    /// per flow; when it fires early (deadline moved later) it re-schedules itself, so
    /// re-arming on every ACK costs no event.
    pub(crate) fn arm_rto(&mut self, f: u32) {
        let i = self.active.slot(f);
        if i != NO_FLOW_SLOT {
            self.arm_rto_at(i);
        }
    }

    /// [`Self::arm_rto`] for the active flow in slot `i`.
    fn arm_rto_at(&mut self, i: u32) {
        let now = self.q.now();
        let f = self.active.at(i).flow;
        let deadline = now.saturating_add(self.rto_for(i)).min(u64::MAX - 1);
        let fl = self.active.at_mut(i);
        fl.rto_deadline_ps = deadline;
        fl.rto_start_ps = now;
        if fl.rto_event_ps == 0 || deadline < fl.rto_event_ps {
            fl.rto_event_ps = deadline;
            self.q.schedule(deadline, Event::Rto { flow: f });
        }
    }

    /// An RTO check event for flow `f` fired.
    pub(crate) fn rto_fire(&mut self, f: u32) {
        let now = self.q.now();
        let i = self.active.slot(f);
        let Some(fl) = self.active.get_for_mut(f) else {
            return; // finished: its state (and timers) are gone
        };
        if fl.rto_event_ps != now {
            return; // superseded by an earlier-scheduled check
        }
        fl.rto_event_ps = 0;
        if fl.rto_deadline_ps == 0 {
            return;
        }
        if fl.rto_deadline_ps <= now {
            // Due: the RTO for the data in flight now (IRN: more than 3 MTUs sent since the
            // timer started make it RTO_high — "RTO_low is used when at most N packets are
            // in flight").
            let start = fl.rto_start_ps;
            let d = start.saturating_add(self.rto_for(i)).min(u64::MAX - 1);
            let Some(fl) = self.active.get_for_mut(f) else {
                return;
            };
            fl.rto_deadline_ps = fl.rto_deadline_ps.max(d);
        }
        let Some(fl) = self.active.get_for_mut(f) else {
            return;
        };
        if fl.rto_deadline_ps > now {
            fl.rto_event_ps = fl.rto_deadline_ps;
            let d = fl.rto_deadline_ps;
            self.q.schedule(d, Event::Rto { flow: f });
            return;
        }
        // Timeout.
        on_transport!(&mut fl.transport, t => t.on_timeout(&mut fl.tx),
            scheme => self.host_schemes[self.transport_host].qp_on_timeout(i, &mut fl.tx));
        self.ccs.get_mut(fl.cc_slot).on_timeout(now);
        self.counters.timeouts += 1;
        if self.transport.receiver_driven {
            self.pulled_timeout();
        }
        self.arm_rto(f);
        self.sync_cc_timer(f);
        self.nic_refile(f);
        let h = self.host_index(self.flows[f as usize].src);
        self.host_try_send(h);
    }

    /// Make sure an event is pending for the earliest timer of flow `f`'s controller (lazy:
    /// at most one useful pending event per flow; stale ones are recognised and ignored).
    pub(crate) fn sync_cc_timer(&mut self, f: u32) {
        let Some(fl) = self.active.get_for_mut(f) else {
            return; // not started, or finished: no controller
        };
        if let Some((t, which)) = self.ccs.get(fl.cc_slot).next_timer()
            && (fl.cc_timer_ps == 0 || t < fl.cc_timer_ps)
        {
            let t = t.max(self.q.now());
            fl.cc_timer_ps = t;
            self.q.schedule(t, Event::CcTimer { flow: f, which });
        }
    }

    /// A controller timer event of flow `f` fired: run every controller timer now due.
    pub(crate) fn cc_timer_fire(&mut self, f: u32) {
        let now = self.q.now();
        let Some(fl) = self.active.get_for_mut(f) else {
            return; // finished
        };
        if fl.cc_timer_ps != now {
            return;
        }
        fl.cc_timer_ps = 0;
        let mut guard = 0;
        let mut cc = self.ccs.get_mut(fl.cc_slot);
        while let Some((t, which)) = cc.next_timer() {
            if t > now || guard > 64 {
                break;
            }
            cc.on_timer(now, which);
            guard += 1;
        }
        self.sync_cc_timer(f);
        self.nic_refile(f);
        let h = self.host_index(self.flows[f as usize].src);
        self.host_try_send(h);
    }

    /// Pause flow `f`'s QP until `until_ps` (a newer pause replaces the end time). Carried out
    /// for the flow-control schemes' [`HostAction::PauseQp`] (SFC BTS, OnRamp).
    pub fn pause_qp(&mut self, f: u32, until_ps: u64) {
        let now = self.q.now();
        let Some(st) = self.active.get_for_mut(f) else {
            return; // not started, or finished
        };
        // Paused time counts the overlap-free union of pause intervals.
        let prev_end = st.pause_until_ps.max(now);
        let old_until = st.pause_until_ps;
        st.pause_until_ps = until_ps;
        let h = st.host as usize;
        let fl = &mut self.flows[f as usize];
        if until_ps > prev_end {
            fl.paused_ps += until_ps - prev_end;
            self.counters.qp_paused_ps += until_ps - prev_end;
        } else if until_ps < old_until {
            fl.paused_ps -= old_until - until_ps.max(now);
            self.counters.qp_paused_ps -= old_until - until_ps.max(now);
        }
        fl.pauses += 1;
        self.counters.qp_pauses += 1;
        self.nic_refile(f);
        self.host_try_send(h);
    }
}

#[cfg(test)]
mod tests {
    use crate::cc::CcConfig;
    use crate::config::CnpMode;
    use crate::registry::NetConfig;
    use crate::sim::Simulator;
    use crate::units::{GBPS, US};
    use crate::workload::FlowSpec;

    /// A 2-host star (100 G, 1 µs links) with an unlimited buffer and one flow 0 → 1 of
    /// `size_bytes` at t = 0, under `cfg` (its buffer mode set) and `cc`.
    fn one_flow_star(mut cfg: NetConfig, cc: CcConfig, size_bytes: u64) -> Simulator {
        cfg.buffer.mode = crate::config::BufferMode::Unlimited;
        let topo = crate::topology::shapes::star(2, 100 * GBPS, US).unwrap();
        let flows = [FlowSpec {
            src: 0,
            dst: 1,
            size_bytes,
            start_ps: 0,
            prio: 3,
            dport: 100,
        }];
        Simulator::new(topo, cfg, cc, &flows).unwrap()
    }

    /// The DCQCN paper's NP (`network.cnp = "cnp"`, N = 50 µs): a mark with no CNP in the last
    /// N goes out at once; marks within the N after it are owed one CNP, sent when N ends —
    /// one, however many marks (none is dropped). Driven by hand
    /// on a 2-host star (1 µs links) with ECN off, so these are the only CNPs: marks at t,
    /// t + 10 µs, t + 20 µs give CNPs at t and t + 50 µs; the second reaches the sender
    /// (paper DCQCN) 1 µs + its serialization + 1 µs later and cuts its rate.
    #[test]
    fn paper_np_owes_one_cnp_for_marks_within_the_interval() {
        let n = 50 * US;
        let cfg = NetConfig::from(crate::config::CoreConfig {
            cnp: CnpMode::Cnp { interval_ps: n },
            ..Default::default()
        });
        let mut p = crate::cc::dcqcn::DcqcnParams::paper(100 * GBPS);
        p.ce_echo_is_cnp = false;
        let mut sim = one_flow_star(cfg, CcConfig::Dcqcn(p), 100_000_000);
        sim.cfg.stop_ps = 5 * US;
        sim.run_quiet();
        let crate::host::RxSlot::Open(i) = sim.active.rx_lookup(0) else {
            panic!("the receiver is open once data arrives");
        };
        let t = sim.q.now();
        assert!(sim.cnp_due(0, i, false, t, n), "first mark: a CNP at once");
        assert!(!sim.cnp_due(0, i, false, t + 10 * US, n));
        assert!(!sim.cnp_due(0, i, false, t + 20 * US, n));
        // The at-once CNP is the caller's to send; the owed one is the simulator's.
        assert_eq!(sim.counters.cnps, 0);
        sim.cfg.stop_ps = t + n - 1;
        sim.run_quiet();
        assert_eq!(sim.counters.cnps, 0, "nothing before the interval ends");
        assert_eq!(sim.flow_cc(0).unwrap().rate_bps(), 100 * GBPS);
        sim.cfg.stop_ps = t + n + 3 * US;
        sim.run_quiet();
        assert_eq!(sim.counters.cnps, 1, "one CNP for the two owed marks");
        let st = sim.rx_state(0).unwrap();
        assert_eq!(st.last_cnp_ps, t + n);
        assert_eq!(st.cnp_pending, 0);
        assert!(
            sim.flow_cc(0).unwrap().rate_bps() < 100 * GBPS,
            "the CNP cut the rate"
        );
        // A mark right after it is owed to the next interval's end.
        assert!(!sim.cnp_due(0, i, false, t + n + 3 * US, n));
        assert_eq!(sim.rx_state(0).unwrap().cnp_pending, 1);
    }

    /// The receiver QP is the receiver's own: it opens with the flow's first data packet,
    /// closes once it holds every byte and owes no CNP, and a CNP it owes goes out when its
    /// interval ends even though the sender finished meanwhile (the receiver cannot know).
    /// A 2,000 B flow (two packets) on the 2-host star: the first packet (1,048 B on the wire
    /// with headers) is at the receiver after its serialization at both hops plus 2 µs; a mark
    /// then gets a CNP at once and a second one is owed at the interval's end (50 µs), long
    /// after the sender got its last ACK (≈ 4.3 µs). A 10 MB flow beside it keeps the run
    /// going (800 µs at 100 G).
    #[test]
    fn receiver_state_lives_from_first_data_until_complete_and_owed_cnps_go_out() {
        let n = 50 * US;
        let mut cfg = NetConfig::from(crate::config::CoreConfig {
            cnp: CnpMode::Cnp { interval_ps: n },
            ..Default::default()
        });
        cfg.buffer.mode = crate::config::BufferMode::Unlimited;
        let mut p = crate::cc::dcqcn::DcqcnParams::paper(100 * GBPS);
        p.ce_echo_is_cnp = false;
        let topo = crate::topology::shapes::star(2, 100 * GBPS, US).unwrap();
        let flow = |size_bytes| FlowSpec {
            src: 0,
            dst: 1,
            size_bytes,
            start_ps: 0,
            prio: 3,
            dport: 100,
        };
        let flows = [flow(2_000), flow(10_000_000)];
        let mut sim = Simulator::new(topo, cfg, CcConfig::Dcqcn(p), &flows).unwrap();
        assert_eq!(sim.active.rx_lookup(0), crate::host::RxSlot::Unopened);
        sim.cfg.stop_ps = 2 * US;
        sim.run_quiet();
        assert_eq!(
            sim.active.rx_lookup(0),
            crate::host::RxSlot::Unopened,
            "no data at the receiver before 2 µs of propagation"
        );
        // Both packets left back to back; the first is in by 2 µs + 2 serializations.
        sim.cfg.stop_ps = 2 * US + 200_000;
        sim.run_quiet();
        let crate::host::RxSlot::Open(i) = sim.active.rx_lookup(0) else {
            panic!("the first data packet opens the receiver");
        };
        assert_eq!(sim.rx_state(0).unwrap().rx.expected, 1_000);
        let t = sim.q.now();
        assert!(sim.cnp_due(0, i, false, t, n));
        assert!(!sim.cnp_due(0, i, false, t, n), "owed to t + 50 µs");
        sim.cfg.stop_ps = 20 * US;
        sim.run_quiet();
        assert!(sim.flows[0].finished(), "the sender finished");
        assert_eq!(sim.delivered_bytes(0), 2_000);
        assert!(
            sim.rx_state(0).is_some_and(|r| r.cnp_pending == 1),
            "the receiver stays open while it owes a CNP"
        );
        assert_eq!(sim.counters.cnps, 0);
        sim.cfg.stop_ps = t + n + US;
        sim.run_quiet();
        assert_eq!(sim.counters.cnps, 1, "the owed CNP went out at t + 50 µs");
        assert_eq!(sim.active.rx_lookup(0), crate::host::RxSlot::Closed);
        assert_eq!(
            sim.active.rx_open_now(),
            1,
            "only the long flow's receiver is open"
        );
    }

    /// A rate a host scheme sets (PB-FS's `SetRate`) that makes a window-bound QP sendable
    /// restarts the NIC at once. HPCC's window follows its rate (W = D · R / line): a flow's
    /// first packet (1048 B, 84 ns at 100 G) leaves at 0; at 1 ns the rate drops to 1 Gb/s, so
    /// W ≈ D / 100 < one packet in flight and the QP is window-bound, with no wake-up pending;
    /// at 200 ns the rate goes back to 100 Gb/s (W = D). The next packet must leave then, not
    /// at the first ACK (≈ 2.2 µs: two 1 µs hops each way).
    #[test]
    fn a_scheme_rate_that_frees_the_window_restarts_the_nic() {
        use crate::scheme::HostAction;
        let setup = crate::scenario::cc::preset("hpcc", 100 * GBPS).unwrap();
        let cfg = NetConfig::from(crate::config::CoreConfig {
            int_enabled: setup.int_enabled,
            int_bytes: setup.int_bytes,
            ack_high_prio: setup.ack_high_prio,
            ..Default::default()
        });
        let mut sim = one_flow_star(cfg, setup.cc, 1_000_000);
        let set_rate = |sim: &mut Simulator, rate_bps: u64| {
            let start = sim.host_out.len();
            sim.host_out.push(HostAction::SetRate { flow: 0, rate_bps });
            sim.host_apply(0, start);
        };
        sim.cfg.stop_ps = 1_000;
        sim.run_quiet();
        set_rate(&mut sim, GBPS);
        sim.cfg.stop_ps = 200_000;
        sim.run_quiet();
        let now = sim.q.now();
        assert!(
            now < 200_000 && !sim.hosts[0].tx.busy(200_000),
            "idle, window-bound"
        );
        set_rate(&mut sim, 100 * GBPS);
        assert!(
            sim.hosts[0].tx.busy(sim.q.now() + 1),
            "the second packet leaves as soon as the window allows it"
        );
    }
}
