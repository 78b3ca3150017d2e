//! The host half of NDP (`specs/ndp.md` §2–3): the receiver (ACK per full packet, NACK per
//! trimmed header, one pull pacer per receiving host with a per-flow round-robin pull queue,
//! pulls flushed when a flow completes) and the sender (initial window at line rate, then
//! credit from the receiver; retransmissions on NACK, on a returned header and on timeout).
//!
//! NDP replaces the NIC's transport for every flow when it is enabled, so it is wired into the
//! NIC at four points ([`crate::host::nic`]): data arriving at a receiver, NDP control
//! packets arriving at a host, the pull pacer's timer, and the sender's credit, which gates
//! the NIC arbiter through [`crate::host::recovery::SendState`] ([`NdpSender`]). The NIC
//! still does everything else (arbiter, line-rate pacing, delivery accounting, flow
//! completion at the sender's last ACK, the retransmission timer).
//!
//! Choices (documented in `docs/model.md`): every ACK, NACK and PULL carries the flow's
//! cumulative credit, so a later one repairs a lost PULL; every arrival (full or trimmed)
//! asks for one pull, so a returned header, which the receiver never sees, costs its flow one
//! pull (htsim); byte-level credits size a pull by the bytes the message still misses, which
//! needs the message length (RDMA carries it in the first packet's RETH); a pull asked for while the pacer is idle is piggybacked on the
//! ACK/NACK that asked for it (htsim).

use crate::config::NetConfig;
use crate::engine::Event;
use crate::engine::packet::{DataHdr, Header, NdpHdr, NdpKind, Packet};
use crate::scheme::ndp::{NdpRecv, NdpSender, PullPacer, PullQueue};
use crate::scheme::{Env, HostHooks, HostScheme, SchemeId};
use crate::sim::Simulator;

/// Counters of the NDP hosts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct NdpHostCounters {
    /// PULL packets sent by pull pacers.
    pub pulls: u64,
    /// Pulls piggybacked on an ACK or NACK (no PULL packet).
    pub pulls_piggybacked: u64,
    /// ACKs sent by receivers.
    pub acks: u64,
    /// NACKs sent by receivers.
    pub nacks: u64,
    /// Returned headers that reached their sender.
    pub rts_received: u64,
    /// Retransmission timeouts of NDP senders.
    pub timeouts: u64,
}

/// NDP state of all hosts.
#[derive(Clone, Debug)]
pub struct NdpHost {
    /// Payload bytes per packet.
    pub mtu: u64,
    /// Initial window of every sender, payload bytes.
    pub iw_bytes: u64,
    /// Byte-level credits.
    pub byte_credits: bool,
    /// Pull rate as a fraction of the receiver's link rate.
    pub pull_rate: f64,
    /// One pull pacer per host.
    pub pacers: Vec<PullPacer>,
    /// Receiver state per flow.
    pub recv: Vec<NdpRecv>,
    /// Pending pulls per flow (the pull queues' counts).
    pub pending: Vec<u32>,
    /// Counters.
    pub c: NdpHostCounters,
    /// When `Some`, every pull (PULL packet or piggybacked) is logged as (receiving host,
    /// time ps): for tests and diagnostics; `None` (the default) costs one branch per pull.
    pub pull_log: Option<Vec<(u32, u64)>>,
}

/// Initial window: `iw_bytes`, or 1 BDP (max base RTT × host line rate) when 0.
pub fn initial_window(cfg: &NetConfig, env: &Env) -> u64 {
    if cfg.schemes.ndp.iw_bytes > 0 {
        cfg.schemes.ndp.iw_bytes
    } else {
        ((env.base_rtt_ps as u128 * env.host_rate_bps as u128) / 8_000_000_000_000) as u64
    }
    .max(1)
}

