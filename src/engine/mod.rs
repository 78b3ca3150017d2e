//! The discrete-event core: a priority queue of small `Copy` events ordered by
//! (time, order class, content), and the packet arena.
//!
//! Ordering is total and canonical: events at the same picosecond fire in order of their
//! class (arrivals, flow starts, the rest) and then of their own fields ([`tie`]: the node
//! and port, flow or timer they are about), never of when or by whom they were scheduled. Two events that compare
//! equal are identical, so which of them runs first cannot matter. The order of a run is
//! therefore a function of the events alone: splitting the network among event queues (one
//! per partition of a parallel run) cannot change it. Events name entities by index (node,
//! port, packet slot, flow), never by pointer, so the hot path allocates nothing per packet
//! once the heap and arena have grown to their working size.

pub mod arena;
pub mod hugepage;
pub mod packet;
pub mod paged;

/// Hint the CPU to load the cache line at `p` (a no-op on targets without a prefetch
/// instruction). Never dereferences `p` in the Rust sense, so any address is allowed.
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch is a hint; it cannot fault or change program state.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// `Event::Arrive::egress` of a packet with no forwarding decision (at hosts, PFC frames, no
/// route).
pub const NO_EGRESS: u16 = u16::MAX;

/// Something that happens at an instant. 16 bytes; a wheel-slot entry (with its in-bucket
/// key) is 20, an entry of the bucket being executed (with its full time) 24.
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
        /// At a switch: the egress port the forwarding table picks for this packet, looked
        /// up by the transmitting node while the packet was in its cache (routing is a pure
        /// function of switch, destination and 5-tuple), so the event loop can prefetch the
        /// egress queue before the packet arrives. `NO_EGRESS` for hosts and unrouted
        /// packets.
        egress: u16,
        /// The transmission's sequence number on the sending port
        /// ([`crate::link::TxPort::launches`], wrapping): orders arrivals at one port in one
        /// picosecond as they were sent. A frame whose serialization rounds to zero (HPCC
        /// framing truncates to whole nanoseconds: a 64 B PFC frame at 400 G) arrives in the
        /// same picosecond as the packet sent before it.
        seq: u16,
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
    /// Flow `flow` starts (its QP is created and becomes eligible). One is pending at a time:
    /// the simulator schedules the next flow's start when this one fires (streaming arrivals,
    /// no event per flow held from the beginning).
    FlowStart {
        /// Flow index.
        flow: u32,
    },
    /// Retransmission-timer check for flow `flow` (see `Simulator::arm_rto` for the lazy timer scheme).
    Rto {
        /// Flow index.
        flow: u32,
    },
    /// The receiver of flow `flow` owes a CNP (`network.cnp = "cnp"`) for marks that arrived
    /// within the interval after its last one: it goes out when the interval ends.
    CnpDue {
        /// Flow index.
        flow: u32,
        /// The marked variant (echoing scheme marks) instead of the CE one.
        marked: bool,
    },
    /// A timer of flow `flow`'s congestion controller (e.g. DCQCN rate increase).
    CcTimer {
        /// Flow index.
        flow: u32,
        /// Which of the controller's timers.
        which: u8,
    },
    /// A timer of a flow-control scheme ([`crate::scheme`]) on node `node` (switch or host):
    /// PFC pause expiry and XOFF refresh, Bloom-filter resets, BFC pause-frame periods, …
    SchemeTimer {
        /// Node id (switch or host).
        node: u32,
        /// Port the timer is about (hosts: 0).
        port: u16,
        /// Registry id of the scheme ([`crate::scheme::SchemeId`]).
        scheme: u8,
        /// Which of the scheme's timers.
        which: u8,
        /// Timer argument (e.g. a priority).
        arg: u8,
    },
    /// Entry `event` of [`crate::config::Failures::events`] takes effect: a link goes down or
    /// comes back up.
    LinkChange {
        /// Index into the run's link events.
        event: u32,
    },
    /// The forwarding tables follow the links' states (a link change's reconvergence delay
    /// has elapsed).
    Reroute,
    /// Packet `pkt` was on the wire of a link that went down, or was sent on a link that is
    /// down: it is lost. Takes the place of its `Arrive` (same order class).
    Lost {
        /// The port the loss is about (its order among same-time events): the receiving port
        /// of the arrival it replaces (`at_sender` false), or the transmitting port of a
        /// packet sent into a dead link (`at_sender` true).
        node: u32,
        /// That port's number.
        port: u16,
        /// Whether `node`/`port` is the packet's transmitter (it was sent on a dead link)
        /// rather than its receiver (it was on the wire when the link went down).
        at_sender: bool,
        /// The transmission's sequence number on its sending port (as `Arrive::seq`).
        seq: u16,
        /// Packet slot in the arena.
        pkt: u32,
    },
}

/// Order class of an event among events of the same picosecond: packet arrivals (0) come
/// before everything else, so a packet arriving at the instant a port finishes a transmission
/// is queued before the port picks its next packet ("arrivals, then departures"); flow starts
/// (1) come before the remaining events (2). Flow starts are scheduled one at a time as the
/// previous one fires (streaming arrivals); their class gives them the place they had when every
/// flow start was scheduled up front, before any other event (the lowest sequence numbers).
#[inline]
fn class(ev: &Event) -> u8 {
    match ev {
        Event::Arrive { .. } | Event::Lost { .. } => 0,
        Event::FlowStart { .. } => 1,
        _ => 2,
    }
}

/// Canonical order of events of the same picosecond and order class: a key made of the
/// event's own fields, never of its packet slot or its scheduling order (both depend on how
/// the run is executed). Events with equal keys are identical (same kind, same fields), so
/// the order among them cannot matter; [`EventQueue::tie_collisions`] counts the pairs that
/// break this rule (none may).
///
/// - Arrivals and losses (class 0): by receiving node and port, then in the order the
///   sending port sent them (its transmission sequence number, compared as a wrapping
///   counter: arrivals of one picosecond at one port are consecutive transmissions). A loss
///   takes its arrival's key, or the transmitting port's when the packet was sent into a
///   dead link.
/// - Flow starts (class 1): by flow index.
/// - Everything else (class 2): by kind (transmission done, NIC wake-up, scheme timer,
///   retransmission check, CC timer, CNP due, link change, reroute), then by the node and
///   port, or the flow, and the timer's own fields.
#[inline]
pub fn tie(ev: &Event) -> Tie {
    let (kind, id, sub) = match *ev {
        Event::Arrive {
            node, port, seq, ..
        } => return Tie::wire(node, port << 1, seq),
        Event::Lost {
            node,
            port,
            at_sender,
            seq,
            ..
        } => return Tie::wire(node, (port << 1) | u16::from(at_sender), seq),
        Event::FlowStart { flow } => (0, flow, 0),
        Event::TxDone { node, port } => (0, node, u64::from(port)),
        Event::NicWake { node } => (1, node, 0),
        Event::SchemeTimer {
            node,
            port,
            scheme,
            which,
            arg,
        } => (
            2,
            node,
            (u64::from(port) << 24)
                | (u64::from(scheme) << 16)
                | (u64::from(which) << 8)
                | u64::from(arg),
        ),
        Event::Rto { flow } => (3, flow, 0),
        Event::CcTimer { flow, which } => (4, flow, u64::from(which)),
        Event::CnpDue { flow, marked } => (5, flow, u64::from(marked)),
        Event::LinkChange { event } => (6, event, 0),
        Event::Reroute => (7, 0, 0),
    };
    Tie {
        head: (kind << 32) | u64::from(id),
        sub,
        seq: 0,
    }
}

