//! The wide queue set of BFC's Ideal-FQ mode: up to [`MAX_FQ_QUEUES`] per-flow FIFO queues of
//! one egress port, served by the same deficit round robin (or round robin) as a port's data
//! queues ([`crate::switch::EgressPort::select`]).
//!
//! A switch egress port keeps its queue sets in 64-bit masks, so it holds at most 64 queues.
//! A port of an Ideal-FQ switch with more physical queues than fit there
//! ([`super::BfcConfig::wide`]) keeps them here instead, in the BFC scheme's own per-port
//! state; the port itself has the usual control and high-priority queues plus one data queue,
//! the *FQ queue*, which holds the bytes of every packet of the set (so the port's backlog,
//! INT and the queue monitor see them all) but at most one packet slot: the one the scheduler
//! of the set serves next, *staged* there. The port's scheduler serves the FQ queue like any
//! data queue; when it takes the staged packet, the BFC dequeue hook commits the choice and
//! stages the next one.
//!
//! The choice is made ahead of time but stays tentative: the scheduler state it changes is
//! logged, and when a queue of the set turns non-empty before the staged packet leaves (a
//! packet the port's scheduler would have seen, had it chosen then), the choice is undone and
//! made again. The packet that leaves is thus always the one the round robin picks at the
//! moment the port takes it, as in a port with that many queues.
//!
//! Cost: the set is a two-level bitmap (a word of non-empty words over up to 64 words of
//! queue bits), so finding the next non-empty queue takes two `trailing_zeros`; each queue
//! costs [`FqPort::BYTES_PER_QUEUE`] bytes plus its packet slots. Ports of every other
//! scheme and every other BFC mode never touch this module.

use std::collections::VecDeque;

use crate::config::SchedulerKind;

/// Most queues a wide queue set holds (64 words of 64 bits).
pub const MAX_FQ_QUEUES: usize = 64 * 64;

/// A set of queue indices `0..n` (`n` ≤ [`MAX_FQ_QUEUES`]) as a two-level bitmap: bit `i` of
/// word `i / 64`, and bit `w` of `top` set iff word `w` is not zero.
#[derive(Clone, Debug, Default)]
pub struct QueueSet {
    top: u64,
    words: Vec<u64>,
    count: u32,
}

impl QueueSet {
    /// The empty set over `0..n`.
    pub fn new(n: usize) -> Self {
        assert!(n <= MAX_FQ_QUEUES, "at most {MAX_FQ_QUEUES} queues");
        QueueSet {
            top: 0,
            words: vec![0; n.div_ceil(64)],
            count: 0,
        }
    }

    /// Members.
    #[inline]
    pub fn len(&self) -> u32 {
        self.count
    }

    /// No member?
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.top == 0
    }

    /// Is `i` a member?
    #[inline]
    pub fn contains(&self, i: usize) -> bool {
        self.words[i >> 6] & (1u64 << (i & 63)) != 0
    }

    /// Add `i`.
    #[inline]
    pub fn insert(&mut self, i: usize) {
        let (w, b) = (i >> 6, 1u64 << (i & 63));
        let word = &mut self.words[w];
        if *word & b == 0 {
            *word |= b;
            self.top |= 1u64 << w;
            self.count += 1;
        }
    }

    /// Remove `i`.
    #[inline]
    pub fn remove(&mut self, i: usize) {
        let (w, b) = (i >> 6, 1u64 << (i & 63));
        let word = &mut self.words[w];
        if *word & b != 0 {
            *word &= !b;
            if *word == 0 {
                self.top &= !(1u64 << w);
            }
            self.count -= 1;
        }
    }

    /// The smallest member at or after `i`, if any.
    #[inline]
    pub fn first_at_or_after(&self, i: usize) -> Option<usize> {
        let w = i >> 6;
        if w >= self.words.len() {
            return None;
        }
        let here = self.words[w] & (!0u64 << (i & 63));
        if here != 0 {
            return Some((w << 6) | here.trailing_zeros() as usize);
        }
        let later = self.top & (!0u64).checked_shl(w as u32 + 1).unwrap_or(0);
        if later == 0 {
            return None;
        }
        let w = later.trailing_zeros() as usize;
        Some((w << 6) | self.words[w].trailing_zeros() as usize)
    }

    /// The smallest member, if any.
    #[inline]
    pub fn first(&self) -> Option<usize> {
        if self.top == 0 {
            return None;
        }
        let w = self.top.trailing_zeros() as usize;
        Some((w << 6) | self.words[w].trailing_zeros() as usize)
    }

    /// The smallest index below `limit` that is not a member, if any.
    #[inline]
    pub fn first_absent_below(&self, limit: usize) -> Option<usize> {
        self.words
            .iter()
            .enumerate()
            .find(|(_, w)| **w != !0)
            .map(|(k, w)| (k << 6) | (!w).trailing_zeros() as usize)
            .filter(|&i| i < limit)
    }

    /// The first member after `i` in round-robin order (wrapping; `i` itself when it is the
    /// only member), if any.
    #[inline]
    pub fn next_after_wrapping(&self, i: usize) -> Option<usize> {
        self.first_at_or_after(i + 1).or_else(|| self.first())
    }

    /// The first member at or after `i` in round-robin order (wrapping), if any.
    #[inline]
    pub fn at_or_after_wrapping(&self, i: usize) -> Option<usize> {
        self.first_at_or_after(i).or_else(|| self.first())
    }
}

