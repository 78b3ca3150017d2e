//! The shape of a run's flow list, gathered in one pass and constant memory: what the run
//! planner's memory estimate ([`crate::runguard`]) needs to know about the flows.

use crate::workload::FlowSpec;

/// Number of gap buckets of a [`FlowShape`]: one per power of two of a `u64` gap.
const GAP_BUCKETS: usize = 64;

/// What the memory estimate needs to know about a run's flows, gathered in one pass over them
/// in run order ([`FlowShape::add`]) and in constant memory: the count, the first and last
/// start, the bytes, whether the starts are sorted, and a histogram of the gaps between
/// consecutive starts (while sorted) in 64 power-of-two buckets, each with the
/// number of gaps and their (saturating) sum. Optionally it also counts the flows that start
/// at or after a stop time ([`FlowShape::with_stop`]).
///
/// Bucket 0 holds the gaps of 0 and 1 ps; bucket `k` ≥ 1 the gaps in `[2^k, 2^(k+1))` ps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowShape {
    /// Flows added.
    flows: u64,
    /// Earliest start, picoseconds (`u64::MAX` before the first flow).
    first_start_ps: u64,
    /// Latest start, picoseconds.
    last_start_ps: u64,
    /// Start of the flow added last, picoseconds.
    prev_start_ps: u64,
    /// Sum of the flow sizes, bytes.
    total_bytes: u128,
    /// No flow started before the one added before it.
    sorted: bool,
    /// Gaps per bucket (counted while the starts are sorted).
    gap_count: [u64; GAP_BUCKETS],
    /// Saturating sum of the gaps per bucket, picoseconds.
    gap_sum_ps: [u64; GAP_BUCKETS],
    /// Flows starting at or after this time are counted in `after_stop`, picoseconds.
    stop_ps: Option<u64>,
    /// Flows whose start is at or after `stop_ps`.
    after_stop: u64,
}

impl Default for FlowShape {
    fn default() -> FlowShape {
        FlowShape::new()
    }
}

impl FlowShape {
    /// The shape of no flows (no stop time: [`FlowShape::flows_after_stop`] stays 0).
    pub fn new() -> FlowShape {
        FlowShape {
            flows: 0,
            first_start_ps: u64::MAX,
            last_start_ps: 0,
            prev_start_ps: 0,
            total_bytes: 0,
            sorted: true,
            gap_count: [0; GAP_BUCKETS],
            gap_sum_ps: [0; GAP_BUCKETS],
            stop_ps: None,
            after_stop: 0,
        }
    }

    /// The shape of no flows, counting the flows added later that start at or after
    /// `stop_ps` (picoseconds) in [`FlowShape::flows_after_stop`].
    pub fn with_stop(stop_ps: u64) -> FlowShape {
        FlowShape {
            stop_ps: Some(stop_ps),
            ..FlowShape::new()
        }
    }

