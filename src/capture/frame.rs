//! A simulated packet as the Ethernet frame a real RoCEv2 fabric would carry, for
//! [`super::Capture`].
//!
//! - **Data**: Ethernet II / IPv4 (DSCP = the packet's priority; ECN = ECT(0), or CE when a
//!   switch marked it) / UDP (destination port 4791, checksum 0 as RoCEv2 allows over IPv4) /
//!   InfiniBand BTH (RC RDMA WRITE First/Middle/Last/Only by the segment's place in its
//!   message; destination QP = [`qpn`] of the flow id; PSN = the segment's index, `seq / mtu`; AckReq set;
//!   pad count to 4 bytes) / RETH on First and Only (DMA length = the message size) / the
//!   payload (zeros) / ICRC (zeros: not computed).
//! - **ACK / NACK**: BTH opcode RC ACKNOWLEDGE with AETH: syndrome ACK (credits "invalid",
//!   `0x1F`) with PSN = the last in-order segment, or NAK "PSN sequence error" (`0x60`) with
//!   PSN = the expected segment; BECN set when the ACK echoes CE.
//! - **CNP**: BTH opcode `0x81` (RoCEv2 CNP) with BECN set, 16 reserved bytes.
//! - **INT** (HPCC): a data packet, ACK or NACK carrying INT hop records has the HPCC INT
//!   header between UDP and BTH, and UDP destination port [`ROCEV2_INT_PORT`] (4792) instead
//!   of 4791, which tells decoders that the header is there (Wireshark without the shipped
//!   dissector shows such a frame as UDP data; with it, as the INT header followed by the
//!   RoCEv2 packet). The header is HPCC-sim's `IntHeader`: [`INT_SLOTS`] 8-byte hop words,
//!   unused ones zero, then the number of hops (16 bits); each word ([`int_hop_word`],
//!   big-endian) packs, from its least significant bit, the line-rate code (3 bits: 25, 50,
//!   100, 200, 400, 10 Gb/s = 0..5, 7 for another rate), the dequeue time (24 bits, ns modulo
//!   2²⁴), the bytes the port had sent (20 bits, units of 128 B, modulo 2²⁰) and the queue
//!   length (17 bits, units of 80 B, modulo 2¹⁷) — HPCC-sim's field widths and units.
//! - **PFC PAUSE / RESUME**: an IEEE 802.1Qbb MAC control frame (destination
//!   01:80:C2:00:00:01, EtherType 0x8808, opcode 0x0101, class-enable vector, eight 16-bit
//!   quanta of 512 bit times at the link's rate, rounded up and capped at 0xFFFF; RESUME = 0
//!   quanta), padded to the 60-byte minimum (the FCS is not captured).
//! - **Every other scheme packet** (SFC's BTS, BFC's pause frames, PB-FS's packets, NDP's
//!   control packets, CBFC credits, …): EtherType 0x88B5 (IEEE "local experimental") with
//!   sfc's own header, decoded by the Wireshark dissector `tools/wireshark/sfc.lua`:
//!   version (1), scheme id, kind, flags (bit 0: hop-by-hop), source node, destination node,
//!   flow, source port, destination port, priority, marks (all big-endian), 2 reserved bytes,
//!   then the scheme's 32-byte header body as the scheme encodes it (little-endian fields).
//!
//! Addresses: node `n` has MAC 02:53:46:nn:nn:nn (locally administered) and IPv4
//! 10.nn.nn.nn (its low 24 bits); a frame's Ethernet source is the transmitting node, its
//! destination the receiving one (the next hop). What the wire frame cannot carry — the
//! packet's size in the simulation (its framing convention), scheme marks, the INT records
//! at full resolution, an IRN NACK's SACK block, a retransmission — goes into the packet's
//! pcapng comment.

use crate::engine::packet::{Header, IntHop, MAX_INT_HOPS, Packet, WireHeader};
use crate::scheme::pause::PfcHdr;

/// UDP destination port of RoCEv2.
pub const ROCEV2_PORT: u16 = 4791;
/// UDP destination port of a RoCEv2 frame with an HPCC INT header before its BTH.
pub const ROCEV2_INT_PORT: u16 = 4792;
/// Hop words of the INT header (HPCC-sim's `IntHeader::maxHop`).
pub const INT_SLOTS: usize = MAX_INT_HOPS;
/// Bytes of the INT header: the hop words and the 16-bit hop count.
pub const INT_HEADER_BYTES: usize = 8 * INT_SLOTS + 2;
/// Line rates of the INT hop word's 3-bit rate code, bits per second (HPCC-sim's
/// `IntHop::lineRateValues`); code 7 stands for any other rate.
pub const INT_LINE_RATES_BPS: [u64; 6] = [
    25_000_000_000,
    50_000_000_000,
    100_000_000_000,
    200_000_000_000,
    400_000_000_000,
    10_000_000_000,
];

