//! HPCC (Li et al., SIGCOMM'19, `seeds/hpcc.txt` §3, Algorithm 1): window-based congestion
//! control driven by per-hop INT records (`ts`, `txBytes`, `qLen`, `B`) echoed in every ACK.
//!
//! Per ACK the sender estimates the normalised inflight bytes of every link on the path,
//! `u' = min(qLen, last qLen)/(B·T) + txRate/B` (Eqn 2, with `txRate` from the change of
//! `txBytes` over the change of `ts` since the previous ACK's record of the same hop), keeps the
//! largest `u'` and folds it into an EWMA `U` weighted by `τ/T` (τ = that hop's sample interval,
//! capped at T). The window is then `W = W^c/(U/η) + W_AI` (multiplicative step) or
//! `W = W^c + W_AI` (additive step, at most `maxStage` times in a row while `U < η`). The
//! reference window `W^c` and `incStage` are committed only once per RTT: on the first ACK that
//! acknowledges data sent after the previous commit (`ack_seq > lastUpdateSeq`, then
//! `lastUpdateSeq = snd_nxt`). The pacing rate is `R = W/T`.
//!
//! ## Paper vs. HPCC-sim
//! The default ([`HpccParams::paper`]) is the paper. The public ns-3 simulator (HPCC-sim,
//! `rdma-hw.cc` `UpdateRateHp`) implements the same control law on the *rate*: it keeps
//! `R^c`/`R`, adds `RATE_AI` in rate, clamps R to `[MinRate, line]` and derives the window as
//! `maxBdp·R/line` (`VAR_WIN`), normalising the queue term by `maxBdp/line` instead of T. Both
//! are implemented here on one internal state, a window W in bytes against a *reference BDP* D
//! (the window at line rate): the paper uses `D = B_NIC·T`, HPCC-sim `D = maxBdp`; the rate is
//! always `W·line/D`. With `maxBdp = line·maxRtt` (uniform host rates) the two coincide except
//! for window rounding and INT quantisation. Other HPCC-sim facts reproduced by the controller:
//! the initial `U` is 1; the first ACK only stores INT and opens the first update window
//! (`lastUpdateSeq = snd_nxt`); `lastUpdateSeq` never moves backwards; with `FAST_REACT 0`
//! ([`Reaction::PerRtt`]) the non-committing ACKs are ignored entirely (not even their INT is
//! stored), so the next sample spans the whole RTT.
//!
//! With `VAR_WIN 0` ([`HpccParams::var_win`] false) HPCC-sim's window is the fixed `maxBdp`
//! while the rate follows the law; that is reproduced too. INT records are capped at
//! [`MAX_INT_HOPS`] (5) switches per path, HPCC-sim's `IntHeader::maxHop`; see
//! [`int_hop_limit_warning`] for what differs on longer paths.
//!
//! Additions beyond both (documented guards): a change of the hop count, or a hop whose
//! timestamp or byte counter goes backwards or whose line rate changes, is taken as a path change
//! (the paper's `pathID` check) and only re-seeds the stored INT; a hop with `Δts = 0` or `B = 0`
//! gives no sample; an ACK without any sample changes nothing. W is clamped to
//! `[max(MinRate·D/line, 1 B), D]` (HPCC-sim clamps the rate to `[MinRate, line]`; the paper
//! states no bound).

use super::{AckInfo, CongestionControl, SchemeSignal};
use crate::engine::packet::{IntHop, MAX_INT_HOPS};

/// Initial value of the utilisation EWMA `U` (HPCC-sim `hp.u = 1`).
const U_INIT: f64 = 1.0;
/// Picoseconds per second.
const PS_PER_S: f64 = 1e12;

/// When the controller reacts to ACKs (HPCC paper §3.2 and Fig. 13).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reaction {
    /// HPCC proper (HPCC-sim `FAST_REACT 1`): recompute W on every ACK from the reference
    /// window `W^c`, commit `W^c = W` once per RTT.
    PerAck,
    /// Fig. 13 "per-RTT" (HPCC-sim `FAST_REACT 0`): only the first ACK of each RTT is used
    /// (measurement and window update); all other ACKs are ignored.
    PerRtt,
    /// Fig. 13 "per-ACK": every ACK recomputes W *and* commits `W^c = W` (and `incStage`),
    /// so ACKs describing the same queue compound the decrease (over-reaction).
    PerAckOnly,
}

/// The additive-increase step `W_AI`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HpccAi {
    /// Bytes added to the window per step (paper: 80 B at 100 Gb/s).
    Bytes(f64),
    /// Bits per second added to the rate per step (HPCC-sim `RATE_AI`); the equivalent window
    /// step is `RATE_AI × D/line`, so the rate step (`W·line/D`) is exactly `RATE_AI`, as in
    /// HPCC-sim. That is `RATE_AI × T` for the paper's `D = line·T`, but with HPCC-sim's
    /// `D = maxBdp` only when `maxBdp = line·maxRtt` (uniform host rates, the bottleneck of
    /// the longest pair at the NIC rate).
    RateBps(u64),
}

/// Quantisation of the INT fields as the HPCC-sim header stores them (`int-header.h`:
/// `txBytes` in units of `128·INT_MULTI` B, `qLen` in units of `80·INT_MULTI` B, time in ns).
/// Values are floored to a multiple of the unit before use; a unit of 1 means exact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct IntQuantum {
    /// Unit of the transmitted-bytes counter, bytes (≥ 1).
    pub tx_bytes_unit: u64,
    /// Unit of the queue length, bytes (≥ 1).
    pub qlen_unit: u32,
    /// Unit of the timestamp, picoseconds (≥ 1).
    pub ts_unit_ps: u64,
}

impl IntQuantum {
    /// No quantisation: use the switch's exact values.
    pub const fn exact() -> Self {
        IntQuantum {
            tx_bytes_unit: 1,
            qlen_unit: 1,
            ts_unit_ps: 1,
        }
    }

    /// HPCC-sim's encoding for `INT_MULTI = multi` (`run.py`: `bw/25`): tx bytes in
    /// `128·multi` B, qlen in `80·multi` B, time in whole ns.
    pub fn hpcc_sim(multi: u32) -> Self {
        let m = multi.max(1);
        IntQuantum {
            tx_bytes_unit: 128 * u64::from(m),
            qlen_unit: 80u32.saturating_mul(m),
            ts_unit_ps: 1000,
        }
    }

    fn apply(&self, h: &IntHop) -> IntHop {
        IntHop {
            ts_ps: floor_to_u64(h.ts_ps, self.ts_unit_ps),
            tx_bytes: floor_to_u64(h.tx_bytes, self.tx_bytes_unit),
            qlen_bytes: floor_to_u32(h.qlen_bytes, self.qlen_unit),
            rate_mbps: h.rate_mbps,
        }
    }
}

/// `x` floored to a multiple of `unit` (a unit of 0 counts as 1): `x / unit · unit`, with a
/// mask instead of the division when `unit` is a power of two (the same value; the
/// per-ACK path quantises every hop's fields).
#[inline(always)]
fn floor_to_u64(x: u64, unit: u64) -> u64 {
    let m = unit.max(1);
    if m & (m - 1) == 0 {
        x & !(m - 1)
    } else {
        x / m * m
    }
}

/// [`floor_to_u64`] for 32-bit values.
#[inline(always)]
fn floor_to_u32(x: u32, unit: u32) -> u32 {
    let m = unit.max(1);
    if m & (m - 1) == 0 {
        x & !(m - 1)
    } else {
        x / m * m
    }
}