/// Content key of an event ([`tie`]): kind and entity (`head`: kind in the bits above 32,
/// the node, flow or link event below), sub-entity (`sub`: a port, timer fields), then a
/// wrapping sequence number (arrivals only; 0 otherwise). Two words and a counter, so that
/// comparing two keys is two integer comparisons in the common case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tie {
    head: u64,
    sub: u64,
    seq: u16,
}

impl Tie {
    /// Key of an arrival (or loss) at `node`'s port key `port` with sequence number `seq`.
    #[inline]
    fn wire(node: u32, port: u16, seq: u16) -> Self {
        Tie {
            head: u64::from(node),
            sub: u64::from(port),
            seq,
        }
    }
}

impl Ord for Tie {
    /// (kind, entity, sub-entity), then `seq` as a wrapping counter: `a` before `b` when
    /// `b - a` (mod 2^16) is below 2^15. A total order on every set of same-key arrivals that
    /// occurs (a few consecutive transmissions of one port).
    #[inline]
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.head, self.sub)
            .cmp(&(o.head, o.sub))
            .then_with(|| (self.seq.wrapping_sub(o.seq) as i16).cmp(&0))
    }
}

impl PartialOrd for Tie {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

/// A [`PREFIX_BITS`]-bit summary of an event's content key ([`tie`]) that sorts like it: for
/// events of the same order class, `prefix(a) < prefix(b)` implies `tie(a) < tie(b)`. Equal
/// summaries say nothing: arrivals' sequence numbers, flow starts, flow timers and timer
/// fields are left out, and so are the node and port when the network is too large for them
/// ([`Summary`]); [`EventQueue::load_bucket`] orders such events by the full key. Computed
/// when the event is scheduled, where its kind is known: a few instructions.
#[inline(always)]
fn prefix(ev: &Event, s: Summary) -> u32 {
    // Class 2: the kind (as in `tie`) above a 17-bit entity.
    const E: u32 = PREFIX_BITS - 3;
    let at = |node: u32, port: u16| {
        debug_assert!(
            s.mask == 0 || (node >> (E - s.port_bits) == 0 && port >> s.port_bits == 0),
            "node {node} port {port} outside the network the queue was sized for"
        );
        ((node << s.port_bits) | u32::from(port)) & s.mask
    };
    match *ev {
        Event::Arrive { node, port, .. } | Event::Lost { node, port, .. } => at(node, port),
        Event::TxDone { node, port } => at(node, port),
        Event::NicWake { node } => (1 << E) | (node & s.mask),
        Event::SchemeTimer { node, port, .. } => (2 << E) | at(node, port),
        Event::Rto { .. } => 3 << E,
        Event::CcTimer { .. } => 4 << E,
        Event::CnpDue { .. } => 5 << E,
        Event::LinkChange { .. } => 6 << E,
        Event::Reroute => 7 << E,
        Event::FlowStart { .. } => 0,
    }
}

/// The order summary of an event (its order class and content summary: the low bits of its slot
/// key), computed ahead of scheduling: a port's TxDone and the arrivals of what it sends have
/// fixed summaries, which the simulator keeps beside the port ([`crate::link::TxPort::hints`])
/// so that scheduling them costs no computation ([`EventQueue::schedule_hinted`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OrderHint(u32);

/// The order summaries of a port's two recurring events ([`OrderHint`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortHints {
    /// Of the arrival (or loss) of its transmissions at the peer's port.
    pub arrive: OrderHint,
    /// Of its own `TxDone`.
    pub done: OrderHint,
}

/// How [`prefix`] summarizes (node, port) pairs: the node above `port_bits` bits of port,
/// exact when every node number fits with its ports in the 17 bits a class-2 entity has
/// (`mask` all ones), else left out (`mask` 0: every run of one picosecond and class is then
/// ordered by the full key — the same order, more slowly).
#[derive(Clone, Copy, Debug)]
struct Summary {
    port_bits: u32,
    mask: u32,
}

impl Summary {
    /// The summary for a network of `nodes` nodes with at most `ports` ports each.
    fn for_network(nodes: usize, ports: usize) -> Self {
        let bits = |n: usize| n.max(1).next_power_of_two().trailing_zeros();
        let port_bits = bits(ports);
        let fits = bits(nodes) + port_bits <= PREFIX_BITS - 3;
        Summary {
            port_bits: if fits { port_bits } else { 0 },
            mask: if fits {
                (1 << (PREFIX_BITS - 3)) - 1
            } else {
                0
            },
        }
    }
}

/// Full order key of a pending event: (time, class, content).
#[inline]
fn order(time_ps: u64, ev: &Event) -> (u64, u8, Tie) {
    (time_ps, class(ev), tie(ev))
}

/// The place of an event in the run's canonical order: its time, its order class, then its
/// content key ([`tie`]). Independent of how the run is executed, so the events of a run
/// split over several event queues ([`crate::sim::parallel`]) compare as they would in one.
/// (Two keys of different nodes never compare by their wrapping sequence numbers: those
/// only order arrivals at one port.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OrderKey(u64, u8, Tie);

impl OrderKey {
    /// The key of event `ev` due at `time_ps`.
    #[inline]
    pub fn of(time_ps: u64, ev: &Event) -> OrderKey {
        OrderKey(time_ps, class(ev), tie(ev))
    }

    /// The event's time, picoseconds.
    #[inline]
    pub fn time_ps(&self) -> u64 {
        self.0
    }
}

#[inline]
fn key(time_ps: u64, class: u8, seq: u64) -> u128 {
    ((time_ps as u128) << 64) | ((class as u128) << 62) | (seq as u128 & ((1u128 << 62) - 1))
}

#[inline]
fn key_time(k: u128) -> u64 {
    (k >> 64) as u64
}

/// A wheel-slot entry: the event and its order key within the slot's bucket, `(time mod
/// 2^SHIFT, class, content summary)` in [`slot_key`]'s layout (the bucket gives the rest of
/// the time). 20 bytes instead of the 24 of a full time: scheduling writes one into a slot
/// buffer that is often out of cache.
type Slotted = (u32, Event);

