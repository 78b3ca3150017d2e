//! Throughput fairness among senders over time: Jain's index of the goodput of the senders
//! that have a flow in progress over each whole interval (the SFC paper's Fig. 15 and HPCC's
//! Fig. 13 show per-flow throughput over time; this is the number those plots are read for).

use crate::metrics::buffer::ThroughputMeter;

/// Jain's fairness index of `xs`: (Σx)² / (n · Σx²). 1 when every share is equal, 1/n when one
/// takes everything. `None` for an empty slice or when every share is zero.
pub fn jain(xs: &[f64]) -> Option<f64> {
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    (!xs.is_empty() && sq > 0.0).then(|| sum * sum / (xs.len() as f64 * sq))
}

/// Fairness among senders over a run, from the per-sender goodput meter.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Fairness {
    /// Meter interval, nanoseconds.
    pub interval_ns: f64,
    /// Intervals scored: those over which at least two senders had a flow in progress.
    pub intervals: u64,
    /// Mean of the per-interval Jain indices (`None` when no interval was scored).
    pub jain_mean: Option<f64>,
    /// Smallest per-interval Jain index.
    pub jain_min: Option<f64>,
}

/// Jain's index per interval of `meter` among the senders active over the whole interval,
/// averaged. `spans[h]` lists the (start_ps, end_ps) of sender `h`'s flows (overlaps allowed);
/// a sender takes part in interval `[k·I, (k+1)·I)` when one of its merged spans covers all of
/// it, with its goodput in that interval (zero if it delivered nothing: a starved sender counts
/// against fairness). Intervals with fewer than two active senders are skipped.
pub fn interval_fairness(meter: &ThroughputMeter, spans: &[Vec<(u64, u64)>]) -> Fairness {
    let iv = meter.interval_ps().max(1);
    // interval index → the senders active over all of it.
    let mut active: std::collections::BTreeMap<u64, Vec<usize>> = Default::default();
    for (h, s) in spans.iter().enumerate() {
        let mut s = s.clone();
        s.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::new();
        for (a, b) in s {
            match merged.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        for (a, b) in merged {
            // First interval starting at or after `a`, last one ending at or before `b`.
            let (first, end) = (a.div_ceil(iv), b / iv);
            for k in first..end {
                active.entry(k).or_default().push(h);
            }
        }
    }
    let (mut n, mut total, mut min) = (0u64, 0.0f64, f64::INFINITY);
    let mut shares = Vec::new();
    for (k, hs) in &active {
        if hs.len() < 2 {
            continue;
        }
        shares.clear();
        shares.extend(hs.iter().map(|&h| meter.bytes_in(h, *k) as f64));
        // All starved: nobody got anything, which says nothing about sharing.
        if let Some(j) = jain(&shares) {
            n += 1;
            total += j;
            min = min.min(j);
        }
    }
    Fairness {
        interval_ns: iv as f64 / 1e3,
        intervals: n,
        jain_mean: (n > 0).then(|| total / n as f64),
        jain_min: (n > 0).then_some(min),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::US;

    #[test]
    fn jain_by_hand() {
        assert_eq!(jain(&[5.0, 5.0, 5.0]), Some(1.0));
        assert_eq!(jain(&[1.0, 0.0]), Some(0.5));
        // (2 + 1)² / (2 · (4 + 1)) = 0.9
        assert!((jain(&[2.0, 1.0]).unwrap() - 0.9).abs() < 1e-12);
        assert_eq!(jain(&[]), None);
        assert_eq!(jain(&[0.0, 0.0]), None);
    }

    #[test]
    fn intervals_count_only_whole_coverage_and_starved_senders() {
        // 100 µs intervals. Sender 0 active 0–400 µs, sender 1 active 150–400 µs (covers
        // intervals 2 and 3 only), sender 2 never sends.
        let mut m = ThroughputMeter::new(3, 100 * US);
        for k in 0..4u64 {
            m.record(0, k * 100 * US + US, 1000);
        }
        m.record(1, 250 * US, 1000); // interval 2: equal shares
        // interval 3: sender 1 starved → shares (1000, 0) → 0.5
        let spans = vec![vec![(0, 400 * US)], vec![(150 * US, 400 * US)], vec![]];
        let f = interval_fairness(&m, &spans);
        assert_eq!(f.intervals, 2);
        assert_eq!(f.jain_min, Some(0.5));
        assert!((f.jain_mean.unwrap() - 0.75).abs() < 1e-12);
        assert_eq!(f.interval_ns, 100_000.0);
        // Overlapping spans of one sender merge: (0, 250) + (200, 400) covers intervals 0..4.
        let spans = vec![
            vec![(0, 400 * US)],
            vec![(200 * US, 400 * US), (0, 250 * US)],
            vec![],
        ];
        let f = interval_fairness(&m, &spans);
        assert_eq!(f.intervals, 4);
        // Intervals 0, 1, 3: (1000, 0) → 0.5; interval 2: 1.0.
        assert!((f.jain_mean.unwrap() - (0.5 * 3.0 + 1.0) / 4.0).abs() < 1e-12);
    }

    #[test]
    fn no_interval_with_two_senders() {
        let m = ThroughputMeter::new(2, 100 * US);
        let f = interval_fairness(&m, &[vec![(0, 300 * US)], vec![]]);
        assert_eq!(f.intervals, 0);
        assert_eq!(f.jain_mean, None);
    }
}
