//! The host half of NDP (`specs/ndp.md` §2–3): the receiver (ACK per full packet, NACK per
//! trimmed header, one pull pacer per receiving host with a per-flow round-robin pull queue,
//! pulls flushed when a flow completes) and the sender (initial window at line rate, then
//! credit from the receiver; retransmissions on NACK, on a returned header and on timeout).
//!
//! NDP is the run's transport when it is enabled (a scheme's own transport,
//! [`crate::host::transport::TransportKind::Scheme`]): this host half keeps each QP's sender,
//! an [`NdpSender`], which the NIC drives through the host-half transport hooks
//! ([`HostHooks::qp_peek`] and the others), and is a pure state machine that the NIC drives
//! ([`crate::sim::pulled`]) at three more points: data arriving at a receiver, NDP control
//! packets arriving at a host, and the pull pacer's timer. It works on the NIC's narrow
//! context ([`HostCtx`]: the clock, the host, its link) and asks for the pacer's timer through
//! the outbox ([`HostAction::Timer`]); what it needs of a flow's receiver comes in as
//! [`RxProgress`], and what it answers goes back as the credit to carry ([`Pull`]). The NIC
//! still does everything else (arbiter, line-rate pacing, delivery accounting, building and
//! queueing the ACK/NACK/PULL packets, flow completion at the sender's last ACK, the
//! retransmission timer).
//!
//! Choices (documented in `docs/src/model.md`): every ACK, NACK and PULL carries the flow's
//! cumulative credit, so a later one repairs a lost PULL; every arrival (full or trimmed)
//! asks for one pull, so a returned header, which the receiver never sees, costs its flow one
//! pull (htsim); byte-level credits size a pull by the bytes the message still misses, which
//! needs the message length (RDMA carries it in the first packet's RETH); a pull asked for while the pacer is idle is piggybacked on the
//! ACK/NACK that asked for it (htsim).

use crate::engine::packet::{Header, Packet, WireHeader, WireSizes};
use crate::host::transport::{RecvState, Response, Segment, SendState, Transport, TransportParams};
use crate::scheme::Setup;
use crate::scheme::ndp::NdpConfig;
use crate::scheme::ndp::wire::{NdpHdr, NdpKind};
use crate::scheme::ndp::{NdpRecv, NdpSender, PullPacer, PullQueue};
use crate::scheme::{Env, HostAction, HostCtx, HostHooks, PulledRole};

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
    /// Per-packet multipath of the senders ([`super::NdpConfig::spray`]).
    pub spray: bool,
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
    /// Wire sizes (a pull's pacing is the wire time of the data packet it pulls).
    pub sizes: WireSizes,
    /// Wire size of an ACK, NACK or PULL ([`NdpConfig::header_bytes`]).
    pub header_bytes: u32,
    /// Sender state per QP slot (the NIC's; an idle default where no QP is open).
    pub send: Vec<NdpSender>,
}

pub use crate::scheme::RxProgress;

/// A PULL the pacer sends: for `flow`, carrying its cumulative credit and cumulative ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pull {
    /// Flow index.
    pub flow: u32,
    /// Cumulative credit granted to the flow, payload bytes.
    pub granted: u64,
    /// The flow receiver's cumulative ACK.
    pub cum_ack: u64,
}

/// Pull spacing, picoseconds, for a packet whose wire time on the receiver's link is
/// `ser_ps`, at `pull_rate` (a fraction of the link rate, in (0, 1]): `ser_ps / pull_rate`,
/// rounded up to a whole picosecond. The wire time is the link's own (whole nanoseconds under
/// HPCC framing, as the link serializes), so at `pull_rate` 1 pulls arrive exactly as fast as
/// the link drains the data they pull; the scaling is exact in picoseconds, so rates just
/// below 1 slow the pacer by as much (80 ns at 0.99: 80,809 ps).
pub fn pull_interval_ps(ser_ps: u64, pull_rate: f64) -> u64 {
    if pull_rate >= 1.0 {
        ser_ps
    } else {
        (ser_ps as f64 / pull_rate).ceil() as u64
    }
}

/// Initial window: `iw_bytes`, or 1 BDP (max base RTT × host line rate) when 0.
pub fn initial_window(cfg: &NdpConfig, env: &Env) -> u64 {
    if cfg.iw_bytes > 0 {
        cfg.iw_bytes
    } else {
        ((env.base_rtt_ps as u128 * env.host_rate_bps as u128) / 8_000_000_000_000) as u64
    }
    .max(1)
}