/// The 64-bit INT hop word of `h` (see the module docs): rate code in bits 0–2, time (ns,
/// modulo 2²⁴) in bits 3–26, tx bytes (÷ 128, modulo 2²⁰) in bits 27–46, queue length
/// (÷ 80, modulo 2¹⁷) in bits 47–63.
pub fn int_hop_word(h: &IntHop) -> u64 {
    let rate_bps = u64::from(h.rate_mbps) * 1_000_000;
    let code = INT_LINE_RATES_BPS
        .iter()
        .position(|&r| r == rate_bps)
        .map_or(7, |i| i as u64);
    let time = (h.ts_ps / 1000) & 0xFF_FFFF;
    let bytes = (h.tx_bytes / 128) & 0xF_FFFF;
    let qlen = (u64::from(h.qlen_bytes) / 80) & 0x1_FFFF;
    code | (time << 3) | (bytes << 27) | (qlen << 47)
}
/// EtherType of sfc's own scheme-packet header (IEEE 802 "local experimental ethertype 1").
pub const ETHERTYPE_SFC: u16 = 0x88B5;
/// Version of sfc's own scheme-packet header.
pub const SFC_HDR_VERSION: u8 = 1;

/// RC opcodes (InfiniBand Architecture Specification, Table 38) and the RoCEv2 CNP.
mod opcode {
    pub const WRITE_FIRST: u8 = 0x06;
    pub const WRITE_MIDDLE: u8 = 0x07;
    pub const WRITE_LAST: u8 = 0x08;
    pub const WRITE_ONLY: u8 = 0x0A;
    pub const ACKNOWLEDGE: u8 = 0x11;
    pub const CNP: u8 = 0x81;
}

/// AETH syndromes: ACK with an invalid credit count, NAK "PSN sequence error".
const AETH_ACK: u8 = 0x1F;
const AETH_NAK_SEQ: u8 = 0x60;

/// What a frame's encoding needs beyond the packet.
#[derive(Clone, Copy, Debug)]
pub struct FrameCtx<'a> {
    /// The node transmitting the frame (Ethernet source).
    pub tx_node: u32,
    /// The node receiving it (Ethernet destination).
    pub rx_node: u32,
    /// MTU payload per data packet, bytes (the PSN of a segment is `seq / mtu_bytes`).
    pub mtu_bytes: u32,
    /// The message size of the packet's flow, bytes, if known (RDMA WRITE First/Last/Only
    /// and the RETH's DMA length; without it every segment is a Middle but the first).
    pub flow_size_bytes: Option<u64>,
    /// The link's rate, bits per second (PFC quanta).
    pub link_rate_bps: u64,
    /// The packet's INT hop records (its first `int_n`; empty without INT).
    pub int: &'a [IntHop],
}

