//! IRN selective repeat, following the paper (`specs/irn.md` §3.1): the receiver accepts
//! out-of-order data and answers each packet with an ACK (no holes) or a NACK carrying the
//! cumulative ACK plus the triggering packet as a SACK block; the sender, on the first NACK,
//! enters recovery and retransmits every packet that is neither ACKed nor SACKed *below the
//! highest SACKed sequence*, each once per episode, before new data; it leaves recovery when
//! the cumulative ACK passes the highest sequence sent at entry. A timeout starts an episode
//! in which everything outstanding and not SACKed is presumed lost. Outstanding bytes are
//! capped at the BDP (BDP-FC), and the timeout has two levels (RTO_low while at most 3 MTUs
//! are in flight, RTO_high above).

use super::{RecvState, Response, Segment, SendState, Transport, TransportParams};

/// IRN sender state of one QP beyond the sequence state.
#[derive(Clone, Debug, Default)]
pub struct Irn {
    /// SACKed blocks above `snd_una`, sorted and disjoint, `[start, end)`.
    pub sacked: Vec<(u64, u64)>,
    /// In a recovery episode.
    pub in_recovery: bool,
    /// The episode ends when `snd_una ≥ recovery_seq`.
    pub recovery_seq: u64,
    /// Next candidate for retransmission in this episode.
    pub retx_next: u64,
    /// Holes below this are presumed lost in this episode.
    pub retx_limit: u64,
}

impl Irn {
    fn is_sacked(&self, seq: u64) -> Option<u64> {
        self.sacked
            .iter()
            .find(|b| b.0 <= seq && seq < b.1)
            .map(|b| b.1)
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
}

impl Transport for Irn {
    #[inline]
    fn window_bytes(&self, cc_window_bytes: u64, p: &TransportParams) -> u64 {
        cc_window_bytes.min(p.window_cap_bytes)
    }

    #[inline]
    fn peek(&self, tx: &SendState, new_allowed: bool) -> Option<Segment> {
        if self.in_recovery {
            let mut s = self.retx_next.max(tx.snd_una);
            while s < self.retx_limit.min(tx.size) {
                match self.is_sacked(s) {
                    Some(end) => s = end,
                    None => {
                        return Some(Segment {
                            seq: s,
                            len: tx.seg_len(s),
                            retx: true,
                            entropy: 0,
                        });
                    }
                }
            }
        }
        if !new_allowed || tx.snd_nxt >= tx.size {
            return None;
        }
        let mut s = tx.snd_nxt;
        while let Some(end) = self.is_sacked(s) {
            s = end;
        }
        if s >= tx.size {
            return None;
        }
        Some(Segment {
            seq: s,
            len: tx.seg_len(s),
            retx: s < tx.max_sent,
            entropy: 0,
        })
    }

    #[inline]
    fn commit(&mut self, tx: &mut SendState, seg: Segment) {
        let end = seg.seq + seg.len as u64;
        if seg.retx {
            tx.retx_packets += 1;
        }
        if self.in_recovery && seg.seq < tx.snd_nxt {
            self.retx_next = end;
        } else {
            tx.snd_nxt = end;
        }
        tx.max_sent = tx.max_sent.max(end);
    }

    fn on_ack(
        &mut self,
        tx: &mut SendState,
        ack: u64,
        _nack: bool,
        sack: Option<(u64, u32)>,
    ) -> u64 {
        let ack = ack.min(tx.size);
        let newly = ack.saturating_sub(tx.snd_una);
        tx.snd_una = tx.snd_una.max(ack);
        // The cumulative ACK first: it may end the recovery episode (IRN exits when the
        // cumulative ACK passes the recovery sequence), and a NACK's SACK then opens a new
        // one for a fresh loss beyond it (checking the exit after the entry dropped that
        // SACK's episode: the new hole waited for the next NACK).
        if self.in_recovery && tx.snd_una >= self.recovery_seq {
            self.in_recovery = false;
            self.retx_limit = 0;
        }
        if let Some((s, l)) = sack
            && l > 0
            && s >= tx.snd_una
        {
            self.insert_sack(s, s + l as u64);
            if !self.in_recovery {
                self.in_recovery = true;
                self.recovery_seq = tx.max_sent;
                self.retx_next = tx.snd_una;
            }
            self.retx_limit = self.retx_limit.max(self.sacked.last().map_or(0, |b| b.0));
        }
        // Drop blocks now covered by the cumulative ACK.
        let una = tx.snd_una;
        self.sacked.retain(|b| b.1 > una);
        if let Some(first) = self.sacked.first_mut()
            && first.0 < una
        {
            first.0 = una;
        }
        if tx.snd_nxt < tx.snd_una {
            tx.snd_nxt = tx.snd_una;
        }
        newly
    }

    fn on_timeout(&mut self, tx: &mut SendState) {
        self.in_recovery = true;
        self.recovery_seq = tx.max_sent;
        self.retx_next = tx.snd_una;
        self.retx_limit = tx.max_sent;
    }

    /// RTO_low while at most 3 MTUs are in flight ("RTO_low is used when at most N packets
    /// are in flight"), RTO_high above.
    #[inline]
    fn rto_ps(&self, tx: &SendState, p: &TransportParams) -> u64 {
        if tx.max_sent.saturating_sub(tx.snd_una) <= 3 * tx.mtu {
            p.rto_low_ps
        } else {
            p.rto_high_ps
        }
    }

    #[inline]
    fn on_data(
        &self,
        rx: &mut RecvState,
        seq: u64,
        len: u32,
        now_ps: u64,
        _p: &TransportParams,
    ) -> Response {
        on_data(rx, seq, len, now_ps, 0)
    }
}

/// IRN's receiver: data `[seq, seq+len)` at `now_ps`; a repeated NACK for a duplicate waits
/// `nack_interval_ps` (0 for IRN itself, and for a scheme's transport whose receiver is IRN's).
pub fn on_data(
    rx: &mut RecvState,
    seq: u64,
    len: u32,
    now_ps: u64,
    nack_interval_ps: u64,
) -> Response {
    let end = seq + len as u64;
    if seq <= rx.expected && end > rx.expected {
        rx.delivered_bytes += end - rx.expected;
        rx.expected = end;
        while let Some(&(s, e)) = rx.ooo.first() {
            if s > rx.expected {
                break;
            }
            rx.expected = rx.expected.max(e);
            rx.ooo.remove(0);
        }
        if rx.ooo.is_empty() {
            Response::Ack(rx.expected)
        } else {
            Response::Nack(rx.expected, seq, len)
        }
    } else if seq > rx.expected {
        let i = rx.ooo.partition_point(|b| b.1 < seq);
        let dup = i < rx.ooo.len() && rx.ooo[i].0 <= seq && end <= rx.ooo[i].1;
        if dup {
            if now_ps < rx.nack_timer_ps {
                return Response::None;
            }
        } else {
            rx.delivered_bytes += len as u64;
            let mut ns = seq;
            let mut ne = end;
            let mut j = i;
            while j < rx.ooo.len() && rx.ooo[j].0 <= ne {
                ns = ns.min(rx.ooo[j].0);
                ne = ne.max(rx.ooo[j].1);
                j += 1;
            }
            rx.ooo.splice(i..j, std::iter::once((ns, ne)));
        }
        rx.nack_timer_ps = now_ps + nack_interval_ps;
        Response::Nack(rx.expected, seq, len)
    } else if rx.ooo.is_empty() {
        Response::Ack(rx.expected)
    } else {
        Response::Nack(rx.expected, seq, len)
    }
}
