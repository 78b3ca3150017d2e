//! PB-FS's packet: the CC-postcard a switch sends to a flow's sender.

use crate::engine::packet::{HdrReader, HdrWriter, SchemeTag, WireHeader, WireSizes};

/// Fields of a PB-FS CC-postcard (`seeds/pbfs.txt` §III-C/D). Byte counts are saturated to
/// `u32` (4 GB, far above any port's bytes per DC_RTT) so the header fits the packet line;
/// the flow id is the common [`crate::engine::packet::Packet::flow`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PostcardHdr {
    /// Switch that sent it (node id; the paper's MAC address).
    pub switch: u32,
    /// I_p: bytes received for the port in the past N slots plus N × the last slot's, bytes.
    pub i_p_bytes: u32,
    /// Q¹: the port's queue at the start of the oldest of the N slots, bytes.
    pub q1_bytes: u32,
    /// T: the port's transmission rate, Mb/s.
    pub rate_mbps: u32,
    /// recentBytes: bytes received for the port during the T_Δ before the postcard, bytes.
    pub recent_bytes: u32,
    /// recentMarkedBytes: the part of `recent_bytes` from PBT-triggering packets, bytes.
    pub recent_marked_bytes: u32,
    /// Links from the sending switch back to the flow's sender (statistics only).
    pub hops: u8,
}

impl WireHeader for PostcardHdr {
    const TAG: SchemeTag = SchemeTag {
        scheme: super::ID.0,
        kind: 0,
    };
    fn encode(&self, w: &mut HdrWriter<'_>) {
        w.u32(self.switch);
        w.u32(self.i_p_bytes);
        w.u32(self.q1_bytes);
        w.u32(self.rate_mbps);
        w.u32(self.recent_bytes);
        w.u32(self.recent_marked_bytes);
        w.u8(self.hops);
    }
    fn decode(r: &mut HdrReader<'_>) -> Self {
        PostcardHdr {
            switch: r.get_u32(),
            i_p_bytes: r.get_u32(),
            q1_bytes: r.get_u32(),
            rate_mbps: r.get_u32(),
            recent_bytes: r.get_u32(),
            recent_marked_bytes: r.get_u32(),
            hops: r.get_u8(),
        }
    }
}

/// Bytes of a CC-postcard's fields on the wire: switch id (6 B MAC), flow id (13 B 5-tuple),
/// I_p, Q¹, T, recentBytes, recentMarkedBytes (4 B each) = 39 B, padded to 40 B.
pub const POSTCARD_FIELDS_BYTES: u32 = 40;

/// Wire size of a CC-postcard: a data packet's headers (it is an IP/UDP packet the switch
/// originates) plus [`POSTCARD_FIELDS_BYTES`], at least the minimum frame (HPCC framing:
/// 48 + 40 = 88 B; Ethernet: 62 + 40 = 102 B).
#[inline]
pub fn postcard_bytes(sizes: &WireSizes) -> u32 {
    (sizes.framing.data_header_bytes() + POSTCARD_FIELDS_BYTES).max(sizes.framing.min_frame_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::packet::{Framing, Packet, PktKind};

    #[test]
    fn postcard_size_and_round_trip() {
        let s = |framing| WireSizes {
            framing,
            int_bytes: 0,
            irn_sack: false,
        };
        assert_eq!(postcard_bytes(&s(Framing::Hpcc)), 88);
        assert_eq!(postcard_bytes(&s(Framing::Ethernet)), 102);
        let h = PostcardHdr {
            switch: 7,
            i_p_bytes: u32::MAX,
            q1_bytes: 3,
            rate_mbps: 100_000,
            recent_bytes: 5,
            recent_marked_bytes: 4,
            hops: 2,
        };
        let p = Packet {
            hdr: h.header(),
            ..Packet::default()
        };
        assert_eq!(p.kind(), PktKind::Scheme);
        assert!(!p.is_hop_by_hop());
        assert_eq!(PostcardHdr::of(&p), Some(h));
    }
}
