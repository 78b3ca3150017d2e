//! CBFC's packet: the InfiniBand flow control packet (FCP), a credit update of one virtual
//! lane.

use crate::engine::packet::{HdrReader, HdrWriter, Packet, SchemeTag, WireHeader};

/// Header of an InfiniBand credit-based flow-control packet (FCP): the receiver's flow
/// control credit limit of one virtual lane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CbfcHdr {
    /// Virtual lane (= priority / data queue index).
    pub vl: u8,
    /// FCCL: total credit blocks the sender may have sent on this VL since the link came up
    /// (blocks freed by the receiver so far + its buffer for the VL), in credit blocks. Not
    /// reduced modulo 4096 as on the wire: the simulator keeps the full count.
    pub fccl: u64,
}

impl WireHeader for CbfcHdr {
    const TAG: SchemeTag = SchemeTag {
        scheme: super::ID.0,
        kind: 0,
    };
    /// Hop-by-hop: consumed by the neighbour it is sent to.
    const HOP_BY_HOP: bool = true;
    fn encode(&self, w: &mut HdrWriter<'_>) {
        w.u8(self.vl);
        w.u64(self.fccl);
    }
    fn decode(r: &mut HdrReader<'_>) -> Self {
        CbfcHdr {
            vl: r.get_u8(),
            fccl: r.get_u64(),
        }
    }
}

/// A credit update (FCP) for virtual lane `vl` advertising `fccl` credit blocks, from `src`
/// to the adjacent device `dst`, of `size` wire bytes; control class.
#[inline]
pub fn cbfc_update(src: u32, dst: u32, size: u32, vl: u8, fccl: u64) -> Packet {
    Packet::frame(src, dst, size, CbfcHdr { vl, fccl }.header())
}
