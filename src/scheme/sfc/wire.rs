//! SFC's packet: the Back-To-Sender signal.

use crate::engine::packet::{HdrReader, HdrWriter, SchemeTag, WireHeader};

/// Header of an SFC Back-To-Sender signal. Its wire size is `sfc.bts_bytes` (the trimmed
/// header of the data packet that triggered it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BtsHdr {
    /// How long the sender should pause the flow, picoseconds.
    pub pause_ps: u64,
    /// Switches on the way back may cache the pause (the congested queue is a server-facing
    /// port of a ToR).
    pub cacheable: bool,
    /// Node id of the switch that generated it (which does not cache its own BTS).
    pub origin: u32,
}

impl WireHeader for BtsHdr {
    const TAG: SchemeTag = SchemeTag {
        scheme: super::ID.0,
        kind: 0,
    };
    fn encode(&self, w: &mut HdrWriter<'_>) {
        w.u64(self.pause_ps);
        w.bool(self.cacheable);
        w.u32(self.origin);
    }
    fn decode(r: &mut HdrReader<'_>) -> Self {
        BtsHdr {
            pause_ps: r.get_u64(),
            cacheable: r.get_bool(),
            origin: r.get_u32(),
        }
    }
}
