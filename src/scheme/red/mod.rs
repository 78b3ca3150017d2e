//! RED, Random Early Detection (Floyd & Jacobson, "Random Early Detection Gateways for
//! Congestion Avoidance", IEEE/ACM ToN 1(4), 1993), as a drop-based active queue management
//! at switch egress queues. A switch-only scheme: it drops data packets before they are
//! queued; senders see the loss through their loss recovery.
//!
//! Per (egress port, data queue) the switch keeps the average queue size `avg`, updated on
//! every data-packet arrival at that queue (the paper's Fig. 2):
//! - the queue holds packets: `avg ← (1 − w_q)·avg + w_q·q`, with `q` the queue's bytes before
//!   the arriving packet;
//! - the queue is empty: `avg ← (1 − w_q)^m·avg`, with `m` = the time since the queue went
//!   empty divided by the transmission time of a full-size data packet at the port's rate
//!   (fractional `m`: the decay the paper's "linear function of time" describes).
//!
//! Then `avg < min_th` → enqueue; `min_th ≤ avg < max_th` → drop with probability
//! `p_a = p_b / (1 − count·p_b)`, `p_b = max_p·(avg − min_th)/(max_th − min_th)`;
//! `avg ≥ max_th` → drop. `count` is the number of packets admitted with `avg` in the band
//! since the last drop (or since `avg` entered the band): with it, the number of packets from
//! one drop to the next is uniform on `1 ..= 1/p_b` (the paper's §7, "Method 2") rather than
//! geometric. The paper's Fig. 2 pseudocode increments `count` before computing `p_a`, which
//! shifts that range by one; this module follows the analysis.
//!
//! Byte mode (the paper's §4): queue, average and thresholds are in bytes, and
//! `p_b ← p_b·size/max_size` for a packet of `size` bytes (max = a full-size data packet on
//! the wire), so small packets are less likely to be dropped.
//!
//! Only data packets in the data queues are subject to RED: the control class (queue 0) and
//! ACK/NACK/CNP or schemes' own packets pass untouched (they still occupy the queue `q` that
//! RED measures). A RED drop is counted as a buffer drop (the top-level `drops`).
//!
//! Layout: the configuration and the per-queue state machine ([`RedQueue`], pure, tested
//! here) in this file; the scenario table in `config.rs`; the switch half ([`RedSwitch`]:
//! the hooks) in `switch.rs`; an end-to-end test in `tests_e2e.rs`.

pub mod config;
pub mod switch;
#[cfg(test)]
mod tests_e2e;

pub use switch::RedSwitch;

/// The scheme's registry id ([`crate::scheme::Scheme::ID`]; its position in the registry).
pub const ID: crate::scheme::SchemeId = crate::scheme::SchemeId(9);

/// `[red]`: RED parameters. The defaults are those of the RED paper's simulations
/// (min_th = 5 packets, max_th = 15 packets, w_q = 0.002, max_p = 1/50), in byte mode: the
/// thresholds are 5 and 15 full-size data packets on the wire.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RedConfig {
    /// RED on/off (every switch, every data queue).
    pub enabled: bool,
    /// min_th, bytes (`None` = 5 full-size data packets on the wire).
    pub min_th_bytes: Option<u64>,
    /// max_th, bytes (`None` = 15 full-size data packets on the wire).
    pub max_th_bytes: Option<u64>,
    /// max_p: the drop probability `p_b` reaches as `avg` approaches max_th.
    pub max_p: f64,
    /// w_q: the weight of the newest queue sample in the average.
    pub weight: f64,
}

/// Default min_th, in full-size data packets (the RED paper's simulations).
pub const DEFAULT_MIN_TH_PKTS: u64 = 5;
/// Default max_th, in full-size data packets (the RED paper's simulations).
pub const DEFAULT_MAX_TH_PKTS: u64 = 15;

impl Default for RedConfig {
    fn default() -> Self {
        RedConfig {
            enabled: false,
            min_th_bytes: None,
            max_th_bytes: None,
            max_p: 0.02,
            weight: 0.002,
        }
    }
}

impl RedConfig {
    /// (min_th, max_th) in bytes, the defaults scaled by `max_packet_bytes` (a full-size data
    /// packet on the wire).
    pub fn thresholds(&self, max_packet_bytes: u64) -> (u64, u64) {
        (
            self.min_th_bytes
                .unwrap_or(DEFAULT_MIN_TH_PKTS * max_packet_bytes),
            self.max_th_bytes
                .unwrap_or(DEFAULT_MAX_TH_PKTS * max_packet_bytes),
        )
    }
}