/// One FIFO queue of the set.
#[derive(Clone, Debug, Default)]
pub struct FqQueue {
    /// Packet slots, head first (the staged packet, if it is this queue's, included).
    pub pkts: VecDeque<u32>,
    /// Bytes queued.
    pub bytes: u64,
    /// DRR deficit, bytes.
    deficit: i64,
}

/// `staged` when no packet is staged.
const NONE: usize = usize::MAX;

/// The wide queue set of one egress port, with its round-robin / DRR state and the staged
/// choice (see the module documentation).
#[derive(Clone, Debug)]
pub struct FqPort {
    /// Non-empty queues.
    pub nonempty: QueueSet,
    /// The queues.
    pub queues: Vec<FqQueue>,
    /// Round robin: the next queue to consider; DRR: the queue holding the turn.
    rr: usize,
    /// The queue whose head is staged (`NONE`: nothing staged).
    staged: usize,
    /// `rr` before the staged choice.
    undo_rr: usize,
    /// (queue, deficit before) of every deficit the staged choice changed, in order.
    undo: Vec<(u32, i64)>,
}

impl FqPort {
    /// Memory per queue of the set, bytes (without its packet slots).
    pub const BYTES_PER_QUEUE: u64 = std::mem::size_of::<FqQueue>() as u64;

    /// An empty set of `n` queues (1 ≤ `n` ≤ [`MAX_FQ_QUEUES`]) served by `sched`.
    pub fn new(n: usize, sched: SchedulerKind) -> Self {
        assert!((1..=MAX_FQ_QUEUES).contains(&n));
        // A port's round-robin pointer starts at its first data queue, the high-priority
        // queue, which is never served by the round robin (it is strict when it holds
        // packets): the first choice is the lowest non-empty queue. Here that is position 0
        // for round robin, and for DRR the last queue holding the turn (an empty queue keeps
        // no deficit, and the turn passes to the first non-empty one after it, wrapping).
        let rr = match sched {
            SchedulerKind::Drr { .. } => n - 1,
            SchedulerKind::RoundRobin | SchedulerKind::Wrr => 0,
        };
        FqPort {
            nonempty: QueueSet::new(n),
            queues: vec![FqQueue::default(); n],
            rr,
            staged: NONE,
            undo_rr: rr,
            undo: Vec::with_capacity(8),
        }
    }

    /// Append packet slot `p` of `size` bytes to queue `q`; true if `q` was empty.
    #[inline]
    pub fn push(&mut self, q: usize, p: u32, size: u64) -> bool {
        let qq = &mut self.queues[q];
        qq.pkts.push_back(p);
        qq.bytes += size;
        let was_empty = qq.pkts.len() == 1;
        if was_empty {
            self.nonempty.insert(q);
        }
        was_empty
    }

    /// The queue whose head is staged, if any.
    #[inline]
    pub fn staged(&self) -> Option<usize> {
        (self.staged != NONE).then_some(self.staged)
    }

