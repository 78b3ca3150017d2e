//! The priority pause frame (802.1Qbb PAUSE/RESUME, one priority per frame): the frame the
//! PFC scheme sends, and SFC-P turns a BTS into at the sender's ToR. It belongs to the PFC
//! scheme's registry id ([`PAUSE_OWNER`]); it lives in the scheme interface because two schemes
//! send it.

use crate::engine::packet::{HdrReader, HdrWriter, Packet, SchemeTag, WireHeader};
use crate::scheme::SchemeId;

/// The registry id of the PFC scheme, which owns the pause frame (`crate::scheme::pfc::ID`).
pub const PAUSE_OWNER: SchemeId = SchemeId(3);

/// Header of a PFC PAUSE/RESUME frame (one priority per frame).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PfcHdr {
    /// Paused priority (queue index).
    pub prio: u8,
    /// Pause duration, picoseconds: 0 = RESUME, `u64::MAX` = until RESUME.
    pub pause_ps: u64,
}

impl WireHeader for PfcHdr {
    const TAG: SchemeTag = SchemeTag {
        scheme: PAUSE_OWNER.0,
        kind: 0,
    };
    /// Hop-by-hop: consumed by the neighbour it is sent to.
    const HOP_BY_HOP: bool = true;
    fn encode(&self, w: &mut HdrWriter<'_>) {
        w.u8(self.prio);
        w.u64(self.pause_ps);
    }
    fn decode(r: &mut HdrReader<'_>) -> Self {
        PfcHdr {
            prio: r.get_u8(),
            pause_ps: r.get_u64(),
        }
    }
}

/// A PFC PAUSE (`pause_ps` > 0, `u64::MAX` = until RESUME) or RESUME (0) frame for priority
/// `prio`, from `src` to the adjacent device `dst`, of `size` wire bytes
/// ([`crate::engine::packet::WireSizes::mac_control`]). It travels in the control class.
#[inline]
pub fn pfc_frame(src: u32, dst: u32, size: u32, prio: u8, pause_ps: u64) -> Packet {
    Packet::frame(src, dst, size, PfcHdr { prio, pause_ps }.header())
}
