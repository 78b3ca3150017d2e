//! NDP's per-QP transport ([`crate::host::transport::Transport`] on [`NdpSender`]): the
//! sender sends while it has credit, queued retransmissions first; the receiver is IRN's
//! (out-of-order, no NACK spacing); the retransmission timer is the last resort and runs
//! even with nothing outstanding (a lost pull). Kept out of line: the GBN/IRN send path stays
//! small.

use super::NdpSender;
use crate::host::transport::{RecvState, Response, Segment, SendState, Transport, TransportParams};

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

    #[inline]
    fn timer_runs_idle(&self) -> bool {
        true
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
