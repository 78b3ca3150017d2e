//! Packets with typed headers (smoltcp's "Repr" idea): the fields every packet has — addresses,
//! 5-tuple ports, flow, priority, wire size — plus one small `Copy` header per packet kind, so
//! that a field means one thing (an ACK's echoed send time is not a PFC pause duration).
//!
//! The whole packet is one 64 B cache line. Wire sizes are computed in one place,
//! [`WireSizes`], from the framing convention and the INT configuration.

/// HPCC convention: destination port of background flows. The workload assigns these
/// destination ports ([`crate::workload`]); summaries and SFC's BTS statistics classify flows
/// by them.
pub const DPORT_BACKGROUND: u16 = 100;
/// HPCC convention: destination port of incast flows.
pub const DPORT_INCAST: u16 = 200;
/// Destination port of an open-loop flow sent to a host of another site (data center) under a
/// destination locality ([`crate::workload::traffic::Locality`]), so summaries split inter-DC
/// flows (300) from the rest (100).
pub const DPORT_REMOTE: u16 = 300;

/// What a packet is (the discriminant of [`Header`], cheap to copy around).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum PktKind {
    /// RDMA data (one MTU-sized segment of a message).
    #[default]
    Data,
    /// Cumulative acknowledgement.
    Ack,
    /// Negative acknowledgement (Go-Back-N: rewind; IRN: carries a SACK block).
    Nack,
    /// DCQCN congestion notification packet.
    Cnp,
    /// PFC PAUSE/RESUME frame (hop-by-hop, never forwarded).
    Pfc,
    /// SFC Back-To-Sender signal.
    Bts,
    /// PB-FS CC-postcard (switch → sender).
    Postcard,
    /// NDP control packet: trimmed header, return-to-sender header, ACK, NACK or PULL
    /// ([`NdpHdr`]).
    Ndp,
    /// BFC pause frame (hop-by-hop Bloom filter of paused flows, never forwarded).
    Bfc,
    /// InfiniBand CBFC flow-control packet (credit update, hop-by-hop, never forwarded).
    Cbfc,
}

/// Header of a data packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DataHdr {
    /// First payload byte (offset in the message).
    pub seq: u64,
    /// Time the NIC sent it, picoseconds.
    pub sent_ps: u64,
    /// Payload bytes.
    pub payload: u32,
    /// This is a retransmission.
    pub retx: bool,
    /// ECN Congestion Experienced, set by a switch.
    pub ce: bool,
    /// TCD Undetermined Experienced: the second code point (ECT(1) re-purposed), set by a TCD
    /// switch on a port in the undetermined state; never set together with `ce` (a later CE
    /// mark replaces it).
    pub ue: bool,
    /// Number of valid INT hop records (in the arena's side table).
    pub int_n: u8,
    /// PB-FS: PBT-triggering ("subject to CC-postcards"), set by the sender (the paper uses a
    /// TOS bit). Always false without PB-FS.
    pub pbt: bool,
}

/// Header of an ACK or NACK: what the receiver echoes back about one data packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckHdr {
    /// Cumulative acknowledgement (next byte the receiver expects).
    pub ack_seq: u64,
    /// Echo of the acknowledged data packet's send time, picoseconds (RTT samples).
    pub echo_sent_ps: u64,
    /// Arrival time of the acknowledged data packet at the receiver, picoseconds (one-way
    /// delay = this − `echo_sent_ps`, for OnRamp).
    pub data_rx_ps: u64,
    /// NACK (IRN): start of the SACKed block minus `ack_seq`, bytes (0 = no block).
    pub sack_off: u32,
    /// NACK (IRN): SACKed block length, bytes (at most one MTU, which is ≤ 65,535 B).
    pub sack_len: u16,
    /// Echo of the data packet's CE mark.
    pub ce_echo: bool,
    /// Number of valid INT hop records echoed from the data packet.
    pub int_n: u8,
}

