//! Time series of switch buffer occupancy, port queues and receiver throughput.
//!
//! [`BufferMonitor`] and [`QueueSampler`] record **watermarks**: for each fixed interval
//! `[k·T, (k+1)·T)` the maximum occupancy reached during it. The level at the start of an
//! interval is the level carried over from the previous one, so an interval without any change
//! has the carried-over level as its watermark (gaps are filled, never skipped). The hot path
//! (`update`) is a compare and two stores; it allocates only when it closes an interval.
//!
//! The series start at an origin, the interval holding the first flow's start
//! ([`BufferMonitor::with_origin`]), so idle time before the traffic costs nothing.
//!
//! **Idle stretches are elided.** When no series changes for more than
//! [`IDLE_SKIP_INTERVALS`] intervals (e.g. two bursts of flows far apart in time), the
//! series keep the interval of the last change and one interval at the settled level, then
//! continue at the interval of the next change: the intervals in between, all at that same
//! settled level, cost no memory and no output rows. The `time_ns` column stays exact, so a
//! reader sees the jump; a regular grid is recovered with a forward fill (pandas:
//! `reindex(...).ffill()`). The buffer CDF counts the kept samples only. The run's end
//! likewise: a run that ends long after the last change keeps only that one settled interval;
//! a stuck run (a PFC deadlock, or no event left before `stop` with flows unfinished) also
//! keeps the interval holding its end ([`BufferMonitor::finish_frozen`]), so queues frozen
//! until then show.
//!
//! Storage: one `u32` per (series, interval), holding **exact bytes** saturated at
//! `u32::MAX` (≈ 4.29 GB, far above any switch buffer). One simulated second at the default
//! 10 µs interval is 100 000 samples = 400 KB per switch, i.e. 40 MB for 100 switches (≤ 52 MB
//! with `Vec` growth slack).
//!
//! [`ThroughputMeter`] counts payload bytes delivered to each receiver per interval.

use super::output::{AtomicWriter, fmt_ns};
use crate::units::US;
use std::io::{self, Write};
use std::path::Path;

/// Default [`BufferMonitor`]/[`QueueSampler`] interval: 10 µs, in picoseconds.
pub const DEFAULT_BUFFER_INTERVAL_PS: u64 = 10 * US;
/// Default [`ThroughputMeter`] interval: 100 µs, in picoseconds.
pub const DEFAULT_THROUGHPUT_INTERVAL_PS: u64 = 100 * US;
/// An idle stretch (no series changes) longer than this many intervals is elided from the
/// watermark series (see the module docs): 10 ms at the default 10 µs interval.
pub const IDLE_SKIP_INTERVALS: u64 = 1000;

/// Watermark series of one quantity. Invariant: the open interval's index is `series.len()`.
#[derive(Clone, Debug, Default)]
struct Track {
    /// End of the open interval, ps.
    open_end_ps: u64,
    /// Maximum seen in the open interval, bytes.
    open_max: u64,
    /// Current level, bytes.
    level: u64,
    /// Maximum over all closed intervals, bytes (exact, not saturated).
    peak_closed: u64,
    /// Closed-interval watermarks, bytes saturated at `u32::MAX`.
    series: Vec<u32>,
}

#[inline]
fn sat32(x: u64) -> u32 {
    x.min(u32::MAX as u64) as u32
}

impl Track {
    fn new(interval_ps: u64) -> Track {
        Track {
            open_end_ps: interval_ps,
            ..Track::default()
        }
    }

    /// The level becomes `bytes` in the open interval (the caller rolled the track first).
    #[inline]
    fn set(&mut self, bytes: u64) {
        self.level = bytes;
        if bytes > self.open_max {
            self.open_max = bytes;
        }
    }

    /// Close intervals so that interval `idx` is open (no-op if it already is or is past).
    #[cold]
    #[inline(never)]
    fn roll_to(&mut self, interval_ps: u64, idx: u64) {
        let open = self.series.len() as u64;
        if idx <= open {
            // (A track kept for a merge starts with no open interval: its first update
            // opens interval `open`. Otherwise `open_end_ps` already ends it.)
            self.open_end_ps = self.open_end_ps.max((open + 1).saturating_mul(interval_ps));
            return;
        }
        self.peak_closed = self.peak_closed.max(self.open_max);
        self.series.push(sat32(self.open_max));
        let gap = (idx - open - 1) as usize;
        if gap > 0 {
            self.series
                .resize(self.series.len() + gap, sat32(self.level));
            self.peak_closed = self.peak_closed.max(self.level);
        }
        self.open_max = self.level;
        self.open_end_ps = (idx + 1).saturating_mul(interval_ps);
    }

    fn peak(&self) -> u64 {
        self.peak_closed.max(self.open_max)
    }
}

/// Common state of [`BufferMonitor`] and [`QueueSampler`].
#[derive(Clone, Debug)]
struct Watermarks {
    interval_ps: u64,
    /// Start of interval 0, ps (a multiple of `interval_ps`): the idle time before it is not
    /// stored.
    origin_ps: u64,
    tracks: Vec<Track>,
    /// Elided idle stretches: `(k, n)` = the `n` intervals before stored interval `k` were
    /// skipped (stored interval `k` is interval `k + n + earlier skips` after the origin).
    skips: Vec<(u64, u64)>,
    /// Sum of the skipped intervals, `Σ n` over `skips`.
    skipped: u64,
    /// Start of stored interval 0 as if nothing had been skipped: `origin_ps + skipped·T`,
    /// picoseconds (a track sees `now − base_ps`).
    base_ps: u64,
    /// `IDLE_SKIP_INTERVALS · T`, picoseconds: a quiet stretch shorter than this cannot be
    /// elided, so `update` only looks closer past it.
    quiet_ps: u64,
    /// Latest update time seen, ps (meaningful only if `any_update`).
    last_ps: u64,
    /// Whether `update` was ever called with a valid index.
    any_update: bool,
    /// Kept for a merge ([`Self::keep_idle_for_merge`]): the intervals (counted from the
    /// origin, ascending) in which some track was updated; idle stretches are not elided.
    active: Option<Vec<u64>>,
}

impl Watermarks {
    fn new(n: usize, interval_ps: u64, default_ps: u64) -> Watermarks {
        let interval_ps = if interval_ps == 0 {
            default_ps
        } else {
            interval_ps
        };
        Watermarks {
            interval_ps,
            origin_ps: 0,
            tracks: (0..n).map(|_| Track::new(interval_ps)).collect(),
            skips: Vec::new(),
            skipped: 0,
            base_ps: 0,
            quiet_ps: IDLE_SKIP_INTERVALS.saturating_mul(interval_ps),
            last_ps: 0,
            any_update: false,
            active: None,
        }
    }

