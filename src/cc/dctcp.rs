//! HPCC-sim's rate-based "hardware DCTCP" (`cc_mode 8`, `rdma-hw.cc:998-1050`,
//! `specs/dctcp.md`): starts at line rate (no slow start), paced at `rate`, optional window
//! `W·rate/line`. Per ACK: count CE echoes; once per window (the ACK passes `lastUpdateSeq`)
//! update `α ← (1−g)α + g·min(1, marks/batch)`; on a CE echo outside CWR cut
//! `rate ← max(MinRate, rate·(1 − α/2))` and enter CWR until the cumulative ACK passes the
//! `snd_nxt` of the cut; outside CWR, add `DCTCP_RATE_AI` once per window, capped at line rate.
//!
//! `batch` follows HPCC-sim (and the spec) exactly: it is an *estimate* of the packets in the
//! window, taken when the window starts: `snd_nxt/MTU + 1` for the first window and
//! `(snd_nxt − ack_seq)/MTU + 1` (packets in flight) afterwards; it is not a count of ACKs.
//! Marks counted during the first window are not reset when it ends (as in HPCC-sim), so they
//! count towards the second window's fraction.
//!
//! `slow_start` (off in every preset) is the *SS* baseline of the PB-FS paper (§V-C: "in SS
//! it starts at the minimum rate, and increases its rate exponentially (as TCP does)"): the
//! rate starts at `min_rate_bps` and every ACK adds its newly acknowledged bytes per base RTT
//! (TCP's `cwnd += acked` with `cwnd = rate × RTT`, RTT = BDP / line rate: the rate doubles
//! per round trip), without the per-window additive increase, until the first CE echo, NACK
//! or timeout, or the line rate; then the DCTCP rules above apply.

use super::{AckInfo, CongestionControl, SchemeSignal};

/// Parameters of [`Dctcp`]. Rates are bit/s, sizes bytes.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct DctcpParams {
    /// α EWMA gain g (`run.py` dctcp preset `EWMA_GAIN 0.0625` = 1/16).
    pub g: f64,
    /// Additive increase per window, bit/s (`DCTCP_RATE_AI`; preset 615 Mb/s = 1 KB per 13 µs).
    pub rate_ai_bps: u64,
    /// Rate floor after a cut, bit/s (template `MIN_RATE 1000Mb/s`). Clamped to line rate.
    pub min_rate_bps: u64,
    /// Payload bytes per packet (`PACKET_PAYLOAD_SIZE 1000`), for the batch-size estimate. The
    /// simulator sets it to the network's MTU (HPCC-sim's NIC `Mtu` is the payload size).
    pub mtu_bytes: u64,
    /// α before the first update (HPCC-sim and Linux: 1).
    pub initial_alpha: f64,
    /// `HAS_WIN`: limit bytes in flight by a window (preset 1).
    pub has_win: bool,
    /// `VAR_WIN`: window = `window_bytes × rate / line` (≥ 1 B); else fixed (preset 1).
    pub var_win: bool,
    /// Base window W, bytes of payload (HPCC: maxBdp, `GLOBAL_T 1`); 0 = the BDP passed to
    /// [`Dctcp::new`]. Ignored unless `has_win`.
    pub window_bytes: u64,
    /// Start at `min_rate_bps` and grow exponentially (TCP slow start) instead of starting at
    /// line rate (the PB-FS paper's SS baseline; see the module docs). Off in the presets.
    pub slow_start: bool,
}

impl Default for DctcpParams {
    /// HPCC-sim `dctcp` preset with the window taken from the BDP at construction.
    fn default() -> Self {
        Self::hpcc_preset(100_000_000_000, 0)
    }
}