impl AckHdr {
    /// The SACKed block `(start, len)` of an IRN NACK, if any.
    #[inline]
    pub fn sack(&self) -> (u64, u32) {
        if self.sack_len == 0 {
            (0, 0)
        } else {
            (self.ack_seq + self.sack_off as u64, self.sack_len as u32)
        }
    }
}

/// Header of a PFC PAUSE/RESUME frame (one priority per frame).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PfcHdr {
    /// Paused priority (queue index).
    pub prio: u8,
    /// Pause duration, picoseconds: 0 = RESUME, `u64::MAX` = until RESUME.
    pub pause_ps: u64,
}

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

/// Header of an SFC Back-To-Sender signal.
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

/// Fields of a PB-FS CC-postcard (`seeds/pbfs.txt` §III-C/D). Byte counts are saturated to
/// `u32` (4 GB, far above any port's bytes per DC_RTT) so the header fits the packet line;
/// the flow id is the common [`Packet::flow`].
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

/// The per-kind part of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Header {
    /// See [`DataHdr`].
    Data(DataHdr),
    /// See [`AckHdr`].
    Ack(AckHdr),
    /// See [`AckHdr`].
    Nack(AckHdr),
    /// DCQCN CNP: no fields beyond the common ones (the flow it is for).
    Cnp,
    /// See [`PfcHdr`].
    Pfc(PfcHdr),
    /// See [`BtsHdr`].
    Bts(BtsHdr),
    /// See [`PostcardHdr`].
    Postcard(PostcardHdr),
    /// See [`NdpHdr`].
    Ndp(NdpHdr),
    /// See [`BfcHdr`].
    Bfc(BfcHdr),
    /// See [`CbfcHdr`].
    Cbfc(CbfcHdr),
}

impl Default for Header {
    fn default() -> Self {
        Header::Data(DataHdr::default())
    }
}

/// One INT hop record written at switch dequeue (HPCC).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntHop {
    /// Dequeue time, picoseconds.
    pub ts_ps: u64,
    /// Bytes transmitted by the egress port before this packet.
    pub tx_bytes: u64,
    /// Egress port backlog after the dequeue, bytes.
    pub qlen_bytes: u32,
    /// Egress port line rate, Mb/s.
    pub rate_mbps: u32,
}

/// Maximum INT hop records carried (HPCC-sim: 5).
pub const MAX_INT_HOPS: usize = 5;

/// A packet: common fields plus the typed per-kind header. One 64 B cache line.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
pub struct Packet {
    /// Source node id.
    pub src: u32,
    /// Destination node id (routing uses it).
    pub dst: u32,
    /// Flow (QP) index this packet belongs to or is about.
    pub flow: u32,
    /// Bytes on the wire that occupy buffers (headers + payload, framing-dependent).
    pub size: u32,
    /// UDP source port (part of the ECMP 5-tuple).
    pub sport: u16,
    /// UDP destination port.
    pub dport: u16,
    /// Port the packet arrived on at the current node (set on arrival).
    pub in_port: u16,
    /// Priority (the data queue at switches; control packets travel in queue 0).
    pub prio: u8,
    /// TCD: an ACK/NACK echoes the UE mark of the data packet it acknowledges; a CNP is the
    /// UE variant (only UE, no CE, arrived in its interval). Kept with the common fields
    /// because the ACK header fills its bytes; false elsewhere.
    pub ue_echo: bool,
    /// Per-kind header.
    pub hdr: Header,
}

const _: () = assert!(std::mem::size_of::<Packet>() == 64);

impl Packet {
    /// Kind of the packet.
    #[inline]
    pub fn kind(&self) -> PktKind {
        match self.hdr {
            Header::Data(_) => PktKind::Data,
            Header::Ack(_) => PktKind::Ack,
            Header::Nack(_) => PktKind::Nack,
            Header::Cnp => PktKind::Cnp,
            Header::Pfc(_) => PktKind::Pfc,
            Header::Bts(_) => PktKind::Bts,
            Header::Postcard(_) => PktKind::Postcard,
            Header::Ndp(_) => PktKind::Ndp,
            Header::Bfc(_) => PktKind::Bfc,
            Header::Cbfc(_) => PktKind::Cbfc,
        }
    }

