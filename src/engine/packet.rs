//! Packets with typed headers (smoltcp's "Repr" idea): the fields every packet has — addresses,
//! 5-tuple ports, flow, priority, wire size, scheme marks — plus one small `Copy` header per
//! packet kind, so that a field means one thing (an ACK's echoed send time is not a pause
//! duration). The transport's kinds (data, ACK, NACK, CNP) are typed here; a scheme's own
//! packets travel as [`Header::Scheme`], whose fields the scheme declares in its folder
//! ([`WireHeader`]), and a scheme's marks on data packets are bits of [`Packet::marks`].
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
    /// A scheme's own packet ([`SchemeHdr`]): its kind and fields are declared in the
    /// scheme's folder ([`WireHeader`]).
    Scheme,
}

/// Packet marks a scheme declares (one bit each; `crate::scheme::Scheme::MARK` declares them
/// out, so two schemes never share one). On a data packet: the marks its sender or a switch
/// set. On an ACK, NACK or CNP: the marks it echoes from the data packet(s) it answers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Marks(pub u8);

impl Marks {
    /// No mark.
    pub const NONE: Marks = Marks(0);

    /// Mark bit `i` (0–7).
    pub const fn bit(i: u32) -> Marks {
        assert!(i < 8, "a packet carries at most 8 scheme marks");
        Marks(1 << i)
    }

    /// Both sets.
    pub const fn union(self, o: Marks) -> Marks {
        Marks(self.0 | o.0)
    }

    /// Carries any mark of `m`.
    #[inline]
    pub fn any(self, m: Marks) -> bool {
        self.0 & m.0 != 0
    }

    /// Carries no mark.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The marks of `self` that are also in `m`.
    #[inline]
    pub fn and(self, m: Marks) -> Marks {
        Marks(self.0 & m.0)
    }

    /// Set the marks `m`.
    #[inline]
    pub fn insert(&mut self, m: Marks) {
        self.0 |= m.0;
    }

    /// Clear the marks `m`.
    #[inline]
    pub fn remove(&mut self, m: Marks) {
        self.0 &= !m.0;
    }
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
    /// Number of valid INT hop records (in the arena's side table).
    pub int_n: u8,
}

/// Header of an ACK or NACK: what the receiver echoes back about one data packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckHdr {
    /// Cumulative acknowledgement (next byte the receiver expects).
    pub ack_seq: u64,
    /// Echo of the acknowledged data packet's send time, picoseconds (RTT samples).
    pub echo_sent_ps: u64,
    /// Arrival time of the acknowledged data packet at the receiver, picoseconds (a
    /// receive timestamp: one-way delay = this − `echo_sent_ps`, for delay-based senders).
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

/// Bytes of a scheme header's fields ([`SchemeHdr::body`]).
pub const SCHEME_HDR_BYTES: usize = 32;

/// Which scheme packet a [`SchemeHdr`] is: the registry id of the scheme that owns it and
/// one of its kinds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchemeTag {
    /// Registry id of the owning scheme (`crate::scheme::SchemeId as u8`).
    pub scheme: u8,
    /// The scheme's own packet kind (0, 1, …).
    pub kind: u8,
}

/// A scheme's own packet header, opaque to the network: the owner's tag, whether it is a
/// hop-by-hop frame, and its fields encoded by the owner's [`WireHeader`] type (declared in
/// the scheme's folder). The encoding is little-endian, fixed-offset, and compiles to plain
/// loads and stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchemeHdr {
    /// Owner and kind.
    pub tag: SchemeTag,
    /// A hop-by-hop frame (flow control between neighbours): consumed at the next device,
    /// never routed.
    pub hop_by_hop: bool,
    /// The encoded fields.
    pub body: [u8; SCHEME_HDR_BYTES],
}