/// Parameters of [`Hpcc`].
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct HpccParams {
    /// Target utilisation η (`U_TARGET`), dimensionless; paper and HPCC-sim 0.95.
    pub eta: f64,
    /// Additive-increase stages before a multiplicative increase (`MI_THRESH`). The paper uses
    /// 5; HPCC-sim's public presets (`run.py --cc hp`) use 0, i.e. every update is
    /// multiplicative.
    pub max_stage: u32,
    /// Additive increase `W_AI`.
    pub ai: HpccAi,
    /// Base RTT T, picoseconds; 0 = the topology's maximum base RTT (HPCC-sim `GLOBAL_T 1`).
    /// The paper used 13 µs ("slightly above the max RTT") in its simulations.
    pub base_rtt_ps: u64,
    /// Reaction strategy (HPCC = [`Reaction::PerAck`]).
    pub reaction: Reaction,
    /// Per-hop state (HPCC-sim `MULTI_RATE 1`): each hop keeps its own `U`, `W^c` and
    /// `incStage` and W is the minimum over hops. Default false (single state driven by the
    /// most-loaded hop, as in Algorithm 1 and HPCC-sim `MULTI_RATE 0`).
    pub multi_rate: bool,
    /// Lower bound of the pacing rate, bits/s (HPCC-sim template `MIN_RATE 1000Mb/s`; the
    /// paper has none, so 0 there, meaning only W ≥ 1 B).
    pub min_rate_bps: u64,
    /// HPCC-sim's rate formulation: reference BDP D = the topology's max BDP (`maxBdp`) rather
    /// than `B_NIC·T`, window `⌊maxBdp·R/line⌋` (≥ 1 B).
    pub hpcc_sim_rate_based: bool,
    /// The window the NIC enforces follows the rate (HPCC-sim `VAR_WIN 1`; the paper's W).
    /// False: HPCC-sim `VAR_WIN 0` (`RdmaQueuePair::GetWin` returns `m_win`), a fixed window
    /// of D bytes (`maxBdp` with [`Self::hpcc_sim_rate_based`], else `B_NIC·T`) while the
    /// pacing rate still follows W.
    pub var_win: bool,
    /// Quantisation of the INT fields (exact for the paper).
    pub int_quantum: IntQuantum,
}

impl HpccParams {
    /// The paper's settings (§5.1): η = 0.95, maxStage = 5, W_AI = 80 B (chosen for 100 Gb/s),
    /// T = topology max RTT, per-ACK reaction, single rate, no minimum rate, exact INT.
    pub fn paper() -> Self {
        HpccParams {
            eta: 0.95,
            max_stage: 5,
            ai: HpccAi::Bytes(80.0),
            base_rtt_ps: 0,
            reaction: Reaction::PerAck,
            multi_rate: false,
            min_rate_bps: 0,
            hpcc_sim_rate_based: false,
            var_win: true,
            int_quantum: IntQuantum::exact(),
        }
    }

    /// HPCC-sim's `run.py --cc hp` preset for hosts of `host_rate_bps`: η = 0.95,
    /// `MI_THRESH 0`, `RATE_AI = 10·bw/25` Mb/s (40 Mb/s at 100 G), `FAST_REACT 1`,
    /// `MULTI_RATE 0`, `MIN_RATE 1000 Mb/s`, rate-based with `VAR_WIN` window from `maxBdp`,
    /// `INT_MULTI = bw/25`.
    pub fn hpcc_sim_preset(host_rate_bps: u64) -> Self {
        let multi = u32::try_from(host_rate_bps / 25_000_000_000).unwrap_or(u32::MAX);
        HpccParams {
            eta: 0.95,
            max_stage: 0,
            ai: HpccAi::RateBps(host_rate_bps / 2500),
            base_rtt_ps: 0,
            reaction: Reaction::PerAck,
            multi_rate: false,
            min_rate_bps: 1_000_000_000,
            hpcc_sim_rate_based: true,
            var_win: true,
            int_quantum: IntQuantum::hpcc_sim(multi),
        }
    }
}

impl Default for HpccParams {
    fn default() -> Self {
        Self::paper()
    }
}

/// The warning for HPCC on a topology whose longest host-to-host path crosses
/// `max_switch_hops` switches, when that is more than the [`MAX_INT_HOPS`] INT records a
/// packet carries (HPCC-sim's `IntHeader::maxHop`); `None` otherwise. Here the first
/// [`MAX_INT_HOPS`] switches of such a path stamp their records and the sender reacts to them
/// (the later switches are not seen). HPCC-sim behaves differently: `PushHop` writes
/// `hop[nhop % 5]` in a ring, so the records of the last switches overwrite the first ones,
/// and `UpdateRateHp` ignores every ACK with `nhop > maxHop`, so a flow on such a path never
/// changes its rate there.
pub fn int_hop_limit_warning(max_switch_hops: u32) -> Option<String> {
    (max_switch_hops as usize > MAX_INT_HOPS).then(|| {
        format!(
            "the longest path crosses {max_switch_hops} switches, more than the {MAX_INT_HOPS} INT \
             records a packet carries: HPCC reacts only to the first {MAX_INT_HOPS} switches of \
             such a path here (a congested later switch is not seen), whereas HPCC-sim writes its \
             records in a ring (hop[nhop % {MAX_INT_HOPS}]) and ignores every ACK with more than \
             {MAX_INT_HOPS} hops (those flows keep their rate)"
        )
    })
}

/// Per-hop control state for [`HpccParams::multi_rate`].
#[derive(Clone, Copy, Debug)]
struct HopState {
    u: f64,
    wc: f64,
    inc_stage: u32,
}

/// What every QP with the same parameters, line rate and reference BDP shares: the
/// controller's constants. A run keeps one per distinct (line rate, BDP) — usually one —
/// in its [`crate::cc::CcSlab`], not one per flow ([`HpccState`] holds the rest).
#[derive(Clone, Debug, PartialEq)]
pub struct HpccConst {
    eta: f64,
    max_stage: u32,
    reaction: Reaction,
    multi_rate: bool,
    rate_based: bool,
    var_win: bool,
    quantum: IntQuantum,
    line_bps: u64,
    min_rate_bps: u64,
    t_ps: u64,
    /// Reference BDP D, bytes: the window at line rate.
    d_bytes: f64,
    /// Integer form of D for the HPCC-sim window formula.
    d_int: u64,
    w_ai: f64,
    w_min: f64,
    w_max: f64,
}

/// The state of one QP's HPCC sender (see the module documentation); its constants are an
/// [`HpccConst`]. `repr(C)`, in the order an ACK reads it: the window, rate and EWMA first,
/// then the stored INT records (with three hops, an ACK touches the first 192 bytes: three
/// cache lines, four when the slot straddles one more, as slots are 8-byte aligned; the
/// per-hop states of [`HpccParams::multi_rate`] come last).
#[derive(Clone, Debug)]
#[repr(C)]
pub struct HpccState {
    w: f64,
    /// [`HpccConst::compute_rate`] of the current `w`, bits/s (the NIC asks for the rate and
    /// the window several times per packet; `w` changes only through [`Self::set_w`]).
    rate_cache: u64,
    /// [`HpccConst::compute_window`] of the current `w`, bytes.
    win_cache: u64,
    wc: f64,
    u: f64,
    last_update_seq: u64,
    nhop: usize,
    inc_stage: u32,
    /// Index of this QP's [`HpccConst`] in the slab that stores it (0 in an owning [`Hpcc`]).
    k: u32,
    last: [IntHop; MAX_INT_HOPS],
    int_valid: bool,
    hops: [HopState; MAX_INT_HOPS],
}

/// One QP's HPCC sender, owning its constants (as built by [`crate::cc::CcConfig::build`]
/// and used on its own in tests); the simulator's [`crate::cc::CcSlab`] splits it into the
/// shared [`HpccConst`] and the per-flow [`HpccState`].
#[derive(Clone, Debug)]
pub struct Hpcc {
    k: HpccConst,
    s: HpccState,
}