impl NdpHost {
    /// NDP host state for `hosts` hosts and `flows` flows.
    pub fn new(cfg: &Setup<'_, NdpConfig>, env: &Env, hosts: usize, flows: usize) -> Self {
        NdpHost {
            mtu: cfg.mtu_bytes as u64,
            iw_bytes: initial_window(cfg.own, env),
            byte_credits: cfg.own.byte_credits,
            pull_rate: cfg.own.pull_rate,
            spray: cfg.own.spray,
            pacers: vec![PullPacer::default(); hosts],
            recv: vec![NdpRecv::default(); flows],
            pending: vec![0; flows],
            c: NdpHostCounters::default(),
            pull_log: None,
            sizes: env.sizes,
            header_bytes: cfg.own.header_bytes,
            send: Vec::new(),
        }
    }

    /// The sender state of a `size`-byte flow.
    pub fn sender(&self, size: u64) -> NdpSender {
        NdpSender::new(size, self.mtu, self.iw_bytes, self.byte_credits, self.spray)
    }
}

/// The NDP transport is driven by the NIC (see the module doc) through the receiver-pulled
/// transport's hooks; the NIC builds, queues and sends the packets these answer with.
impl HostHooks for NdpHost {
    /// An ACK carrying the flow's cumulative credit and cumulative ACK.
    fn pulled_data(
        &mut self,
        ctx: &mut HostCtx<'_>,
        flow: u32,
        rx: RxProgress,
        seq: u64,
        payload: u32,
    ) -> Option<(Header, u32)> {
        let pull_bytes = self.on_data(ctx, flow, rx);
        Some(self.reply(NdpKind::Ack, seq, payload, rx.expected, pull_bytes))
    }

    /// A trimmed header that was not returned is for the receiver; every other NDP packet
    /// (ACK, NACK, PULL, returned header) for the sender.
    fn pulled_role(&self, pkt: &Packet) -> Option<PulledRole> {
        let n = NdpHdr::of(pkt)?;
        Some(if n.kind == NdpKind::Header && !n.bounced {
            PulledRole::Receiver
        } else {
            PulledRole::Sender
        })
    }

    /// A NACK carrying the flow's cumulative credit.
    fn pulled_at_receiver(
        &mut self,
        ctx: &mut HostCtx<'_>,
        pkt: &Packet,
        rx: RxProgress,
    ) -> Option<(Header, u32)> {
        let n = NdpHdr::of(pkt)?;
        let pull_bytes = self.on_header(ctx, pkt.flow, rx);
        Some(self.reply(NdpKind::Nack, n.seq, n.payload, rx.expected, pull_bytes))
    }

    fn pulled_at_sender(&mut self, pkt: &Packet, qp: Option<(u32, &mut SendState)>) {
        if let Some(n) = NdpHdr::of(pkt) {
            self.on_sender_packet(qp, &n);
        }
    }

    /// A PULL carrying the flow's cumulative credit and cumulative ACK.
    fn pulled_pacer(
        &mut self,
        ctx: &mut HostCtx<'_>,
        progress: &dyn Fn(u32) -> RxProgress,
    ) -> Option<(u32, Header, u32)> {
        let pull = self.on_pacer(ctx, progress)?;
        let hdr = NdpHdr {
            cum_ack: pull.cum_ack,
            pull_bytes: pull.granted,
            kind: NdpKind::Pull,
            ..NdpHdr::default()
        };
        Some((pull.flow, hdr.header(), self.header_bytes))
    }

    fn pulled_rearm(&mut self, ctx: &mut HostCtx<'_>) {
        self.pacer_rearm(ctx);
    }

    fn pulled_timeout(&mut self) {
        self.on_timeout();
    }