impl NdpHost {
    /// NDP host state for `hosts` hosts and `flows` flows.
    pub fn new(cfg: &NetConfig, env: &Env, hosts: usize, flows: usize) -> Self {
        NdpHost {
            mtu: cfg.mtu_bytes as u64,
            iw_bytes: initial_window(cfg, env),
            byte_credits: cfg.schemes.ndp.byte_credits,
            pull_rate: cfg.schemes.ndp.pull_rate,
            pacers: vec![PullPacer::default(); hosts],
            recv: vec![NdpRecv::default(); flows],
            pending: vec![0; flows],
            c: NdpHostCounters::default(),
            pull_log: None,
        }
    }

    /// The sender state of a `size`-byte flow.
    pub fn sender(&self, size: u64) -> NdpSender {
        NdpSender::new(size, self.mtu, self.iw_bytes, self.byte_credits)
    }
}

/// The NDP transport is driven by the NIC (see the module doc), not through host hooks.
impl HostHooks for NdpHost {}

/// The NDP host state among the host halves (present when NDP is enabled).
fn ndp_of(hs: &mut [HostScheme]) -> &mut NdpHost {
    hs.iter_mut()
        .find_map(|h| match h {
            HostScheme::Ndp(n) => Some(n),
            #[allow(unreachable_patterns)]
            _ => None,
        })
        .expect("NDP host state exists when NDP is enabled")
}

impl Simulator {
    /// The NDP host state (present when NDP is enabled).
    #[inline]
    pub fn ndp_host(&mut self) -> &mut NdpHost {
        ndp_of(&mut self.host_schemes)
    }

    /// Give every switch port the 10:1 (`high_weight`:1) weighted round robin between the
    /// header and data queues (called once at build). Each flow gets its NDP sender and
    /// out-of-order receiver at its start ([`Self::ndp_init_flow`]).
    pub(crate) fn ndp_install(&mut self) {
        if !self.cfg.schemes.ndp.enabled {
            return;
        }
        self.cfg.scheduler = crate::config::SchedulerKind::Wrr;
        let hw = self.cfg.schemes.ndp.high_weight;
        for sw in &mut self.switches {
            for p in &mut sw.ports {
                p.weights = vec![1; p.queues.len()];
                p.weights[super::HIGH_QUEUE] = hw;
            }
        }
    }

    /// A starting flow's QP state `st` becomes NDP's: a receiver-credited sender and an
    /// out-of-order (IRN) receiver.
    #[inline(never)]
    pub(crate) fn ndp_init_flow(&mut self, st: &mut crate::host::FlowState) {
        let n = self.ndp_host();
        let (mtu, iw, bc) = (n.mtu, n.iw_bytes, n.byte_credits);
        st.tx.ndp = Some(Box::new(NdpSender::new(st.size_bytes, mtu, iw, bc)));
        st.rx = crate::host::recovery::RecvState::new(crate::host::recovery::Scheme::Irn);
    }

    /// Receiver progress of flow `f`: (next in-order byte expected, payload bytes delivered).
    /// A finished flow's receiver holds every byte.
    fn ndp_rx_progress(&self, f: u32) -> (u64, u64) {
        match self.active.get_for(f) {
            Some(s) => (s.rx.expected, s.rx.delivered_bytes),
            None => {
                let z = self.flows[f as usize].size_bytes;
                (z, z)
            }
        }
    }

    /// Wire time at host `h`'s pull rate of a data packet carrying `payload` bytes.
    fn ndp_drain_ps(&self, h: usize, payload: u64, pull_rate: f64) -> u64 {
        let rate = (self.hosts[h].tx.link.rate_bps as f64 * pull_rate).max(1.0) as u64;
        let size = self.env.sizes.data(payload.min(u32::MAX as u64) as u32);
        self.cfg.framing.ser_ps(size, rate)
    }

