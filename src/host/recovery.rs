//! Loss recovery as pure state machines: the sender side ([`SendState`]) and receiver side
//! ([`RecvState`]) of RoCEv2 Go-Back-N and of IRN selective repeat.
//!
//! Sequence numbers are payload-byte offsets. Segments are MTU-aligned: segment `i` covers
//! `[i·MTU, min((i+1)·MTU, size))`, so every ACK, NACK and SACK boundary is a segment boundary.
//!
//! Go-Back-N follows HPCC-sim (`specs/gbn.md`): the receiver accepts only in-order data, NACKs
//! the first gap (repeats for the same expected byte suppressed for the NACK interval), and the
//! sender rewinds `snd_nxt` to the hole. Added, as in TLT-sim: a retransmission timeout (HPCC-sim
//! has none) and an ACK in reply to a duplicate (IB spec C9-110), without which a timed-out
//! sender whose ACKs were lost could never learn it is done.
//!
//! IRN follows the paper (`specs/irn.md` §3.1): the receiver accepts out-of-order data and answers
//! each packet with an ACK (no holes) or a NACK carrying the cumulative ACK plus the triggering
//! packet as a SACK block; the sender, on the first NACK, enters recovery and retransmits every
//! packet that is neither ACKed nor SACKed *below the highest SACKed sequence*, each once per
//! episode, before new data; it leaves recovery when the cumulative ACK passes the highest
//! sequence sent at entry. A timeout starts an episode in which everything outstanding and not
//! SACKed is presumed lost.

/// Which recovery scheme a QP runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// Go-Back-N.
    Gbn,
    /// IRN selective repeat.
    Irn,
}

/// Sender-side reliability state of one QP.
#[derive(Clone, Debug)]
pub struct SendState {
    /// Scheme.
    pub scheme: Scheme,
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
    /// IRN: SACKed blocks above `snd_una`, sorted and disjoint, `[start, end)`.
    pub sacked: Vec<(u64, u64)>,
    /// IRN: in a recovery episode.
    pub in_recovery: bool,
    /// IRN: episode ends when `snd_una ≥ recovery_seq`.
    pub recovery_seq: u64,
    /// IRN: next candidate for retransmission in this episode.
    pub retx_next: u64,
    /// IRN: holes below this are presumed lost in this episode.
    pub retx_limit: u64,
    /// Data packets retransmitted so far.
    pub retx_packets: u64,
    /// NDP: the flow is receiver-credited ([`crate::scheme::ndp::NdpSender`]); its
    /// retransmission queue and credit replace GBN/IRN on the send side.
    pub ndp: Option<Box<crate::scheme::ndp::NdpSender>>,
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
}

