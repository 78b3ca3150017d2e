//! TIMELY (Mittal et al., SIGCOMM'15) as implemented by HPCC-sim (`CC_MODE 7`,
//! `rdma-hw.cc` `UpdateRateTimely`; `specs/timely.md`): a rate-based controller driven by the
//! RTT and its gradient, updated once per RTT.
//!
//! The update runs only on an ACK with `ack_seq > lastUpdateSeq`, i.e. the first ACK of data
//! sent after the previous update; all other ACKs are ignored (HPCC-sim's `FastReactTimely` is
//! empty). The first such ACK only records the RTT. Afterwards, with `rtt` = this ACK's sample:
//! - `d = (1 − α)·rttDiff + α·(rtt − lastRtt)` — α weights the **new** difference;
//!   `gradient = d / minRTT` with `minRTT` a configured constant;
//! - `rtt < T_low` → increase; else `rtt > T_high` → decrease by `c = 1 − β(1 − T_high/rtt)`;
//!   else `gradient ≤ 0` → increase; else decrease by `c = max(0, 1 − β·gradient)`;
//! - increase: `R += AI` (`HAI` once `incStage ≥ 5`), capped at line rate, `incStage++`;
//!   decrease: `R = max(MinRate, R·c)`, `incStage = 0`; in both cases `rttDiff = d`;
//! - then, if `snd_nxt > lastUpdateSeq`: `lastUpdateSeq = snd_nxt`, `lastRtt = rtt`.
//!
//! TIMELY+TCD ([`TimelyParams::hold`]): an update that follows UE echoes and no CE echo holds
//! the rate.
//!
//! The optional window (TIMELY+win, HPCC-sim `HAS_WIN`/`VAR_WIN`) is the BDP, or with `VAR_WIN`
//! `BDP × R/line` (at least 1 B).

use super::hold::HoldEchoes;
use super::{AckInfo, CongestionControl, SchemeSignal};

/// Parameters of [`Timely`].
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TimelyParams {
    /// Additive increase δ, bits/s (`RATE_AI`; preset `10·bw/10` Mb/s = 100 Mb/s at 100 G).
    pub rate_ai_bps: u64,
    /// Hyper additive increase, bits/s (`RATE_HAI`; preset `50·bw/10` Mb/s = 500 Mb/s at 100 G).
    pub rate_hai_bps: u64,
    /// Consecutive increases after which HAI replaces AI (HPCC-sim hard-codes 5).
    pub hai_after: u32,
    /// EWMA weight α of the **new** RTT difference (0.875).
    pub alpha: f64,
    /// Multiplicative-decrease factor β (0.8).
    pub beta: f64,
    /// Below this RTT always increase, picoseconds (50 µs).
    pub t_low_ps: u64,
    /// Above this RTT decrease by `1 − β(1 − T_high/rtt)`, picoseconds (500 µs).
    pub t_high_ps: u64,
    /// Gradient normaliser (a constant, not a measurement), picoseconds (20 µs).
    pub min_rtt_ps: u64,
    /// Rate floor, bits/s (template `MIN_RATE 1000Mb/s`; attribute default 100 Mb/s).
    pub min_rate_bps: u64,
    /// Limit inflight bytes with a window (TIMELY+win, `HAS_WIN 1`).
    pub has_win: bool,
    /// Scale the window with the rate: `W = BDP × R/line` (`VAR_WIN 1`).
    pub var_win: bool,
    /// Window BDP, bytes; 0 = the topology's maximum BDP (`maxBdp`, `GLOBAL_T 1`).
    pub win_bytes: u64,
    /// TIMELY+TCD (`cc.tcd`, `specs/tcd.md` §7): at the once-per-RTT update, if a UE echo and
    /// no CE echo arrived since the previous update, hold the rate (no increase, no decrease;
    /// `rttDiff` and `lastRtt` still update). With a CE echo, or with no mark, TIMELY's rule
    /// runs unchanged (the optional "suppress gradient decreases when unmarked" of §7 is not
    /// taken).
    #[serde(rename = "tcd", skip_serializing_if = "std::ops::Not::not")]
    pub hold: bool,
}