    /// Choose (tentatively) the queue to serve next, as the port's round robin or DRR would
    /// now, and stage it; `head_size` gives a packet's size, bytes (DRR). Nothing may be
    /// staged. Returns the queue and its head packet, or `None` if every queue is empty.
    pub fn stage(
        &mut self,
        sched: SchedulerKind,
        head_size: impl Fn(u32) -> u32,
    ) -> Option<(usize, u32)> {
        debug_assert_eq!(self.staged, NONE, "a choice is already staged");
        if self.nonempty.is_empty() {
            return None;
        }
        self.undo_rr = self.rr;
        self.undo.clear();
        let n = self.queues.len();
        let q = match sched {
            SchedulerKind::Drr { quantum_bytes } => loop {
                // `EgressPort::select`'s DRR over the whole set (nothing here is paused or
                // held: the port pauses the FQ queue as a whole).
                let q = self.rr;
                let qq = &mut self.queues[q];
                if let Some(&h) = qq.pkts.front() {
                    let sz = head_size(h) as i64;
                    if qq.deficit >= sz {
                        self.undo.push((q as u32, qq.deficit));
                        qq.deficit -= sz;
                        break q;
                    }
                } else if qq.deficit != 0 {
                    self.undo.push((q as u32, qq.deficit));
                    qq.deficit = 0;
                }
                let next = self.nonempty.next_after_wrapping(q).unwrap_or(q);
                self.rr = next;
                let d = &mut self.queues[next].deficit;
                self.undo.push((next as u32, *d));
                *d += quantum_bytes as i64;
            },
            SchedulerKind::RoundRobin | SchedulerKind::Wrr => {
                let q = self.nonempty.at_or_after_wrapping(self.rr).unwrap_or(0);
                self.rr = if q + 1 >= n { 0 } else { q + 1 };
                q
            }
        };
        self.staged = q;
        Some((q, self.queues[q].pkts[0]))
    }

    /// Undo the staged choice (the scheduler state returns to what it was before it); returns
    /// the packet that was staged.
    pub fn unstage(&mut self) -> Option<u32> {
        if self.staged == NONE {
            return None;
        }
        for &(q, d) in self.undo.iter().rev() {
            self.queues[q as usize].deficit = d;
        }
        self.undo.clear();
        self.rr = self.undo_rr;
        let p = self.queues[self.staged].pkts[0];
        self.staged = NONE;
        Some(p)
    }

    /// The staged packet leaves: commit the choice and remove it from its queue. Returns its
    /// queue and slot.
    #[inline]
    pub fn pop_staged(&mut self, size: u64) -> (usize, u32) {
        let q = self.staged;
        debug_assert_ne!(q, NONE, "nothing staged");
        self.undo.clear();
        self.staged = NONE;
        let qq = &mut self.queues[q];
        let p = qq
            .pkts
            .pop_front()
            .expect("the staged queue holds its packet");
        qq.bytes -= size;
        if qq.pkts.is_empty() {
            self.nonempty.remove(q);
        }
        (q, p)
    }

    /// Packets queued over the set.
    pub fn packets(&self) -> usize {
        self.queues.iter().map(|q| q.pkts.len()).sum()
    }

