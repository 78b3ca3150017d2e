//! The arena that owns packets ([`crate::engine::packet`]).
//!
//! A packet lives in one arena slot from creation (at a NIC) until it is consumed (by the
//! receiving NIC) or dropped. Queues, events and links hold its `u32` slot index. Freed slots
//! are recycled LIFO, so after warm-up no packet causes a heap allocation.

use crate::engine::packet::{IntHop, MAX_INT_HOPS, Packet};

/// Words of a frame payload ([`PacketArena::payload_mut`]): 128 B.
pub const PAYLOAD_WORDS: usize = 16;

/// Slab of packets with a free list. INT records live in a parallel array, touched only when
/// INT is in use, so that the packets themselves stay small (≈ 64 B) and cache-friendly; each
/// slot has room for as many records as a path can have switches ([`Self::set_int_hops`]):
/// 3 × 24 B on a two-tier Clos instead of HPCC-sim's fixed 5, which keeps deep-buffer runs'
/// live packets 48 B smaller.
#[derive(Clone)]
pub struct PacketArena {
    slots: Vec<Packet>,
    /// `int_hops` records per slot, back to back.
    ints: Vec<IntHop>,
    /// INT records per slot (0 = INT unused).
    int_hops: usize,
    /// Payload words of scheme frames too large for a header (BFC's Bloom filter), indexed
    /// by slot; grown only when a scheme writes one, so other runs never allocate it.
    payloads: Vec<[u64; PAYLOAD_WORDS]>,
    free: Vec<u32>,
    live: usize,
    peak_live: usize,
    created: u64,
}

impl Default for PacketArena {
    fn default() -> Self {
        PacketArena {
            slots: Vec::new(),
            ints: Vec::new(),
            int_hops: MAX_INT_HOPS,
            payloads: Vec::new(),
            free: Vec::new(),
            live: 0,
            peak_live: 0,
            created: 0,
        }
    }
}

impl PacketArena {
    /// Empty arena with room for [`MAX_INT_HOPS`] INT records per packet.
    pub fn new() -> Self {
        Self::default()
    }

    /// INT records kept per packet: the most switches any packet crosses (at most
    /// [`MAX_INT_HOPS`], HPCC-sim's limit; 0 when INT is off). Call before the first packet.
    pub fn set_int_hops(&mut self, hops: usize) {
        assert!(
            self.slots.is_empty(),
            "set_int_hops after packets were allocated"
        );
        self.int_hops = hops.min(MAX_INT_HOPS);
    }

    /// INT records kept per packet ([`Self::set_int_hops`]).
    #[inline]
    pub fn int_hops(&self) -> usize {
        self.int_hops
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
            self.ints
                .resize(self.ints.len() + self.int_hops, IntHop::default());
            (self.slots.len() - 1) as u32
        }
    }

    /// Store `p`, a packet created in another arena and handed over (a run split over several
    /// arenas, [`crate::sim::parallel`]): alive here from now, not counted as created again.
    pub fn adopt(&mut self, p: Packet) -> u32 {
        let i = self.alloc(p);
        self.created -= 1;
        i
    }

    /// Count `n` packets created in other arenas of the same run (a run split over several
    /// arenas, merged for its outputs).
    pub fn count_created(&mut self, n: u64) {
        self.created += n;
    }

    /// Count `n` packets alive in other arenas of the same run (merged for its outputs).
    pub fn count_alive_elsewhere(&mut self, n: usize) {
        self.live += n;
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
        let n = self.int_hops;
        if n == 0 {
            return;
        }
        if let Some(r) = self.ints.get(i as usize * n) {
            // The slot's records span `n · 24` bytes: its first and last byte, and the line
            // between them when there are three.
            let line = r as *const _ as *const u8;
            let last = n * std::mem::size_of::<IntHop>() - 1;
            crate::engine::prefetch(line);
            crate::engine::prefetch(line.wrapping_add(last.min(64)));
            crate::engine::prefetch(line.wrapping_add(last));
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

    /// INT records of slot `i`, [`Self::int_hops`] of them (valid: the first `int_n` of the
    /// packet).
    #[inline]
    pub fn int(&self, i: u32) -> &[IntHop] {
        let at = i as usize * self.int_hops;
        &self.ints[at..at + self.int_hops]
    }

    /// Mutable INT records of slot `i`.
    #[inline]
    pub fn int_mut(&mut self, i: u32) -> &mut [IntHop] {
        let at = i as usize * self.int_hops;
        &mut self.ints[at..at + self.int_hops]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_records_per_slot_follow_the_configured_hops() {
        let mut a = PacketArena::new();
        assert_eq!(a.int_hops(), MAX_INT_HOPS);
        a.set_int_hops(3);
        let (p, q) = (a.alloc(Packet::default()), a.alloc(Packet::default()));
        assert_eq!((a.int(p).len(), a.int(q).len()), (3, 3));
        // Writing one slot's last record leaves its neighbour's first untouched.
        a.int_mut(p)[2].ts_ps = 7;
        a.int_mut(q)[0].ts_ps = 9;
        assert_eq!((a.int(p)[2].ts_ps, a.int(q)[0].ts_ps), (7, 9));
        assert_eq!(a.int(p)[..2], [IntHop::default(); 2]);
        // A recycled slot keeps its place; more than HPCC-sim's 5 is capped; none without INT.
        a.free(p);
        assert_eq!(a.alloc(Packet::default()), p);
        let mut b = PacketArena::new();
        b.set_int_hops(9);
        assert_eq!(b.int_hops(), MAX_INT_HOPS);
        let mut c = PacketArena::new();
        c.set_int_hops(0);
        let r = c.alloc(Packet::default());
        assert!(c.int(r).is_empty());
        c.prefetch_int(r);
    }
}