impl SendState {
    /// Fresh sender for a `size`-byte message.
    pub fn new(scheme: Scheme, size: u64, mtu: u64) -> Self {
        SendState {
            scheme,
            size,
            mtu,
            snd_una: 0,
            snd_nxt: 0,
            max_sent: 0,
            sacked: Vec::new(),
            in_recovery: false,
            recovery_seq: 0,
            retx_next: 0,
            retx_limit: 0,
            retx_packets: 0,
            ndp: None,
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

    #[inline]
    fn seg_len(&self, seq: u64) -> u32 {
        (self.size - seq).min(self.mtu) as u32
    }

    fn is_sacked(&self, seq: u64) -> Option<u64> {
        self.sacked
            .iter()
            .find(|b| b.0 <= seq && seq < b.1)
            .map(|b| b.1)
    }

    /// [`Self::peek`] of an NDP flow (kept out of line: the GBN/IRN path stays small).
    #[cold]
    #[inline(never)]
    fn ndp_peek(&self) -> Option<Segment> {
        let n = self.ndp.as_ref()?;
        n.peek(self.snd_nxt, self.size).map(|(seq, retx)| Segment {
            seq,
            len: self.seg_len(seq),
            retx,
        })
    }

    /// [`Self::commit`] of an NDP flow (out of line, like [`Self::ndp_peek`]).
    #[cold]
    #[inline(never)]
    fn ndp_commit(&mut self, seg: Segment, end: u64) {
        if let Some(n) = &mut self.ndp {
            n.commit(seg.seq, seg.len, seg.retx, self.mtu);
        }
        if !seg.retx {
            self.snd_nxt = end;
        }
        self.max_sent = self.max_sent.max(end);
    }

    /// The next segment to send, if any, given that new data may only be sent when
    /// `new_allowed` (window/BDP-FC check done by the caller).
    #[inline]
    pub fn peek(&self, new_allowed: bool) -> Option<Segment> {
        if self.ndp.is_some() {
            return self.ndp_peek();
        }
        if self.scheme == Scheme::Irn && self.in_recovery {
            let mut s = self.retx_next.max(self.snd_una);
            while s < self.retx_limit.min(self.size) {
                match self.is_sacked(s) {
                    Some(end) => s = end,
                    None => {
                        return Some(Segment {
                            seq: s,
                            len: self.seg_len(s),
                            retx: true,
                        });
                    }
                }
            }
        }
        if !new_allowed || self.snd_nxt >= self.size {
            return None;
        }
        let mut s = self.snd_nxt;
        if self.scheme == Scheme::Irn {
            while let Some(end) = self.is_sacked(s) {
                s = end;
            }
            if s >= self.size {
                return None;
            }
        }
        Some(Segment {
            seq: s,
            len: self.seg_len(s),
            retx: s < self.max_sent,
        })
    }

    /// Record that `seg` (from [`Self::peek`]) was transmitted.
    #[inline]
    pub fn commit(&mut self, seg: Segment) {
        let end = seg.seq + seg.len as u64;
        if seg.retx {
            self.retx_packets += 1;
        }
        if self.ndp.is_some() {
            self.ndp_commit(seg, end);
            return;
        }
        if self.scheme == Scheme::Irn && self.in_recovery && seg.seq < self.snd_nxt {
            self.retx_next = end;
        } else {
            self.snd_nxt = end;
        }
        self.max_sent = self.max_sent.max(end);
    }

    /// Process a cumulative ACK `ack` (and for IRN NACKs the SACK block `sack` = (start, len)).
    /// Returns the number of newly cumulatively acknowledged bytes.
    pub fn on_ack(&mut self, ack: u64, nack: bool, sack: Option<(u64, u32)>) -> u64 {
        let ack = ack.min(self.size);
        let newly = ack.saturating_sub(self.snd_una);
        self.snd_una = self.snd_una.max(ack);
        match self.scheme {
            Scheme::Gbn => {
                if nack || self.snd_nxt < self.snd_una {
                    self.snd_nxt = self.snd_una;
                }
            }
            Scheme::Irn => {
                // The cumulative ACK first: it may end the recovery episode (IRN exits when the
                // cumulative ACK passes the recovery sequence), and a NACK's SACK then opens a
                // new one for a fresh loss beyond it (checking the exit after the entry dropped
                // that SACK's episode: the new hole waited for the next NACK).
                if self.in_recovery && self.snd_una >= self.recovery_seq {
                    self.in_recovery = false;
                    self.retx_limit = 0;
                }
                if let Some((s, l)) = sack
                    && l > 0
                    && s >= self.snd_una
                {
                    self.insert_sack(s, s + l as u64);
                    if !self.in_recovery {
                        self.in_recovery = true;
                        self.recovery_seq = self.max_sent;
                        self.retx_next = self.snd_una;
                    }
                    self.retx_limit = self.retx_limit.max(self.sacked.last().map_or(0, |b| b.0));
                }
                // Drop blocks now covered by the cumulative ACK.
                let una = self.snd_una;
                self.sacked.retain(|b| b.1 > una);
                if let Some(first) = self.sacked.first_mut()
                    && first.0 < una
                {
                    first.0 = una;
                }
                if self.snd_nxt < self.snd_una {
                    self.snd_nxt = self.snd_una;
                }
            }
        }
        newly
    }

    fn insert_sack(&mut self, s: u64, e: u64) {
        let i = self.sacked.partition_point(|b| b.1 < s);
        let mut ns = s;
        let mut ne = e;
        let mut j = i;
        while j < self.sacked.len() && self.sacked[j].0 <= ne {
            ns = ns.min(self.sacked[j].0);
            ne = ne.max(self.sacked[j].1);
            j += 1;
        }
        self.sacked.splice(i..j, std::iter::once((ns, ne)));
    }

    /// The retransmission timer fired with data outstanding.
    pub fn on_timeout(&mut self) {
        if let Some(n) = &mut self.ndp {
            n.on_timeout(self.snd_una, self.max_sent, self.mtu);
            return;
        }
        match self.scheme {
            Scheme::Gbn => self.snd_nxt = self.snd_una,
            Scheme::Irn => {
                self.in_recovery = true;
                self.recovery_seq = self.max_sent;
                self.retx_next = self.snd_una;
                self.retx_limit = self.max_sent;
            }
        }
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

/// Receiver-side reliability state of one QP.
#[derive(Clone, Debug)]
pub struct RecvState {
    /// Scheme.
    pub scheme: Scheme,
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
    pub fn new(scheme: Scheme) -> Self {
        RecvState {
            scheme,
            expected: 0,
            ooo: Vec::new(),
            nack_timer_ps: 0,
            last_nack: u64::MAX,
            delivered_bytes: 0,
        }
    }

    /// Process data `[seq, seq+len)` arriving at `now_ps`; `nack_interval_ps` suppresses
    /// repeated NACKs.
    pub fn on_data(&mut self, seq: u64, len: u32, now_ps: u64, nack_interval_ps: u64) -> Response {
        let end = seq + len as u64;
        match self.scheme {
            Scheme::Gbn => {
                if seq == self.expected {
                    self.expected = end;
                    self.delivered_bytes += len as u64;
                    Response::Ack(self.expected)
                } else if seq > self.expected {
                    if now_ps >= self.nack_timer_ps || self.last_nack != self.expected {
                        self.nack_timer_ps = now_ps + nack_interval_ps;
                        self.last_nack = self.expected;
                        Response::Nack(self.expected, 0, 0)
                    } else {
                        Response::None
                    }
                } else {
                    Response::Ack(self.expected)
                }
            }
            Scheme::Irn => {
                if seq <= self.expected && end > self.expected {
                    self.delivered_bytes += end - self.expected;
                    self.expected = end;
                    while let Some(&(s, e)) = self.ooo.first() {
                        if s > self.expected {
                            break;
                        }
                        self.expected = self.expected.max(e);
                        self.ooo.remove(0);
                    }
                    if self.ooo.is_empty() {
                        Response::Ack(self.expected)
                    } else {
                        Response::Nack(self.expected, seq, len)
                    }
                } else if seq > self.expected {
                    let i = self.ooo.partition_point(|b| b.1 < seq);
                    let dup = i < self.ooo.len() && self.ooo[i].0 <= seq && end <= self.ooo[i].1;
                    if dup {
                        if now_ps < self.nack_timer_ps {
                            return Response::None;
                        }
                    } else {
                        self.delivered_bytes += len as u64;
                        let mut ns = seq;
                        let mut ne = end;
                        let mut j = i;
                        while j < self.ooo.len() && self.ooo[j].0 <= ne {
                            ns = ns.min(self.ooo[j].0);
                            ne = ne.max(self.ooo[j].1);
                            j += 1;
                        }
                        self.ooo.splice(i..j, std::iter::once((ns, ne)));
                    }
                    self.nack_timer_ps = now_ps + nack_interval_ps;
                    Response::Nack(self.expected, seq, len)
                } else if self.ooo.is_empty() {
                    Response::Ack(self.expected)
                } else {
                    Response::Nack(self.expected, seq, len)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deliver segments in the given order (dropping those in `lost`) through a sender/receiver
    /// pair until done, returning the sequence of retransmitted segment starts.
    fn run(scheme: Scheme, size: u64, lost_once: &[u64]) -> (Vec<u64>, SendState) {
        let mtu = 1000;
        let mut tx = SendState::new(scheme, size, mtu);
        let mut rx = RecvState::new(scheme);
        let mut lost: Vec<u64> = lost_once.to_vec();
        let mut retx = Vec::new();
        let mut rounds = 0;
        while !tx.done() {
            rounds += 1;
            assert!(rounds < 100, "no progress");
            // Send everything allowed (window of 10 segments), then deliver.
            let mut wire = Vec::new();
            while let Some(seg) = tx.peek(tx.inflight() < 10 * mtu) {
                if seg.retx {
                    retx.push(seg.seq);
                }
                tx.commit(seg);
                wire.push(seg);
            }
            if wire.is_empty() {
                tx.on_timeout();
                continue;
            }
            for seg in wire {
                if let Some(i) = lost.iter().position(|&l| l == seg.seq) {
                    lost.remove(i);
                    continue;
                }
                match rx.on_data(seg.seq, seg.len, 0, 0) {
                    Response::Ack(a) => {
                        tx.on_ack(a, false, None);
                    }
                    Response::Nack(a, s, l) => {
                        tx.on_ack(a, true, Some((s, l)));
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
        let (retx, tx) = run(Scheme::Irn, 20_000, &[3000, 7000]);
        assert_eq!(retx, vec![3000, 7000]);
        assert_eq!(tx.retx_packets, 2);
    }

    /// A NACK whose cumulative ACK ends one recovery episode and whose SACK reports a fresh
    /// hole beyond it starts the next episode at once: the hole is the next segment sent.
    #[test]
    fn irn_nack_ends_and_reopens_recovery() {
        let mtu = 1000;
        let mut tx = SendState::new(Scheme::Irn, 20_000, mtu);
        for _ in 0..10 {
            let seg = tx.peek(true).unwrap();
            tx.commit(seg);
        }
        // 0 lost: the NACK for 1000 opens recovery up to max_sent = 10,000.
        tx.on_ack(0, true, Some((1000, 1000)));
        let seg = tx.peek(true).unwrap();
        assert_eq!((seg.seq, seg.retx), (0, true));
        tx.commit(seg);
        // New data 10,000 and 11,000; 10,000 is lost.
        for want in [10_000, 11_000] {
            let seg = tx.peek(true).unwrap();
            assert_eq!((seg.seq, seg.retx), (want, false));
            tx.commit(seg);
        }
        // The retransmitted 0 filled the hole (cumulative ACK 10,000 = the recovery sequence)
        // and 11,000 arrived out of order: end the episode, open the next one.
        tx.on_ack(10_000, true, Some((11_000, 1000)));
        assert_eq!(
            tx.peek(true),
            Some(Segment {
                seq: 10_000,
                len: 1000,
                retx: true
            })
        );
    }

    #[test]
    fn gbn_goes_back() {
        let (retx, _) = run(Scheme::Gbn, 20_000, &[3000]);
        // Everything from the hole to the end of the window is re-sent.
        assert_eq!(retx[0], 3000);
        assert!(retx.len() > 1);
    }

    #[test]
    fn tail_loss_recovered_by_timeout() {
        let (retx, _) = run(Scheme::Irn, 5_500, &[5000]);
        assert_eq!(retx, vec![5000]);
        let (retx, _) = run(Scheme::Gbn, 5_500, &[5000]);
        assert_eq!(retx, vec![5000]);
    }

    #[test]
    fn gbn_nack_suppression() {
        let mut rx = RecvState::new(Scheme::Gbn);
        assert_eq!(rx.on_data(0, 1000, 0, 500), Response::Ack(1000));
        assert_eq!(rx.on_data(2000, 1000, 10, 500), Response::Nack(1000, 0, 0));
        assert_eq!(rx.on_data(3000, 1000, 20, 500), Response::None);
        assert_eq!(rx.on_data(4000, 1000, 520, 500), Response::Nack(1000, 0, 0));
        assert_eq!(rx.on_data(1000, 1000, 530, 500), Response::Ack(2000));
    }

    #[test]
    fn irn_receiver_merges() {
        let mut rx = RecvState::new(Scheme::Irn);
        assert_eq!(rx.on_data(1000, 1000, 0, 0), Response::Nack(0, 1000, 1000));
        assert_eq!(rx.on_data(2000, 1000, 0, 0), Response::Nack(0, 2000, 1000));
        assert_eq!(rx.ooo, vec![(1000, 3000)]);
        assert_eq!(rx.on_data(0, 1000, 0, 0), Response::Ack(3000));
        assert_eq!(rx.delivered_bytes, 3000);
    }
}