/// The MAC address of node `n`.
pub fn mac(n: u32) -> [u8; 6] {
    [0x02, 0x53, 0x46, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

/// The IPv4 address of node `n`.
pub fn ipv4(n: u32) -> [u8; 4] {
    [10, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

/// The queue pair number of flow `flow`: `flow + 2` modulo 2²⁴, skipping 0 and 1 (QP 0 and
/// QP 1 are InfiniBand's management QPs, whose packets Wireshark decodes as MADs).
pub fn qpn(flow: u32) -> u32 {
    let q = flow.wrapping_add(2) & 0x00FF_FFFF;
    if q < 2 { q + 2 } else { q }
}

/// The segment index (PSN) of byte `seq`, 24 bits.
fn psn(seq: u64, mtu: u32) -> u32 {
    (seq / mtu.max(1) as u64) as u32 & 0x00FF_FFFF
}

/// Write `pkt` as a frame into `out` (cleared first): the whole frame, without FCS.
pub fn encode(pkt: &Packet, ctx: &FrameCtx, out: &mut Vec<u8>) {
    out.clear();
    match &pkt.hdr {
        Header::Data(d) => {
            let (op, reth) = write_opcode(d.seq, d.payload, ctx.flow_size_bytes);
            let pad = (4 - d.payload % 4) % 4;
            let ecn = if d.ce { 0b11 } else { 0b10 };
            let ib = 12 + if reth { 16 } else { 0 } + d.payload as usize + pad as usize + 4;
            roce_headers(pkt, ctx, ecn, ib, true, out);
            bth(
                out,
                op,
                pad as u8,
                false,
                pkt.flow,
                true,
                psn(d.seq, ctx.mtu_bytes),
            );
            if reth {
                out.extend_from_slice(&0u64.to_be_bytes()); // virtual address
                out.extend_from_slice(&0u32.to_be_bytes()); // R_Key
                let len = ctx.flow_size_bytes.unwrap_or(0).min(u32::MAX as u64) as u32;
                out.extend_from_slice(&len.to_be_bytes()); // DMA length
            }
            out.resize(out.len() + d.payload as usize + pad as usize + 4, 0); // payload, ICRC
        }
        Header::Ack(a) | Header::Nack(a) => {
            let nack = matches!(pkt.hdr, Header::Nack(_));
            roce_headers(pkt, ctx, 0, 12 + 4 + 4, true, out);
            let mtu = ctx.mtu_bytes.max(1) as u64;
            let (syndrome, p) = if nack {
                (AETH_NAK_SEQ, psn(a.ack_seq, ctx.mtu_bytes))
            } else {
                // The last segment received in order: ceil(ack_seq / mtu) − 1.
                (
                    AETH_ACK,
                    (a.ack_seq.div_ceil(mtu) as u32).wrapping_sub(1) & 0x00FF_FFFF,
                )
            };
            bth(out, opcode::ACKNOWLEDGE, 0, a.ce_echo, pkt.flow, false, p);
            out.push(syndrome);
            let done = ctx.flow_size_bytes.is_some_and(|s| a.ack_seq >= s);
            out.extend_from_slice(&[0, 0, done as u8]); // MSN: messages completed
            out.extend_from_slice(&[0; 4]); // ICRC
        }
        Header::Cnp => {
            roce_headers(pkt, ctx, 0, 12 + 16 + 4, false, out);
            bth(out, opcode::CNP, 0, true, pkt.flow, false, 0);
            out.extend_from_slice(&[0; 16 + 4]); // reserved, ICRC
        }
        Header::Scheme(_) => match PfcHdr::of(pkt) {
            Some(p) => pfc_frame(&p, ctx, out),
            None => scheme_frame(pkt, ctx, out),
        },
    }
}

/// The RDMA WRITE opcode of the segment at `seq` with `payload` bytes of a message of
/// `size` bytes, and whether it carries a RETH.
fn write_opcode(seq: u64, payload: u32, size: Option<u64>) -> (u8, bool) {
    let first = seq == 0;
    let last = size.is_some_and(|s| seq + payload as u64 >= s);
    match (first, last) {
        (true, true) => (opcode::WRITE_ONLY, true),
        (true, false) => (opcode::WRITE_FIRST, true),
        (false, true) => (opcode::WRITE_LAST, false),
        (false, false) => (opcode::WRITE_MIDDLE, false),
    }
}

/// Ethernet, IPv4 and UDP headers of a RoCEv2 packet whose InfiniBand part (BTH onward,
/// ICRC included) is `ib_len` bytes, and the INT header when `with_int` and the packet has
/// INT records.
fn roce_headers(
    pkt: &Packet,
    ctx: &FrameCtx,
    ecn: u8,
    ib_len: usize,
    with_int: bool,
    out: &mut Vec<u8>,
) {
    let int = if with_int { ctx.int } else { &[] };
    let ib_len = ib_len + if int.is_empty() { 0 } else { INT_HEADER_BYTES };
    out.extend_from_slice(&mac(ctx.rx_node));
    out.extend_from_slice(&mac(ctx.tx_node));
    out.extend_from_slice(&0x0800u16.to_be_bytes());
    let total = (20 + 8 + ib_len) as u16;
    let ip_at = out.len();
    out.push(0x45);
    out.push(((pkt.prio & 0x3F) << 2) | ecn);
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&[0, 0, 0x40, 0]); // id 0, DF
    out.push(64); // TTL
    out.push(17); // UDP
    out.extend_from_slice(&[0, 0]); // checksum, below
    out.extend_from_slice(&ipv4(pkt.src));
    out.extend_from_slice(&ipv4(pkt.dst));
    let sum = ipv4_checksum(&out[ip_at..ip_at + 20]);
    out[ip_at + 10..ip_at + 12].copy_from_slice(&sum.to_be_bytes());
    out.extend_from_slice(&pkt.sport.to_be_bytes());
    let port = if int.is_empty() {
        ROCEV2_PORT
    } else {
        ROCEV2_INT_PORT
    };
    out.extend_from_slice(&port.to_be_bytes());
    out.extend_from_slice(&((8 + ib_len) as u16).to_be_bytes());
    out.extend_from_slice(&[0, 0]); // UDP checksum: none
    if !int.is_empty() {
        for k in 0..INT_SLOTS {
            let w = int.get(k).map_or(0, int_hop_word);
            out.extend_from_slice(&w.to_be_bytes());
        }
        out.extend_from_slice(&(int.len().min(INT_SLOTS) as u16).to_be_bytes());
    }
}

/// The Internet checksum of an IPv4 header.
pub fn ipv4_checksum(h: &[u8]) -> u16 {
    let mut s: u32 = 0;
    for w in h.chunks(2) {
        s += u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)]) as u32;
    }
    while s > 0xFFFF {
        s = (s & 0xFFFF) + (s >> 16);
    }
    !(s as u16)
}

