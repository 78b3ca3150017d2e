//! The discrete-event core: a priority queue of small `Copy` events ordered by
//! (time, insertion sequence), and the packet arena.
//!
//! Ordering is total and deterministic: two events at the same picosecond fire in the order
//! they were scheduled. Events name entities by index (node, port, packet slot, flow), never by
//! pointer, so the hot path allocates nothing per packet once the heap and arena have grown to
//! their working size.

pub mod arena;

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Something that happens at an instant. 12 bytes; the queue entry is 32.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The last bit of packet `pkt` reaches port `port` of node `node` (serialization,
    /// propagation and the receiver's pipeline delay have elapsed).
    Arrive {
        /// Receiving node id.
        node: u32,
        /// Receiving port of that node.
        port: u16,
        /// Packet slot in the arena.
        pkt: u32,
    },
    /// Egress port `port` of node `node` finished serializing a packet and may start the next.
    TxDone {
        /// Transmitting node id.
        node: u32,
        /// Its port.
        port: u16,
    },
    /// A host NIC's pacing or pause timer expired: re-run its arbiter.
    NicWake {
        /// Host node id.
        node: u32,
    },
    /// Flow `flow` starts (its QP is created and becomes eligible).
    FlowStart {
        /// Flow index.
        flow: u32,
    },
    /// Retransmission-timer check for flow `flow` (see `host::qp` for the lazy timer scheme).
    Rto {
        /// Flow index.
        flow: u32,
    },
    /// A timer of flow `flow`'s congestion controller (e.g. DCQCN rate increase).
    CcTimer {
        /// Flow index.
        flow: u32,
        /// Which of the controller's timers.
        which: u8,
    },
    /// A periodic task of the switch-side scheme on switch `node` (e.g. Bloom filter reset).
    SwitchTimer {
        /// Switch node id.
        node: u32,
        /// Which timer.
        which: u8,
    },
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    time_ps: u64,
    seq: u64,
    ev: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.time_ps == o.time_ps && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    fn cmp(&self, o: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap, we want the earliest (time, seq) first.
        (o.time_ps, o.seq).cmp(&(self.time_ps, self.seq))
    }
}

/// Future-event list with deterministic tie-breaking.
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
    now_ps: u64,
    popped: u64,
}

impl EventQueue {
    /// Empty queue at time 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// Current simulated time, picoseconds (time of the last popped event).
    #[inline]
    pub fn now(&self) -> u64 {
        self.now_ps
    }

    /// Number of events executed so far.
    #[inline]
    pub fn events(&self) -> u64 {
        self.popped
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Schedule `ev` at absolute time `time_ps` (must not be in the past).
    #[inline]
    pub fn schedule(&mut self, time_ps: u64, ev: Event) {
        debug_assert!(time_ps >= self.now_ps, "event scheduled in the past");
        self.seq += 1;
        self.heap.push(Entry { time_ps, seq: self.seq, ev });
    }

    /// Schedule `ev` `delay_ps` after now.
    #[inline]
    pub fn schedule_in(&mut self, delay_ps: u64, ev: Event) {
        self.schedule(self.now_ps + delay_ps, ev);
    }

    /// Time of the next event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<u64> {
        self.heap.peek().map(|e| e.time_ps)
    }

    /// Remove the next event and advance the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, Event)> {
        let e = self.heap.pop()?;
        self.now_ps = e.time_ps;
        self.popped += 1;
        Some((e.time_ps, e.ev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_is_time_then_insertion() {
        let mut q = EventQueue::new();
        q.schedule(5, Event::NicWake { node: 1 });
        q.schedule(3, Event::NicWake { node: 2 });
        q.schedule(5, Event::NicWake { node: 3 });
        q.schedule(3, Event::NicWake { node: 4 });
        let order: Vec<u32> = std::iter::from_fn(|| q.pop())
            .map(|(_, e)| match e {
                Event::NicWake { node } => node,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(order, vec![2, 4, 1, 3]);
        assert_eq!(q.now(), 5);
        assert_eq!(q.events(), 4);
    }

    #[test]
    fn event_is_small() {
        assert!(std::mem::size_of::<Event>() <= 12);
    }
}
