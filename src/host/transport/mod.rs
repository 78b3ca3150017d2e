//! Transports: how a QP moves a message reliably — what to send next, what to do on an ACK or
//! NACK, on a timeout, what the retransmission timer is, and what the receiver answers to
//! data. One transport runs for every QP of a run ([`TransportParams::kind`]): a built-in
//! one, Go-Back-N ([`gbn`]) or IRN selective repeat ([`irn`]), or a scheme's own
//! ([`TransportKind::Scheme`]: the scheme's `Scheme::transport` chose it; NDP's
//! receiver-pulled transport is one).
//!
//! Each transport implements [`Transport`] on its per-QP state. The NIC holds a QP's state as
//! a [`QpTransport`] next to the transport-independent sequence state ([`SendState`]) and
//! receiver state ([`RecvState`]): a built-in transport's state in place (an enum: static
//! dispatch, one match per call); a scheme's transport keeps its QPs' state in the scheme's
//! host half, which the NIC drives through the host-half transport hooks
//! (`crate::scheme::HostHooks::qp_peek` and the others).
//!
//! Sequence numbers are payload-byte offsets. Segments are MTU-aligned: segment `i` covers
//! `[i·MTU, min((i+1)·MTU, size))`, so every ACK, NACK and SACK boundary is a segment boundary.

pub mod gbn;
pub mod irn;

/// Sender-side sequence state of one QP, whatever its transport.
#[derive(Clone, Debug)]
pub struct SendState {
    /// Message size, payload bytes.
    pub size: u64,
    /// Payload bytes per segment.
    pub mtu: u64,
    /// Cumulatively acknowledged bytes.
    pub snd_una: u64,
    /// Next new byte to send (GBN: rewound on NACK/timeout).
    pub snd_nxt: u64,
    /// Highest byte ever sent (exclusive end).
    pub max_sent: u64,
    /// Data packets retransmitted so far.
    pub retx_packets: u64,
}

/// A segment the sender may transmit next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// First payload byte.
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// This segment was sent before.
    pub retx: bool,
    /// Added to the flow's UDP source port for this packet: its own ECMP path (per-packet
    /// multipath, NDP's `spray`); 0 = the flow's path.
    pub entropy: u16,
}

impl SendState {
    /// Fresh sender for a `size`-byte message in `mtu`-byte segments.
    pub fn new(size: u64, mtu: u64) -> Self {
        SendState {
            size,
            mtu,
            snd_una: 0,
            snd_nxt: 0,
            max_sent: 0,
            retx_packets: 0,
        }
    }

    /// All bytes acknowledged.
    #[inline]
    pub fn done(&self) -> bool {
        self.snd_una >= self.size
    }

    /// Bytes in flight as the window check counts them (`snd_nxt − snd_una`, HPCC-sim).
    #[inline]
    pub fn inflight(&self) -> u64 {
        self.snd_nxt.saturating_sub(self.snd_una)
    }

    /// Payload bytes of the segment starting at `seq`.
    #[inline]
    pub fn seg_len(&self, seq: u64) -> u32 {
        (self.size - seq).min(self.mtu) as u32
    }
}

/// What the receiver answers to a data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Response {
    /// Nothing.
    None,
    /// Cumulative ACK.
    Ack(u64),
    /// NACK with cumulative ACK and (IRN) a SACK block `(start, len)`; GBN uses len 0.
    Nack(u64, u64, u32),
}

/// Receiver-side reliability state of one QP (what arrived; the transport decides what it
/// answers: [`Transport::on_data`]).
#[derive(Clone, Debug)]
pub struct RecvState {
    /// Next in-order byte expected.
    pub expected: u64,
    /// IRN: out-of-order blocks received above `expected`, sorted, disjoint.
    pub ooo: Vec<(u64, u64)>,
    /// Earliest time a repeated NACK for the same `expected` may be sent, picoseconds.
    pub nack_timer_ps: u64,
    /// `expected` carried by the last NACK (`u64::MAX` = none yet).
    pub last_nack: u64,
    /// Payload bytes accepted for the first time (goodput).
    pub delivered_bytes: u64,
}

impl RecvState {
    /// Fresh receiver.
    pub fn new() -> Self {
        RecvState {
            expected: 0,
            ooo: Vec::new(),
            nack_timer_ps: 0,
            last_nack: u64::MAX,
            delivered_bytes: 0,
        }
    }
}

impl Default for RecvState {
    fn default() -> Self {
        Self::new()
    }
}