impl TimelyParams {
    /// HPCC-sim's `run.py --cc timely` preset for hosts of `host_rate_bps` (no window): AI
    /// `host/1000` (100 Mb/s at 100 G), HAI `host/200` (500 Mb/s), HAI after 5, α 0.875, β 0.8,
    /// T_low 50 µs, T_high 500 µs, minRTT 20 µs, MinRate 1 Gb/s.
    pub fn hpcc_preset(host_rate_bps: u64) -> Self {
        TimelyParams {
            rate_ai_bps: host_rate_bps / 1000,
            rate_hai_bps: host_rate_bps / 200,
            hai_after: 5,
            alpha: 0.875,
            beta: 0.8,
            t_low_ps: 50_000_000,
            t_high_ps: 500_000_000,
            min_rtt_ps: 20_000_000,
            min_rate_bps: 1_000_000_000,
            has_win: false,
            var_win: false,
            win_bytes: 0,
            hold: false,
        }
    }

    /// Add a window of `bdp_bytes` (0 = the topology's max BDP), scaled by R/line when
    /// `var_win` (`run.py --cc timely_vwin`: `with_window(0, true)`).
    pub fn with_window(mut self, bdp_bytes: u64, var_win: bool) -> Self {
        self.has_win = true;
        self.var_win = var_win;
        self.win_bytes = bdp_bytes;
        self
    }
}

impl Default for TimelyParams {
    /// [`TimelyParams::hpcc_preset`] for 100 Gb/s hosts.
    fn default() -> Self {
        Self::hpcc_preset(100_000_000_000)
    }
}

/// TIMELY's constants for QPs of one line rate: its parameters, the line rate and the base
/// window. A run keeps one set per line rate in its [`crate::cc::CcSlab`], not one per flow
/// ([`TimelyState`] holds the rest).
#[derive(Clone, Debug, PartialEq)]
pub struct TimelyConst {
    p: TimelyParams,
    line_bps: u64,
    win_bytes: u64,
}

/// The state of one QP's TIMELY sender (see the module documentation); its constants are a
/// [`TimelyConst`].
#[derive(Clone, Debug)]
pub struct TimelyState {
    rate_bps: u64,
    rtt_diff_ps: f64,
    last_rtt_ps: u64,
    inc_stage: u32,
    last_update_seq: u64,
    started: bool,
    /// TCD ([`HoldEchoes`]): CE / UE echoes since the last update; updates that held the
    /// rate because of UE.
    hold: HoldEchoes,
    /// Index of its [`TimelyConst`] in the slab that stores it (0 in an owning [`Timely`]).
    k: u32,
}

/// The TIMELY sender state machine of one QP (see the module documentation), owning its
/// constants (as built by [`crate::cc::CcConfig::build`] and used on its own in tests); the
/// simulator's [`crate::cc::CcSlab`] splits it into the shared [`TimelyConst`] and the
/// per-flow [`TimelyState`].
#[derive(Clone, Debug)]
pub struct Timely {
    k: TimelyConst,
    s: TimelyState,
}

impl TimelyConst {
    /// What tells constants of one run apart (the rest comes from the run's one
    /// [`TimelyParams`]): the line rate and the base window.
    pub fn key(&self) -> (u64, u64, u64, u64) {
        (self.line_bps, self.win_bytes, 0, 0)
    }
}

split_controller!(
    Timely,
    TimelyConst,
    TimelyState,
    TimelyMut,
    TimelyRef,
    "TIMELY sender"
);

impl Timely {
    /// New controller for a NIC of `line_rate_bps` (bits/s), starting at line rate.
    /// `bdp_bytes` (the topology's max BDP) sizes the window when `p.has_win` and
    /// `p.win_bytes == 0`.
    pub fn new(p: &TimelyParams, line_rate_bps: u64, bdp_bytes: u64) -> Self {
        let line_bps = line_rate_bps.max(1);
        let win = if p.win_bytes > 0 {
            p.win_bytes
        } else {
            bdp_bytes
        };
        let k = TimelyConst {
            p: p.clone(),
            line_bps,
            win_bytes: win.max(1),
        };
        let s = TimelyState {
            rate_bps: line_bps,
            rtt_diff_ps: 0.0,
            last_rtt_ps: 0,
            inc_stage: 0,
            last_update_seq: 0,
            started: false,
            hold: HoldEchoes::default(),
            k: 0,
        };
        Timely { k, s }
    }

    /// TCD: updates that held the rate because of a UE echo.
    pub fn held_updates(&self) -> u64 {
        self.view().held_updates()
    }

    /// EWMA of RTT differences `rttDiff`, picoseconds.
    pub fn rtt_diff_ps(&self) -> f64 {
        self.view().rtt_diff_ps()
    }

