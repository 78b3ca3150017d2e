//! NDP's receiver-pulled transport on the sender (Handley et al., SIGCOMM'17; `specs/ndp.md`,
//! with the SFC paper's byte-level credits, Appendix B.4): a scheme's own transport beside the
//! built-in Go-Back-N and IRN ([`crate::host::transport`]). The sender sends while it has
//! credit, queued retransmissions first; the receiver is IRN's (out-of-order, no NACK
//! spacing); the retransmission timer is the last resort and runs even with nothing
//! outstanding (a lost pull). This is only the per-QP state machine; the host half
//! ([`super::host`]) keeps one per QP and the NIC drives it through the host-half transport
//! hooks ([`crate::scheme::HostHooks::qp_peek`] and the others). The [`Transport`] methods
//! are kept out of line: the NIC's send path stays small.

use std::collections::VecDeque;

use crate::host::transport::{RecvState, Response, Segment, SendState, Transport, TransportParams};

/// Sender-side NDP state of one flow: NDP's [`Transport`]. The default is an idle sender that
/// holds no memory (a QP slot not in use).
/// Sequence numbers are MTU-aligned payload offsets, as in the rest of the NIC.
#[derive(Clone, Debug, Default)]
pub struct NdpSender {
    /// Credit left, payload bytes (may go negative by less than one packet with byte-level
    /// credits). A packet may leave while it is positive.
    pub credit: i64,
    /// Segments queued for retransmission, front first.
    pub retx: VecDeque<u64>,
    /// Per segment: acknowledged (bit set).
    acked: Vec<u64>,
    /// Per segment: queued in `retx` (bit set).
    queued: Vec<u64>,
    /// Packets sent whose ACK, NACK or returned header has not come back.
    pub outstanding: u32,
    /// Largest cumulative credit seen from the receiver, bytes.
    pub last_pull_bytes: u64,
    /// Byte-level credits (cost of a packet = its payload) or packet-level (cost = one MTU).
    pub byte_credits: bool,
    /// Initial window, bytes (also the credit a timeout restores): the configured window,
    /// capped at the message.
    pub iw_bytes: u64,
    /// Per-packet multipath (`ndp.spray`).
    pub spray: bool,
    /// Packets sent so far (the next packet's path entropy when spraying).
    pub sent_packets: u16,
}

impl NdpSender {
    /// A sender for a `size`-byte message in `mtu` segments, with an initial window of
    /// `iw_bytes` (packet-level credits round it up to whole packets), capped at the message
    /// (its bytes, or its packets): a window larger than the flow is not kept as credit, so a
    /// trimmed packet is resent only when a pull asks for it (htsim's NDP sends the initial
    /// window's packets of the flow and nothing more until pulled). `spray`: per-packet
    /// multipath (`ndp.spray`).
    pub fn new(size: u64, mtu: u64, iw_bytes: u64, byte_credits: bool, spray: bool) -> Self {
        let segs = size.div_ceil(mtu.max(1)) as usize;
        let words = segs.div_ceil(64);
        let iw = if byte_credits {
            iw_bytes.min(size).max(1)
        } else {
            iw_bytes.div_ceil(mtu).min(segs as u64).max(1) * mtu
        };
        NdpSender {
            credit: iw.min(i64::MAX as u64) as i64,
            retx: VecDeque::new(),
            acked: vec![0; words],
            queued: vec![0; words],
            outstanding: 0,
            last_pull_bytes: 0,
            byte_credits,
            iw_bytes: iw,
            spray,
            sent_packets: 0,
        }
    }

    #[inline]
    fn bit(v: &[u64], i: usize) -> bool {
        v.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
    }

    #[inline]
    fn set(v: &mut [u64], i: usize, on: bool) {
        if let Some(w) = v.get_mut(i / 64) {
            if on {
                *w |= 1 << (i % 64);
            } else {
                *w &= !(1 << (i % 64));
            }
        }
    }

    /// Credit a packet of `len` payload bytes costs.
    #[inline]
    pub fn cost(&self, len: u32, mtu: u64) -> i64 {
        if self.byte_credits {
            len as i64
        } else {
            mtu as i64
        }
    }

    /// Was segment `seg` (index) acknowledged?
    #[inline]
    pub fn is_acked(&self, seg: usize) -> bool {
        Self::bit(&self.acked, seg)
    }

    /// The next segment to send, `(seq, retransmission)`: a queued retransmission first, else
    /// new data from `snd_nxt` (below `size`); `None` without credit.
    #[inline]
    pub fn next_to_send(&self, snd_nxt: u64, size: u64) -> Option<(u64, bool)> {
        if self.credit <= 0 {
            return None;
        }
        if let Some(&s) = self.retx.front() {
            return Some((s, true));
        }
        (snd_nxt < size).then_some((snd_nxt, false))
    }

