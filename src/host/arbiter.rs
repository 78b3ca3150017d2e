//! The NIC's QP arbiter: round robin over the QPs that can send *now*, at a cost that follows
//! the QPs that are ready rather than all active ones.
//!
//! Service order (HPCC-sim `RdmaEgressQueue::GetNextQindex`): the active QPs of a host form a
//! list in start order; the arbiter serves the first *eligible* QP at or after the round-robin
//! cursor, wrapping around, and moves the cursor just past it. As HPCC-sim's scan, which starts
//! at `(m_rrlast + 1) % n` for the list's length `n` *at scan time*, the cursor does not wrap
//! when the last QP is served: a QP that joins the list after the last-served one is the next
//! one served. It starts at 1 (`m_rrlast` starts at 0): of two QPs present before the first
//! send, the second goes first. A QP is eligible when it has something the window allows it
//! to send, its pacing and flow-control pause have ended, its priority is not PFC-paused and
//! no host scheme vetoes it.
//!
//! What makes it cheap: every QP is filed in one of three classes, kept up to date by the NIC
//! whenever something that decides them changes (a send, an ACK, a CNP, a controller timer, a
//! timeout, a pause, a rate set by a scheme):
//! - **ready** — can send now: a bit in a bitmap indexed by list position, so "the first ready
//!   QP at or after the cursor" is a scan over 64-QP words;
//! - **waiting** for a time (pacing, pause end): an entry in a min-heap keyed by that time,
//!   moved to *ready* when the clock reaches it;
//! - **blocked** (window full, nothing to send): in neither; only an event on that QP (ACK,
//!   timeout, …) can change it, and the NIC re-files the QP then.
//!
//! PFC pauses (per priority, for all QPs of the host) and host-scheme vetoes (BFC's pause
//! filter) change for many QPs at once, so they are checked when a ready QP comes up in the
//! scan; a host with every ready priority paused skips the scan. A vetoed
//! QP is set aside (*gated*) until the veto may have changed — the scheme's new filter kicks
//! the NIC, which calls [`Arbiter::ungate_all`] — so it is not checked again on every send.
//!
//! The list keeps its order without shifting: a finished QP leaves a hole, trailing holes are
//! trimmed, and the list is compacted (positions renumbered, the owner told through a
//! callback) once holes outnumber live QPs. No allocation once the vectors reached their peak.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A QP not (or no longer) in an arbiter.
pub const NO_POS: u32 = u32::MAX;

/// What a QP can do, as decided by the NIC from its state (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Window full or nothing to send: waits for an event on the QP.
    Blocked,
    /// Can send now.
    Ready,
    /// Will be able to send at this time, picoseconds (pacing or a pause end).
    Wait(u64),
}

const BLOCKED: u8 = 0;
const READY: u8 = 1;
const WAIT: u8 = 2;
const HOLE: u8 = 3;
/// Ready, but vetoed by a host scheme (BFC's pause filter) the last time the scan met it: out
/// of the ready bitmap until the veto may have changed ([`Arbiter::ungate_all`]).
const GATED: u8 = 4;

/// One position of the round-robin list.
#[derive(Clone, Copy, Debug)]
struct Slot {
    /// Flow (QP) id.
    flow: u32,
    /// Its priority (PFC class), < 64.
    prio: u8,
    /// `BLOCKED`, `READY`, `WAIT`, `GATED` or `HOLE`.
    state: u8,
    /// For `WAIT`: the time it becomes ready, picoseconds.
    wait_ps: u64,
    /// The flow's active-state slot (`FlowSlab`), fixed while the QP is in the list: the
    /// sender reaches its state without the flow → slot map (a paged table, two dependent
    /// loads that miss on a large run).
    aslot: u32,
}

/// The round-robin arbiter of one host NIC (see the module doc).
#[derive(Clone, Debug)]
pub struct Arbiter {
    /// The list, in start order; finished QPs leave holes until compaction.
    slots: Vec<Slot>,
    /// Bit `i` set = `slots[i]` is ready.
    ready: Vec<u64>,
    /// Ready QPs per priority.
    ready_n: Vec<u32>,
    /// Bit p set = some ready QP has priority p.
    ready_prios: u64,
    /// `(time, position)` of waiting QPs, earliest first. Entries whose QP has since changed
    /// class or time are stale and skipped; every waiting QP has an entry with its current time.
    waits: BinaryHeap<Reverse<(u64, u32)>>,
    /// Bit p set = some QP of priority p was ever added (never cleared: a superset of the
    /// active priorities, enough for the PFC fast path of [`Self::next_wake`]).
    prios: u64,
    /// Live (non-hole) positions.
    live: u32,
    /// Positions in state `GATED`.
    gated: u32,
    /// Holes in `slots`.
    holes: u32,
    /// Round-robin cursor: the scan starts at the first live position ≥ `rr` (wrapping to
    /// the start when there is none; `rr` may be the list's length).
    rr: u32,
}

