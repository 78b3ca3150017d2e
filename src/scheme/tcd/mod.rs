//! TCD — Ternary Congestion Detection for lossless fabrics (Zhang, Liu, Meng, Ren, SIGCOMM'21,
//! "Congestion Detection in Lossless Networks"; `docs/src/model.md`, "TCD").
//!
//! A PFC-paused egress port builds a queue even when its own link is not overloaded, and a
//! queue-length detector (RED/ECN) then marks every flow through it — the *victims* of pause
//! spreading included. TCD gives each egress (port, priority) one of three states and marks
//! accordingly: **congestion** → CE, **undetermined** → UE (a second code point), **non-
//! congestion** → nothing. The decision uses the ON-OFF model of a paused port: an ON period
//! (time since the end of the latest OFF, i.e. paused, period) that PFC itself produces is
//! never longer than `max(T_on)`, so a port ON for less than that may hold PFC residue only.
//!
//! - [`max_ton_ps`] / [`pfc_tau_ps`]: the fragment's Eq. (3) and its τ for PFC (§4.3);
//! - [`TcdQueue`]: the per-(port, priority) state machine of the fragment's Figure 9 (pure,
//!   unit-tested on hand-built sequences below);
//! - [`switch::TcdSwitch`]: the switch half — detection and CE/UE marking at dequeue.
//!
//! Receivers echo CE and UE separately (UE is this scheme's packet mark, [`UE`], declared
//! echoed: the NIC copies it into the ACK's or the CNP's marks), and
//! DCQCN+TCD / TIMELY+TCD react to them (`cc.tcd`): the reaction point's state and rules are
//! [`crate::cc::hold::HoldEchoes`], which [`crate::cc::dcqcn`] and [`crate::cc::timely`] hold
//! per QP; a UE CNP reaches a controller as [`crate::cc::SchemeSignal::Marked`].
//! The end of the latest OFF period of each egress queue is kept by the core in
//! [`crate::switch::PktQueue::off_end_ps`], written by PFC when a pause of that priority is
//! lifted (RESUME or expiry), or by CBFC when a VL blocked for lack of credits gets room
//! again (TCD-IB, fragment §4.4, with max(T_on) = the credit-update period T_c) — the one
//! register per port and priority of the fragment's §4.5.

pub mod config;
pub mod switch;

use crate::engine::packet::Marks;
use crate::units::SEC;

/// The scheme's registry id ([`crate::scheme::Scheme::ID`]; its position in the registry).
pub const ID: crate::scheme::SchemeId = crate::scheme::SchemeId(5);

/// TCD's precedence among the schemes that mark CE themselves on a lossless fabric
/// ([`crate::scheme::Declares::ce_precedence`]): above a credit fabric's FECN marking, which
/// stands down where TCD runs.
pub const CE_PRECEDENCE: u8 = 2;

/// Undetermined Experienced: TCD's second code point (ECT(1) re-purposed), set on a data
/// packet by a TCD switch on a port in the undetermined state; never together with CE (a later
/// CE mark replaces it). Receivers echo it ([`crate::registry::ECHOED_MARKS`]).
pub const UE: Marks = Marks::bit(1);

/// How a packet whose port is in the congestion state is CE-marked ("Mark(CE)" of Figure 9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CeMarking {
    /// Every such packet is marked (the flowchart drawn literally).
    Step,
    /// Marked with the port's RED probability (`[ecn]` Kmin/Kmax/Pmax), i.e. "the same as in
    /// the lossy network" (the fragment's §4.2 wording) for a CC that relies on RED (DCQCN).
    Red,
}

/// TCD parameters (`[tcd]` scenario section). Times are picoseconds, sizes bytes.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TcdConfig {
    /// Switches run TCD instead of plain ECN (or FECN) marking (needs a lossless buffer: PFC
    /// or CBFC).
    pub enabled: bool,
    /// ε: the least excess-rate fraction a PFC-throttled port faces (fragment: 0.05).
    pub epsilon: f64,
    /// Fixed max(T_on) for every port, picoseconds; `None` = Eq. (3) per port (PFC), the
    /// port's credit-update period T_c (CBFC).
    pub max_ton_ps: Option<u64>,
    /// Trend period T, picoseconds; `None` = the port's max(T_on) (the fragment's advice).
    pub period_ps: Option<u64>,
    /// Fixed feedback latency τ, picoseconds; `None` = `2·MTU/C + 2·t_p` per port.
    pub tau_ps: Option<u64>,
    /// B1 − B0 = X_off − X_on, bytes; `None` = the XON hysteresis the lossless flow control
    /// declares ([`crate::scheme::Peers::xon_hysteresis_bytes`]: PFC's `resume_offset_bytes`).
    pub hysteresis_bytes: Option<u64>,
    /// The queue threshold of "QueueLength > threshold", bytes; `None` = the port's ECN Kmin.
    pub threshold_bytes: Option<u64>,
    /// The low threshold of "QueueLength < threshold" (LAST_STATE back to non-congestion),
    /// bytes; `None` = one full-size data packet.
    pub low_threshold_bytes: Option<u64>,
    /// CE marking in the congestion state.
    pub ce_marking: CeMarking,
}