/// RED parameters as one switch applies them (thresholds resolved to bytes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedParams {
    /// min_th, bytes.
    pub min_th: f64,
    /// max_th, bytes.
    pub max_th: f64,
    /// max_p.
    pub max_p: f64,
    /// w_q.
    pub weight: f64,
    /// A full-size data packet on the wire, bytes (byte mode scales `p_b` by size / this).
    pub max_packet_bytes: f64,
}

/// What RED does with an arriving data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Queue it (`avg` below min_th, or the coin said so).
    Enqueue,
    /// Dropped with probability `p_a` (min_th ≤ avg < max_th).
    EarlyDrop,
    /// Dropped because avg ≥ max_th.
    ForcedDrop,
}

/// RED state of one (egress port, data queue).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RedQueue {
    /// Average queue size, bytes.
    pub avg: f64,
    /// Packets admitted with avg in [min_th, max_th) since the last drop (or since avg
    /// entered that band).
    pub count: u32,
    /// When the queue last went empty, picoseconds (0: empty since the start).
    pub idle_since_ps: u64,
}

/// `p_a` for a packet whose `p_b` (already scaled to its size) is `p_b`, `count` packets after
/// the last drop: `p_b / (1 − count·p_b)`, and 1 once `count·p_b` reaches 1.
#[inline]
pub fn drop_probability(p_b: f64, count: u32) -> f64 {
    let d = 1.0 - count as f64 * p_b;
    if d <= p_b { 1.0 } else { p_b / d }
}

impl RedQueue {
    /// The average after an arrival that finds `q_bytes` queued at `now_ps`; `pkt_time_ps` is
    /// the transmission time of a full-size data packet at the port's rate (the idle decay's
    /// unit).
    #[inline]
    pub fn update_avg(&mut self, p: &RedParams, q_bytes: u64, now_ps: u64, pkt_time_ps: u64) {
        if q_bytes > 0 {
            self.avg = (1.0 - p.weight) * self.avg + p.weight * q_bytes as f64;
        } else if self.avg > 0.0 {
            let m = now_ps.saturating_sub(self.idle_since_ps) as f64 / pkt_time_ps.max(1) as f64;
            self.avg *= (1.0 - p.weight).powf(m);
        }
    }

