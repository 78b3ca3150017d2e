//! Flow records spilled to disk, and run statistics computed from the spill with bounded memory.
//!
//! A run of tens of millions of flows cannot keep one [`FlowRecord`] per flow in memory. The
//! simulator instead appends each record, when its flow completes, to a [`RecordSpill`]: an
//! append-only temp file of fixed-size (69 B) little-endian records, in completion order. At the
//! end of the run:
//!
//! * [`stats_from_spill`] computes the run's [`RunStats`] — bit for bit what
//!   [`RunStats::compute`] (+ [`RunStats::with_dport_breakdown`], [`RunStats::with_dport_bins`])
//!   gives over the same records sorted by id;
//! * [`records_by_id`] streams the records in ascending id order (for `flows.csv`).
//!
//! # Algorithm
//!
//! Both rest on a private external merge sort (`ExtSort`): items are buffered up to a budget;
//! a full buffer is sorted (by a total order, so the output is deterministic) and written as a
//! sorted *run* to a temp file next to the spill (`<spill>.run-<pid>-<seq>`); at the end the runs
//! are merged by a k-way merge (a binary heap over one buffered reader per run). At most
//! 128 runs are merged at once: when there are more, some are first merged into longer runs
//! (first just enough of them that the rest can go in full merges of 128). A sort that never fills its buffer writes no file. Temp files are removed as soon as
//! they are merged and when their owner is dropped (also on errors).
//!
//! Every statistic of [`RunStats`] is a [`Percentiles`] of one *group* of values (all slowdowns,
//! all FCTs, the slowdowns of one size bin, of one port, of one port's size bin, ...). The
//! in-memory code sorts each group's values and takes the elements at indices
//! `floor(n·p)`, the last element, and the sum in ascending order. Here:
//!
//! 1. one pass over the spill counts flows (total, completed, per port) and pushes one
//!    `(group, value)` pair per value into a *value sort*. Size bins given by edges are known
//!    from each flow's size alone. Equal-count bins depend on a flow's rank by `(size, id)`
//!    among the completed flows (of its port, for per-port bins), so the completed flows are
//!    pushed instead into a *size sort* by `(port, size, id)` carrying their slowdown and FCT;
//! 2. the size sorts are read back in order: the flow of rank `r` of `n` falls into bin
//!    `i = floor(((r + 1)·k − 1) / n)` of `k`, the unique `i` with
//!    `floor(i·n/k) ≤ r < floor((i+1)·n/k)` (HPCC's cut, u128 arithmetic). The bin's lo/hi sizes
//!    are its first and last flow's size, and its values go into the value sort;
//! 3. the value sort is read back: groups arrive one after another, each in ascending
//!    ([`f64::total_cmp`]) order, and the number `n` of values of each group is known from the
//!    pushes, so a streaming summary picks the elements at the percentile indices, keeps the last,
//!    and sums the values in the same ascending order with the same `Iterator::sum` as
//!    [`Percentiles::from_sorted`] — equal values commute, so the sum is bit-identical.
//!
//! # Memory
//!
//! The sorts alive at one time buffer at most `budget_items` items together (at least one item
//! per sort; a value item is 16 B in memory, a size item 32 B, a record 80 B), plus, while
//! merging, at most 128 run readers and one writer with 64 KB buffers (about 8 MB), plus
//! O(number of groups): one count and one [`Percentiles`] per group
//! (2 + 2 per size bin + 1 per port + 2 per port size bin). Nothing grows with the number of
//! records. The temp files hold 12 B per value (up to 7 values per completed flow) and 30 B per
//! completed flow per size sort; [`records_by_id`] writes 69 B per record.

use super::FlowRecord;
use super::stats::{BinStats, DportStats, Percentiles, RunStats, SizeBins, fct_us};
use std::cmp::{Ordering, Reverse};
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};

/// Buffer size of every file reader and writer.
const IO_BUF: usize = 64 * 1024;
/// Most runs merged at once (open files and reader buffers during a merge).
const FAN_IN: usize = 128;
/// Bytes of one encoded [`FlowRecord`].
const RECORD_SIZE: usize = 69;

/// Distinguishes the temp files (runs) of one process.
static RUN_SEQ: AtomicU64 = AtomicU64::new(0);

fn invalid_data(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.to_string())
}

// ---------------------------------------------------------------------------------------------
// Fixed-size little-endian encoding
// ---------------------------------------------------------------------------------------------

/// A type with a fixed-size binary encoding of [`Fixed::SIZE`] bytes.
trait Fixed: Sized {
    /// Bytes of one encoded item.
    const SIZE: usize;
    /// Write the item into `out` (exactly `SIZE` bytes).
    fn encode(&self, out: &mut [u8]);
    /// Read an item back from `b` (exactly `SIZE` bytes).
    fn decode(b: &[u8]) -> io::Result<Self>;
}

/// Little-endian writer over a byte slice.
struct Enc<'a> {
    b: &'a mut [u8],
    at: usize,
}

impl Enc<'_> {
    fn put(&mut self, bytes: &[u8]) {
        self.b[self.at..self.at + bytes.len()].copy_from_slice(bytes);
        self.at += bytes.len();
    }
    fn u8(&mut self, x: u8) {
        self.put(&[x]);
    }
    fn u16(&mut self, x: u16) {
        self.put(&x.to_le_bytes());
    }
    fn u32(&mut self, x: u32) {
        self.put(&x.to_le_bytes());
    }
    fn u64(&mut self, x: u64) {
        self.put(&x.to_le_bytes());
    }
    fn f64(&mut self, x: f64) {
        self.u64(x.to_bits());
    }
}

/// Little-endian reader over a byte slice.
struct Dec<'a> {
    b: &'a [u8],
    at: usize,
}

impl Dec<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut a = [0u8; N];
        a.copy_from_slice(&self.b[self.at..self.at + N]);
        self.at += N;
        a
    }
    fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.take())
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
    fn f64(&mut self) -> f64 {
        f64::from_bits(self.u64())
    }
}