    /// Keep every interval and record the intervals with an update, so that the series of
    /// several runs of disjoint tracks (the partitions of a run split over threads) can be
    /// merged and elided as one run's ([`Self::merge`]). Call before any update.
    fn keep_idle_for_merge(&mut self) {
        self.active = Some(Vec::new());
        self.quiet_ps = u64::MAX;
        for t in &mut self.tracks {
            // No interval open: the first update opens (and records) its interval.
            t.open_end_ps = 0;
        }
    }

    /// The watermarks of one run from `parts` (each kept for a merge, each holding the
    /// tracks `owner` gives it): every track from its owner, and the idle stretches elided
    /// as one run that saw all the updates elides them (`skip_idle`): each gap of more than
    /// `IDLE_SKIP_INTERVALS` + 1 intervals between two intervals with an update keeps two
    /// intervals after the earlier one; a track that went on past the gap loses the gap's
    /// intervals (all at its settled level), one that did not is closed up to the kept part.
    fn merge(mut parts: Vec<Watermarks>, owner: impl Fn(usize) -> usize) -> Watermarks {
        let mut active: Vec<u64> = parts
            .iter_mut()
            .flat_map(|p| p.active.take().unwrap_or_default())
            .collect();
        active.sort_unstable();
        active.dedup();
        let last_ps = parts.iter().map(|p| p.last_ps).max().unwrap_or(0);
        let any_update = parts.iter().any(|p| p.any_update);
        let iv = parts[0].interval_ps;
        let n = parts[0].tracks.len();
        let mut tracks: Vec<Track> = (0..n)
            .map(|i| {
                let k = owner(i).min(parts.len() - 1);
                std::mem::take(&mut parts[k].tracks[i])
            })
            .collect();
        let mut skips = Vec::new();
        let mut skipped = 0u64;
        for w in active.windows(2) {
            let (last, next) = (w[0], w[1]);
            if next - last > IDLE_SKIP_INTERVALS + 1 {
                let n = next - (last + 2);
                skips.push((last - skipped + 2, n));
                skipped += n;
            }
        }
        for t in &mut tracks {
            for &(stored, n) in &skips {
                let len = t.series.len() as u64;
                if len > stored {
                    let end = (stored + n).min(len);
                    t.series.drain(stored as usize..end as usize);
                } else {
                    t.roll_to(iv, stored);
                }
            }
            t.open_end_ps = (t.series.len() as u64 + 1).saturating_mul(iv);
        }
        let first = parts.swap_remove(0);
        Watermarks {
            interval_ps: iv,
            origin_ps: first.origin_ps,
            tracks,
            skips,
            skipped,
            base_ps: first.origin_ps.saturating_add(skipped.saturating_mul(iv)),
            quiet_ps: IDLE_SKIP_INTERVALS.saturating_mul(iv),
            last_ps,
            any_update,
            active: None,
        }
    }

    /// Start the series at the interval holding `first_ps` (rounded down to a multiple of the
    /// interval). Call before any update.
    fn set_origin(&mut self, first_ps: u64) {
        self.origin_ps = first_ps - first_ps % self.interval_ps;
        self.base_ps = self.origin_ps;
        for t in &mut self.tracks {
            *t = Track::new(self.interval_ps);
        }
    }

    #[inline]
    fn update(&mut self, i: usize, now_ps: u64, bytes: u64) {
        let base_ps = self.base_ps;
        let Some(t) = self.tracks.get_mut(i) else {
            return;
        };
        // After a quiet stretch of every series, this track's open interval has ended too:
        // the idle check rides on the (cold) interval roll, the hot path is unchanged.
        if now_ps.saturating_sub(base_ps) < t.open_end_ps {
            t.set(bytes);
        } else {
            self.roll(i, now_ps);
            self.tracks[i].set(bytes);
        }
        self.last_ps = self.last_ps.max(now_ps);
        self.any_update = true;
    }

    /// Track `i`'s open interval ended before `now_ps`: elide a global quiet stretch first if
    /// there is one (`skip_idle`), then close the track's intervals up to `now_ps`.
    #[cold]
    #[inline(never)]
    fn roll(&mut self, i: usize, now_ps: u64) {
        if self.any_update && now_ps > self.last_ps.saturating_add(self.quiet_ps) {
            self.skip_idle(now_ps);
        }
        let rel_ps = now_ps.saturating_sub(self.base_ps);
        let iv = self.interval_ps;
        if let Some(a) = &mut self.active {
            let k = rel_ps / iv;
            if a.last() != Some(&k) {
                a.push(k);
            }
        }
        self.tracks[i].roll_to(iv, rel_ps / iv);
    }

    /// An update at `now_ps` after a quiet stretch: if nothing changed for more than
    /// `IDLE_SKIP_INTERVALS` intervals after the interval of the last change (`last`, counted
    /// from the origin), keep `last` and one interval at the settled level and skip the rest,
    /// so that the open interval becomes the one holding `now_ps`.
    #[cold]
    #[inline(never)]
    fn skip_idle(&mut self, now_ps: u64) {
        let iv = self.interval_ps;
        let next = now_ps.saturating_sub(self.origin_ps) / iv;
        let last = self.last_ps.saturating_sub(self.origin_ps) / iv;
        if next - last <= IDLE_SKIP_INTERVALS + 1 {
            return;
        }
        let stored = last - self.skipped + 2;
        for t in &mut self.tracks {
            t.roll_to(iv, stored);
        }
        let n = next - (last + 2);
        self.skips.push((stored, n));
        self.skipped += n;
        self.base_ps = self.base_ps.saturating_add(n.saturating_mul(iv));
    }

    /// Close every interval that starts before `end_ps` (and any interval that saw an update),
    /// so all series get the same length `max(ceil(end/T), last_update/T + 1)`.
    fn finish(&mut self, end_ps: u64) {
        let iv = self.interval_ps;
        let mut n = end_ps.saturating_sub(self.origin_ps).div_ceil(iv);
        if self.any_update {
            let last = self.last_ps.saturating_sub(self.origin_ps) / iv;
            n = n.max(last + 1);
            if n > last + 1 + IDLE_SKIP_INTERVALS {
                // A long idle tail keeps one interval at the settled level (module docs).
                n = last + 2;
            }
        }
        let stored = n.saturating_sub(self.skipped);
        for t in &mut self.tracks {
            t.roll_to(iv, stored);
        }
    }

    /// [`Self::finish`] for a run whose levels stay frozen until `end_ps` (a stuck run): a
    /// long idle tail is elided as a stretch between changes is (one interval at the settled
    /// level kept, then a jump), and the interval holding the end is kept too, so the frozen
    /// levels show up to the end.
    fn finish_frozen(&mut self, end_ps: u64) {
        let iv = self.interval_ps;
        if self.any_update && end_ps > self.origin_ps {
            let next = (end_ps - 1 - self.origin_ps) / iv;
            let last = self.last_ps.saturating_sub(self.origin_ps) / iv;
            if next > last + 1 + IDLE_SKIP_INTERVALS {
                self.skip_idle(end_ps - 1);
                let stored = (next + 1).saturating_sub(self.skipped);
                for t in &mut self.tracks {
                    t.roll_to(iv, stored);
                }
                return;
            }
        }
        self.finish(end_ps);
    }