    /// An arrival of flow `f` at its receiver `h` asks for one pull. Sent at once
    /// (piggybacked on the ACK/NACK being built) if the pacer is idle, otherwise queued.
    /// Returns the flow's cumulative credit to carry in that ACK/NACK.
    fn ndp_ask_pull(&mut self, h: usize, f: u32) -> u64 {
        let now = self.q.now();
        let (_, delivered) = self.ndp_rx_progress(f);
        let missing = self.flows[f as usize].size_bytes.saturating_sub(delivered);
        let n = self.ndp_host();
        let r = &n.recv[f as usize];
        if r.done {
            return r.granted;
        }
        let (mtu, bc, rate) = (n.mtu, n.byte_credits, n.pull_rate);
        if n.pacers[h].can_send_now(now, &n.pending) {
            let g = n.recv[f as usize].grant(mtu, bc, missing);
            let granted = n.recv[f as usize].granted;
            if g > 0 {
                n.c.pulls_piggybacked += 1;
                if let Some(l) = &mut n.pull_log {
                    l.push((h as u32, now));
                }
                let d = self.ndp_drain_ps(h, g, rate);
                self.ndp_host().pacers[h].sent(now, d);
            }
            return granted;
        }
        let n = self.ndp_host();
        let granted = n.recv[f as usize].granted;
        n.pacers[h].queue.request(f, &mut n.pending);
        self.ndp_arm_pacer(h);
        granted
    }

    /// Make sure host `h`'s pacer has an event pending for its next pull.
    fn ndp_arm_pacer(&mut self, h: usize) {
        let now = self.q.now();
        let node = self.hosts[h].node;
        let p = &mut self.ndp_host().pacers[h];
        if p.timer_ps != 0 {
            return;
        }
        let at = p.next_free_ps.max(now);
        p.timer_ps = at;
        self.q.schedule(
            at,
            Event::SchemeTimer {
                node,
                port: 0,
                scheme: SchemeId::Ndp as u8,
                which: 0,
                arg: 0,
            },
        );
    }

    /// Host `h`'s pull pacer fires: send the next pull (round robin over flows), re-arm.
    #[inline(never)]
    pub(crate) fn ndp_pacer_fire(&mut self, h: usize) {
        let now = self.q.now();
        let n = ndp_of(&mut self.host_schemes);
        let p = &mut n.pacers[h];
        p.timer_ps = 0;
        if now < p.next_free_ps {
            self.ndp_arm_pacer(h);
            return;
        }
        let (mtu, bc, rate) = (n.mtu, n.byte_credits, n.pull_rate);
        let mut sent = None;
        let (flows, active) = (&self.flows, &self.active);
        while let Some(f) = n.pacers[h].queue.next(&mut n.pending) {
            let r = &mut n.recv[f as usize];
            if r.done {
                continue;
            }
            let size = flows[f as usize].size_bytes;
            let delivered = active.get_for(f).map_or(size, |s| s.rx.delivered_bytes);
            let g = r.grant(mtu, bc, size.saturating_sub(delivered));
            if g == 0 {
                continue; // byte-level: nothing left to pull for this flow
            }
            sent = Some((f, g, r.granted));
            break;
        }
        if let Some((f, g, granted)) = sent {
            n.c.pulls += 1;
            if let Some(l) = &mut n.pull_log {
                l.push((h as u32, now));
            }
            let d = self.ndp_drain_ps(h, g, rate);
            self.ndp_host().pacers[h].sent(now, d);
            let (cum_ack, _) = self.ndp_rx_progress(f);
            let fl = &self.flows[f as usize];
            let pull = Packet {
                src: fl.dst,
                dst: fl.src,
                flow: f,
                size: self.env.sizes.ndp(),
                sport: fl.dport,
                dport: fl.sport,
                in_port: 0,
                prio: fl.prio,
                ue_echo: false,
                hdr: Header::Ndp(NdpHdr {
                    cum_ack,
                    pull_bytes: granted,
                    kind: NdpKind::Pull,
                    ..NdpHdr::default()
                }),
            };
            let slot = self.arena.alloc(pull);
            self.hosts[h].ctrl.push_back(slot);
            self.host_try_send(h);
        }
        let n = self.ndp_host();
        if !n.pacers[h].queue.is_empty(&n.pending) {
            self.ndp_arm_pacer(h);
        }
    }