impl DctcpParams {
    /// HPCC `run.py --cc dctcp` (`run.py:124-131`, template `run.py:22-28`): g = 1/16,
    /// `DCTCP_RATE_AI` 615 Mb/s, `MIN_RATE` 1 Gb/s, MTU 1000 B, `HAS_WIN 1`, `VAR_WIN 1`,
    /// window = `bdp_bytes` (0 = the BDP given to [`Dctcp::new`]).
    ///
    /// `run.py` hard-codes 615 Mb/s whatever `--bw` is ("calculated from RTT=13us and MTU=1KB,
    /// because DCTCP add 1 MTU per RTT"), so `host_rate_bps` does not change it; for another
    /// RTT or MTU set `rate_ai_bps` from [`Self::ai_one_mtu_per_rtt`].
    pub fn hpcc_preset(_host_rate_bps: u64, bdp_bytes: u64) -> Self {
        DctcpParams {
            g: 1.0 / 16.0,
            rate_ai_bps: 615_000_000,
            min_rate_bps: 1_000_000_000,
            mtu_bytes: 1000,
            initial_alpha: 1.0,
            has_win: true,
            var_win: true,
            window_bytes: bdp_bytes,
            slow_start: false,
        }
    }

    /// The rate that adds one MTU of `mtu_bytes` per round trip of `rtt_ps`: `MTU·8/RTT`,
    /// bit/s (1000 B per 13 µs ≈ 615 Mb/s). 0 if `rtt_ps` is 0.
    pub fn ai_one_mtu_per_rtt(mtu_bytes: u64, rtt_ps: u64) -> u64 {
        if rtt_ps == 0 {
            return 0;
        }
        let v = mtu_bytes as u128 * 8 * 1_000_000_000_000 / rtt_ps as u128;
        v.min(u64::MAX as u128) as u64
    }
}

/// DCTCP's constants for QPs of one line rate: gain, increase step, rate floor, MTU, window
/// policy, line rate, base window and BDP. A run keeps one set per line rate in its
/// [`crate::cc::CcSlab`], not one per flow ([`DctcpState`] holds the rest).
#[derive(Clone, Debug, PartialEq)]
pub struct DctcpConst {
    g: f64,
    rate_ai_bps: u64,
    min_rate_bps: u64,
    mtu_bytes: u64,
    var_win: bool,
    line_rate_bps: u64,
    /// Base window, bytes; 0 = no window.
    win_base: u64,
    /// BDP at line rate (the slow-start increase per acknowledged byte), bytes.
    bdp_bytes: u64,
}

/// The state of one QP's rate-based DCTCP sender (see the module docs); its constants are a
/// [`DctcpConst`].
#[derive(Clone, Debug)]
pub struct DctcpState {
    /// Current rate, bit/s.
    rate: u64,
    alpha: f64,
    /// CE echoes in the current batch (`m_ecnCnt`).
    ecn_cnt: u64,
    /// Estimated packets in the current batch (`m_batchSizeOfAlpha`).
    batch: u64,
    /// End of the current window (`m_lastUpdateSeq`); 0 before the first ACK.
    last_update_seq: u64,
    /// In CWR (`m_caState == 1`).
    cwr: bool,
    /// CWR exit point (`m_highSeq`).
    high_seq: u64,
    /// In slow start (only with `slow_start`).
    ss: bool,
    /// Index of its [`DctcpConst`] in the slab that stores it (0 in an owning [`Dctcp`]).
    k: u32,
}

/// Rate-based DCTCP sender state for one QP (see the module docs), owning its constants (as
/// built by [`crate::cc::CcConfig::build`] and used on its own in tests); the simulator's
/// [`crate::cc::CcSlab`] splits it into the shared [`DctcpConst`] and the per-flow
/// [`DctcpState`].
#[derive(Clone, Debug)]
pub struct Dctcp {
    k: DctcpConst,
    s: DctcpState,
}

impl DctcpConst {
    /// What tells constants of one run apart (the rest comes from the run's one
    /// [`DctcpParams`]): line rate, base window and BDP.
    pub fn key(&self) -> (u64, u64, u64, u64) {
        (self.line_rate_bps, self.win_base, self.bdp_bytes, 0)
    }
}

split_controller!(
    Dctcp,
    DctcpConst,
    DctcpState,
    DctcpMut,
    DctcpRef,
    "DCTCP sender"
);

