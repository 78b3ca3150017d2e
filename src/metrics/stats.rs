//! Slowdown and FCT statistics over [`FlowRecord`]s, following the conventions of HPCC's
//! `analysis/fct_analysis.py` (see `FORMATS.md` §12):
//!
//! - slowdown = FCT / ideal FCT, clamped to ≥ 1 ([`FlowRecord::slowdown`]);
//! - a percentile `p` of `n` sorted values is the element at index `floor(n·p)` (clamped to
//!   `n − 1`), with no interpolation ([`percentile`]);
//! - flows are grouped by size either into buckets of (nearly) equal **flow count** (HPCC's
//!   default) or by explicit upper size edges ([`SizeBins`]).
//!
//! Only completed flows enter the slowdown/FCT statistics; unfinished flows are counted in
//! [`RunStats::flows_total`] only.

use super::FlowRecord;
use serde::Serialize;

/// The `p`-quantile (`p` in `[0, 1]`) of an ascending-sorted slice, HPCC convention: the element
/// at index `floor(n·p)`, clamped to `n − 1` — no interpolation. This is exactly what
/// `fct_analysis.py` does (`sd[int(len(sd)*p)]`), including its floating-point rounding of `n·p`.
///
/// `p` outside `[0, 1]` is clamped (a NaN `p` counts as 0). Returns `NaN` for an empty slice.
/// The slice is assumed sorted; an unsorted slice gives an unspecified (but non-panicking) element.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) };
    // `as usize` saturates, and n·p ≤ n, so only the p = 1 case needs the clamp.
    let idx = ((n as f64 * p).floor() as usize).min(n - 1);
    sorted[idx]
}

/// Summary of a sample (slowdowns, or FCTs in µs): HPCC-convention percentiles and the mean.
///
/// All fields except `count` are in the unit of the sample; they are `NaN` (serialized as JSON
/// `null`) when `count == 0`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Percentiles {
    /// Median (index `floor(0.5·n)`).
    pub p50: f64,
    /// 95th percentile (index `floor(0.95·n)`).
    pub p95: f64,
    /// 99th percentile (index `floor(0.99·n)`).
    pub p99: f64,
    /// 99.9th percentile (index `floor(0.999·n)`, clamped to `n − 1`).
    pub p999: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Largest value (e.g. the completion time of the last flow of an incast, the PB-FS
    /// paper's incast metric).
    pub max: f64,
    /// Number of values summarised (NaN inputs are dropped and not counted).
    pub count: usize,
}

impl Percentiles {
    /// Summarise an unsorted sample. NaN values are ignored; an empty sample gives `NaN`
    /// statistics with `count == 0`.
    pub fn from_unsorted(values: &[f64]) -> Percentiles {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
        v.sort_by(f64::total_cmp);
        Percentiles::from_sorted(&v)
    }

    /// Summarise an ascending-sorted sample without NaNs (not checked).
    pub fn from_sorted(sorted: &[f64]) -> Percentiles {
        let count = sorted.len();
        let mean = if count == 0 {
            f64::NAN
        } else {
            sorted.iter().sum::<f64>() / count as f64
        };
        Percentiles {
            p50: percentile(sorted, 0.5),
            p95: percentile(sorted, 0.95),
            p99: percentile(sorted, 0.99),
            p999: percentile(sorted, 0.999),
            mean,
            max: sorted.last().copied().unwrap_or(f64::NAN),
            count,
        }
    }
}

/// How completed flows are grouped by message size.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum SizeBins {
    /// Sort flows by size (ties broken by flow id) and split them into this many groups of
    /// (nearly) equal flow count, as HPCC's `fct_analysis` does: group `i` of `k` holds sorted
    /// flows `[floor(i·n/k), floor((i+1)·n/k))`. Empty groups (fewer flows than groups) are
    /// omitted; `0` is treated as `1`.
    EqualCount(usize),
    /// Explicit inclusive upper size edges, bytes: a flow goes into the first bin with
    /// `size ≤ edge`. Edges are sorted and de-duplicated; every edge yields a bin (possibly
    /// empty) and flows larger than the last edge go into an extra overflow bin (only emitted if
    /// non-empty) whose `hi_bytes` is `u64::MAX`.
    Edges(Vec<u64>),
}

impl Default for SizeBins {
    /// Ten equal-count bins.
    fn default() -> Self {
        SizeBins::EqualCount(10)
    }
}