    /// A full NDP data packet `p` reached its receiver `h`: deliver it, answer with an ACK
    /// (built in place of the data packet) and ask for a pull.
    #[inline(never)]
    pub(crate) fn ndp_receive_data(&mut self, h: usize, p: u32, pkt: &Packet, d: &DataHdr) {
        let now = self.q.now();
        let f = pkt.flow;
        let size = self.flows[f as usize].size_bytes;
        // A finished flow's receiver holds every byte: nothing to deliver.
        let (newly, cum) = match self.active.get_for_mut(f) {
            Some(fl) => {
                let before = fl.rx.delivered_bytes;
                fl.rx.on_data(d.seq, d.payload, now, 0);
                (fl.rx.delivered_bytes - before, fl.rx.expected)
            }
            None => (0, size),
        };
        let all = cum >= size;
        self.counters.delivered_bytes += newly;
        if newly > 0 {
            self.throughput.record(self.host_index(pkt.dst), now, newly);
        }
        let pull_bytes = self.ndp_ask_pull(h, f);
        if all {
            let n = self.ndp_host();
            n.recv[f as usize].done = true;
            PullQueue::flush(f, &mut n.pending);
        }
        self.ndp_host().c.acks += 1;
        self.counters.acks += 1;
        self.counters.packets_consumed += 1;
        self.arena.reuse(p);
        let ack = Packet::reverse_of(
            pkt,
            Header::Ndp(NdpHdr {
                seq: d.seq,
                cum_ack: cum,
                pull_bytes,
                payload: d.payload,
                kind: NdpKind::Ack,
                bounced: false,
            }),
            self.env.sizes.ndp(),
        );
        *self.arena.get_mut(p) = ack;
        self.hosts[h].ctrl.push_back(p);
        self.host_try_send(h);
    }

    /// An NDP control packet `p` reached host `h`.
    #[inline(never)]
    pub(crate) fn ndp_receive(&mut self, h: usize, p: u32, pkt: &Packet, n: &NdpHdr) {
        let f = pkt.flow;
        if n.kind == NdpKind::Header && !n.bounced {
            // Receiver: the payload was trimmed. NACK it (in place) and pull it again.
            let (cum, _) = self.ndp_rx_progress(f);
            let pull_bytes = self.ndp_ask_pull(h, f);
            self.ndp_host().c.nacks += 1;
            self.counters.nacks += 1;
            self.counters.packets_consumed += 1;
            self.arena.reuse(p);
            let nack = Packet::reverse_of(
                pkt,
                Header::Ndp(NdpHdr {
                    seq: n.seq,
                    cum_ack: cum,
                    pull_bytes,
                    payload: n.payload,
                    kind: NdpKind::Nack,
                    bounced: false,
                }),
                self.env.sizes.ndp(),
            );
            *self.arena.get_mut(p) = nack;
            self.hosts[h].ctrl.push_back(p);
            self.host_try_send(h);
            return;
        }
        // Sender side: ACK, NACK, PULL or a returned header.
        self.counters.packets_consumed += 1;
        self.arena.free(p);
        if n.kind == NdpKind::Header {
            self.ndp_host().c.rts_received += 1;
        }
        let Some(fl) = self.active.get_for_mut(f) else {
            return; // finished
        };
        let mtu = fl.tx.mtu;
        let size = fl.size_bytes;
        let Some(s) = fl.tx.ndp.as_deref_mut() else {
            return;
        };
        match n.kind {
            NdpKind::Header => s.on_return(n.seq, n.payload, mtu),
            NdpKind::Ack => s.on_ack(n.seq, mtu),
            NdpKind::Nack => s.on_nack(n.seq, mtu),
            NdpKind::Pull => {}
        }
        if n.kind != NdpKind::Header {
            s.on_pull(n.pull_bytes);
            fl.tx.snd_una = fl.tx.snd_una.max(n.cum_ack.min(size));
        }
        if fl.tx.done() {
            self.finish_flow(f);
        } else {
            self.arm_rto(f);
            self.nic_refile(f);
            self.host_try_send(h);
        }
    }

    /// An NDP sender timed out (counted in the `ndp` summary).
    #[inline(never)]
    pub(crate) fn ndp_count_timeout(&mut self) {
        self.ndp_host().c.timeouts += 1;
    }
}