    /// Number of INT records the packet carries (data, ACK, NACK).
    #[inline]
    pub fn int_n(&self) -> u8 {
        match &self.hdr {
            Header::Data(d) => d.int_n,
            Header::Ack(a) | Header::Nack(a) => a.int_n,
            _ => 0,
        }
    }

    /// The data header (None for other kinds).
    #[inline]
    pub fn data(&self) -> Option<&DataHdr> {
        match &self.hdr {
            Header::Data(d) => Some(d),
            _ => None,
        }
    }

    /// The mutable data header (None for other kinds).
    #[inline]
    pub fn data_mut(&mut self) -> Option<&mut DataHdr> {
        match &mut self.hdr {
            Header::Data(d) => Some(d),
            _ => None,
        }
    }

    /// The ACK/NACK header (None for other kinds).
    #[inline]
    pub fn ack(&self) -> Option<&AckHdr> {
        match &self.hdr {
            Header::Ack(a) | Header::Nack(a) => Some(a),
            _ => None,
        }
    }

    /// A PFC PAUSE (`pause_ps` > 0, `u64::MAX` = until RESUME) or RESUME (0) frame for
    /// priority `prio`, from `src` to the adjacent device `dst`, of `size` wire bytes. It
    /// travels in the control class (common priority 0).
    #[inline]
    pub fn pfc_frame(src: u32, dst: u32, size: u32, prio: u8, pause_ps: u64) -> Packet {
        Packet {
            src,
            dst,
            size,
            prio: 0,
            hdr: Header::Pfc(PfcHdr { prio, pause_ps }),
            ..Packet::default()
        }
    }

    /// An InfiniBand credit update (FCP) for virtual lane `vl` advertising `fccl` credit
    /// blocks, from `src` to the adjacent device `dst`, of `size` wire bytes; control class.
    #[inline]
    pub fn cbfc_update(src: u32, dst: u32, size: u32, vl: u8, fccl: u64) -> Packet {
        Packet {
            src,
            dst,
            size,
            prio: 0,
            hdr: Header::Cbfc(CbfcHdr { vl, fccl }),
            ..Packet::default()
        }
    }

    /// A control packet of `kind`'s header going the reverse way of data packet `d` (src/dst
    /// and ports swapped, same flow and priority).
    #[inline]
    pub fn reverse_of(d: &Packet, hdr: Header, size: u32) -> Packet {
        Packet {
            src: d.dst,
            dst: d.src,
            flow: d.flow,
            size,
            sport: d.dport,
            dport: d.sport,
            in_port: 0,
            prio: d.prio,
            ue_echo: false,
            hdr,
        }
    }
}

/// The routing-relevant header fields of a packet, copied out cheaply.
#[derive(Clone, Copy, Debug)]
pub struct Hdr {
    /// Kind.
    pub kind: PktKind,
    /// Priority.
    pub prio: u8,
    /// Source node.
    pub src: u32,
    /// Destination node.
    pub dst: u32,
    /// UDP source port.
    pub sport: u16,
    /// UDP destination port.
    pub dport: u16,
    /// Wire size, bytes.
    pub size: u32,
}

impl Hdr {
    /// Header of `p`.
    #[inline]
    pub fn of(p: &Packet) -> Hdr {
        Hdr {
            kind: p.kind(),
            prio: p.prio,
            src: p.src,
            dst: p.dst,
            sport: p.sport,
            dport: p.dport,
            size: p.size,
        }
    }
}

