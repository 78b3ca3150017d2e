//! Packet round-trip latency: a fixed-size log-linear histogram of picosecond samples.
//!
//! Every ACK or NACK a sender receives is one sample: the time from its data packet leaving the
//! sender's NIC (`DataHdr::sent_ps`, echoed by the receiver) to the acknowledgement arriving
//! back — the packet's round-trip time through the network, queues included. This is the
//! "round trip latency" of the HPCC paper's Fig. 11b/d (its 12 µs base RTT plus queueing).
//!
//! A run has millions of ACKs, so the samples are not kept: they are counted in buckets of
//! relative width at most 1/128 (values below 128 ps exactly), 7,424 counters in all (58 KB)
//! allocated once. A percentile is the midpoint of the bucket holding the sample of rank
//! `floor(n·p)` (clamped to `n − 1`: the HPCC convention of [`super::stats::percentile`]),
//! clamped to the exact minimum and maximum: within 0.4 % of the exact sample. Recording is
//! a shift, a leading-zero count and an increment; it allocates nothing.

/// Sub-buckets per power of two, as a bit count: 2⁷ = 128 (relative bucket width ≤ 1/128).
const SUB_BITS: u32 = 7;
/// Sub-buckets per power of two.
const SUB: u64 = 1 << SUB_BITS;
/// Buckets: 128 exact ones below 128 ps, then 128 per power of two up to 2⁶⁴.
const BUCKETS: usize = (64 - SUB_BITS as usize + 1) << SUB_BITS as usize;

/// A histogram of latencies in picoseconds (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LatencyHistogram {
    counts: Vec<u64>,
    samples: u64,
    sum_ps: u128,
    min_ps: u64,
    max_ps: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram::new()
    }
}

/// The bucket of `v_ps`.
fn bucket(v_ps: u64) -> usize {
    if v_ps < SUB {
        return v_ps as usize;
    }
    let e = 63 - v_ps.leading_zeros(); // ≥ SUB_BITS
    let sub = (v_ps >> (e - SUB_BITS)) & (SUB - 1);
    (((e - SUB_BITS + 1) as usize) << SUB_BITS) + sub as usize
}

/// The lowest value of bucket `i` and its width (both picoseconds).
fn bucket_range(i: usize) -> (u64, u64) {
    if i < SUB as usize {
        return (i as u64, 1);
    }
    let e = (i >> SUB_BITS) as u32 + SUB_BITS - 1;
    let sub = (i as u64) & (SUB - 1);
    let shift = e - SUB_BITS;
    ((SUB + sub) << shift, 1u64 << shift)
}

impl LatencyHistogram {
    /// An empty histogram (its buckets allocated now, once).
    pub fn new() -> LatencyHistogram {
        LatencyHistogram {
            counts: vec![0; BUCKETS],
            samples: 0,
            sum_ps: 0,
            min_ps: u64::MAX,
            max_ps: 0,
        }
    }

    /// Count one sample of `v_ps` picoseconds.
    #[inline]
    pub fn record(&mut self, v_ps: u64) {
        self.counts[bucket(v_ps)] += 1;
        self.samples += 1;
        self.sum_ps += v_ps as u128;
        self.min_ps = self.min_ps.min(v_ps);
        self.max_ps = self.max_ps.max(v_ps);
    }

    /// Add every sample of `other` (histograms of parts of one run give the run's).
    pub fn merge(&mut self, other: &LatencyHistogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.samples += other.samples;
        self.sum_ps += other.sum_ps;
        self.min_ps = self.min_ps.min(other.min_ps);
        self.max_ps = self.max_ps.max(other.max_ps);
    }

    /// Samples counted.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// The largest sample, picoseconds (`None` without samples).
    pub fn max_ps(&self) -> Option<u64> {
        (self.samples > 0).then_some(self.max_ps)
    }

    /// The smallest sample, picoseconds (`None` without samples).
    pub fn min_ps(&self) -> Option<u64> {
        (self.samples > 0).then_some(self.min_ps)
    }

    /// The mean sample, picoseconds (`None` without samples).
    pub fn mean_ps(&self) -> Option<f64> {
        (self.samples > 0).then(|| self.sum_ps as f64 / self.samples as f64)
    }