/// A scheme's packet header type: how it is tagged and encoded into a [`SchemeHdr`].
/// Implemented in the scheme's folder (e.g. SFC's BTS, NDP's control packets).
pub trait WireHeader: Copy {
    /// Owner and kind.
    const TAG: SchemeTag;
    /// Consumed at the next device, never routed (see [`SchemeHdr::hop_by_hop`]).
    const HOP_BY_HOP: bool = false;
    /// Write the fields.
    fn encode(&self, w: &mut HdrWriter<'_>);
    /// Read the fields back (the same order as [`Self::encode`]).
    fn decode(r: &mut HdrReader<'_>) -> Self;

    /// The packet header carrying `self`.
    #[inline]
    fn header(&self) -> Header {
        let mut body = [0u8; SCHEME_HDR_BYTES];
        self.encode(&mut HdrWriter {
            buf: &mut body,
            at: 0,
        });
        Header::Scheme(SchemeHdr {
            tag: Self::TAG,
            hop_by_hop: Self::HOP_BY_HOP,
            body,
        })
    }

    /// `pkt`'s header of this type, if it is one.
    #[inline]
    fn of(pkt: &Packet) -> Option<Self> {
        match &pkt.hdr {
            Header::Scheme(s) if s.tag == Self::TAG => Some(Self::decode(&mut HdrReader {
                buf: &s.body,
                at: 0,
            })),
            _ => None,
        }
    }

    /// `pkt` carries a header of this type.
    #[inline]
    fn is(pkt: &Packet) -> bool {
        matches!(&pkt.hdr, Header::Scheme(s) if s.tag == Self::TAG)
    }

    /// Rewrite `pkt`'s header of this type with `f` (nothing if it is not one).
    #[inline]
    fn update(pkt: &mut Packet, f: impl FnOnce(&mut Self)) {
        if let Some(mut h) = Self::of(pkt) {
            f(&mut h);
            pkt.hdr = h.header();
        }
    }
}

/// Writes a [`WireHeader`]'s fields, in order, into a [`SchemeHdr`] body.
pub struct HdrWriter<'a> {
    buf: &'a mut [u8; SCHEME_HDR_BYTES],
    at: usize,
}

/// Reads a [`WireHeader`]'s fields, in order, from a [`SchemeHdr`] body.
pub struct HdrReader<'a> {
    buf: &'a [u8; SCHEME_HDR_BYTES],
    at: usize,
}

macro_rules! wire_field {
    ($put:ident, $get:ident, $t:ty) => {
        impl HdrWriter<'_> {
            #[doc = concat!("Write a `", stringify!($t), "` (panics past the body's end: a header type that does not fit is a bug).")]
            #[inline]
            pub fn $put(&mut self, v: $t) {
                const N: usize = std::mem::size_of::<$t>();
                self.buf[self.at..self.at + N].copy_from_slice(&v.to_le_bytes());
                self.at += N;
            }
        }
        impl HdrReader<'_> {
            #[doc = concat!("Read a `", stringify!($t), "`.")]
            #[inline]
            pub fn $get(&mut self) -> $t {
                const N: usize = std::mem::size_of::<$t>();
                let mut b = [0u8; N];
                b.copy_from_slice(&self.buf[self.at..self.at + N]);
                self.at += N;
                <$t>::from_le_bytes(b)
            }
        }
    };
}
wire_field!(u8, get_u8, u8);
wire_field!(u16, get_u16, u16);
wire_field!(u32, get_u32, u32);
wire_field!(u64, get_u64, u64);

impl HdrWriter<'_> {
    /// Write a `bool` (one byte).
    #[inline]
    pub fn bool(&mut self, v: bool) {
        self.u8(v as u8);
    }
}