    /// A sender with the run's initial window ([`NdpHost::sender`]) in slot `qp`.
    fn qp_open(&mut self, qp: u32, size_bytes: u64, _mtu_bytes: u64) {
        let q = qp as usize;
        if q >= self.send.len() {
            self.send.resize_with(q + 1, NdpSender::default);
        }
        self.send[q] = self.sender(size_bytes);
    }
    /// The slot's sender goes back to the idle default (its bitmaps freed).
    fn qp_close(&mut self, qp: u32) {
        if let Some(s) = self.send.get_mut(qp as usize) {
            *s = NdpSender::default();
        }
    }
    fn qp_peek(&self, qp: u32, tx: &SendState, new_allowed: bool) -> Option<Segment> {
        self.send[qp as usize].peek(tx, new_allowed)
    }
    fn qp_commit(&mut self, qp: u32, tx: &mut SendState, seg: Segment) {
        self.send[qp as usize].commit(tx, seg)
    }
    fn qp_on_ack(
        &mut self,
        qp: u32,
        tx: &mut SendState,
        ack: u64,
        nack: bool,
        sack: Option<(u64, u32)>,
    ) -> u64 {
        self.send[qp as usize].on_ack(tx, ack, nack, sack)
    }
    fn qp_on_timeout(&mut self, qp: u32, tx: &mut SendState) {
        self.send[qp as usize].on_timeout(tx)
    }
    /// IRN's receiver (out of order, no NACK spacing).
    fn qp_on_data(
        &self,
        rx: &mut RecvState,
        seq: u64,
        len: u32,
        now_ps: u64,
        _p: &TransportParams,
    ) -> Response {
        crate::host::transport::irn::on_data(rx, seq, len, now_ps, 0)
    }
}

impl NdpHost {
    /// An ACK or NACK (`kind`) for segment `seq` of `payload` bytes, carrying the cumulative
    /// ACK `cum_ack` and the cumulative credit `pull_bytes`: its header and wire bytes.
    fn reply(
        &self,
        kind: NdpKind,
        seq: u64,
        payload: u32,
        cum_ack: u64,
        pull_bytes: u64,
    ) -> (Header, u32) {
        let hdr = NdpHdr {
            seq,
            cum_ack,
            pull_bytes,
            payload,
            kind,
            bounced: false,
        };
        (hdr.header(), self.header_bytes)
    }
}

impl NdpHost {
    /// Pull spacing for a data packet carrying `payload` bytes at host `ctx.host`: its
    /// wire time on the host's link ([`pull_interval_ps`]).
    fn drain_ps(&self, ctx: &HostCtx<'_>, payload: u64) -> u64 {
        let size = self.sizes.data(payload.min(u32::MAX as u64) as u32);
        let ser = self.sizes.framing.ser_ps(size, ctx.port.link.rate_bps);
        pull_interval_ps(ser, self.pull_rate)
    }

    /// Log a pull at the receiving host of `ctx` (if logging).
    #[inline]
    fn log_pull(&mut self, ctx: &HostCtx<'_>) {
        if let Some(l) = &mut self.pull_log {
            l.push((ctx.host as u32, ctx.now_ps));
        }
    }

    /// An arrival of flow `f` at its receiver (host `ctx.host`) asks for one pull. Sent at
    /// once (piggybacked on the ACK/NACK being built) if the pacer is idle, otherwise queued.
    /// Returns the flow's cumulative credit to carry in that ACK/NACK.
    fn ask_pull(&mut self, ctx: &mut HostCtx<'_>, f: u32, rx: RxProgress) -> u64 {
        let (h, now) = (ctx.host, ctx.now_ps);
        let missing = rx.size_bytes.saturating_sub(rx.delivered_bytes);
        let r = &self.recv[f as usize];
        if r.done {
            return r.granted;
        }
        if self.pacers[h].can_send_now(now, &self.pending) {
            let g = self.recv[f as usize].grant(self.mtu, self.byte_credits, missing);
            let granted = self.recv[f as usize].granted;
            if g > 0 {
                self.c.pulls_piggybacked += 1;
                self.log_pull(ctx);
                let d = self.drain_ps(ctx, g);
                self.pacers[h].sent(now, d);
            }
            return granted;
        }
        let granted = self.recv[f as usize].granted;
        self.pacers[h].queue.request(f, &mut self.pending);
        self.arm_pacer(ctx);
        granted
    }

    /// Make sure host `ctx.host`'s pacer has a timer pending for its next pull.
    fn arm_pacer(&mut self, ctx: &mut HostCtx<'_>) {
        let p = &mut self.pacers[ctx.host];
        if p.timer_ps != 0 {
            return;
        }
        let at = p.next_free_ps.max(ctx.now_ps);
        p.timer_ps = at;
        ctx.out.push(HostAction::Timer {
            at_ps: at,
            which: 0,
            arg: 0,
        });
    }