    /// A segment of `len` bytes at `seq` (from [`Self::next_to_send`]) was sent.
    #[inline]
    pub fn record_send(&mut self, seq: u64, len: u32, retx: bool, mtu: u64) {
        if retx && self.retx.front() == Some(&seq) {
            self.retx.pop_front();
            Self::set(&mut self.queued, (seq / mtu) as usize, false);
        }
        self.credit -= self.cost(len, mtu);
        self.outstanding += 1;
        self.sent_packets = self.sent_packets.wrapping_add(1);
    }

    /// What the next data packet adds to the flow's UDP source port: a per-packet value when
    /// spraying (every packet hashes to its own ECMP path), else 0 (the flow's path).
    #[inline]
    pub fn entropy(&self) -> u16 {
        if self.spray {
            self.sent_packets.wrapping_add(1)
        } else {
            0
        }
    }

    /// Credit from the receiver: `pull_bytes` is its cumulative grant (stale or reordered
    /// values are ignored). Returns the new credit, bytes.
    #[inline]
    pub fn on_pull(&mut self, pull_bytes: u64) -> u64 {
        if pull_bytes > self.last_pull_bytes {
            let d = pull_bytes - self.last_pull_bytes;
            self.last_pull_bytes = pull_bytes;
            self.credit = self.credit.saturating_add(d.min(i64::MAX as u64) as i64);
            d
        } else {
            0
        }
    }

    /// The receiver got segment `seq` in full.
    #[inline]
    pub fn on_acked(&mut self, seq: u64, mtu: u64) {
        let i = (seq / mtu) as usize;
        if !Self::bit(&self.acked, i) {
            Self::set(&mut self.acked, i, true);
        }
        self.outstanding = self.outstanding.saturating_sub(1);
    }

    /// Queue segment `seq` for retransmission (at the front if `front`), unless it is
    /// acknowledged or already queued. Returns whether it was queued.
    #[inline]
    pub fn requeue(&mut self, seq: u64, mtu: u64, front: bool) -> bool {
        let i = (seq / mtu) as usize;
        if Self::bit(&self.acked, i) || Self::bit(&self.queued, i) {
            return false;
        }
        Self::set(&mut self.queued, i, true);
        if front {
            self.retx.push_front(seq);
        } else {
            self.retx.push_back(seq);
        }
        true
    }

    /// The receiver got only the header of segment `seq`: retransmit it on a later pull.
    #[inline]
    pub fn on_nack(&mut self, seq: u64, mtu: u64) {
        self.outstanding = self.outstanding.saturating_sub(1);
        self.requeue(seq, mtu, false);
    }

    /// The header of segment `seq` (of `len` bytes) came back (Return-To-Sender): it goes to
    /// the front of the retransmissions. The receiver never saw it, so no pull will come for
    /// it: when no other packet is outstanding (no pull to expect), the sender credits itself
    /// one packet (htsim: resend at once when `pull_window == 0`).
    #[inline]
    pub fn on_return(&mut self, seq: u64, len: u32, mtu: u64) {
        self.outstanding = self.outstanding.saturating_sub(1);
        self.requeue(seq, mtu, true);
        if self.outstanding == 0 && self.credit <= 0 {
            self.credit += self.cost(len, mtu);
        }
    }

    /// Retransmission timeout: every segment in `[una, max_sent)` that is neither
    /// acknowledged nor queued is presumed lost and queued; nothing is outstanding any more
    /// and the credit becomes at least one initial window. Returns the segments queued.
    pub fn requeue_outstanding(&mut self, una: u64, max_sent: u64, mtu: u64) -> u64 {
        let mut n = 0;
        let mut s = una - una % mtu;
        while s < max_sent {
            if self.requeue(s, mtu, false) {
                n += 1;
            }
            s += mtu;
        }
        self.outstanding = 0;
        self.credit = self.credit.max(self.iw_bytes.min(i64::MAX as u64) as i64);
        n
    }
}

impl Transport for NdpSender {
    #[cold]
    #[inline(never)]
    fn peek(&self, tx: &SendState, _new_allowed: bool) -> Option<Segment> {
        self.next_to_send(tx.snd_nxt, tx.size)
            .map(|(seq, retx)| Segment {
                seq,
                len: tx.seg_len(seq),
                retx,
                entropy: self.entropy(),
            })
    }

    #[cold]
    #[inline(never)]
    fn commit(&mut self, tx: &mut SendState, seg: Segment) {
        let end = seg.seq + seg.len as u64;
        if seg.retx {
            tx.retx_packets += 1;
        }
        self.record_send(seg.seq, seg.len, seg.retx, tx.mtu);
        if !seg.retx {
            tx.snd_nxt = end;
        }
        tx.max_sent = tx.max_sent.max(end);
    }

    /// NDP acknowledges with its own packets ([`super::host`]); a cumulative ACK only moves
    /// `snd_una`.
    fn on_ack(
        &mut self,
        tx: &mut SendState,
        ack: u64,
        _nack: bool,
        _sack: Option<(u64, u32)>,
    ) -> u64 {
        let ack = ack.min(tx.size);
        let newly = ack.saturating_sub(tx.snd_una);
        tx.snd_una = tx.snd_una.max(ack);
        newly
    }