    fn series(&self, i: usize) -> &[u32] {
        self.tracks.get(i).map_or(&[], |t| &t.series)
    }

    fn peak(&self, i: usize) -> u64 {
        self.tracks.get(i).map_or(0, Track::peak)
    }

    fn peak_all(&self) -> u64 {
        self.tracks.iter().map(Track::peak).max().unwrap_or(0)
    }

    fn max_len(&self) -> usize {
        self.tracks
            .iter()
            .map(|t| t.series.len())
            .max()
            .unwrap_or(0)
    }

    /// Visit `(interval start ps, track index, bytes)` time-major, then by track index.
    fn for_each(&self, mut f: impl FnMut(u64, usize, u32) -> io::Result<()>) -> io::Result<()> {
        let mut skips = self.skips.iter().peekable();
        let mut skipped = 0u64;
        for k in 0..self.max_len() {
            while let Some(&&(at, n)) = skips.peek() {
                if at > k as u64 {
                    break;
                }
                skipped += n;
                skips.next();
            }
            let t_ps = (k as u64 + skipped)
                .saturating_mul(self.interval_ps)
                .saturating_add(self.origin_ps);
            for (i, t) in self.tracks.iter().enumerate() {
                if let Some(&b) = t.series.get(k) {
                    f(t_ps, i, b)?;
                }
            }
        }
        Ok(())
    }
}

/// Per-switch shared-buffer occupancy watermarks: for every switch and every interval
/// (default [`DEFAULT_BUFFER_INTERVAL_PS`] = 10 µs) the maximum number of bytes held in the
/// switch's shared buffer during that interval. See the module docs for gap filling and memory.
///
/// Usage: call [`update`](Self::update) on every change of a switch's occupancy (in
/// non-decreasing time order per switch), then [`finish`](Self::finish) at the end of the run.
#[derive(Clone, Debug)]
pub struct BufferMonitor {
    w: Watermarks,
    node_ids: Option<Vec<u32>>,
}

impl BufferMonitor {
    /// Monitor `n_switches` switches (indices `0..n_switches`) with intervals of `interval_ps`
    /// picoseconds (`0` selects the default 10 µs).
    pub fn new(n_switches: usize, interval_ps: u64) -> BufferMonitor {
        BufferMonitor {
            w: Watermarks::new(n_switches, interval_ps, DEFAULT_BUFFER_INTERVAL_PS),
            node_ids: None,
        }
    }

    /// Keep every interval for a merge ([`Self::merge_partitions`]). Call before any update.
    pub fn keep_idle_for_merge(&mut self) {
        self.w.keep_idle_for_merge();
    }

    /// The monitor of one run from those of its partitions (each kept for a merge), switch
    /// `i`'s series from partition `owner(i)`.
    pub fn merge_partitions(
        mut parts: Vec<BufferMonitor>,
        owner: impl Fn(usize) -> usize,
    ) -> BufferMonitor {
        let node_ids = parts[0].node_ids.take();
        BufferMonitor {
            w: Watermarks::merge(parts.into_iter().map(|p| p.w).collect(), owner),
            node_ids,
        }
    }

    /// Label switch `i` as topology node `ids[i]` in [`write_csv`](Self::write_csv) and
    /// [`hpcc_mon_lines`](Self::hpcc_mon_lines) (default: the switch index). Indices without an
    /// entry keep their index.
    pub fn with_node_ids(mut self, ids: Vec<u32>) -> BufferMonitor {
        self.node_ids = Some(ids);
        self
    }

    /// Start the series at the interval holding `first_ps` (normally the first flow's start):
    /// idle simulated time before it costs no memory and no output rows. Element `k` of a
    /// series then covers `[origin + k·T, origin + (k+1)·T)` with `origin` = `first_ps` rounded
    /// down to a multiple of T. Call before any update.
    pub fn with_origin(mut self, first_ps: u64) -> BufferMonitor {
        self.w.set_origin(first_ps);
        self
    }

    /// Start of interval 0, picoseconds (see [`with_origin`](Self::with_origin)).
    pub fn origin_ps(&self) -> u64 {
        self.w.origin_ps
    }

    fn label(&self, sw: usize) -> u64 {
        match &self.node_ids {
            Some(ids) => ids.get(sw).map_or(sw as u64, |&n| n as u64),
            None => sw as u64,
        }
    }

    /// Interval length, picoseconds.
    pub fn interval_ps(&self) -> u64 {
        self.w.interval_ps
    }

    /// Number of monitored switches.
    pub fn n_switches(&self) -> usize {
        self.w.tracks.len()
    }

    /// Record that switch `sw`'s shared buffer holds `used_bytes` bytes from `now_ps` on.
    /// O(1); allocates only when an interval closes. Out-of-range `sw` is ignored; a time earlier
    /// than the open interval counts towards the open interval.
    #[inline]
    pub fn update(&mut self, sw: usize, now_ps: u64, used_bytes: u64) {
        self.w.update(sw, now_ps, used_bytes);
    }

    /// Close all intervals up to the end of the run at `end_ps` (ps): afterwards every switch
    /// has `max(ceil((end_ps − origin) / T), (last_update − origin) / T + 1)` watermarks, the
    /// last possibly covering a partial interval.
    pub fn finish(&mut self, end_ps: u64) {
        self.w.finish(end_ps);
    }

    /// [`Self::finish`] for a stuck run whose levels stay frozen until `end_ps` (a PFC
    /// deadlock, or no event left before the run's `stop`): the series reach the interval
    /// holding `end_ps` even after a long idle tail (elided as an idle stretch between
    /// changes is, see the module docs), so the frozen levels show up to the end.
    pub fn finish_frozen(&mut self, end_ps: u64) {
        self.w.finish_frozen(end_ps);
    }

    /// Closed-interval watermarks of switch `sw`, bytes (saturated at `u32::MAX`); element `k`
    /// covers `[origin + k·T, origin + (k+1)·T)` (origin 0 unless
    /// [`with_origin`](Self::with_origin) moved it). Empty for an unknown switch.
    pub fn series(&self, sw: usize) -> &[u32] {
        self.w.series(sw)
    }

    /// Highest occupancy switch `sw` ever reached, bytes (exact; includes the open interval).
    pub fn peak(&self, sw: usize) -> u64 {
        self.w.peak(sw)
    }

