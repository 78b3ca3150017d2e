//! DCQCN (Zhu et al., SIGCOMM'15) reaction point, in two implementations
//! (`specs/dcqcn.md` §3):
//!
//! - [`Variant::HpccSim`]: HPCC-sim's "Mellanox version" (`cc_mode 1`, `rdma-hw.cc:618-739`).
//!   Every CE-echoing ACK is a CNP; α is sampled on a free-running timer (binary: one or many
//!   CNPs in a slot count the same); the rate is cut at most once per free-running decrease
//!   interval; the increase timer is (re)started by each cut and does not exist before the first
//!   one; recovery is purely time-based (fast recovery, additive, hyper with a constant step).
//! - [`Variant::Paper`]: the paper / DCQCN-sim (`qbb-net-device.cc:1246-1440`). Each CNP cuts
//!   immediately and restarts the α-decay timer K and the increase timer T; increase events come
//!   from the timer and from a byte counter (fed by [`CongestionControl::on_send`]); hyper
//!   increase grows by `R_HAI·(min(ByteStage, TimeStage) − F + 1)` and halves T and B.
//!
//! CNP sources (both variants): an ACK/NACK whose `ce_echo` is set (HPCC-sim NP, can be turned
//! off with [`DcqcnParams::ce_echo_is_cnp`]) and [`CongestionControl::on_feedback`] (an explicit
//! CNP packet, paper NP).
//!
//! DCQCN+TCD ([`DcqcnParams::hold`], `specs/tcd.md` §7): CE alone drives α and the cuts; a UE
//! echo makes the next increase event (timer or byte counter) hold the rate.
//!
//! DCQCN+W (`dcqcn_vwin`): [`DcqcnParams::with_window`]; the window is `W·Rc/line` (never below
//! 1 B) with `var_win`, else `W`.
//!
//! Timers are reported through [`CongestionControl::next_timer`] as absolute deadlines:
//! [`TIMER_ALPHA`], [`TIMER_DECREASE`], [`TIMER_INCREASE`]. Deadlines that coincide are reported
//! in the order ns-3 would run them (the earlier-armed event first).
//!
//! Rate arithmetic follows ns-3's `DataRate` (integer bit/s): `rate × double` truncates toward
//! zero, and the averaging step is `Rc/2 + Rt/2` with each half truncated.

use super::hold::HoldEchoes;
use super::{AckInfo, CongestionControl, SchemeSignal};
use crate::units::{NS, US};

/// `which` of the α timer (HPCC-sim: α sampling every `t_alpha`; paper: α decay timer K).
pub const TIMER_ALPHA: u8 = 0;
/// `which` of the HPCC-sim rate-decrease check timer (unused by the paper variant).
pub const TIMER_DECREASE: u8 = 1;
/// `which` of the rate-increase timer (HPCC-sim RP timer / paper timer T).
pub const TIMER_INCREASE: u8 = 2;

/// Offset added to the first decrease check after the first CNP so that it runs after the α
/// update of the same instant (`rdma-hw.cc` `ScheduleDecreaseRateMlx(q, 1)`): 1 ns, in ps.
pub const FIRST_DECREASE_OFFSET_PS: u64 = NS;

/// Which DCQCN implementation to reproduce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    /// HPCC-sim "Mellanox" version (`specs/dcqcn.md` §3B).
    HpccSim,
    /// DCQCN paper / DCQCN-sim: per-CNP reaction, byte counter (`specs/dcqcn.md` §3A).
    Paper,
}

/// Shortest accepted DCQCN timer (α update, rate-decrease interval, rate-increase timer),
/// picoseconds: 100 ns. The papers and HPCC-sim use 1–1,500 µs; a timer that fires every few
/// picoseconds for every flow turns a millisecond run into hours of events, so scenario and
/// HPCC config values below it are refused.
pub const MIN_TIMER_PS: u64 = 100_000;

/// Parameters of [`Dcqcn`]. Times are picoseconds, rates bit/s, sizes bytes.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct DcqcnParams {
    /// Which implementation to run.
    pub variant: Variant,
    /// α EWMA gain g. HPCC `dcqcn` preset: 1/256 (`run.py:104`).
    pub g: f64,
    /// α timer period, ps. HpccSim: α sampling interval (`ALPHA_RESUME_INTERVAL`, preset 1 µs);
    /// Paper: α decay timer K (55 µs), restarted by every CNP.
    pub alpha_timer_ps: u64,
    /// HpccSim only: rate-decrease check interval, ps (`RATE_DECREASE_INTERVAL`, preset 4 µs).
    pub rate_decrease_interval_ps: u64,
    /// Rate-increase timer period, ps. HpccSim: `RP_TIMER` (preset 300 µs); Paper: T (55 µs),
    /// halved while in hyper increase.
    pub rate_increase_timer_ps: u64,
    /// Fast-recovery steps F (`FAST_RECOVERY_TIMES`; HPCC template 1, paper 5).
    pub fast_recovery_times: u32,
    /// Additive-increase step R_AI, bit/s (HPCC preset `5·bw/25` Mb/s = 20 Mb/s at 100G).
    pub rate_ai_bps: u64,
    /// Hyper-increase step R_HAI, bit/s (HPCC preset `50·bw/25` Mb/s = 200 Mb/s at 100G).
    /// HpccSim adds it once per step; Paper multiplies it by `min(ByteStage, TimeStage) − F + 1`.
    pub rate_hai_bps: u64,
    /// Floor of the rate after a cut, bit/s (HPCC template `MIN_RATE 1000Mb/s`). Clamped to the
    /// line rate at construction.
    pub min_rate_bps: u64,
    /// HpccSim only: `Rc = Rt = factor × Rc` at the first CNP (`RateOnFirstCnp`, default 1.0 =
    /// no change). Clamped to [0, 1].
    pub rate_on_first_cnp: f64,
    /// `ClampTargetRate`: every cut first sets `Rt ← Rc` (HPCC template 0; DCQCN-sim sample 1).
    /// Without it, HpccSim sets `Rt ← Rc` only if an increase happened since the last cut
    /// (stage ≠ 0) and Paper only if `ByteStage ≠ 0`.
    pub clamp_target_rate: bool,
    /// Paper only: `ClampTargetRateAfterTimeInc` (when `clamp_target_rate` is off, set
    /// `Rt ← Rc` at a CNP if either stage counter is non-zero). DCQCN-sim default off.
    pub clamp_target_after_time_inc: bool,
    /// Paper only: byte counter B, bytes of wire data per byte-counter increase event
    /// (paper 10 MB); 0 disables the byte counter (HPCC-sim has none).
    pub byte_counter_bytes: u64,
    /// Paper only: α before the first CNP (paper preset 1.0; DCQCN-sim initialises 0.5).
    /// HpccSim always sets α = 1 at the first CNP.
    pub initial_alpha: f64,
    /// Paper only: DCQCN-sim quirk (`qbb-net-device.cc:1363-1364`): on an increase with a stage
    /// counter equal to 1, if `Rt > 10·Rc` then `Rt ← Rt/8` instead of adding the increment.
    /// Off by default (`specs/dcqcn.md` §3A.4).
    pub target_div8_quirk: bool,
    /// An ACK/NACK with `ce_echo` counts as a CNP (HPCC-sim NP). Turn off when the simulator
    /// models a separate NP that sends CNP packets ([`CongestionControl::on_feedback`]).
    pub ce_echo_is_cnp: bool,
    /// `HAS_WIN`: limit bytes in flight by a window.
    pub has_win: bool,
    /// `VAR_WIN`: window = `window_bytes × Rc / line` (≥ 1 B); else fixed `window_bytes`.
    pub var_win: bool,
    /// Base window W, bytes of payload (HPCC: maxBdp with `GLOBAL_T 1`); 0 = the BDP passed to
    /// [`Dcqcn::new`]. Ignored unless `has_win`.
    pub window_bytes: u64,
    /// DCQCN+TCD (`cc.tcd`, `specs/tcd.md` §7): only CE cuts (as always); a UE echo (ACK flag
    /// or UE CNP) since the last increase event makes the next increase event hold the rate
    /// (Rc, Rt and the stage counters unchanged) instead of increasing.
    #[serde(rename = "tcd", skip_serializing_if = "std::ops::Not::not")]
    pub hold: bool,
}

