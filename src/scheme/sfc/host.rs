//! The host half of SFC: a BTS pauses its QP until `now + pause` (a newer BTS replaces the end
//! time, as on the paper's NIC); the congestion controller keeps running underneath.

use crate::engine::packet::{Packet, WireHeader};
use crate::scheme::sfc::wire::BtsHdr;
use crate::scheme::{HostAction, HostCtx, HostHooks};

/// SFC at the hosts (stateless apart from its counter).
#[derive(Clone, Debug, Default)]
pub struct SfcHost {
    /// BTS signals received by senders.
    pub bts_received: u64,
}

impl HostHooks for SfcHost {
    fn splits_by_host(&self) -> bool {
        true
    }

    fn absorb(
        &mut self,
        other: &Self,
        _theirs_host: &dyn Fn(usize) -> bool,
        _theirs_flow: &dyn Fn(u32) -> bool,
    ) {
        self.bts_received += other.bts_received;
    }

    #[inline]
    fn owns(&self, pkt: &Packet) -> bool {
        BtsHdr::is(pkt)
    }

    fn on_control(&mut self, ctx: &mut HostCtx<'_>, pkt: &Packet) {
        if let Some(b) = BtsHdr::of(pkt) {
            self.bts_received += 1;
            ctx.out.push(HostAction::PauseQp {
                flow: pkt.flow,
                until_ps: ctx.now_ps + b.pause_ps,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::TxPort;

    #[test]
    fn bts_pauses_its_qp_until_now_plus_pause() {
        let mut port = TxPort::new(crate::switch::test_link());
        let mut out = crate::scheme::Outbox::new();
        let mut ctx = HostCtx {
            now_ps: 5_000_000,
            node: 0,
            host: 0,
            port: &mut port,
            out: &mut out,
            event_no: 0,
        };
        let mut h = SfcHost::default();
        let bts = Packet {
            flow: 7,
            hdr: BtsHdr {
                pause_ps: 3_000_000,
                cacheable: true,
                origin: 0,
            }
            .header(),
            ..Packet::default()
        };
        assert!(h.owns(&bts));
        h.on_control(&mut ctx, &bts);
        assert_eq!(
            out.items,
            vec![(
                crate::scheme::SchemeId(0),
                HostAction::PauseQp {
                    flow: 7,
                    until_ps: 8_000_000
                }
            )]
        );
        assert_eq!(h.bts_received, 1);
    }
}