    /// Highest occupancy any switch ever reached, bytes.
    pub fn peak_all(&self) -> u64 {
        self.w.peak_all()
    }

    /// Write the series as CSV with columns `time_ns,switch,bytes` (time = interval start),
    /// time-major, atomically.
    pub fn write_csv(&self, path: &Path) -> io::Result<()> {
        let mut w = AtomicWriter::create(path)?;
        writeln!(w, "time_ns,switch,bytes")?;
        self.w
            .for_each(|t, sw, b| writeln!(w, "{},{},{b}", fmt_ns(t), self.label(sw)))?;
        w.finish()
    }

    /// Write the series as `buffer.parquet`: the columns of [`write_csv`](Self::write_csv)
    /// (`time_ns` a double, `switch` and `bytes` integers), streaming and atomically.
    pub fn write_parquet(&self, path: &Path) -> io::Result<()> {
        use super::parquet::{ColumnKind, ParquetTable, ns};
        let mut t = ParquetTable::create(
            path,
            &[
                ("time_ns", ColumnKind::Float),
                ("switch", ColumnKind::Int),
                ("bytes", ColumnKind::Int),
            ],
        )?;
        self.w.for_each(|time, sw, b| {
            t.float(0, ns(time));
            t.int(1, self.label(sw) as i64);
            t.int(2, i64::from(b));
            t.end_row()
        })?;
        t.finish()
    }

    /// The series as text lines `time_ns switch_id bytes` (time = interval start), one line per
    /// switch per interval, time-major.
    pub fn hpcc_mon_lines(&self) -> String {
        let mut buf = Vec::new();
        let _ = self
            .w
            .for_each(|t, sw, b| writeln!(buf, "{} {} {b}", fmt_ns(t), self.label(sw)));
        String::from_utf8(buf).unwrap_or_default()
    }

    /// Empirical CDF of the watermarks over all (switch, closed interval) samples: ascending
    /// distinct byte values with the fraction of samples ≤ that value (the last is 1.0).
    /// Empty when there are no samples.
    pub fn cdf_points(&self) -> Vec<(u64, f64)> {
        self.cdf_points_for(|_| true)
    }

    /// Like [`cdf_points`](Self::cdf_points) but only over switches for which `keep(sw)` is true
    /// (e.g. only ToRs).
    pub fn cdf_points_for(&self, keep: impl Fn(usize) -> bool) -> Vec<(u64, f64)> {
        let mut v: Vec<u32> = self
            .w
            .tracks
            .iter()
            .enumerate()
            .filter(|(i, _)| keep(*i))
            .flat_map(|(_, t)| t.series.iter().copied())
            .collect();
        v.sort_unstable();
        let n = v.len() as f64;
        let mut out: Vec<(u64, f64)> = Vec::new();
        for (i, &x) in v.iter().enumerate() {
            let frac = (i + 1) as f64 / n;
            match out.last_mut() {
                Some(last) if last.0 == x as u64 => last.1 = frac,
                _ => out.push((x as u64, frac)),
            }
        }
        out
    }
}

/// Watermark time series of selected switch egress ports' queue lengths (bytes), same semantics
/// as [`BufferMonitor`] (maximum within each interval, gaps filled with the carried level).
/// Each sampled `(switch, port)` pair is addressed by its key index (position in the list given
/// to [`new`](Self::new)).
#[derive(Clone, Debug)]
pub struct QueueSampler {
    w: Watermarks,
    keys: Vec<(u32, u32)>,
}

impl QueueSampler {
    /// Sample the `(switch node id, port index)` pairs in `keys` every `interval_ps` picoseconds
    /// (`0` selects the default 10 µs).
    pub fn new(keys: Vec<(u32, u32)>, interval_ps: u64) -> QueueSampler {
        QueueSampler {
            w: Watermarks::new(keys.len(), interval_ps, DEFAULT_BUFFER_INTERVAL_PS),
            keys,
        }
    }

    /// Start the series at the interval holding `first_ps` (see
    /// [`BufferMonitor::with_origin`]). Call before any update.
    pub fn with_origin(mut self, first_ps: u64) -> QueueSampler {
        self.w.set_origin(first_ps);
        self
    }

    /// Keep every interval for a merge ([`Self::merge_partitions`]). Call before any update.
    pub fn keep_idle_for_merge(&mut self) {
        self.w.keep_idle_for_merge();
    }

    /// The sampler of one run from those of its partitions (each kept for a merge), key
    /// `i`'s series from partition `owner(i)`.
    pub fn merge_partitions(
        mut parts: Vec<QueueSampler>,
        owner: impl Fn(usize) -> usize,
    ) -> QueueSampler {
        let keys = std::mem::take(&mut parts[0].keys);
        QueueSampler {
            w: Watermarks::merge(parts.into_iter().map(|p| p.w).collect(), owner),
            keys,
        }
    }

    /// Key index of `(switch, port)`, if sampled (linear search; resolve once, not per packet).
    pub fn index_of(&self, switch: u32, port: u32) -> Option<usize> {
        self.keys.iter().position(|&k| k == (switch, port))
    }

    /// The sampled `(switch, port)` pairs, by key index.
    pub fn keys(&self) -> &[(u32, u32)] {
        &self.keys
    }

    /// Interval length, picoseconds.
    pub fn interval_ps(&self) -> u64 {
        self.w.interval_ps
    }

    /// Record that the queue of key `key` holds `bytes` bytes from `now_ps` on. O(1); unknown
    /// keys are ignored.
    #[inline]
    pub fn update(&mut self, key: usize, now_ps: u64, bytes: u64) {
        self.w.update(key, now_ps, bytes);
    }

    /// Close all intervals up to `end_ps` (see [`BufferMonitor::finish`]).
    pub fn finish(&mut self, end_ps: u64) {
        self.w.finish(end_ps);
    }

    /// [`BufferMonitor::finish_frozen`] for the queue series.
    pub fn finish_frozen(&mut self, end_ps: u64) {
        self.w.finish_frozen(end_ps);
    }

    /// Closed-interval watermarks of key `key`, bytes (saturated at `u32::MAX`).
    pub fn series(&self, key: usize) -> &[u32] {
        self.w.series(key)
    }

    /// Highest queue length key `key` ever reached, bytes.
    pub fn peak(&self, key: usize) -> u64 {
        self.w.peak(key)
    }