    /// The drop decision for a data packet of `size` bytes, with `avg` already updated
    /// ([`Self::update_avg`]). `draw` gives a uniform number in [0, 1); it is called only in
    /// the probabilistic band.
    #[inline]
    pub fn decide(&mut self, p: &RedParams, size: u64, draw: impl FnOnce() -> f64) -> Decision {
        if self.avg < p.min_th {
            self.count = 0;
            return Decision::Enqueue;
        }
        if self.avg >= p.max_th {
            self.count = 0;
            return Decision::ForcedDrop;
        }
        let p_b = p.max_p * (self.avg - p.min_th) / (p.max_th - p.min_th) * size as f64
            / p.max_packet_bytes;
        if draw() < drop_probability(p_b, self.count) {
            self.count = 0;
            Decision::EarlyDrop
        } else {
            self.count += 1;
            Decision::Enqueue
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(min_th: f64, max_th: f64, max_p: f64, weight: f64) -> RedParams {
        RedParams {
            min_th,
            max_th,
            max_p,
            weight,
            max_packet_bytes: 1000.0,
        }
    }

    /// After n arrivals that each find q bytes queued, from avg = 0, the EWMA is
    /// avg_n = (1 − w)·avg_{n−1} + w·q = q·(1 − (1 − w)^n) (induction: avg_0 = 0, and
    /// q − avg_n = (1 − w)(q − avg_{n−1}) = (1 − w)^n·q).
    #[test]
    fn ewma_at_a_constant_queue() {
        let p = params(5e3, 15e3, 0.02, 0.002);
        let q = 10_000u64;
        let mut s = RedQueue::default();
        for n in 1..=2000u32 {
            s.update_avg(&p, q, n as u64, 1);
            let want = q as f64 * (1.0 - (1.0 - 0.002f64).powi(n as i32));
            assert!(
                (s.avg - want).abs() < 1e-9 * q as f64,
                "n {n}: {} vs {want}",
                s.avg
            );
        }
        // n = 500: q·(1 − 0.998^500) = 10000·(1 − 0.36751) ≈ 6324.9.
        let mut s = RedQueue::default();
        for _ in 0..500 {
            s.update_avg(&p, q, 0, 1);
        }
        assert!((s.avg - 6324.9).abs() < 0.1, "{}", s.avg);
    }

    /// An arrival at a queue that has been empty for 3 packet times, w = 0.5: avg is divided
    /// by (1 − 0.5)^−3 = 8 — and the queue's 0 bytes are not averaged in (that would halve
    /// once more). Half a packet time: (1/2)^0.5 = 1/√2.
    #[test]
    fn idle_correction() {
        let p = params(5e3, 15e3, 0.02, 0.5);
        let pkt = 80_000u64; // 1000 B at 100 Gb/s, ps
        let mut s = RedQueue {
            avg: 8000.0,
            count: 0,
            idle_since_ps: 1_000_000,
        };
        s.update_avg(&p, 0, 1_000_000 + 3 * pkt, pkt);
        assert!((s.avg - 1000.0).abs() < 1e-9, "{}", s.avg);
        let mut s = RedQueue {
            avg: 8000.0,
            count: 0,
            idle_since_ps: 0,
        };
        s.update_avg(&p, 0, pkt / 2, pkt);
        assert!((s.avg - 8000.0 / 2f64.sqrt()).abs() < 1e-9, "{}", s.avg);
        // No idle time: no decay.
        let mut s = RedQueue {
            avg: 8000.0,
            count: 0,
            idle_since_ps: 7,
        };
        s.update_avg(&p, 0, 7, pkt);
        assert_eq!(s.avg, 8000.0);
    }

    /// With p_b = 1/8 and p_a = p_b/(1 − count·p_b), the packet k after a drop (count = k − 1)
    /// survives the packets before it with probability Π_{i<k} (1 − (i+1)p_b)/(1 − i·p_b) =
    /// 1 − (k − 1)/8, so P(X = k) = (1 − (k−1)/8)·(1/8)/(1 − (k−1)/8) = 1/8 for k = 1..=8:
    /// uniform, and certain by the 8th (p_a = 1 at count = 7). Without `count` it would be
    /// geometric: P(X = k) = (1/8)(7/8)^(k−1).
    #[test]
    fn count_makes_the_gap_uniform() {
        let p_b = 0.125;
        let mut survive = 1.0;
        for k in 1..=8u32 {
            let pa = drop_probability(p_b, k - 1);
            let pk = survive * pa;
            assert!((pk - 0.125).abs() < 1e-15, "P(X = {k}) = {pk}");
            survive *= 1.0 - pa;
        }
        assert_eq!(drop_probability(p_b, 7), 1.0);
        assert!(survive.abs() < 1e-15);

        // The same through `decide` at a constant avg in the band: with avg halfway between
        // the thresholds and max_p = 1/4, p_b = 1/8; drawing u just below p_a drops, just
        // above keeps and counts.
        let p = params(1000.0, 3000.0, 0.25, 0.002);
        let mut s = RedQueue {
            avg: 2000.0,
            ..RedQueue::default()
        };
        for c in 0..7u32 {
            let pa = drop_probability(0.125, c);
            assert_eq!(s.decide(&p, 1000, || pa * 1.000001), Decision::Enqueue);
            assert_eq!(s.count, c + 1);
        }
        assert_eq!(s.decide(&p, 1000, || 0.999_999), Decision::EarlyDrop);
        assert_eq!(s.count, 0);
        // Byte mode: a 500 B packet has half the p_b.
        assert_eq!(s.decide(&p, 500, || 0.0625 * 1.000001), Decision::Enqueue);
        let mut t = RedQueue {
            avg: 2000.0,
            ..RedQueue::default()
        };
        assert_eq!(t.decide(&p, 500, || 0.0625 * 0.999999), Decision::EarlyDrop);

        // Empirically, with the switch's generator: gaps between drops uniform on 1..=8.
        let mut rng = crate::rng::Rng::new(11);
        let mut s = RedQueue {
            avg: 2000.0,
            ..RedQueue::default()
        };
        let mut hist = [0u32; 9];
        let mut gap = 0;
        for _ in 0..200_000 {
            gap += 1;
            if s.decide(&p, 1000, || rng.f64()) == Decision::EarlyDrop {
                hist[gap] += 1;
                gap = 0;
            }
        }
        let n: u32 = hist.iter().sum();
        for (k, &h) in hist.iter().enumerate().skip(1) {
            let f = h as f64 / n as f64;
            assert!((f - 0.125).abs() < 0.01, "P(X = {k}) ≈ {f}");
        }
    }

    /// Below min_th nothing is dropped and `count` resets; at or above max_th every packet is.
    #[test]
    fn thresholds() {
        let p = params(1000.0, 3000.0, 0.25, 0.002);
        let mut s = RedQueue {
            avg: 999.0,
            count: 5,
            idle_since_ps: 0,
        };
        assert_eq!(s.decide(&p, 1000, || panic!("no draw")), Decision::Enqueue);
        assert_eq!(s.count, 0);
        s.avg = 3000.0;
        s.count = 3;
        assert_eq!(
            s.decide(&p, 1000, || panic!("no draw")),
            Decision::ForcedDrop
        );
        assert_eq!(s.count, 0);
        // At min_th exactly: p_b = 0, never dropped.
        s.avg = 1000.0;
        assert_eq!(s.decide(&p, 1000, || 0.0), Decision::Enqueue);
    }
}