/// Statistics of one size bin.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BinStats {
    /// Lower size bound, bytes (inclusive). Equal-count bins: the smallest flow size in the bin;
    /// edge bins: previous edge + 1 (0 for the first bin).
    pub lo_bytes: u64,
    /// Upper size bound, bytes (inclusive). Equal-count bins: the largest flow size in the bin
    /// (what HPCC prints); edge bins: the edge (`u64::MAX` for the overflow bin).
    pub hi_bytes: u64,
    /// Completed flows in the bin.
    pub count: usize,
    /// Slowdown (FCT / ideal FCT, clamped ≥ 1) statistics, dimensionless.
    pub slowdown: Percentiles,
    /// Flow completion time statistics, microseconds.
    pub fct_us: Percentiles,
}

/// Random access to the records of a run's flows: a slice of [`FlowRecord`]s, or the
/// simulator itself ([`crate::sim::Simulator`] builds each record on demand from its 64 B
/// per-flow state), so that statistics over millions of flows need no copy of all records.
pub trait Records {
    /// Number of flows.
    fn count(&self) -> usize;
    /// The record of flow `i` (`i < count()`).
    fn record(&self, i: usize) -> FlowRecord;
}

impl Records for [FlowRecord] {
    fn count(&self) -> usize {
        self.len()
    }
    fn record(&self, i: usize) -> FlowRecord {
        self[i].clone()
    }
}

impl Records for Vec<FlowRecord> {
    fn count(&self) -> usize {
        self.len()
    }
    fn record(&self, i: usize) -> FlowRecord {
        self[i].clone()
    }
}

/// Percentiles of `f(record)` over the records for which it is `Some`, sorted in place (one
/// 8 B value per such record).
fn summarise<R: Records + ?Sized>(
    records: &R,
    f: impl Fn(&FlowRecord) -> Option<f64>,
) -> Percentiles {
    let value = |i: usize| f(&records.record(i)).filter(|x| !x.is_nan());
    // Counted first: the vector is allocated once, at its size.
    let n = (0..records.count()).filter(|&i| value(i).is_some()).count();
    let mut v: Vec<f64> = Vec::with_capacity(n);
    v.extend((0..records.count()).filter_map(value));
    v.sort_by(f64::total_cmp);
    Percentiles::from_sorted(&v)
}

/// FCT of a completed record, microseconds.
pub(crate) fn fct_us(r: &FlowRecord) -> Option<f64> {
    r.slowdown()?;
    Some(r.fct_ps? as f64 / crate::units::US as f64)
}

/// Statistics of the completed records `ids` (positions in `records`) as one bin.
fn bin_stats<R: Records + ?Sized>(lo: u64, hi: u64, records: &R, ids: &[u32]) -> BinStats {
    let (mut sd, mut fct) = (Vec::with_capacity(ids.len()), Vec::with_capacity(ids.len()));
    for &i in ids {
        let r = records.record(i as usize);
        sd.extend(r.slowdown());
        fct.extend(fct_us(&r));
    }
    BinStats {
        lo_bytes: lo,
        hi_bytes: hi,
        count: ids.len(),
        slowdown: Percentiles::from_unsorted(&sd),
        fct_us: Percentiles::from_unsorted(&fct),
    }
}

/// Group the **completed** flows of `records` by size and summarise each group (see
/// [`SizeBins`] for the grouping rules). Bins are returned in ascending size order. Memory:
/// one 4 B position per completed flow, plus one bin's values.
pub fn by_size<R: Records + ?Sized>(records: &R, bins: &SizeBins) -> Vec<BinStats> {
    let done = |i: u32| records.record(i as usize).slowdown().is_some();
    let mut flows: Vec<u32> =
        Vec::with_capacity((0..records.count() as u32).filter(|&i| done(i)).count());
    flows.extend((0..records.count() as u32).filter(|&i| done(i)));
    let key = |i: u32| {
        let r = records.record(i as usize);
        (r.size_bytes, r.id)
    };
    flows.sort_by_key(|&i| key(i));
    let size = |i: u32| records.record(i as usize).size_bytes;
    match bins {
        SizeBins::EqualCount(k) => {
            let k = (*k).max(1);
            let n = flows.len();
            let mut out = Vec::with_capacity(k.min(n));
            for i in 0..k {
                // u128 avoids overflow of i·n for absurd k.
                let a = (i as u128 * n as u128 / k as u128) as usize;
                let b = ((i as u128 + 1) * n as u128 / k as u128) as usize;
                if a < b {
                    let g = &flows[a..b];
                    out.push(bin_stats(size(g[0]), size(g[g.len() - 1]), records, g));
                }
            }
            out
        }
        SizeBins::Edges(edges) => {
            let mut edges = edges.clone();
            edges.sort_unstable();
            edges.dedup();
            let mut out = Vec::with_capacity(edges.len() + 1);
            let mut start = 0usize; // flows are sorted by size
            let mut lo = 0u64;
            for &e in &edges {
                let end = start + flows[start..].partition_point(|&f| size(f) <= e);
                out.push(bin_stats(lo, e, records, &flows[start..end]));
                start = end;
                lo = e.saturating_add(1);
            }
            if start < flows.len() {
                out.push(bin_stats(lo, u64::MAX, records, &flows[start..]));
            }
            out
        }
    }
}