impl Default for Arbiter {
    /// An empty list whose first scan starts at position 1 (HPCC-sim's `m_rrlast` = 0).
    fn default() -> Self {
        Arbiter {
            slots: Vec::new(),
            ready: Vec::new(),
            ready_n: Vec::new(),
            ready_prios: 0,
            waits: BinaryHeap::new(),
            prios: 0,
            live: 0,
            gated: 0,
            holes: 0,
            rr: 1,
        }
    }
}

impl Arbiter {
    /// Active QPs (started, not finished).
    #[inline]
    pub fn len(&self) -> usize {
        self.live as usize
    }

    /// No active QP?
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Append QP `flow` of priority `prio` (< 64), whose active state is in slot `aslot`, at
    /// the end of the list, blocked. Returns its position.
    pub fn add(&mut self, flow: u32, prio: u8, aslot: u32) -> u32 {
        debug_assert!(prio < 64);
        let pos = self.slots.len() as u32;
        self.slots.push(Slot {
            flow,
            prio,
            state: BLOCKED,
            wait_ps: 0,
            aslot,
        });
        if self.ready.len() * 64 < self.slots.len() {
            self.ready.push(0);
        }
        self.live += 1;
        self.prios |= 1 << prio;
        pos
    }

    /// File the QP at `pos` in class `c`.
    pub fn set(&mut self, pos: u32, c: Class) {
        let i = pos as usize;
        let mut s = self.slots[i];
        debug_assert_ne!(s.state, HOLE);
        if s.state == GATED {
            // Re-filed by an event on the QP: its veto is checked again when the scan meets it.
            self.gated -= 1;
            self.slots[i].state = BLOCKED;
            s.state = BLOCKED;
        }
        match c {
            Class::Ready => {
                if s.state != READY {
                    self.mark_ready(i);
                }
            }
            Class::Blocked => {
                if s.state == READY {
                    self.unmark_ready(i);
                }
                self.slots[i].state = BLOCKED;
            }
            Class::Wait(t) => {
                if s.state == READY {
                    self.unmark_ready(i);
                }
                if s.state != WAIT || s.wait_ps != t {
                    self.waits.push(Reverse((t, pos)));
                }
                self.slots[i].state = WAIT;
                self.slots[i].wait_ps = t;
            }
        }
    }

    fn mark_ready(&mut self, i: usize) {
        let s = &mut self.slots[i];
        s.state = READY;
        let p = s.prio as usize;
        self.ready[i / 64] |= 1 << (i % 64);
        if self.ready_n.len() <= p {
            self.ready_n.resize(p + 1, 0);
        }
        self.ready_n[p] += 1;
        self.ready_prios |= 1 << p;
    }

    fn unmark_ready(&mut self, i: usize) {
        let p = self.slots[i].prio as usize;
        self.ready[i / 64] &= !(1 << (i % 64));
        self.ready_n[p] -= 1;
        if self.ready_n[p] == 0 {
            self.ready_prios &= !(1 << p);
        }
    }

    /// Take the QP at `pos` out of the list (it finished). Positions of other QPs may change
    /// (compaction): `moved(flow, new_pos)` is called for each that moved.
    pub fn remove(&mut self, pos: u32, mut moved: impl FnMut(u32, u32)) {
        let i = pos as usize;
        match self.slots[i].state {
            READY => self.unmark_ready(i),
            GATED => self.gated -= 1,
            _ => {}
        }
        self.slots[i].state = HOLE;
        self.live -= 1;
        self.holes += 1;
        while self.slots.last().is_some_and(|s| s.state == HOLE) {
            self.slots.pop();
            self.holes -= 1;
        }
        // A cursor past the trimmed end stays just past it: a QP that joins next is served
        // next (as HPCC-sim's index, taken modulo the list's length at scan time).
        self.rr = self.rr.min(self.slots.len() as u32);
        if self.holes > 32 && self.holes > self.live {
            self.compact(&mut moved);
        }
    }