    /// A full data packet of flow `f` reached its receiver (host `ctx.host`), whose progress
    /// after it is `rx`: it is ACKed and asks for a pull; a flow now complete at the receiver
    /// asks for no more (its pending pulls are dropped). Returns the cumulative credit the
    /// ACK carries.
    pub fn on_data(&mut self, ctx: &mut HostCtx<'_>, f: u32, rx: RxProgress) -> u64 {
        let pull_bytes = self.ask_pull(ctx, f, rx);
        if rx.expected >= rx.size_bytes {
            self.recv[f as usize].done = true;
            PullQueue::flush(f, &mut self.pending);
        }
        self.c.acks += 1;
        pull_bytes
    }

    /// A trimmed header of flow `f` reached its receiver (host `ctx.host`): it is NACKed and
    /// pulled again. Returns the cumulative credit the NACK carries.
    pub fn on_header(&mut self, ctx: &mut HostCtx<'_>, f: u32, rx: RxProgress) -> u64 {
        let pull_bytes = self.ask_pull(ctx, f, rx);
        self.c.nacks += 1;
        pull_bytes
    }

    /// An ACK, NACK, PULL or returned header `n` reached its sender, whose QP (slot and
    /// sequence state, if still active) is `qp`: its sender state takes it in.
    pub fn on_sender_packet(&mut self, qp: Option<(u32, &mut SendState)>, n: &NdpHdr) {
        if n.kind == NdpKind::Header {
            self.c.rts_received += 1;
        }
        if let Some((q, tx)) = qp {
            super::sender_on_control(&mut self.send[q as usize], tx, n);
        }
    }

    /// Host `ctx.host`'s pull pacer fires: the next pull (round robin over flows), if one is
    /// due; `progress` gives a flow's receiver progress. Call [`Self::pacer_rearm`] once the
    /// pull is sent.
    pub fn on_pacer(
        &mut self,
        ctx: &mut HostCtx<'_>,
        progress: impl Fn(u32) -> RxProgress,
    ) -> Option<Pull> {
        let (h, now) = (ctx.host, ctx.now_ps);
        let p = &mut self.pacers[h];
        p.timer_ps = 0;
        if now < p.next_free_ps {
            self.arm_pacer(ctx);
            return None;
        }
        let mut sent = None;
        while let Some(f) = self.pacers[h].queue.next(&mut self.pending) {
            let r = &mut self.recv[f as usize];
            if r.done {
                continue;
            }
            let rx = progress(f);
            let g = r.grant(
                self.mtu,
                self.byte_credits,
                rx.size_bytes.saturating_sub(rx.delivered_bytes),
            );
            if g == 0 {
                continue; // byte-level: nothing left to pull for this flow
            }
            sent = Some((f, g, r.granted, rx.expected));
            break;
        }
        let (f, g, granted, cum_ack) = sent?;
        self.c.pulls += 1;
        self.log_pull(ctx);
        let d = self.drain_ps(ctx, g);
        self.pacers[h].sent(now, d);
        Some(Pull {
            flow: f,
            granted,
            cum_ack,
        })
    }

    /// After the pacer of host `ctx.host` fired (and its pull, if any, was sent): arm it
    /// again while pulls are pending.
    pub fn pacer_rearm(&mut self, ctx: &mut HostCtx<'_>) {
        if !self.pacers[ctx.host].queue.is_empty(&self.pending) {
            self.arm_pacer(ctx);
        }
    }

    /// An NDP sender timed out (counted in the `ndp` summary).
    pub fn on_timeout(&mut self) {
        self.c.timeouts += 1;
    }
}

/// Give every port of a switch the 10:1 (`high_weight`:1) weighted round robin between the
/// header and data queues (once at build, when NDP is on; the switches then run
/// [`crate::config::SchedulerKind::Wrr`]).
pub fn install_wrr(cfg: &NdpConfig, ports: &mut [crate::switch::EgressPort]) {
    let hw = cfg.high_weight;
    for p in ports {
        p.weights = vec![1; p.queues.len()];
        p.weights[super::HIGH_QUEUE] = hw;
    }
}