impl Default for DcqcnParams {
    /// HPCC-sim `dcqcn` preset at 100 Gb/s.
    fn default() -> Self {
        Self::hpcc_preset(100_000_000_000)
    }
}

impl DcqcnParams {
    /// HPCC `run.py --cc dcqcn` for hosts of `host_rate_bps` (`run.py:99-104`, template
    /// `run.py:22-28`): HpccSim variant, g = 1/256, α timer 1 µs, decrease interval 4 µs,
    /// RP timer 300 µs, F = 1, R_AI = 5·bw/25 Mb/s, R_HAI = 50·bw/25 Mb/s (bw in Gb/s, i.e.
    /// 20 / 200 Mb/s at 100G), `MIN_RATE` 1 Gb/s, `CLAMP_TARGET_RATE 0`, rate on first CNP 1.0
    /// (attribute default, `rdma-hw.cc:62-66`), no window (`HAS_WIN 0`).
    pub fn hpcc_preset(host_rate_bps: u64) -> Self {
        DcqcnParams {
            variant: Variant::HpccSim,
            g: 1.0 / 256.0,
            alpha_timer_ps: US,
            rate_decrease_interval_ps: 4 * US,
            rate_increase_timer_ps: 300 * US,
            fast_recovery_times: 1,
            // 5 Mb/s per 25 Gb/s = rate / 5000; 50 Mb/s per 25 Gb/s = rate / 500.
            rate_ai_bps: host_rate_bps / 5000,
            rate_hai_bps: host_rate_bps / 500,
            min_rate_bps: 1_000_000_000,
            rate_on_first_cnp: 1.0,
            clamp_target_rate: false,
            clamp_target_after_time_inc: false,
            byte_counter_bytes: 0,
            initial_alpha: 1.0,
            target_div8_quirk: false,
            ce_echo_is_cnp: true,
            has_win: false,
            var_win: false,
            window_bytes: 0,
            hold: false,
        }
    }

    /// HPCC `run.py --cc dcqcn_paper` (`run.py:106`): [`Self::hpcc_preset`] with α timer
    /// 50 µs, decrease interval 50 µs and RP timer 55 µs. Still the HpccSim variant, and still
    /// F = 1 and MIN_RATE 1 Gb/s from the template.
    pub fn hpcc_paper_preset(host_rate_bps: u64) -> Self {
        DcqcnParams {
            alpha_timer_ps: 50 * US,
            rate_decrease_interval_ps: 50 * US,
            rate_increase_timer_ps: 55 * US,
            ..Self::hpcc_preset(host_rate_bps)
        }
    }

    /// DCQCN+W: add a window of `bdp_bytes` (0 = the BDP given to [`Dcqcn::new`]). With
    /// `var_win` (HPCC `dcqcn_vwin` / `dcqcn_paper_vwin`: `HAS_WIN 1`, `VAR_WIN 1`) the
    /// effective window is `bdp × Rc / line`, never below 1 B; without it, a fixed BDP window.
    /// Note the `*_vwin` presets also set `ACK_HIGH_PRIO 0` (a NIC setting, not part of CC).
    pub fn with_window(mut self, bdp_bytes: u64, var_win: bool) -> Self {
        self.has_win = true;
        self.var_win = var_win;
        self.window_bytes = bdp_bytes;
        self
    }

    /// The DCQCN paper's reaction point (Paper variant), `specs/dcqcn.md` §3A / parameter
    /// table: g = 1/256, K = 55 µs, T = 55 µs, B = 10 MB (10⁷ B), F = 5, R_AI = 40 Mb/s and
    /// R_HAI = 200 Mb/s at the paper's 40 Gb/s (the paper's R_HAI is unverified; 200 Mb/s is
    /// the DCQCN-sim sample config), both scaled linearly with `host_rate_bps / 40 Gb/s` the
    /// way `run.py` scales its presets (exactly the paper's values at 40G). Min rate 100 Mb/s
    /// (DCQCN-sim attribute default), initial α = 1. Every CNP clamps the target to the
    /// current rate (`clamp_target_rate`): the paper's Eq. (1), R_T = R_C on each CNP, and
    /// DCQCN-sim's sample config (`CLAMP_TARGET_RATE 1`; its attribute default is 0, under
    /// which a burst of cuts before any increase left R_T at the pre-burst rate).
    pub fn paper(host_rate_bps: u64) -> Self {
        let scale = |per_40g: u64| -> u64 {
            ((per_40g as u128 * host_rate_bps as u128) / 40_000_000_000u128).min(u64::MAX as u128)
                as u64
        };
        DcqcnParams {
            variant: Variant::Paper,
            g: 1.0 / 256.0,
            alpha_timer_ps: 55 * US,
            rate_decrease_interval_ps: 50 * US,
            rate_increase_timer_ps: 55 * US,
            fast_recovery_times: 5,
            rate_ai_bps: scale(40_000_000),
            rate_hai_bps: scale(200_000_000),
            min_rate_bps: 100_000_000,
            rate_on_first_cnp: 1.0,
            clamp_target_rate: true,
            clamp_target_after_time_inc: false,
            byte_counter_bytes: 10_000_000,
            initial_alpha: 1.0,
            target_div8_quirk: false,
            ce_echo_is_cnp: true,
            has_win: false,
            var_win: false,
            window_bytes: 0,
            hold: false,
        }
    }
}

/// Paper variant: which increase stage the reaction point is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaperStage {
    /// No CNP received yet: no timers, byte counter held at B.
    Idle,
    /// Fast recovery (entered by every CNP).
    FastRecovery,
    /// Additive increase.
    ActiveIncrease,
    /// Hyper increase.
    HyperIncrease,
}

/// One pending timer: absolute deadline and the order it was armed in (ties → earlier first).
#[derive(Clone, Copy, Debug, Default)]
struct Timer {
    at: Option<u64>,
    seq: u64,
}

/// DCQCN's constants for QPs of one line rate: its parameters, the line and minimum rates and
/// the base window. A run keeps one set per line rate in its [`crate::cc::CcSlab`], not one
/// per flow ([`DcqcnState`] holds the rest).
#[derive(Clone, Debug, PartialEq)]
pub struct DcqcnConst {
    p: DcqcnParams,
    line_rate_bps: u64,
    min_rate_bps: u64,
    /// Base window, bytes; 0 = no window.
    win_base: u64,
}

/// The state of one QP's DCQCN reaction point (see the module docs); its constants are a
/// [`DcqcnConst`].
#[derive(Clone, Debug)]
pub struct DcqcnState {
    /// Current rate Rc, bit/s.
    rate: u64,
    /// Target rate Rt, bit/s.
    target: u64,
    alpha: f64,
    // HpccSim state.
    first_cnp: bool,
    cnp_for_alpha: bool,
    cnp_for_decrease: bool,
    /// Increase events since the last cut (`m_rpTimeStage`).
    stage: u32,
    // Paper state.
    paper_stage: PaperStage,
    byte_stage: u32,
    time_stage: u32,
    /// Byte-counter residual (`m_txBytes`), bytes; an increase event fires when it drops < 0.
    byte_left: i64,
    timers: [Timer; 3],
    arm_count: u64,
    /// TCD ([`HoldEchoes`]): a UE echo arrived since the last increase event, or since the cut
    /// that (re)started the increase timer (a UE seen before a cut does not hold the first
    /// recovery step after it: HPCC-sim's variant has no increase timer before its first cut,
    /// so "since the last expiry" would otherwise reach back to the flow's start); the
    /// increase events held because of UE.
    hold: HoldEchoes,
    /// Index of its [`DcqcnConst`] in the slab that stores it (0 in an owning [`Dcqcn`]).
    k: u32,
}

/// DCQCN reaction point for one QP (see the module docs), owning its constants (as built by
/// [`crate::cc::CcConfig::build`] and used on its own in tests); the simulator's
/// [`crate::cc::CcSlab`] splits it into the shared [`DcqcnConst`] and the per-flow
/// [`DcqcnState`].
#[derive(Clone, Debug)]
pub struct Dcqcn {
    k: DcqcnConst,
    s: DcqcnState,
}

impl DcqcnConst {
    /// What tells constants of one run apart (the rest comes from the run's one
    /// [`DcqcnParams`]): the line rate and the base window.
    pub fn key(&self) -> (u64, u64, u64, u64) {
        (self.line_rate_bps, self.win_base, 0, 0)
    }
}

