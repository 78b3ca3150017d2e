//! RoCEv2 Go-Back-N, following HPCC-sim (`specs/gbn.md`): the receiver accepts only in-order
//! data, NACKs the first gap (repeats for the same expected byte suppressed for the NACK
//! interval), and the sender rewinds `snd_nxt` to the hole. Added, as in TLT-sim: a
//! retransmission timeout (HPCC-sim has none) and an ACK in reply to a duplicate (IB spec
//! C9-110), without which a timed-out sender whose ACKs were lost could never learn it is
//! done.

use super::{RecvState, Response, Segment, SendState, Transport, TransportParams};

/// Go-Back-N keeps no per-QP state beyond the sequence state.
#[derive(Clone, Copy, Debug, Default)]
pub struct Gbn;

impl Transport for Gbn {
    #[inline]
    fn peek(&self, tx: &SendState, new_allowed: bool) -> Option<Segment> {
        if !new_allowed || tx.snd_nxt >= tx.size {
            return None;
        }
        let s = tx.snd_nxt;
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
        tx.snd_nxt = end;
        tx.max_sent = tx.max_sent.max(end);
    }

    #[inline]
    fn on_ack(
        &mut self,
        tx: &mut SendState,
        ack: u64,
        nack: bool,
        _sack: Option<(u64, u32)>,
    ) -> u64 {
        let ack = ack.min(tx.size);
        let newly = ack.saturating_sub(tx.snd_una);
        tx.snd_una = tx.snd_una.max(ack);
        if nack || tx.snd_nxt < tx.snd_una {
            tx.snd_nxt = tx.snd_una;
        }
        newly
    }

    fn on_timeout(&mut self, tx: &mut SendState) {
        tx.snd_nxt = tx.snd_una;
    }

    #[inline]
    fn rto_ps(&self, _tx: &SendState, p: &TransportParams) -> u64 {
        p.rto_ps
    }

    #[inline]
    fn on_data(
        &self,
        rx: &mut RecvState,
        seq: u64,
        len: u32,
        now_ps: u64,
        p: &TransportParams,
    ) -> Response {
        let end = seq + len as u64;
        if seq == rx.expected {
            rx.expected = end;
            rx.delivered_bytes += len as u64;
            Response::Ack(rx.expected)
        } else if seq > rx.expected {
            if now_ps >= rx.nack_timer_ps || rx.last_nack != rx.expected {
                rx.nack_timer_ps = now_ps + p.nack_interval_ps;
                rx.last_nack = rx.expected;
                Response::Nack(rx.expected, 0, 0)
            } else {
                Response::None
            }
        } else {
            Response::Ack(rx.expected)
        }
    }
}