    /// RTT recorded at the last update (`lastRtt`), picoseconds.
    pub fn last_rtt_ps(&self) -> u64 {
        self.view().last_rtt_ps()
    }

    /// Consecutive increases (`incStage`).
    pub fn inc_stage(&self) -> u32 {
        self.view().inc_stage()
    }

    /// `lastUpdateSeq`: the next update happens on an ACK above this byte.
    pub fn last_update_seq(&self) -> u64 {
        self.view().last_update_seq()
    }
}

impl TimelyRef<'_> {
    /// TCD: updates that held the rate because of a UE echo.
    pub fn held_updates(&self) -> u64 {
        self.s.hold.held
    }

    /// EWMA of RTT differences `rttDiff`, picoseconds.
    pub fn rtt_diff_ps(&self) -> f64 {
        self.s.rtt_diff_ps
    }

    /// RTT recorded at the last update (`lastRtt`), picoseconds.
    pub fn last_rtt_ps(&self) -> u64 {
        self.s.last_rtt_ps
    }

    /// Consecutive increases (`incStage`).
    pub fn inc_stage(&self) -> u32 {
        self.s.inc_stage
    }

    /// `lastUpdateSeq`: the next update happens on an ACK above this byte.
    pub fn last_update_seq(&self) -> u64 {
        self.s.last_update_seq
    }

    /// [`CongestionControl::rate_bps`].
    pub fn rate_bps(&self) -> u64 {
        self.s.rate_bps.max(1)
    }

    /// [`CongestionControl::window_bytes`].
    pub fn window_bytes(&self) -> u64 {
        if !self.k.p.has_win {
            u64::MAX
        } else if self.k.p.var_win {
            let w = u128::from(self.k.win_bytes) * u128::from(self.s.rate_bps)
                / u128::from(self.k.line_bps);
            (w as u64).max(1)
        } else {
            self.k.win_bytes
        }
    }

    /// [`CongestionControl::next_timer`]: none.
    pub fn next_timer(&self) -> Option<(u64, u8)> {
        None
    }

    /// [`CongestionControl::adjusts_pacing`]: no (only HPCC moves the next send time).
    pub fn adjusts_pacing(&self) -> bool {
        false
    }
}

impl TimelyMut<'_> {
    fn update(&mut self, rtt: u64) {
        let new_diff = rtt as f64 - self.s.last_rtt_ps as f64;
        let d = (1.0 - self.k.p.alpha) * self.s.rtt_diff_ps + self.k.p.alpha * new_diff;
        let gradient = d / self.k.p.min_rtt_ps.max(1) as f64;
        if self.k.p.hold && self.s.hold.hold_update() {
            // TCD: only PFC-affected ports on the path: hold the rate.
            if d.is_finite() {
                self.s.rtt_diff_ps = d;
            }
            return;
        }
        let decrease = if rtt < self.k.p.t_low_ps {
            None
        } else if rtt > self.k.p.t_high_ps {
            Some(1.0 - self.k.p.beta * (1.0 - self.k.p.t_high_ps as f64 / rtt as f64))
        } else if gradient <= 0.0 {
            None
        } else {
            Some((1.0 - self.k.p.beta * gradient).max(0.0))
        };
        match decrease {
            None => {
                let step = if self.s.inc_stage < self.k.p.hai_after {
                    self.k.p.rate_ai_bps
                } else {
                    self.k.p.rate_hai_bps
                };
                self.s.rate_bps = self.s.rate_bps.saturating_add(step).min(self.k.line_bps);
                self.s.inc_stage = self.s.inc_stage.saturating_add(1);
            }
            Some(c) => {
                let c = if c.is_nan() { 1.0 } else { c };
                let r = (self.s.rate_bps as f64 * c) as u64;
                self.s.rate_bps = r.max(self.k.p.min_rate_bps).min(self.k.line_bps);
                self.s.inc_stage = 0;
            }
        }
        if d.is_finite() {
            self.s.rtt_diff_ps = d;
        }
    }
}

