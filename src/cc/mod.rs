//! Congestion control: each controller is a per-QP state machine behind
//! [`CongestionControl`], fed by the NIC with ACK/NACK/timeout/feedback events and queried for
//! the pacing rate and window. Controllers do no I/O and know nothing of the simulator, so each
//! is unit-tested in isolation (feed ACKs, check rate/window).
//!
//! The simulator dispatches through enums (no `Box<dyn>` on the hot path): [`Cc`] owns a
//! controller of any kind, [`CcMut`] / [`CcRef`] borrow one from the [`CcSlab`], which stores
//! each run's controllers in a vector of their own type. Adding a controller = one file here
//! (its constants, its state and `split_controller!` for its views) + one variant in [`Cc`],
//! [`CcRef`], [`CcMut`], the slab's store and [`CcConfig`].

/// The parts of a controller split into shared constants and per-flow state (see
/// [`CcSlab`]): what the slab needs to store and rebuild it.
pub trait Split: Sized {
    /// Its constants, shared by every QP with the same parameters, line rate and BDP.
    type Const: PartialEq + std::fmt::Debug + Clone;
    /// Its per-QP state.
    type State: std::fmt::Debug + Clone;
    /// Its constants and its state.
    fn into_parts(self) -> (Self::Const, Self::State);
    /// Built from its constants and state.
    fn from_parts(k: Self::Const, s: Self::State) -> Self;
    /// What tells constants of one run apart (the rest comes from the run's one parameter
    /// set).
    fn key(k: &Self::Const) -> (u64, u64, u64, u64);
    /// Index of the state's constants in the slab that stores it.
    fn const_index(s: &Self::State) -> u32;
    /// Set the index of the state's constants in the slab that stores it.
    fn set_const_index(s: &mut Self::State, k: u32);
}

/// Declares, in a controller's module, what every split controller has: the owning type
/// `$own { k: $k, s: $s }`'s [`Split`] and views, and the borrowed views `$mut` / `$ref` the
/// slab hands out. `$s` has a `k: u32` field (its constants' index); `$k` has a `key()`.
macro_rules! split_controller {
    ($own:ident, $k:ident, $s:ident, $mut:ident, $ref:ident, $what:literal) => {
        #[doc = concat!("A ", $what, " stored in a slab: its state, mutably, and its shared constants.")]
        #[derive(Debug)]
        pub struct $mut<'a> {
            /// The constants.
            pub k: &'a $k,
            /// The QP's state.
            pub s: &'a mut $s,
        }

        #[doc = concat!("A ", $what, " stored in a slab, borrowed.")]
        #[derive(Clone, Copy, Debug)]
        pub struct $ref<'a> {
            /// The constants.
            pub k: &'a $k,
            /// The QP's state.
            pub s: &'a $s,
        }

        impl $crate::cc::Split for $own {
            type Const = $k;
            type State = $s;
            fn into_parts(self) -> ($k, $s) {
                (self.k, self.s)
            }
            fn from_parts(k: $k, s: $s) -> Self {
                $own { k, s }
            }
            fn key(k: &$k) -> (u64, u64, u64, u64) {
                k.key()
            }
            fn const_index(s: &$s) -> u32 {
                s.k
            }
            fn set_const_index(s: &mut $s, k: u32) {
                s.k = k;
            }
        }

        impl $own {
            /// Borrowed as a slab entry.
            pub fn view(&self) -> $ref<'_> {
                $ref {
                    k: &self.k,
                    s: &self.s,
                }
            }

            /// Mutably borrowed as a slab entry.
            pub fn view_mut(&mut self) -> $mut<'_> {
                $mut {
                    k: &self.k,
                    s: &mut self.s,
                }
            }
        }

        impl $mut<'_> {
            /// Borrowed read-only.
            #[inline]
            fn r(&self) -> $ref<'_> {
                $ref {
                    k: self.k,
                    s: self.s,
                }
            }
        }
    };
}

pub mod dcqcn;
pub mod dctcp;
pub mod hold;
pub mod hpcc;
pub mod none;
pub mod timely;

use crate::engine::packet::{IntHop, Marks};

/// What the NIC learned from one ACK or NACK.
#[derive(Clone, Copy, Debug)]
pub struct AckInfo<'a> {
    /// Arrival time at the sender, picoseconds.
    pub now_ps: u64,
    /// Cumulative acknowledgement (next byte the receiver expects).
    pub ack_seq: u64,
    /// Bytes newly acknowledged cumulatively by this ACK.
    pub newly_acked_bytes: u64,
    /// Next byte the sender would send.
    pub snd_nxt: u64,
    /// The acknowledged data packet was ECN-marked (CE echo).
    pub ce_echo: bool,
    /// The scheme marks the ACK echoes from the data packet ([`crate::registry::ECHOED_MARKS`]:
    /// TCD's UE, never together with `ce_echo`).
    pub marks: Marks,
    /// RTT sample: now − the echoed send time of the data packet, picoseconds.
    pub rtt_ps: u64,
    /// This was a NACK.
    pub nack: bool,
    /// INT records echoed from the data packet (empty without INT).
    pub int: &'a [IntHop],
}

/// What a scheme tells a QP's congestion controller
/// ([`CongestionControl::on_scheme_signal`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemeSignal {
    /// A CNP echoing scheme marks instead of CE (the marked variant): TCD's UE CNP — the
    /// flow crosses a port in the undetermined state ([`hold`]).
    /// Controllers that do not react to these marks ignore it.
    Marked(Marks),
    /// Make this the current sending rate, bits per second, as a rate-initialization scheme
    /// (PB-FS) corrects a line-rate start; the controller carries on from it under its own
    /// rules. Each controller clamps it to its own [min, line] range and sets the state its
    /// rate derives from: DCQCN a cut without a CNP (R_C = rate, R_T the rate before,
    /// recovery restarted: [`dcqcn::DcqcnMut::set_rate`]); TIMELY and DCTCP the rate; HPCC
    /// W = W^c (and each hop's W^c) = rate × D / line; the line-rate controller the rate.
    SetRate(u64),
}