split_controller!(
    Dcqcn,
    DcqcnConst,
    DcqcnState,
    DcqcnMut,
    DcqcnRef,
    "DCQCN reaction point"
);

impl Dcqcn {
    /// New controller for a QP on a NIC of `line_rate_bps`, starting at line rate.
    /// `bdp_bytes` is the (global) BDP used when `p.has_win` and `p.window_bytes == 0`.
    pub fn new(p: &DcqcnParams, line_rate_bps: u64, bdp_bytes: u64) -> Self {
        let win_base = if !p.has_win {
            0
        } else if p.window_bytes > 0 {
            p.window_bytes
        } else {
            bdp_bytes
        };
        let k = DcqcnConst {
            p: p.clone(),
            line_rate_bps,
            min_rate_bps: p.min_rate_bps.min(line_rate_bps),
            win_base,
        };
        let s = DcqcnState {
            rate: line_rate_bps,
            target: line_rate_bps,
            alpha: if p.variant == Variant::HpccSim {
                1.0
            } else {
                p.initial_alpha
            },
            first_cnp: true,
            cnp_for_alpha: false,
            cnp_for_decrease: false,
            stage: 0,
            paper_stage: PaperStage::Idle,
            byte_stage: 0,
            time_stage: 0,
            byte_left: clamp_i64(p.byte_counter_bytes),
            timers: [Timer::default(); 3],
            arm_count: 0,
            hold: HoldEchoes::default(),
            k: 0,
        };
        Dcqcn { k, s }
    }

    /// TCD: increase events held (skipped) because a UE echo had arrived.
    pub fn held_increases(&self) -> u64 {
        self.view().held_increases()
    }

    /// Current α.
    pub fn alpha(&self) -> f64 {
        self.view().alpha()
    }

    /// Target rate Rt, bit/s.
    pub fn target_rate_bps(&self) -> u64 {
        self.view().target_rate_bps()
    }

    /// HpccSim: increase events since the last cut (`m_rpTimeStage`); Paper: `TimeStage`.
    pub fn stage(&self) -> u32 {
        self.view().stage()
    }

    /// Paper variant: `ByteStage` (byte-counter increase events since the last CNP).
    pub fn byte_stage(&self) -> u32 {
        self.view().byte_stage()
    }

    /// Paper variant: current increase stage.
    pub fn paper_stage(&self) -> PaperStage {
        self.view().paper_stage()
    }

    /// Absolute deadline (ps) of timer `which`, if armed.
    pub fn timer_deadline(&self, which: u8) -> Option<u64> {
        self.view().timer_deadline(which)
    }

    /// Cancel all timers (HPCC-sim does this at flow completion, `rdma-hw.cc:501-505`).
    pub fn cancel_timers(&mut self) {
        self.view_mut().cancel_timers()
    }
}

impl DcqcnRef<'_> {
    /// TCD: increase events held (skipped) because a UE echo had arrived.
    pub fn held_increases(&self) -> u64 {
        self.s.hold.held
    }

    /// Current α.
    pub fn alpha(&self) -> f64 {
        self.s.alpha
    }

    /// Target rate Rt, bit/s.
    pub fn target_rate_bps(&self) -> u64 {
        self.s.target
    }

    /// HpccSim: increase events since the last cut (`m_rpTimeStage`); Paper: `TimeStage`.
    pub fn stage(&self) -> u32 {
        match self.k.p.variant {
            Variant::HpccSim => self.s.stage,
            Variant::Paper => self.s.time_stage,
        }
    }

    /// Paper variant: `ByteStage` (byte-counter increase events since the last CNP).
    pub fn byte_stage(&self) -> u32 {
        self.s.byte_stage
    }

    /// Paper variant: current increase stage.
    pub fn paper_stage(&self) -> PaperStage {
        self.s.paper_stage
    }

    /// Absolute deadline (ps) of timer `which`, if armed.
    pub fn timer_deadline(&self, which: u8) -> Option<u64> {
        self.s.timers.get(which as usize).and_then(|t| t.at)
    }

    /// [`CongestionControl::next_timer`].
    pub fn next_timer(&self) -> Option<(u64, u8)> {
        let mut best: Option<(u64, u64, u8)> = None;
        for (i, t) in self.s.timers.iter().enumerate() {
            if let Some(at) = t.at
                && best.is_none_or(|(b_at, b_seq, _)| (at, t.seq) < (b_at, b_seq))
            {
                best = Some((at, t.seq, i as u8));
            }
        }
        best.map(|(at, _, w)| (at, w))
    }

    /// [`CongestionControl::rate_bps`].
    pub fn rate_bps(&self) -> u64 {
        self.s.rate.max(1)
    }

    /// [`CongestionControl::adjusts_pacing`]: no (only HPCC moves the next send time).
    pub fn adjusts_pacing(&self) -> bool {
        false
    }

    /// [`CongestionControl::window_bytes`].
    pub fn window_bytes(&self) -> u64 {
        if self.k.win_base == 0 {
            return u64::MAX;
        }
        if !self.k.p.var_win || self.k.line_rate_bps == 0 {
            return self.k.win_base;
        }
        let w = self.k.win_base as u128 * self.s.rate as u128 / self.k.line_rate_bps as u128;
        (w.min(u64::MAX as u128) as u64).max(1)
    }
}

