//! Packets and the arena that owns them.
//!
//! A packet lives in one arena slot from creation (at a NIC) until it is consumed (by the
//! receiving NIC) or dropped. Queues, events and links hold its `u32` slot index. Freed slots
//! are recycled LIFO, so after warm-up no packet causes a heap allocation.

/// What a packet is.
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

/// A packet. Sequence numbers are payload-byte offsets within the message. 56 B of fields,
/// aligned to one 64 B cache line.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
pub struct Packet {
    /// Kind.
    pub kind: PktKind,
    /// Priority / egress queue index at switches.
    pub prio: u8,
    /// ECN: true when Congestion Experienced was set by a switch.
    pub ce: bool,
    /// Data: this is a retransmission. ACK/NACK: echo of the data packet's CE mark.
    pub flag: bool,
    /// Number of valid INT hop records.
    pub int_n: u8,
    /// Port the packet arrived on at the current node (set on arrival).
    pub in_port: u16,
    /// Flow (QP) index this packet belongs to.
    pub flow: u32,
    /// Source host node id (routing uses `dst`).
    pub src: u32,
    /// Destination node id.
    pub dst: u32,
    /// UDP source port (part of the ECMP 5-tuple).
    pub sport: u16,
    /// UDP destination port.
    pub dport: u16,
    /// Data: first payload byte. ACK/NACK: cumulative ACK (next expected byte).
    pub seq: u64,
    /// Data: payload bytes. NACK (IRN): SACKed block length. PFC: pause bitmap of priorities.
    pub payload: u32,
    /// Bytes on the wire that occupy buffers (headers + payload, framing-dependent).
    pub size: u32,
    /// Data: time the NIC sent it. ACK/NACK: echo of the data's send time. PFC/BTS: pause
    /// duration, picoseconds (0 = resume).
    pub ts_ps: u64,
    /// NACK (IRN): start of the SACKed block.
    pub sack_seq: u64,
    /// ACK/NACK: arrival time of the acknowledged data packet at the receiver (one-way delay
    /// = this − `ts_ps`, for OnRamp).
    pub aux_ps: u64,
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
            kind: p.kind,
            prio: p.prio,
            src: p.src,
            dst: p.dst,
            sport: p.sport,
            dport: p.dport,
            size: p.size,
        }
    }
}

/// Slab of packets with a free list. INT records live in a parallel array, touched only when
/// INT is in use, so that the packets themselves stay small (≈ 64 B) and cache-friendly.
#[derive(Default)]
pub struct PacketArena {
    slots: Vec<Packet>,
    ints: Vec<[IntHop; MAX_INT_HOPS]>,
    free: Vec<u32>,
    live: usize,
    peak_live: usize,
    created: u64,
}

impl PacketArena {
    /// Empty arena.
    pub fn new() -> Self {
        Self::default()
    }

    /// Store `p`, returning its slot.
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> u32 {
        self.live += 1;
        self.created += 1;
        if self.live > self.peak_live {
            self.peak_live = self.live;
        }
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = p;
            i
        } else {
            self.slots.push(p);
            self.ints.push([IntHop::default(); MAX_INT_HOPS]);
            (self.slots.len() - 1) as u32
        }
    }

    /// Count slot `i` as consumed and immediately re-created in place (a data packet turned
    /// into its ACK at the receiver).
    #[inline]
    pub fn reuse(&mut self, _i: u32) {
        self.created += 1;
    }

    /// Release slot `i`.
    #[inline]
    pub fn free(&mut self, i: u32) {
        self.live -= 1;
        self.free.push(i);
    }

    /// Packet in slot `i`.
    #[inline]
    pub fn get(&self, i: u32) -> &Packet {
        &self.slots[i as usize]
    }

    /// Hint the CPU to bring slot `i` into cache (no effect on behaviour; out-of-range
    /// slots are ignored).
    #[inline]
    pub fn prefetch(&self, i: u32) {
        if let Some(p) = self.slots.get(i as usize) {
            crate::engine::prefetch(p as *const Packet);
        }
    }

    /// Hint the CPU to bring slot `i`'s INT records into cache (see [`Self::prefetch`]).
    #[inline]
    pub fn prefetch_int(&self, i: u32) {
        if let Some(r) = self.ints.get(i as usize) {
            let line = r as *const _ as *const u8;
            crate::engine::prefetch(line);
            crate::engine::prefetch(line.wrapping_add(64));
            crate::engine::prefetch(line.wrapping_add(119));
        }
    }

    /// Packet in slot `i`, or `None` past the end of the arena (for prefetching code that
    /// must never fail).
    #[inline]
    pub fn try_get(&self, i: u32) -> Option<&Packet> {
        self.slots.get(i as usize)
    }

    /// Mutable packet in slot `i`.
    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut Packet {
        &mut self.slots[i as usize]
    }

    /// INT records of slot `i` (valid: the first `int_n` of the packet).
    #[inline]
    pub fn int(&self, i: u32) -> &[IntHop; MAX_INT_HOPS] {
        &self.ints[i as usize]
    }

    /// Mutable INT records of slot `i`.
    #[inline]
    pub fn int_mut(&mut self, i: u32) -> &mut [IntHop; MAX_INT_HOPS] {
        &mut self.ints[i as usize]
    }

    /// Packets currently alive (queued or on a wire).
    pub fn live(&self) -> usize {
        self.live
    }

    /// Highest number of simultaneously live packets.
    pub fn peak_live(&self) -> usize {
        self.peak_live
    }

    /// Packets ever created.
    pub fn created(&self) -> u64 {
        self.created
    }
}