/// How packet sizes and serialization times are computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Framing {
    /// HPCC-sim conventions: data = payload + 48 B (+ INT), ACK/NACK 60 B (88 B with HPCC INT),
    /// no preamble/IFG/FCS, serialization truncated to whole nanoseconds. Our default, so that
    /// numbers compare with the papers.
    Hpcc,
    /// Realistic RoCEv2 over Ethernet: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 +
    /// FCS 4 = 62 B per data frame, ACK = 62 + AETH 4 = 66 B (64 B minimum frame), plus
    /// preamble/SFD 8 B and inter-frame gap 12 B of wire time per frame; exact picosecond
    /// serialization.
    Ethernet,
}

impl Framing {
    /// Header bytes of a data packet (buffer-occupying), excluding INT.
    pub fn data_header_bytes(self) -> u32 {
        match self {
            Framing::Hpcc => 48,
            Framing::Ethernet => 62,
        }
    }
    /// Size of an ACK/NACK without INT.
    pub fn ack_bytes(self) -> u32 {
        match self {
            Framing::Hpcc => 60,
            Framing::Ethernet => 66,
        }
    }
    /// Size of an ACK/NACK carrying `int_bytes` of INT: HPCC-sim pads the 46 B of headers
    /// (+ INT) to at least 60 B (so 60 B without INT or with TIMELY's 8 B, 88 B with HPCC's
    /// 42 B); Ethernet framing adds the INT to its 66 B frame.
    pub fn ack_size(self, int_bytes: u32) -> u32 {
        match self {
            Framing::Hpcc => (46 + int_bytes).max(60),
            Framing::Ethernet => 66 + int_bytes,
        }
    }
    /// Minimum frame: control frames (PFC, BTS, CNP) are padded to at least this.
    pub fn min_frame_bytes(self) -> u32 {
        match self {
            Framing::Hpcc => 0,
            Framing::Ethernet => 64,
        }
    }
    /// Wire-only overhead per frame (preamble, SFD, IFG): serialized but never buffered.
    pub fn wire_overhead_bytes(self) -> u32 {
        match self {
            Framing::Hpcc => 0,
            Framing::Ethernet => 20,
        }
    }
    /// Serialization time of a `size_bytes` frame at `rate_bps`, picoseconds.
    #[inline]
    pub fn ser_ps(self, size_bytes: u32, rate_bps: u64) -> u64 {
        match self {
            Framing::Hpcc => crate::units::ser_time_ps_hpcc(size_bytes as u64, rate_bps),
            Framing::Ethernet => crate::units::ser_time_ps(size_bytes as u64 + 20, rate_bps),
        }
    }
}

/// Wire (buffer-occupying) size of every packet kind, in one place. Serialization time adds
/// the framing's wire-only overhead on top ([`Framing::ser_ps`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireSizes {
    /// Framing convention.
    pub framing: Framing,
    /// INT bytes carried by data packets and ACK/NACKs (HPCC: 42; 0 otherwise).
    pub int_bytes: u32,
    /// IRN NACKs carry a 6 B SACK block on top of the ACK.
    pub irn_sack: bool,
    /// Size of an SFC BTS (the trimmed header), bytes.
    pub bts_bytes: u32,
    /// Size of every NDP control packet (trimmed header, ACK, NACK, PULL), bytes.
    pub ndp_bytes: u32,
}