/// A per-QP congestion controller.
pub trait CongestionControl {
    /// Process an ACK (or a NACK: `info.nack`).
    fn on_ack(&mut self, info: &AckInfo<'_>);
    /// The retransmission timer fired.
    fn on_timeout(&mut self, _now_ps: u64) {}
    /// Explicit congestion feedback that is not an ACK (e.g. a DCQCN CNP).
    fn on_feedback(&mut self, _now_ps: u64) {}
    /// One of the controller's own timers fired (`which` as returned by [`Self::next_timer`]).
    fn on_timer(&mut self, _now_ps: u64, _which: u8) {}
    /// Earliest pending timer of the controller, if any: (absolute time ps, which).
    fn next_timer(&self) -> Option<(u64, u8)> {
        None
    }
    /// The NIC sent a data packet of `bytes` wire bytes.
    fn on_send(&mut self, _now_ps: u64, _bytes: u64) {}
    /// Current pacing rate, bits per second.
    fn rate_bps(&self) -> u64;
    /// Current window (bytes of payload in flight); `u64::MAX` = no window.
    fn window_bytes(&self) -> u64;
    /// A scheme's signal to this QP's controller (TCD's UE CNP, PB-FS's rate): the one way
    /// schemes reach controllers; each controller decides how it reacts ([`SchemeSignal`]).
    fn on_scheme_signal(&mut self, _now_ps: u64, _signal: SchemeSignal) {}
    /// Whether a rate change also moves the already-computed next send time (HPCC-sim does
    /// this only for HPCC: `nextAvail += tx(last, new) − tx(last, old)`).
    fn adjusts_pacing(&self) -> bool {
        false
    }
}

/// Which controller to run, with its parameters (selectable from TOML and `CC_MODE`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub enum CcConfig {
    /// Line rate, optional fixed window.
    None(none::NoneParams),
    /// DCQCN (HPCC-sim Mellanox variant or the paper's), optionally with a window (DCQCN+W).
    Dcqcn(dcqcn::DcqcnParams),
    /// DCTCP for RDMA (HPCC-sim's rate-based hardware DCTCP).
    Dctcp(dctcp::DctcpParams),
    /// HPCC (paper Algorithm 1, or HPCC-sim's rate-based formulation).
    Hpcc(hpcc::HpccParams),
    /// TIMELY, optionally with a window (TIMELY+W).
    Timely(timely::TimelyParams),
}

impl CcConfig {
    /// No congestion control and no window: flows send at line rate.
    pub fn none_unlimited() -> CcConfig {
        CcConfig::None(none::NoneParams {
            window: none::NoneWindow::Unlimited,
        })
    }

    /// Short name for reports.
    pub fn name(&self) -> &'static str {
        match self {
            CcConfig::None(_) => "none",
            CcConfig::Dcqcn(p) if p.has_win => "dcqcn+w",
            CcConfig::Dcqcn(_) => "dcqcn",
            CcConfig::Dctcp(_) => "dctcp",
            CcConfig::Hpcc(_) => "hpcc",
            CcConfig::Timely(p) if p.has_win => "timely+w",
            CcConfig::Timely(_) => "timely",
        }
    }

    /// Instantiate a controller for one QP on a NIC of `line_rate_bps`. `base_rtt_ps` and
    /// `bdp_bytes` are the (global, HPCC `GLOBAL_T 1`) base RTT and BDP.
    pub fn build(&self, line_rate_bps: u64, base_rtt_ps: u64, bdp_bytes: u64) -> Cc {
        match self {
            CcConfig::None(p) => Cc::None(none::NoneCc::new(p, line_rate_bps, bdp_bytes)),
            CcConfig::Dcqcn(p) => Cc::Dcqcn(dcqcn::Dcqcn::new(p, line_rate_bps, bdp_bytes)),
            CcConfig::Dctcp(p) => Cc::Dctcp(dctcp::Dctcp::new(p, line_rate_bps, bdp_bytes)),
            CcConfig::Hpcc(p) => {
                Cc::Hpcc(hpcc::Hpcc::new(p, line_rate_bps, base_rtt_ps, bdp_bytes))
            }
            CcConfig::Timely(p) => Cc::Timely(timely::Timely::new(p, line_rate_bps, bdp_bytes)),
        }
    }
}

/// A flow without controller state (not started, or finished).
pub const NO_SLOT: u32 = u32::MAX;

/// Controller state of the active flows (started, not finished): a slot each, taken at flow
/// start and recycled (LIFO, deterministic) at completion, so this memory follows the number of
/// flows active at once, not the number in the run. A finished flow has no controller.
///
/// Slots are stored per kind: a run's controllers are all of its one [`CcConfig`]'s kind, so
/// the slab holds a vector of that controller's own state type, sized by it, not by the
/// largest controller (the [`Cc`] enum, 416 B: an owning HPCC; the slab's slots were that
/// enum, 408 B, before the split). A controller's constants (its
/// parameters and what derives from the line rate and BDP) are kept once per distinct line
/// rate and BDP — one set on a uniform network — and each slot names its set: per flow,
/// 16 B for no CC (all constants), 56 B for DCTCP and TIMELY, 144 B for DCQCN, 312 B for
/// HPCC (its stored INT records). Storing a controller of another kind (not done by the
/// simulator) turns the slab into one of [`Cc`] values, which holds any mix.
#[derive(Clone, Debug, Default)]
pub struct CcSlab {
    store: Store,
    free: Vec<u32>,
    /// One bit per slot: set while the slot is allocated, so that a slot given back twice
    /// (two flows then sharing one controller, silently) stops the run instead.
    in_use: Vec<u64>,
    /// Most slots ever in use (kept when [`Self::release_memory`] drops them).
    peak: usize,
}

/// The slots of a [`CcSlab`], typed by the kind of controller they hold.
#[derive(Clone, Debug, Default)]
enum Store {
    /// Nothing stored yet (the kind is set by the first controller).
    #[default]
    Empty,
    /// The line-rate controller (16 B: its slot is all constants).
    None(Vec<none::NoneCc>),
    Dcqcn(Shared<dcqcn::Dcqcn>),
    Dctcp(Shared<dctcp::Dctcp>),
    Hpcc(Shared<hpcc::Hpcc>),
    Timely(Shared<timely::Timely>),
    /// Controllers of several kinds.
    Mixed(Vec<Cc>),
}