impl CongestionControl for TimelyMut<'_> {
    fn on_ack(&mut self, info: &AckInfo<'_>) {
        if self.k.p.hold {
            self.s.hold.note_ack(info.ce_echo, !info.marks.is_empty());
        }
        if info.ack_seq <= self.s.last_update_seq {
            return;
        }
        if self.s.started {
            self.update(info.rtt_ps);
        }
        self.s.hold.clear();
        self.s.started = true;
        if info.snd_nxt > self.s.last_update_seq {
            self.s.last_update_seq = info.snd_nxt;
            self.s.last_rtt_ps = info.rtt_ps;
        }
    }

    /// PB-FS's rate becomes the rate. TCD's UE reaches TIMELY as ACK echoes only
    /// ([`HoldEchoes`]): a UE CNP changes nothing.
    fn on_scheme_signal(&mut self, _now_ps: u64, signal: SchemeSignal) {
        if let SchemeSignal::SetRate(rate_bps) = signal {
            self.s.rate_bps = rate_bps.clamp(
                self.k.p.min_rate_bps.clamp(1, self.k.line_bps),
                self.k.line_bps,
            );
        }
    }

    fn rate_bps(&self) -> u64 {
        self.r().rate_bps()
    }

    fn window_bytes(&self) -> u64 {
        self.r().window_bytes()
    }
}

impl CongestionControl for Timely {
    fn on_ack(&mut self, info: &AckInfo<'_>) {
        self.view_mut().on_ack(info)
    }

    fn on_scheme_signal(&mut self, now_ps: u64, signal: SchemeSignal) {
        self.view_mut().on_scheme_signal(now_ps, signal)
    }

    fn rate_bps(&self) -> u64 {
        self.view().rate_bps()
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

    const LINE: u64 = 100_000_000_000;
    const US: u64 = 1_000_000;
    const G: u64 = 1_000_000_000;
    const M: u64 = 1_000_000;

    fn info(ack_seq: u64, snd_nxt: u64, rtt_ps: u64) -> AckInfo<'static> {
        AckInfo {
            now_ps: 0,
            ack_seq,
            newly_acked_bytes: 1000,
            snd_nxt,
            ce_echo: false,
            marks: crate::engine::packet::Marks::NONE,
            rtt_ps,
            nack: false,
            int: &[],
        }
    }

    /// Feeds one gating ACK per call (each above the previous snd_nxt).
    struct Drv {
        seq: u64,
    }

    impl Drv {
        fn rtt(&mut self, c: &mut Timely, rtt_ps: u64) {
            self.seq += 10_000;
            c.on_ack(&info(self.seq, self.seq + 5_000, rtt_ps));
        }
    }

    fn start(rtt_ps: u64) -> (Timely, Drv) {
        let mut c = Timely::new(&TimelyParams::hpcc_preset(LINE), LINE, 150_000);
        let mut d = Drv { seq: 0 };
        d.rtt(&mut c, rtt_ps);
        (c, d)
    }

    #[test]
    fn preset_values() {
        let p = TimelyParams::hpcc_preset(LINE);
        assert_eq!((p.rate_ai_bps, p.rate_hai_bps), (100 * M, 500 * M));
        assert_eq!(
            (p.t_low_ps, p.t_high_ps, p.min_rtt_ps),
            (50 * US, 500 * US, 20 * US)
        );
        assert_eq!(
            (p.alpha, p.beta, p.hai_after, p.min_rate_bps),
            (0.875, 0.8, 5, G)
        );
        assert_eq!(TimelyParams::default(), p);
        let c = Timely::new(&p, LINE, 150_000);
        assert_eq!(c.rate_bps(), LINE);
        assert_eq!(c.window_bytes(), u64::MAX);
    }

    #[test]
    fn first_ack_only_records_rtt() {
        let (c, _) = start(1000 * US);
        assert_eq!(c.rate_bps(), LINE);
        assert_eq!(c.last_rtt_ps(), 1000 * US);
        assert_eq!(c.last_update_seq(), 15_000);
    }

    #[test]
    fn high_rtt_decrease() {
        let (mut c, mut d) = start(1000 * US);
        // rtt 1000 µs > T_high: c = 1 − 0.8·(1 − 500/1000) = 0.6.
        d.rtt(&mut c, 1000 * US);
        assert_eq!(c.rate_bps(), 60 * G);
        assert_eq!(c.inc_stage(), 0);
        // Gradient is ignored in this branch (RTT is flat, d = 0), still a decrease.
        assert_eq!(c.rtt_diff_ps(), 0.0);
    }

    #[test]
    fn low_rtt_increase_then_hai_after_five() {
        let (mut c, mut d) = start(1000 * US);
        d.rtt(&mut c, 1000 * US); // 60 G
        // rtt 10 µs < T_low: increase whatever the (very negative) gradient.
        let mut expect = 60 * G;
        for k in 0..8 {
            d.rtt(&mut c, 10 * US);
            expect += if k < 5 { 100 * M } else { 500 * M };
            assert_eq!(c.rate_bps(), expect, "step {k}");
            assert_eq!(c.inc_stage(), k + 1);
        }
        // Increases are capped at line rate.
        for _ in 0..200 {
            d.rtt(&mut c, 10 * US);
        }
        assert_eq!(c.rate_bps(), LINE);
    }