/// Bits of the order class in a slot key ([`class`] < 4).
const CLASS_BITS: u32 = 2;
/// Bits of the content summary ([`prefix`]) in a slot key.
const PREFIX_BITS: u32 = 20;
/// Shift of the time within the bucket in a slot key.
const TIME_AT: u32 = CLASS_BITS + PREFIX_BITS;
const _: () = assert!(SHIFT + TIME_AT == 32);

/// Order key of an event at `time_ps` within its bucket (see [`Slotted`]): time within the
/// bucket, order class, content summary — from the most significant bits down, so that keys
/// compare as the events' order does, except between events of equal summaries.
#[inline(always)]
fn slot_key(time_ps: u64, ev: &Event, s: Summary) -> u32 {
    (((time_ps & ((1 << SHIFT) - 1)) as u32) << TIME_AT) | hint_of(ev, s)
}

/// The low bits of [`slot_key`]: order class and content summary.
#[inline(always)]
fn hint_of(ev: &Event, s: Summary) -> u32 {
    (u32::from(class(ev)) << PREFIX_BITS) | prefix(ev, s)
}

/// Time within the bucket of a slot key, picoseconds.
#[inline(always)]
fn slot_time(k: u32) -> u64 {
    u64::from(k >> TIME_AT)
}

/// log2 of the width of one calendar bucket, picoseconds (2^10 ps ≈ 1 ns).
const SHIFT: u32 = 10;
/// Default log2 of the number of buckets in the wheel: horizon 2^21 ps ≈ 2.1 µs. Measured on
/// the default scenario: wider wheels cycle through more memory and get slower; events beyond
/// the horizon (timers, long links) wait in the overflow heap and stay correct.
const DEFAULT_WHEEL_BITS: u32 = 11;

/// Far-future entry for the overflow heap (min-heap by key).
#[derive(Clone, Copy)]
struct Far(u128, Event);
impl PartialEq for Far {
    fn eq(&self, o: &Self) -> bool {
        self.0 == o.0
    }
}
impl Eq for Far {}
impl PartialOrd for Far {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Far {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        o.0.cmp(&self.0)
    }
}