impl Dctcp {
    /// New controller for a QP on a NIC of `line_rate_bps`, starting at line rate.
    /// `bdp_bytes` is the (global) BDP used when `p.has_win` and `p.window_bytes == 0`.
    pub fn new(p: &DctcpParams, line_rate_bps: u64, bdp_bytes: u64) -> Self {
        let win_base = if !p.has_win {
            0
        } else if p.window_bytes > 0 {
            p.window_bytes
        } else {
            bdp_bytes
        };
        let min_rate_bps = p.min_rate_bps.min(line_rate_bps);
        let k = DctcpConst {
            g: p.g,
            rate_ai_bps: p.rate_ai_bps,
            min_rate_bps,
            mtu_bytes: p.mtu_bytes.max(1),
            var_win: p.var_win,
            line_rate_bps,
            win_base,
            bdp_bytes: bdp_bytes.max(1),
        };
        let s = DctcpState {
            rate: if p.slow_start {
                min_rate_bps.max(1)
            } else {
                line_rate_bps
            },
            alpha: p.initial_alpha,
            ecn_cnt: 0,
            batch: 0,
            last_update_seq: 0,
            cwr: false,
            high_seq: 0,
            ss: p.slow_start && min_rate_bps < line_rate_bps,
            k: 0,
        };
        Dctcp { k, s }
    }

    /// Current α.
    pub fn alpha(&self) -> f64 {
        self.view().alpha()
    }

    /// Whether the sender is in CWR (rate frozen until the ACK passes the cut's `snd_nxt`).
    pub fn in_cwr(&self) -> bool {
        self.view().in_cwr()
    }

    /// Estimated packets in the current α batch.
    pub fn batch_packets(&self) -> u64 {
        self.view().batch_packets()
    }

    /// Still in slow start.
    pub fn in_slow_start(&self) -> bool {
        self.view().in_slow_start()
    }
}

impl DctcpRef<'_> {
    /// Current α.
    pub fn alpha(&self) -> f64 {
        self.s.alpha
    }

    /// Whether the sender is in CWR (rate frozen until the ACK passes the cut's `snd_nxt`).
    pub fn in_cwr(&self) -> bool {
        self.s.cwr
    }

    /// Estimated packets in the current α batch.
    pub fn batch_packets(&self) -> u64 {
        self.s.batch
    }

    /// Still in slow start.
    pub fn in_slow_start(&self) -> bool {
        self.s.ss
    }

    /// [`CongestionControl::rate_bps`].
    pub fn rate_bps(&self) -> u64 {
        self.s.rate.max(1)
    }

    /// [`CongestionControl::window_bytes`].
    pub fn window_bytes(&self) -> u64 {
        if self.k.win_base == 0 {
            return u64::MAX;
        }
        if !self.k.var_win || self.k.line_rate_bps == 0 {
            return self.k.win_base;
        }
        let w = self.k.win_base as u128 * self.s.rate as u128 / self.k.line_rate_bps as u128;
        (w.min(u64::MAX as u128) as u64).max(1)
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

impl DctcpMut<'_> {}

impl CongestionControl for DctcpMut<'_> {
    fn on_ack(&mut self, info: &AckInfo<'_>) {
        let cnp = info.ce_echo;
        if self.s.ss {
            if cnp || info.nack {
                self.s.ss = false;
            } else {
                // cwnd += acked, with cwnd = rate × RTT and RTT = BDP / line.
                let inc = info.newly_acked_bytes as u128 * self.k.line_rate_bps as u128
                    / self.k.bdp_bytes as u128;
                self.s.rate = (self.s.rate as u128 + inc).min(self.k.line_rate_bps as u128) as u64;
                if self.s.rate >= self.k.line_rate_bps {
                    self.s.ss = false;
                }
            }
        }
        if cnp {
            self.s.ecn_cnt = self.s.ecn_cnt.saturating_add(1);
        }
        // α update, once per window.
        let new_batch = info.ack_seq > self.s.last_update_seq;
        if new_batch {
            if self.s.last_update_seq == 0 {
                self.s.last_update_seq = info.snd_nxt;
                self.s.batch = info.snd_nxt / self.k.mtu_bytes + 1;
            } else {
                let frac = (self.s.ecn_cnt as f64 / self.s.batch.max(1) as f64).min(1.0);
                self.s.alpha = (1.0 - self.k.g) * self.s.alpha + self.k.g * frac;
                self.s.last_update_seq = info.snd_nxt;
                self.s.ecn_cnt = 0;
                self.s.batch = info.snd_nxt.saturating_sub(info.ack_seq) / self.k.mtu_bytes + 1;
            }
        }
        // CWR exit.
        if self.s.cwr && info.ack_seq > self.s.high_seq {
            self.s.cwr = false;
        }
        // Multiplicative decrease, at most once per window.
        if cnp && !self.s.cwr {
            let cut = (self.s.rate as f64 * (1.0 - self.s.alpha / 2.0)) as u64;
            self.s.rate = cut.max(self.k.min_rate_bps);
            self.s.cwr = true;
            self.s.high_seq = info.snd_nxt;
        }
        // Additive increase, once per window outside CWR (and outside slow start).
        if !self.s.cwr && new_batch && !self.s.ss {
            self.s.rate = self
                .s
                .rate
                .saturating_add(self.k.rate_ai_bps)
                .min(self.k.line_rate_bps);
        }
    }

    /// PB-FS's rate: it becomes the rate (slow start ends); TCD's UE: no TCD mode.
    fn on_scheme_signal(&mut self, _now_ps: u64, signal: SchemeSignal) {
        if let SchemeSignal::SetRate(rate_bps) = signal {
            self.s.rate = rate_bps.clamp(self.k.min_rate_bps.max(1), self.k.line_rate_bps.max(1));
            self.s.ss = false;
        }
    }

    fn on_timeout(&mut self, _now_ps: u64) {
        self.s.ss = false;
    }

    fn rate_bps(&self) -> u64 {
        self.r().rate_bps()
    }

    fn window_bytes(&self) -> u64 {
        self.r().window_bytes()
    }
}