impl HdrReader<'_> {
    /// Read a `bool`.
    #[inline]
    pub fn get_bool(&mut self) -> bool {
        self.get_u8() != 0
    }
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
    /// DCQCN CNP: no fields beyond the common ones (the flow it is for; [`Packet::marks`]).
    Cnp,
    /// A scheme's own packet: see [`SchemeHdr`].
    Scheme(SchemeHdr),
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
    /// Scheme marks: set on a data packet, echoed by an ACK, NACK or CNP ([`Marks`]).
    pub marks: Marks,
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
            Header::Scheme(_) => PktKind::Scheme,
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

    /// A hop-by-hop frame with header `hdr` from `src` to the adjacent device `dst`, of
    /// `size` wire bytes, in the control class (common priority 0).
    #[inline]
    pub fn frame(src: u32, dst: u32, size: u32, hdr: Header) -> Packet {
        Packet {
            src,
            dst,
            size,
            prio: 0,
            hdr,
            ..Packet::default()
        }
    }

    /// A scheme frame that is consumed at the next device and never routed
    /// ([`SchemeHdr::hop_by_hop`]).
    #[inline]
    pub fn is_hop_by_hop(&self) -> bool {
        matches!(&self.hdr, Header::Scheme(s) if s.hop_by_hop)
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
            marks: Marks::NONE,
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
    /// The pacing gap a NIC leaves after a `size_bytes` frame of a QP sending at `rate_bps`,
    /// picoseconds: the frame's serialization time at that rate, computed as HPCC-sim does
    /// ([`crate::units::pace_time_ps_ns3`]: one nanosecond shorter than [`Self::ser_ps`] where
    /// `size·8/rate` is a whole number of nanoseconds whose `double` falls just below it, equal
    /// otherwise) with `Hpcc` framing, and as [`Self::ser_ps`] with `Ethernet`. At the line rate
    /// the gap never ends after the frame's own serialization, so it only matters for
    /// rate-limited QPs.
    #[inline]
    pub fn pace_ps(self, size_bytes: u32, rate_bps: u64) -> u64 {
        match self {
            Framing::Hpcc => crate::units::pace_time_ps_ns3(size_bytes as u64, rate_bps),
            Framing::Ethernet => self.ser_ps(size_bytes, rate_bps),
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
    /// A MAC control frame (an 802.3x / 802.1Qbb pause frame): HPCC-sim's 43 B (PPP 14 +
    /// IPv4 20 + pause header 9), or the 64 B minimum Ethernet frame with realistic framing.
    /// Schemes' hop-by-hop frames start from it.
    #[inline]
    pub fn mac_control(&self) -> u32 {
        match self.framing {
            Framing::Hpcc => 43,
            Framing::Ethernet => 64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header type as a scheme declares one: every field width, round-tripped.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Probe {
        a: u64,
        b: u32,
        c: u16,
        d: u8,
        e: bool,
    }

    impl WireHeader for Probe {
        const TAG: SchemeTag = SchemeTag { scheme: 7, kind: 2 };
        const HOP_BY_HOP: bool = true;
        fn encode(&self, w: &mut HdrWriter<'_>) {
            w.u64(self.a);
            w.u32(self.b);
            w.u16(self.c);
            w.u8(self.d);
            w.bool(self.e);
        }
        fn decode(r: &mut HdrReader<'_>) -> Self {
            Probe {
                a: r.get_u64(),
                b: r.get_u32(),
                c: r.get_u16(),
                d: r.get_u8(),
                e: r.get_bool(),
            }
        }
    }

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
        assert!(!p.is_hop_by_hop());
        let probe = Probe {
            a: u64::MAX - 3,
            b: 0xdead_beef,
            c: 65_000,
            d: 9,
            e: true,
        };
        p = Packet::frame(1, 2, 43, probe.header());
        assert_eq!(p.kind(), PktKind::Scheme);
        assert_eq!(p.int_n(), 0);
        assert!(p.is_hop_by_hop() && Probe::is(&p));
        assert_eq!(Probe::of(&p), Some(probe));
        Probe::update(&mut p, |h| h.d = 10);
        assert_eq!(Probe::of(&p).map(|h| (h.a, h.d)), Some((u64::MAX - 3, 10)));
        p.hdr = Header::Cnp;
        assert_eq!(Probe::of(&p), None);
    }

    #[test]
    fn marks_are_bits() {
        let (a, b) = (Marks::bit(0), Marks::bit(5));
        let mut m = Marks::NONE;
        assert!(m.is_empty());
        m.insert(b);
        assert!(m.any(b) && !m.any(a) && m.any(a.union(b)));
        assert_eq!(m.and(a.union(b)), b);
        m.remove(b);
        assert!(m.is_empty());
    }

    #[test]
    fn wire_sizes_hpcc_and_ethernet() {
        let h = WireSizes {
            framing: Framing::Hpcc,
            int_bytes: 42,
            irn_sack: true,
        };
        assert_eq!(h.data(1000), 1090);
        assert_eq!(h.ack(false), 88);
        assert_eq!(h.ack(true), 94);
        assert_eq!(h.mac_control(), 43);
        assert_eq!(h.cnp(), 60);
        let e = WireSizes {
            framing: Framing::Ethernet,
            int_bytes: 0,
            irn_sack: false,
        };
        assert_eq!(e.data(1000), 1062);
        assert_eq!(e.ack(true), 66);
        assert_eq!(e.mac_control(), 64);
        assert_eq!(e.cnp(), 66);
    }
}