impl WireSizes {
    /// A data packet with `payload` bytes.
    #[inline]
    pub fn data(&self, payload: u32) -> u32 {
        self.framing.data_header_bytes() + self.int_bytes + payload
    }
    /// An ACK (`nack = false`) or NACK.
    #[inline]
    pub fn ack(&self, nack: bool) -> u32 {
        self.framing.ack_size(self.int_bytes) + if nack && self.irn_sack { 6 } else { 0 }
    }
    /// A DCQCN CNP (an ACK-sized frame, at least the minimum frame).
    #[inline]
    pub fn cnp(&self) -> u32 {
        self.framing.ack_bytes().max(self.framing.min_frame_bytes())
    }
    /// A PFC frame: HPCC-sim's 43 B (PPP 14 + IPv4 20 + pause header 9), or the 64 B minimum
    /// Ethernet MAC control frame with realistic framing.
    #[inline]
    pub fn pfc(&self) -> u32 {
        match self.framing {
            Framing::Hpcc => 43,
            Framing::Ethernet => 64,
        }
    }
    /// A BFC pause frame carrying a `bloom_bytes` Bloom filter: a PFC-sized MAC control frame
    /// ([`Self::pfc`]) plus the filter (HPCC framing: 43 + 128 = 171 B; Ethernet: 64 + 128 B).
    #[inline]
    pub fn bfc(&self, bloom_bytes: u32) -> u32 {
        self.pfc() + bloom_bytes
    }
    /// An SFC BTS.
    #[inline]
    pub fn bts(&self) -> u32 {
        self.bts_bytes
    }
    /// An NDP control packet (trimmed header, return-to-sender header, ACK, NACK, PULL).
    #[inline]
    pub fn ndp(&self) -> u32 {
        self.ndp_bytes
    }
    /// A PB-FS CC-postcard: a data packet's headers (it is an IP/UDP packet the switch
    /// originates) plus [`POSTCARD_FIELDS_BYTES`], at least the minimum frame.
    #[inline]
    pub fn postcard(&self) -> u32 {
        (self.framing.data_header_bytes() + POSTCARD_FIELDS_BYTES)
            .max(self.framing.min_frame_bytes())
    }
}

/// Bytes of a CC-postcard's fields on the wire: switch id (6 B MAC), flow id (13 B 5-tuple),
/// I_p, Q¹, T, recentBytes, recentMarkedBytes (4 B each) = 39 B, padded to 40 B.
pub const POSTCARD_FIELDS_BYTES: u32 = 40;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_is_one_cache_line_and_kinds_match_headers() {
        assert_eq!(std::mem::size_of::<Packet>(), 64);
        let mut p = Packet::default();
        assert_eq!(p.kind(), PktKind::Data);
        p.hdr = Header::Nack(AckHdr {
            ack_seq: 5000,
            sack_off: 2000,
            sack_len: 1000,
            ..Default::default()
        });
        assert_eq!(p.kind(), PktKind::Nack);
        assert_eq!(p.ack().unwrap().sack(), (7000, 1000));
        p.hdr = Header::Pfc(PfcHdr {
            prio: 9,
            pause_ps: 0,
        });
        assert_eq!(p.kind(), PktKind::Pfc);
        assert_eq!(p.int_n(), 0);
    }

    #[test]
    fn wire_sizes_hpcc_and_ethernet() {
        let h = WireSizes {
            framing: Framing::Hpcc,
            int_bytes: 42,
            irn_sack: true,
            bts_bytes: 64,
            ndp_bytes: 64,
        };
        assert_eq!(h.data(1000), 1090);
        assert_eq!(h.ack(false), 88);
        assert_eq!(h.ack(true), 94);
        assert_eq!(h.pfc(), 43);
        assert_eq!(h.cnp(), 60);
        let e = WireSizes {
            framing: Framing::Ethernet,
            int_bytes: 0,
            irn_sack: false,
            bts_bytes: 64,
            ndp_bytes: 64,
        };
        assert_eq!(e.data(1000), 1062);
        assert_eq!(e.ack(true), 66);
        assert_eq!(e.pfc(), 64);
        assert_eq!(e.cnp(), 66);
        // Postcards: 48 + 40 = 88 B (HPCC framing), 62 + 40 = 102 B (Ethernet).
        assert_eq!(h.postcard(), 88);
        // BFC pause frames: the PFC frame plus the 128 B filter.
        assert_eq!(h.bfc(128), 171);
        assert_eq!(e.bfc(128), 192);
        assert_eq!(e.postcard(), 102);
        let p = Packet {
            hdr: Header::Postcard(PostcardHdr::default()),
            ..Packet::default()
        };
        assert_eq!(p.kind(), PktKind::Postcard);
    }
}