split_controller!(Hpcc, HpccConst, HpccState, HpccMut, HpccRef, "HPCC sender");

impl Hpcc {
    /// New controller for a NIC of `line_rate_bps` (bits/s). `base_rtt_ps` is the topology's
    /// maximum base RTT (used as T when `p.base_rtt_ps` is 0) and `bdp_bytes` its maximum BDP
    /// (HPCC-sim `maxBdp`, used only with `hpcc_sim_rate_based`). Starts at line rate with
    /// `W = W^c = W_init = D`.
    pub fn new(p: &HpccParams, line_rate_bps: u64, base_rtt_ps: u64, bdp_bytes: u64) -> Self {
        let k = HpccConst::new(p, line_rate_bps, base_rtt_ps, bdp_bytes);
        let s = HpccState::new(&k);
        Hpcc { k, s }
    }

    /// Current window W, bytes (unrounded).
    pub fn window_f64(&self) -> f64 {
        self.view().window_f64()
    }

    /// Reference window `W^c`, bytes (committed once per RTT).
    pub fn reference_window(&self) -> f64 {
        self.view().reference_window()
    }

    /// EWMA of the normalised inflight bytes `U` (dimensionless, 1.0 = one BDP in flight on
    /// the most-loaded link). With `multi_rate`, the largest per-hop value.
    pub fn utilization(&self) -> f64 {
        self.view().utilization()
    }

    /// Consecutive additive-increase stages (`incStage`).
    pub fn inc_stage(&self) -> u32 {
        self.view().inc_stage()
    }

    /// `lastUpdateSeq`: the next commit of `W^c` happens on an ACK above this byte.
    pub fn last_update_seq(&self) -> u64 {
        self.view().last_update_seq()
    }

    /// Base RTT T in use, picoseconds.
    pub fn base_rtt_ps(&self) -> u64 {
        self.view().base_rtt_ps()
    }

    /// Reference BDP D (the window at line rate), bytes.
    pub fn reference_bdp(&self) -> f64 {
        self.view().reference_bdp()
    }

    /// Additive increase step `W_AI` in bytes.
    pub fn w_ai(&self) -> f64 {
        self.view().w_ai()
    }
}

impl HpccConst {
    /// The constants of a controller for a NIC of `line_rate_bps` (see [`Hpcc::new`]).
    pub fn new(p: &HpccParams, line_rate_bps: u64, base_rtt_ps: u64, bdp_bytes: u64) -> Self {
        let line_bps = line_rate_bps.max(1);
        let line = line_bps as f64;
        let t_ps = if p.base_rtt_ps > 0 {
            p.base_rtt_ps
        } else if base_rtt_ps > 0 {
            base_rtt_ps
        } else {
            // Last resort: T from the BDP, else 1 ps (never divide by zero).
            let t = (u128::from(bdp_bytes) * 8 * 1_000_000_000_000 / u128::from(line_bps)) as u64;
            t.max(1)
        };
        let d_paper = line * t_ps as f64 / 8.0 / PS_PER_S;
        let (d_bytes, d_int) = if p.hpcc_sim_rate_based && bdp_bytes > 0 {
            (bdp_bytes as f64, bdp_bytes)
        } else {
            (d_paper, (d_paper as u64).max(1))
        };
        let d_bytes = d_bytes.max(f64::MIN_POSITIVE);
        let w_ai = match p.ai {
            HpccAi::Bytes(b) if b.is_finite() => b.max(0.0),
            HpccAi::Bytes(_) => 0.0,
            HpccAi::RateBps(r) => r as f64 * d_bytes / line,
        };
        let w_max = d_bytes;
        let w_min = (p.min_rate_bps as f64 * d_bytes / line).max(1.0).min(w_max);
        let eta = if p.eta.is_finite() && p.eta > 0.0 {
            p.eta
        } else {
            0.95
        };
        HpccConst {
            eta,
            max_stage: p.max_stage,
            reaction: p.reaction,
            multi_rate: p.multi_rate,
            rate_based: p.hpcc_sim_rate_based,
            var_win: p.var_win,
            quantum: p.int_quantum,
            line_bps,
            min_rate_bps: p.min_rate_bps,
            t_ps,
            d_bytes,
            d_int,
            w_ai,
            w_min,
            w_max,
        }
    }

    /// What tells constants of one run apart (the rest comes from the run's one
    /// [`HpccParams`]): line rate, T, and D (integer and exact).
    pub fn key(&self) -> (u64, u64, u64, u64) {
        (self.line_bps, self.t_ps, self.d_int, self.d_bytes.to_bits())
    }

    /// The sending rate for window `w`: `W · line / D`, clamped to [min rate, line], bits/s.
    fn compute_rate(&self, w: f64) -> u64 {
        let r = w * self.line_bps as f64 / self.d_bytes;
        let r = if r.is_nan() { self.line_bps } else { r as u64 };
        r.max(self.min_rate_bps).max(1).min(self.line_bps)
    }

    /// The window for the NIC, bytes, for window `w` and its rate `rate_bps`: W (at least
    /// 1 B), or with HPCC-sim's VAR_WIN `maxBdp · R / line`; without `var_win` the fixed D.
    fn compute_window(&self, w: f64, rate_bps: u64) -> u64 {
        if !self.var_win {
            // HPCC-sim VAR_WIN 0: `GetWin` returns `m_win` (maxBdp) whatever the rate.
            self.d_int
        } else if self.rate_based {
            // HPCC-sim VAR_WIN: maxBdp · R / line, at least 1 B. The product nearly always
            // fits in 64 bits; the (same) 128-bit quotient only when it does not.
            let (d, r, line) = (self.d_int, rate_bps, self.line_bps);
            let w = match d.checked_mul(r) {
                Some(p) => p / line,
                None => (u128::from(d) * u128::from(r) / u128::from(line)) as u64,
            };
            w.max(1)
        } else {
            (w as u64).max(1)
        }
    }

    fn clamp_w(&self, w: f64) -> f64 {
        if w.is_nan() {
            self.w_max
        } else {
            w.max(self.w_min).min(self.w_max)
        }
    }

    /// Normalised inflight bytes of one hop and its sample interval (Algorithm 1 lines 4-5), or
    /// `None` when the hop gives no sample (`Δts = 0` or unknown line rate).
    fn hop_sample(&self, cur: &IntHop, prev: &IntHop) -> Option<(f64, u64)> {
        if cur.rate_mbps == 0 {
            return None;
        }
        let dts = cur.ts_ps.checked_sub(prev.ts_ps)?;
        if dts == 0 {
            return None;
        }
        let dtx = cur.tx_bytes.saturating_sub(prev.tx_bytes);
        let b = f64::from(cur.rate_mbps) * 1e6;
        let tx_rate = dtx as f64 * 8.0 * PS_PER_S / dts as f64;
        let q = cur.qlen_bytes.min(prev.qlen_bytes);
        // With no standing queue the queue term is exactly +0 (D ≥ the least positive
        // normal, so it is never 0/0) and adding it changes nothing: skip its two divisions.
        let u = if q == 0 {
            tx_rate / b
        } else {
            tx_rate / b + f64::from(q) * self.line_bps as f64 / b / self.d_bytes
        };
        Some((u, dts))
    }

    /// EWMA step `U = (U·(T−τ) + u·τ)/T`, τ capped at T.
    fn ewma(&self, u_old: f64, u_new: f64, tau: u64) -> f64 {
        let t = self.t_ps;
        let tau = tau.min(t);
        (u_old * (t - tau) as f64 + u_new * tau as f64) / t as f64
    }

    /// COMPUTEWIND: the new window and the `incStage` it would commit.
    fn compute_wind(&self, u: f64, wc: f64, inc_stage: u32) -> (f64, u32) {
        let c = u / self.eta;
        if c >= 1.0 || inc_stage >= self.max_stage {
            let w = if c > 0.0 {
                wc / c + self.w_ai
            } else {
                self.w_max
            };
            (self.clamp_w(w), 0)
        } else {
            (self.clamp_w(wc + self.w_ai), inc_stage.saturating_add(1))
        }
    }
}