impl CongestionControl for Dctcp {
    fn on_ack(&mut self, info: &AckInfo<'_>) {
        self.view_mut().on_ack(info)
    }

    fn on_scheme_signal(&mut self, now_ps: u64, signal: SchemeSignal) {
        self.view_mut().on_scheme_signal(now_ps, signal)
    }

    fn on_timeout(&mut self, now_ps: u64) {
        self.view_mut().on_timeout(now_ps)
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

    const L: u64 = 100_000_000_000;

    fn ack(ack_seq: u64, snd_nxt: u64, ce: bool) -> AckInfo<'static> {
        AckInfo {
            now_ps: 0,
            ack_seq,
            newly_acked_bytes: 1000,
            snd_nxt,
            ce_echo: ce,
            marks: crate::engine::packet::Marks::NONE,
            rtt_ps: 13_000_000,
            nack: false,
            int: &[],
        }
    }

    fn new() -> Dctcp {
        Dctcp::new(&DctcpParams::hpcc_preset(L, 0), L, 153_000)
    }

    #[test]
    fn preset_values() {
        let p = DctcpParams::hpcc_preset(L, 153_000);
        assert_eq!(p.g, 0.0625);
        assert_eq!(p.rate_ai_bps, 615_000_000);
        assert_eq!(p.min_rate_bps, 1_000_000_000);
        assert!(p.has_win && p.var_win);
        assert_eq!(p.window_bytes, 153_000);
        // 1000 B per 13 µs = 8000 bit / 13e-6 s = 615384615 bit/s.
        assert_eq!(
            DctcpParams::ai_one_mtu_per_rtt(1000, 13_000_000),
            615_384_615
        );
        assert_eq!(DctcpParams::ai_one_mtu_per_rtt(1000, 0), 0);
    }

    #[test]
    fn starts_at_line_rate_with_bdp_window() {
        let c = new();
        assert_eq!(c.rate_bps(), L);
        assert_eq!(c.window_bytes(), 153_000);
        assert_eq!(c.alpha(), 1.0);
    }