impl DcqcnMut<'_> {
    /// PB-FS: the corrected rate is handled as a DCQCN rate cut that no CNP caused (α is
    /// untouched): R_T keeps the rate the flow had (or its target, if higher), R_C = the new
    /// rate, and the recovery restarts from it — HPCC-sim: stage 0 and the increase timer from
    /// now; paper: fast recovery with the timer T and byte counter B reset. PB-FS says the
    /// controller "updates the transmission rate relative to the corrected rate" and that the
    /// flows keep "maintaining throughput"; DCQCN's timers only run after a CNP, so a flow
    /// corrected before its first CNP otherwise kept the corrected rate for good (a 2 MB
    /// flow alone on a 25 G path after a 60 KB one left: 22 % of the link, 4.5× its FCT).
    /// A study on `pbfs-fig5 --quick` (R_T = the corrected rate with or without the timer
    /// armed, against this) moved its claims by ≤ 3 %.
    pub fn set_rate(&mut self, now_ps: u64, rate_bps: u64) {
        let r = rate_bps.clamp(self.k.min_rate_bps.max(1), self.k.line_rate_bps.max(1));
        self.s.target = self.s.target.max(self.s.rate);
        self.s.rate = r;
        self.s.hold.clear();
        let t = now_ps.saturating_add(self.k.p.rate_increase_timer_ps.max(1));
        match self.k.p.variant {
            Variant::HpccSim => self.s.stage = 0,
            Variant::Paper => {
                self.s.byte_stage = 0;
                self.s.time_stage = 0;
                self.s.byte_left = clamp_i64(self.k.p.byte_counter_bytes);
                self.s.paper_stage = PaperStage::FastRecovery;
            }
        }
        self.arm(TIMER_INCREASE, t);
    }

    /// TCD: consume the UE seen since the last increase event; true = hold this one
    /// ([`HoldEchoes::hold_increase`]).
    fn hold_for_mark(&mut self) -> bool {
        self.k.p.hold && self.s.hold.hold_increase()
    }

    /// Cancel all timers (HPCC-sim does this at flow completion, `rdma-hw.cc:501-505`).
    pub fn cancel_timers(&mut self) {
        for t in &mut self.s.timers {
            t.at = None;
        }
    }

    /// Process one CNP arriving at `now_ps`.
    fn cnp(&mut self, now_ps: u64) {
        match self.k.p.variant {
            Variant::HpccSim => self.cnp_hpcc(now_ps),
            Variant::Paper => self.cnp_paper(now_ps),
        }
    }

    fn arm(&mut self, which: u8, at: u64) {
        self.s.arm_count += 1;
        if let Some(t) = self.s.timers.get_mut(which as usize) {
            t.at = Some(at);
            t.seq = self.s.arm_count;
        }
    }

    // ---------------------------------------------------------------- HPCC-sim (§3B)

    fn cnp_hpcc(&mut self, now: u64) {
        self.s.cnp_for_alpha = true;
        self.s.cnp_for_decrease = true;
        if self.s.first_cnp {
            self.s.alpha = 1.0;
            self.s.cnp_for_alpha = false;
            self.arm(
                TIMER_ALPHA,
                now.saturating_add(self.k.p.alpha_timer_ps.max(1)),
            );
            let first_dec = self
                .k
                .p
                .rate_decrease_interval_ps
                .max(1)
                .saturating_add(FIRST_DECREASE_OFFSET_PS);
            self.arm(TIMER_DECREASE, now.saturating_add(first_dec));
            let factor = if self.k.p.rate_on_first_cnp.is_nan() {
                1.0
            } else {
                self.k.p.rate_on_first_cnp.clamp(0.0, 1.0)
            };
            self.s.rate = mul_rate(self.s.rate, factor);
            self.s.target = self.s.rate;
            self.s.first_cnp = false;
        }
    }

    fn alpha_tick_hpcc(&mut self, now: u64) {
        let g = self.k.p.g;
        self.s.alpha = if self.s.cnp_for_alpha {
            (1.0 - g) * self.s.alpha + g
        } else {
            (1.0 - g) * self.s.alpha
        };
        self.s.cnp_for_alpha = false;
        self.arm(
            TIMER_ALPHA,
            now.saturating_add(self.k.p.alpha_timer_ps.max(1)),
        );
    }

    fn decrease_tick_hpcc(&mut self, now: u64) {
        self.arm(
            TIMER_DECREASE,
            now.saturating_add(self.k.p.rate_decrease_interval_ps.max(1)),
        );
        if self.s.cnp_for_decrease {
            if self.k.p.clamp_target_rate || self.s.stage != 0 {
                self.s.target = self.s.rate;
            }
            self.s.rate = mul_rate(self.s.rate, 1.0 - self.s.alpha / 2.0).max(self.k.min_rate_bps);
            self.s.stage = 0;
            self.s.cnp_for_decrease = false;
            self.s.hold.clear();
            self.arm(
                TIMER_INCREASE,
                now.saturating_add(self.k.p.rate_increase_timer_ps.max(1)),
            );
        }
    }

    fn increase_tick_hpcc(&mut self, now: u64) {
        self.arm(
            TIMER_INCREASE,
            now.saturating_add(self.k.p.rate_increase_timer_ps.max(1)),
        );
        if self.hold_for_mark() {
            return;
        }
        let f = self.k.p.fast_recovery_times;
        if self.s.stage < f {
            // Fast recovery.
        } else if self.s.stage == f {
            self.s.target = self
                .s
                .target
                .saturating_add(self.k.p.rate_ai_bps)
                .min(self.k.line_rate_bps);
        } else {
            self.s.target = self
                .s
                .target
                .saturating_add(self.k.p.rate_hai_bps)
                .min(self.k.line_rate_bps);
        }
        self.s.rate = self.s.rate / 2 + self.s.target / 2;
        self.s.stage = self.s.stage.saturating_add(1);
    }

    // ---------------------------------------------------------------- Paper (§3A)

    fn cnp_paper(&mut self, now: u64) {
        let update_target = if self.k.p.clamp_target_rate {
            true
        } else if self.k.p.clamp_target_after_time_inc {
            self.s.byte_stage != 0 || self.s.time_stage != 0
        } else {
            self.s.byte_stage != 0
        };
        if update_target {
            self.s.target = self.s.rate;
            self.s.byte_left = clamp_i64(self.k.p.byte_counter_bytes);
        }
        self.s.byte_stage = 0;
        self.s.time_stage = 0;
        self.s.hold.clear();
        let g = self.k.p.g;
        self.s.alpha = (1.0 - g) * self.s.alpha + g;
        self.s.rate = mul_rate(self.s.rate, 1.0 - self.s.alpha / 2.0).max(self.k.min_rate_bps);
        self.arm(
            TIMER_ALPHA,
            now.saturating_add(self.k.p.alpha_timer_ps.max(1)),
        );
        self.arm(
            TIMER_INCREASE,
            now.saturating_add(self.k.p.rate_increase_timer_ps.max(1)),
        );
        self.s.paper_stage = PaperStage::FastRecovery;
    }

    fn alpha_tick_paper(&mut self, now: u64) {
        self.s.alpha *= 1.0 - self.k.p.g;
        self.arm(
            TIMER_ALPHA,
            now.saturating_add(self.k.p.alpha_timer_ps.max(1)),
        );
    }

    fn increase_tick_paper(&mut self, now: u64) {
        let t = self.k.p.rate_increase_timer_ps.max(1);
        let f = self.k.p.fast_recovery_times;
        if self.s.paper_stage != PaperStage::Idle && self.hold_for_mark() {
            // Same timer period as the stage would use, no stage or rate change.
            let next = if self.s.paper_stage == PaperStage::HyperIncrease {
                (t / 2).max(1)
            } else {
                t
            };
            self.arm(TIMER_INCREASE, now.saturating_add(next));
            return;
        }
        match self.s.paper_stage {
            PaperStage::Idle => {}
            PaperStage::FastRecovery => {
                self.s.time_stage = self.s.time_stage.saturating_add(1);
                self.arm(TIMER_INCREASE, now.saturating_add(t));
                if self.s.time_stage < f {
                    self.fast_recovery_step();
                } else {
                    self.select_increase();
                }
            }
            PaperStage::ActiveIncrease => {
                self.s.time_stage = self.s.time_stage.saturating_add(1);
                self.arm(TIMER_INCREASE, now.saturating_add(t));
                self.select_increase();
            }
            PaperStage::HyperIncrease => {
                self.s.time_stage = self.s.time_stage.saturating_add(1);
                self.arm(TIMER_INCREASE, now.saturating_add((t / 2).max(1)));
                self.hyper_increase();
            }
        }
    }

    fn byte_event_paper(&mut self) {
        let b = clamp_i64(self.k.p.byte_counter_bytes);
        let f = self.k.p.fast_recovery_times;
        if self.s.paper_stage != PaperStage::Idle && self.hold_for_mark() {
            self.s.byte_left = if self.s.paper_stage == PaperStage::HyperIncrease {
                b / 2
            } else {
                b
            };
            return;
        }
        match self.s.paper_stage {
            PaperStage::Idle => {}
            PaperStage::FastRecovery => {
                self.s.byte_stage = self.s.byte_stage.saturating_add(1);
                self.s.byte_left = b;
                if self.s.byte_stage < f {
                    self.fast_recovery_step();
                } else {
                    self.select_increase();
                }
            }
            PaperStage::ActiveIncrease => {
                self.s.byte_stage = self.s.byte_stage.saturating_add(1);
                self.s.byte_left = b;
                self.active_increase();
            }
            PaperStage::HyperIncrease => {
                self.s.byte_stage = self.s.byte_stage.saturating_add(1);
                self.s.byte_left = b / 2;
                self.hyper_increase();
            }
        }
    }

    /// DCQCN-sim `AdjustRates`: raise Rt by `increase`, then `Rc ← Rc/2 + Rt/2`, capped at line.
    fn adjust_rates(&mut self, increase: u64) {
        let quirk = self.k.p.target_div8_quirk
            && (self.s.byte_stage == 1 || self.s.time_stage == 1)
            && self.s.target as u128 > 10 * self.s.rate as u128;
        if quirk {
            self.s.target /= 8;
        } else {
            self.s.target = self.s.target.saturating_add(increase);
        }
        self.s.rate = (self.s.rate / 2 + self.s.target / 2).min(self.k.line_rate_bps);
    }

    fn fast_recovery_step(&mut self) {
        self.adjust_rates(0);
        self.s.paper_stage = PaperStage::FastRecovery;
    }

    fn active_increase(&mut self) {
        self.adjust_rates(self.k.p.rate_ai_bps);
        self.s.paper_stage = PaperStage::ActiveIncrease;
    }

    fn hyper_increase(&mut self) {
        let k = self
            .s
            .byte_stage
            .min(self.s.time_stage)
            .saturating_sub(self.k.p.fast_recovery_times)
            .saturating_add(1);
        self.adjust_rates(self.k.p.rate_hai_bps.saturating_mul(k as u64));
        self.s.paper_stage = PaperStage::HyperIncrease;
    }

    fn select_increase(&mut self) {
        let f = self.k.p.fast_recovery_times;
        if self.s.byte_stage < f || self.s.time_stage < f {
            self.active_increase();
        } else {
            self.hyper_increase();
        }
    }
}