    /// Summary of key `key`'s series for `summary.json`: its peak, and the spread of its
    /// interval watermarks over the second half of the sampled intervals (the half after the
    /// transient, for "does the queue settle?" questions).
    pub fn settle_stats(&self, key: usize) -> QueueSettle {
        let s = self.series(key);
        let tail = &s[s.len() / 2..];
        let (min, max) = tail
            .iter()
            .fold((u32::MAX, 0u32), |(lo, hi), &b| (lo.min(b), hi.max(b)));
        let sum: u64 = tail.iter().map(|&b| b as u64).sum();
        let mean = if tail.is_empty() {
            0.0
        } else {
            sum as f64 / tail.len() as f64
        };
        let (switch, port) = self.keys[key];
        QueueSettle {
            switch,
            port,
            peak_bytes: self.peak(key),
            intervals: s.len() as u64,
            second_half_min_bytes: if tail.is_empty() { 0 } else { min as u64 },
            second_half_max_bytes: max as u64,
            second_half_mean_bytes: mean,
            second_half_swing: if mean > 0.0 {
                Some((max as f64 - min as f64) / mean)
            } else {
                None
            },
        }
    }

    /// Percentiles of the interval watermarks pooled over every sampled port (all keys, all
    /// stored intervals), for `summary.json`'s `queue_percentiles`: the distribution of switch
    /// egress-queue lengths the sampled ports saw. Percentiles are the element at index
    /// `⌊n·p⌋` of the sorted samples ([`percentile`](super::stats::percentile)); all 0 when
    /// there is no sample.
    pub fn pooled_percentiles(&self) -> QueuePercentiles {
        let mut v: Vec<f64> = (0..self.keys.len())
            .flat_map(|k| self.series(k).iter().map(|&b| b as f64))
            .collect();
        v.sort_unstable_by(f64::total_cmp);
        let pct = |p: f64| {
            if v.is_empty() {
                0
            } else {
                super::stats::percentile(&v, p) as u64
            }
        };
        QueuePercentiles {
            samples: v.len() as u64,
            p50_bytes: pct(0.50),
            p95_bytes: pct(0.95),
            p99_bytes: pct(0.99),
            max_bytes: v.last().map_or(0, |&b| b as u64),
        }
    }

    /// All samples as `(interval start ns, switch, port, bytes)` rows, time-major then by key.
    /// The start time is truncated to whole nanoseconds.
    pub fn rows(&self) -> Vec<(u64, u32, u32, u64)> {
        let mut out = Vec::new();
        let _ = self.w.for_each(|t, k, b| {
            let (sw, port) = self.keys[k];
            out.push((t / 1000, sw, port, b as u64));
            Ok(())
        });
        out
    }

    /// Write the samples as CSV with columns `time_ns,switch,port,bytes` (time = interval
    /// start), atomically.
    pub fn write_csv(&self, path: &Path) -> io::Result<()> {
        let mut w = AtomicWriter::create(path)?;
        writeln!(w, "time_ns,switch,port,bytes")?;
        self.w.for_each(|t, k, b| {
            let (sw, port) = self.keys[k];
            writeln!(w, "{},{sw},{port},{b}", fmt_ns(t))
        })?;
        w.finish()
    }

    /// Write the samples as `queues.parquet`: the columns of [`write_csv`](Self::write_csv)
    /// (`time_ns` a double, the others integers), streaming and atomically.
    pub fn write_parquet(&self, path: &Path) -> io::Result<()> {
        use super::parquet::{ColumnKind, ParquetTable, ns};
        let mut t = ParquetTable::create(
            path,
            &[
                ("time_ns", ColumnKind::Float),
                ("switch", ColumnKind::Int),
                ("port", ColumnKind::Int),
                ("bytes", ColumnKind::Int),
            ],
        )?;
        self.w.for_each(|time, k, b| {
            let (sw, port) = self.keys[k];
            t.float(0, ns(time));
            t.int(1, i64::from(sw));
            t.int(2, i64::from(port));
            t.int(3, i64::from(b));
            t.end_row()
        })?;
        t.finish()
    }
}

/// How one sampled queue behaved ([`QueueSampler::settle_stats`]): written per monitored port
/// as `summary.json`'s `queues` array.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct QueueSettle {
    /// Switch node id of the sampled port.
    pub switch: u32,
    /// Port index on that switch.
    pub port: u32,
    /// Highest queue length ever reached, bytes.
    pub peak_bytes: u64,
    /// Closed sampling intervals in the series.
    pub intervals: u64,
    /// Smallest interval watermark over the second half of the intervals, bytes.
    pub second_half_min_bytes: u64,
    /// Largest interval watermark over the second half, bytes.
    pub second_half_max_bytes: u64,
    /// Mean interval watermark over the second half, bytes.
    pub second_half_mean_bytes: f64,
    /// (max − min) / mean over the second half: near 0 for a queue that settled, ≥ 1 for one
    /// that keeps oscillating; `None` when the queue was empty throughout that half.
    pub second_half_swing: Option<f64>,
}

/// Percentiles of the sampled queue lengths pooled over all monitored ports
/// ([`QueueSampler::pooled_percentiles`]): written as `summary.json`'s `queue_percentiles`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct QueuePercentiles {
    /// Samples pooled: (monitored port, stored interval) pairs.
    pub samples: u64,
    /// Median interval watermark, bytes.
    pub p50_bytes: u64,
    /// 95th-percentile interval watermark, bytes.
    pub p95_bytes: u64,
    /// 99th-percentile interval watermark, bytes.
    pub p99_bytes: u64,
    /// Largest interval watermark, bytes.
    pub max_bytes: u64,
}

/// Payload bytes delivered to one receiver, per interval in which it received anything.
#[derive(Clone, Debug, Default)]
struct HostTput {
    /// Index of the open interval.
    open_idx: u64,
    /// Bytes in the open interval.
    open_bytes: u64,
    /// Closed non-empty intervals: (index, bytes).
    closed: Vec<(u64, u64)>,
}

/// Per-receiver goodput meter: payload bytes delivered to each host per interval (default
/// [`DEFAULT_THROUGHPUT_INTERVAL_PS`] = 100 µs). Only intervals in which a host received
/// something are stored (16 bytes each).
#[derive(Clone, Debug)]
pub struct ThroughputMeter {
    interval_ps: u64,
    hosts: Vec<HostTput>,
    end_ps: Option<u64>,
}

impl ThroughputMeter {
    /// Meter `n_hosts` receivers (indices `0..n_hosts`) with intervals of `interval_ps`
    /// picoseconds (`0` selects the default 100 µs).
    pub fn new(n_hosts: usize, interval_ps: u64) -> ThroughputMeter {
        let interval_ps = if interval_ps == 0 {
            DEFAULT_THROUGHPUT_INTERVAL_PS
        } else {
            interval_ps
        };
        ThroughputMeter {
            interval_ps,
            hosts: vec![HostTput::default(); n_hosts],
            end_ps: None,
        }
    }

    /// Interval length, picoseconds.
    pub fn interval_ps(&self) -> u64 {
        self.interval_ps
    }