/// Layout (offsets in bytes): id u32 @0, src u32 @4, dst u32 @8, sport u16 @12, dport u16 @14,
/// size_bytes u64 @16, start_ps u64 @24, fct flag u8 @32 (0 = `None`, 1 = `Some`), fct_ps u64 @33
/// (0 when `None`), ideal_fct_ps u64 @41, retx_packets u64 @49, pauses u32 @57, paused_ps u64 @61.
impl Fixed for FlowRecord {
    const SIZE: usize = RECORD_SIZE;
    fn encode(&self, out: &mut [u8]) {
        let mut e = Enc { b: out, at: 0 };
        e.u32(self.id);
        e.u32(self.src);
        e.u32(self.dst);
        e.u16(self.sport);
        e.u16(self.dport);
        e.u64(self.size_bytes);
        e.u64(self.start_ps);
        e.u8(self.fct_ps.is_some() as u8);
        e.u64(self.fct_ps.unwrap_or(0));
        e.u64(self.ideal_fct_ps);
        e.u64(self.retx_packets);
        e.u32(self.pauses);
        e.u64(self.paused_ps);
        debug_assert_eq!(e.at, Self::SIZE);
    }
    fn decode(b: &[u8]) -> io::Result<Self> {
        let mut d = Dec { b, at: 0 };
        let (id, src, dst, sport, dport) = (d.u32(), d.u32(), d.u32(), d.u16(), d.u16());
        let (size_bytes, start_ps) = (d.u64(), d.u64());
        let fct_ps = match (d.u8(), d.u64()) {
            (0, _) => None,
            (1, f) => Some(f),
            _ => return Err(invalid_data("corrupt flow record (bad fct flag)")),
        };
        Ok(FlowRecord {
            id,
            src,
            dst,
            sport,
            dport,
            size_bytes,
            start_ps,
            fct_ps,
            ideal_fct_ps: d.u64(),
            retx_packets: d.u64(),
            pauses: d.u32(),
            paused_ps: d.u64(),
        })
    }
}

/// Read one item of `T::SIZE` bytes (`scratch` is `T::SIZE` long).
fn read_item<T: Fixed>(r: &mut impl Read, scratch: &mut [u8]) -> io::Result<T> {
    r.read_exact(scratch)?;
    T::decode(scratch)
}

// ---------------------------------------------------------------------------------------------
// The record spill
// ---------------------------------------------------------------------------------------------

/// An append-only temp file of [`FlowRecord`]s (the records of completed — or, at the end of a
/// run, unfinished — flows, in the order they were pushed), 69 B per record in a fixed
/// little-endian layout that keeps every field losslessly. The file is removed when the spill is
/// dropped. Statistics and sorted output come from [`stats_from_spill`] and [`records_by_id`],
/// whose temp files go into the same directory.
#[derive(Debug)]
pub struct RecordSpill {
    path: PathBuf,
    /// `None` only while dropping.
    writer: Option<BufWriter<File>>,
    len: u64,
    /// A push failed midway: the file may hold a partial record.
    poisoned: bool,
}

impl RecordSpill {
    /// Create (or truncate) the spill file at `path`, with a 64 KB write buffer.
    pub fn create(path: &Path) -> io::Result<RecordSpill> {
        let file = File::create(path)?;
        // Removed on Ctrl-C too (`runguard`'s interrupt handler).
        crate::process::register_temp(path);
        Ok(RecordSpill {
            path: path.to_path_buf(),
            writer: Some(BufWriter::with_capacity(IO_BUF, file)),
            len: 0,
            poisoned: false,
        })
    }

    /// The spill file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Number of records pushed.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether no record was pushed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn writer(&mut self) -> io::Result<&mut BufWriter<File>> {
        if self.poisoned {
            return Err(io::Error::other(
                "record spill unusable after an earlier write error",
            ));
        }
        self.writer
            .as_mut()
            .ok_or_else(|| io::Error::other("record spill closed"))
    }

    /// Append one record. After an error the spill is unusable (every later call fails).
    pub fn push(&mut self, r: &FlowRecord) -> io::Result<()> {
        let mut b = [0u8; RECORD_SIZE];
        r.encode(&mut b);
        let res = self.writer()?.write_all(&b);
        match res {
            Ok(()) => {
                self.len += 1;
                Ok(())
            }
            Err(e) => {
                self.poisoned = true;
                Err(e)
            }
        }
    }

    /// Flush, then read all records pushed so far, in push order, through a new 64 KB buffered
    /// reader. Can be called any number of times; records pushed after the call are not seen by
    /// the returned reader.
    pub fn read(&mut self) -> io::Result<SpillReader> {
        self.writer()?.flush()?;
        let file = File::open(&self.path)?;
        Ok(SpillReader {
            r: BufReader::with_capacity(IO_BUF, file),
            left: self.len,
            failed: false,
        })
    }
}

impl Drop for RecordSpill {
    fn drop(&mut self) {
        // Close without flushing (the data is thrown away), then remove the file.
        if let Some(w) = self.writer.take() {
            drop(w.into_parts());
        }
        let _ = fs::remove_file(&self.path);
        crate::process::unregister_temp(&self.path);
    }
}

/// Iterator over the records of a [`RecordSpill`] in push order ([`RecordSpill::read`]); yields
/// exactly [`RecordSpill::len`] records (as of the call), or stops after the first error.
#[derive(Debug)]
pub struct SpillReader {
    r: BufReader<File>,
    left: u64,
    failed: bool,
}

impl Iterator for SpillReader {
    type Item = io::Result<FlowRecord>;
    fn next(&mut self) -> Option<io::Result<FlowRecord>> {
        if self.left == 0 || self.failed {
            return None;
        }
        self.left -= 1;
        let mut b = [0u8; RECORD_SIZE];
        let r = read_item(&mut self.r, &mut b);
        self.failed = r.is_err();
        Some(r)
    }
}

// ---------------------------------------------------------------------------------------------
// External merge sort
// ---------------------------------------------------------------------------------------------

/// A sorted run in a temp file, removed on drop.
struct Run {
    path: PathBuf,
    len: u64,
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
        crate::process::unregister_temp(&self.path);
    }
}

/// Write `items` (ascending) as a new run next to `base`.
fn write_run<T: Fixed>(base: &Path, items: impl Iterator<Item = io::Result<T>>) -> io::Result<Run> {
    let seq = RUN_SEQ.fetch_add(1, AtomicOrdering::Relaxed);
    let mut name = base.as_os_str().to_owned();
    name.push(format!(".run-{}-{seq}", std::process::id()));
    let path = PathBuf::from(name);
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)?;
    // From here on, dropping `run` (also on error) removes the file; Ctrl-C too.
    crate::process::register_temp(&path);
    let mut run = Run { path, len: 0 };
    let mut w = BufWriter::with_capacity(IO_BUF, file);
    let mut scratch = vec![0u8; T::SIZE];
    for x in items {
        x?.encode(&mut scratch);
        w.write_all(&scratch)?;
        run.len += 1;
    }
    w.flush()?;
    Ok(run)
}

/// Reads the items of one run.
struct RunReader {
    r: BufReader<File>,
    left: u64,
    scratch: Vec<u8>,
}

impl RunReader {
    fn open<T: Fixed>(run: &Run) -> io::Result<RunReader> {
        Ok(RunReader {
            r: BufReader::with_capacity(IO_BUF, File::open(&run.path)?),
            left: run.len,
            scratch: vec![0u8; T::SIZE],
        })
    }
    fn next<T: Fixed>(&mut self) -> Option<io::Result<T>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some(read_item(&mut self.r, &mut self.scratch))
    }
}

/// K-way merge of sorted runs; ties are taken from the earlier run first.
struct Merge<T> {
    heap: BinaryHeap<Reverse<(T, usize)>>,
    readers: Vec<RunReader>,
    /// Kept to remove the files when the merge is dropped.
    _runs: Vec<Run>,
    failed: bool,
}