/// The slots of one split controller kind ([`Split`]): each distinct set of constants once,
/// and a state per slot naming its set.
#[derive(Clone, Debug)]
struct Shared<C: Split> {
    consts: Vec<C::Const>,
    /// [`Split::key`] → index in `consts` (a lookup per flow start, however many distinct
    /// line rates and path BDPs the run has).
    index: std::collections::HashMap<(u64, u64, u64, u64), u32>,
    slots: Vec<C::State>,
}

impl<C: Split> Default for Shared<C> {
    fn default() -> Self {
        Shared {
            consts: Vec::new(),
            index: Default::default(),
            slots: Vec::new(),
        }
    }
}

impl<C: Split> Shared<C> {
    /// Stores `c` at slot `at` (or a new one); returns the slot.
    fn put(&mut self, at: Option<u32>, c: C) -> u32 {
        let (k, mut st) = c.into_parts();
        let ki = shared_index(&mut self.consts, &mut self.index, C::key(&k), k);
        C::set_const_index(&mut st, ki);
        put(&mut self.slots, at, st)
    }

    /// Slot `i`'s constants and state.
    #[inline(always)]
    fn parts(&self, i: usize) -> (&C::Const, &C::State) {
        let s = &self.slots[i];
        (&self.consts[C::const_index(s) as usize], s)
    }

    /// Slot `i`'s constants and state, mutably.
    #[inline(always)]
    fn parts_mut(&mut self, i: usize) -> (&C::Const, &mut C::State) {
        let s = &mut self.slots[i];
        (&self.consts[C::const_index(s) as usize], s)
    }

    /// Every slot as an owning controller.
    fn into_owned(self) -> impl Iterator<Item = C> {
        let consts = self.consts;
        self.slots
            .into_iter()
            .map(move |s| C::from_parts(consts[C::const_index(&s) as usize].clone(), s))
    }
}

/// Index of constants `k` (whose key is `key`) in `consts`, added if new: one set per
/// distinct key. A key that matches constants that differ otherwise (not possible within one
/// run's parameters) just gets its own set: sharing is an economy, never a change of values.
/// Constants are compared bit for bit (their `Debug` form when `==` cannot tell: a NaN
/// parameter is never equal to itself, and would otherwise get a new set at every flow start).
fn shared_index<K: PartialEq + std::fmt::Debug>(
    consts: &mut Vec<K>,
    index: &mut std::collections::HashMap<(u64, u64, u64, u64), u32>,
    key: (u64, u64, u64, u64),
    k: K,
) -> u32 {
    if let Some(&ki) = index.get(&key) {
        let c = &consts[ki as usize];
        #[allow(clippy::eq_op)] // `k != k`: constants holding a NaN
        let same = *c == k || (k != k && format!("{c:?}") == format!("{k:?}"));
        if same {
            return ki;
        }
    }
    index.insert(key, consts.len() as u32);
    consts.push(k);
    (consts.len() - 1) as u32
}

/// [`CcSlab::get`] of a slot of a slab of several kinds.
#[cold]
#[inline(never)]
fn mixed_ref(c: &Cc) -> CcRef<'_> {
    match c {
        Cc::None(c) => CcRef::None(c),
        Cc::Dcqcn(c) => CcRef::Dcqcn(c.view()),
        Cc::Dctcp(c) => CcRef::Dctcp(c.view()),
        Cc::Hpcc(c) => CcRef::Hpcc(c.view()),
        Cc::Timely(c) => CcRef::Timely(c.view()),
    }
}

/// [`CcSlab::get_mut`] of a slot of a slab of several kinds.
#[cold]
#[inline(never)]
fn mixed_mut(c: &mut Cc) -> CcMut<'_> {
    match c {
        Cc::None(c) => CcMut::None(c),
        Cc::Dcqcn(c) => CcMut::Dcqcn(c.view_mut()),
        Cc::Dctcp(c) => CcMut::Dctcp(c.view_mut()),
        Cc::Hpcc(c) => CcMut::Hpcc(c.view_mut()),
        Cc::Timely(c) => CcMut::Timely(c.view_mut()),
    }
}

/// A slot asked of a slab that holds none: a bug of the caller (slots come from `alloc`).
#[cold]
#[inline(never)]
fn empty_slab(i: usize) -> ! {
    panic!("controller slot {i} of an empty slab")
}

/// Stores `c` at slot `at` of `v` (an existing slot) or at its end (`None`); returns the slot.
#[inline]
fn put<T>(v: &mut Vec<T>, at: Option<u32>, c: T) -> u32 {
    match at {
        Some(i) => {
            v[i as usize] = c;
            i
        }
        None => {
            v.push(c);
            (v.len() - 1) as u32
        }
    }
}

impl Store {
    /// Slots, free or not.
    fn len(&self) -> usize {
        match self {
            Store::Empty => 0,
            Store::None(v) => v.len(),
            Store::Dcqcn(x) => x.slots.len(),
            Store::Dctcp(x) => x.slots.len(),
            Store::Hpcc(x) => x.slots.len(),
            Store::Timely(x) => x.slots.len(),
            Store::Mixed(v) => v.len(),
        }
    }

    /// An empty store of `c`'s kind.
    fn for_kind(c: &Cc) -> Store {
        match c {
            Cc::None(_) => Store::None(Vec::new()),
            Cc::Dcqcn(_) => Store::Dcqcn(Shared::default()),
            Cc::Dctcp(_) => Store::Dctcp(Shared::default()),
            Cc::Hpcc(_) => Store::Hpcc(Shared::default()),
            Cc::Timely(_) => Store::Timely(Shared::default()),
        }
    }

    /// The same slots as [`Cc`] values (to hold several kinds).
    fn into_mixed(self) -> Vec<Cc> {
        match self {
            Store::Empty => Vec::new(),
            Store::None(v) => v.into_iter().map(Cc::None).collect(),
            Store::Dcqcn(x) => x.into_owned().map(Cc::Dcqcn).collect(),
            Store::Dctcp(x) => x.into_owned().map(Cc::Dctcp).collect(),
            Store::Hpcc(x) => x.into_owned().map(Cc::Hpcc).collect(),
            Store::Timely(x) => x.into_owned().map(Cc::Timely).collect(),
            Store::Mixed(v) => v,
        }
    }
}