/// `rate × factor` as ns-3 `DataRate * double` computes it: in double, truncated toward zero
/// (negative or NaN → 0, overflow saturates).
fn mul_rate(rate: u64, factor: f64) -> u64 {
    (rate as f64 * factor) as u64
}

fn clamp_i64(v: u64) -> i64 {
    v.min(i64::MAX as u64) as i64
}

impl CongestionControl for DcqcnMut<'_> {
    fn on_ack(&mut self, info: &AckInfo<'_>) {
        if info.ce_echo && self.k.p.ce_echo_is_cnp {
            self.cnp(info.now_ps);
        } else if !info.marks.is_empty() && self.k.p.ce_echo_is_cnp && self.k.p.hold {
            self.s.hold.note_mark();
        }
    }

    fn on_feedback(&mut self, now_ps: u64) {
        self.cnp(now_ps);
    }

    fn on_timer(&mut self, now_ps: u64, which: u8) {
        let due = matches!(self.r().timer_deadline(which), Some(at) if at <= now_ps);
        if !due {
            return;
        }
        match (self.k.p.variant, which) {
            (Variant::HpccSim, TIMER_ALPHA) => self.alpha_tick_hpcc(now_ps),
            (Variant::HpccSim, TIMER_DECREASE) => self.decrease_tick_hpcc(now_ps),
            (Variant::HpccSim, TIMER_INCREASE) => self.increase_tick_hpcc(now_ps),
            (Variant::Paper, TIMER_ALPHA) => self.alpha_tick_paper(now_ps),
            (Variant::Paper, TIMER_INCREASE) => self.increase_tick_paper(now_ps),
            _ => {
                // Not a timer of this variant: drop it.
                if let Some(t) = self.s.timers.get_mut(which as usize) {
                    t.at = None;
                }
            }
        }
    }

    fn on_send(&mut self, _now_ps: u64, bytes: u64) {
        if self.k.p.variant != Variant::Paper || self.k.p.byte_counter_bytes == 0 {
            return;
        }
        if self.s.paper_stage == PaperStage::Idle {
            self.s.byte_left = clamp_i64(self.k.p.byte_counter_bytes);
            return;
        }
        self.s.byte_left = self.s.byte_left.saturating_sub(clamp_i64(bytes));
        if self.s.byte_left < 0 {
            self.byte_event_paper();
        }
    }

    /// TCD's UE CNP: noted, it holds the next increase event (DCQCN+TCD only); PB-FS's rate:
    /// [`DcqcnMut::set_rate`].
    fn on_scheme_signal(&mut self, now_ps: u64, signal: SchemeSignal) {
        match signal {
            SchemeSignal::Marked(m) => {
                if self.k.p.hold && !m.is_empty() {
                    self.s.hold.note_mark();
                }
            }
            SchemeSignal::SetRate(rate_bps) => self.set_rate(now_ps, rate_bps),
        }
    }

    fn next_timer(&self) -> Option<(u64, u8)> {
        self.r().next_timer()
    }

    fn rate_bps(&self) -> u64 {
        self.r().rate_bps()
    }

    fn window_bytes(&self) -> u64 {
        self.r().window_bytes()
    }
}

impl CongestionControl for Dcqcn {
    fn on_ack(&mut self, info: &AckInfo<'_>) {
        self.view_mut().on_ack(info)
    }

    fn on_feedback(&mut self, now_ps: u64) {
        self.view_mut().on_feedback(now_ps)
    }

    fn on_timer(&mut self, now_ps: u64, which: u8) {
        self.view_mut().on_timer(now_ps, which)
    }

    fn next_timer(&self) -> Option<(u64, u8)> {
        self.view().next_timer()
    }

    fn on_send(&mut self, now_ps: u64, bytes: u64) {
        self.view_mut().on_send(now_ps, bytes)
    }

    fn rate_bps(&self) -> u64 {
        self.view().rate_bps()
    }

    fn on_scheme_signal(&mut self, now_ps: u64, signal: SchemeSignal) {
        self.view_mut().on_scheme_signal(now_ps, signal)
    }

    fn window_bytes(&self) -> u64 {
        self.view().window_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    /// A hold mark as a TCD switch sets it (any echoed scheme mark holds).
    const UE: crate::engine::packet::Marks = crate::engine::packet::Marks::bit(0);

    const L: u64 = 100_000_000_000;
    const T0: u64 = 10 * US;

    fn ack(now_ps: u64, ce: bool) -> AckInfo<'static> {
        AckInfo {
            now_ps,
            ack_seq: 1000,
            newly_acked_bytes: 1000,
            snd_nxt: 10_000,
            ce_echo: ce,
            marks: crate::engine::packet::Marks::NONE,
            rtt_ps: 10 * US,
            nack: false,
            int: &[],
        }
    }

    /// Fire every reported timer with deadline ≤ `until`, exactly at the reported time.
    fn pump(c: &mut Dcqcn, until: u64) {
        while let Some((at, w)) = c.next_timer() {
            if at > until {
                break;
            }
            c.on_timer(at, w);
        }
    }

    /// HPCC preset with g = 0: α stays 1, so every cut halves the rate (clean arithmetic).
    fn hpcc_g0() -> DcqcnParams {
        DcqcnParams {
            g: 0.0,
            ..DcqcnParams::hpcc_preset(L)
        }
    }

    #[test]
    fn presets_match_run_py() {
        let p = DcqcnParams::hpcc_preset(L);
        assert_eq!(p.rate_ai_bps, 20_000_000);
        assert_eq!(p.rate_hai_bps, 200_000_000);
        assert_eq!(
            (p.alpha_timer_ps, p.rate_decrease_interval_ps),
            (US, 4 * US)
        );
        assert_eq!(p.rate_increase_timer_ps, 300 * US);
        assert_eq!(p.min_rate_bps, 1_000_000_000);
        let q = DcqcnParams::hpcc_preset(25_000_000_000);
        assert_eq!((q.rate_ai_bps, q.rate_hai_bps), (5_000_000, 50_000_000));
        let pp = DcqcnParams::hpcc_paper_preset(L);
        assert_eq!(pp.variant, Variant::HpccSim);
        assert_eq!(pp.alpha_timer_ps, 50 * US);
        assert_eq!(pp.rate_decrease_interval_ps, 50 * US);
        assert_eq!(pp.rate_increase_timer_ps, 55 * US);
        assert_eq!(pp.fast_recovery_times, 1);
        let w = DcqcnParams::paper(40_000_000_000);
        assert_eq!((w.rate_ai_bps, w.rate_hai_bps), (40_000_000, 200_000_000));
        assert_eq!(w.fast_recovery_times, 5);
    }

    #[test]
    fn no_cnp_stays_at_line_rate_without_timers() {
        let mut c = Dcqcn::new(&DcqcnParams::hpcc_preset(L), L, 153_000);
        for i in 0..100 {
            c.on_ack(&ack(i * US, false));
            c.on_send(i * US, 1048);
        }
        assert_eq!(c.rate_bps(), L);
        assert_eq!(c.next_timer(), None);
        assert_eq!(c.window_bytes(), u64::MAX);
    }

    #[test]
    fn first_cnp_arms_timers_without_cut() {
        let mut c = Dcqcn::new(&DcqcnParams::hpcc_preset(L), L, 0);
        c.on_ack(&ack(T0, true));
        assert_eq!(c.rate_bps(), L);
        assert_eq!(c.target_rate_bps(), L);
        assert_eq!(c.alpha(), 1.0);
        assert_eq!(c.timer_deadline(TIMER_ALPHA), Some(T0 + US));
        assert_eq!(c.timer_deadline(TIMER_DECREASE), Some(T0 + 4 * US + NS));
        // The increase timer does not exist before the first decrease.
        assert_eq!(c.timer_deadline(TIMER_INCREASE), None);
        assert_eq!(c.next_timer(), Some((T0 + US, TIMER_ALPHA)));
    }