    #[test]
    fn gradient_branches_and_ewma_weight() {
        let (mut c, mut d) = start(1000 * US);
        d.rtt(&mut c, 1000 * US); // 60 G, rttDiff 0, lastRtt 1000 µs
        // In the band, falling RTT: new diff −800 µs → d = 0.875·(−800) = −700 µs ≤ 0 → increase.
        d.rtt(&mut c, 200 * US);
        assert_eq!(c.rate_bps(), 60 * G + 100 * M);
        assert_eq!(c.rtt_diff_ps(), -700.0 * US as f64);
        // Rising RTT: new diff +300 µs → d = 0.125·(−700) + 0.875·300 = 175 µs, gradient 8.75
        // → c = max(0, 1 − 0.8·8.75) = 0 → MinRate.
        d.rtt(&mut c, 500 * US);
        assert_eq!(c.rtt_diff_ps(), 175.0 * US as f64);
        assert_eq!(c.rate_bps(), G);
        assert_eq!(c.inc_stage(), 0);
        // RTT 1000 → 420 → 440 → 480 µs: the EWMA keeps d ≤ 0 for one rise, then cuts.
        let (mut c, mut d) = start(1000 * US);
        d.rtt(&mut c, 1000 * US); // 60 G
        d.rtt(&mut c, 420 * US); // d = 0.875·(−580) = −507.5 µs → increase to 60.1 G
        assert_eq!(c.rate_bps(), 60 * G + 100 * M);
        d.rtt(&mut c, 440 * US);
        // d = 0.125·(−507.5) + 0.875·20 = −45.9375 µs ≤ 0 → increase.
        assert_eq!(c.rate_bps(), 60 * G + 200 * M);
        d.rtt(&mut c, 480 * US);
        // d = 0.125·(−45.9375) + 0.875·40 = 29.2578125 µs, gradient 1.462890625,
        // c = 1 − 0.8·1.462890625 < 0 → clamp 0 → MinRate.
        assert_eq!(c.rate_bps(), G);
        // A small gradient: from a flat history.
        let (mut c, mut d) = start(100 * US);
        d.rtt(&mut c, 100 * US); // in band, d = 0 → increase (60 G not applied: still line)
        assert_eq!(c.rate_bps(), LINE);
        d.rtt(&mut c, 110 * US);
        // d = 0.875·10 = 8.75 µs, gradient 0.4375, c = 1 − 0.35 = 0.65.
        // (R·c is truncated to whole b/s as HPCC-sim's DataRate does: 64 999 999 999.)
        assert!(c.rate_bps().abs_diff(65 * G) <= 1, "{}", c.rate_bps());
        assert_eq!(c.rtt_diff_ps(), 8.75 * US as f64);
    }

    #[test]
    fn once_per_rtt_gating() {
        let mut c = Timely::new(&TimelyParams::hpcc_preset(LINE), LINE, 0);
        c.on_ack(&info(1000, 50_000, 100 * US)); // first: lastUpdateSeq 50 000
        // ACKs at or below lastUpdateSeq are ignored, even with a huge RTT.
        for s in (2000..=50_000).step_by(1000) {
            c.on_ack(&info(s, 60_000, 5000 * US));
        }
        assert_eq!(c.rate_bps(), LINE);
        assert_eq!(c.last_update_seq(), 50_000);
        assert_eq!(c.last_rtt_ps(), 100 * US);
        c.on_ack(&info(51_000, 90_000, 1000 * US));
        assert_eq!(c.rate_bps(), 60 * G);
        assert_eq!((c.last_update_seq(), c.last_rtt_ps()), (90_000, 1000 * US));
        // Update with snd_nxt rewound below lastUpdateSeq (go-back-N): rate changes, but
        // lastUpdateSeq and lastRtt stay.
        c.on_ack(&info(95_000, 80_000, 1000 * US));
        assert_eq!(c.rate_bps(), 36 * G);
        assert_eq!((c.last_update_seq(), c.last_rtt_ps()), (90_000, 1000 * US));
    }