    /// Renumber positions without holes; the cursor keeps pointing at the same QP.
    fn compact(&mut self, moved: &mut impl FnMut(u32, u32)) {
        let old_rr = self.rr as usize;
        let mut new_rr = None;
        let mut w = 0usize;
        self.ready.iter_mut().for_each(|x| *x = 0);
        for r in 0..self.slots.len() {
            let s = self.slots[r];
            if s.state == HOLE {
                continue;
            }
            if new_rr.is_none() && r >= old_rr {
                new_rr = Some(w);
            }
            self.slots[w] = s;
            if s.state == READY {
                self.ready[w / 64] |= 1 << (w % 64);
            }
            if w != r {
                moved(s.flow, w as u32);
            }
            w += 1;
        }
        self.slots.truncate(w);
        self.ready.truncate(w.div_ceil(64).max(1));
        self.holes = 0;
        // No live QP at or after the cursor: it stays just past the end.
        self.rr = new_rr.unwrap_or(w) as u32;
        // Rebuild the heap with one entry per waiting QP (stale entries carry no information).
        let mut v = std::mem::take(&mut self.waits).into_vec();
        v.clear();
        v.extend(
            self.slots
                .iter()
                .enumerate()
                .filter(|(_, s)| s.state == WAIT)
                .map(|(i, s)| Reverse((s.wait_ps, i as u32))),
        );
        self.waits = BinaryHeap::from(v);
    }

    #[inline]
    fn valid_wait(&self, t: u64, pos: u32) -> bool {
        self.slots
            .get(pos as usize)
            .is_some_and(|s| s.state == WAIT && s.wait_ps == t)
    }

    /// Move every QP whose wait ended at or before `now_ps` to *ready*.
    fn drain(&mut self, now_ps: u64) {
        while let Some(&Reverse((t, pos))) = self.waits.peek() {
            if t > now_ps {
                break;
            }
            self.waits.pop();
            if self.valid_wait(t, pos) {
                self.mark_ready(pos as usize);
            }
        }
    }

    /// The QP to serve at `now_ps`: the first ready one at or after the cursor (wrapping) whose
    /// priority is not in `paused_mask` and that `allowed(flow)` accepts. Returns its position
    /// and flow; the cursor is moved by [`Self::served`].
    #[inline]
    pub fn pick(
        &mut self,
        now_ps: u64,
        paused_mask: u64,
        mut allowed: impl FnMut(u32) -> bool,
    ) -> Option<(u32, u32)> {
        self.drain(now_ps);
        if self.ready_prios & !paused_mask == 0 {
            return None;
        }
        let rr = self.rr as usize;
        let mut from = rr;
        let mut wrapped = false;
        loop {
            let i = match self.next_ready(from) {
                Some(i) if !wrapped || i < rr => i,
                _ if wrapped => return None,
                _ => {
                    wrapped = true;
                    from = 0;
                    continue;
                }
            };
            let s = self.slots[i];
            if paused_mask & (1 << s.prio) == 0 {
                if allowed(s.flow) {
                    return Some((i as u32, s.flow));
                }
                // Vetoed: set aside until the veto may have changed (no rescan per send).
                self.unmark_ready(i);
                self.slots[i].state = GATED;
                self.gated += 1;
            }
            from = i + 1;
        }
    }

    /// Active-state slot of the QP at position `pos` (as given to [`Self::add`]).
    #[inline]
    pub fn slot_at(&self, pos: u32) -> u32 {
        self.slots[pos as usize].aslot
    }

    /// First ready position ≥ `from`.
    #[inline]
    fn next_ready(&self, from: usize) -> Option<usize> {
        let mut w = from / 64;
        if w >= self.ready.len() {
            return None;
        }
        let mut bits = self.ready[w] & (!0u64).checked_shl((from % 64) as u32).unwrap_or(0);
        loop {
            if bits != 0 {
                return Some(w * 64 + bits.trailing_zeros() as usize);
            }
            w += 1;
            if w >= self.ready.len() {
                return None;
            }
            bits = self.ready[w];
        }
    }

    /// The vetoes of host schemes may have changed (a new BFC pause filter arrived): every QP
    /// set aside as vetoed is ready again, to be checked when the scan meets it.
    pub fn ungate_all(&mut self) {
        if self.gated == 0 {
            return;
        }
        for i in 0..self.slots.len() {
            if self.slots[i].state == GATED {
                self.mark_ready(i);
            }
        }
        self.gated = 0;
    }

    /// The QP at `pos` was served: the next scan starts just after it (or at it, when `stay`:
    /// NDP's FIFO sender keeps the NIC on one flow). Past the last QP the cursor does not wrap
    /// here but at the scan, so a QP that joins before the next scan is served first.
    #[inline]
    pub fn served(&mut self, pos: u32, stay: bool) {
        self.rr = if stay { pos } else { pos + 1 };
    }