    /// The `p`-quantile (`p` in `[0, 1]`, clamped), picoseconds: the midpoint of the bucket
    /// holding the sample of rank `floor(n·p)` (clamped to `n − 1`), clamped to the exact
    /// minimum and maximum (`None` without samples).
    pub fn percentile_ps(&self, p: f64) -> Option<f64> {
        if self.samples == 0 {
            return None;
        }
        let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) };
        let n = self.samples;
        let rank = ((n as f64 * p).floor() as u64).min(n - 1);
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen > rank {
                let (lo, w) = bucket_range(i);
                let mid = lo as f64 + (w - 1) as f64 / 2.0;
                return Some(mid.clamp(self.min_ps as f64, self.max_ps as f64));
            }
        }
        Some(self.max_ps as f64)
    }

    /// `summary.json`'s `rtt` section: `samples`, and `p50_us`, `p95_us`, `p99_us`,
    /// `p999_us`, `mean_us`, `min_us`, `max_us` in microseconds (`null` without samples).
    pub fn summary_json(&self) -> serde_json::Value {
        let us = |v: Option<f64>| v.map(|ps| ps / 1e6);
        serde_json::json!({
            "samples": self.samples,
            "p50_us": us(self.percentile_ps(0.50)),
            "p95_us": us(self.percentile_ps(0.95)),
            "p99_us": us(self.percentile_ps(0.99)),
            "p999_us": us(self.percentile_ps(0.999)),
            "mean_us": us(self.mean_ps()),
            "min_us": us(self.min_ps().map(|v| v as f64)),
            "max_us": us(self.max_ps().map(|v| v as f64)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Buckets tile the values: each value lies in its bucket's range, consecutive buckets
    /// are adjacent, and a bucket is at most 1/128 of its lowest value wide.
    #[test]
    fn buckets_tile_the_values() {
        for v in (0..5000u64).chain([1 << 20, (1 << 20) + 12345, u64::MAX / 3, u64::MAX]) {
            let (lo, w) = bucket_range(bucket(v));
            assert!(lo <= v && v - lo < w, "{v}: bucket [{lo}, +{w})");
            if lo >= SUB {
                assert!(w * SUB <= lo, "{v}: width {w} over 1/128 of {lo}");
            }
        }
        for i in 0..BUCKETS - 1 {
            let (lo, w) = bucket_range(i);
            assert_eq!(bucket_range(i + 1).0, lo + w, "bucket {i}");
        }
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
    }

    /// Small values are exact; the HPCC rank convention (index floor(n·p)).
    #[test]
    fn small_samples_are_exact() {
        let mut h = LatencyHistogram::new();
        assert_eq!(h.percentile_ps(0.5), None);
        for v in [5u64, 1, 9, 3, 7] {
            h.record(v);
        }
        // Sorted 1 3 5 7 9: floor(5·0.5) = 2 → 5; floor(5·0.95) = 4 → 9; p = 0 → 1.
        assert_eq!(h.percentile_ps(0.5), Some(5.0));
        assert_eq!(h.percentile_ps(0.95), Some(9.0));
        assert_eq!(h.percentile_ps(0.0), Some(1.0));
        assert_eq!(h.mean_ps(), Some(5.0));
        assert_eq!((h.min_ps(), h.max_ps(), h.samples()), (Some(1), Some(9), 5));
    }

    /// 100,000 samples spread over 10 µs … 1 ms: every percentile within 0.4 % of the exact
    /// sample of the same rank; max and mean exact.
    #[test]
    fn percentiles_within_half_a_bucket() {
        let mut h = LatencyHistogram::new();
        let mut exact = Vec::new();
        let mut x: u64 = 12345;
        for _ in 0..100_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = 10_000_000 + (x >> 33) % 990_000_000;
            h.record(v);
            exact.push(v);
        }
        exact.sort_unstable();
        for p in [0.0, 0.01, 0.5, 0.95, 0.99, 0.999, 1.0] {
            let want = exact[((exact.len() as f64 * p).floor() as usize).min(exact.len() - 1)];
            let got = h.percentile_ps(p).unwrap();
            assert!(
                (got - want as f64).abs() <= want as f64 * 0.004,
                "p{p}: {got} vs {want}"
            );
        }
        assert_eq!(h.max_ps(), exact.last().copied());
        let mean = exact.iter().map(|&v| v as f64).sum::<f64>() / exact.len() as f64;
        assert!((h.mean_ps().unwrap() - mean).abs() < 1e-6 * mean);
    }

    /// Two halves merged are the whole.
    #[test]
    fn merge_is_the_whole() {
        let (mut a, mut b, mut all) = (
            LatencyHistogram::new(),
            LatencyHistogram::new(),
            LatencyHistogram::new(),
        );
        for v in 0..10_000u64 {
            let v = v * v;
            all.record(v);
            if v % 3 == 0 { &mut a } else { &mut b }.record(v);
        }
        a.merge(&b);
        assert_eq!(a, all);
    }
}