impl Default for TcdConfig {
    fn default() -> Self {
        TcdConfig {
            enabled: false,
            epsilon: 0.05,
            max_ton_ps: None,
            period_ps: None,
            tau_ps: None,
            hysteresis_bytes: None,
            threshold_bytes: None,
            low_threshold_bytes: None,
            ce_marking: CeMarking::Red,
        }
    }
}

impl TcdConfig {
    /// Problems of this configuration on its own, as (scenario key, message). `lossless` =
    /// the buffer runs PFC; `has_ecn` = ECN thresholds exist (for the default threshold and
    /// RED marking).
    pub fn issues(&self, lossless: bool, has_ecn: bool) -> Vec<(&'static str, String)> {
        let mut v = Vec::new();
        if !self.enabled {
            return v;
        }
        if !lossless {
            v.push((
                "tcd.enabled",
                "TCD detects flow-control-induced queues: it needs `buffer.mode = \"lossless\"` \
                 (PFC or CBFC)"
                    .into(),
            ));
        }
        if !(self.epsilon.is_finite() && self.epsilon > 0.0 && self.epsilon < 1.0) {
            v.push((
                "tcd.epsilon",
                format!("must be in (0, 1) (got {})", self.epsilon),
            ));
        }
        if self.max_ton_ps == Some(0) {
            v.push(("tcd.max_ton", "must be positive".into()));
        }
        if self.period_ps == Some(0) {
            v.push(("tcd.period", "must be positive".into()));
        }
        if self.threshold_bytes.is_none() && !has_ecn {
            v.push((
                "tcd.threshold",
                "is needed: the CC preset sets no ECN thresholds to take Kmin from".into(),
            ));
        }
        if self.ce_marking == CeMarking::Red && !has_ecn {
            v.push((
                "tcd.ce_marking",
                "`red` needs ECN thresholds (`[ecn]` kmin/kmax/pmax or a CC preset with them); \
                 use `step`"
                    .into(),
            ));
        }
        if let (Some(hi), Some(lo)) = (self.threshold_bytes, self.low_threshold_bytes)
            && lo > hi
        {
            v.push((
                "tcd.low_threshold",
                format!("({lo} B) must not exceed tcd.threshold ({hi} B)"),
            ));
        }
        v
    }
}

/// τ of PFC (fragment §4.3): a feedback frame waits for the frame on the wire (MTU/C), the
/// sender finishes its own frame before it stops or starts (MTU/C), plus the propagation
/// delay both ways: `τ = 2·MTU/C + 2·t_p`, picoseconds (rounded to the nearest ps).
pub fn pfc_tau_ps(mtu_bytes: u64, rate_bps: u64, prop_delay_ps: u64) -> u64 {
    let ser = 2.0 * mtu_bytes as f64 * 8.0 * SEC as f64 / rate_bps.max(1) as f64;
    (ser + 2.0 * prop_delay_ps as f64).round() as u64
}

/// The fragment's Eq. (3): the longest ON period PFC cycling can produce on a port of
/// `rate_bps` whose downstream ingress pauses at B1 and resumes at B0:
/// `max(T_on) = (B1 − B0)/(ε·C) + τ·(1 + 1/(2ε))`, picoseconds (rounded to the nearest ps).
pub fn max_ton_ps(hysteresis_bytes: u64, epsilon: f64, rate_bps: u64, tau_ps: u64) -> u64 {
    let c_bytes_per_ps = rate_bps.max(1) as f64 / 8.0 / SEC as f64;
    let fill = hysteresis_bytes as f64 / (epsilon * c_bytes_per_ps);
    let feedback = tau_ps as f64 * (1.0 + 1.0 / (2.0 * epsilon));
    (fill + feedback).round() as u64
}