    #[test]
    fn decrease_uses_binary_sampled_alpha() {
        let mut c = Dcqcn::new(&DcqcnParams::hpcc_preset(L), L, 0);
        c.on_ack(&ack(T0, true)); // first CNP: α = 1, alpha flag cleared
        // Two more CNPs in the first α slot count once (binary sampling).
        c.on_ack(&ack(T0 + US / 2, true));
        c.on_feedback(T0 + 7 * US / 10);
        pump(&mut c, T0 + 4 * US);
        // Slot 1: α = (1−g)·1 + g = 1; slots 2–4 without CNP: α = (255/256)^3.
        assert_eq!(c.alpha(), 16_581_375.0 / 16_777_216.0);
        assert_eq!(c.rate_bps(), L, "no cut before T0 + 4 µs + 1 ns");
        pump(&mut c, T0 + 4 * US + NS);
        // Rc = L·(1 − α/2) = 1e11 · 16973057 / 2^25 = 48828125·16973057 / 16384
        //    = 828762548828125 / 16384 = 50583651661.87... → 50583651661.
        assert_eq!(c.rate_bps(), 50_583_651_661);
        // Clamp off and stage 0: the target stays at line rate.
        assert_eq!(c.target_rate_bps(), L);
        // The cut (re)starts the increase timer.
        assert_eq!(c.timer_deadline(TIMER_INCREASE), Some(T0 + 304 * US + NS));
    }

    #[test]
    fn recovery_sequence_fr_ai_hai() {
        let mut c = Dcqcn::new(&hpcc_g0(), L, 0);
        c.on_ack(&ack(T0, true));
        let td1 = T0 + 4 * US + NS;
        pump(&mut c, td1);
        assert_eq!(c.rate_bps(), 50_000_000_000);
        assert_eq!(c.target_rate_bps(), L);
        // FR (stage 0 < F = 1): Rc = 50G/2 + 100G/2.
        let ti1 = td1 + 300 * US;
        pump(&mut c, ti1 - 1);
        assert_eq!(c.rate_bps(), 50_000_000_000);
        pump(&mut c, ti1);
        assert_eq!(c.rate_bps(), 75_000_000_000);
        assert_eq!(c.stage(), 1);
        // Second cut at the next decrease tick: stage ≠ 0 → Rt = Rc = 75G; Rc = 37.5G.
        c.on_ack(&ack(ti1 + NS, true));
        let td2 = ti1 + 4 * US;
        pump(&mut c, td2);
        assert_eq!(c.target_rate_bps(), 75_000_000_000);
        assert_eq!(c.rate_bps(), 37_500_000_000);
        assert_eq!(c.stage(), 0);
        // FR: 18.75G + 37.5G.
        pump(&mut c, td2 + 300 * US);
        assert_eq!(c.rate_bps(), 56_250_000_000);
        // AI (stage == F): Rt = 75.02G; Rc = 28.125G + 37.51G.
        pump(&mut c, td2 + 600 * US);
        assert_eq!(c.target_rate_bps(), 75_020_000_000);
        assert_eq!(c.rate_bps(), 65_635_000_000);
        // HAI: Rt = 75.22G; Rc = 32.8175G + 37.61G.
        pump(&mut c, td2 + 900 * US);
        assert_eq!(c.target_rate_bps(), 75_220_000_000);
        assert_eq!(c.rate_bps(), 70_427_500_000);
        // HAI again, constant step: Rt = 75.42G; Rc = 35.21375G + 37.71G.
        pump(&mut c, td2 + 1200 * US);
        assert_eq!(c.target_rate_bps(), 75_420_000_000);
        assert_eq!(c.rate_bps(), 72_923_750_000);
        assert_eq!(c.stage(), 4);
    }

    #[test]
    fn consecutive_cuts_keep_target_unless_clamped() {
        for clamp in [false, true] {
            let p = DcqcnParams {
                clamp_target_rate: clamp,
                ..hpcc_g0()
            };
            let mut c = Dcqcn::new(&p, L, 0);
            c.on_ack(&ack(T0, true));
            pump(&mut c, T0 + 4 * US + NS);
            c.on_ack(&ack(T0 + 5 * US, true));
            pump(&mut c, T0 + 8 * US + NS);
            assert_eq!(c.rate_bps(), 25_000_000_000);
            let want = if clamp { 50_000_000_000 } else { L };
            assert_eq!(c.target_rate_bps(), want, "clamp = {clamp}");
        }
    }

    #[test]
    fn no_cut_without_cnp_in_interval() {
        let mut c = Dcqcn::new(&hpcc_g0(), L, 0);
        c.on_ack(&ack(T0, true));
        pump(&mut c, T0 + 4 * US + NS);
        assert_eq!(c.rate_bps(), 50_000_000_000);
        // Decrease ticks keep firing, but without a CNP nothing is cut.
        pump(&mut c, T0 + 100 * US);
        assert_eq!(c.rate_bps(), 50_000_000_000);
        assert_eq!(c.timer_deadline(TIMER_DECREASE), Some(T0 + 100 * US + NS));
    }

    #[test]
    fn min_rate_floor() {
        let mut c = Dcqcn::new(&hpcc_g0(), L, 0);
        let mut t = T0;
        c.on_ack(&ack(t, true));
        // Halving from 100G: 50, 25, 12.5, 6.25, 3.125, 1.5625, then 0.78125 < 1G → 1G.
        for _ in 0..10 {
            t += 4 * US;
            pump(&mut c, t + NS);
            c.on_ack(&ack(t + 2 * NS, true));
        }
        assert_eq!(c.rate_bps(), 1_000_000_000);
    }

    #[test]
    fn window_tracks_rate() {
        let p = hpcc_g0().with_window(153_000, true);
        let mut c = Dcqcn::new(&p, L, 0);
        assert_eq!(c.window_bytes(), 153_000);
        c.on_ack(&ack(T0, true));
        pump(&mut c, T0 + 4 * US + NS);
        // W = 153000 · 50G / 100G.
        assert_eq!(c.window_bytes(), 76_500);
        let fixed = Dcqcn::new(&hpcc_g0().with_window(153_000, false), L, 0);
        assert_eq!(fixed.window_bytes(), 153_000);
        // window_bytes 0 → the BDP given at construction.
        let from_bdp = Dcqcn::new(&hpcc_g0().with_window(0, true), L, 125_000);
        assert_eq!(from_bdp.window_bytes(), 125_000);
        // Never below 1 B: 1000 · 1 Mb/s / 100 Gb/s = 0.01 → 1.
        let tiny = DcqcnParams {
            min_rate_bps: 1_000_000,
            ..hpcc_g0()
        }
        .with_window(1000, true);
        let mut c = Dcqcn::new(&tiny, L, 0);
        let mut t = T0;
        c.on_ack(&ack(t, true));
        for _ in 0..20 {
            t += 4 * US;
            pump(&mut c, t + NS);
            c.on_ack(&ack(t + 2 * NS, true));
        }
        assert_eq!(c.rate_bps(), 1_000_000);
        assert_eq!(c.window_bytes(), 1);
    }

    #[test]
    fn timer_reporting_is_consistent() {
        let mut c = Dcqcn::new(&DcqcnParams::hpcc_preset(L), L, 0);
        c.on_ack(&ack(T0, true));
        assert_eq!(c.next_timer(), Some((T0 + US, TIMER_ALPHA)));
        // Early or unknown timers are ignored.
        c.on_timer(T0 + US - 1, TIMER_ALPHA);
        c.on_timer(T0 + US, 7);
        c.on_timer(T0 + US, TIMER_INCREASE);
        assert_eq!(c.next_timer(), Some((T0 + US, TIMER_ALPHA)));
        c.on_timer(T0 + US, TIMER_ALPHA);
        assert_eq!(c.next_timer(), Some((T0 + 2 * US, TIMER_ALPHA)));
        pump(&mut c, T0 + 4 * US);
        assert_eq!(c.next_timer(), Some((T0 + 4 * US + NS, TIMER_DECREASE)));
        c.on_timer(T0 + 4 * US + NS, TIMER_DECREASE);
        assert_eq!(c.timer_deadline(TIMER_DECREASE), Some(T0 + 8 * US + NS));
        assert_eq!(c.next_timer(), Some((T0 + 5 * US, TIMER_ALPHA)));
        c.cancel_timers();
        assert_eq!(c.next_timer(), None);
    }