/// Statistics of the flows that share one UDP destination port (HPCC convention: 100 =
/// background traffic, 200 = incast).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DportStats {
    /// The destination port.
    pub dport: u16,
    /// Flows with this port (completed or not).
    pub flows_total: usize,
    /// Completed flows with this port.
    pub flows_completed: usize,
    /// Slowdown statistics of the completed flows, dimensionless.
    pub slowdown: Percentiles,
    /// Per-size-bin statistics of this port's flows, ascending size (the run's binning);
    /// only with [`RunStats::with_dport_bins`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bins: Option<Vec<BinStats>>,
    /// The mean over [`Self::bins`] that hold a completed flow of their P99 slowdown (SFC
    /// Fig. 2(b): "mean over size bins of P99", of the Hadoop flows only); with the bins only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bin_p99_mean: Option<f64>,
}

/// The mean of the P99 slowdowns of the `bins` that hold a completed flow; `None` if none does.
pub fn bin_p99_mean(bins: &[BinStats]) -> Option<f64> {
    let p99s: Vec<f64> = bins
        .iter()
        .filter(|b| b.count > 0)
        .map(|b| b.slowdown.p99)
        .collect();
    (!p99s.is_empty()).then(|| p99s.iter().sum::<f64>() / p99s.len() as f64)
}

/// Summary of one run's flows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunStats {
    /// Flows in the workload (completed or not).
    pub flows_total: usize,
    /// Flows that completed before the end of the run.
    pub flows_completed: usize,
    /// Slowdown statistics over all completed flows, dimensionless.
    pub slowdown: Percentiles,
    /// FCT statistics over all completed flows, microseconds.
    pub fct_us: Percentiles,
    /// Per-size-bin statistics, ascending size.
    pub bins: Vec<BinStats>,
    /// Per-destination-port breakdown, ascending port; empty unless requested with
    /// [`RunStats::with_dport_breakdown`].
    pub by_dport: Vec<DportStats>,
}

impl RunStats {
    /// Summarise `records` (all flows of the run, finished or not) with the given size binning.
    /// The per-dport breakdown is left empty. Memory: one 8 B value per completed flow at a
    /// time (no copy of the records).
    pub fn compute<R: Records + ?Sized>(records: &R, bins: &SizeBins) -> RunStats {
        let slowdown = summarise(records, FlowRecord::slowdown);
        RunStats {
            flows_total: records.count(),
            flows_completed: slowdown.count,
            slowdown,
            fct_us: summarise(records, fct_us),
            bins: by_size(records, bins),
            by_dport: Vec::new(),
        }
    }

    /// Fill [`RunStats::by_dport`] with one entry per destination port present in `records`.
    pub fn with_dport_breakdown<R: Records + ?Sized>(mut self, records: &R) -> RunStats {
        let mut ports = std::collections::BTreeMap::<u16, usize>::new();
        for i in 0..records.count() {
            *ports.entry(records.record(i).dport).or_default() += 1;
        }
        self.by_dport = ports
            .into_iter()
            .map(|(dport, flows_total)| {
                let slowdown =
                    summarise(
                        records,
                        |r| if r.dport == dport { r.slowdown() } else { None },
                    );
                DportStats {
                    dport,
                    flows_total,
                    flows_completed: slowdown.count,
                    slowdown,
                    bins: None,
                    bin_p99_mean: None,
                }
            })
            .collect();
        self
    }