    #[test]
    fn windows() {
        let p = TimelyParams::hpcc_preset(LINE).with_window(0, true);
        let mut c = Timely::new(&p, LINE, 150_000);
        assert_eq!(c.window_bytes(), 150_000);
        let mut d = Drv { seq: 0 };
        d.rtt(&mut c, 1000 * US);
        d.rtt(&mut c, 1000 * US); // 60 G
        assert_eq!(c.window_bytes(), 90_000);
        let p = TimelyParams::hpcc_preset(LINE).with_window(125_000, false);
        let mut c = Timely::new(&p, LINE, 150_000);
        d.rtt(&mut c, 1000 * US);
        d.rtt(&mut c, 1000 * US);
        assert_eq!(c.window_bytes(), 125_000);
        // VAR_WIN never goes below 1 B.
        let p = TimelyParams {
            min_rate_bps: 0,
            ..TimelyParams::hpcc_preset(LINE).with_window(10, true)
        };
        let mut c = Timely::new(&p, LINE, 0);
        d.rtt(&mut c, 100 * US);
        d.rtt(&mut c, 400 * US); // steep rise: c = 0, R = 0
        assert_eq!(c.rate_bps(), 1);
        assert_eq!(c.window_bytes(), 1);
    }

    #[test]
    fn degenerate_inputs_do_not_panic() {
        let p = TimelyParams {
            min_rtt_ps: 0,
            t_low_ps: 0,
            t_high_ps: 0,
            ..TimelyParams::default()
        };
        let mut c = Timely::new(&p, 0, 0);
        for (s, rtt) in [(1, 0), (2, u64::MAX), (3, 0), (u64::MAX, 7)] {
            c.on_ack(&info(s, s.saturating_add(1), rtt));
            assert!(c.rate_bps() >= 1 && c.window_bytes() >= 1);
        }
    }

    /// TIMELY+TCD at a rising RTT inside [T_low, T_high] (a gradient decrease for plain
    /// TIMELY): start at RTT 60 µs, next update at 80 µs: d = 0.875 · 20 µs = 17.5 µs,
    /// gradient = 17.5/20 = 0.875, c = 1 − 0.8 · 0.875 = 0.3 → plain rate 30 Gb/s. With only UE
    /// echoes since the last update, TIMELY+TCD holds 100 Gb/s but still records rttDiff; with
    /// a CE echo it cuts like plain TIMELY.
    #[test]
    fn tcd_holds_on_ue_and_cuts_on_ce() {
        let (mut plain, mut d) = start(60 * US);
        d.rtt(&mut plain, 80 * US);
        // 0.3 in f64 arithmetic truncates to 1 b/s below 30 G.
        assert!(
            (30 * G).abs_diff(plain.rate_bps()) <= 1,
            "{}",
            plain.rate_bps()
        );

        let p = TimelyParams {
            hold: true,
            ..TimelyParams::hpcc_preset(LINE)
        };
        let mut c = Timely::new(&p, LINE, 150_000);
        let mut d = Drv { seq: 0 };
        d.rtt(&mut c, 60 * US);
        // A UE echo on a non-gating ACK (ack_seq below lastUpdateSeq) counts for the RTT.
        c.on_ack(&AckInfo {
            marks: UE,
            ..info(d.seq + 1000, d.seq + 5_000, 70 * US)
        });
        d.rtt(&mut c, 80 * US);
        assert_eq!(c.rate_bps(), LINE);
        assert_eq!(c.rtt_diff_ps(), 17.5 * US as f64);
        assert_eq!(c.held_updates(), 1);
        // Next RTT: no mark → plain rule: rtt 80 µs again, d = 0.125·17.5 µs = 2.1875 µs,
        // gradient 0.109375, c = 1 − 0.0875 = 0.9125 → 91.25 Gb/s.
        d.rtt(&mut c, 80 * US);
        assert!(
            91_250_000_000u64.abs_diff(c.rate_bps()) <= 1,
            "{}",
            c.rate_bps()
        );
        // CE and UE in the same RTT: CE wins (TIMELY's rule runs).
        c.on_ack(&AckInfo {
            marks: UE,
            ..info(d.seq + 1000, d.seq + 5_000, 80 * US)
        });
        c.on_ack(&AckInfo {
            ce_echo: true,
            ..info(d.seq + 2000, d.seq + 5_000, 80 * US)
        });
        let before = c.rate_bps();
        d.rtt(&mut c, 100 * US);
        assert!(c.rate_bps() < before);
        assert_eq!(c.held_updates(), 1);
    }
}
