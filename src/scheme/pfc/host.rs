//! The host half of PFC: a NIC that receives PAUSE/RESUME frames from its ToR stops / restarts
//! the priority's QPs (and its ACKs, unless ACKs travel in the control class).

use crate::engine::packet::{Packet, WireHeader};
use crate::scheme::pause::PfcHdr;
use crate::scheme::pfc::{PauseTimes, Received, RxPort};
use crate::scheme::{HostAction, HostCtx, HostHooks};

/// Timer kinds of the host half.
pub mod timer {
    /// A received pause of priority `arg` may have expired.
    pub const EXPIRE: u8 = 0;
}

/// PFC at the NICs: received-pause state of every host's port (indexed by host).
#[derive(Clone, Debug)]
pub struct PfcHost {
    /// Received pauses, one "port" per host.
    pub rx: PauseTimes,
}

impl HostHooks for PfcHost {
    fn splits_by_host(&self) -> bool {
        true
    }

    fn absorb(
        &mut self,
        other: &Self,
        theirs_host: &dyn Fn(usize) -> bool,
        _theirs_flow: &dyn Fn(u32) -> bool,
    ) {
        self.rx.absorb(&other.rx, theirs_host);
    }

    #[inline]
    fn owns(&self, pkt: &Packet) -> bool {
        PfcHdr::is(pkt)
    }

    fn on_control(&mut self, ctx: &mut HostCtx<'_>, pkt: &Packet) {
        let Some(f) = PfcHdr::of(pkt) else {
            return;
        };
        let at = RxPort {
            slot: ctx.host,
            node: ctx.node,
            is_switch: false,
            port: 0,
        };
        match self.rx.receive(ctx.port, at, &f, ctx.now_ps, ctx.event_no) {
            Received::Nothing | Received::Paused(None) => {}
            Received::Paused(Some(at)) => ctx.out.push(HostAction::Timer {
                at_ps: at,
                which: timer::EXPIRE,
                arg: f.prio,
            }),
            Received::Resumed => ctx.out.push(HostAction::Kick),
        }
    }

    fn on_timer(&mut self, ctx: &mut HostCtx<'_>, which: u8, arg: u8) {
        if which == timer::EXPIRE && self.rx.expire(ctx.port, ctx.host, arg as usize, ctx.now_ps) {
            ctx.out.push(HostAction::Kick);
        }
    }

    /// The pauses the NIC received end as if a RESUME had arrived.
    fn on_link_down(&mut self, ctx: &mut HostCtx<'_>) {
        self.rx.link_down(ctx.port, ctx.host, ctx.now_ps);
    }

    fn finish(&mut self, ctx: &mut HostCtx<'_>) {
        self.rx.finish(ctx.port, ctx.host, ctx.now_ps);
    }
}