    #[test]
    fn coinciding_timers_fire_in_ns3_order() {
        // The increase timer at td + 300 µs coincides with a decrease tick; ns-3 runs the one
        // scheduled earlier (the increase timer, armed 300 µs before) first.
        let mut c = Dcqcn::new(&hpcc_g0(), L, 0);
        c.on_ack(&ack(T0, true));
        let td = T0 + 4 * US + NS;
        pump(&mut c, td);
        pump(&mut c, td + 300 * US - 1);
        assert_eq!(c.timer_deadline(TIMER_DECREASE), Some(td + 300 * US));
        assert_eq!(c.next_timer(), Some((td + 300 * US, TIMER_INCREASE)));
    }

    // ---------------------------------------------------------------- Paper variant

    const L40: u64 = 40_000_000_000;

    #[test]
    fn paper_cuts_immediately_per_cnp() {
        let mut c = Dcqcn::new(&DcqcnParams::paper(L40), L40, 0);
        assert_eq!(c.next_timer(), None);
        c.on_feedback(T0);
        // α = (1−g)·1 + g = 1 → Rc = 40G·(1 − 1/2); Rt = the rate before the cut, line rate.
        assert_eq!(c.alpha(), 1.0);
        assert_eq!(c.rate_bps(), 20_000_000_000);
        assert_eq!(c.target_rate_bps(), L40);
        assert_eq!(c.paper_stage(), PaperStage::FastRecovery);
        c.on_ack(&ack(T0 + US, true));
        assert_eq!(c.rate_bps(), 10_000_000_000);
        // Eq. (1): R_T = R_C (the rate before this cut) on every CNP.
        assert_eq!(c.target_rate_bps(), 20_000_000_000);
        // K and T restarted by the last CNP; K was armed first, so it is reported first.
        assert_eq!(c.timer_deadline(TIMER_ALPHA), Some(T0 + 56 * US));
        assert_eq!(c.timer_deadline(TIMER_INCREASE), Some(T0 + 56 * US));
        assert_eq!(c.next_timer(), Some((T0 + 56 * US, TIMER_ALPHA)));
        assert_eq!(c.timer_deadline(TIMER_DECREASE), None);
        // α decays by (1−g) per K without CNPs.
        c.on_timer(T0 + 56 * US, TIMER_ALPHA);
        assert_eq!(c.alpha(), 255.0 / 256.0);
        assert_eq!(c.timer_deadline(TIMER_ALPHA), Some(T0 + 111 * US));
    }

    #[test]
    fn paper_byte_counter_advances_stages() {
        let p = DcqcnParams {
            byte_counter_bytes: 10_000,
            ..DcqcnParams::paper(L40)
        };
        let mut c = Dcqcn::new(&p, L40, 0);
        // Before the first CNP the counter is held at B.
        for _ in 0..50 {
            c.on_send(0, 1000);
        }
        assert_eq!(c.rate_bps(), L40);
        c.on_feedback(T0);
        assert_eq!(c.rate_bps(), 20_000_000_000);
        let send = |c: &mut Dcqcn, n: usize| {
            for _ in 0..n {
                c.on_send(T0, 1000);
            }
        };
        // Exactly B bytes do not trigger; the next packet does (counter < 0).
        send(&mut c, 10);
        assert_eq!(c.byte_stage(), 0);
        send(&mut c, 1);
        assert_eq!(c.byte_stage(), 1);
        // FR step: 20G/2 + 40G/2.
        assert_eq!(c.rate_bps(), 30_000_000_000);
        send(&mut c, 11);
        assert_eq!(c.rate_bps(), 35_000_000_000);
        send(&mut c, 11);
        assert_eq!(c.rate_bps(), 37_500_000_000);
        send(&mut c, 11);
        assert_eq!(c.rate_bps(), 38_750_000_000);
        // ByteStage 5 = F but TimeStage 0 < F → select → AI: Rt = 40.04G, Rc = 19.375G + 20.02G.
        send(&mut c, 11);
        assert_eq!(c.byte_stage(), 5);
        assert_eq!(c.paper_stage(), PaperStage::ActiveIncrease);
        assert_eq!(c.target_rate_bps(), 40_040_000_000);
        assert_eq!(c.rate_bps(), 39_395_000_000);
        // Stage AI, byte event → AI: Rt = 40.08G, Rc = 19.6975G + 20.04G.
        send(&mut c, 11);
        assert_eq!(c.target_rate_bps(), 40_080_000_000);
        assert_eq!(c.rate_bps(), 39_737_500_000);
        // A new CNP with ByteStage ≠ 0 sets Rt = Rc and resets the stages.
        c.on_feedback(T0 + US);
        assert_eq!(c.target_rate_bps(), 39_737_500_000);
        assert_eq!(c.byte_stage(), 0);
        assert_eq!(c.paper_stage(), PaperStage::FastRecovery);
    }

    #[test]
    fn paper_hyper_increase_multiplier_and_halving() {
        let p = DcqcnParams {
            byte_counter_bytes: 10_000,
            fast_recovery_times: 1,
            ..DcqcnParams::paper(L40)
        };
        let mut c = Dcqcn::new(&p, L40, 0);
        let send = |c: &mut Dcqcn, n: usize| {
            for _ in 0..n {
                c.on_send(T0, 1000);
            }
        };
        c.on_feedback(T0);
        assert_eq!(c.rate_bps(), 20_000_000_000);
        // T: TimeStage 1 = F → select; ByteStage 0 < F → AI. Rt = 40.04G; Rc = 10G + 20.02G.
        pump(&mut c, T0 + 55 * US);
        assert_eq!(c.paper_stage(), PaperStage::ActiveIncrease);
        assert_eq!(c.rate_bps(), 30_020_000_000);
        // Byte event in AI → AI: Rt = 40.08G; Rc = 15.01G + 20.04G.
        send(&mut c, 11);
        assert_eq!(c.rate_bps(), 35_050_000_000);
        // T (AI stage): TimeStage 2, select → HAI ×(min(1,2) − 1 + 1) = ×1: Rt = 40.28G.
        pump(&mut c, T0 + 110 * US);
        assert_eq!(c.paper_stage(), PaperStage::HyperIncrease);
        assert_eq!(c.target_rate_bps(), 40_280_000_000);
        assert_eq!(c.rate_bps(), 37_665_000_000);
        assert_eq!(c.timer_deadline(TIMER_INCREASE), Some(T0 + 165 * US));
        // T in HAI: TimeStage 3, HAI ×1, next period T/2 = 27.5 µs.
        pump(&mut c, T0 + 165 * US);
        assert_eq!(c.target_rate_bps(), 40_480_000_000);
        assert_eq!(c.rate_bps(), 39_072_500_000);
        assert_eq!(c.timer_deadline(TIMER_INCREASE), Some(T0 + 192_500_000));
        // Byte event in HAI: ByteStage 2, HAI ×(min(2,3) − 1 + 1) = ×2: Rt = 40.88G;
        // Rc = 19.53625G + 20.44G = 39.97625G; the counter reloads with B/2.
        send(&mut c, 11);
        assert_eq!(c.byte_stage(), 2);
        assert_eq!(c.target_rate_bps(), 40_880_000_000);
        assert_eq!(c.rate_bps(), 39_976_250_000);
        send(&mut c, 5);
        assert_eq!(c.byte_stage(), 2, "B/2 = 5000 bytes not yet exceeded");
        send(&mut c, 1);
        assert_eq!(c.byte_stage(), 3);
        // ×3: Rt = 41.48G; Rc = 19.988125G + 20.74G capped at line.
        assert_eq!(c.target_rate_bps(), 41_480_000_000);
        assert_eq!(c.rate_bps(), L40);
    }

    #[test]
    fn paper_cnp_restarts_alpha_timer() {
        let mut c = Dcqcn::new(&DcqcnParams::paper(L40), L40, 0);
        c.on_feedback(T0);
        c.on_feedback(T0 + 30 * US);
        assert_eq!(c.timer_deadline(TIMER_ALPHA), Some(T0 + 85 * US));
        assert_eq!(c.timer_deadline(TIMER_INCREASE), Some(T0 + 85 * US));
    }

    #[test]
    fn ce_echo_can_be_ignored() {
        let p = DcqcnParams {
            ce_echo_is_cnp: false,
            ..DcqcnParams::paper(L40)
        };
        let mut c = Dcqcn::new(&p, L40, 0);
        c.on_ack(&ack(T0, true));
        assert_eq!(c.rate_bps(), L40);
        c.on_feedback(T0);
        assert_eq!(c.rate_bps(), 20_000_000_000);
    }