impl CcSlab {
    /// Store `c` in a free slot; returns the slot.
    pub fn alloc(&mut self, c: Cc) -> u32 {
        if matches!(self.store, Store::Empty) {
            self.store = Store::for_kind(&c);
        }
        let at = self.free.pop();
        let i = match (&mut self.store, c) {
            (Store::None(v), Cc::None(c)) => put(v, at, c),
            (Store::Dcqcn(x), Cc::Dcqcn(c)) => x.put(at, c),
            (Store::Dctcp(x), Cc::Dctcp(c)) => x.put(at, c),
            (Store::Hpcc(x), Cc::Hpcc(c)) => x.put(at, c),
            (Store::Timely(x), Cc::Timely(c)) => x.put(at, c),
            (Store::Mixed(v), c) => put(v, at, c),
            (_, c) => {
                // Another kind: keep every slot, as values of the enum.
                let mut v = std::mem::take(&mut self.store).into_mixed();
                let i = put(&mut v, at, c);
                self.store = Store::Mixed(v);
                i
            }
        };
        self.peak = self.peak.max(self.store.len());
        let (w, b) = (i as usize / 64, i % 64);
        if w >= self.in_use.len() {
            self.in_use.resize(w + 1, 0);
        }
        self.in_use[w] |= 1 << b;
        i
    }

    /// A copy of the controller in slot `i` (which must be in use), as an owning value: to
    /// move a QP's controller into another slab (the merge of a run split over threads).
    pub fn cloned(&self, i: u32) -> Cc {
        let i = i as usize;
        fn own<C: Split>(x: &Shared<C>, i: usize) -> C {
            let (k, s) = x.parts(i);
            C::from_parts(k.clone(), s.clone())
        }
        match &self.store {
            Store::None(v) => Cc::None(v[i].clone()),
            Store::Dcqcn(x) => Cc::Dcqcn(own(x, i)),
            Store::Dctcp(x) => Cc::Dctcp(own(x, i)),
            Store::Hpcc(x) => Cc::Hpcc(own(x, i)),
            Store::Timely(x) => Cc::Timely(own(x, i)),
            Store::Mixed(v) => v[i].clone(),
            Store::Empty => empty_slab(i),
        }
    }

    /// Give slot `i` back. Panics if it is not allocated (a double release is a bug in the
    /// flow lifecycle: carrying on would let two flows share one controller).
    pub fn release(&mut self, i: u32) {
        let (w, b) = (i as usize / 64, i % 64);
        let bit = self.in_use.get_mut(w).filter(|x| **x & (1 << b) != 0);
        let Some(x) = bit else {
            panic!("controller slot {i} released while not in use");
        };
        *x &= !(1 << b);
        self.free.push(i);
    }

    /// The controller in slot `i`. (Always inlined: the NIC asks for the rate and window
    /// several times per packet, and the enum of references it returns then lives in
    /// registers; a slab of several kinds is the out-of-line cold case.)
    #[inline(always)]
    pub fn get(&self, i: u32) -> CcRef<'_> {
        let i = i as usize;
        match &self.store {
            Store::None(v) => CcRef::None(&v[i]),
            Store::Dcqcn(x) => {
                let (k, s) = x.parts(i);
                CcRef::Dcqcn(dcqcn::DcqcnRef { k, s })
            }
            Store::Dctcp(x) => {
                let (k, s) = x.parts(i);
                CcRef::Dctcp(dctcp::DctcpRef { k, s })
            }
            Store::Hpcc(x) => {
                let (k, s) = x.parts(i);
                CcRef::Hpcc(hpcc::HpccRef { k, s })
            }
            Store::Timely(x) => {
                let (k, s) = x.parts(i);
                CcRef::Timely(timely::TimelyRef { k, s })
            }
            Store::Mixed(v) => mixed_ref(&v[i]),
            Store::Empty => empty_slab(i),
        }
    }

    /// The controller in slot `i`, mutably (always inlined, see [`Self::get`]).
    #[inline(always)]
    pub fn get_mut(&mut self, i: u32) -> CcMut<'_> {
        let i = i as usize;
        match &mut self.store {
            Store::None(v) => CcMut::None(&mut v[i]),
            Store::Dcqcn(x) => {
                let (k, s) = x.parts_mut(i);
                CcMut::Dcqcn(dcqcn::DcqcnMut { k, s })
            }
            Store::Dctcp(x) => {
                let (k, s) = x.parts_mut(i);
                CcMut::Dctcp(dctcp::DctcpMut { k, s })
            }
            Store::Hpcc(x) => {
                let (k, s) = x.parts_mut(i);
                CcMut::Hpcc(hpcc::HpccMut { k, s })
            }
            Store::Timely(x) => {
                let (k, s) = x.parts_mut(i);
                CcMut::Timely(timely::TimelyMut { k, s })
            }
            Store::Mixed(v) => mixed_mut(&mut v[i]),
            Store::Empty => empty_slab(i),
        }
    }

    /// Prefetch hint for the cache lines of slot `i` an ACK reads: its first `n` bytes (at
    /// most the slot), from the line of the first byte to that of the last — two lines for a
    /// 56 B slot that straddles a boundary (slots are not line-aligned), up to four for the
    /// 192 B an ACK reads of an HPCC state. No effect on state; any `i`.
    #[inline(always)]
    pub fn prefetch(&self, i: u32) {
        fn lines<T>(v: &[T], i: u32, n: usize) {
            if let Some(c) = v.get(i as usize) {
                let first = c as *const T as usize;
                let last = first + n.min(std::mem::size_of::<T>()).max(1) - 1;
                let mut line = first & !63;
                while line <= last {
                    crate::engine::prefetch(line as *const u8);
                    line += 64;
                }
            }
        }
        match &self.store {
            Store::Empty => {}
            Store::None(v) => lines(v, i, 128),
            Store::Dcqcn(x) => lines(&x.slots, i, 128),
            Store::Dctcp(x) => lines(&x.slots, i, 128),
            Store::Hpcc(x) => lines(&x.slots, i, 192),
            Store::Timely(x) => lines(&x.slots, i, 128),
            Store::Mixed(v) => lines(v, i, 128),
        }
    }

    /// Size of one slot, bytes (the stored kind's own size; [`Cc`]'s with several kinds).
    pub fn slot_bytes(&self) -> usize {
        use std::mem::size_of;
        match &self.store {
            Store::Empty => 0,
            Store::None(_) => size_of::<none::NoneCc>(),
            Store::Dcqcn(_) => size_of::<dcqcn::DcqcnState>(),
            Store::Dctcp(_) => size_of::<dctcp::DctcpState>(),
            Store::Hpcc(_) => size_of::<hpcc::HpccState>(),
            Store::Timely(_) => size_of::<timely::TimelyState>(),
            Store::Mixed(_) => size_of::<Cc>(),
        }
    }

    /// Distinct sets of shared constants stored (one per line rate and BDP in use, usually 1;
    /// 0 for the line-rate controller, whose 16 B slot is all constants, and for a slab of
    /// several kinds).
    pub fn const_sets(&self) -> usize {
        match &self.store {
            Store::Hpcc(x) => x.consts.len(),
            Store::Dcqcn(x) => x.consts.len(),
            Store::Dctcp(x) => x.consts.len(),
            Store::Timely(x) => x.consts.len(),
            Store::Empty | Store::None(_) | Store::Mixed(_) => 0,
        }
    }

    /// Most controllers alive at once (slots ever created).
    pub fn peak(&self) -> usize {
        self.peak
    }

    /// At the end of a run with every slot free: drop the slots, keeping [`Self::peak`].
    /// Slots are allocated again if controllers are stored later.
    pub fn release_memory(&mut self) {
        if self.free.len() == self.store.len() {
            self.store = Store::Empty;
            self.free = Vec::new();
            self.in_use = Vec::new();
        }
    }
}