impl<T: Fixed + Ord> Merge<T> {
    fn open(runs: Vec<Run>) -> io::Result<Merge<T>> {
        let mut heap = BinaryHeap::with_capacity(runs.len());
        let mut readers = Vec::with_capacity(runs.len());
        for (i, run) in runs.iter().enumerate() {
            let mut r = RunReader::open::<T>(run)?;
            if let Some(x) = r.next::<T>() {
                heap.push(Reverse((x?, i)));
            }
            readers.push(r);
        }
        Ok(Merge {
            heap,
            readers,
            _runs: runs,
            failed: false,
        })
    }
}

impl<T: Fixed + Ord> Iterator for Merge<T> {
    type Item = io::Result<T>;
    fn next(&mut self) -> Option<io::Result<T>> {
        if self.failed {
            return None;
        }
        let mut top = self.heap.peek_mut()?;
        let i = top.0.1;
        match self.readers[i].next::<T>() {
            None => Some(Ok(std::collections::binary_heap::PeekMut::pop(top).0.0)),
            Some(Ok(x)) => Some(Ok(std::mem::replace(&mut top.0.0, x))),
            Some(Err(e)) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

/// The output of [`ExtSort::finish`]: items in ascending order.
enum Sorted<T> {
    /// Everything fitted in the buffer: no file was written.
    Mem(std::vec::IntoIter<T>),
    /// Merge of the runs on disk.
    Merge(Merge<T>),
}

impl<T: Fixed + Ord> Iterator for Sorted<T> {
    type Item = io::Result<T>;
    fn next(&mut self) -> Option<io::Result<T>> {
        match self {
            Sorted::Mem(it) => it.next().map(Ok),
            Sorted::Merge(m) => m.next(),
        }
    }
}

/// External merge sort of fixed-size items by their (total) [`Ord`], holding at most `budget`
/// items in memory; sorted runs go to temp files next to `base`.
struct ExtSort<T> {
    base: PathBuf,
    budget: usize,
    buf: Vec<T>,
    runs: Vec<Run>,
}

impl<T: Fixed + Ord> ExtSort<T> {
    /// A sort buffering at most `budget` (≥ 1) items, with temp files `<base>.run-<pid>-<seq>`.
    fn new(base: &Path, budget: usize) -> ExtSort<T> {
        ExtSort {
            base: base.to_path_buf(),
            budget: budget.max(1),
            buf: Vec::new(),
            runs: Vec::new(),
        }
    }

    /// Add one item; writes a sorted run when the buffer is full.
    fn push(&mut self, x: T) -> io::Result<()> {
        if self.buf.len() == self.buf.capacity() {
            // Grow by doubling, but never beyond the budget.
            let want = (self.buf.capacity().max(1024) * 2).min(self.budget);
            self.buf.reserve_exact(want - self.buf.len());
        }
        self.buf.push(x);
        if self.buf.len() >= self.budget {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> io::Result<()> {
        self.buf.sort_unstable();
        let run = write_run(&self.base, self.buf.drain(..).map(Ok))?;
        self.runs.push(run);
        Ok(())
    }

    /// All pushed items in ascending order.
    fn finish(mut self) -> io::Result<Sorted<T>> {
        if self.runs.is_empty() {
            let mut buf = std::mem::take(&mut self.buf);
            buf.sort_unstable();
            return Ok(Sorted::Mem(buf.into_iter()));
        }
        if !self.buf.is_empty() {
            self.spill()?;
        }
        self.buf = Vec::new();
        let mut runs: VecDeque<Run> = std::mem::take(&mut self.runs).into();
        while runs.len() > FAN_IN {
            // Merge first just enough runs that the rest takes full FAN_IN-way merges (each
            // merge turns m runs into 1), so as little data as possible is written twice.
            let m = match (runs.len() - 1) % (FAN_IN - 1) + 1 {
                1 => FAN_IN,
                m => m,
            };
            let group: Vec<Run> = runs.drain(..m).collect();
            let merged = write_run(&self.base, Merge::<T>::open(group)?)?;
            runs.push_back(merged);
        }
        Ok(Sorted::Merge(Merge::open(runs.into())?))
    }
}

// ---------------------------------------------------------------------------------------------
// Sort items
// ---------------------------------------------------------------------------------------------

/// The key of `v` whose unsigned order is [`f64::total_cmp`]'s order.
fn f64_key(v: f64) -> u64 {
    let b = v.to_bits();
    // Negative: flip all bits; positive: flip the sign bit.
    b ^ ((((b as i64) >> 63) as u64) | (1 << 63))
}

/// The inverse of [`f64_key`].
fn f64_from_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k ^ (1 << 63) } else { !k })
}

/// One value of one statistics group, packed as `group << 64 | f64_key(value)`: ordered by
/// group, then value ([`f64::total_cmp`]), with a plain integer comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Val(u128);

impl Val {
    fn new(group: u32, v: f64) -> Val {
        Val((group as u128) << 64 | f64_key(v) as u128)
    }
    fn group(self) -> u32 {
        (self.0 >> 64) as u32
    }
    fn value(self) -> f64 {
        f64_from_key(self.0 as u64)
    }
}

impl Fixed for Val {
    const SIZE: usize = 12;
    fn encode(&self, out: &mut [u8]) {
        let mut e = Enc { b: out, at: 0 };
        e.u32(self.group());
        e.u64(self.0 as u64);
    }
    fn decode(b: &[u8]) -> io::Result<Val> {
        let mut d = Dec { b, at: 0 };
        let (g, k) = (d.u32(), d.u64());
        Ok(Val((g as u128) << 64 | k as u128))
    }
}

/// A completed flow for equal-count binning, ordered by (port, size, id) (then by the values,
/// for a total order); `port` is 0 for the run-wide bins.
#[derive(Clone, Copy, Debug)]
struct SizeItem {
    port: u16,
    size: u64,
    id: u32,
    /// Slowdown (NaN = none).
    sd: f64,
    /// FCT, µs (NaN = none).
    fct: f64,
}

impl Ord for SizeItem {
    fn cmp(&self, o: &SizeItem) -> Ordering {
        (self.port, self.size, self.id)
            .cmp(&(o.port, o.size, o.id))
            .then_with(|| self.sd.total_cmp(&o.sd))
            .then_with(|| self.fct.total_cmp(&o.fct))
    }
}
impl PartialOrd for SizeItem {
    fn partial_cmp(&self, o: &SizeItem) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl PartialEq for SizeItem {
    fn eq(&self, o: &SizeItem) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for SizeItem {}

impl Fixed for SizeItem {
    const SIZE: usize = 30;
    fn encode(&self, out: &mut [u8]) {
        let mut e = Enc { b: out, at: 0 };
        e.u16(self.port);
        e.u64(self.size);
        e.u32(self.id);
        e.f64(self.sd);
        e.f64(self.fct);
    }
    fn decode(b: &[u8]) -> io::Result<SizeItem> {
        let mut d = Dec { b, at: 0 };
        Ok(SizeItem {
            port: d.u16(),
            size: d.u64(),
            id: d.u32(),
            sd: d.f64(),
            fct: d.f64(),
        })
    }
}

/// A record ordered by id (then by every other field, for a total order).
#[derive(Clone, Debug, PartialEq)]
struct ById(FlowRecord);

type RecordKey = (
    u32,
    u32,
    u32,
    u16,
    u16,
    u64,
    u64,
    Option<u64>,
    u64,
    u64,
    u32,
    u64,
);

impl ById {
    fn key(&self) -> RecordKey {
        let r = &self.0;
        (
            r.id,
            r.src,
            r.dst,
            r.sport,
            r.dport,
            r.size_bytes,
            r.start_ps,
            r.fct_ps,
            r.ideal_fct_ps,
            r.retx_packets,
            r.pauses,
            r.paused_ps,
        )
    }
}
impl Ord for ById {
    fn cmp(&self, o: &ById) -> Ordering {
        self.0
            .id
            .cmp(&o.0.id)
            .then_with(|| self.key().cmp(&o.key()))
    }
}
impl PartialOrd for ById {
    fn partial_cmp(&self, o: &ById) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Eq for ById {}

impl Fixed for ById {
    const SIZE: usize = RECORD_SIZE;
    fn encode(&self, out: &mut [u8]) {
        self.0.encode(out)
    }
    fn decode(b: &[u8]) -> io::Result<ById> {
        FlowRecord::decode(b).map(ById)
    }
}

// ---------------------------------------------------------------------------------------------
// Streaming percentiles
// ---------------------------------------------------------------------------------------------

/// The index [`super::stats::percentile`] picks for quantile `p` of `n ≥ 1` values (same
/// expression, same floating-point rounding).
fn percentile_index(n: usize, p: f64) -> usize {
    let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) };
    ((n as f64 * p).floor() as usize).min(n - 1)
}

/// [`Percentiles::from_sorted`] of the `n` values of `sorted` (ascending, no NaN), reading them
/// once: the same fields, bit for bit. Consumes at most `n` values; if `sorted` yields fewer the
/// result is unspecified (callers detect that case).
fn percentiles_streaming(n: usize, sorted: impl Iterator<Item = f64>) -> Percentiles {
    if n == 0 {
        return Percentiles::from_sorted(&[]);
    }
    let idx = [0.5, 0.95, 0.99, 0.999].map(|p| percentile_index(n, p));
    let mut at = [f64::NAN; 4];
    let mut last = f64::NAN;
    // The same `Sum` over the same values in the same order as `from_sorted`.
    let sum: f64 = sorted
        .take(n)
        .enumerate()
        .map(|(i, v)| {
            for (slot, &j) in at.iter_mut().zip(&idx) {
                if i == j {
                    *slot = v;
                }
            }
            last = v;
            v
        })
        .sum();
    Percentiles {
        p50: at[0],
        p95: at[1],
        p99: at[2],
        p999: at[3],
        mean: sum / n as f64,
        max: last,
        count: n,
    }
}

/// Summarise the next `n` items of `sorted`, which must all belong to `group`.
fn take_group(
    sorted: &mut impl Iterator<Item = io::Result<Val>>,
    group: u32,
    n: usize,
) -> io::Result<Percentiles> {
    let mut err = None;
    let values = (0..n).map_while(|_| match sorted.next() {
        Some(Ok(v)) if v.group() == group => Some(v.value()),
        Some(Ok(_)) | None => {
            err = Some(invalid_data("value sort out of step with its group counts"));
            None
        }
        Some(Err(e)) => {
            err = Some(e);
            None
        }
    });
    let p = percentiles_streaming(n, values);
    match err {
        Some(e) => Err(e),
        None => Ok(p),
    }
}

// ---------------------------------------------------------------------------------------------
// Statistics from the spill
// ---------------------------------------------------------------------------------------------

/// The statistics groups (by id) and the number of values pushed into each.
#[derive(Default)]
struct Groups {
    counts: Vec<usize>,
}

impl Groups {
    fn new_group(&mut self) -> io::Result<u32> {
        let g = u32::try_from(self.counts.len())
            .map_err(|_| io::Error::other("more than 2^32 statistics groups"))?;
        self.counts.push(0);
        Ok(g)
    }

    /// Add value `v` (ignored if NaN, as the in-memory statistics drop NaNs) to group `g`.
    fn add(&mut self, values: &mut ExtSort<Val>, g: u32, v: f64) -> io::Result<()> {
        if v.is_nan() {
            return Ok(());
        }
        self.counts[g as usize] += 1;
        values.push(Val::new(g, v))
    }
}

/// One size bin under construction: bounds, completed flows, and its two groups.
struct BinMeta {
    lo: u64,
    hi: u64,
    flows: usize,
    sd: u32,
    fct: u32,
}

impl BinMeta {
    fn new(lo: u64, hi: u64, groups: &mut Groups) -> io::Result<BinMeta> {
        Ok(BinMeta {
            lo,
            hi,
            flows: 0,
            sd: groups.new_group()?,
            fct: groups.new_group()?,
        })
    }
}

/// Edge bins (edges sorted, deduplicated) plus the overflow bin, last.
fn edge_bins(edges: &[u64], groups: &mut Groups) -> io::Result<Vec<BinMeta>> {
    let mut out = Vec::with_capacity(edges.len() + 1);
    let mut lo = 0u64;
    for &e in edges {
        out.push(BinMeta::new(lo, e, groups)?);
        lo = e.saturating_add(1);
    }
    out.push(BinMeta::new(lo, u64::MAX, groups)?);
    Ok(out)
}

/// Put a completed flow into its edge bin.
fn add_to_edge_bin(
    bins: &mut [BinMeta],
    edges: &[u64],
    size: u64,
    sd: f64,
    fct: f64,
    groups: &mut Groups,
    values: &mut ExtSort<Val>,
) -> io::Result<()> {
    // The first bin whose edge is ≥ size; the overflow bin if none.
    let b = &mut bins[edges.partition_point(|&e| e < size)];
    b.flows += 1;
    let (gs, gf) = (b.sd, b.fct);
    groups.add(values, gs, sd)?;
    groups.add(values, gf, fct)
}

/// Per port (0 for run-wide bins): cut the flows of the size sort into `k` equal-count bins
/// (`n_of(port)` completed flows) and push their values.
fn equal_count_bins(
    sort: ExtSort<SizeItem>,
    k: usize,
    n_of: impl Fn(u16) -> usize,
    groups: &mut Groups,
    values: &mut ExtSort<Val>,
) -> io::Result<BTreeMap<u16, Vec<BinMeta>>> {
    let k = k.max(1) as u128;
    let mut out = BTreeMap::new();
    let mut port: Option<u16> = None;
    let mut bins: Vec<BinMeta> = Vec::new();
    let (mut n, mut rank, mut bin) = (0u128, 0u128, u128::MAX);
    let step_err = || invalid_data("size sort out of step with the flow counts");
    for item in sort.finish()? {
        let it = item?;
        if port != Some(it.port) {
            if let Some(p) = port {
                if rank != n {
                    return Err(step_err());
                }
                out.insert(p, std::mem::take(&mut bins));
            }
            port = Some(it.port);
            (n, rank, bin) = (n_of(it.port) as u128, 0, u128::MAX);
        }
        if rank >= n {
            return Err(step_err());
        }
        // The bin i with floor(i·n/k) ≤ rank < floor((i+1)·n/k).
        let b = ((rank + 1) * k - 1) / n;
        if b != bin {
            bin = b;
            bins.push(BinMeta::new(it.size, it.size, groups)?);
        }
        let m = bins.last_mut().expect("a bin was just pushed");
        m.hi = it.size;
        m.flows += 1;
        let (gs, gf) = (m.sd, m.fct);
        groups.add(values, gs, it.sd)?;
        groups.add(values, gf, it.fct)?;
        rank += 1;
    }
    if let Some(p) = port {
        if rank != n {
            return Err(step_err());
        }
        out.insert(p, bins);
    }
    Ok(out)
}

/// What we count per destination port.
struct PortInfo {
    total: usize,
    /// Completed flows.
    done: usize,
    /// Slowdown group.
    sd: u32,
    /// Size bins (with per-port bins).
    bins: Vec<BinMeta>,
}

/// The bins as [`BinStats`]; an edge binning's overflow bin (last) only if non-empty.
fn finish_bins(bins: Vec<BinMeta>, edges: bool, pct: &[Percentiles]) -> Vec<BinStats> {
    let last = bins.len().wrapping_sub(1);
    bins.into_iter()
        .enumerate()
        .filter(|(i, b)| !(edges && *i == last && b.flows == 0))
        .map(|(_, b)| BinStats {
            lo_bytes: b.lo,
            hi_bytes: b.hi,
            count: b.flows,
            slowdown: pct[b.sd as usize].clone(),
            fct_us: pct[b.fct as usize].clone(),
        })
        .collect()
}

/// The statistics of a spill while they are computed: the external sorts, the value groups,
/// and what is counted for the run and per destination port.
struct SpillStats {
    /// Edge binning: the edges, sorted and deduplicated (`None`: equal-count bins).
    edges: Option<Vec<u64>>,
    /// Number of equal-count bins (unused with edges).
    k: usize,
    /// Statistics per destination port.
    dport_breakdown: bool,
    /// Size bins per destination port (only with `dport_breakdown`).
    dport_bins: bool,
    /// Every value, keyed by its group.
    values: ExtSort<Val>,
    /// Completed flows by size (equal-count bins of the run).
    by_size: Option<ExtSort<SizeItem>>,
    /// Completed flows by port and size (equal-count bins per port).
    by_port_size: Option<ExtSort<SizeItem>>,
    /// The groups and their value counts.
    groups: Groups,
    /// The run's slowdown group.
    g_sd: u32,
    /// The run's FCT group.
    g_fct: u32,
    /// The run's size bins.
    run_bins: Vec<BinMeta>,
    /// Per destination port.
    ports: BTreeMap<u16, PortInfo>,
    /// Flows read.
    flows_total: usize,
    /// Completed flows read.
    flows_done: usize,
}

impl SpillStats {
    /// Empty statistics with sorts next to `base`. Budget split: the size sorts (equal-count
    /// bins only) get a quarter of `budget_items` each, the value sort the rest.
    fn new(
        base: &Path,
        bins: &SizeBins,
        dport_breakdown: bool,
        dport_bins: bool,
        budget_items: usize,
    ) -> io::Result<SpillStats> {
        let (edges, k) = match bins {
            SizeBins::Edges(e) => {
                let mut e = e.clone();
                e.sort_unstable();
                e.dedup();
                (Some(e), 0)
            }
            SizeBins::EqualCount(k) => (None, *k),
        };
        let equal = edges.is_none();
        let size_sorts = if equal { 1 + dport_bins as usize } else { 0 };
        let size_budget = (budget_items / 4).max(1);
        let value_budget = budget_items.saturating_sub(size_sorts * size_budget).max(1);
        let values = ExtSort::<Val>::new(base, value_budget);
        let by_size = equal.then(|| ExtSort::<SizeItem>::new(base, size_budget));
        let by_port_size =
            (equal && dport_bins).then(|| ExtSort::<SizeItem>::new(base, size_budget));
        let mut groups = Groups::default();
        let g_sd = groups.new_group()?;
        let g_fct = groups.new_group()?;
        let run_bins = match &edges {
            Some(e) => edge_bins(e, &mut groups)?,
            None => Vec::new(),
        };
        Ok(SpillStats {
            edges,
            k,
            dport_breakdown,
            dport_bins,
            values,
            by_size,
            by_port_size,
            groups,
            g_sd,
            g_fct,
            run_bins,
            ports: BTreeMap::new(),
            flows_total: 0,
            flows_done: 0,
        })
    }

    /// Pass 1, one record: counts, values of the groups known from one record, size sorts.
    fn add(&mut self, r: &FlowRecord) -> io::Result<()> {
        self.flows_total += 1;
        let port = if self.dport_breakdown {
            let p = port_info(
                &mut self.ports,
                r.dport,
                self.edges.as_deref().filter(|_| self.dport_bins),
                &mut self.groups,
            )?;
            p.total += 1;
            Some(p)
        } else {
            None
        };
        let Some(sd) = r.slowdown() else {
            return Ok(());
        };
        let fct = fct_us(r).unwrap_or(f64::NAN);
        self.flows_done += 1;
        let (groups, values) = (&mut self.groups, &mut self.values);
        groups.add(values, self.g_sd, sd)?;
        groups.add(values, self.g_fct, fct)?;
        let item = |port| SizeItem {
            port,
            size: r.size_bytes,
            id: r.id,
            sd,
            fct,
        };
        match &self.edges {
            Some(e) => {
                add_to_edge_bin(&mut self.run_bins, e, r.size_bytes, sd, fct, groups, values)?
            }
            None => {
                if let Some(s) = &mut self.by_size {
                    s.push(item(0))?;
                }
            }
        }
        let Some(p) = port else {
            return Ok(());
        };
        p.done += 1;
        groups.add(values, p.sd, sd)?;
        if self.dport_bins {
            match &self.edges {
                Some(e) => add_to_edge_bin(&mut p.bins, e, r.size_bytes, sd, fct, groups, values)?,
                None => {
                    if let Some(s) = &mut self.by_port_size {
                        s.push(item(r.dport))?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Pass 2: the equal-count bins, by rank in the size sorts.
    fn cut_equal_count_bins(&mut self) -> io::Result<()> {
        let (k, flows_done) = (self.k, self.flows_done);
        if let Some(s) = self.by_size.take() {
            let mut cut =
                equal_count_bins(s, k, |_| flows_done, &mut self.groups, &mut self.values)?;
            self.run_bins = cut.remove(&0).unwrap_or_default();
        }
        if let Some(s) = self.by_port_size.take() {
            let done: BTreeMap<u16, usize> = self.ports.iter().map(|(&d, p)| (d, p.done)).collect();
            let n_of = |d: u16| done.get(&d).copied().unwrap_or(0);
            let cut = equal_count_bins(s, k, n_of, &mut self.groups, &mut self.values)?;
            for (d, b) in cut {
                if let Some(p) = self.ports.get_mut(&d) {
                    p.bins = b;
                }
            }
        }
        Ok(())
    }

    /// Pass 3: every group's summary from its ascending values, then the statistics.
    fn finish(self) -> io::Result<RunStats> {
        let mut sorted = self.values.finish()?;
        let mut pct = Vec::with_capacity(self.groups.counts.len());
        for (g, &n) in self.groups.counts.iter().enumerate() {
            pct.push(take_group(&mut sorted, g as u32, n)?);
        }
        match sorted.next() {
            None => {}
            Some(Err(e)) => return Err(e),
            Some(Ok(_)) => return Err(invalid_data("value sort holds more values than counted")),
        }
        drop(sorted);

        let is_edges = self.edges.is_some();
        let dport_bins = self.dport_bins;
        let slowdown = pct[self.g_sd as usize].clone();
        Ok(RunStats {
            flows_total: self.flows_total,
            flows_completed: slowdown.count,
            slowdown,
            fct_us: pct[self.g_fct as usize].clone(),
            bins: finish_bins(self.run_bins, is_edges, &pct),
            by_dport: self
                .ports
                .into_iter()
                .map(|(dport, p)| {
                    let slowdown = pct[p.sd as usize].clone();
                    let bins = dport_bins.then(|| finish_bins(p.bins, is_edges, &pct));
                    DportStats {
                        dport,
                        flows_total: p.total,
                        flows_completed: slowdown.count,
                        slowdown,
                        bin_p99_mean: bins.as_deref().and_then(super::stats::bin_p99_mean),
                        bins,
                    }
                })
                .collect(),
        })
    }
}

/// The counts of destination port `dport`, created (with its slowdown group, and its edge
/// bins when `edges` is given) on its first flow.
fn port_info<'a>(
    ports: &'a mut BTreeMap<u16, PortInfo>,
    dport: u16,
    edges: Option<&[u64]>,
    groups: &mut Groups,
) -> io::Result<&'a mut PortInfo> {
    Ok(match ports.entry(dport) {
        Entry::Occupied(o) => o.into_mut(),
        Entry::Vacant(v) => v.insert(PortInfo {
            total: 0,
            done: 0,
            sd: groups.new_group()?,
            bins: match edges {
                Some(e) => edge_bins(e, groups)?,
                None => Vec::new(),
            },
        }),
    })
}

/// The run statistics of the records in `spill`, computed with bounded memory: equal, field for
/// field and bit for bit, to
/// `RunStats::compute(&records, bins)` followed by `.with_dport_breakdown(&records)` if
/// `dport_breakdown` and then `.with_dport_bins(&records, bins)` if `dport_bins` (which, as
/// there, has no effect without `dport_breakdown`), where `records` are the spilled records
/// sorted by id (finished or not; ids are assumed unique).
///
/// `budget_items` bounds the number of items the external sorts hold in memory together
/// (16–32 B each); see the module documentation for the full memory bound. Temp files go next to
/// the spill and are removed before returning. Reads the spill once.
pub fn stats_from_spill(
    spill: &mut RecordSpill,
    bins: &SizeBins,
    dport_breakdown: bool,
    dport_bins: bool,
    budget_items: usize,
) -> io::Result<RunStats> {
    let dport_bins = dport_bins && dport_breakdown;
    let base = spill.path().to_path_buf();
    let mut stats = SpillStats::new(&base, bins, dport_breakdown, dport_bins, budget_items)?;
    for r in spill.read()? {
        stats.add(&r?)?;
    }
    stats.cut_equal_count_bins()?;
    stats.finish()
}

/// All records of `spill` in ascending id order (records with equal ids, which a run does not
/// produce, in a deterministic order), e.g. for writing `flows.csv`. External sort holding at
/// most `budget_items` records (80 B each) in memory; its temp files (next to the spill, 69 B
/// per record) are removed when the returned iterator is dropped. Reads the spill once; the
/// iterator stops after its first error.
pub fn records_by_id(
    spill: &mut RecordSpill,
    budget_items: usize,
) -> io::Result<impl Iterator<Item = io::Result<FlowRecord>> + use<>> {
    let mut sort = ExtSort::<ById>::new(spill.path(), budget_items);
    for r in spill.read()? {
        sort.push(ById(r?))?;
    }
    Ok(sort.finish()?.map(|r| r.map(|b| b.0)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::stats::percentile;
    use crate::rng::Rng;

    /// A fresh, empty directory for one test's files.
    fn test_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("sfc-spill-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn dir_entries(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// `n` records with ids 0..n in a shuffled (completion-like) order: few distinct sizes and
    /// slowdowns (many ties), several ports, ~20 % unfinished flows, and port 7 never finishing.
    fn random_records(n: u32, seed: u64) -> Vec<FlowRecord> {
        let mut rng = Rng::new(seed);
        let sizes = [100u64, 1000, 1000, 1001, 5000, 50_000, 1_000_000, 3];
        let ports = [100u16, 200, 200, 300, 7];
        let mut ids: Vec<u32> = (0..n).collect();
        rng.shuffle(&mut ids);
        ids.into_iter()
            .map(|id| {
                let dport = ports[rng.below(ports.len() as u64) as usize];
                let size_bytes = sizes[rng.below(sizes.len() as u64) as usize];
                let ideal_fct_ps = [0u64, 1_000_000, 3_000_000, 7_777_777][rng.below(4) as usize];
                let fct_ps = if dport == 7 || rng.below(5) == 0 {
                    None
                } else if rng.below(2) == 0 {
                    // Ties: a few multiples of the ideal (some below 1, clamped).
                    Some(ideal_fct_ps * rng.below(4) + rng.below(2))
                } else {
                    Some(rng.below(50_000_000))
                };
                FlowRecord {
                    id,
                    src: rng.below(16) as u32,
                    dst: rng.below(16) as u32,
                    sport: 10000 + rng.below(8) as u16,
                    dport,
                    size_bytes,
                    start_ps: rng.next_u64() >> 8,
                    fct_ps,
                    ideal_fct_ps,
                    retx_packets: rng.below(3),
                    pauses: rng.below(3) as u32,
                    paused_ps: rng.below(1000),
                }
            })
            .collect()
    }

    fn spill_of(dir: &Path, recs: &[FlowRecord]) -> RecordSpill {
        let mut s = RecordSpill::create(&dir.join("flows.spill")).unwrap();
        for r in recs {
            s.push(r).unwrap();
        }
        s
    }

    fn in_memory(recs: &[FlowRecord], bins: &SizeBins, bd: bool, db: bool) -> RunStats {
        let mut by_id = recs.to_vec();
        by_id.sort_by_key(|r| r.id);
        let mut s = RunStats::compute(&by_id, bins);
        if bd {
            s = s.with_dport_breakdown(&by_id);
        }
        if db {
            s = s.with_dport_bins(&by_id, bins);
        }
        s
    }

    /// Bit-exact comparison: `Debug` prints every f64 losslessly (and NaN as NaN).
    fn assert_same(a: &RunStats, b: &RunStats, what: &str) {
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{what}");
        assert_eq!(
            serde_json::to_string(a).unwrap(),
            serde_json::to_string(b).unwrap(),
            "{what}"
        );
    }

    #[test]
    fn record_encoding_roundtrip() {
        let mut recs = random_records(50, 1);
        recs[0].fct_ps = Some(0);
        recs[1].fct_ps = Some(u64::MAX);
        recs[2].fct_ps = None;
        recs[3] = FlowRecord {
            id: u32::MAX,
            src: u32::MAX,
            dst: u32::MAX,
            sport: u16::MAX,
            dport: u16::MAX,
            size_bytes: u64::MAX,
            start_ps: u64::MAX,
            fct_ps: Some(u64::MAX - 1),
            ideal_fct_ps: u64::MAX,
            retx_packets: u64::MAX,
            pauses: u32::MAX,
            paused_ps: u64::MAX,
        };
        for r in &recs {
            let mut b = [0u8; RECORD_SIZE];
            r.encode(&mut b);
            assert_eq!(&FlowRecord::decode(&b).unwrap(), r);
        }
        let mut b = [0u8; RECORD_SIZE];
        recs[0].encode(&mut b);
        b[32] = 2;
        assert_eq!(
            FlowRecord::decode(&b).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
    }

    #[test]
    fn spill_reads_back_and_is_removed() {
        let dir = test_dir("readback");
        let recs = random_records(1000, 2);
        let mut s = spill_of(&dir, &recs[..600]);
        assert_eq!(s.len(), 600);
        let back: Vec<FlowRecord> = s.read().unwrap().map(Result::unwrap).collect();
        assert_eq!(back, recs[..600]);
        for r in &recs[600..] {
            s.push(r).unwrap();
        }
        for _ in 0..2 {
            let back: Vec<FlowRecord> = s.read().unwrap().map(Result::unwrap).collect();
            assert_eq!(back, recs);
        }
        assert_eq!(dir_entries(&dir), vec!["flows.spill".to_string()]);
        drop(s);
        assert!(dir_entries(&dir).is_empty());
        fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn io_errors_are_errors() {
        let dir = test_dir("errors");
        assert!(RecordSpill::create(&dir.join("no/such/dir/x")).is_err());
        // A truncated spill file: the read stops with an error, not a panic.
        let mut s = spill_of(&dir, &random_records(10, 3));
        s.read().unwrap().for_each(drop); // flushes
        OpenOptions::new()
            .write(true)
            .open(s.path())
            .unwrap()
            .set_len(5 * RECORD_SIZE as u64 + 7)
            .unwrap();
        let got: Vec<io::Result<FlowRecord>> = s.read().unwrap().collect();
        assert_eq!(got.len(), 6);
        assert!(got[..5].iter().all(Result::is_ok));
        assert_eq!(
            got[5].as_ref().unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
        assert!(stats_from_spill(&mut s, &SizeBins::default(), true, true, 7).is_err());
        assert!(records_by_id(&mut s, 3).is_err());
        drop(s);
        assert!(dir_entries(&dir).is_empty(), "{:?}", dir_entries(&dir));
        fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn ext_sort_orders_and_keeps_multiset() {
        let dir = test_dir("extsort");
        let base = dir.join("base");
        let mut rng = Rng::new(4);
        for (n, budget) in [
            (0usize, 5usize),
            (1, 1),
            (5, 5),
            (6, 5),
            (3000, 1),
            (3000, 7),
            (3000, 100_000),
            (20_000, 250),
        ] {
            let items: Vec<Val> = (0..n)
                .map(|_| {
                    let v = [
                        1.0,
                        2.5,
                        0.0,
                        -0.0,
                        1e300,
                        -7.5,
                        f64::MIN_POSITIVE,
                        f64::NAN,
                    ][rng.below(8) as usize]
                        * rng.below(3) as f64;
                    Val::new(rng.below(5) as u32, v)
                })
                .collect();
            let mut s = ExtSort::new(&base, budget);
            for &x in &items {
                s.push(x).unwrap();
            }
            if n < budget.max(1) {
                assert!(
                    dir_entries(&dir).is_empty(),
                    "no file for an in-memory sort"
                );
            }
            let got: Vec<Val> = s.finish().unwrap().map(Result::unwrap).collect();
            let mut want = items.clone();
            want.sort_by(|a, b| (a.group().cmp(&b.group())).then(a.value().total_cmp(&b.value())));
            let bits = |v: &[Val]| {
                v.iter()
                    .map(|x| (x.group(), x.value().to_bits()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(bits(&got), bits(&want), "n {n} budget {budget}");
            assert!(dir_entries(&dir).is_empty(), "runs removed after the merge");
        }
        // An unfinished sort removes its runs on drop.
        let mut s = ExtSort::new(&base, 3);
        for i in 0..10 {
            s.push(Val::new(i, 0.0)).unwrap();
        }
        assert_eq!(dir_entries(&dir).len(), 3);
        drop(s);
        assert!(dir_entries(&dir).is_empty());
        // So does a merge dropped midway.
        let mut s = ExtSort::new(&base, 3);
        for i in 0..10 {
            s.push(Val::new(i, 0.0)).unwrap();
        }
        let mut m = s.finish().unwrap();
        assert_eq!(m.next().unwrap().unwrap().group(), 0);
        drop(m);
        assert!(dir_entries(&dir).is_empty());
        fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn f64_key_orders_as_total_cmp() {
        let v = [
            f64::NEG_INFINITY,
            -1e300,
            -1.0,
            -f64::MIN_POSITIVE,
            -0.0,
            0.0,
            5e-324,
            1.0,
            1.5,
            f64::INFINITY,
            f64::NAN,
            -f64::NAN,
        ];
        for a in v {
            assert_eq!(f64_from_key(f64_key(a)).to_bits(), a.to_bits());
            for b in v {
                assert_eq!(f64_key(a).cmp(&f64_key(b)), a.total_cmp(&b), "{a} {b}");
            }
        }
    }

    #[test]
    fn streaming_percentiles_match_from_sorted() {
        for n in 1..3000usize {
            let idx: Vec<f64> = (0..n).map(|i| i as f64).collect();
            for p in [0.5, 0.95, 0.99, 0.999, 0.0, 1.0] {
                assert_eq!(
                    percentile(&idx, p),
                    percentile_index(n, p) as f64,
                    "n {n} p {p}"
                );
            }
        }
        let mut rng = Rng::new(5);
        for n in 0..400usize {
            let mut v: Vec<f64> = (0..n)
                .map(|_| match rng.below(3) {
                    0 => 1.0 + rng.below(4) as f64 / 3.0,
                    1 => rng.f64() * 1e6,
                    _ => 1.0 / (1.0 + rng.below(7) as f64),
                })
                .collect();
            v.sort_by(f64::total_cmp);
            let want = Percentiles::from_sorted(&v);
            let got = percentiles_streaming(n, v.iter().copied());
            assert_eq!(format!("{got:?}"), format!("{want:?}"), "n {n}");
            assert_eq!(got.mean.to_bits(), want.mean.to_bits());
        }
    }

    #[test]
    fn stats_match_in_memory() {
        let dir = test_dir("stats");
        let binnings = [
            SizeBins::EqualCount(1),
            SizeBins::EqualCount(10),
            SizeBins::EqualCount(1000),
            SizeBins::EqualCount(0),
            SizeBins::Edges(vec![1000, 100, 1000, 2, 999_999, 10_000_000]),
            SizeBins::Edges(vec![500]),
            SizeBins::Edges(vec![]),
        ];
        for (n, seed) in [
            (0u32, 10u64),
            (1, 11),
            (2, 12),
            (3, 13),
            (57, 14),
            (1500, 15),
        ] {
            let recs = random_records(n, seed);
            let mut spill = spill_of(&dir, &recs);
            for bins in &binnings {
                for (bd, db) in [(false, false), (true, false), (true, true), (false, true)] {
                    let want = in_memory(&recs, bins, bd, db);
                    // Tiny budgets make hundreds of runs (multi-level merges); a budget of 0
                    // is taken as 1.
                    let budgets: &[usize] = if n <= 100 {
                        &[0, 7, 1 << 20]
                    } else if bd && db && *bins == SizeBins::EqualCount(10) {
                        &[7, 50, 1 << 20]
                    } else {
                        &[50, 1 << 20]
                    };
                    for &budget in budgets {
                        let got = stats_from_spill(&mut spill, bins, bd, db, budget).unwrap();
                        let what = format!("n {n} {bins:?} bd {bd} db {db} budget {budget}");
                        assert_same(&got, &want, &what);
                        assert_eq!(dir_entries(&dir), vec!["flows.spill".to_string()]);
                    }
                }
            }
        }
        fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn records_by_id_sorted() {
        let dir = test_dir("byid");
        for (n, budget) in [
            (0u32, 1usize),
            (1, 1),
            (2, 1),
            (1000, 7),
            (5000, 13),
            (1000, 1 << 20),
        ] {
            let recs = random_records(n, 20 + n as u64);
            let mut spill = spill_of(&dir, &recs);
            let got: Vec<FlowRecord> = records_by_id(&mut spill, budget)
                .unwrap()
                .map(Result::unwrap)
                .collect();
            let mut want = recs.clone();
            want.sort_by_key(|r| r.id);
            assert_eq!(got, want);
            assert_eq!(dir_entries(&dir), vec!["flows.spill".to_string()]);
        }
        fs::remove_dir(&dir).unwrap();
    }

    /// Peak resident memory of this process, KiB (Linux), if known.
    fn peak_rss_kib() -> Option<u64> {
        let s = fs::read_to_string("/proc/self/status").ok()?;
        let l = s.lines().find(|l| l.starts_with("VmHWM:"))?;
        l.split_whitespace().nth(1)?.parse().ok()
    }

    /// 10 M records: time and peak memory of the spill, the statistics and the sorted read.
    /// `cargo test --release --lib metrics::spill::tests::large -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn large() {
        let n: u32 = std::env::var("SPILL_N")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(10_000_000);
        let budget: usize = std::env::var("SPILL_BUDGET")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1 << 22);
        let dir = test_dir("large");
        let mut rng = Rng::new(99);
        let t = std::time::Instant::now();
        let mut spill = RecordSpill::create(&dir.join("flows.spill")).unwrap();
        for i in 0..n {
            // Completion order: ids locally shuffled.
            let id = i ^ (rng.below(64) as u32);
            let id = if id < n { id } else { i };
            let ideal = 1_000_000 + rng.below(10_000_000);
            spill
                .push(&FlowRecord {
                    id,
                    src: rng.below(320) as u32,
                    dst: rng.below(320) as u32,
                    sport: 10000,
                    dport: if rng.below(10) == 0 { 200 } else { 100 },
                    size_bytes: rng.lognormal_mean(50_000.0, 2.0) as u64 + 1,
                    start_ps: i as u64 * 1000,
                    fct_ps: (rng.below(100) != 0).then(|| ideal + rng.below(50_000_000)),
                    ideal_fct_ps: ideal,
                    retx_packets: 0,
                    pauses: 0,
                    paused_ps: 0,
                })
                .unwrap();
        }
        eprintln!(
            "spill {n} records: {:?}, peak RSS {:?} KiB",
            t.elapsed(),
            peak_rss_kib()
        );
        for (bd, db) in [(false, false), (true, false), (true, true)] {
            let t = std::time::Instant::now();
            let s =
                stats_from_spill(&mut spill, &SizeBins::EqualCount(10), bd, db, budget).unwrap();
            eprintln!(
                "stats (dport {bd}, dport bins {db}, budget {budget}): {:?}, peak RSS {:?} KiB, p99 {}",
                t.elapsed(),
                peak_rss_kib(),
                s.slowdown.p99
            );
        }
        let t = std::time::Instant::now();
        let mut last = 0u32;
        let mut count = 0u64;
        for r in records_by_id(&mut spill, budget).unwrap() {
            let r = r.unwrap();
            assert!(r.id >= last);
            last = r.id;
            count += 1;
        }
        assert_eq!(count, n as u64);
        eprintln!(
            "records_by_id: {:?}, peak RSS {:?} KiB",
            t.elapsed(),
            peak_rss_kib()
        );
        // After the measurements: the same statistics in memory.
        let recs: Vec<FlowRecord> = spill.read().unwrap().map(Result::unwrap).collect();
        for bins in [
            SizeBins::EqualCount(10),
            SizeBins::Edges(vec![10_000, 1_000_000]),
        ] {
            let got = stats_from_spill(&mut spill, &bins, true, true, budget).unwrap();
            assert_same(&got, &in_memory(&recs, &bins, true, true), "large");
        }
        drop(spill);
        fs::remove_dir(&dir).unwrap();
    }
}