impl HpccState {
    /// The state of a new QP with constants `k`: line rate, `W = W^c = D`, `U = 1`, no INT.
    pub fn new(k: &HpccConst) -> Self {
        let hop = HopState {
            u: U_INIT,
            wc: k.w_max,
            inc_stage: 0,
        };
        let mut s = HpccState {
            w: k.w_max,
            rate_cache: 0,
            win_cache: 0,
            wc: k.w_max,
            u: U_INIT,
            last_update_seq: 0,
            nhop: 0,
            inc_stage: 0,
            k: 0,
            last: [IntHop::default(); MAX_INT_HOPS],
            int_valid: false,
            hops: [hop; MAX_INT_HOPS],
        };
        s.set_w(k, k.w_max);
        s
    }

    /// Set the window W, bytes, and the rate and window the NIC reads from it.
    #[inline]
    fn set_w(&mut self, k: &HpccConst, w: f64) {
        self.w = w;
        self.rate_cache = k.compute_rate(w);
        self.win_cache = k.compute_window(w, self.rate_cache);
    }

    fn utilization(&self, k: &HpccConst) -> f64 {
        if k.multi_rate && self.nhop > 0 {
            self.hops[..self.nhop]
                .iter()
                .map(|h| h.u)
                .fold(f64::MIN, f64::max)
        } else {
            self.u
        }
    }

    fn store_int(&mut self, int: &[IntHop]) {
        self.nhop = int.len();
        self.last[..int.len()].copy_from_slice(int);
        self.int_valid = true;
    }

    fn path_changed(&self, cur: &[IntHop]) -> bool {
        cur.len() != self.nhop
            || cur.iter().zip(&self.last).any(|(c, l)| {
                c.ts_ps < l.ts_ps || c.tx_bytes < l.tx_bytes || c.rate_mbps != l.rate_mbps
            })
    }

    /// Single-state update (Algorithm 1). Returns whether any hop gave a sample.
    fn update_single(&mut self, k: &HpccConst, cur: &[IntHop], commit: bool) -> bool {
        let mut umax = 0.0;
        let mut tau = 0;
        let mut any = false;
        for (c, l) in cur.iter().zip(&self.last) {
            if let Some((u, dts)) = k.hop_sample(c, l) {
                any = true;
                if u > umax {
                    umax = u;
                    tau = dts;
                }
            }
        }
        if !any {
            return false;
        }
        self.u = k.ewma(self.u, umax, tau);
        let (w, stage) = k.compute_wind(self.u, self.wc, self.inc_stage);
        self.set_w(k, w);
        if commit {
            self.wc = w;
            self.inc_stage = stage;
        }
        true
    }

    /// Per-hop update (HPCC-sim `MULTI_RATE 1`). Returns whether any hop gave a sample.
    fn update_multi(&mut self, k: &HpccConst, cur: &[IntHop], commit: bool) -> bool {
        let mut any = false;
        let mut w = f64::INFINITY;
        for (i, c) in cur.iter().enumerate() {
            match k.hop_sample(c, &self.last[i]) {
                Some((u, dts)) => {
                    any = true;
                    let mut h = self.hops[i];
                    h.u = k.ewma(h.u, u, dts);
                    let (wi, si) = k.compute_wind(h.u, h.wc, h.inc_stage);
                    w = w.min(wi);
                    if commit {
                        h.wc = wi;
                        h.inc_stage = si;
                    }
                    self.hops[i] = h;
                }
                None => w = w.min(self.hops[i].wc),
            }
        }
        if !any {
            return false;
        }
        self.set_w(k, k.clamp_w(w));
        if commit {
            self.wc = self.w;
        }
        true
    }

    /// [`CongestionControl::on_ack`] with constants `k`.
    fn on_ack(&mut self, k: &HpccConst, info: &AckInfo<'_>) {
        let n = info.int.len().min(MAX_INT_HOPS);
        if n == 0 {
            return;
        }
        let mut cur = [IntHop::default(); MAX_INT_HOPS];
        for (c, h) in cur.iter_mut().zip(&info.int[..n]) {
            *c = k.quantum.apply(h);
        }
        let cur = &cur[..n];
        let gated = info.ack_seq > self.last_update_seq;
        if !self.int_valid {
            // First ACK: only store INT and open the first update window.
            self.store_int(cur);
            self.last_update_seq = self.last_update_seq.max(info.snd_nxt);
            return;
        }
        if k.reaction == Reaction::PerRtt && !gated {
            return;
        }
        if self.path_changed(cur) {
            self.store_int(cur);
            let seed = HopState {
                u: U_INIT,
                wc: self.wc,
                inc_stage: 0,
            };
            self.hops = [seed; MAX_INT_HOPS];
            return;
        }
        let commit = match k.reaction {
            Reaction::PerAck | Reaction::PerRtt => gated,
            Reaction::PerAckOnly => true,
        };
        let updated = if k.multi_rate {
            self.update_multi(k, cur, commit)
        } else {
            self.update_single(k, cur, commit)
        };
        self.store_int(cur);
        if updated && gated {
            self.last_update_seq = self.last_update_seq.max(info.snd_nxt);
        }
    }

    /// [`crate::cc::SchemeSignal::SetRate`] with constants `k`: PB-FS's W = W^c = rate × D / line
    /// (clamped to [W_min, W_max]), every hop's W^c too, so the next updates start from the
    /// corrected window.
    fn set_rate(&mut self, k: &HpccConst, rate_bps: u64) {
        let w = k.clamp_w(rate_bps as f64 * k.d_bytes / k.line_bps as f64);
        self.set_w(k, w);
        self.wc = w;
        for h in self.hops.iter_mut() {
            h.wc = w;
        }
    }
}

impl HpccRef<'_> {
    /// Current window W, bytes (unrounded).
    pub fn window_f64(&self) -> f64 {
        self.s.w
    }

    /// Reference window `W^c`, bytes (committed once per RTT).
    pub fn reference_window(&self) -> f64 {
        self.s.wc
    }

    /// EWMA of the normalised inflight bytes `U` (see [`Hpcc::utilization`]).
    pub fn utilization(&self) -> f64 {
        self.s.utilization(self.k)
    }

    /// Consecutive additive-increase stages (`incStage`).
    pub fn inc_stage(&self) -> u32 {
        self.s.inc_stage
    }

    /// `lastUpdateSeq`: the next commit of `W^c` happens on an ACK above this byte.
    pub fn last_update_seq(&self) -> u64 {
        self.s.last_update_seq
    }

    /// Base RTT T in use, picoseconds.
    pub fn base_rtt_ps(&self) -> u64 {
        self.k.t_ps
    }

    /// Reference BDP D (the window at line rate), bytes.
    pub fn reference_bdp(&self) -> f64 {
        self.k.d_bytes
    }

    /// Additive increase step `W_AI` in bytes.
    pub fn w_ai(&self) -> f64 {
        self.k.w_ai
    }

    /// [`CongestionControl::rate_bps`].
    #[inline]
    pub fn rate_bps(&self) -> u64 {
        self.s.rate_cache
    }

    /// [`CongestionControl::window_bytes`].
    #[inline]
    pub fn window_bytes(&self) -> u64 {
        self.s.win_cache
    }

    /// [`CongestionControl::next_timer`]: HPCC has none.
    #[inline]
    pub fn next_timer(&self) -> Option<(u64, u8)> {
        None
    }

    /// [`CongestionControl::adjusts_pacing`]: yes (HPCC-sim moves the next send time).
    #[inline]
    pub fn adjusts_pacing(&self) -> bool {
        true
    }
}