    #[test]
    fn degenerate_inputs_do_not_panic() {
        let p = DcqcnParams {
            g: f64::NAN,
            alpha_timer_ps: 0,
            rate_decrease_interval_ps: 0,
            rate_increase_timer_ps: 0,
            rate_on_first_cnp: f64::INFINITY,
            min_rate_bps: u64::MAX,
            rate_ai_bps: u64::MAX,
            rate_hai_bps: u64::MAX,
            ..DcqcnParams::hpcc_preset(L)
        }
        .with_window(u64::MAX, true);
        for variant in [Variant::HpccSim, Variant::Paper] {
            let p = DcqcnParams {
                variant,
                byte_counter_bytes: u64::MAX,
                ..p.clone()
            };
            for line in [0, 1, L, u64::MAX] {
                let mut c = Dcqcn::new(&p, line, u64::MAX);
                c.on_ack(&ack(u64::MAX - 1, true));
                c.on_feedback(u64::MAX);
                for _ in 0..20 {
                    if let Some((at, w)) = c.next_timer() {
                        c.on_timer(at, w);
                    }
                    c.on_send(u64::MAX, u64::MAX);
                }
                assert!(c.rate_bps() >= 1);
                assert!(c.window_bytes() >= 1);
            }
        }
    }

    fn ack_ue(now_ps: u64) -> AckInfo<'static> {
        AckInfo {
            marks: UE,
            ..ack(now_ps, false)
        }
    }

    fn tcd(p: DcqcnParams) -> DcqcnParams {
        DcqcnParams { hold: true, ..p }
    }

    /// The victim of pause spreading under DCQCN vs DCQCN+TCD (HPCC-sim variant, preset
    /// timers: α every 1 µs, decrease check 4 µs + 1 ns after the first CNP, g = 1/256).
    /// Plain DCQCN sees CE from the paused port's queue: α = 1 at the CNP, decays 4 times
    /// (no further CNP) to (255/256)^4 before the cut at T0 + 4.001 µs, so
    /// Rc = 100 G · (1 − (255/256)^4 / 2) = 50.778… Gb/s. With TCD the same port marks UE:
    /// no CNP, no timer, the rate stays 100 Gb/s.
    #[test]
    fn tcd_victim_keeps_its_rate_where_dcqcn_cuts_it() {
        let p = DcqcnParams::hpcc_preset(L);
        let mut plain = Dcqcn::new(&p, L, 0);
        plain.on_ack(&ack(T0, true));
        pump(&mut plain, T0 + 10 * US);
        let alpha = (255.0f64 / 256.0).powi(4);
        let want = (L as f64 * (1.0 - alpha / 2.0)) as u64;
        assert_eq!(plain.rate_bps(), want);
        assert!(want > 50_770_000_000 && want < 50_790_000_000);

        let mut victim = Dcqcn::new(&tcd(p.clone()), L, 0);
        for k in 0..100 {
            victim.on_ack(&ack_ue(T0 + k * US));
            victim.on_scheme_signal(T0 + k * US, crate::cc::SchemeSignal::Marked(UE));
            pump(&mut victim, T0 + (k + 1) * US);
        }
        assert_eq!(victim.rate_bps(), L);
        assert_eq!(victim.next_timer(), None);
        // A UE echo without the TCD flag is ignored too (plain DCQCN never sees UE marks, but
        // the flag must not change anything else).
        let mut off = Dcqcn::new(&p, L, 0);
        off.on_ack(&ack_ue(T0));
        assert_eq!(off.next_timer(), None);
    }

    /// After a real cut (CE), UE holds the rate at each increase event; plain DCQCN recovers.
    /// g = 0: α stays 1, the cut halves 100 G to 50 G at T0 + 4.001 µs; Rt stays 100 G (stage
    /// 0 at the cut). The increase timer fires 300 µs after the cut: plain fast recovery gives
    /// Rc = 50/2 + 100/2 = 75 Gb/s; with a UE echo since the cut the tick holds 50 Gb/s and the
    /// stage; the next tick without UE increases as plain DCQCN's first one did.
    #[test]
    fn tcd_ue_holds_increase_events() {
        let cut = T0 + 4 * US + FIRST_DECREASE_OFFSET_PS;
        let inc = cut + 300 * US;
        let mut plain = Dcqcn::new(&hpcc_g0(), L, 0);
        plain.on_ack(&ack(T0, true));
        pump(&mut plain, inc);
        assert_eq!(plain.rate_bps(), 75_000_000_000);
        assert_eq!(plain.stage(), 1);

        let mut t = Dcqcn::new(&tcd(hpcc_g0()), L, 0);
        t.on_ack(&ack(T0, true));
        pump(&mut t, cut);
        assert_eq!(t.rate_bps(), 50_000_000_000);
        t.on_ack(&ack_ue(cut + 100 * US));
        pump(&mut t, inc);
        assert_eq!(t.rate_bps(), 50_000_000_000);
        assert_eq!(t.target_rate_bps(), L);
        assert_eq!(t.stage(), 0);
        assert_eq!(t.held_increases(), 1);
        // Next tick (no UE since): the first fast-recovery step, 75 G.
        pump(&mut t, inc + 300 * US);
        assert_eq!(t.rate_bps(), 75_000_000_000);
        assert_eq!(t.stage(), 1);
        // CE still cuts under TCD.
        t.on_ack(&ack(inc + 301 * US, true));
        pump(&mut t, inc + 310 * US);
        assert_eq!(t.rate_bps(), 37_500_000_000);
    }

    /// A UE echo seen before a cut does not hold the first recovery step after it (HPCC-sim
    /// variant: no increase timer exists before the cut, so the UE would otherwise wait for
    /// the first tick 300 µs later): UE at T0 − 5 µs, CE at T0, cut at T0 + 4.001 µs, the
    /// tick 300 µs after the cut runs fast recovery (75 G), as plain DCQCN's.
    #[test]
    fn tcd_ue_before_a_cut_does_not_hold_after_it() {
        let cut = T0 + 4 * US + FIRST_DECREASE_OFFSET_PS;
        let mut t = Dcqcn::new(&tcd(hpcc_g0()), L, 0);
        t.on_ack(&ack_ue(T0 - 5 * US));
        t.on_ack(&ack(T0, true));
        pump(&mut t, cut);
        assert_eq!(t.rate_bps(), 50_000_000_000);
        pump(&mut t, cut + 300 * US);
        assert_eq!(t.rate_bps(), 75_000_000_000);
        assert_eq!(t.held_increases(), 0);
    }

    /// Paper variant: UE holds both the timer and the byte-counter increase events.
    #[test]
    fn tcd_paper_variant_holds_timer_and_byte_events() {
        let p = DcqcnParams {
            g: 0.0,
            byte_counter_bytes: 10_000,
            ..tcd(DcqcnParams::paper(L))
        };
        let mut c = Dcqcn::new(&p, L, 0);
        c.on_feedback(T0);
        // Paper: α = (1 − g)·α + g = 1 → Rc = L/2 at once; Rt = L (ByteStage was 0).
        assert_eq!(c.rate_bps(), L / 2);
        c.on_scheme_signal(T0 + US, crate::cc::SchemeSignal::Marked(UE));
        // 10 001 B sent: a byte-counter event, held.
        c.on_send(T0 + 2 * US, 10_001);
        assert_eq!(c.rate_bps(), L / 2);
        assert_eq!(c.byte_stage(), 0);
        // Next byte event, no UE since: fast recovery Rc = (L/2 + L)/2.
        c.on_send(T0 + 3 * US, 10_001);
        assert_eq!(c.rate_bps(), 75_000_000_000);
        assert_eq!(c.byte_stage(), 1);
        // Timer T (55 µs after the CNP), with UE since: held, timer re-armed 55 µs later.
        c.on_scheme_signal(T0 + 4 * US, crate::cc::SchemeSignal::Marked(UE));
        pump(&mut c, T0 + 55 * US);
        assert_eq!(c.rate_bps(), 75_000_000_000);
        assert_eq!(c.stage(), 0);
        assert_eq!(c.timer_deadline(TIMER_INCREASE), Some(T0 + 110 * US));
        assert_eq!(c.held_increases(), 2);
    }
}