    /// Record `bytes` payload bytes delivered to host `host_idx` at `now_ps`. O(1) amortized;
    /// out-of-range hosts are ignored.
    #[inline]
    pub fn record(&mut self, host_idx: usize, now_ps: u64, bytes: u64) {
        let Some(h) = self.hosts.get_mut(host_idx) else {
            return;
        };
        let idx = now_ps / self.interval_ps;
        if idx != h.open_idx {
            if h.open_bytes > 0 {
                h.closed.push((h.open_idx, h.open_bytes));
            }
            h.open_idx = idx;
            h.open_bytes = 0;
        }
        h.open_bytes = h.open_bytes.saturating_add(bytes);
    }

    /// Add `other`'s records (the same hosts metered in another partition of a run split
    /// over threads): per host, the bytes of each interval summed, as one meter recording
    /// both would hold them.
    pub fn merge(&mut self, other: &ThroughputMeter) {
        for (a, b) in self.hosts.iter_mut().zip(&other.hosts) {
            if b.closed.is_empty() && b.open_bytes == 0 {
                continue;
            }
            let mut all: Vec<(u64, u64)> = Self::intervals(a).chain(Self::intervals(b)).collect();
            all.sort_by_key(|&(i, _)| i);
            let mut merged: Vec<(u64, u64)> = Vec::with_capacity(all.len());
            for (i, bytes) in all {
                match merged.last_mut() {
                    Some(l) if l.0 == i => l.1 = l.1.saturating_add(bytes),
                    _ => merged.push((i, bytes)),
                }
            }
            let (open_idx, open_bytes) = merged.pop().unwrap_or((0, 0));
            *a = HostTput {
                open_idx,
                open_bytes,
                closed: merged,
            };
        }
    }

    /// Declare the end of the run at `end_ps`: an interval cut short by the end is measured
    /// over its covered part only. Without `finish` every interval counts as full length.
    pub fn finish(&mut self, end_ps: u64) {
        self.end_ps = Some(end_ps);
    }

    /// Covered duration of interval `idx`, seconds.
    fn duration_s(&self, idx: u64) -> f64 {
        let start = idx.saturating_mul(self.interval_ps);
        let mut end = start.saturating_add(self.interval_ps);
        if let Some(e) = self.end_ps
            && e > start
        {
            end = end.min(e);
        }
        (end - start) as f64 * 1e-12
    }

