//! Congestion control: each controller is a per-QP state machine behind
//! [`CongestionControl`], fed by the NIC with ACK/NACK/timeout/feedback events and queried for
//! the pacing rate and window. Controllers do no I/O and know nothing of the simulator, so each
//! is unit-tested in isolation (feed ACKs, check rate/window).
//!
//! The simulator dispatches through the [`Cc`] enum (no `Box<dyn>` on the hot path). Adding a
//! controller = one file here + one variant in [`Cc`] and [`CcConfig`].

pub mod dcqcn;
pub mod dctcp;
pub mod hpcc;
pub mod none;
pub mod timely;

use crate::engine::packet::IntHop;

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
    /// The acknowledged data packet carried TCD's UE mark (UE echo; never with `ce_echo`).
    pub ue_echo: bool,
    /// RTT sample: now − the echoed send time of the data packet, picoseconds.
    pub rtt_ps: u64,
    /// This was a NACK.
    pub nack: bool,
    /// INT records echoed from the data packet (empty without INT).
    pub int: &'a [IntHop],
}

/// A per-QP congestion controller.
pub trait CongestionControl {
    /// Process an ACK (or a NACK: `info.nack`).
    fn on_ack(&mut self, info: &AckInfo<'_>);
    /// The retransmission timer fired.
    fn on_timeout(&mut self, _now_ps: u64) {}
    /// Explicit congestion feedback that is not an ACK (e.g. a DCQCN CNP).
    fn on_feedback(&mut self, _now_ps: u64) {}
    /// TCD: the UE variant of a CNP (the flow crosses a port in the undetermined state).
    /// Controllers without a TCD mode ignore it.
    fn on_feedback_ue(&mut self, _now_ps: u64) {}
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
    /// Make `rate_bps` the current sending rate, as a rate-initialization scheme (PB-FS)
    /// corrects a line-rate start; the controller carries on from it under its own rules.
    /// Each controller clamps it to its own [min, line] range and sets the state its rate
    /// derives from: DCQCN R_C = R_T = rate; TIMELY and DCTCP the rate; HPCC W = W^c (and
    /// each hop's W^c) = rate × D / line; the line-rate controller the rate.
    fn set_rate(&mut self, _now_ps: u64, _rate_bps: u64) {}
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
#[derive(Clone, Debug, Default)]
pub struct CcSlab {
    slots: Vec<Cc>,
    free: Vec<u32>,
    /// Most slots ever in use (kept when [`Self::release_memory`] drops them).
    peak: usize,
}

impl CcSlab {
    /// Store `c` in a free slot; returns the slot.
    pub fn alloc(&mut self, c: Cc) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = c;
                i
            }
            None => {
                self.slots.push(c);
                self.peak = self.slots.len();
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Give slot `i` back.
    pub fn release(&mut self, i: u32) {
        debug_assert!((i as usize) < self.slots.len());
        self.free.push(i);
    }

    /// The controller in slot `i`.
    #[inline]
    pub fn get(&self, i: u32) -> &Cc {
        &self.slots[i as usize]
    }

    /// The controller in slot `i`, mutably.
    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut Cc {
        &mut self.slots[i as usize]
    }

    /// Prefetch hint for the first two cache lines of slot `i` (no effect on state; any `i`).
    #[inline]
    pub fn prefetch(&self, i: u32) {
        if let Some(c) = self.slots.get(i as usize) {
            let line = c as *const Cc as *const u8;
            crate::engine::prefetch(line);
            crate::engine::prefetch(line.wrapping_add(64));
        }
    }

    /// Most controllers alive at once (slots ever created).
    pub fn peak(&self) -> usize {
        self.peak
    }

    /// At the end of a run with every slot free: drop the slots, keeping [`Self::peak`].
    /// Slots are allocated again if controllers are stored later.
    pub fn release_memory(&mut self) {
        if self.free.len() == self.slots.len() {
            self.slots = Vec::new();
            self.free = Vec::new();
        }
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
    fn on_feedback_ue(&mut self, now_ps: u64) {
        dispatch!(self, c => c.on_feedback_ue(now_ps))
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
    fn set_rate(&mut self, now_ps: u64, rate_bps: u64) {
        dispatch!(self, c => c.set_rate(now_ps, rate_bps))
    }
}