/// An InfiniBand Base Transport Header.
fn bth(out: &mut Vec<u8>, op: u8, pad: u8, becn: bool, qp: u32, ack_req: bool, psn: u32) {
    out.push(op);
    out.push((pad & 3) << 4); // SE 0, MigReq 0, pad count, TVer 0
    out.extend_from_slice(&0xFFFFu16.to_be_bytes()); // default P_Key
    out.push(if becn { 0x40 } else { 0 }); // FECN 0, BECN
    out.extend_from_slice(&qpn(qp).to_be_bytes()[1..]);
    out.push(if ack_req { 0x80 } else { 0 });
    out.extend_from_slice(&psn.to_be_bytes()[1..]);
}

/// Pause quanta (512 bit times at `rate_bps`) of a pause of `pause_ps`, rounded up.
pub fn pfc_quanta(pause_ps: u64, rate_bps: u64) -> u16 {
    if pause_ps == 0 {
        return 0;
    }
    // One quantum = 512 bits / rate = 512·10¹² / rate picoseconds.
    let quantum_ps = (512u128 * 1_000_000_000_000 / rate_bps.max(1) as u128).max(1);
    (pause_ps as u128).div_ceil(quantum_ps).min(0xFFFF) as u16
}

/// An 802.1Qbb PFC frame.
fn pfc_frame(p: &PfcHdr, ctx: &FrameCtx, out: &mut Vec<u8>) {
    out.extend_from_slice(&[0x01, 0x80, 0xC2, 0x00, 0x00, 0x01]);
    out.extend_from_slice(&mac(ctx.tx_node));
    out.extend_from_slice(&0x8808u16.to_be_bytes());
    out.extend_from_slice(&0x0101u16.to_be_bytes());
    let class = p.prio % 8;
    out.extend_from_slice(&(1u16 << class).to_be_bytes());
    let q = pfc_quanta(p.pause_ps, ctx.link_rate_bps);
    for c in 0..8 {
        out.extend_from_slice(&(if c == class { q } else { 0 }).to_be_bytes());
    }
    out.resize(60, 0);
}