/// The three states of an egress (port, priority), and the values of LAST_STATE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum TcdState {
    /// Queue (near) empty, or at most the threshold while ON long enough: no mark.
    #[default]
    NonCongestion = 0,
    /// Recently released from an OFF period (T_on < max(T_on)), or still draining the residue
    /// of one: UE.
    Undetermined = 1,
    /// ON longer than any PFC-made ON period and the queue above the threshold: CE.
    Congestion = 2,
}

impl TcdState {
    /// Name used in `summary.json`.
    pub fn name(self) -> &'static str {
        match self {
            TcdState::NonCongestion => "non_congestion",
            TcdState::Undetermined => "undetermined",
            TcdState::Congestion => "congestion",
        }
    }
}

/// What Figure 9 does with the packet being transmitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// No mark.
    None,
    /// "Mark(UE)" (only if the packet is not already CE: "ECN == CE?").
    Ue,
    /// "Mark(CE)" (upgrades a UE mark).
    Ce,
}

/// Per-port parameters of the state machine, picoseconds and bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcdParams {
    /// max(T_on), picoseconds.
    pub max_ton_ps: u64,
    /// Trend period T, picoseconds.
    pub period_ps: u64,
    /// "QueueLength > threshold", bytes.
    pub threshold_bytes: u64,
    /// "QueueLength < threshold" (the low threshold), bytes.
    pub low_threshold_bytes: u64,
}

/// TCD state of one egress (port, priority): Figure 9's registers (LAST_STATE, the timer of
/// period T, the recorded queue length, the end of the latest OFF period it has seen) and the
/// time spent in each LAST_STATE.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcdQueue {
    /// LAST_STATE.
    pub last_state: TcdState,
    /// End of the latest OFF period already acted on ("Received a RESUME"), ps (0 = none).
    pub seen_off_end_ps: u64,
    /// Start of the current period T ("ResetTimer(T)"), picoseconds.
    pub timer_start_ps: u64,
    /// Queue length recorded by "RecordQueue()", bytes.
    pub recorded_bytes: u64,
    /// LAST_STATE holds since this time, picoseconds.
    pub since_ps: u64,
    /// Time spent in each LAST_STATE (indexed by [`TcdState`] as u8), closed intervals, ps.
    pub time_in_ps: [u64; 3],
    /// LAST_STATE changes.
    pub transitions: u64,
    /// Start of the latest transmission from this queue, picoseconds.
    pub last_tx_ps: u64,
    /// Longest backlogged ON period ended by a PAUSE seen so far: from the end of an OFF
    /// period to the start of the last transmission before the next one, picoseconds (a lower
    /// bound of the RESUME-to-PAUSE time by less than one packet time). Only ON periods in
    /// which the queue never emptied count: the ON-OFF model's ON periods (`tcd-ton`).
    pub max_on_ps: u64,
    /// Backlogged ON periods ended by a PAUSE.
    pub on_periods: u64,
    /// The queue emptied during the current ON period.
    pub on_drained: bool,
}

impl TcdQueue {
    fn set_state(&mut self, s: TcdState, now_ps: u64) {
        if s != self.last_state {
            self.time_in_ps[self.last_state as usize] += now_ps.saturating_sub(self.since_ps);
            self.since_ps = now_ps;
            self.last_state = s;
            self.transitions += 1;
        }
    }

    /// Close the open interval at `now_ps` (end of the run): `time_in_ps` then covers it.
    pub fn finish(&mut self, now_ps: u64) {
        self.time_in_ps[self.last_state as usize] += now_ps.saturating_sub(self.since_ps);
        self.since_ps = now_ps;
    }