/// Which transport a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportKind {
    /// RoCEv2 Go-Back-N ([`gbn`]).
    Gbn,
    /// IRN selective repeat ([`irn`]).
    Irn,
    /// A scheme's own transport (`crate::scheme::Scheme::transport`): its host half keeps
    /// every QP's state.
    Scheme,
}

/// The transport of a run and its parameters (built once from the configuration).
#[derive(Clone, Copy, Debug)]
pub struct TransportParams {
    /// Which transport every QP runs.
    pub kind: TransportKind,
    /// Retransmission timeout of GBN and of a scheme's transport, picoseconds.
    pub rto_ps: u64,
    /// IRN: timeout while at most 3 MTUs are in flight, picoseconds.
    pub rto_low_ps: u64,
    /// IRN: timeout otherwise, picoseconds.
    pub rto_high_ps: u64,
    /// GBN: minimum spacing of repeated NACKs for the same expected byte, picoseconds.
    pub nack_interval_ps: u64,
    /// IRN: BDP-FC cap on outstanding bytes.
    pub window_cap_bytes: u64,
    /// The NIC serves one QP while it can send (NDP's FIFO send queue) instead of round robin.
    pub sender_fifo: bool,
    /// The receiver answers data and pulls through the transport's host half (NDP), not
    /// with the NIC's ACK/NACK and CNPs.
    pub receiver_driven: bool,
    /// The retransmission timer keeps running with nothing outstanding (NDP's: it is the last
    /// resort when a pull is lost). Only a scheme's transport sets it.
    pub idle_timer: bool,
}

impl TransportParams {
    /// Go-Back-N with retransmission timeout `rto_ps` and NACK spacing `nack_interval_ps`.
    pub fn gbn(rto_ps: u64, nack_interval_ps: u64) -> Self {
        TransportParams {
            kind: TransportKind::Gbn,
            rto_ps,
            rto_low_ps: 0,
            rto_high_ps: 0,
            nack_interval_ps,
            window_cap_bytes: u64::MAX,
            sender_fifo: false,
            receiver_driven: false,
            idle_timer: false,
        }
    }

    /// IRN with its two timeouts and the cap on outstanding bytes.
    pub fn irn(rto_low_ps: u64, rto_high_ps: u64, window_cap_bytes: u64) -> Self {
        TransportParams {
            kind: TransportKind::Irn,
            rto_low_ps,
            rto_high_ps,
            window_cap_bytes,
            ..Self::gbn(0, 0)
        }
    }

    /// A scheme's own transport with retransmission timeout `rto_ps`; the scheme sets the
    /// other fields it needs (`sender_fifo`, `receiver_driven`, `idle_timer`).
    pub fn scheme(rto_ps: u64) -> Self {
        TransportParams {
            kind: TransportKind::Scheme,
            ..Self::gbn(rto_ps, 0)
        }
    }

    /// The transport state of a new QP (for a scheme's transport, a marker: the scheme's host
    /// half opens the QP's state, `HostHooks::qp_open`).
    pub fn new_qp(&self) -> QpTransport {
        match self.kind {
            TransportKind::Gbn => QpTransport::Gbn(gbn::Gbn),
            TransportKind::Irn => QpTransport::Irn(irn::Irn::default()),
            TransportKind::Scheme => QpTransport::Scheme,
        }
    }
}

/// One transport's per-QP behaviour. `tx` is the QP's sequence state, `p` the run's
/// parameters. Implementations are pure state machines (unit-tested by hand).
pub trait Transport {
    /// The window the QP may have in flight given its controller's `cc_window_bytes`.
    #[inline]
    fn window_bytes(&self, cc_window_bytes: u64, _p: &TransportParams) -> u64 {
        cc_window_bytes
    }
    /// The next segment to send, if any, given that new data may only be sent when
    /// `new_allowed` (window check done by the caller).
    fn peek(&self, tx: &SendState, new_allowed: bool) -> Option<Segment>;
    /// Record that `seg` (from [`Self::peek`]) was transmitted (a retransmission counts in
    /// [`SendState::retx_packets`]).
    fn commit(&mut self, tx: &mut SendState, seg: Segment);
    /// Process a cumulative ACK `ack` (`nack`: a NACK, with the SACK block `sack` =
    /// (start, len) if it carries one). Returns the newly cumulatively acknowledged bytes.
    fn on_ack(&mut self, tx: &mut SendState, ack: u64, nack: bool, sack: Option<(u64, u32)>)
    -> u64;
    /// The retransmission timer fired with data outstanding.
    fn on_timeout(&mut self, tx: &mut SendState);
    /// The retransmission timeout for the data in flight now, picoseconds.
    fn rto_ps(&self, tx: &SendState, p: &TransportParams) -> u64;
    /// The receiver `rx` got data `[seq, seq+len)` at `now_ps`: what it answers.
    fn on_data(
        &self,
        rx: &mut RecvState,
        seq: u64,
        len: u32,
        now_ps: u64,
        p: &TransportParams,
    ) -> Response;
}