    /// Non-empty intervals of host `h`: (index, bytes).
    fn intervals(h: &HostTput) -> impl Iterator<Item = (u64, u64)> + '_ {
        let open = (h.open_bytes > 0).then_some((h.open_idx, h.open_bytes));
        h.closed.iter().copied().chain(open)
    }

    /// Throughput of every (host, interval) in which that host received anything, Gb/s
    /// (payload bits / interval length / 10^9), host-major then time order.
    pub fn samples_gbps(&self) -> Vec<f64> {
        self.hosts
            .iter()
            .flat_map(|h| {
                Self::intervals(h).map(|(i, b)| b as f64 * 8.0 / self.duration_s(i) / 1e9)
            })
            .collect()
    }

    /// Every (host index, interval start ps, Gb/s) in which that host received anything, in
    /// the order of [`ThroughputMeter::samples_gbps`] (host-major, then time).
    pub fn rows(&self) -> Vec<(usize, u64, f64)> {
        self.rows_iter().collect()
    }

    /// The rows of [`rows`](Self::rows), one at a time.
    pub fn rows_iter(&self) -> impl Iterator<Item = (usize, u64, f64)> + '_ {
        self.hosts.iter().enumerate().flat_map(move |(h, t)| {
            Self::intervals(t).map(move |(i, b)| {
                (
                    h,
                    i.saturating_mul(self.interval_ps),
                    b as f64 * 8.0 / self.duration_s(i) / 1e9,
                )
            })
        })
    }

    /// Mean throughput of each host over the intervals in which it received anything, Gb/s
    /// (total payload bits / total duration of those intervals); 0 for a host that received
    /// nothing.
    pub fn per_host_mean_gbps(&self) -> Vec<f64> {
        self.hosts
            .iter()
            .map(|h| {
                let (bytes, secs) = Self::intervals(h).fold((0u64, 0f64), |(b, s), (i, x)| {
                    (b.saturating_add(x), s + self.duration_s(i))
                });
                if secs > 0.0 {
                    bytes as f64 * 8.0 / secs / 1e9
                } else {
                    0.0
                }
            })
            .collect()
    }

    /// Payload bytes metered for host `host_idx` in interval `idx` (0 if none).
    pub fn bytes_in(&self, host_idx: usize, idx: u64) -> u64 {
        let Some(h) = self.hosts.get(host_idx) else {
            return 0;
        };
        if h.open_bytes > 0 && h.open_idx == idx {
            return h.open_bytes;
        }
        h.closed
            .binary_search_by_key(&idx, |&(i, _)| i)
            .map_or(0, |k| h.closed[k].1)
    }

    /// Total payload bytes delivered to host `host_idx` (0 for an unknown host).
    pub fn total_bytes(&self, host_idx: usize) -> u64 {
        self.hosts.get(host_idx).map_or(0, |h| {
            Self::intervals(h).fold(0u64, |a, (_, b)| a.saturating_add(b))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The watermarks of a run split over partitions (each keeping its own tracks, without
    /// idle elision) merge into exactly one run's: two tracks, 1 ns intervals, with two idle
    /// stretches longer than `IDLE_SKIP_INTERVALS` + 1 intervals (one crossed by track 1
    /// only, the next by track 0 only), and a track idle across each.
    #[test]
    fn split_watermarks_merge_into_one_runs_with_its_elided_stretches() {
        const NS: u64 = 1_000;
        let updates: [(usize, u64, u64); 7] = [
            (0, 100, 5),
            (0, 500, 7),
            (1, 1_700, 9),
            (0, 2_500, 3),
            (1, 1_500_000, 4),
            (1, 1_500_500, 1),
            (0, 3_000_000, 8),
        ];
        let end = 3_100_000;
        let mut one = BufferMonitor::new(2, NS).with_node_ids(vec![10, 11]);
        for &(i, t, b) in &updates {
            one.update(i, t, b);
        }
        one.finish(end);
        let mut parts: Vec<BufferMonitor> = (0..2)
            .map(|_| {
                let mut m = BufferMonitor::new(2, NS).with_node_ids(vec![10, 11]);
                m.keep_idle_for_merge();
                m
            })
            .collect();
        for &(i, t, b) in &updates {
            parts[i].update(i, t, b);
        }
        let mut merged = BufferMonitor::merge_partitions(parts, |i| i);
        merged.finish(end);
        // Two stretches elided. Updates fall in intervals 0, 1, 2, 1500 and 3000; after the
        // last update before a gap, one interval at the settled level is kept: 3, then
        // 4..1499 (1,496) skipped (stored interval 4 is 1500); 1501, then 1502..2999 (1,498)
        // skipped (stored interval 6 is 3000). Of the 3,100 intervals up to the end,
        // 3,100 − 1,496 − 1,498 = 106 remain.
        assert_eq!(one.w.skips, [(4, 1_496), (6, 1_498)]);
        assert_eq!(one.series(0).len(), 106);
        for i in 0..2 {
            assert_eq!(merged.series(i), one.series(i), "track {i}");
            assert_eq!(merged.peak(i), one.peak(i), "track {i}");
        }
        assert_eq!(merged.w.skips, one.w.skips);
        let dir = std::env::temp_dir();
        let (a, b) = (
            dir.join(format!("sfc-wm-one-{}.csv", std::process::id())),
            dir.join(format!("sfc-wm-merged-{}.csv", std::process::id())),
        );
        one.write_csv(&a).unwrap();
        merged.write_csv(&b).unwrap();
        let (x, y) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        let _ = (std::fs::remove_file(&a), std::fs::remove_file(&b));
        assert_eq!(x, y);
    }

    #[test]
    fn split_throughput_meters_merge_into_one_meters_rows() {
        // Host 0's deliveries recorded in two partitions (two senders' receivers): per
        // interval the bytes add up, as one meter would have them.
        let iv = 100;
        let mut one = ThroughputMeter::new(2, iv);
        let (mut a, mut b) = (ThroughputMeter::new(2, iv), ThroughputMeter::new(2, iv));
        for &(part, host, t, bytes) in &[
            (0, 0, 10, 5),
            (1, 0, 20, 7),
            (1, 0, 150, 1),
            (0, 1, 160, 2),
            (0, 0, 420, 3),
            (1, 0, 430, 4),
        ] {
            one.record(host, t, bytes);
            if part == 0 {
                a.record(host, t, bytes);
            } else {
                b.record(host, t, bytes);
            }
        }
        a.merge(&b);
        one.finish(500);
        a.finish(500);
        assert_eq!(a.rows(), one.rows());
    }

    #[test]
    fn step_pattern_watermarks() {
        let mut m = BufferMonitor::new(2, 10 * US);
        m.update(0, 0, 0);
        m.update(0, 3 * US, 5000);
        m.update(0, 12 * US, 2000);
        m.finish(45 * US);
        assert_eq!(m.series(0), &[5000, 5000, 2000, 2000, 2000]);
        // The untouched switch gets the same number of (zero) intervals.
        assert_eq!(m.series(1), &[0, 0, 0, 0, 0]);
        assert_eq!(m.peak(0), 5000);
        assert_eq!(m.peak_all(), 5000);
        assert!(m.series(9).is_empty());
        m.update(9, 0, 1); // ignored
    }

    #[test]
    fn origin_skips_the_idle_lead() {
        // First flow at 1 s + 25 µs, 10 µs intervals: interval 0 starts at 1 s + 20 µs; the
        // 100 002 idle intervals before it are not stored.
        let first = crate::units::SEC + 25 * US;
        let mut m = BufferMonitor::new(1, 10 * US).with_origin(first);
        assert_eq!(m.origin_ps(), crate::units::SEC + 20 * US);
        m.update(0, first, 4000);
        m.update(0, first + 10 * US, 1000); // 1 s + 35 µs: interval 1
        m.finish(first + 20 * US); // 1 s + 45 µs: ceil(25 µs / 10 µs) = 3 intervals
        assert_eq!(m.series(0), &[4000, 4000, 1000]);
        let lines = m.hpcc_mon_lines();
        assert_eq!(lines.lines().next(), Some("1000020000 0 4000"));
        assert_eq!(lines.lines().last(), Some("1000040000 0 1000"));
        let mut q = QueueSampler::new(vec![(5, 1)], 10 * US).with_origin(first);
        q.update(0, first, 7);
        q.finish(first + 1);
        assert_eq!(q.rows(), vec![(1_000_020_000, 5, 1, 7)]);
    }

    #[test]
    fn idle_stretch_is_elided() {
        // Interval 10 µs. Switch 0: 5 B at 3 µs, 0 B at 15 µs, then 7 B at 1 s (100 000
        // intervals later): by hand, stored intervals are [0,10) max 5, [10,20) max 5 (level
        // 5 until 15 µs), [20,30) settled at 0, then the interval holding 1 s with 7.
        let mut m = BufferMonitor::new(2, 10 * US);
        m.update(0, 3 * US, 5);
        m.update(0, 15 * US, 0);
        m.update(1, 1_000_000 * US + 2 * US, 7);
        m.finish(1_000_000 * US + 4 * US);
        assert_eq!(m.series(0), &[5, 5, 0, 0]);
        assert_eq!(m.series(1), &[0, 0, 0, 7]);
        let lines = m.hpcc_mon_lines();
        let times: Vec<&str> = lines
            .lines()
            .filter(|l| l.ends_with(" 1 7") || l.contains(" 1 0"))
            .map(|l| l.split(' ').next().unwrap())
            .collect();
        assert_eq!(times, ["0", "10000", "20000", "1000000000"]);
        // A long idle tail keeps one settled interval.
        let mut m = BufferMonitor::new(1, 10 * US);
        m.update(0, 3 * US, 5);
        m.finish(1_000_000 * US);
        assert_eq!(m.series(0), &[5, 5]);
        // Short gaps are not elided: 500 intervals of silence stay on the grid.
        let mut m = BufferMonitor::new(1, 10 * US);
        m.update(0, 3 * US, 5);
        m.update(0, 5000 * US + 1, 6);
        m.finish(5000 * US + 2);
        assert_eq!(m.series(0).len(), 501);
    }

    #[test]
    fn frozen_tail_keeps_the_end() {
        // Switch 0 frozen at 5 B from 3 µs until the end at 1 s: the tail is elided (as a
        // stretch between changes is) but the interval holding the end is kept, at 5 B.
        let mut m = BufferMonitor::new(2, 10 * US);
        m.update(0, 3 * US, 5);
        m.update(1, 4 * US, 2);
        m.finish_frozen(1_000_000 * US);
        assert_eq!(m.series(0), &[5, 5, 5]);
        assert_eq!(m.series(1), &[2, 2, 2]);
        let lines = m.hpcc_mon_lines();
        let last: Vec<&str> = lines.lines().rev().take(2).collect();
        assert_eq!(last, ["999990000 1 2", "999990000 0 5"]);
        // A short tail: as `finish`.
        let (mut a, mut b) = (
            BufferMonitor::new(1, 10 * US),
            BufferMonitor::new(1, 10 * US),
        );
        for m in [&mut a, &mut b] {
            m.update(0, 3 * US, 5);
        }
        a.finish(500 * US);
        b.finish_frozen(500 * US);
        assert_eq!(a.series(0), b.series(0));
        assert_eq!(a.series(0).len(), 50);
    }

    #[test]
    fn watermark_is_max_not_last() {
        let mut m = BufferMonitor::new(1, 0);
        assert_eq!(m.interval_ps(), DEFAULT_BUFFER_INTERVAL_PS);
        m.update(0, US, 9000);
        m.update(0, 2 * US, 100);
        m.update(0, 10 * US, 50); // exactly at the boundary: new interval
        m.update(0, 35 * US, 7000);
        assert_eq!(m.series(0), &[9000, 100, 50]);
        assert_eq!(m.peak(0), 9000);
        m.finish(30 * US); // the update at 35 µs forces a 4th interval
        assert_eq!(m.series(0), &[9000, 100, 50, 7000]);
        m.finish(40 * US); // idempotent
        assert_eq!(m.series(0).len(), 4);
        // Saturation instead of wrap.
        let mut b = BufferMonitor::new(1, 10);
        b.update(0, 0, u64::MAX);
        b.finish(10);
        assert_eq!(b.series(0), &[u32::MAX]);
        assert_eq!(b.peak(0), u64::MAX);
    }

    #[test]
    fn outputs_and_cdf() {
        let mut m = BufferMonitor::new(2, 10 * US).with_node_ids(vec![320, 321]);
        m.update(0, 3 * US, 5000);
        m.update(1, 5 * US, 1000);
        m.update(0, 12 * US, 2000);
        m.finish(20 * US);
        assert_eq!(
            m.hpcc_mon_lines(),
            "0 320 5000\n0 321 1000\n10000 320 5000\n10000 321 1000\n"
        );
        // Samples {5000, 1000, 5000, 1000}.
        assert_eq!(m.cdf_points(), vec![(1000, 0.5), (5000, 1.0)]);
        assert_eq!(m.cdf_points_for(|sw| sw == 0), vec![(5000, 1.0)]);
        assert!(m.cdf_points_for(|_| false).is_empty());
        assert_eq!(m.cdf_points().last().unwrap().1, 1.0);

        let d = std::env::temp_dir().join(format!("sfc-buffer-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("buf.csv");
        m.write_csv(&p).unwrap();
        let s = std::fs::read_to_string(&p).unwrap();
        assert_eq!(s.lines().next(), Some("time_ns,switch,bytes"));
        assert_eq!(s.lines().count(), 5);
        assert_eq!(s.lines().nth(3), Some("10000,320,5000"));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn cdf_ends_at_one_many_samples() {
        let mut m = BufferMonitor::new(3, 1000);
        for t in 0..1000u64 {
            m.update((t % 3) as usize, t * 7, (t * 37) % 1001);
        }
        m.finish(7000);
        let c = m.cdf_points();
        assert_eq!(c.last().unwrap().1, 1.0);
        assert!(c.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
    }

    #[test]
    fn queue_sampler() {
        let mut q = QueueSampler::new(vec![(320, 1), (321, 4)], 10 * US);
        let k = q.index_of(321, 4).unwrap();
        assert_eq!(k, 1);
        assert_eq!(q.index_of(1, 1), None);
        q.update(k, 3 * US, 5000);
        q.update(k, 12 * US, 2000);
        q.update(7, 12 * US, 2000); // ignored
        q.finish(25 * US);
        assert_eq!(q.series(1), &[5000, 5000, 2000]);
        assert_eq!(q.series(0), &[0, 0, 0]);
        let rows = q.rows();
        assert_eq!(rows.len(), 6);
        assert_eq!(rows[1], (0, 321, 4, 5000));
        assert_eq!(rows[5], (20_000, 321, 4, 2000));
        assert_eq!(q.peak(1), 5000);
        // Series [5000, 5000, 2000]: the second half is intervals 1..3 = [5000, 2000].
        let st = q.settle_stats(1);
        assert_eq!(st.peak_bytes, 5000);
        assert_eq!(st.intervals, 3);
        assert_eq!(
            (st.second_half_min_bytes, st.second_half_max_bytes),
            (2000, 5000)
        );
        assert_eq!(st.second_half_mean_bytes, 3500.0);
        assert_eq!(st.second_half_swing, Some(3000.0 / 3500.0));
        // An empty queue has no swing.
        assert_eq!(q.settle_stats(0).second_half_swing, None);
    }

    #[test]
    fn queue_percentiles_pooled() {
        // Two ports, 1 µs intervals. Port 0 holds 0..=9 KB (one level per interval), port 1
        // holds 10..=19 KB: 20 samples 0, 1000, …, 19 000 bytes pooled.
        let mut q = QueueSampler::new(vec![(10, 0), (10, 1)], US);
        for i in 0..10u64 {
            q.update(0, i * US, i * 1000);
            q.update(1, i * US, (10 + i) * 1000);
        }
        q.finish(10 * US);
        let p = q.pooled_percentiles();
        assert_eq!(p.samples, 20);
        // Index ⌊20·p⌋ of the sorted samples: 10 → 10 000, 19 → 19 000 (p95 and p99).
        assert_eq!(p.p50_bytes, 10_000);
        assert_eq!(p.p95_bytes, 19_000);
        assert_eq!(p.p99_bytes, 19_000);
        assert_eq!(p.max_bytes, 19_000);
        // No sample: all 0.
        let e = QueueSampler::new(vec![(10, 0)], US);
        assert_eq!(e.pooled_percentiles().samples, 0);
        assert_eq!(e.pooled_percentiles().p99_bytes, 0);
    }

    #[test]
    fn throughput() {
        let mut t = ThroughputMeter::new(3, 0);
        assert_eq!(t.interval_ps(), 100 * US);
        // 12 500 B in one 100 µs interval = 1 Gb/s (delivered in pieces).
        for i in 0..10u64 {
            t.record(0, 200 * US + i * 10 * US, 1250);
        }
        // Host 1: 25 000 B in interval 0 and 12 500 B in interval 5.
        t.record(1, 0, 25_000);
        t.record(1, 550 * US, 12_500);
        t.record(5, 0, 1); // ignored
        let s = t.samples_gbps();
        assert_eq!(s.len(), 3);
        assert!((s[0] - 1.0).abs() < 1e-12, "{s:?}");
        assert!((s[1] - 2.0).abs() < 1e-12);
        assert!((s[2] - 1.0).abs() < 1e-12);
        let m = t.per_host_mean_gbps();
        assert!((m[0] - 1.0).abs() < 1e-12);
        assert!((m[1] - 1.5).abs() < 1e-12);
        assert_eq!(m[2], 0.0);
        assert_eq!(t.total_bytes(1), 37_500);
        // End of run halfway through interval 5: host 1's last sample counts over 50 µs.
        t.finish(550 * US);
        let s = t.samples_gbps();
        assert!((s[2] - 2.0).abs() < 1e-12, "{s:?}");
    }
}
