//! BFC's packet: the pause frame carrying a Bloom filter of paused flows.

use crate::engine::packet::{HdrReader, HdrWriter, SchemeTag, WireHeader, WireSizes};

/// Header of a BFC pause frame. The Bloom filter itself (up to 1024 bits) travels in the
/// arena's payload side table ([`crate::engine::arena::PacketArena::payload`]): it does not fit
/// the packet's cache line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BfcHdr {
    /// Bits of the filter (8 × its size in bytes).
    pub bits: u16,
    /// Number of hash functions.
    pub hashes: u8,
}

impl WireHeader for BfcHdr {
    const TAG: SchemeTag = SchemeTag {
        scheme: super::ID.0,
        kind: 0,
    };
    /// Hop-by-hop: consumed by the upstream neighbour it is sent to.
    const HOP_BY_HOP: bool = true;
    fn encode(&self, w: &mut HdrWriter<'_>) {
        w.u16(self.bits);
        w.u8(self.hashes);
    }
    fn decode(r: &mut HdrReader<'_>) -> Self {
        BfcHdr {
            bits: r.get_u16(),
            hashes: r.get_u8(),
        }
    }
}

/// Wire size of a BFC pause frame carrying a `bloom_bytes` Bloom filter: a MAC control frame
/// ([`WireSizes::mac_control`]) plus the filter (HPCC framing: 43 + 128 = 171 B; Ethernet:
/// 64 + 128 = 192 B).
#[inline]
pub fn pause_frame_bytes(sizes: &WireSizes, bloom_bytes: u32) -> u32 {
    sizes.mac_control() + bloom_bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::packet::Framing;

    #[test]
    fn pause_frame_is_a_mac_control_frame_plus_the_filter() {
        let s = |framing| WireSizes {
            framing,
            int_bytes: 0,
            irn_sack: false,
        };
        assert_eq!(pause_frame_bytes(&s(Framing::Hpcc), 128), 171);
        assert_eq!(pause_frame_bytes(&s(Framing::Ethernet), 128), 192);
    }
}