/// A QP's transport state: one variant per built-in transport, and a marker for a scheme's.
#[derive(Clone, Debug)]
pub enum QpTransport {
    /// Go-Back-N.
    Gbn(gbn::Gbn),
    /// IRN selective repeat.
    Irn(irn::Irn),
    /// A scheme's transport: the scheme's host half keeps the state, keyed by the QP's slot.
    Scheme,
}

impl QpTransport {
    /// Take over `old`'s reusable buffers (a recycled slot's IRN SACK list), cleared.
    pub fn reuse_buffers(&mut self, old: &mut QpTransport) {
        if let (QpTransport::Irn(new), QpTransport::Irn(old)) = (self, old) {
            let mut v = std::mem::take(&mut old.sacked);
            v.clear();
            new.sacked = v;
        }
    }
}

/// `$e` with `$t` bound to QP `$qp`'s built-in transport state (`&QpTransport` or `&mut
/// QpTransport`), or `$scheme` when the run's transport is a scheme's: the NIC's one match per
/// transport call (static dispatch).
macro_rules! on_transport {
    ($qp:expr, $t:ident => $e:expr, scheme => $scheme:expr) => {
        match $qp {
            $crate::host::transport::QpTransport::Gbn($t) => $e,
            $crate::host::transport::QpTransport::Irn($t) => $e,
            $crate::host::transport::QpTransport::Scheme => $scheme,
        }
    };
}
pub(crate) use on_transport;

#[cfg(test)]
mod tests {
    use super::*;

    /// A built-in transport's sender for a `size`-byte message.
    fn qp(kind: TransportKind, size: u64, mtu: u64) -> (SendState, Box<dyn Transport>) {
        let t: Box<dyn Transport> = match kind {
            TransportKind::Gbn => Box::new(gbn::Gbn),
            TransportKind::Irn => Box::new(irn::Irn::default()),
            TransportKind::Scheme => unreachable!("a scheme's transport lives in its host half"),
        };
        (SendState::new(size, mtu), t)
    }

    /// Deliver segments in the given order (dropping those in `lost`) through a sender/receiver
    /// pair until done, returning the sequence of retransmitted segment starts.
    fn run(kind: TransportKind, size: u64, lost_once: &[u64]) -> (Vec<u64>, SendState) {
        let mtu = 1000;
        let p = TransportParams::gbn(1, 0);
        let (mut tx, mut t) = qp(kind, size, mtu);
        let mut rx = RecvState::new();
        let mut lost: Vec<u64> = lost_once.to_vec();
        let mut retx = Vec::new();
        let mut rounds = 0;
        while !tx.done() {
            rounds += 1;
            assert!(rounds < 100, "no progress");
            // Send everything allowed (window of 10 segments), then deliver.
            let mut wire = Vec::new();
            while let Some(seg) = t.peek(&tx, tx.inflight() < 10 * mtu) {
                if seg.retx {
                    retx.push(seg.seq);
                }
                t.commit(&mut tx, seg);
                wire.push(seg);
            }
            if wire.is_empty() {
                t.on_timeout(&mut tx);
                continue;
            }
            for seg in wire {
                if let Some(i) = lost.iter().position(|&l| l == seg.seq) {
                    lost.remove(i);
                    continue;
                }
                match t.on_data(&mut rx, seg.seq, seg.len, 0, &p) {
                    Response::Ack(a) => {
                        t.on_ack(&mut tx, a, false, None);
                    }
                    Response::Nack(a, s, l) => {
                        t.on_ack(&mut tx, a, true, Some((s, l)));
                    }
                    Response::None => {}
                }
            }
        }
        assert_eq!(rx.expected, size);
        (retx, tx)
    }

    #[test]
    fn irn_retransmits_only_losses() {
        let (retx, tx) = run(TransportKind::Irn, 20_000, &[3000, 7000]);
        assert_eq!(retx, vec![3000, 7000]);
        assert_eq!(tx.retx_packets, 2);
    }

