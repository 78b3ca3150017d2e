//! The RED marking curve shared by the schemes that mark packets on a queue's backlog: ECN
//! marking ([`crate::scheme::ecn`]) and TCD's congestion-experienced marks
//! ([`crate::scheme::tcd`]). Part of the scheme interface, so that neither scheme imports the
//! other.

pub use crate::config::EcnThresholds;
use crate::rng::Rng;

/// Marking probability for a backlog of `q_bytes`.
#[inline]
pub fn mark_probability(q_bytes: u64, t: &EcnThresholds) -> f64 {
    if q_bytes > t.kmax_bytes {
        1.0
    } else if q_bytes <= t.kmin_bytes {
        0.0
    } else {
        t.pmax * (q_bytes - t.kmin_bytes) as f64 / (t.kmax_bytes - t.kmin_bytes) as f64
    }
}

/// Decide whether to mark (draws from `rng` only in the probabilistic band).
#[inline]
pub fn should_mark(q_bytes: u64, t: &EcnThresholds, rng: &mut Rng) -> bool {
    let p = mark_probability(q_bytes, t);
    p >= 1.0 || (p > 0.0 && rng.f64() < p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn red_curve() {
        let t = EcnThresholds {
            rate_bps: 0,
            kmin_bytes: 400_000,
            kmax_bytes: 1_600_000,
            pmax: 0.2,
        };
        assert_eq!(mark_probability(400_000, &t), 0.0);
        assert!((mark_probability(1_000_000, &t) - 0.1).abs() < 1e-12);
        assert!((mark_probability(1_600_000, &t) - 0.2).abs() < 1e-12);
        assert_eq!(mark_probability(1_600_001, &t), 1.0);
        // Kmin = Kmax (DCTCP): a step at K.
        let d = EcnThresholds {
            rate_bps: 0,
            kmin_bytes: 300_000,
            kmax_bytes: 300_000,
            pmax: 1.0,
        };
        assert_eq!(mark_probability(300_000, &d), 0.0);
        assert_eq!(mark_probability(300_001, &d), 1.0);
        // Empirical frequency in the band.
        let mut rng = Rng::new(5);
        let n = 100_000;
        let m = (0..n)
            .filter(|_| should_mark(1_000_000, &t, &mut rng))
            .count();
        assert!((m as f64 / n as f64 - 0.1).abs() < 0.005);
    }
}
