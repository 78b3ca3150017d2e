//! The arena that owns packets ([`crate::engine::packet`]).
//!
//! A packet lives in one arena slot from creation (at a NIC) until it is consumed (by the
//! receiving NIC) or dropped. Queues, events and links hold its `u32` slot index. Freed slots
//! are recycled LIFO, so after warm-up no packet causes a heap allocation.

use crate::engine::packet::{IntHop, MAX_INT_HOPS, Packet};

/// Words of a frame payload ([`PacketArena::payload_mut`]): 128 B.
pub const PAYLOAD_WORDS: usize = 16;

/// Slab of packets with a free list. INT records live in a parallel array, touched only when
/// INT is in use, so that the packets themselves stay small (≈ 64 B) and cache-friendly.
#[derive(Default)]
pub struct PacketArena {
    slots: Vec<Packet>,
    ints: Vec<[IntHop; MAX_INT_HOPS]>,
    /// Payload words of scheme frames too large for a header (BFC's Bloom filter), indexed
    /// by slot; grown only when a scheme writes one, so other runs never allocate it.
    payloads: Vec<[u64; PAYLOAD_WORDS]>,
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

    /// With no packet alive (the end of a run): free the slots, keeping the counters. Slots
    /// are allocated again if packets are created later.
    pub fn release_memory(&mut self) {
        if self.live == 0 {
            self.slots = Vec::new();
            self.ints = Vec::new();
            self.payloads = Vec::new();
            self.free = Vec::new();
        }
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

    /// Payload of slot `i` (BFC pause frames), if a scheme ever wrote one there. Only
    /// meaningful for a packet kind that carries a payload: the words are not cleared when the
    /// slot is reused.
    #[inline]
    pub fn payload(&self, i: u32) -> Option<&[u64; PAYLOAD_WORDS]> {
        self.payloads.get(i as usize)
    }

    /// Mutable payload of slot `i`, allocated (zeroed) on first use.
    pub fn payload_mut(&mut self, i: u32) -> &mut [u64; PAYLOAD_WORDS] {
        let i = i as usize;
        if self.payloads.len() <= i {
            self.payloads
                .resize(i.max(self.slots.len()) + 1, [0; PAYLOAD_WORDS]);
        }
        &mut self.payloads[i]
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