impl CongestionControl for HpccMut<'_> {
    #[inline]
    fn on_ack(&mut self, info: &AckInfo<'_>) {
        self.s.on_ack(self.k, info)
    }

    #[inline]
    fn rate_bps(&self) -> u64 {
        self.r().rate_bps()
    }

    #[inline]
    fn window_bytes(&self) -> u64 {
        self.r().window_bytes()
    }

    #[inline]
    fn adjusts_pacing(&self) -> bool {
        true
    }

    /// PB-FS's rate: W = W^c = rate × D / line (clamped to [W_min, W_max]), every hop's W^c
    /// too, so the next updates start from the corrected window; TCD's UE: no TCD mode.
    fn on_scheme_signal(&mut self, _now_ps: u64, signal: SchemeSignal) {
        if let SchemeSignal::SetRate(rate_bps) = signal {
            self.s.set_rate(self.k, rate_bps)
        }
    }
}

impl CongestionControl for Hpcc {
    fn on_ack(&mut self, info: &AckInfo<'_>) {
        self.view_mut().on_ack(info)
    }

    #[inline]
    fn rate_bps(&self) -> u64 {
        self.view().rate_bps()
    }

    #[inline]
    fn window_bytes(&self) -> u64 {
        self.view().window_bytes()
    }

    fn adjusts_pacing(&self) -> bool {
        self.view().adjusts_pacing()
    }

    fn on_scheme_signal(&mut self, now_ps: u64, signal: SchemeSignal) {
        self.view_mut().on_scheme_signal(now_ps, signal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: u64 = 100_000_000_000;
    const T: u64 = 10_000_000; // 10 µs
    const BDP: u64 = 125_000; // 100 Gb/s × 10 µs
    const MBPS: u32 = 100_000;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1.0)
    }

    /// One-hop ACK source: each `ack` advances the hop's clock by `dts` ps and its byte
    /// counter by `dtx`, and acknowledges one more 1000 B packet.
    struct Drv {
        ts: u64,
        tx: u64,
        seq: u64,
    }

    impl Drv {
        fn new() -> Self {
            Drv {
                ts: 1_000_000,
                tx: 1_000_000,
                seq: 0,
            }
        }
        fn ack(&mut self, c: &mut Hpcc, dts: u64, dtx: u64, q: u32) {
            self.ts += dts;
            self.tx += dtx;
            self.seq += 1000;
            let snd_nxt = self.seq + c.window_bytes();
            self.ack_at(c, self.seq, snd_nxt, q);
        }
        fn ack_at(&self, c: &mut Hpcc, ack_seq: u64, snd_nxt: u64, q: u32) {
            let hop = IntHop {
                ts_ps: self.ts,
                tx_bytes: self.tx,
                qlen_bytes: q,
                rate_mbps: MBPS,
            };
            c.on_ack(&info(ack_seq, snd_nxt, &[hop]));
        }
    }