    /// A NACK whose cumulative ACK ends one recovery episode and whose SACK reports a fresh
    /// hole beyond it starts the next episode at once: the hole is the next segment sent.
    #[test]
    fn irn_nack_ends_and_reopens_recovery() {
        let (mut tx, mut t) = qp(TransportKind::Irn, 20_000, 1000);
        for _ in 0..10 {
            let seg = t.peek(&tx, true).unwrap();
            t.commit(&mut tx, seg);
        }
        // 0 lost: the NACK for 1000 opens recovery up to max_sent = 10,000.
        t.on_ack(&mut tx, 0, true, Some((1000, 1000)));
        let seg = t.peek(&tx, true).unwrap();
        assert_eq!((seg.seq, seg.retx), (0, true));
        t.commit(&mut tx, seg);
        // New data 10,000 and 11,000; 10,000 is lost.
        for want in [10_000, 11_000] {
            let seg = t.peek(&tx, true).unwrap();
            assert_eq!((seg.seq, seg.retx), (want, false));
            t.commit(&mut tx, seg);
        }
        // The retransmitted 0 filled the hole (cumulative ACK 10,000 = the recovery sequence)
        // and 11,000 arrived out of order: end the episode, open the next one.
        t.on_ack(&mut tx, 10_000, true, Some((11_000, 1000)));
        assert_eq!(
            t.peek(&tx, true),
            Some(Segment {
                seq: 10_000,
                len: 1000,
                retx: true,
                entropy: 0,
            })
        );
    }

    #[test]
    fn gbn_goes_back() {
        let (retx, _) = run(TransportKind::Gbn, 20_000, &[3000]);
        // Everything from the hole to the end of the window is re-sent.
        assert_eq!(retx[0], 3000);
        assert!(retx.len() > 1);
    }

    #[test]
    fn tail_loss_recovered_by_timeout() {
        let (retx, _) = run(TransportKind::Irn, 5_500, &[5000]);
        assert_eq!(retx, vec![5000]);
        let (retx, _) = run(TransportKind::Gbn, 5_500, &[5000]);
        assert_eq!(retx, vec![5000]);
    }

    #[test]
    fn gbn_nack_suppression() {
        let g = gbn::Gbn;
        let p = TransportParams::gbn(1, 500);
        let mut rx = RecvState::new();
        assert_eq!(g.on_data(&mut rx, 0, 1000, 0, &p), Response::Ack(1000));
        assert_eq!(
            g.on_data(&mut rx, 2000, 1000, 10, &p),
            Response::Nack(1000, 0, 0)
        );
        assert_eq!(g.on_data(&mut rx, 3000, 1000, 20, &p), Response::None);
        assert_eq!(
            g.on_data(&mut rx, 4000, 1000, 520, &p),
            Response::Nack(1000, 0, 0)
        );
        assert_eq!(g.on_data(&mut rx, 1000, 1000, 530, &p), Response::Ack(2000));
    }

    #[test]
    fn irn_receiver_merges() {
        let t = irn::Irn::default();
        let p = TransportParams::irn(1, 1, u64::MAX);
        let mut rx = RecvState::new();
        assert_eq!(
            t.on_data(&mut rx, 1000, 1000, 0, &p),
            Response::Nack(0, 1000, 1000)
        );
        assert_eq!(
            t.on_data(&mut rx, 2000, 1000, 0, &p),
            Response::Nack(0, 2000, 1000)
        );
        assert_eq!(rx.ooo, vec![(1000, 3000)]);
        assert_eq!(t.on_data(&mut rx, 0, 1000, 0, &p), Response::Ack(3000));
        assert_eq!(rx.delivered_bytes, 3000);
    }

    /// The per-run parameters pick the per-QP state; IRN caps the window.
    #[test]
    fn params_pick_the_transport() {
        assert!(matches!(
            TransportParams::gbn(1, 0).new_qp(),
            QpTransport::Gbn(_)
        ));
        assert!(matches!(
            TransportParams::scheme(7).new_qp(),
            QpTransport::Scheme
        ));
        let p = TransportParams::irn(1, 2, 3000);
        let QpTransport::Irn(t) = p.new_qp() else {
            panic!("IRN's parameters make an IRN QP")
        };
        assert_eq!(t.window_bytes(10_000, &p), 3000);
    }
}