    /// Earliest end of a wait among QPs whose priority is not in `paused_mask` (`None` if no
    /// such QP waits): when the NIC should wake up if nothing can send now.
    pub fn next_wake(&mut self, paused_mask: u64) -> Option<u64> {
        // Drop stale entries from the top.
        while let Some(&Reverse((t, pos))) = self.waits.peek() {
            if self.valid_wait(t, pos) {
                break;
            }
            self.waits.pop();
        }
        if paused_mask & self.prios == 0 {
            return self.waits.peek().map(|r| r.0.0);
        }
        // Some priority is PFC-paused: its waiting QPs must not wake the NIC.
        self.waits
            .iter()
            .filter(|r| {
                let (t, pos) = r.0;
                self.valid_wait(t, pos) && paused_mask & (1 << self.slots[pos as usize].prio) == 0
            })
            .map(|r| r.0.0)
            .min()
    }

    /// Flow of the QP at `pos` (for checks and tests).
    pub fn flow_at(&self, pos: u32) -> Option<u32> {
        self.slots
            .get(pos as usize)
            .filter(|s| s.state != HOLE)
            .map(|s| s.flow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference: an index-based list scanned from the cursor as HPCC-sim's `GetNextQindex`
    /// (start at the last-served index + 1, modulo the list's length at scan time), with
    /// finished QPs removed at once (the cursor keeps pointing at the same QP).
    struct Naive {
        active: Vec<(u32, u8)>,
        /// The last-served index + 1 (HPCC-sim's `m_rrlast + 1`), at most the list's length
        /// after a removal.
        rr: usize,
    }

    impl Default for Naive {
        fn default() -> Self {
            Naive {
                active: Vec::new(),
                rr: 1,
            }
        }
    }

    impl Naive {
        fn pick(&self, eligible: impl Fn(u32, u8) -> bool) -> Option<(usize, u32)> {
            let n = self.active.len();
            (0..n)
                .map(|k| (self.rr + k) % n)
                .find(|&i| eligible(self.active[i].0, self.active[i].1))
                .map(|i| (i, self.active[i].0))
        }
        fn served(&mut self, i: usize) {
            self.rr = i + 1;
        }
        fn remove(&mut self, f: u32) {
            let i = self.active.iter().position(|x| x.0 == f).unwrap();
            self.active.remove(i);
            if self.rr > i {
                self.rr -= 1;
            }
            self.rr = self.rr.min(self.active.len());
        }
    }

    #[test]
    fn round_robin_among_ready_skips_waiting_and_blocked() {
        let mut a = Arbiter::default();
        let p: Vec<u32> = (0..4).map(|f| a.add(f, 3, f)).collect();
        for &x in &p {
            a.set(x, Class::Ready);
        }
        a.set(p[1], Class::Blocked);
        a.set(p[2], Class::Wait(100));
        let mut order = vec![];
        for _ in 0..4 {
            let (pos, f) = a.pick(10, 0, |_| true).unwrap();
            a.served(pos, false);
            order.push(f);
        }
        // The first scan starts at position 1 (HPCC-sim's `m_rrlast` = 0): 3 goes first.
        assert_eq!(order, [3, 0, 3, 0]);
        // At t = 100 flow 2 is ready; the cursor is after flow 0, so 2 then 3.
        let (pos, f) = a.pick(100, 0, |_| true).unwrap();
        assert_eq!(f, 2);
        a.served(pos, false);
        assert_eq!(a.pick(100, 0, |_| true).unwrap().1, 3);
    }

    /// HPCC-sim's join rule: a QP that joins after the last-served one (the cursor past the
    /// end of the list) is served next, also after the last QP finished and was trimmed.
    #[test]
    fn a_qp_joining_after_the_last_served_goes_next() {
        let mut a = Arbiter::default();
        let x = a.add(0, 3, 0);
        a.set(x, Class::Ready);
        let (pos, _) = a.pick(0, 0, |_| true).unwrap();
        a.served(pos, false);
        let y = a.add(1, 3, 1);
        a.set(y, Class::Ready);
        assert_eq!(a.pick(0, 0, |_| true).unwrap().1, 1, "the joiner goes next");
        a.served(y, false);
        // y finishes (trimmed); z joins in its place: the cursor, past y, points at z.
        a.remove(y, |_, _| {});
        let z = a.add(2, 3, 2);
        a.set(z, Class::Ready);
        assert_eq!(a.pick(0, 0, |_| true).unwrap().1, 2);
    }

    #[test]
    fn wake_is_the_earliest_wait_of_an_unpaused_priority() {
        let mut a = Arbiter::default();
        let x = a.add(0, 3, 0);
        let y = a.add(1, 4, 1);
        a.set(x, Class::Wait(50));
        a.set(y, Class::Wait(80));
        assert_eq!(a.next_wake(0), Some(50));
        assert_eq!(a.next_wake(1 << 3), Some(80));
        assert_eq!(a.next_wake((1 << 3) | (1 << 4)), None);
        // Re-filed to a later time: the old entry is stale.
        a.set(x, Class::Wait(90));
        assert_eq!(a.next_wake(0), Some(80));
        a.set(y, Class::Blocked);
        assert_eq!(a.next_wake(0), Some(90));
        assert!(a.pick(89, 0, |_| true).is_none());
        assert_eq!(a.pick(90, 0, |_| true), Some((x, 0)));
        // A paused priority is never picked, and a veto skips a QP.
        assert!(a.pick(90, 1 << 3, |_| true).is_none());
        assert!(a.pick(90, 0, |f| f != 0).is_none());
    }

    /// Random operations against the index-based scan: same choice every time, through
    /// removals, holes, trailing trims and compactions.
    #[test]
    fn same_choices_as_the_scan_it_replaces() {
        let mut rng = crate::rng::Rng::new(7);
        for _round in 0..20 {
            let mut a = Arbiter::default();
            let mut naive = Naive::default();
            // Per flow: (position, class).
            let mut st: Vec<(u32, Class)> = vec![];
            let mut next_flow = 0u32;
            let mut now = 0u64;
            let mut last_veto = 7u32;
            for _ in 0..3000 {
                now += rng.below(5);
                match rng.below(10) {
                    0 | 1 => {
                        let prio = 1 + rng.below(3) as u8;
                        let f = next_flow;
                        next_flow += 1;
                        st.push((a.add(f, prio, f), Class::Blocked));
                        naive.active.push((f, prio));
                    }
                    2 if !naive.active.is_empty() => {
                        let k = rng.below(naive.active.len() as u64) as usize;
                        let f = naive.active[k].0;
                        naive.remove(f);
                        let pos = st[f as usize].0;
                        a.remove(pos, |g, np| st[g as usize].0 = np);
                        st[f as usize].0 = NO_POS;
                    }
                    3..=5 if !naive.active.is_empty() => {
                        let k = rng.below(naive.active.len() as u64) as usize;
                        let f = naive.active[k].0;
                        let c = match rng.below(3) {
                            0 => Class::Blocked,
                            1 => Class::Ready,
                            _ => Class::Wait(now + rng.below(20)),
                        };
                        let c = match c {
                            Class::Wait(t) if t <= now => Class::Ready,
                            c => c,
                        };
                        st[f as usize].1 = c;
                        a.set(st[f as usize].0, c);
                    }
                    _ => {
                        let paused = if rng.below(4) == 0 { 1 << 2 } else { 0 };
                        // 7 = no veto (f % 7 is never 7). A new veto is a new filter: the
                        // NIC is kicked and ungates.
                        let veto = rng.below(8) as u32;
                        if veto != last_veto {
                            a.ungate_all();
                            last_veto = veto;
                        }
                        let elig = |f: u32, prio: u8| {
                            paused & (1 << prio) == 0
                                && f % 7 != veto
                                && match st[f as usize].1 {
                                    Class::Ready => true,
                                    Class::Wait(t) => t <= now,
                                    Class::Blocked => false,
                                }
                        };
                        let want = naive.pick(elig);
                        let got = a.pick(now, paused, |f| f % 7 != veto);
                        assert_eq!(got.map(|g| g.1), want.map(|w| w.1));
                        if let Some((pos, f)) = got {
                            assert_eq!(a.slot_at(pos), f, "active slot kept with the QP");
                        }
                        if let (Some((pos, f)), Some((i, _))) = (got, want) {
                            // Served: it waits for its pacing now.
                            a.served(pos, false);
                            naive.served(i);
                            let c = Class::Wait(now + 1 + rng.below(10));
                            st[f as usize].1 = c;
                            a.set(pos, c);
                        } else {
                            // Nothing to send: the wake-up is the earliest unpaused wait.
                            let want = naive
                                .active
                                .iter()
                                .filter(|(_, p)| paused & (1 << p) == 0)
                                .filter_map(|(f, _)| match st[*f as usize].1 {
                                    Class::Wait(t) if t > now => Some(t),
                                    _ => None,
                                })
                                .min();
                            // The arbiter also counts vetoed QPs (their veto is not a time).
                            let got = a.next_wake(paused);
                            if veto == 7 {
                                assert_eq!(got, want);
                            } else if let Some(w) = want {
                                assert!(got.is_some_and(|g| g <= w));
                            }
                        }
                    }
                }
                assert_eq!(a.len(), naive.active.len());
            }
        }
    }
}