/// Any other scheme packet, in sfc's own header.
fn scheme_frame(pkt: &Packet, ctx: &FrameCtx, out: &mut Vec<u8>) {
    let Header::Scheme(s) = &pkt.hdr else {
        return;
    };
    out.extend_from_slice(&mac(ctx.rx_node));
    out.extend_from_slice(&mac(ctx.tx_node));
    out.extend_from_slice(&ETHERTYPE_SFC.to_be_bytes());
    out.push(SFC_HDR_VERSION);
    out.push(s.tag.scheme);
    out.push(s.tag.kind);
    out.push(s.hop_by_hop as u8);
    out.extend_from_slice(&pkt.src.to_be_bytes());
    out.extend_from_slice(&pkt.dst.to_be_bytes());
    out.extend_from_slice(&pkt.flow.to_be_bytes());
    out.extend_from_slice(&pkt.sport.to_be_bytes());
    out.extend_from_slice(&pkt.dport.to_be_bytes());
    out.push(pkt.prio);
    out.push(pkt.marks.0);
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&s.body);
    if out.len() < 60 {
        out.resize(60, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::packet::{AckHdr, DataHdr};

    fn ctx(size: Option<u64>) -> FrameCtx<'static> {
        FrameCtx {
            tx_node: 3,
            rx_node: 0x010203,
            mtu_bytes: 1000,
            flow_size_bytes: size,
            link_rate_bps: 100_000_000_000,
            int: &[],
        }
    }

    fn data(seq: u64, payload: u32, ce: bool) -> Packet {
        Packet {
            src: 3,
            dst: 9,
            flow: 0x0A0B0C,
            sport: 49152,
            dport: 100,
            prio: 3,
            hdr: Header::Data(DataHdr {
                seq,
                payload,
                ce,
                ..DataHdr::default()
            }),
            ..Packet::default()
        }
    }

    /// A 1,000-byte middle segment: 14 + 20 + 8 + 12 + 1,000 + 4 bytes; the IP header's
    /// checksum verifies; ECN and DSCP, UDP port 4791, the BTH's opcode, QP and PSN as
    /// derived from the segment.
    #[test]
    fn a_data_segment_is_a_rocev2_write_with_its_psn() {
        let mut b = Vec::new();
        encode(&data(5000, 1000, true), &ctx(Some(10_000)), &mut b);
        assert_eq!(b.len(), 14 + 20 + 8 + 12 + 1000 + 4);
        assert_eq!(&b[0..6], &[0x02, 0x53, 0x46, 1, 2, 3]);
        assert_eq!(&b[12..14], &[0x08, 0x00]);
        assert_eq!(ipv4_checksum(&b[14..34]), 0, "a valid header sums to 0");
        assert_eq!(b[15], (3 << 2) | 0b11, "DSCP 3, CE");
        assert_eq!(u16::from_be_bytes([b[16], b[17]]) as usize, b.len() - 14);
        assert_eq!(&b[26..30], &[10, 0, 0, 3]);
        assert_eq!(u16::from_be_bytes([b[36], b[37]]), ROCEV2_PORT);
        let bth = &b[42..54];
        assert_eq!(bth[0], opcode::WRITE_MIDDLE);
        assert_eq!(&bth[5..8], &[0x0A, 0x0B, 0x0E], "destination QP = flow + 2");
        assert_eq!(bth[8], 0x80, "AckReq");
        assert_eq!(&bth[9..12], &[0, 0, 5], "PSN = 5000 / 1000");
    }

    /// First (with RETH: DMA length = message size), Last, Only; a 3-byte payload is padded
    /// to 4 and the pad count says 1.
    #[test]
    fn first_last_and_only_segments() {
        let mut b = Vec::new();
        encode(&data(0, 1000, false), &ctx(Some(2500)), &mut b);
        assert_eq!(b[42], opcode::WRITE_FIRST);
        assert_eq!(b[15] & 3, 0b10, "ECT(0)");
        assert_eq!(
            &b[54 + 12..54 + 16],
            &2500u32.to_be_bytes(),
            "RETH DMA length"
        );
        assert_eq!(b.len(), 14 + 20 + 8 + 12 + 16 + 1000 + 4);
        encode(&data(2000, 500, false), &ctx(Some(2500)), &mut b);
        assert_eq!(b[42], opcode::WRITE_LAST);
        encode(&data(0, 3, false), &ctx(Some(3)), &mut b);
        assert_eq!(b[42], opcode::WRITE_ONLY);
        assert_eq!(b[43] >> 4, 1, "pad count");
        assert_eq!(b.len(), 14 + 20 + 8 + 12 + 16 + 4 + 4);
    }

    /// An ACK of 3,000 bytes acknowledges PSN 2 (the third segment); a NACK at 3,000 asks for
    /// PSN 3; CE echo is BECN.
    #[test]
    fn acks_and_nacks_carry_aeth() {
        let ack = |nack: bool| Packet {
            src: 9,
            dst: 3,
            flow: 7,
            hdr: {
                let a = AckHdr {
                    ack_seq: 3000,
                    ce_echo: true,
                    ..AckHdr::default()
                };
                if nack {
                    Header::Nack(a)
                } else {
                    Header::Ack(a)
                }
            },
            ..Packet::default()
        };
        let mut b = Vec::new();
        encode(&ack(false), &ctx(Some(3000)), &mut b);
        assert_eq!(b.len(), 14 + 20 + 8 + 12 + 4 + 4);
        assert_eq!(b[42], opcode::ACKNOWLEDGE);
        assert_eq!(b[46], 0x40, "BECN");
        assert_eq!(&b[51..54], &[0, 0, 2]);
        assert_eq!(b[54], AETH_ACK);
        assert_eq!(b[57], 1, "message complete");
        encode(&ack(true), &ctx(Some(9000)), &mut b);
        assert_eq!(&b[51..54], &[0, 0, 3]);
        assert_eq!(b[54], AETH_NAK_SEQ);
    }

    /// A data segment with two INT hops: UDP port 4792, the 42-byte INT header between UDP
    /// and BTH (two hop words, three zero words, hop count 2), lengths grown by 42; the hop
    /// word packs rate code, time, tx bytes and queue length at HPCC-sim's widths and units.
    #[test]
    fn int_records_are_an_hpcc_int_header_before_the_bth() {
        let hops = [
            IntHop {
                ts_ps: 12_345_678,
                tx_bytes: 1_000_000,
                qlen_bytes: 8_000,
                rate_mbps: 100_000,
            },
            IntHop {
                ts_ps: (1 << 24) * 1000 + 7_000,
                tx_bytes: 128 << 20,
                qlen_bytes: 79,
                rate_mbps: 40_000,
            },
        ];
        let w0 = int_hop_word(&hops[0]);
        assert_eq!(w0 & 7, 2, "100 Gb/s");
        assert_eq!((w0 >> 3) & 0xFF_FFFF, 12_345);
        assert_eq!((w0 >> 27) & 0xF_FFFF, 1_000_000 / 128);
        assert_eq!(w0 >> 47, 100);
        let w1 = int_hop_word(&hops[1]);
        assert_eq!(w1 & 7, 7, "40 Gb/s: no code");
        assert_eq!((w1 >> 3) & 0xFF_FFFF, 7, "time modulo 2^24 ns");
        assert_eq!((w1 >> 27) & 0xF_FFFF, 0, "bytes modulo 2^20 units");
        assert_eq!(w1 >> 47, 0);
        let mut c = ctx(Some(10_000));
        c.int = &hops;
        let mut b = Vec::new();
        encode(&data(5000, 1000, false), &c, &mut b);
        assert_eq!(b.len(), 14 + 20 + 8 + INT_HEADER_BYTES + 12 + 1000 + 4);
        assert_eq!(ipv4_checksum(&b[14..34]), 0);
        assert_eq!(u16::from_be_bytes([b[16], b[17]]) as usize, b.len() - 14);
        assert_eq!(u16::from_be_bytes([b[36], b[37]]), ROCEV2_INT_PORT);
        assert_eq!(u16::from_be_bytes([b[38], b[39]]) as usize, b.len() - 34);
        let int = &b[42..42 + INT_HEADER_BYTES];
        assert_eq!(&int[0..8], &w0.to_be_bytes());
        assert_eq!(&int[8..16], &w1.to_be_bytes());
        assert!(int[16..40].iter().all(|&x| x == 0));
        assert_eq!(&int[40..42], &[0, 2]);
        assert_eq!(b[42 + INT_HEADER_BYTES], opcode::WRITE_MIDDLE);
        // Without records: plain RoCEv2.
        encode(&data(5000, 1000, false), &ctx(Some(10_000)), &mut b);
        assert_eq!(u16::from_be_bytes([b[36], b[37]]), ROCEV2_PORT);
    }

    /// 512 bit times at 100 Gb/s = 5.12 ns: a 10 µs pause is ceil(10,000 / 5.12) = 1,954
    /// quanta; an until-RESUME pause caps at 0xFFFF; RESUME is 0.
    #[test]
    fn pfc_frames_are_8021qbb() {
        assert_eq!(pfc_quanta(10_000_000, 100_000_000_000), 1954);
        assert_eq!(pfc_quanta(u64::MAX, 100_000_000_000), 0xFFFF);
        assert_eq!(pfc_quanta(0, 100_000_000_000), 0);
        let pkt = crate::scheme::pause::pfc_frame(3, 4, 64, 3, 10_000_000);
        let mut b = Vec::new();
        encode(&pkt, &ctx(None), &mut b);
        assert_eq!(b.len(), 60);
        assert_eq!(&b[0..6], &[0x01, 0x80, 0xC2, 0, 0, 1]);
        assert_eq!(&b[12..16], &[0x88, 0x08, 0x01, 0x01]);
        assert_eq!(&b[16..18], &[0, 0b1000], "class-enable vector: priority 3");
        assert_eq!(&b[18 + 6..18 + 8], &1954u16.to_be_bytes());
    }
}