    fn on_timeout(&mut self, tx: &mut SendState) {
        self.requeue_outstanding(tx.snd_una, tx.max_sent, tx.mtu);
    }

    fn rto_ps(&self, _tx: &SendState, p: &TransportParams) -> u64 {
        p.rto_ps
    }

    fn on_data(
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The initial window is capped at the message. 3000 B with byte credits and a 12 KB
    /// window: 3000 B of credit (not 12 KB). 2500 B in 1000 B packets with packet credits:
    /// 3 packets (3000 B). Once all of it is sent the credit is spent: a trimmed packet (a
    /// NACK) waits for a pull, 1000 B of which lets it go again.
    #[test]
    fn initial_window_is_capped_at_the_message() {
        let s = NdpSender::new(3000, 1000, 12_000, true, false);
        assert_eq!((s.credit, s.iw_bytes), (3000, 3000));
        let mut s = NdpSender::new(2500, 1000, 12_000, false, false);
        assert_eq!((s.credit, s.iw_bytes), (3000, 3000));
        // A window below the message is kept as configured.
        assert_eq!(NdpSender::new(9000, 1000, 2000, true, false).credit, 2000);
        let mut nxt = 0;
        while let Some((seq, retx)) = s.next_to_send(nxt, 2500) {
            assert!(!retx);
            let len = (2500 - seq).min(1000) as u32;
            s.record_send(seq, len, false, 1000);
            nxt = seq + len as u64;
        }
        assert_eq!((nxt, s.credit), (2500, 0));
        s.on_nack(1000, 1000);
        assert_eq!(
            s.next_to_send(nxt, 2500),
            None,
            "no credit left: wait for a pull"
        );
        s.on_pull(1000);
        assert_eq!(s.next_to_send(nxt, 2500), Some((1000, true)));
    }

    /// Spraying: each packet's entropy is the count of packets sent before it, plus one
    /// (never 0, the flow's own path); without spraying it is always 0.
    #[test]
    fn spray_entropy_counts_packets() {
        let mut s = NdpSender::new(5000, 1000, 5000, true, true);
        let mut seen = Vec::new();
        for k in 0..3u64 {
            seen.push(s.entropy());
            s.record_send(k * 1000, 1000, false, 1000);
        }
        assert_eq!(seen, [1, 2, 3]);
        let mut s = NdpSender::new(5000, 1000, 5000, true, false);
        s.record_send(0, 1000, false, 1000);
        assert_eq!(s.entropy(), 0);
    }

    #[test]
    fn sender_credit_retransmissions_and_returns() {
        // 5 segments of 1000 B (last 500 B), IW 2 packets, packet-level credits.
        let mtu = 1000;
        let mut s = NdpSender::new(4500, mtu, 2000, false, false);
        assert_eq!(s.next_to_send(0, 4500), Some((0, false)));
        s.record_send(0, 1000, false, mtu);
        assert_eq!(s.next_to_send(1000, 4500), Some((1000, false)));
        s.record_send(1000, 1000, false, mtu);
        assert_eq!(s.next_to_send(2000, 4500), None, "IW used up");
        // Segment 0 trimmed (NACK) and a pull of 1 packet: the retransmission goes first.
        s.on_nack(0, mtu);
        assert_eq!(s.on_pull(1000), 1000);
        assert_eq!(s.next_to_send(2000, 4500), Some((0, true)));
        s.record_send(0, 1000, true, mtu);
        // A stale cumulative pull gives nothing; a NACK for an ACKed segment is ignored.
        assert_eq!(s.on_pull(1000), 0);
        s.on_acked(0, mtu);
        assert!(!s.requeue(0, mtu, false));
        // Segment 1 is still outstanding; its header comes back (RTS) and nothing else is
        // outstanding: no pull will come, so the sender credits itself one packet.
        assert_eq!(s.outstanding, 1);
        assert_eq!(s.credit, 0);
        s.on_return(1000, 1000, mtu);
        assert_eq!(s.outstanding, 0);
        assert_eq!(s.next_to_send(2000, 4500), Some((1000, true)));
        // With another packet outstanding, a returned header waits for that one's pull.
        let mut s = NdpSender::new(4500, mtu, 2000, false, false);
        s.record_send(0, 1000, false, mtu);
        s.record_send(1000, 1000, false, mtu);
        s.on_return(0, 1000, mtu);
        assert_eq!(s.outstanding, 1);
        assert_eq!(s.next_to_send(2000, 4500), None);
        assert_eq!(s.retx.front(), Some(&0));
    }

    #[test]
    fn sender_timeout_requeues_unacknowledged() {
        let mtu = 1000;
        let mut s = NdpSender::new(5000, mtu, 3000, true, false);
        for k in 0..3 {
            s.record_send(k * 1000, 1000, false, mtu);
        }
        s.on_acked(1000, mtu);
        assert_eq!(s.requeue_outstanding(0, 3000, mtu), 2);
        assert_eq!(s.retx.iter().copied().collect::<Vec<_>>(), vec![0, 2000]);
        assert_eq!(s.outstanding, 0);
        assert_eq!(s.credit, 3000);
    }
}