    /// The shape of `flows`, in the order given (no stop time).
    pub fn of<'a>(flows: impl IntoIterator<Item = &'a FlowSpec>) -> FlowShape {
        let mut s = FlowShape::new();
        for f in flows {
            s.add(f.start_ps, f.size_bytes);
        }
        s
    }

    /// Add the next flow in run order: it starts at `start_ps` (picoseconds) and carries
    /// `size_bytes` bytes.
    pub fn add(&mut self, start_ps: u64, size_bytes: u64) {
        if self.flows > 0 && self.sorted {
            if start_ps >= self.prev_start_ps {
                let gap = start_ps - self.prev_start_ps;
                let k = gap_bucket(gap);
                self.gap_count[k] += 1;
                self.gap_sum_ps[k] = self.gap_sum_ps[k].saturating_add(gap);
            } else {
                self.sorted = false;
            }
        }
        self.flows += 1;
        self.first_start_ps = self.first_start_ps.min(start_ps);
        self.last_start_ps = self.last_start_ps.max(start_ps);
        self.prev_start_ps = start_ps;
        self.total_bytes += u128::from(size_bytes);
        self.after_stop += u64::from(self.stop_ps.is_some_and(|s| start_ps >= s));
    }

    /// Flows added.
    pub fn flows(&self) -> u64 {
        self.flows
    }

    /// Earliest start, picoseconds; 0 without flows.
    pub fn first_start_ps(&self) -> u64 {
        if self.flows == 0 {
            0
        } else {
            self.first_start_ps
        }
    }

    /// Latest start, picoseconds; 0 without flows.
    pub fn last_start_ps(&self) -> u64 {
        self.last_start_ps
    }

    /// Sum of the flow sizes, bytes.
    pub fn total_bytes(&self) -> u128 {
        self.total_bytes
    }

    /// Whether every flow starts at or after the one added before it.
    pub fn sorted(&self) -> bool {
        self.sorted
    }

    /// Flows starting at or after the stop time given to [`FlowShape::with_stop`] (0 without
    /// one).
    pub fn flows_after_stop(&self) -> u64 {
        self.after_stop
    }

    /// The sum over consecutive starts of `min(gap, cap_ps)`, picoseconds, from the gap
    /// buckets (meaningful for sorted flows only): a bucket wholly at or below `cap_ps` adds
    /// its sum, one wholly at or above it adds `count · cap_ps`, exactly; the one bucket that
    /// straddles `cap_ps` (lowest gap `lo` < `cap_ps` < its highest gap) adds
    /// `min(sum, count · cap_ps)`, which exceeds its exact share by at most
    /// `count · (cap_ps − lo)` — less than `count · cap_ps / 2`, and less than its exact
    /// share (every gap there is at least `lo` > `cap_ps / 2`). So the result is at least the
    /// exact sum and less than twice it, and exact when no gap lies in the straddling
    /// bucket ([`FlowShape::busy_bound_slack_ps`] gives the bound).
    pub fn busy_ps(&self, cap_ps: u64) -> u64 {
        let mut busy = 0u64;
        for k in 0..GAP_BUCKETS {
            let (n, sum) = (self.gap_count[k], self.gap_sum_ps[k]);
            if n == 0 {
                continue;
            }
            let (lo, hi) = bucket_range(k);
            let capped = u128::from(n) * u128::from(cap_ps);
            let capped = capped.min(u128::from(u64::MAX)) as u64;
            let part = if hi <= cap_ps {
                sum
            } else if lo >= cap_ps {
                capped
            } else {
                sum.min(capped)
            };
            busy = busy.saturating_add(part);
        }
        busy
    }

    /// How much [`FlowShape::busy_ps`] of `cap_ps` may exceed the exact sum of
    /// `min(gap, cap_ps)`, at most, picoseconds: `count · (cap_ps − lo)` of the bucket that
    /// straddles `cap_ps` (0 when no bucket does or it holds no gap).
    pub fn busy_bound_slack_ps(&self, cap_ps: u64) -> u64 {
        (0..GAP_BUCKETS)
            .find_map(|k| {
                let (lo, hi) = bucket_range(k);
                (lo < cap_ps && cap_ps < hi).then(|| self.gap_count[k].saturating_mul(cap_ps - lo))
            })
            .unwrap_or(0)
    }
}

/// The [`FlowShape`] bucket of a gap of `gap_ps` picoseconds.
fn gap_bucket(gap_ps: u64) -> usize {
    63 - (gap_ps | 1).leading_zeros() as usize
}

/// The lowest and highest gap of [`FlowShape`] bucket `k`, picoseconds.
fn bucket_range(k: usize) -> (u64, u64) {
    let lo = if k == 0 { 0 } else { 1u64 << k };
    let hi = if k == 63 {
        u64::MAX
    } else {
        (1u64 << (k + 1)) - 1
    };
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flows_at(starts_ps: &[u64]) -> Vec<FlowSpec> {
        starts_ps
            .iter()
            .map(|&t| FlowSpec::background(0, 1, 1000, t))
            .collect()
    }

    #[test]
    fn shape_counts_the_flows_at_or_after_stop() {
        let flows = flows_at(&[1, 5, 5, 9, 10, 3]);
        let mut s = FlowShape::with_stop(5);
        for f in &flows {
            s.add(f.start_ps, f.size_bytes);
        }
        assert_eq!((s.flows(), s.flows_after_stop()), (6, 4));
        assert_eq!(s.total_bytes(), 6000);
        assert!(!s.sorted());
        assert_eq!(FlowShape::of(&flows).flows_after_stop(), 0);
        // Gaps recorded while sorted: 4, 0, 4, 1.
        let s = FlowShape::of(&flows[..5]);
        assert!(s.sorted());
        assert_eq!(s.busy_ps(u64::MAX), 9);
        assert_eq!(s.busy_ps(2), 5, "2 + 0 + 2 + 1");
        assert_eq!(gap_bucket(0), 0);
        assert_eq!(gap_bucket(1), 0);
        assert_eq!(gap_bucket(2), 1);
        assert_eq!(gap_bucket(u64::MAX), 63);
        assert_eq!(bucket_range(63), (1 << 63, u64::MAX));
    }
}