    fn info(ack_seq: u64, snd_nxt: u64, int: &[IntHop]) -> AckInfo<'_> {
        AckInfo {
            now_ps: 0,
            ack_seq,
            newly_acked_bytes: 1000,
            snd_nxt,
            ce_echo: false,
            marks: crate::engine::packet::Marks::NONE,
            rtt_ps: T,
            nack: false,
            int,
        }
    }

    /// The quantisation fast paths (mask for a power-of-two unit, identity for 0) give the
    /// plain `x / max(unit, 1) · max(unit, 1)` everywhere, including at the type's extremes.
    #[test]
    fn floor_to_unit_matches_the_division() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let units = [
            0u64,
            1,
            2,
            3,
            80,
            128,
            320,
            512,
            1000,
            1 << 20,
            u32::MAX as u64,
        ];
        for i in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = match i % 4 {
                0 => x,
                1 => x >> 40,
                2 => u64::MAX - (x >> 50),
                _ => x % 4096,
            };
            for &u in &units {
                let m = u.max(1);
                assert_eq!(floor_to_u64(v, u), v / m * m, "{v} unit {u}");
                let (v32, u32_) = (v as u32, u as u32);
                let m32 = u32_.max(1);
                assert_eq!(
                    floor_to_u32(v32, u32_),
                    v32 / m32 * m32,
                    "{v32} unit {u32_}"
                );
            }
        }
    }

    fn paper() -> Hpcc {
        Hpcc::new(&HpccParams::paper(), LINE, T, BDP)
    }

    #[test]
    fn init_and_first_ack_only_stores_int() {
        let mut c = paper();
        assert_eq!(c.window_bytes(), BDP);
        assert_eq!(c.rate_bps(), LINE);
        assert!(c.adjusts_pacing());
        let mut d = Drv::new();
        // A first ACK claiming a full BDP queue changes nothing but opens the update window.
        d.ack(&mut c, 80_000, 1000, 125_000);
        assert_eq!(c.window_bytes(), BDP);
        assert_eq!(c.reference_window(), BDP as f64);
        assert_eq!(c.utilization(), 1.0);
        assert_eq!(c.last_update_seq(), 1000 + BDP);
        assert!(c.s.int_valid);
        // ACKs without INT are ignored.
        c.on_ack(&info(5000, 9000, &[]));
        assert_eq!(c.window_bytes(), BDP);
    }

    #[test]
    fn one_bdp_queue_at_line_rate_is_u_two() {
        let c = paper();
        let prev = IntHop {
            ts_ps: 0,
            tx_bytes: 0,
            qlen_bytes: 125_000,
            rate_mbps: MBPS,
        };
        let cur = IntHop {
            ts_ps: T,
            tx_bytes: 125_000,
            qlen_bytes: 125_000,
            rate_mbps: MBPS,
        };
        assert_eq!(c.k.hop_sample(&cur, &prev), Some((2.0, T)));
        // min(qlen, last qlen): a larger current queue does not count yet.
        let cur2 = IntHop {
            qlen_bytes: 250_000,
            ..cur
        };
        assert_eq!(c.k.hop_sample(&cur2, &prev), Some((2.0, T)));
        // Through the controller: τ = T gives the sample full weight.
        let mut c = paper();
        let mut d = Drv::new();
        d.ack(&mut c, 80_000, 1000, 125_000);
        d.ack(&mut c, T, 125_000, 125_000);
        assert_eq!(c.utilization(), 2.0);
        // W = W^c/(2/0.95) + 80, not committed (ack_seq below lastUpdateSeq).
        assert!(close(c.window_f64(), 125_000.0 * 0.475 + 80.0, 1e-12));
        assert_eq!(c.reference_window(), 125_000.0);
    }

    #[test]
    fn full_link_u_converges_to_one_and_w_decays_to_eta_wc_plus_ai() {
        let mut c = paper();
        c.s.u = 0.5;
        let mut d = Drv::new();
        d.ack(&mut c, 80_000, 1000, 0);
        // 100 Gb/s exactly, empty queue: u' = 1.
        for _ in 0..1000 {
            d.ack(&mut c, 80_000, 1000, 0);
        }
        assert!(
            (c.utilization() - 1.0).abs() < 1e-3,
            "U = {}",
            c.utilization()
        );
        // From U = 1 exactly: every commit W^c ← η·W^c + W_AI.
        let mut c = paper();
        let mut d = Drv::new();
        d.ack(&mut c, 80_000, 1000, 0);
        let mut commits = vec![c.reference_window()];
        for _ in 0..5000 {
            d.ack(&mut c, 80_000, 1000, 0);
            assert_eq!(c.utilization(), 1.0);
            let wc_prev = *commits.last().unwrap();
            if c.reference_window() != wc_prev {
                commits.push(c.reference_window());
            } else {
                // Between commits: W = W^c·η + W_AI from the unchanged W^c.
                assert!(close(c.window_f64(), wc_prev * 0.95 + 80.0, 1e-12));
            }
        }
        assert!(commits.len() > 100);
        for k in 1..commits.len() {
            assert!(close(commits[k], commits[k - 1] * 0.95 + 80.0, 1e-12));
        }
        // Fixed point W_AI/(1 − η) = 1600 B.
        assert!(
            close(c.window_f64(), 1600.0, 1e-3),
            "W = {}",
            c.window_f64()
        );
    }

    #[test]
    fn half_idle_link_additive_then_multiplicative_increase() {
        let mut c = paper();
        let mut d = Drv::new();
        d.ack(&mut c, 80_000, 500, 0);
        c.s.u = 0.5;
        c.s.set_w(&c.k, 50_000.0);
        c.s.wc = 50_000.0;
        let mut commits = vec![(c.reference_window(), d.seq)];
        for _ in 0..2000 {
            d.ack(&mut c, 80_000, 500, 0); // 50 Gb/s, empty queue: u' = 0.5
            assert!(close(c.utilization(), 0.5, 1e-12));
            if c.reference_window() != commits.last().unwrap().0 {
                commits.push((c.reference_window(), d.seq));
            }
        }
        let wc: Vec<f64> = commits.iter().map(|x| x.0).collect();
        let mut expect = vec![50_000.0];
        for k in 1..=5 {
            expect.push(50_000.0 + 80.0 * k as f64);
        }
        expect.push(50_400.0 * 1.9 + 80.0);
        for k in 1..=5 {
            expect.push(expect[6] + 80.0 * k as f64);
        }
        expect.push(125_000.0); // 1.9·W^c + W_AI exceeds W_init: clamped.
        assert!(wc.len() >= expect.len(), "{wc:?}");
        for (a, b) in wc.iter().zip(&expect) {
            assert!(close(*a, *b, 1e-12), "{wc:?}");
        }
        // Commits are one window of ACKs apart (≈ 50 ACKs at W ≈ 50 KB).
        let gap = (commits[2].1 - commits[1].1) / 1000;
        assert!((50..=52).contains(&gap), "gap {gap}");
        // The second MI step ends clamped at W_init.
        assert_eq!(c.window_bytes(), BDP);
    }

    fn gating_run(reaction: Reaction) -> Vec<f64> {
        let p = HpccParams {
            reaction,
            ..HpccParams::paper()
        };
        let mut c = Hpcc::new(&p, LINE, T, BDP);
        let mut d = Drv::new();
        let q = 125_000;
        let mut out = vec![];
        // ACK 1 (first): lastUpdateSeq = 1000 + 125000.
        d.ts += 80_000;
        d.tx += 1000;
        d.ack_at(&mut c, 1000, 126_000, q);
        // ACKs 2, 3: inside the first window, each reporting u' = 2 over a full T.
        for seq in [2000, 3000] {
            d.ts += T;
            d.tx += 125_000;
            d.ack_at(&mut c, seq, 200_000, q);
            out.push(c.window_f64());
        }
        // ACKs 4, 5: the first above lastUpdateSeq, then one more.
        for seq in [127_000, 128_000] {
            d.ts += T;
            d.tx += 125_000;
            d.ack_at(&mut c, seq, 300_000, q);
            out.push(c.window_f64());
        }
        out
    }

    #[test]
    fn last_update_seq_gates_reference_window() {
        let w1 = 125_000.0 * 0.475 + 80.0; // 59455
        let w2 = w1 * 0.475 + 80.0;
        let w3 = w2 * 0.475 + 80.0;
        let w4 = w3 * 0.475 + 80.0;
        // HPCC: reacts per ACK from the same W^c, commits once per RTT.
        let hpcc = gating_run(Reaction::PerAck);
        for (a, b) in hpcc.iter().zip([w1, w1, w1, w2]) {
            assert!(close(*a, b, 1e-12), "{hpcc:?}");
        }
        // Per-ACK only: each ACK of the same queue compounds the cut (over-reaction).
        let per_ack = gating_run(Reaction::PerAckOnly);
        for (a, b) in per_ack.iter().zip([w1, w2, w3, w4]) {
            assert!(close(*a, b, 1e-12), "{per_ack:?}");
        }
        // Per-RTT: nothing until the first ACK of the next window, then one step.
        let per_rtt = gating_run(Reaction::PerRtt);
        for (a, b) in per_rtt.iter().zip([125_000.0, 125_000.0, w1, w1]) {
            assert!(close(*a, b, 1e-12), "{per_rtt:?}");
        }
    }

    #[test]
    fn commit_advances_last_update_seq_monotonically() {
        let mut c = paper();
        let mut d = Drv::new();
        d.ack(&mut c, 80_000, 1000, 0);
        let l0 = c.last_update_seq();
        d.ts += 80_000;
        d.tx += 1000;
        // Gated ACK with a smaller snd_nxt (go-back-N rewound it): lastUpdateSeq stays.
        d.ack_at(&mut c, l0 + 1, l0 - 5000, 0);
        assert_eq!(c.last_update_seq(), l0);
        d.ts += 80_000;
        d.tx += 1000;
        d.ack_at(&mut c, l0 + 2, l0 + 90_000, 0);
        assert_eq!(c.last_update_seq(), l0 + 90_000);
    }

    #[test]
    fn window_and_rate_relation() {
        let p = HpccParams {
            min_rate_bps: 1_000_000_000,
            ..HpccParams::paper()
        };
        let mut c = Hpcc::new(&p, LINE, T, BDP);
        let mut d = Drv::new();
        d.ack(&mut c, 80_000, 1000, 0);
        for i in 0..300 {
            d.ack(
                &mut c,
                80_000 + 1000 * (i % 7),
                1000 + 37 * (i % 5),
                (i % 11) as u32 * 9000,
            );
            let w = c.window_f64();
            assert_eq!(c.window_bytes(), w as u64);
            // R = W / T (bits/s).
            let r = w * 8.0 * 1e12 / T as f64;
            assert!(
                (c.rate_bps() as f64 - r).abs() <= 1.0,
                "{} vs {r}",
                c.rate_bps()
            );
        }
        // A huge queue drives W down to the min-rate floor: 1 Gb/s × 10 µs = 1250 B.
        for _ in 0..3000 {
            d.ack(&mut c, 80_000, 1000, 50_000_000);
        }
        assert!(close(c.window_f64(), 1250.0, 1e-12));
        assert_eq!(c.rate_bps(), 1_000_000_000);
    }

    #[test]
    fn path_change_resets_stored_int() {
        let mut c = paper();
        let mut d = Drv::new();
        d.ack(&mut c, 80_000, 1000, 0);
        d.ack(&mut c, 80_000, 1000, 0);
        let w = c.window_f64();
        // Two hops now, with unrelated counters: only stored.
        let h = |ts, tx| IntHop {
            ts_ps: ts,
            tx_bytes: tx,
            qlen_bytes: 0,
            rate_mbps: MBPS,
        };
        c.on_ack(&info(3000, 4000, &[h(5, 7), h(9, 1 << 40)]));
        assert_eq!(c.window_f64(), w);
        assert_eq!(c.s.nhop, 2);
        // Next 2-hop ACK is measured against them: both hops at exactly 100 Gb/s.
        c.on_ack(&info(
            4000,
            5000,
            &[h(80_005, 1007), h(80_009, (1 << 40) + 1000)],
        ));
        assert!(close(c.utilization(), 1.0, 1e-12));
        assert!(close(c.window_f64(), 125_000.0 * 0.95 + 80.0, 1e-12));
        // Same hop count but a counter going backwards (another port): reset, no update.
        let w = c.window_f64();
        c.on_ack(&info(
            5000,
            6000,
            &[h(160_005, 3), h(160_009, (1 << 40) + 2000)],
        ));
        assert_eq!(c.window_f64(), w);
        assert_eq!(c.s.last[0].tx_bytes, 3);
    }

    #[test]
    fn multi_rate_takes_min_over_hops() {
        let p = HpccParams {
            multi_rate: true,
            ..HpccParams::paper()
        };
        let mut c = Hpcc::new(&p, LINE, T, BDP);
        let h = |ts, tx, q| IntHop {
            ts_ps: ts,
            tx_bytes: tx,
            qlen_bytes: q,
            rate_mbps: MBPS,
        };
        c.on_ack(&info(1000, 126_000, &[h(0, 0, 125_000), h(0, 0, 0)]));
        // Hop 0: u' = 2; hop 1: u' = 0.5, both over a full T.
        c.on_ack(&info(
            2000,
            127_000,
            &[h(T, 125_000, 125_000), h(T, 62_500, 0)],
        ));
        assert_eq!(c.s.hops[0].u, 2.0);
        assert_eq!(c.s.hops[1].u, 0.5);
        assert!(close(c.window_f64(), 125_000.0 * 0.475 + 80.0, 1e-12));
        assert_eq!(c.utilization(), 2.0);
    }

    #[test]
    fn hpcc_sim_preset_and_rate_based_window() {
        let p = HpccParams::hpcc_sim_preset(LINE);
        assert_eq!(p.max_stage, 0);
        assert_eq!(p.ai, HpccAi::RateBps(40_000_000));
        assert_eq!(p.min_rate_bps, 1_000_000_000);
        assert_eq!(
            p.int_quantum,
            IntQuantum {
                tx_bytes_unit: 512,
                qlen_unit: 320,
                ts_unit_ps: 1000
            }
        );
        assert_eq!(
            HpccParams::hpcc_sim_preset(25_000_000_000).ai,
            HpccAi::RateBps(10_000_000)
        );
        let p = HpccParams {
            int_quantum: IntQuantum::exact(),
            ..p
        };
        // maxBdp = 150 KB differs from line × T = 125 KB: D = maxBdp.
        let mut c = Hpcc::new(&p, LINE, T, 150_000);
        assert_eq!(c.window_bytes(), 150_000);
        assert!(close(c.w_ai(), 60.0, 1e-12)); // 40 Mb/s × 150 KB / 100 Gb/s
        let h = |ts, tx, q| IntHop {
            ts_ps: ts,
            tx_bytes: tx,
            qlen_bytes: q,
            rate_mbps: MBPS,
        };
        c.on_ack(&info(1000, 151_000, &[h(0, 0, 150_000)]));
        // Queue of one maxBdp and line-rate tx: u = 1 + 1.
        c.on_ack(&info(160_000, 170_000, &[h(T, 125_000, 150_000)]));
        assert_eq!(c.utilization(), 2.0);
        let w = 150_000.0 * 0.475 + 60.0;
        assert!(close(c.window_f64(), w, 1e-12));
        let r = (w * 1e11 / 150_000.0) as u64;
        assert_eq!(c.rate_bps(), r);
        assert_eq!(
            c.window_bytes(),
            (150_000u128 * r as u128 / 100_000_000_000) as u64
        );
        // maxStage 0: with U < η every update is multiplicative (rate grows ≈ ×1.9 per step).
        assert_eq!(c.reference_window(), c.window_f64());
        c.on_ack(&info(180_000, 190_000, &[h(2 * T, 187_500, 0)]));
        assert!(close(c.utilization(), 0.5, 1e-12));
        assert!(close(c.window_f64(), w * 1.9 + 60.0, 1e-12));
        assert_eq!(c.inc_stage(), 0);
    }

    #[test]
    fn int_quantisation_floors_fields() {
        let q = IntQuantum::hpcc_sim(4);
        let h = IntHop {
            ts_ps: 1_999,
            tx_bytes: 1_023,
            qlen_bytes: 639,
            rate_mbps: MBPS,
        };
        let a = q.apply(&h);
        assert_eq!((a.ts_ps, a.tx_bytes, a.qlen_bytes), (1000, 512, 320));
        assert_eq!(IntQuantum::exact().apply(&h), h);
        assert_eq!(IntQuantum::hpcc_sim(0).tx_bytes_unit, 128);
    }

    #[test]
    fn degenerate_inputs_do_not_panic() {
        let mut c = Hpcc::new(&HpccParams::paper(), 0, 0, 0);
        assert!(c.rate_bps() >= 1 && c.window_bytes() >= 1);
        let h = IntHop {
            ts_ps: 5,
            tx_bytes: 5,
            qlen_bytes: u32::MAX,
            rate_mbps: 0,
        };
        c.on_ack(&info(1, 2, &[h; 7]));
        c.on_ack(&info(u64::MAX, u64::MAX, &[h; 7]));
        let p = HpccParams {
            eta: 0.0,
            base_rtt_ps: 0,
            ai: HpccAi::Bytes(f64::NAN),
            ..HpccParams::paper()
        };
        let mut c = Hpcc::new(&p, LINE, T, BDP);
        let z = IntHop {
            ts_ps: 0,
            tx_bytes: 0,
            qlen_bytes: 0,
            rate_mbps: MBPS,
        };
        c.on_ack(&info(1000, 2000, &[z]));
        // Δts = 0: no sample, nothing changes, lastUpdateSeq does not advance.
        c.on_ack(&info(3000, 4000, &[z]));
        assert_eq!(c.window_bytes(), BDP);
        assert_eq!(c.last_update_seq(), 2000);
        // Zero utilisation with a multiplicative step: W goes to the cap, not to infinity.
        let p = HpccParams {
            max_stage: 0,
            ..HpccParams::paper()
        };
        let mut c = Hpcc::new(&p, LINE, T, BDP);
        c.on_ack(&info(1000, 2000, &[z]));
        c.s.u = 0.0;
        c.on_ack(&info(3000, 4000, &[IntHop { ts_ps: 1, ..z }]));
        assert_eq!(c.window_bytes(), BDP);
        // Enormous counters.
        let big = IntHop {
            ts_ps: u64::MAX,
            tx_bytes: u64::MAX,
            qlen_bytes: u32::MAX,
            rate_mbps: 1,
        };
        c.on_ack(&info(5000, 6000, &[big]));
        c.on_ack(&info(7000, 8000, &[big]));
        assert!(c.window_bytes() >= 1 && c.rate_bps() >= 1);
    }

    /// An INT record: timestamp `ts` ps, `tx` bytes sent, queue `q` bytes, line rate `mbps`.
    fn hop(ts: u64, tx: u64, q: u32, mbps: u32) -> IntHop {
        IntHop {
            ts_ps: ts,
            tx_bytes: tx,
            qlen_bytes: q,
            rate_mbps: mbps,
        }
    }

    /// Algorithm 1 line 7: τ is the sample interval of the hop with the *largest* u', not of
    /// the last hop. By hand (paper settings, T = 10 µs, D = B·T = 125 KB):
    /// hop 0 sends 62 500 B in 5 µs (100 Gb/s, txRate/B = 1) over a 250 KB queue
    /// (250 000/125 000 = 2): u' = 3; hop 1 sends 12 500 B in 2 µs (0.5) with no queue:
    /// u' = 0.5. With τ = 5 µs, `U = (1·(10 − 5) + 3·5)/10 = 2`; τ from hop 1 (2 µs) would
    /// give `(1·8 + 3·2)/10 = 1.4`. Not committed (ack_seq below lastUpdateSeq):
    /// `W = W^c/(U/η) + W_AI = 125 000/(2/0.95) + 80 = 59 455` B.
    #[test]
    fn tau_comes_from_the_max_u_hop() {
        let mut c = paper();
        c.on_ack(&info(
            1000,
            126_000,
            &[hop(0, 0, 250_000, MBPS), hop(0, 0, 0, MBPS)],
        ));
        c.on_ack(&info(
            2000,
            127_000,
            &[
                hop(5_000_000, 62_500, 250_000, MBPS),
                hop(2_000_000, 12_500, 0, MBPS),
            ],
        ));
        assert!(
            close(c.utilization(), 2.0, 1e-12),
            "U = {}",
            c.utilization()
        );
        assert!(close(
            c.window_f64(),
            125_000.0 / (2.0 / 0.95) + 80.0,
            1e-12
        ));
        assert!(close(c.window_f64(), 59_455.0, 1e-12));
    }

    /// Eqn (2) divides by the hop's own line rate B, not the NIC's. By hand: a 25 Gb/s hop
    /// behind a 100 Gb/s NIC sends 31 250 B in T = 10 µs (25 Gb/s: txRate/B = 1) over a
    /// queue of 31 250 B = B·T (paper: qLen/(B·T) = 1), so u' = 2 and, with τ = T, U = 2
    /// (with the NIC rate: 0.25 + 0.25 = 0.5). HPCC-sim's form (`rdma-hw.cc` `UpdateRateHp`)
    /// normalises the queue by `qLen·maxRate/B/m_win` with `m_win = maxBdp` = 150 KB:
    /// `31 250·4/150 000 = 5/6`, so U = 1 + 5/6.
    #[test]
    fn hop_rate_differs_from_nic_rate() {
        let mut c = paper();
        c.on_ack(&info(1000, 126_000, &[hop(0, 0, 31_250, 25_000)]));
        c.on_ack(&info(2000, 127_000, &[hop(T, 31_250, 31_250, 25_000)]));
        assert!(
            close(c.utilization(), 2.0, 1e-12),
            "U = {}",
            c.utilization()
        );
        let p = HpccParams {
            int_quantum: IntQuantum::exact(),
            ..HpccParams::hpcc_sim_preset(LINE)
        };
        let mut c = Hpcc::new(&p, LINE, T, 150_000);
        c.on_ack(&info(1000, 151_000, &[hop(0, 0, 31_250, 25_000)]));
        c.on_ack(&info(2000, 152_000, &[hop(T, 31_250, 31_250, 25_000)]));
        assert!(
            close(c.utilization(), 1.0 + 31_250.0 * 4.0 / 150_000.0, 1e-12),
            "U = {}",
            c.utilization()
        );
    }

    /// Our documented guard (neither the paper nor HPCC-sim has it): same hop count, counters
    /// moving forward, but the hop's line rate changed (100 → 40 Gb/s, another port) is a path
    /// change: the INT is only re-stored, W and U stay. Measured instead, the 500 000 B in
    /// 10 µs at 40 Gb/s would give u' = 400/40 = 10 and cut W.
    #[test]
    fn rate_change_is_a_path_change() {
        let mut c = paper();
        c.on_ack(&info(1000, 126_000, &[hop(0, 0, 0, MBPS)]));
        let (w, u) = (c.window_f64(), c.utilization());
        c.on_ack(&info(2000, 127_000, &[hop(T, 500_000, 0, 40_000)]));
        assert_eq!((c.window_f64(), c.utilization()), (w, u));
        assert_eq!(c.s.last[0].rate_mbps, 40_000);
    }

    /// `MULTI_RATE`: a hop that gives no sample on this ACK still bounds W by its own `W^c`
    /// (HPCC-sim `UpdateRateHp`: `new_rate = min(new_rate, hopState[i].Rc)` for hops not
    /// updated). By hand: hop 0 sends 125 000 B in T (u' = 1, U = 1 ≥ η):
    /// `W_0 = 125 000·0.95 + 80 = 118 830`; hop 1 repeats its timestamp (Δts = 0, no sample)
    /// with `W^c_1 = 50 000`: W = min(118 830, 50 000) = 50 000.
    #[test]
    fn multi_rate_unsampled_hop_bounds_w() {
        let p = HpccParams {
            multi_rate: true,
            ..HpccParams::paper()
        };
        let mut c = Hpcc::new(&p, LINE, T, BDP);
        c.on_ack(&info(
            1000,
            126_000,
            &[hop(0, 0, 0, MBPS), hop(0, 0, 0, MBPS)],
        ));
        c.s.hops[1].wc = 50_000.0;
        c.on_ack(&info(
            2000,
            127_000,
            &[hop(T, 125_000, 0, MBPS), hop(0, 0, 0, MBPS)],
        ));
        assert!(
            close(c.window_f64(), 50_000.0, 1e-12),
            "W = {}",
            c.window_f64()
        );
        // Without hop 1's bound, hop 0's own step.
        let mut c = Hpcc::new(&p, LINE, T, BDP);
        c.on_ack(&info(
            1000,
            126_000,
            &[hop(0, 0, 0, MBPS), hop(0, 0, 0, MBPS)],
        ));
        c.on_ack(&info(
            2000,
            127_000,
            &[hop(T, 125_000, 0, MBPS), hop(0, 0, 0, MBPS)],
        ));
        assert!(
            close(c.window_f64(), 118_830.0, 1e-12),
            "W = {}",
            c.window_f64()
        );
    }

    /// HPCC-sim `VAR_WIN 0`: the NIC's window is the fixed maxBdp (`GetWin` returns `m_win`)
    /// while the rate follows the control law. By hand (D = maxBdp = 150 KB, RATE_AI 40 Mb/s:
    /// W_AI = 60 B): a one-maxBdp queue at line rate gives U = 2,
    /// `W = 150 000·0.475 + 60 = 71 310`, rate `⌊71 310·10¹¹/150 000⌋ = 47.54 Gb/s`; the
    /// window stays 150 000 B (with `VAR_WIN 1` it would be `⌊150 000·R/line⌋ = 71 310`).
    #[test]
    fn fixed_window_with_var_win_off() {
        let p = HpccParams {
            int_quantum: IntQuantum::exact(),
            ..HpccParams::hpcc_sim_preset(LINE)
        };
        let fixed = HpccParams {
            var_win: false,
            ..p.clone()
        };
        let run = |p: &HpccParams| {
            let mut c = Hpcc::new(p, LINE, T, 150_000);
            c.on_ack(&info(1000, 151_000, &[hop(0, 0, 150_000, MBPS)]));
            c.on_ack(&info(160_000, 170_000, &[hop(T, 125_000, 150_000, MBPS)]));
            c
        };
        let (var, fix) = (run(&p), run(&fixed));
        for c in [&var, &fix] {
            assert!(close(c.window_f64(), 71_310.0, 1e-12));
            assert_eq!(c.rate_bps(), 47_540_000_000);
        }
        assert_eq!(var.window_bytes(), 71_310);
        assert_eq!(fix.window_bytes(), 150_000);
        // Before any ACK too, and in the paper's form (D = line·T = 125 KB).
        assert_eq!(Hpcc::new(&fixed, LINE, T, 150_000).window_bytes(), 150_000);
        let paper_fixed = HpccParams {
            var_win: false,
            ..HpccParams::paper()
        };
        let mut c = Hpcc::new(&paper_fixed, LINE, T, BDP);
        let mut d = Drv::new();
        d.ack(&mut c, 80_000, 1000, 125_000);
        d.ack(&mut c, T, 125_000, 125_000);
        assert!(close(c.window_f64(), 125_000.0 * 0.475 + 80.0, 1e-12));
        assert_eq!(c.window_bytes(), BDP);
        assert!(c.rate_bps() < LINE / 2);
    }

    /// The INT cap: up to 5 switches on the longest path, no warning; 6 warns, naming both.
    #[test]
    fn int_hop_limit_warning_above_five_switches() {
        assert_eq!(int_hop_limit_warning(0), None);
        assert_eq!(int_hop_limit_warning(5), None);
        let w = int_hop_limit_warning(6).unwrap();
        assert!(w.contains("6 switches") && w.contains("5 INT"), "{w}");
    }
}