    /// Bytes queued over the set.
    pub fn bytes(&self) -> u64 {
        self.queues.iter().map(|q| q.bytes).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use crate::switch::test_port as port;

    /// Naive reference: a sorted set of indices.
    fn naive_next(set: &std::collections::BTreeSet<usize>, i: usize) -> Option<usize> {
        set.range(i..).next().copied()
    }

    #[test]
    fn queue_set_matches_a_naive_set() {
        let mut rng = Rng::new(3);
        for &n in &[1usize, 5, 63, 64, 65, 127, 128, 1000, 1001, 4096] {
            let mut s = QueueSet::new(n);
            let mut r = std::collections::BTreeSet::new();
            for _ in 0..20_000 {
                let i = rng.below(n as u64) as usize;
                // Dense and sparse phases: insert more often than remove, then the reverse.
                if rng.below(3) == 0 {
                    s.remove(i);
                    r.remove(&i);
                } else {
                    s.insert(i);
                    r.insert(i);
                }
                let j = rng.below(n as u64 + 2) as usize;
                assert_eq!(s.contains(i), r.contains(&i));
                assert_eq!(s.len() as usize, r.len());
                assert_eq!(s.is_empty(), r.is_empty());
                assert_eq!(s.first(), r.iter().next().copied());
                assert_eq!(s.first_at_or_after(j), naive_next(&r, j), "n {n} j {j}");
                let lim = rng.below(n as u64 + 1) as usize;
                assert_eq!(
                    s.first_absent_below(lim),
                    (0..lim).find(|k| !r.contains(k)),
                    "n {n} limit {lim}"
                );
                let wrap = naive_next(&r, j + 1).or_else(|| r.iter().next().copied());
                assert_eq!(s.next_after_wrapping(j), wrap, "n {n} j {j}");
            }
            for i in 0..n {
                s.remove(i);
            }
            assert!(s.is_empty() && s.first().is_none());
            assert_eq!(s.len(), 0);
        }
    }

    /// The set serves packets in exactly the order a port with that many data queues does
    /// (queues 1.. of the port = the set's 0.., after the high-priority queue 1 of the port
    /// which never holds packets here), over random arrivals interleaved with services, with
    /// packets arriving between a choice being staged and taken (the choice is redone), for
    /// DRR with quanta below, at and above the packet sizes and for round robin.
    #[test]
    fn serves_in_the_order_of_a_port_with_as_many_queues() {
        let mut rng = Rng::new(17);
        let scheds = [
            SchedulerKind::Drr {
                quantum_bytes: 1048,
            },
            SchedulerKind::Drr { quantum_bytes: 300 },
            SchedulerKind::Drr {
                quantum_bytes: 5000,
            },
            SchedulerKind::RoundRobin,
        ];
        for sched in scheds {
            for &n in &[1usize, 2, 7, 61] {
                let mut ep = port(n + 2);
                let mut fq = FqPort::new(n, sched);
                let mut sizes = std::collections::HashMap::new();
                let mut next_slot = 0u32;
                for _ in 0..20_000 {
                    if rng.below(2) == 0 {
                        let q = rng.below(n as u64) as usize;
                        let size = 64 + rng.below(1000) as u32;
                        let p = next_slot;
                        next_slot += 1;
                        sizes.insert(p, size);
                        ep.enqueue(q + 2, p, size as u64);
                        if fq.push(q, p, size as u64) && fq.unstage().is_some() {
                            fq.stage(sched, |p| sizes[&p]);
                        }
                        if fq.staged().is_none() {
                            fq.stage(sched, |p| sizes[&p]);
                        }
                    } else {
                        let want = ep.select(sched, |p| sizes[&p]);
                        let got = fq.staged();
                        assert_eq!(want.map(|q| q - 2), got, "{sched:?} n {n}");
                        if let Some(q) = want {
                            let (p, s) = ep.dequeue(q, |p| sizes[&p] as u64).unwrap();
                            let (fq_q, fp) = fq.pop_staged(s);
                            assert_eq!((fq_q + 2, fp), (q, p));
                            fq.stage(sched, |p| sizes[&p]);
                        }
                    }
                    assert_eq!(ep.bytes, fq.bytes());
                }
            }
        }
    }

    #[test]
    fn a_thousand_queues_take_turns_one_quantum_each() {
        // 1000 queues with 3 packets of 1000 B each, quantum 1000 B: DRR serves queue 0, 1, …,
        // 999, then again 0, 1, …: round k serves every queue's k-th packet.
        let sched = SchedulerKind::Drr {
            quantum_bytes: 1000,
        };
        let mut fq = FqPort::new(1000, sched);
        for k in 0..3u32 {
            for q in 0..1000u32 {
                fq.push(q as usize, k * 1000 + q, 1000);
            }
        }
        for k in 0..3u32 {
            for q in 0..1000u32 {
                let (sq, p) = fq.stage(sched, |_| 1000).unwrap();
                assert_eq!((sq, p), (q as usize, k * 1000 + q));
                fq.pop_staged(1000);
            }
        }
        assert!(fq.stage(sched, |_| 1000).is_none());
        assert_eq!((fq.packets(), fq.bytes()), (0, 0));
    }
}