    /// Add to every entry of [`RunStats::by_dport`] the size-bin statistics of its own flows
    /// (with `bins`, the run's binning; `EqualCount` bins are cut per port).
    pub fn with_dport_bins<R: Records + ?Sized>(
        mut self,
        records: &R,
        bins: &SizeBins,
    ) -> RunStats {
        for d in &mut self.by_dport {
            // Opt-in (`output.dport_bins`): one port's records at a time.
            let mine: Vec<FlowRecord> = (0..records.count())
                .map(|i| records.record(i))
                .filter(|r| r.dport == d.dport)
                .collect();
            let b = by_size(&mine, bins);
            d.bin_p99_mean = bin_p99_mean(&b);
            d.bins = Some(b);
        }
        self
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Fig. 2(b)'s metric: flows of slowdown 1, 2, 3 in one bin (P99 at index ⌊3 · 0.99⌋ = 2:
    /// 3) and 5 in another (5), an empty bin between: (3 + 5) / 2 = 4; the empty bin is left
    /// out. Only port 100's flows count.
    #[test]
    fn bin_p99_mean_of_one_port() {
        let mut recs = [
            rec(0, 100, Some(1.0)),
            rec(1, 100, Some(2.0)),
            rec(2, 100, Some(3.0)),
            rec(3, 5000, Some(5.0)),
            rec(4, 5000, Some(50.0)),
        ];
        recs[4].dport = 200;
        let bins = SizeBins::Edges(vec![1000, 2000, 10_000]);
        let s = RunStats::compute(&recs[..], &bins)
            .with_dport_breakdown(&recs[..])
            .with_dport_bins(&recs[..], &bins);
        assert_eq!(s.by_dport[0].dport, 100);
        assert_eq!(s.by_dport[0].bin_p99_mean, Some(4.0));
        assert_eq!(s.by_dport[1].bin_p99_mean, Some(50.0));
        assert_eq!(bin_p99_mean(&[]), None);
    }

    /// A completed flow with FCT = `slowdown` × 10 µs ideal.
    pub(crate) fn rec(id: u32, size: u64, slowdown: Option<f64>) -> FlowRecord {
        let ideal = 10_000_000u64;
        FlowRecord {
            id,
            src: 0,
            dst: 1,
            sport: 10000,
            dport: 100,
            size_bytes: size,
            start_ps: 2_000_000_000_000,
            fct_ps: slowdown.map(|s| (s * ideal as f64).round() as u64),
            ideal_fct_ps: ideal,
            retx_packets: 0,
            pauses: 0,
            paused_ps: 0,
        }
    }

    #[test]
    fn percentiles_1_to_100() {
        let v: Vec<f64> = (1..=100).rev().map(|x| x as f64).collect();
        let p = Percentiles::from_unsorted(&v);
        // index floor(100·p): 50 → 51, 95 → 96, 99 → 100, 99 (99.9 floored) → 100.
        assert_eq!(p.p50, 51.0);
        assert_eq!(p.p95, 96.0);
        assert_eq!(p.p99, 100.0);
        assert_eq!(p.p999, 100.0);
        assert_eq!(p.mean, 50.5);
        assert_eq!(p.max, 100.0);
        assert_eq!(p.count, 100);
        let sorted: Vec<f64> = (1..=100).map(|x| x as f64).collect();
        assert_eq!(percentile(&sorted, 0.0), 1.0);
        assert_eq!(percentile(&sorted, 1.0), 100.0);
        assert_eq!(percentile(&sorted, 7.0), 100.0);
        assert_eq!(percentile(&sorted, -1.0), 1.0);
        assert_eq!(percentile(&sorted, f64::NAN), 1.0);
        assert!(percentile(&[], 0.5).is_nan());
        // 1000 values: 99.9 → index 999.
        let k: Vec<f64> = (0..1000).map(|x| x as f64).collect();
        assert_eq!(percentile(&k, 0.999), 999.0);
        assert_eq!(percentile(&k, 0.99), 990.0);
        let e = Percentiles::from_unsorted(&[]);
        assert_eq!(e.count, 0);
        assert!(e.p50.is_nan() && e.mean.is_nan());
    }

    #[test]
    fn equal_count_25_into_10() {
        // Sizes 1000..=25000 given in reverse, slowdown = 1 + index.
        let recs: Vec<FlowRecord> = (0..25u32)
            .rev()
            .map(|i| rec(i, 1000 * (i as u64 + 1), Some(1.0 + i as f64)))
            .collect();
        let bins = by_size(&recs, &SizeBins::EqualCount(10));
        // Boundaries floor(25·i/10) = 0,2,5,7,10,12,15,17,20,22,25.
        let counts: Vec<usize> = bins.iter().map(|b| b.count).collect();
        assert_eq!(counts, vec![2, 3, 2, 3, 2, 3, 2, 3, 2, 3]);
        assert_eq!((bins[0].lo_bytes, bins[0].hi_bytes), (1000, 2000));
        assert_eq!((bins[1].lo_bytes, bins[1].hi_bytes), (3000, 5000));
        assert_eq!((bins[9].lo_bytes, bins[9].hi_bytes), (23000, 25000));
        // Bin 1 holds slowdowns 3,4,5: p50 = index 1 → 4; p99 = index 2 → 5.
        assert_eq!(bins[1].slowdown.p50, 4.0);
        assert_eq!(bins[1].slowdown.p99, 5.0);
        assert_eq!(bins[1].fct_us.p50, 40.0);
        // More bins than flows: empty ones are dropped; 0 bins = 1 bin.
        assert_eq!(by_size(&recs[..3], &SizeBins::EqualCount(10)).len(), 3);
        assert_eq!(by_size(&recs, &SizeBins::EqualCount(0))[0].count, 25);
        assert!(by_size(&Vec::new(), &SizeBins::default()).is_empty());
    }

    #[test]
    fn equal_count_ties_broken_by_id() {
        // Four equal-size flows; ids decide the split.
        let recs = vec![
            rec(3, 500, Some(4.0)),
            rec(1, 500, Some(2.0)),
            rec(2, 500, Some(3.0)),
            rec(0, 500, Some(1.0)),
        ];
        let bins = by_size(&recs, &SizeBins::EqualCount(2));
        assert_eq!(bins[0].slowdown.mean, 1.5);
        assert_eq!(bins[1].slowdown.mean, 3.5);
    }

    #[test]
    fn edges() {
        let recs = vec![
            rec(0, 100, Some(1.0)),
            rec(1, 1000, Some(2.0)),
            rec(2, 1001, Some(3.0)),
            rec(3, 50_000, Some(4.0)),
            rec(4, 2_000_000, Some(5.0)),
        ];
        let bins = by_size(&recs, &SizeBins::Edges(vec![100_000, 1000, 1000]));
        assert_eq!(bins.len(), 3);
        assert_eq!(
            (bins[0].lo_bytes, bins[0].hi_bytes, bins[0].count),
            (0, 1000, 2)
        );
        assert_eq!(
            (bins[1].lo_bytes, bins[1].hi_bytes, bins[1].count),
            (1001, 100_000, 2)
        );
        assert_eq!(
            (bins[2].lo_bytes, bins[2].hi_bytes, bins[2].count),
            (100_001, u64::MAX, 1)
        );
        assert_eq!(bins[2].slowdown.p50, 5.0);
        // An empty edge bin is kept; no overflow bin when nothing exceeds the last edge.
        let bins = by_size(&recs, &SizeBins::Edges(vec![10, 10_000_000]));
        assert_eq!(bins.iter().map(|b| b.count).collect::<Vec<_>>(), vec![0, 5]);
        assert!(bins[0].slowdown.p50.is_nan());
        assert!(by_size(&recs, &SizeBins::Edges(vec![])).len() == 1);
    }

    #[test]
    fn unfinished_excluded_and_clamp() {
        let mut recs = vec![
            rec(0, 1000, Some(2.0)),
            rec(1, 1000, None),
            rec(2, 1000, Some(0.5)),
        ];
        recs.push(FlowRecord {
            dport: 200,
            ..rec(3, 10, None)
        });
        assert_eq!(recs[2].slowdown(), Some(1.0));
        let s = RunStats::compute(&recs, &SizeBins::default()).with_dport_breakdown(&recs);
        assert_eq!(s.flows_total, 4);
        assert_eq!(s.flows_completed, 2);
        assert_eq!(s.slowdown.count, 2);
        // Slowdowns {2, 1 (clamped from 0.5)}: min 1, mean 1.5.
        assert_eq!(s.slowdown.mean, 1.5);
        assert_eq!(s.slowdown.p50, 2.0);
        assert_eq!(s.bins.iter().map(|b| b.count).sum::<usize>(), 2);
        assert_eq!(s.by_dport.len(), 2);
        assert_eq!(s.by_dport[0].dport, 100);
        assert_eq!(
            (s.by_dport[0].flows_total, s.by_dport[0].flows_completed),
            (3, 2)
        );
        assert_eq!(
            (s.by_dport[1].dport, s.by_dport[1].flows_completed),
            (200, 0)
        );
        // NaN serializes as null.
        let j = serde_json::to_string(&s).unwrap();
        assert!(j.contains("null"));
    }
}