/// A controller in a [`CcSlab`], borrowed: the questions the NIC asks of it.
#[derive(Clone, Copy, Debug)]
pub enum CcRef<'a> {
    /// See [`none::NoneCc`].
    None(&'a none::NoneCc),
    /// See [`dcqcn::Dcqcn`].
    Dcqcn(dcqcn::DcqcnRef<'a>),
    /// See [`dctcp::Dctcp`].
    Dctcp(dctcp::DctcpRef<'a>),
    /// See [`hpcc::Hpcc`].
    Hpcc(hpcc::HpccRef<'a>),
    /// See [`timely::Timely`].
    Timely(timely::TimelyRef<'a>),
}

/// A controller in a [`CcSlab`], mutably borrowed; a [`CongestionControl`] like the
/// controller itself.
#[derive(Debug)]
pub enum CcMut<'a> {
    /// See [`none::NoneCc`].
    None(&'a mut none::NoneCc),
    /// See [`dcqcn::Dcqcn`].
    Dcqcn(dcqcn::DcqcnMut<'a>),
    /// See [`dctcp::Dctcp`].
    Dctcp(dctcp::DctcpMut<'a>),
    /// See [`hpcc::Hpcc`].
    Hpcc(hpcc::HpccMut<'a>),
    /// See [`timely::Timely`].
    Timely(timely::TimelyMut<'a>),
}

macro_rules! dispatch_ref {
    ($e0:expr, $c:ident => $e:expr) => {
        match $e0 {
            CcRef::None($c) => $e,
            CcRef::Dcqcn($c) => $e,
            CcRef::Dctcp($c) => $e,
            CcRef::Hpcc($c) => $e,
            CcRef::Timely($c) => $e,
        }
    };
}

impl CcRef<'_> {
    /// [`CongestionControl::rate_bps`].
    #[inline]
    pub fn rate_bps(&self) -> u64 {
        dispatch_ref!(self, c => c.rate_bps())
    }
    /// [`CongestionControl::window_bytes`].
    #[inline]
    pub fn window_bytes(&self) -> u64 {
        dispatch_ref!(self, c => c.window_bytes())
    }
    /// [`CongestionControl::next_timer`].
    #[inline]
    pub fn next_timer(&self) -> Option<(u64, u8)> {
        dispatch_ref!(self, c => c.next_timer())
    }
    /// [`CongestionControl::adjusts_pacing`].
    #[inline]
    pub fn adjusts_pacing(&self) -> bool {
        dispatch_ref!(self, c => c.adjusts_pacing())
    }
}

macro_rules! dispatch_mut {
    ($e0:expr, $c:ident => $e:expr) => {
        match $e0 {
            CcMut::None($c) => $e,
            CcMut::Dcqcn($c) => $e,
            CcMut::Dctcp($c) => $e,
            CcMut::Hpcc($c) => $e,
            CcMut::Timely($c) => $e,
        }
    };
}

impl CongestionControl for CcMut<'_> {
    #[inline]
    fn on_ack(&mut self, info: &AckInfo<'_>) {
        dispatch_mut!(self, c => c.on_ack(info))
    }
    #[inline]
    fn on_timeout(&mut self, now_ps: u64) {
        dispatch_mut!(self, c => c.on_timeout(now_ps))
    }
    #[inline]
    fn on_feedback(&mut self, now_ps: u64) {
        dispatch_mut!(self, c => c.on_feedback(now_ps))
    }
    #[inline]
    fn on_timer(&mut self, now_ps: u64, which: u8) {
        dispatch_mut!(self, c => c.on_timer(now_ps, which))
    }
    #[inline]
    fn next_timer(&self) -> Option<(u64, u8)> {
        dispatch_mut!(self, c => c.next_timer())
    }
    #[inline]
    fn on_send(&mut self, now_ps: u64, bytes: u64) {
        dispatch_mut!(self, c => c.on_send(now_ps, bytes))
    }
    #[inline]
    fn rate_bps(&self) -> u64 {
        dispatch_mut!(self, c => c.rate_bps())
    }
    #[inline]
    fn window_bytes(&self) -> u64 {
        dispatch_mut!(self, c => c.window_bytes())
    }
    #[inline]
    fn adjusts_pacing(&self) -> bool {
        dispatch_mut!(self, c => c.adjusts_pacing())
    }
    #[inline]
    fn on_scheme_signal(&mut self, now_ps: u64, signal: SchemeSignal) {
        dispatch_mut!(self, c => c.on_scheme_signal(now_ps, signal))
    }
}

/// Enum dispatch over all controllers.
#[derive(Clone, Debug)]
pub enum Cc {
    /// See [`none::NoneCc`].
    None(none::NoneCc),
    /// See [`dcqcn::Dcqcn`].
    Dcqcn(dcqcn::Dcqcn),
    /// See [`dctcp::Dctcp`].
    Dctcp(dctcp::Dctcp),
    /// See [`hpcc::Hpcc`].
    Hpcc(hpcc::Hpcc),
    /// See [`timely::Timely`].
    Timely(timely::Timely),
}

macro_rules! dispatch {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            Cc::None($c) => $e,
            Cc::Dcqcn($c) => $e,
            Cc::Dctcp($c) => $e,
            Cc::Hpcc($c) => $e,
            Cc::Timely($c) => $e,
        }
    };
}

impl CongestionControl for Cc {
    #[inline]
    fn on_ack(&mut self, info: &AckInfo<'_>) {
        dispatch!(self, c => c.on_ack(info))
    }
    #[inline]
    fn on_timeout(&mut self, now_ps: u64) {
        dispatch!(self, c => c.on_timeout(now_ps))
    }
    #[inline]
    fn on_feedback(&mut self, now_ps: u64) {
        dispatch!(self, c => c.on_feedback(now_ps))
    }
    #[inline]
    fn on_timer(&mut self, now_ps: u64, which: u8) {
        dispatch!(self, c => c.on_timer(now_ps, which))
    }
    #[inline]
    fn next_timer(&self) -> Option<(u64, u8)> {
        dispatch!(self, c => c.next_timer())
    }
    #[inline]
    fn on_send(&mut self, now_ps: u64, bytes: u64) {
        dispatch!(self, c => c.on_send(now_ps, bytes))
    }
    #[inline]
    fn rate_bps(&self) -> u64 {
        dispatch!(self, c => c.rate_bps())
    }
    #[inline]
    fn window_bytes(&self) -> u64 {
        dispatch!(self, c => c.window_bytes())
    }
    #[inline]
    fn adjusts_pacing(&self) -> bool {
        dispatch!(self, c => c.adjusts_pacing())
    }
    #[inline]
    fn on_scheme_signal(&mut self, now_ps: u64, signal: SchemeSignal) {
        dispatch!(self, c => c.on_scheme_signal(now_ps, signal))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: u64 = 100_000_000_000;

    fn none_cc() -> Cc {
        CcConfig::none_unlimited().build(LINE, 10_000_000, 125_000)
    }

    fn dctcp_cc() -> Cc {
        CcConfig::Dctcp(dctcp::DctcpParams::default()).build(LINE, 10_000_000, 125_000)
    }

    /// A slab of one kind stores that controller's own type: its slots are not sized by the
    /// largest controller.
    #[test]
    fn slots_are_sized_by_their_kind() {
        let mut s = CcSlab::default();
        assert_eq!(s.slot_bytes(), 0);
        s.alloc(none_cc());
        assert_eq!(s.slot_bytes(), std::mem::size_of::<none::NoneCc>());
        assert!(s.slot_bytes() * 8 <= std::mem::size_of::<Cc>());
        let mut d = CcSlab::default();
        d.alloc(dctcp_cc());
        assert_eq!(d.slot_bytes(), std::mem::size_of::<dctcp::DctcpState>());
        assert!(d.slot_bytes() < std::mem::size_of::<Cc>());
    }

    /// Freed slots are reused last-freed first; the controller read back is the one stored.
    #[test]
    fn slots_are_recycled_lifo_and_keep_their_controller() {
        let mut s = CcSlab::default();
        let a = s.alloc(dctcp_cc());
        let b = s.alloc(dctcp_cc());
        let c = s.alloc(dctcp_cc());
        assert_eq!((a, b, c), (0, 1, 2));
        s.get_mut(b)
            .on_scheme_signal(0, crate::cc::SchemeSignal::SetRate(LINE / 4));
        assert_eq!(s.get(b).rate_bps(), LINE / 4);
        assert_eq!(s.get(a).rate_bps(), LINE);
        s.get_mut(a)
            .on_scheme_signal(0, crate::cc::SchemeSignal::SetRate(LINE / 3));
        s.release(a);
        s.release(c);
        assert_eq!(s.alloc(dctcp_cc()), c);
        assert_eq!(s.alloc(dctcp_cc()), a);
        assert_eq!(s.alloc(dctcp_cc()), 3);
        assert_eq!(s.peak(), 4);
        // The reused slot holds the new controller (line rate), not the old one's state.
        assert_eq!(s.get(a).rate_bps(), LINE);
        assert_eq!(s.get(b).rate_bps(), LINE / 4);
    }

    /// A controller of another kind turns the slab into one of enum values: every slot keeps
    /// its controller and kind.
    #[test]
    fn another_kind_is_stored_alongside() {
        let mut s = CcSlab::default();
        let a = s.alloc(dctcp_cc());
        s.get_mut(a)
            .on_scheme_signal(0, crate::cc::SchemeSignal::SetRate(LINE / 2));
        let b = s.alloc(none_cc());
        assert_eq!(s.slot_bytes(), std::mem::size_of::<Cc>());
        assert!(matches!(s.get(a), CcRef::Dctcp(_)));
        assert!(matches!(s.get(b), CcRef::None(_)));
        assert_eq!(s.get(a).rate_bps(), LINE / 2);
        assert_eq!(s.get(b).rate_bps(), LINE);
        assert_eq!(s.get(b).window_bytes(), u64::MAX);
        // The DCTCP slot kept its constants: its window (from the base window and line rate)
        // and its next rate change are those of an owning twin.
        let mut twin = dctcp_cc();
        twin.on_scheme_signal(0, crate::cc::SchemeSignal::SetRate(LINE / 2));
        assert_eq!(s.get(a).window_bytes(), twin.window_bytes());
        s.get_mut(a)
            .on_scheme_signal(0, crate::cc::SchemeSignal::SetRate(LINE * 2));
        twin.on_scheme_signal(0, crate::cc::SchemeSignal::SetRate(LINE * 2));
        assert_eq!(s.get(a).rate_bps(), twin.rate_bps());
    }

    /// With every slot free the memory goes, the peak stays, and the slab can be used again.
    #[test]
    fn release_memory_keeps_the_peak() {
        let mut s = CcSlab::default();
        let a = s.alloc(none_cc());
        let b = s.alloc(none_cc());
        s.release(a);
        s.release_memory();
        assert_eq!(
            s.slot_bytes(),
            std::mem::size_of::<none::NoneCc>(),
            "b still live"
        );
        s.release(b);
        s.release_memory();
        assert_eq!((s.slot_bytes(), s.peak()), (0, 2));
        assert_eq!(s.alloc(dctcp_cc()), 0);
        assert!(matches!(s.get(0), CcRef::Dctcp(_)));
    }

    /// A slot given back twice stops the run (two flows would share its controller), as
    /// does giving back a slot never handed out; a reused slot can be given back again.
    #[test]
    fn double_release_panics() {
        let mut s = CcSlab::default();
        let a = s.alloc(none_cc());
        s.release(a);
        let twice = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut t = CcSlab::default();
            let a = t.alloc(none_cc());
            t.release(a);
            t.release(a);
        }));
        assert!(twice.is_err());
        let never = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            CcSlab::default().release(70);
        }));
        assert!(never.is_err());
        assert_eq!(s.alloc(none_cc()), a);
        s.release(a);
        // Slots past the first word of the bitset.
        let v: Vec<u32> = (0..130).map(|_| s.alloc(none_cc())).collect();
        for &i in v.iter().rev() {
            s.release(i);
        }
        assert_eq!(s.alloc(none_cc()), 0);
    }

    fn hpcc_cc(line_bps: u64, bdp_bytes: u64) -> Cc {
        CcConfig::Hpcc(hpcc::HpccParams::hpcc_sim_preset(line_bps))
            .build(line_bps, 10_000_000, bdp_bytes)
    }

    /// Fills `int` with one INT record per hop: hop `h` has sent `tx[h]` bytes by `ts_ps` and
    /// holds `q` bytes.
    fn int_records(ts_ps: u64, tx: &[u64], q: u32, int: &mut Vec<IntHop>) {
        int.clear();
        int.extend(tx.iter().map(|&t| IntHop {
            ts_ps,
            tx_bytes: t,
            qlen_bytes: q,
            rate_mbps: 100_000,
        }));
    }

    /// HPCC in a slab keeps one set of constants per (line rate, BDP), and each slot behaves
    /// exactly as an owning controller fed the same ACKs (same rate and window after each).
    #[test]
    fn hpcc_slots_share_constants_and_match_an_owning_controller() {
        let mut s = CcSlab::default();
        let kinds = [
            (LINE, 125_000),
            (LINE, 125_000),
            (LINE / 4, 125_000),
            (LINE, 250_000),
            (LINE / 4, 125_000),
        ];
        let mut owned: Vec<Cc> = Vec::new();
        let mut slots = Vec::new();
        for &(line, bdp) in &kinds {
            slots.push(s.alloc(hpcc_cc(line, bdp)));
            owned.push(hpcc_cc(line, bdp));
        }
        assert_eq!(s.const_sets(), 3);
        assert_eq!(s.slot_bytes(), std::mem::size_of::<hpcc::HpccState>());
        assert!(s.slot_bytes() < std::mem::size_of::<hpcc::Hpcc>());
        let mut int = Vec::new();
        for step in 1..=60u64 {
            for (j, (&slot, o)) in slots.iter().zip(owned.iter_mut()).enumerate() {
                // Two hops; flow j's bottleneck loaded differently, a queue that comes and goes.
                let sent = step * 12_000 * (j as u64 + 1);
                let q = if step % 7 < 3 { 40_000 * j as u32 } else { 0 };
                int_records(step * 1_000_000, &[sent, sent / 2], q, &mut int);
                let info = AckInfo {
                    now_ps: step * 1_000_000,
                    ack_seq: step * 1_000,
                    newly_acked_bytes: 1_000,
                    snd_nxt: step * 1_000 + 50_000,
                    ce_echo: false,
                    marks: Marks::NONE,
                    rtt_ps: 10_000_000,
                    nack: false,
                    int: &int,
                };
                s.get_mut(slot).on_ack(&info);
                o.on_ack(&info);
                let (r, w) = (s.get(slot).rate_bps(), s.get(slot).window_bytes());
                assert_eq!(
                    (r, w),
                    (o.rate_bps(), o.window_bytes()),
                    "flow {j} step {step}"
                );
            }
        }
        // The run moved the rates (the comparison is not of untouched controllers).
        assert!(slots.iter().any(|&i| s.get(i).rate_bps() < LINE / 4));
        // PB-FS's rate setting goes through the shared constants too.
        s.get_mut(slots[2])
            .on_scheme_signal(0, crate::cc::SchemeSignal::SetRate(LINE / 10));
        owned[2].on_scheme_signal(0, crate::cc::SchemeSignal::SetRate(LINE / 10));
        assert_eq!(s.get(slots[2]).rate_bps(), owned[2].rate_bps());
        // Mixed with another kind, each HPCC slot keeps its own constants: a rate set now
        // goes through them (line rate, D) and gives its twin's window and rate.
        let d = s.alloc(dctcp_cc());
        for (&i, o) in slots.iter().zip(owned.iter_mut()) {
            s.get_mut(i)
                .on_scheme_signal(0, crate::cc::SchemeSignal::SetRate(LINE / 3));
            o.on_scheme_signal(0, crate::cc::SchemeSignal::SetRate(LINE / 3));
            let got = (s.get(i).rate_bps(), s.get(i).window_bytes());
            assert_eq!(got, (o.rate_bps(), o.window_bytes()));
        }
        assert!(matches!(s.get(d), CcRef::Dctcp(_)));
    }

    /// DCQCN in a slab keeps one set of constants per line rate (and base window), and each
    /// slot behaves exactly as an owning controller fed the same CNPs, sends and timers.
    #[test]
    fn dcqcn_slots_share_constants_and_match_an_owning_controller() {
        let build = |line: u64, paper: bool| {
            let p = if paper {
                dcqcn::DcqcnParams::paper(line)
            } else {
                dcqcn::DcqcnParams::hpcc_preset(line)
            };
            CcConfig::Dcqcn(p).build(line, 10_000_000, 125_000)
        };
        for paper in [false, true] {
            let mut s = CcSlab::default();
            let lines = [LINE, LINE, LINE / 4, LINE, LINE / 4];
            let mut owned: Vec<Cc> = lines.iter().map(|&l| build(l, paper)).collect();
            let slots: Vec<u32> = lines.iter().map(|&l| s.alloc(build(l, paper))).collect();
            assert_eq!(s.const_sets(), 2);
            assert_eq!(s.slot_bytes(), std::mem::size_of::<dcqcn::DcqcnState>());
            assert!(s.slot_bytes() < std::mem::size_of::<dcqcn::Dcqcn>());
            for step in 0..400u64 {
                let now = step * 2_000_000; // 2 µs
                for (j, (&i, o)) in slots.iter().zip(owned.iter_mut()).enumerate() {
                    // Flow j gets a CNP every (j + 2)-th step for the first half.
                    if step < 200 && step % (j as u64 + 2) == 0 {
                        s.get_mut(i).on_feedback(now);
                        o.on_feedback(now);
                    }
                    s.get_mut(i).on_send(now, 1_048);
                    o.on_send(now, 1_048);
                    while let Some((at, w)) = o.next_timer().filter(|&(at, _)| at <= now) {
                        assert_eq!(s.get(i).next_timer(), Some((at, w)));
                        s.get_mut(i).on_timer(at, w);
                        o.on_timer(at, w);
                    }
                    let got = (s.get(i).rate_bps(), s.get(i).window_bytes());
                    assert_eq!(
                        got,
                        (o.rate_bps(), o.window_bytes()),
                        "flow {j} step {step}"
                    );
                }
            }
            assert!(
                slots.iter().any(|&i| s.get(i).rate_bps() < LINE / 4),
                "paper {paper}"
            );
        }
    }

    /// Every kind, stored in a slab, behaves exactly as the owning controller fed the same
    /// events (ACKs with CE echoes and RTT samples, NACKs, timeouts, timers, a rate set by a
    /// scheme), for two line rates at once.
    #[test]
    fn every_kind_in_a_slab_matches_an_owning_controller() {
        let configs = [
            CcConfig::Dctcp(dctcp::DctcpParams::default()),
            CcConfig::Timely(timely::TimelyParams::default()),
            CcConfig::Dcqcn(dcqcn::DcqcnParams::hpcc_preset(LINE)),
            CcConfig::Hpcc(hpcc::HpccParams::paper()),
            CcConfig::none_unlimited(),
        ];
        for cfg in configs {
            let lines = [LINE, LINE / 4, LINE];
            let build = |l: u64| cfg.build(l, 10_000_000, 125_000);
            let mut s = CcSlab::default();
            let mut owned: Vec<Cc> = lines.iter().map(|&l| build(l)).collect();
            let slots: Vec<u32> = lines.iter().map(|&l| s.alloc(build(l))).collect();
            let name = cfg.name();
            let mut int = Vec::new();
            for step in 1..=300u64 {
                let now = step * 1_000_000;
                for (j, (&i, o)) in slots.iter().zip(owned.iter_mut()).enumerate() {
                    let ce = (step + j as u64).is_multiple_of(5) && step < 150;
                    int_records(now, &[step * 9_000 * (j as u64 + 1)], 0, &mut int);
                    let info = AckInfo {
                        now_ps: now,
                        ack_seq: step * 1_000,
                        newly_acked_bytes: 1_000,
                        snd_nxt: step * 1_000 + 30_000,
                        ce_echo: ce,
                        marks: Marks::NONE,
                        rtt_ps: 10_000_000 + (step % 17) * 1_500_000 * (j as u64 + 1),
                        nack: step.is_multiple_of(97),
                        int: &int,
                    };
                    s.get_mut(i).on_ack(&info);
                    o.on_ack(&info);
                    s.get_mut(i).on_send(now, 1_048);
                    o.on_send(now, 1_048);
                    if step.is_multiple_of(61) {
                        s.get_mut(i).on_timeout(now);
                        o.on_timeout(now);
                    }
                    if step == 200 {
                        s.get_mut(i)
                            .on_scheme_signal(now, crate::cc::SchemeSignal::SetRate(LINE / 7));
                        o.on_scheme_signal(now, crate::cc::SchemeSignal::SetRate(LINE / 7));
                    }
                    while let Some((at, w)) = o.next_timer().filter(|&(at, _)| at <= now) {
                        assert_eq!(s.get(i).next_timer(), Some((at, w)), "{name}");
                        s.get_mut(i).on_timer(at, w);
                        o.on_timer(at, w);
                    }
                    let got = (s.get(i).rate_bps(), s.get(i).window_bytes());
                    let want = (o.rate_bps(), o.window_bytes());
                    assert_eq!(got, want, "{name}: flow {j} step {step}");
                    assert_eq!(s.get(i).adjusts_pacing(), o.adjusts_pacing(), "{name}");
                }
            }
            let expected_sets = if matches!(cfg, CcConfig::None(_)) {
                0
            } else {
                2
            };
            assert_eq!(s.const_sets(), expected_sets, "{name}");
        }
    }

    /// A NaN parameter (never equal to itself) still shares one set of constants: memory
    /// follows the active flows, not every flow start.
    #[test]
    fn nan_constants_are_shared() {
        let p = timely::TimelyParams {
            beta: f64::NAN,
            ..Default::default()
        };
        let mut s = CcSlab::default();
        for _ in 0..1_000 {
            let i = s.alloc(CcConfig::Timely(p.clone()).build(LINE, 10_000_000, 125_000));
            s.release(i);
        }
        assert_eq!((s.const_sets(), s.peak()), (1, 1));
    }
}
