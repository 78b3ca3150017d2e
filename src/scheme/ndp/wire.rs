//! NDP's control packets: trimmed header, return-to-sender header, ACK, NACK, PULL. Every
//! one is `ndp.header_bytes` on the wire.

use crate::engine::packet::{HdrReader, HdrWriter, SchemeTag, WireHeader};

/// What an NDP control packet is ([`NdpHdr::kind`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum NdpKind {
    /// A data packet trimmed to its header by a switch (travels on to the receiver, or back
    /// to the sender when [`NdpHdr::bounced`]).
    #[default]
    Header,
    /// The receiver got the full data packet `seq`.
    Ack,
    /// The receiver got only the header of data packet `seq` (its payload was trimmed).
    Nack,
    /// Credit from the receiver's pull pacer.
    Pull,
}

impl NdpKind {
    fn from_u8(v: u8) -> NdpKind {
        match v {
            0 => NdpKind::Header,
            1 => NdpKind::Ack,
            2 => NdpKind::Nack,
            _ => NdpKind::Pull,
        }
    }
}

/// Header of an NDP control packet. Every one carries the flow's cumulative pull credit, so a
/// lost PULL is repaired by any later ACK, NACK or PULL of the flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NdpHdr {
    /// First payload byte of the data packet it is about (Header, ACK, NACK).
    pub seq: u64,
    /// Receiver's cumulative in-order ACK, bytes (ACK, NACK, PULL).
    pub cum_ack: u64,
    /// Cumulative credit the receiver has granted this flow, bytes (ACK, NACK, PULL; 0 in a
    /// trimmed header).
    pub pull_bytes: u64,
    /// Payload bytes of the data packet it is about (Header, ACK, NACK).
    pub payload: u32,
    /// Which NDP packet.
    pub kind: NdpKind,
    /// A trimmed header returned to its sender by a switch whose header queue was full
    /// (Return-To-Sender): source and destination are swapped, and it is never bounced again.
    pub bounced: bool,
}

impl WireHeader for NdpHdr {
    const TAG: SchemeTag = SchemeTag {
        scheme: super::ID.0,
        kind: 0,
    };
    fn encode(&self, w: &mut HdrWriter<'_>) {
        w.u64(self.seq);
        w.u64(self.cum_ack);
        w.u64(self.pull_bytes);
        w.u32(self.payload);
        w.u8(self.kind as u8);
        w.bool(self.bounced);
    }
    fn decode(r: &mut HdrReader<'_>) -> Self {
        NdpHdr {
            seq: r.get_u64(),
            cum_ack: r.get_u64(),
            pull_bytes: r.get_u64(),
            payload: r.get_u32(),
            kind: NdpKind::from_u8(r.get_u8()),
            bounced: r.get_bool(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::packet::Packet;

    #[test]
    fn every_kind_round_trips() {
        for kind in [NdpKind::Header, NdpKind::Ack, NdpKind::Nack, NdpKind::Pull] {
            let h = NdpHdr {
                seq: 1 << 40,
                cum_ack: 3,
                pull_bytes: u64::MAX,
                payload: 1000,
                kind,
                bounced: kind == NdpKind::Header,
            };
            let p = Packet {
                hdr: h.header(),
                ..Packet::default()
            };
            assert_eq!(NdpHdr::of(&p), Some(h));
        }
    }
}