    #[test]
    fn alpha_decays_without_marks() {
        let mut c = new();
        // First window: only records its end (10000) and batch = 10000/1000 + 1.
        c.on_ack(&ack(1000, 10_000, false));
        assert_eq!(c.alpha(), 1.0);
        assert_eq!(c.batch_packets(), 11);
        // ACKs inside the window do nothing to α.
        c.on_ack(&ack(10_000, 12_000, false));
        assert_eq!(c.alpha(), 1.0);
        // Next windows: F = 0 → α ← (15/16)·α.
        c.on_ack(&ack(11_000, 20_000, false));
        assert_eq!(c.alpha(), 15.0 / 16.0);
        assert_eq!(c.batch_packets(), 10); // (20000 − 11000)/1000 + 1
        c.on_ack(&ack(21_000, 30_000, false));
        assert_eq!(c.alpha(), 225.0 / 256.0);
        assert_eq!(c.rate_bps(), L);
    }

    #[test]
    fn marked_windows_drive_alpha_to_one_and_halve_rate() {
        let mut c = new();
        // Let α decay for one window first: α = 15/16.
        c.on_ack(&ack(1000, 10_000, false));
        c.on_ack(&ack(11_000, 20_000, false));
        assert_eq!(c.alpha(), 15.0 / 16.0);
        // Fully marked window of 10 packets (batch = 10): ACKs 12000..=20000 all CE.
        c.on_ack(&ack(12_000, 20_000, true));
        // Cut with α = 15/16: 100G · (1 − 15/32) = 53.125G; CWR until ack > 20000.
        assert_eq!(c.rate_bps(), 53_125_000_000);
        assert!(c.in_cwr());
        for s in (13_000..=20_000).step_by(1000) {
            c.on_ack(&ack(s, 20_000, true));
        }
        assert_eq!(c.rate_bps(), 53_125_000_000, "one cut per window");
        // The next ACK (also CE) closes the window: marks = 10 of batch 10 → F = 1,
        // α = (15/16)² + 1/16 = 241/256; CWR ends (21000 > 20000) and the CE cuts again.
        c.on_ack(&ack(21_000, 30_000, true));
        assert_eq!(c.alpha(), 241.0 / 256.0);
        // 53.125G · (1 − 241/512) = 53.125G · 271/512 = 28118896484.375 → 28118896484.
        assert_eq!(c.rate_bps(), 28_118_896_484);
        // α keeps rising towards 1 with fully marked windows: α' = (15/16)α + 1/16.
        let mut a = 241.0 / 256.0;
        let mut seq = 21_000;
        for _ in 0..200 {
            for _ in 0..9 {
                seq += 1000;
                c.on_ack(&ack(seq, seq + 9000, true));
            }
            seq += 1000;
            c.on_ack(&ack(seq, seq + 9000, true));
            a = (1.0 - 1.0 / 16.0) * a + 1.0 / 16.0;
        }
        assert!(c.alpha() > 0.999 && c.alpha() <= 1.0);
        assert!((c.alpha() - a).abs() < 1e-12);
        assert_eq!(c.rate_bps(), 1_000_000_000, "floored at MIN_RATE");
    }

    #[test]
    fn first_marked_ack_halves_rate() {
        let mut c = new();
        c.on_ack(&ack(1000, 10_000, true));
        assert_eq!(c.rate_bps(), 50_000_000_000);
        assert_eq!(c.window_bytes(), 76_500);
    }

    #[test]
    fn additive_increase_once_per_window_outside_cwr() {
        let mut c = new();
        c.on_ack(&ack(1000, 10_000, true)); // cut to 50G, CWR until ack > 10000
        c.on_ack(&ack(2000, 10_000, false));
        assert_eq!(c.rate_bps(), 50_000_000_000);
        // New batch at 11000 and CWR ends (11000 > 10000): +615 Mb/s.
        c.on_ack(&ack(11_000, 20_000, false));
        assert_eq!(c.rate_bps(), 50_615_000_000);
        // Rest of that window: no increase.
        for s in (12_000..=20_000).step_by(1000) {
            c.on_ack(&ack(s, 20_000, false));
        }
        assert_eq!(c.rate_bps(), 50_615_000_000);
        c.on_ack(&ack(21_000, 30_000, false));
        assert_eq!(c.rate_bps(), 51_230_000_000);
        // Window tracks rate: 153000 · 51.23G / 100G = 78381.9 → 78381.
        assert_eq!(c.window_bytes(), 78_381);
    }