/// Future-event list with canonical tie-breaking on (time, class, content) ([`tie`]).
///
/// A calendar queue ("timing wheel"): time is cut into buckets of 2^10 ps (≈ 1 ns); the next
/// 2^11 … 2^16 buckets (a horizon of 2.1 … 67 µs, chosen by [`EventQueue::for_horizon`]) live
/// in a wheel of unsorted vectors (O(1) insertion), with a bitmap to skip empty buckets; events
/// further ahead wait in an overflow heap and move into the wheel as it turns.
/// The bucket being executed is sorted once by (time, class, content) and drained from its
/// end; events scheduled into it meanwhile are inserted in order. Packet events are almost all
/// within a few µs of now, so nearly every operation is O(1) on short vectors — several
/// times faster than a binary heap holding thousands of pending events.
#[derive(Clone)]
pub struct EventQueue {
    /// Current bucket, sorted by key descending (next event at the end).
    cur: Vec<(u64, Event)>,
    /// Absolute index of the current bucket (time >> SHIFT).
    cur_idx: u64,
    /// Wheel slot of the bucket after the current one when it started (`usize::MAX` = none);
    /// a prefetching hint only.
    next_hint: usize,
    /// Empty slot buffers with capacity, most recently drained last (hot in cache).
    spare: Vec<Vec<Slotted>>,
    /// Scratch of [`Self::load_bucket`]: the bucket's order keys.
    sort_keys: Vec<u64>,
    /// Scratch of [`Self::order_run`]: the content keys of a same-picosecond run.
    run_keys: Vec<Tie>,
    /// How scheduling summarizes an event's content key into its slot key ([`prefix`]).
    summary: Summary,
    /// Wheel slots for buckets `cur_idx + 1 ..= cur_idx + wheel_len - 1` (slot = index mod wheel_len).
    wheel: Vec<Vec<Slotted>>,
    /// Bit per slot: slot non-empty.
    bitmap: Vec<u64>,
    /// Number of wheel slots (a power of two) and mask.
    wheel_len: usize,
    /// Events whose bucket is beyond the wheel.
    overflow: std::collections::BinaryHeap<Far>,
    /// An event on its way off the wheel (time, event): [`Self::schedule`] writes it here and
    /// calls the out-of-line [`Self::schedule_off_wheel`], so no path takes the address of the
    /// caller's event (see [`Self::push_slot`]).
    staged: (u64, Event),
    /// Pairs of different events found with the same (time, class, content) key
    /// ([`Self::tie_collisions`]).
    tie_collisions: u64,
    len: usize,
    /// Scheduling counter: orders same-key entries of the overflow heap (a heap is not
    /// stable); the order of execution never depends on it.
    seq: u64,
    now_ps: u64,
    popped: u64,
    peak_len: usize,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl EventQueue {
    /// Empty queue at time 0 with the default 2.1 µs wheel.
    pub fn new() -> Self {
        Self::with_wheel_bits(DEFAULT_WHEEL_BITS)
    }

    /// Empty queue whose wheel covers at least `horizon_ps` (clamped to 2.1 µs … 67 µs): most
    /// events should fall within the horizon (e.g. twice the longest link delay).
    pub fn for_horizon(horizon_ps: u64) -> Self {
        let buckets = (horizon_ps >> SHIFT).max(1).next_power_of_two();
        let bits = buckets.trailing_zeros().clamp(DEFAULT_WHEEL_BITS, 16);
        Self::with_wheel_bits(bits)
    }

    fn with_wheel_bits(bits: u32) -> Self {
        let wheel_len = 1usize << bits;
        EventQueue {
            cur: Vec::new(),
            cur_idx: 0,
            spare: Vec::new(),
            sort_keys: Vec::new(),
            run_keys: Vec::new(),
            summary: Summary::for_network(usize::MAX, 1),
            next_hint: usize::MAX,
            wheel: (0..wheel_len).map(|_| Vec::new()).collect(),
            bitmap: vec![0; wheel_len / 64],
            wheel_len,
            overflow: Default::default(),
            staged: (0, Event::NicWake { node: 0 }),
            tie_collisions: 0,
            len: 0,
            seq: 0,
            now_ps: 0,
            popped: 0,
            peak_len: 0,
        }
    }

    /// This queue for events about a network of `nodes` nodes with at most `ports` ports each
    /// (every event's node and port below these): scheduling then writes a summary of each
    /// event's content key that includes its node and port into its slot key (`prefix`).
    /// Without it (or for a network too large for the summary: more than 2^17 (node, port)
    /// pairs) the summary leaves them out, and events of one picosecond, class and kind are
    /// ordered by their full content keys — the same order, more slowly. Call before
    /// scheduling.
    pub fn for_network(mut self, nodes: usize, ports: usize) -> Self {
        debug_assert!(self.len == 0, "events already scheduled");
        self.summary = Summary::for_network(nodes, ports);
        self
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
        self.len
    }

    /// Highest number of simultaneously pending events.
    pub fn peak_len(&self) -> usize {
        self.peak_len
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Pairs of *different* pending events found at the same picosecond with the same order
    /// class and content key ([`tie`]) when their bucket was sorted: their order would be
    /// arbitrary. Must stay 0 (the simulator's invariant check reports it).
    pub fn tie_collisions(&self) -> u64 {
        self.tie_collisions
    }

    /// Schedule `ev` at absolute time `time_ps` (must not be in the past).
    ///
    /// Inlined into the callers: the common case (a later bucket inside the wheel) is a few
    /// instructions; the others (the bucket being executed, the overflow heap) are out of line.
    #[inline(always)]
    pub fn schedule(&mut self, time_ps: u64, ev: Event) {
        let hint = OrderHint(hint_of(&ev, self.summary));
        self.schedule_keyed(time_ps, ev, hint);
    }

    /// The order summary of `ev` in this queue, for [`Self::schedule_hinted`].
    pub fn hint(&self, ev: &Event) -> OrderHint {
        OrderHint(hint_of(ev, self.summary))
    }

    /// The order summaries of port `port` of `node`, whose transmissions arrive at port
    /// `peer_port` of `peer`.
    pub fn port_hints(&self, node: u32, port: u16, peer: u32, peer_port: u16) -> PortHints {
        let arrive = Event::Arrive {
            node: peer,
            port: peer_port,
            pkt: 0,
            egress: NO_EGRESS,
            seq: 0,
        };
        PortHints {
            arrive: self.hint(&arrive),
            done: self.hint(&Event::TxDone { node, port }),
        }
    }

    /// [`Self::schedule`] with `ev`'s order summary computed beforehand: [`Self::hint`], or
    /// for a port's `TxDone` and the arrivals of its transmissions at its peer
    /// [`Self::port_hints`]. Any other hint makes events run out of order.
    #[inline(always)]
    pub fn schedule_hinted(&mut self, time_ps: u64, ev: Event, hint: OrderHint) {
        debug_assert_eq!(hint, self.hint(&ev), "wrong order hint for {ev:?}");
        self.schedule_keyed(time_ps, ev, hint);
    }

    /// [`Self::schedule`] with the order summary `hint` of `ev`.
    #[inline(always)]
    fn schedule_keyed(&mut self, time_ps: u64, ev: Event, hint: OrderHint) {
        debug_assert!(time_ps >= self.now_ps, "event scheduled in the past");
        self.seq += 1;
        self.len += 1;
        // A max, not a branch: the queue length rises and falls with every event, so a
        // "new peak?" branch is taken at random early in a run.
        self.peak_len = self.peak_len.max(self.len);
        let b = time_ps >> SHIFT;
        if b > self.cur_idx && b - self.cur_idx < self.wheel_len as u64 {
            let slot = (b as usize) & (self.wheel_len - 1);
            self.push_slot(slot, time_ps, ev, hint);
        } else {
            self.staged = (time_ps, ev);
            self.schedule_off_wheel(b);
        }
    }

    /// [`Self::schedule`] of the staged event ([`Self::staged`]), which falls in the bucket
    /// being executed or beyond the wheel (`b` = its bucket; `seq` and `len` already counted it).
    #[inline(never)]
    fn schedule_off_wheel(&mut self, b: u64) {
        let (time_ps, ev) = self.staged;
        if b <= self.cur_idx {
            // Into the bucket being executed (sorted by order key descending, next at the
            // end), at its place among the pending events. Its key may be below the one that
            // is executing (the same picosecond, content ordered before it): it then runs next.
            // The content key is computed only for the pending events of the same (time,
            // class), a few at most.
            let c = class(&ev);
            let k = tie(&ev);
            let pos = self
                .cur
                .partition_point(|e| match (e.0, class(&e.1)).cmp(&(time_ps, c)) {
                    std::cmp::Ordering::Equal => tie(&e.1) > k,
                    o => o == std::cmp::Ordering::Greater,
                });
            self.cur.insert(pos, (time_ps, ev));
        } else {
            self.overflow
                .push(Far(key(time_ps, class(&ev), self.seq), ev));
        }
    }

    /// Append to wheel slot `slot`, giving an empty slot the most recently drained buffer.
    ///
    /// Room is made first (a cold call) and the entry is then written in place, so the event's
    /// fields go from the caller's registers straight into the slot buffer: building the
    /// `(key, event)` pair on the stack and copying it (as `Vec::push` around its growth call
    /// does) reloads the freshly written fields with wider loads, which the CPU cannot forward
    /// from its store buffer (a stall of ~10–20 cycles per event, measured at ≈ 7 % of the
    /// fat-tree benchmark's samples).
    #[inline(always)]
    fn push_slot(&mut self, slot: usize, time_ps: u64, ev: Event, hint: OrderHint) {
        let v = &mut self.wheel[slot];
        if v.len() == v.capacity() {
            Self::make_room(v, &mut self.spare);
        }
        let at = v.len();
        let k = (((time_ps & ((1 << SHIFT) - 1)) as u32) << TIME_AT) | hint.0;
        // SAFETY: `make_room` left spare capacity, so slot `at` is inside the allocation and
        // unused; it is initialised by the write before the length covers it.
        unsafe {
            v.as_mut_ptr().add(at).write((k, ev));
            v.set_len(at + 1);
        }
        self.bitmap[slot >> 6] |= 1 << (slot & 63);
    }

    /// Gives the full (or unallocated) slot buffer `v` room for one more entry: an empty
    /// buffer takes the most recently drained one, else it grows (rare once the buffers have
    /// reached their working size).
    #[cold]
    #[inline(never)]
    fn make_room(v: &mut Vec<Slotted>, spare: &mut Vec<Vec<Slotted>>) {
        if v.capacity() == 0
            && let Some(b) = spare.pop()
        {
            *v = b;
        }
        v.reserve(1);
    }

    /// Schedule `ev` `delay_ps` after now. Saturates at `u64::MAX` instead of wrapping into the
    /// past (inputs are bounded so that this is never reached: times ≤ 1e7 s, delays ≤ 1 s).
    #[inline]
    pub fn schedule_in(&mut self, delay_ps: u64, ev: Event) {
        self.schedule(self.now_ps.saturating_add(delay_ps), ev);
    }

    /// Call `f` on every pending event with its time, picoseconds, in no particular order; `f`
    /// may change an event in place as long as its order class and content key ([`tie`]) stay
    /// the same (the order of pending events is kept: an arrival may become the loss of its
    /// packet at its receiving port). For rare whole-network changes (a link failure), not the
    /// hot path: it visits every pending event.
    pub fn for_each_pending_mut(&mut self, mut f: impl FnMut(u64, &mut Event)) {
        for (t, ev) in self.cur.iter_mut() {
            let k = order(*t, ev);
            f(*t, ev);
            assert_eq!(k, order(*t, ev), "an event changed its order key");
        }
        let len = self.wheel_len as u64;
        let summary = self.summary;
        for (slot, v) in self.wheel.iter_mut().enumerate() {
            // The bucket of this slot: the one after `cur_idx` congruent to it.
            let off = (slot as u64).wrapping_sub(self.cur_idx) & (len - 1);
            let base = (self.cur_idx + off) << SHIFT;
            for (k, ev) in v.iter_mut() {
                let t = base + slot_time(*k);
                f(t, ev);
                debug_assert_eq!(
                    *k,
                    slot_key(t, ev, summary),
                    "an event changed its order key"
                );
            }
        }
        let mut far = std::mem::take(&mut self.overflow).into_vec();
        for Far(k, ev) in far.iter_mut() {
            let c = class(ev);
            f(key_time(*k), ev);
            debug_assert_eq!(c, class(ev), "an event changed its order class");
        }
        self.overflow = far.into();
    }

    /// The next event and its time, if any (it stays queued).
    #[inline]
    pub fn peek(&mut self) -> Option<(u64, Event)> {
        if self.cur.is_empty() && !self.advance() {
            return None;
        }
        self.cur.last().copied()
    }

    /// Move the clock forward to `time_ps` (no earlier than now and than no pending event):
    /// a run split over several queues ends at the time of its last event in any of them.
    pub fn advance_clock(&mut self, time_ps: u64) {
        self.now_ps = self.now_ps.max(time_ps);
    }

    /// Count `events` executed and `collisions` key collisions ([`Self::tie_collisions`]) in
    /// other queues of the same run (a run split over several queues, merged for its
    /// outputs).
    pub fn count_events(&mut self, events: u64, collisions: u64) {
        self.popped += events;
        self.tie_collisions += collisions;
    }

    /// Time of the next event, if any.
    pub fn peek_time(&mut self) -> Option<u64> {
        if self.cur.is_empty() && !self.advance() {
            return None;
        }
        self.cur.last().map(|e| e.0)
    }

    /// First non-empty slot at or after `from` (wrapping), as an offset from `from`.
    fn next_slot(&self, from: usize) -> Option<usize> {
        let words = self.wheel_len / 64;
        let mut w = from >> 6;
        let mut mask = !0u64 << (from & 63);
        for i in 0..=words {
            let bits = self.bitmap[w] & mask;
            if bits != 0 {
                let slot = (w << 6) | bits.trailing_zeros() as usize;
                return Some((slot + self.wheel_len - from) & (self.wheel_len - 1));
            }
            w = (w + 1) % words;
            mask = !0;
            if i == words {
                break;
            }
        }
        None
    }

    /// Make `cur` hold the next non-empty bucket. Returns false when nothing is pending.
    fn advance(&mut self) -> bool {
        if self.len == 0 {
            return false;
        }
        let from = ((self.cur_idx + 1) as usize) & (self.wheel_len - 1);
        let next_idx = match self.next_slot(from) {
            Some(off) => self.cur_idx + 1 + off as u64,
            None => {
                // Wheel empty: jump to the overflow's first bucket.
                let Far(k, _) = *self.overflow.peek().expect("len > 0 but nothing pending");
                key_time(k) >> SHIFT
            }
        };
        // Overflow entries may belong before `next_idx` if the wheel was sparse; they are
        // pulled in below before we commit to the bucket.
        let mut target = next_idx;
        if let Some(Far(k, _)) = self.overflow.peek()
            && (key_time(*k) >> SHIFT) < target
        {
            target = key_time(*k) >> SHIFT;
        }
        self.cur_idx = target;
        // Move overflow entries that now fall inside the wheel horizon.
        while let Some(&Far(k, ev)) = self.overflow.peek() {
            let b = key_time(k) >> SHIFT;
            if b - self.cur_idx >= self.wheel_len as u64 {
                break;
            }
            self.overflow.pop();
            let slot = (b as usize) & (self.wheel_len - 1);
            let hint = self.hint(&ev);
            self.push_slot(slot, key_time(k), ev, hint);
        }
        let slot = (self.cur_idx as usize) & (self.wheel_len - 1);
        self.bitmap[slot >> 6] &= !(1 << (slot & 63));
        let mut v = std::mem::take(&mut self.wheel[slot]);
        self.load_bucket(&v);
        // The drained slot buffer is hot in cache: keep it for the next slot that starts
        // filling (LIFO), instead of parking it in a slot that is reused a whole rotation later.
        if v.capacity() > 0 {
            v.clear();
            self.spare.push(v);
        }
        // Remember the following bucket for `peek_ahead` (a hint: later insertions may land
        // before it).
        let from = ((self.cur_idx + 1) as usize) & (self.wheel_len - 1);
        self.next_hint = match self.next_slot(from) {
            Some(off) => (from + off) & (self.wheel_len - 1),
            None => usize::MAX,
        };
        // That bucket's entries were written over the last microseconds and are likely out of
        // L1: bring in its first lines for `peek_ahead` (the event loop's prefetching reads
        // past the end of this bucket) and for loading it next.
        if let Some(v) = self.wheel.get(self.next_hint) {
            let base = v.as_ptr() as *const u8;
            let bytes = (v.len() * std::mem::size_of::<Slotted>()).min(256);
            for off in (0..bytes).step_by(64) {
                prefetch(base.wrapping_add(off));
            }
        }
        true
    }

    /// Fill `cur` (empty) with the bucket `cur_idx`'s entries `v`, ordered by (time, class,
    /// content), next event last, with their full times.
    ///
    /// A slot entry's key holds (time within the bucket, class, content summary) ([`slot_key`],
    /// [`prefix`]); with the entry's position below it, one 64-bit key per entry orders the
    /// bucket. Those keys are sorted (unstable: they are distinct) and the entries gathered in
    /// reverse — cheaper than a sort of the entries, which took ≈ 9 % of a 512-host run whose
    /// buckets hold ~20 events. Entries whose slot keys are equal — events of one picosecond
    /// and class whose summaries do not tell them apart: flow timers, arrivals of one port —
    /// are then put in order by their full content key ([`tie`]), so the position
    /// (the scheduling order) decides nothing.
    fn load_bucket(&mut self, v: &[Slotted]) {
        let base = self.cur_idx << SHIFT;
        let full = |e: &Slotted| (base + slot_time(e.0), e.1);
        debug_assert!(self.cur.is_empty());
        let n = v.len();
        assert!(
            n <= u32::MAX as usize,
            "more than 2^32 events in one bucket"
        );
        self.sort_keys.clear();
        self.sort_keys.extend(
            v.iter()
                .enumerate()
                .map(|(i, e)| (u64::from(e.0) << 32) | i as u64),
        );
        self.sort_keys.sort_unstable();
        // Gathered in reverse; `same` notes whether two neighbours have equal slot keys (runs
        // to order by the full key below; most buckets have none).
        let mut prev = u64::MAX;
        let mut same = false;
        self.cur.extend(self.sort_keys.iter().rev().map(|&k| {
            same |= (k ^ prev) >> 32 == 0;
            prev = k;
            full(&v[k as u32 as usize])
        }));
        if !same {
            return;
        }
        // The runs: adjacent equal keys above the position (in `cur`, reversed).
        let mut i = 0;
        while i + 1 < n {
            let sk = self.sort_keys[i] >> 32;
            if self.sort_keys[i + 1] >> 32 != sk {
                i += 1;
                continue;
            }
            let mut j = i + 2;
            while j < n && self.sort_keys[j] >> 32 == sk {
                j += 1;
            }
            self.order_run(n - j, n - i);
            i = j;
        }
    }

    /// Put `cur[from..to]` (events of one picosecond and class) in content order, descending
    /// (the next event last), and count collisions. Each entry's content key is computed
    /// once: pairs (the common run) are compared directly, short runs insertion-sorted with
    /// their keys beside them, longer ones sorted as (key, entry) pairs.
    #[inline(never)]
    fn order_run(&mut self, from: usize, to: usize) {
        let run = &mut self.cur[from..to];
        if let [x, y] = run {
            let (a, b) = (tie(&x.1), tie(&y.1));
            match a.cmp(&b) {
                std::cmp::Ordering::Less => std::mem::swap(x, y),
                std::cmp::Ordering::Equal => self.tie_collisions += u64::from(x.1 != y.1),
                std::cmp::Ordering::Greater => {}
            }
            return;
        }
        let keys = &mut self.run_keys;
        keys.clear();
        keys.extend(run.iter().map(|e| tie(&e.1)));
        if run.len() <= 16 {
            for i in 1..run.len() {
                let (k, e) = (keys[i], run[i]);
                let mut j = i;
                while j > 0 && keys[j - 1] < k {
                    keys[j] = keys[j - 1];
                    run[j] = run[j - 1];
                    j -= 1;
                }
                keys[j] = k;
                run[j] = e;
            }
        } else {
            let mut pairs: Vec<(Tie, (u64, Event))> =
                keys.iter().copied().zip(run.iter().copied()).collect();
            pairs.sort_unstable_by_key(|q| std::cmp::Reverse(q.0));
            for (i, (k, e)) in pairs.into_iter().enumerate() {
                keys[i] = k;
                run[i] = e;
            }
        }
        for i in 1..run.len() {
            if keys[i - 1] == keys[i] && run[i - 1].1 != run[i].1 {
                self.tie_collisions += 1;
            }
        }
    }

    /// The event `k` places after the next one, if it is in the bucket being executed (for
    /// prefetching the state it will touch; never moves the queue).
    ///
    /// Past the end of the bucket it looks into the next non-empty bucket as it was when this
    /// bucket started (unsorted there, so only approximately the k-th next event).
    #[inline]
    pub fn peek_ahead(&self, k: usize) -> Option<&Event> {
        let n = self.cur.len();
        if k < n {
            Some(&self.cur[n - 1 - k].1)
        } else {
            self.wheel
                .get(self.next_hint)
                .and_then(|v| v.get(k - n))
                .map(|e| &e.1)
        }
    }

    /// Remove the next event if it is due at or before `limit_ps` (and advance the clock to
    /// it); `None` if nothing is pending or the next event is later (then it stays queued).
    #[inline]
    pub fn pop_until(&mut self, limit_ps: u64) -> Option<(u64, Event)> {
        if self.cur.is_empty() && !self.advance() {
            return None;
        }
        let &(t, ev) = self.cur.last().expect("advance filled the bucket");
        if t > limit_ps {
            return None;
        }
        self.cur.pop();
        self.len -= 1;
        self.now_ps = t;
        self.popped += 1;
        Some((t, ev))
    }

    /// Remove the next event and advance the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, Event)> {
        if self.cur.is_empty() && !self.advance() {
            return None;
        }
        let (t, ev) = self.cur.pop().expect("advance filled the bucket");
        self.len -= 1;
        self.now_ps = t;
        self.popped += 1;
        Some((t, ev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_is_time_then_content() {
        let mut q = EventQueue::new();
        q.schedule(5, Event::NicWake { node: 3 });
        q.schedule(3, Event::NicWake { node: 4 });
        q.schedule(5, Event::NicWake { node: 1 });
        q.schedule(3, Event::NicWake { node: 2 });
        let order: Vec<u32> = std::iter::from_fn(|| q.pop())
            .map(|(_, e)| match e {
                Event::NicWake { node } => node,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(order, vec![2, 4, 1, 3]);
        assert_eq!(q.now(), 5);
        assert_eq!(q.events(), 4);
        assert_eq!(q.tie_collisions(), 0);
    }

    #[test]
    fn same_instant_order_is_class_then_kind_then_entity() {
        // Scheduled in the reverse of the expected order, all at one picosecond.
        let want = [
            Event::Arrive {
                node: 1,
                port: 0,
                pkt: 9,
                egress: 3,
                seq: 0,
            },
            Event::Lost {
                node: 1,
                port: 0,
                at_sender: true,
                seq: 0,
                pkt: 4,
            },
            Event::Arrive {
                node: 1,
                port: 2,
                pkt: 7,
                egress: 0,
                seq: 0,
            },
            Event::Arrive {
                node: 2,
                port: 0,
                pkt: 1,
                egress: 0,
                seq: 0,
            },
            Event::FlowStart { flow: 8 },
            Event::TxDone { node: 0, port: 5 },
            Event::TxDone { node: 3, port: 1 },
            Event::NicWake { node: 2 },
            Event::SchemeTimer {
                node: 2,
                port: 1,
                scheme: 0,
                which: 1,
                arg: 0,
            },
            Event::Rto { flow: 0 },
            Event::CcTimer { flow: 0, which: 1 },
            Event::CnpDue {
                flow: 0,
                marked: false,
            },
            Event::LinkChange { event: 0 },
            Event::Reroute,
        ];
        let mut q = EventQueue::new();
        for ev in want.iter().rev() {
            q.schedule(7_000, *ev);
        }
        let got: Vec<Event> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(got, want);
        assert_eq!(q.tie_collisions(), 0);
    }

    #[test]
    fn arrivals_of_one_picosecond_at_one_port_keep_the_sending_order() {
        // A frame with zero serialization time arrives with the packet sent before it: the
        // sending port's sequence numbers order them, across the counter's wrap.
        let mut q = EventQueue::new();
        for seq in [1u16, 65_535, 0] {
            q.schedule(
                9_000,
                Event::Arrive {
                    node: 2,
                    port: 3,
                    pkt: u32::from(seq),
                    egress: 0,
                    seq,
                },
            );
        }
        let got: Vec<u16> = std::iter::from_fn(|| q.pop())
            .map(|(_, e)| match e {
                Event::Arrive { seq, .. } => seq,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(got, vec![65_535, 0, 1]);
        assert_eq!(q.tie_collisions(), 0);
    }

    #[test]
    fn hinted_arrivals_of_one_port_and_picosecond_keep_the_sending_order() {
        // Through a port's hints (a network small enough for exact summaries, so that the two
        // arrivals have equal slot keys): a transmission that took no time arrives in the
        // picosecond of the one before it; the bucket orders the two by sequence number,
        // whichever was scheduled first.
        for order in [[0usize, 1], [1, 0]] {
            let mut q = EventQueue::new().for_network(8, 4);
            let hints = q.port_hints(1, 2, 5, 3);
            let arrival = |seq: u16| Event::Arrive {
                node: 5,
                port: 3,
                pkt: u32::from(seq),
                egress: NO_EGRESS,
                seq,
            };
            for i in order {
                // seq 7 took its serialization; seq 8, the next, took none.
                q.schedule_hinted(4_000, arrival([7, 8][i]), hints.arrive);
            }
            q.schedule_hinted(4_000, Event::TxDone { node: 1, port: 2 }, hints.done);
            let got: Vec<Event> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
            assert_eq!(
                got,
                vec![arrival(7), arrival(8), Event::TxDone { node: 1, port: 2 }]
            );
            assert_eq!(q.tie_collisions(), 0);
        }
    }

    #[test]
    fn hints_match_the_summaries_of_plain_scheduling() {
        // A port's hints are the summaries `schedule` computes.
        let q = EventQueue::new().for_network(300, 40);
        let h = q.port_hints(17, 33, 250, 2);
        let arrival = Event::Arrive {
            node: 250,
            port: 2,
            pkt: 0,
            egress: NO_EGRESS,
            seq: 0,
        };
        assert_eq!(h.arrive, q.hint(&arrival));
        assert_eq!(h.done, q.hint(&Event::TxDone { node: 17, port: 33 }));
        // Too large for exact summaries: no node or port in them.
        let big = EventQueue::new().for_network(1 << 20, 64);
        assert_eq!(big.port_hints(17, 33, 250, 2), big.port_hints(3, 1, 9, 0));
    }

    #[test]
    fn different_events_with_one_key_are_counted() {
        // Two arrivals at one port in one picosecond with one sequence number cannot happen
        // in a run (the sending port numbers its transmissions); if they did, their order
        // would be arbitrary: counted.
        let mut q = EventQueue::new();
        for pkt in [1, 2] {
            q.schedule(
                5_000,
                Event::Arrive {
                    node: 4,
                    port: 1,
                    pkt,
                    egress: 0,
                    seq: 0,
                },
            );
        }
        // Identical events are interchangeable: not counted.
        q.schedule(5_000, Event::NicWake { node: 1 });
        q.schedule(5_000, Event::NicWake { node: 1 });
        while q.pop().is_some() {}
        assert_eq!(q.tie_collisions(), 1);
    }

    /// A random pending event (of any kind, about a small set of nodes and flows, so that
    /// same-instant events of one kind are common).
    fn random_event(rng: &mut crate::rng::Rng) -> Event {
        let node = rng.below(6) as u32;
        let port = rng.below(4) as u16;
        let flow = rng.below(6) as u32;
        match rng.below(10) {
            0 | 1 => Event::Arrive {
                node,
                port,
                pkt: rng.below(1000) as u32,
                egress: 0,
                seq: 0,
            },
            2 => Event::FlowStart { flow },
            3 | 4 => Event::TxDone { node, port },
            5 => Event::NicWake { node },
            6 => Event::SchemeTimer {
                node,
                port,
                scheme: 1,
                which: rng.below(2) as u8,
                arg: 0,
            },
            7 => Event::Rto { flow },
            8 => Event::CcTimer {
                flow,
                which: rng.below(2) as u8,
            },
            _ => Event::CnpDue {
                flow,
                marked: rng.below(2) == 0,
            },
        }
    }

    /// What a deterministic handler schedules when `ev` runs at `t`: 0–2 events, some in the
    /// same picosecond (zero delay), derived from the event alone.
    fn reactions(t: u64, ev: &Event) -> Vec<(u64, Event)> {
        let k = tie(ev);
        let h = t.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ k.head << 7 ^ k.sub;
        let mut out = Vec::new();
        // Zero-delay wake-ups come from other kinds only (a wake-up waking another at the
        // same instant could chain forever).
        if h.is_multiple_of(3) && !matches!(ev, Event::NicWake { .. }) {
            out.push((
                t,
                Event::NicWake {
                    node: (h >> 8) as u32 % 6,
                },
            ));
        }
        if h % 5 < 2 && t < 400_000 {
            out.push((
                t + 1_000 * (1 + (h >> 16) % 40),
                Event::Rto {
                    flow: (h >> 24) as u32 % 6,
                },
            ));
        }
        out
    }

    /// Run a model network: `initial` events scheduled in the given order, each popped event's
    /// [`reactions`] scheduled as it runs. Returns the executed (time, event) sequence with
    /// packet slots blanked (they name storage, not identity).
    fn run_model(initial: &[(u64, Event)]) -> Vec<(u64, Event)> {
        let mut q = EventQueue::new();
        for &(t, ev) in initial {
            q.schedule(t, ev);
        }
        let mut out = Vec::new();
        while let Some((t, mut ev)) = q.pop() {
            for (rt, rev) in reactions(t, &ev) {
                q.schedule(rt, rev);
            }
            if let Event::Arrive { pkt, .. } = &mut ev {
                *pkt = 0;
            }
            out.push((t, ev));
        }
        assert_eq!(q.tie_collisions(), 0);
        out
    }

    #[test]
    fn execution_order_does_not_depend_on_scheduling_order() {
        // The same events (many at the same picosecond), scheduled in different orders and
        // with different packet slots, must execute in the same order, including the events
        // their handlers schedule into the bucket being executed.
        let mut rng = crate::rng::Rng::new(17);
        let mut events = Vec::new();
        let mut seen = std::collections::HashSet::new();
        while events.len() < 3_000 {
            let t = rng.below(200) * 1_000 + rng.below(3) * 1_500_000;
            let ev = random_event(&mut rng);
            // One arrival per (time, port), as a serializing link delivers.
            if seen.insert((t, tie(&ev))) {
                events.push((t, ev));
            }
        }
        let reference = run_model(&events);
        for round in 0..4u64 {
            let mut shuffled = events.clone();
            let mut r = crate::rng::Rng::new(100 + round);
            for i in (1..shuffled.len()).rev() {
                shuffled.swap(i, r.below(i as u64 + 1) as usize);
            }
            for (_, ev) in shuffled.iter_mut() {
                if let Event::Arrive { pkt, .. } = ev {
                    *pkt = r.below(1 << 20) as u32;
                }
            }
            assert!(run_model(&shuffled) == reference, "round {round}");
        }
    }

    #[test]
    fn matches_reference_model() {
        // Mixed near/far events (incl. beyond the wheel horizon and at the same instant) of
        // all three order classes, interleaved with pops: the output must equal a sorted
        // (time, class, content) reference exactly, including events that waited in the
        // overflow heap (ids grow with scheduling: content order is scheduling order).
        for bits in [11u32, 14] {
            let mut rng = crate::rng::Rng::new(bits as u64);
            let mut q = EventQueue::with_wheel_bits(bits);
            let mut pending = std::collections::BTreeSet::new();
            let mut id = 0u32;
            for step in 0..200_000 {
                if rng.below(2) == 0 || pending.is_empty() {
                    let d = match rng.below(10) {
                        0 => 0,
                        1 => rng.below(5_000_000_000), // far: up to 5 ms
                        2 => rng.below(200_000_000),   // beyond a small wheel
                        _ => rng.below(3_000_000),
                    };
                    let t = q.now() + d;
                    id += 1;
                    let c = rng.below(3) as u8;
                    q.schedule(t, test_event(c, id));
                    pending.insert((t, c, id));
                } else {
                    let (t, e) = q.pop().unwrap();
                    let first = *pending.iter().next().unwrap();
                    assert_eq!((t, class(&e), test_id(&e)), first, "step {step}");
                    pending.remove(&first);
                }
                assert_eq!(q.len(), pending.len());
            }
            while let Some((t, e)) = q.pop() {
                let first = *pending.iter().next().unwrap();
                assert_eq!((t, class(&e), test_id(&e)), first);
                pending.remove(&first);
            }
            assert!(pending.is_empty());
        }
    }

    /// An event of order class `c` (0 arrival, 1 flow start, 2 other) carrying `id`.
    fn test_event(c: u8, id: u32) -> Event {
        match c {
            0 => Event::Arrive {
                node: id,
                port: 0,
                pkt: 0,
                egress: 0,
                seq: 0,
            },
            1 => Event::FlowStart { flow: id },
            _ => Event::NicWake { node: id },
        }
    }

    /// The id [`test_event`] put in.
    fn test_id(e: &Event) -> u32 {
        match *e {
            Event::Arrive { node, .. } | Event::NicWake { node } => node,
            Event::FlowStart { flow } => flow,
            _ => unreachable!(),
        }
    }

    #[test]
    fn an_event_scheduled_after_pop_until_stopped_short_comes_first() {
        // `pop_until` loads the next non-empty bucket (time 50 ns) and leaves it queued; an
        // event then scheduled between now (10 ns) and it must still pop first.
        let mut q = EventQueue::new();
        q.schedule(10_000, Event::NicWake { node: 1 });
        q.schedule(50_000, Event::NicWake { node: 2 });
        assert!(q.pop_until(20_000).is_some());
        assert!(q.pop_until(20_000).is_none());
        q.schedule(30_000, Event::NicWake { node: 3 });
        q.schedule(
            50_000,
            Event::Arrive {
                node: 4,
                port: 0,
                pkt: 0,
                egress: 0,
                seq: 0,
            },
        );
        let order: Vec<(u64, u32)> = std::iter::from_fn(|| q.pop())
            .map(|(t, e)| (t, test_id(&e)))
            .collect();
        assert_eq!(order, vec![(30_000, 3), (50_000, 4), (50_000, 2)]);
    }

    #[test]
    fn a_million_events_in_one_bucket_keep_the_order() {
        // 2^20 + 5 events in one 1 ns bucket, most with entity numbers beyond the exact range
        // of the content summary (`prefix` saturates: they are ordered by the full key), and
        // every flow start with a summary of 0: the same (time, class, content) order.
        let mut q = EventQueue::new();
        let n = (1u32 << 20) + 5;
        let mut rng = crate::rng::Rng::new(3);
        let mut reference = Vec::with_capacity(n as usize);
        for id in 0..n {
            let t = 5_000 + rng.below(4);
            let c = rng.below(3) as u8;
            q.schedule(t, test_event(c, id));
            reference.push((t, c, id));
        }
        reference.sort();
        let got: Vec<(u64, u8, u32)> = std::iter::from_fn(|| q.pop())
            .map(|(t, e)| (t, class(&e), test_id(&e)))
            .collect();
        assert!(got == reference, "order differs");
    }

    #[test]
    fn dense_buckets_keep_time_class_then_content_order() {
        // Hundreds of events per bucket, many at the same instant, arrivals, flow starts and
        // others mixed: order must be (time, class, content); ids grow with scheduling, so
        // the content order is also the scheduling order here.
        let mut rng = crate::rng::Rng::new(9);
        let mut q = EventQueue::new();
        let mut reference = Vec::new();
        let mut id = 0u32;
        for round in 0..50u64 {
            let base = q.now() + 5_000;
            for _ in 0..400 {
                id += 1;
                // Few distinct instants (ties), spread over ~3 buckets.
                let t = base + rng.below(24) * 128;
                // Classes: arrival (0), flow start (1), anything else (2).
                let class = rng.below(3) as u8;
                q.schedule(t, test_event(class, id));
                reference.push((t, class, id));
            }
            reference.sort();
            // Drain about half, then schedule more on top (insertions into a running bucket).
            let keep = if round % 2 == 0 {
                reference.len() / 2
            } else {
                0
            };
            while reference.len() > keep {
                let (t, e) = q.pop().unwrap();
                let want = reference.remove(0);
                assert_eq!((t, test_id(&e)), (want.0, want.2), "round {round}");
            }
        }
    }

    #[test]
    fn heap_matches_sorting() {
        // Random schedule/pop interleavings must pop in (time, content) order (flow starts
        // with growing flow ids: the scheduling order).
        let mut rng = crate::rng::Rng::new(3);
        let mut q = EventQueue::new();
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut next_id = 0u64;
        let mut out = Vec::new();
        for _ in 0..20_000 {
            if rng.below(3) > 0 || q.is_empty() {
                let t = q.now() + rng.below(50);
                next_id += 1;
                reference.push((t, next_id));
                q.schedule(
                    t,
                    Event::FlowStart {
                        flow: next_id as u32,
                    },
                );
            } else {
                let (t, e) = q.pop().unwrap();
                let Event::FlowStart { flow } = e else {
                    unreachable!()
                };
                out.push((t, flow as u64));
            }
        }
        while let Some((t, Event::FlowStart { flow })) = q.pop() {
            out.push((t, flow as u64));
        }
        // Every popped event is the minimum of what was pending: verify global properties.
        assert_eq!(out.len(), reference.len());
        for w in out.windows(2) {
            assert!(w[0].0 <= w[1].0);
            if w[0].0 == w[1].0 {
                assert!(w[0].1 < w[1].1, "content order among equal times");
            }
        }
    }

    #[test]
    fn event_is_small() {
        // Wheel-slot entries are (in-bucket key, event): 20 bytes; the current bucket's
        // (time, event): 24.
        assert!(std::mem::size_of::<Event>() <= 16);
        assert!(std::mem::size_of::<(u64, Event)>() <= 24);
        assert_eq!(std::mem::size_of::<Slotted>(), 20);
    }
}