    /// Figure 9 for one packet transmitted from this (port, priority) at `now_ps`.
    /// `off_end_ps` is the end of the port's latest OFF period (0 = never paused),
    /// `backlog_bytes` the queue left behind the packet (the HPCC-sim ECN convention) and
    /// `size_bytes` the packet's own size. Returns what to do with the packet.
    pub fn on_transmit(
        &mut self,
        p: &TcdParams,
        now_ps: u64,
        off_end_ps: u64,
        backlog_bytes: u64,
        size_bytes: u64,
    ) -> Mark {
        // "Received a RESUME → RecordQueue(); ResetTimer(T)". The core records when a pause
        // was lifted; no packet of this queue left since (it was paused until then), so the
        // queue at the RESUME is at most what it holds right before this packet leaves, which
        // is what is recorded (exact when the port restarts at the RESUME, as it does when
        // idle; later by at most one packet of another priority).
        if off_end_ps != 0 && off_end_ps != self.seen_off_end_ps {
            // A new OFF period ended: the previous ON period (if any) was ended by a PAUSE.
            if self.seen_off_end_ps != 0 && !self.on_drained {
                let on = self.last_tx_ps.saturating_sub(self.seen_off_end_ps);
                self.max_on_ps = self.max_on_ps.max(on);
                self.on_periods += 1;
            }
            self.on_drained = false;
            self.seen_off_end_ps = off_end_ps;
            self.timer_start_ps = off_end_ps;
            self.recorded_bytes = backlog_bytes + size_bytes;
        }
        self.last_tx_ps = now_ps;
        self.on_drained |= backlog_bytes == 0;
        // "CalculateTon()": time since the end of the latest OFF period (∞ if never paused).
        let ton = if off_end_ps == 0 {
            u64::MAX
        } else {
            now_ps.saturating_sub(off_end_ps)
        };
        // "Ton < max(Ton)?" Yes → "LAST_STATE = Undetermined" → "ECN == CE?" No → "Mark(UE)".
        if ton < p.max_ton_ps {
            self.set_state(TcdState::Undetermined, now_ps);
            return Mark::Ue;
        }
        // "LAST_STATE == Undetermined?" No → judge by queue length as in a lossy network:
        // "QueueLength > threshold?" Yes → "Mark(CE); LAST_STATE = Congestion",
        // No → "LAST_STATE = Non-congestion".
        if self.last_state != TcdState::Undetermined {
            if backlog_bytes > p.threshold_bytes {
                self.set_state(TcdState::Congestion, now_ps);
                return Mark::Ce;
            }
            self.set_state(TcdState::NonCongestion, now_ps);
            return Mark::None;
        }
        // LAST_STATE == Undetermined: the port was just released from an ON-OFF pattern.
        // "Timer(T) expires?" Yes → "ResetTimer(T); RecordQueue()" → "Queue decrease during
        // T?" No (the queue grew or held) and "QueueLength > threshold?" Yes → "Mark(CE);
        // LAST_STATE = Congestion" (the transition to congestion). A decrease marks nothing.
        if now_ps.saturating_sub(self.timer_start_ps) >= p.period_ps {
            let before = self.recorded_bytes;
            self.timer_start_ps = now_ps;
            self.recorded_bytes = backlog_bytes;
            let decreased = backlog_bytes < before;
            if !decreased && backlog_bytes > p.threshold_bytes {
                self.set_state(TcdState::Congestion, now_ps);
                return Mark::Ce;
            }
        }
        // Within the period, or after a decrease: "QueueLength < threshold?" (the low
        // threshold) Yes → "LAST_STATE = Non-congestion". No mark either way.
        if backlog_bytes < p.low_threshold_bytes {
            self.set_state(TcdState::NonCongestion, now_ps);
        }
        Mark::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{GBPS, US};

    /// The fragment's own numbers (§4.3): ε = 0.05, MTU = 1000 B, t_p = 1 µs, B1 − B0 = 2 MTU.
    /// By hand at 40 G (C = 5 B/ns): (2000 B)/(0.05 · 5 B/ns) = 8 µs; τ = 2·1000/5 ns + 2 µs
    /// = 2.4 µs; τ·(1 + 1/0.1) = 26.4 µs; total 34.4 µs. At 100 G (12.5 B/ns): 3.2 µs +
    /// 11 · (0.16 + 2) µs = 26.96 µs. At 200 G (25 B/ns): 1.6 µs + 11 · 2.08 µs = 24.48 µs.
    #[test]
    fn max_ton_matches_the_fragment() {
        for (g, tau, want) in [
            (40, 2_400_000, 34_400_000),
            (100, 2_160_000, 26_960_000),
            (200, 2_080_000, 24_480_000),
        ] {
            let rate = g * GBPS;
            assert_eq!(pfc_tau_ps(1000, rate, US), tau, "τ at {g} G");
            assert_eq!(
                max_ton_ps(2000, 0.05, rate, tau),
                want,
                "max(T_on) at {g} G"
            );
        }
        // ε enters both terms: at 100 G, ε = 0.1: 2000/(1.25 B/ns) = 1.6 µs + 2.16·6 µs.
        assert_eq!(max_ton_ps(2000, 0.1, 100 * GBPS, 2_160_000), 14_560_000);
    }

    const P: TcdParams = TcdParams {
        max_ton_ps: 10 * US,
        period_ps: 10 * US,
        threshold_bytes: 50_000,
        low_threshold_bytes: 2_000,
    };

    #[test]
    fn never_paused_port_judges_by_queue_length_like_a_lossy_network() {
        let mut q = TcdQueue::default();
        // Below / at the threshold: non-congestion; above: congestion and CE.
        assert_eq!(q.on_transmit(&P, US, 0, 10_000, 1000), Mark::None);
        assert_eq!(q.on_transmit(&P, 2 * US, 0, 50_000, 1000), Mark::None);
        assert_eq!(q.last_state, TcdState::NonCongestion);
        assert_eq!(q.on_transmit(&P, 3 * US, 0, 50_001, 1000), Mark::Ce);
        assert_eq!(q.last_state, TcdState::Congestion);
        // Falls back when the queue does (no hysteresis in the lossy branch).
        assert_eq!(q.on_transmit(&P, 4 * US, 0, 49_000, 1000), Mark::None);
        assert_eq!(q.last_state, TcdState::NonCongestion);
        assert_eq!(q.transitions, 2);
        q.finish(10 * US);
        // 0..3 µs and 4..10 µs non-congestion, 3..4 µs congestion.
        assert_eq!(q.time_in_ps, [9 * US, 0, US]);
    }

    #[test]
    fn recent_resume_is_undetermined_whatever_the_queue() {
        let mut q = TcdQueue::default();
        // Congested before the pause.
        assert_eq!(q.on_transmit(&P, US, 0, 80_000, 1000), Mark::Ce);
        // RESUME at 20 µs; packets within max(T_on) = 10 µs of it: UE, even a huge queue,
        // even a tiny one.
        assert_eq!(q.on_transmit(&P, 20 * US, 20 * US, 200_000, 1000), Mark::Ue);
        assert_eq!(q.last_state, TcdState::Undetermined);
        assert_eq!(q.on_transmit(&P, 29 * US, 20 * US, 0, 1000), Mark::Ue);
        // RecordQueue() at the RESUME: the queue before the first packet left.
        assert_eq!(q.recorded_bytes, 201_000);
        assert_eq!(q.timer_start_ps, 20 * US);
        // T_on = exactly max(T_on): no longer "<" → LAST_STATE decides (undetermined).
        // Timer expired (10 µs since the RESUME): the queue decreased → no mark, and it is not
        // below the low threshold (2 000 B): LAST_STATE stays undetermined.
        assert_eq!(
            q.on_transmit(&P, 30 * US, 20 * US, 150_000, 1000),
            Mark::None
        );
        assert_eq!(q.last_state, TcdState::Undetermined);
        assert_eq!(q.recorded_bytes, 150_000);
        assert_eq!(q.timer_start_ps, 30 * US);
    }

    #[test]
    fn trend_rule_detects_the_transition_to_congestion() {
        let mut q = TcdQueue::default();
        let resume = 100 * US;
        assert_eq!(q.on_transmit(&P, resume, resume, 60_000, 1000), Mark::Ue);
        assert_eq!(q.recorded_bytes, 61_000);
        // 11 µs after the RESUME (≥ T = 10 µs since the timer was reset there): the timer
        // expires; 30 000 < 61 000 is a decrease → no mark; new record 30 000, timer reset.
        assert_eq!(
            q.on_transmit(&P, resume + 11 * US, resume, 30_000, 1000),
            Mark::None
        );
        assert_eq!(q.recorded_bytes, 30_000);
        assert_eq!(q.timer_start_ps, resume + 11 * US);
        assert_eq!(q.last_state, TcdState::Undetermined);
        // Within the new period: the queue grows above the threshold but the timer has not
        // expired: still no mark.
        assert_eq!(
            q.on_transmit(&P, resume + 15 * US, resume, 70_000, 1000),
            Mark::None
        );
        assert_eq!(q.last_state, TcdState::Undetermined);
        // Period over (resume + 21 µs): 90 000 ≥ 30 000 (increase) and > 50 000 → CE,
        // LAST_STATE = Congestion.
        assert_eq!(
            q.on_transmit(&P, resume + 21 * US, resume, 90_000, 1000),
            Mark::Ce
        );
        assert_eq!(q.last_state, TcdState::Congestion);
        // From now on the lossy rule: above → CE, below → non-congestion.
        assert_eq!(
            q.on_transmit(&P, resume + 22 * US, resume, 60_000, 1000),
            Mark::Ce
        );
        assert_eq!(
            q.on_transmit(&P, resume + 23 * US, resume, 40_000, 1000),
            Mark::None
        );
        assert_eq!(q.last_state, TcdState::NonCongestion);
    }

    #[test]
    fn increase_below_threshold_is_not_congestion() {
        let mut q = TcdQueue::default();
        assert_eq!(q.on_transmit(&P, 5 * US, 5 * US, 10_000, 1000), Mark::Ue);
        // Expiry with a grown queue that stays under the threshold: no transition, no mark.
        assert_eq!(q.on_transmit(&P, 16 * US, 5 * US, 40_000, 1000), Mark::None);
        assert_eq!(q.last_state, TcdState::Undetermined);
        assert_eq!(q.recorded_bytes, 40_000);
    }

    #[test]
    fn queue_at_low_threshold_ends_the_undetermined_state() {
        let mut q = TcdQueue::default();
        assert_eq!(q.on_transmit(&P, 5 * US, 5 * US, 100_000, 1000), Mark::Ue);
        // Not yet low (2 000 is not < 2 000).
        assert_eq!(q.on_transmit(&P, 16 * US, 5 * US, 2_000, 1000), Mark::None);
        assert_eq!(q.last_state, TcdState::Undetermined);
        // Below the low threshold, before the timer expires: "LAST_STATE = Non-congestion".
        assert_eq!(q.on_transmit(&P, 17 * US, 5 * US, 1_999, 1000), Mark::None);
        assert_eq!(q.last_state, TcdState::NonCongestion);
        // Back on the lossy rule: a queue above the threshold is congestion at once.
        assert_eq!(q.on_transmit(&P, 18 * US, 5 * US, 50_001, 1000), Mark::Ce);
        q.finish(20 * US);
        // 0..5 non-congestion, 5..17 undetermined, 17..18 non-congestion, 18..20 congestion.
        assert_eq!(q.time_in_ps, [6 * US, 12 * US, 2 * US]);
        assert_eq!(q.transitions, 3);
    }

    #[test]
    fn a_new_pause_restarts_the_period() {
        let mut q = TcdQueue::default();
        assert_eq!(q.on_transmit(&P, 5 * US, 5 * US, 100_000, 1000), Mark::Ue);
        // Paused again, RESUME at 12 µs: T_on restarts, the record and the timer too.
        assert_eq!(q.on_transmit(&P, 12 * US, 12 * US, 120_000, 1000), Mark::Ue);
        assert_eq!(q.timer_start_ps, 12 * US);
        assert_eq!(q.recorded_bytes, 121_000);
        // The ON period 5 µs → (last packet at) 5 µs, ended by that pause: 0 long.
        assert_eq!((q.on_periods, q.max_on_ps), (1, 0));
        // 21.9 µs: T_on = 9.9 µs < 10 µs → still UE.
        assert_eq!(
            q.on_transmit(&P, 21_900_000, 12 * US, 130_000, 1000),
            Mark::Ue
        );
        // 22 µs: timer (from 12 µs) expired, 130 000 ≥ 121 000 and > 50 000 → CE.
        assert_eq!(q.on_transmit(&P, 22 * US, 12 * US, 130_000, 1000), Mark::Ce);
        assert_eq!(q.last_state, TcdState::Congestion);
        // Paused again; RESUME at 40 µs: the ON period 12 µs → 22 µs (last packet) = 10 µs.
        assert_eq!(q.on_transmit(&P, 40 * US, 40 * US, 10_000, 1000), Mark::Ue);
        assert_eq!((q.on_periods, q.max_on_ps), (2, 10 * US));
        // An ON period in which the queue emptied is not an ON-OFF period: not counted.
        assert_eq!(q.on_transmit(&P, 70 * US, 40 * US, 0, 1000), Mark::None);
        assert_eq!(q.on_transmit(&P, 85 * US, 80 * US, 5_000, 1000), Mark::Ue);
        assert_eq!((q.on_periods, q.max_on_ps), (2, 10 * US));
    }

    #[test]
    fn config_issues_name_the_key() {
        let c = TcdConfig {
            enabled: true,
            epsilon: 1.5,
            ..TcdConfig::default()
        };
        let keys: Vec<&str> = c.issues(false, false).iter().map(|i| i.0).collect();
        assert_eq!(
            keys,
            [
                "tcd.enabled",
                "tcd.epsilon",
                "tcd.threshold",
                "tcd.ce_marking"
            ]
        );
        let ok = TcdConfig {
            enabled: true,
            ..TcdConfig::default()
        };
        assert!(ok.issues(true, true).is_empty());
        // Disabled: nothing is checked.
        assert!(TcdConfig::default().issues(false, false).is_empty());
    }
}