    #[test]
    fn no_increase_on_new_batch_during_cwr() {
        let mut c = new();
        c.on_ack(&ack(1000, 10_000, false)); // first window ends at 10000
        c.on_ack(&ack(2000, 30_000, true)); // cut: CWR until ack > 30000
        assert_eq!(c.rate_bps(), 50_000_000_000);
        // New batch (11000 > 10000) but still in CWR: rate frozen.
        c.on_ack(&ack(11_000, 30_000, false));
        assert_eq!(c.rate_bps(), 50_000_000_000);
        assert!(c.in_cwr());
    }

    #[test]
    fn increase_capped_at_line_rate() {
        let mut c = new();
        c.on_ack(&ack(1000, 10_000, false));
        c.on_ack(&ack(11_000, 20_000, false));
        assert_eq!(c.rate_bps(), L);
        assert_eq!(c.window_bytes(), 153_000);
    }

    /// Slow start: 1 Gb/s at a 100 G line with a 153,000 B BDP; each ACK of 1,000 B adds
    /// 1,000 × 100 G / 153,000 = 653,594,771 b/s (integer division), so after 3 ACKs the rate is
    /// 1 G + 3 × 653,594,771; a CE echo ends slow start and cuts (α = 1: halves).
    #[test]
    fn slow_start_grows_per_acked_byte_until_a_mark() {
        let p = DctcpParams {
            slow_start: true,
            ..DctcpParams::hpcc_preset(L, 0)
        };
        let mut c = Dctcp::new(&p, L, 153_000);
        assert_eq!(c.rate_bps(), 1_000_000_000);
        assert!(c.in_slow_start());
        for i in 1..=3u64 {
            c.on_ack(&ack(1000 * i, 10_000, false));
        }
        let r = 1_000_000_000 + 3 * 653_594_771;
        assert_eq!(c.rate_bps(), r);
        c.on_ack(&ack(4000, 10_000, true));
        assert!(!c.in_slow_start());
        assert_eq!(c.rate_bps(), r / 2);
        // Reaching the line rate also ends slow start.
        let mut c = Dctcp::new(&p, L, 1000);
        c.on_ack(&ack(1000, 10_000, false));
        assert_eq!(c.rate_bps(), L);
        assert!(!c.in_slow_start());
        // Without slow start: line rate from the start.
        assert_eq!(new().rate_bps(), L);
    }

    #[test]
    fn window_options() {
        let fixed = DctcpParams {
            var_win: false,
            ..DctcpParams::hpcc_preset(L, 0)
        };
        let mut c = Dctcp::new(&fixed, L, 153_000);
        c.on_ack(&ack(1000, 10_000, true));
        assert_eq!(c.window_bytes(), 153_000);
        let none = DctcpParams {
            has_win: false,
            ..DctcpParams::hpcc_preset(L, 0)
        };
        assert_eq!(Dctcp::new(&none, L, 153_000).window_bytes(), u64::MAX);
        let explicit = DctcpParams::hpcc_preset(L, 100_000);
        assert_eq!(Dctcp::new(&explicit, L, 153_000).window_bytes(), 100_000);
    }

    #[test]
    fn degenerate_inputs_do_not_panic() {
        let p = DctcpParams {
            g: f64::NAN,
            mtu_bytes: 0,
            rate_ai_bps: u64::MAX,
            min_rate_bps: u64::MAX,
            window_bytes: u64::MAX,
            ..DctcpParams::default()
        };
        for line in [0, 1, L, u64::MAX] {
            let mut c = Dctcp::new(&p, line, 0);
            for (a, n, ce) in [(5, 0, true), (u64::MAX, 1, false), (0, u64::MAX, true)] {
                c.on_ack(&ack(a, n, ce));
            }
            assert!(c.rate_bps() >= 1);
            assert!(c.window_bytes() >= 1);
        }
    }
}
