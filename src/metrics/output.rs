//! Output writers: crash-safe file writing ([`write_atomic`], [`AtomicWriter`]), the HPCC-sim FCT
//! file (`FORMATS.md` §7), a per-flow CSV, and human-readable summary tables for stdout.

use super::FlowRecord;
use super::stats::{BinStats, Percentiles, RunStats};
use crate::units::fmt_bytes;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Distinguishes temp files of concurrent writers (threads) of one process.
static TMP_SEQ: AtomicU64 = AtomicU64::new(0);

/// The hidden temp path `dir/.name.tmp-PID-SEQ` next to `path`.
fn temp_path(path: &Path) -> io::Result<PathBuf> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` is not a file path", path.display()),
        )
    })?;
    let seq = TMP_SEQ.fetch_add(1, Ordering::Relaxed);
    let tmp_name = format!(
        ".{}.tmp-{}-{seq}",
        name.to_string_lossy(),
        std::process::id()
    );
    Ok(path.with_file_name(tmp_name))
}

/// Best-effort fsync of the directory holding `path`, so the rename itself is durable.
fn sync_parent(path: &Path) {
    #[cfg(unix)]
    {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

/// Write `bytes` to `path` atomically: write a hidden temp file in the same directory
/// (`.name.tmp-PID-SEQ`), fsync it, then rename it over `path`. A run killed midway leaves
/// either the old file or the complete new one, never a truncated file (at worst a stray hidden
/// temp file). On error the temp file is removed. Symbolic links and special files (FIFOs,
/// devices) are handled as described at [`AtomicWriter`].
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut w = AtomicWriter::create(path)?;
    w.write_all(bytes)?;
    w.finish()
}

/// A buffered writer for streaming a large output file atomically: data goes to a hidden temp
/// file next to the destination, which [`AtomicWriter::finish`] fsyncs and renames into place.
/// Dropping the writer without `finish` deletes the temp file and leaves the destination
/// untouched.
///
/// What the destination is decides how it is written:
///
/// * a regular file, or nothing yet: atomically, as above;
/// * a symbolic link (a chain of them): the link is followed
///   ([`crate::fsutil::resolve_symlinks`]) and its *target* is written atomically — the link
///   stays a link and points to the new content (a dangling link's target is created);
/// * an existing file that is neither a regular file nor a directory — a FIFO, a character
///   device, a socket: it is **written in place** (opened for writing when the writer is
///   created, no temp file, no rename, no fsync), so a pipe or device keeps its identity and
///   receives the data; opening a FIFO waits for its reader, as a shell redirection does. In
///   this mode an unfinished writer has already sent part of the data;
/// * a directory: an error ([`io::ErrorKind::IsADirectory`]).
#[derive(Debug)]
pub struct AtomicWriter {
    inner: Option<BufWriter<File>>,
    /// The temp file; `None` when writing a special file in place.
    tmp: Option<PathBuf>,
    dest: PathBuf,
}

impl AtomicWriter {
    /// Create the temp file for destination `path` (the destination is not touched yet), or
    /// open a special file in place (see the type's documentation).
    pub fn create(path: &Path) -> io::Result<AtomicWriter> {
        // What the path designates, through every link as the kernel follows them (also
        // `/proc` links such as `/dev/stdout`, whose text is no path).
        if let Ok(m) = std::fs::metadata(path) {
            if m.is_dir() {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    format!("`{}` is a directory", path.display()),
                ));
            }
            if !m.is_file() {
                let file = std::fs::OpenOptions::new().write(true).open(path)?;
                return Ok(AtomicWriter {
                    inner: Some(BufWriter::with_capacity(1 << 16, file)),
                    tmp: None,
                    dest: path.to_path_buf(),
                });
            }
        }
        let dest = crate::fsutil::resolve_symlinks(path)?;
        let tmp = temp_path(&dest)?;
        let file = File::create(&tmp)?;
        crate::process::register_temp(&tmp);
        Ok(AtomicWriter {
            inner: Some(BufWriter::with_capacity(1 << 16, file)),
            tmp: Some(tmp),
            dest,
        })
    }

    /// Flush, fsync and rename the temp file onto the destination (a special file written in
    /// place is only flushed).
    pub fn finish(mut self) -> io::Result<()> {
        let Some(w) = self.inner.take() else {
            return Err(io::Error::other("AtomicWriter already finished"));
        };
        let Some(tmp) = self.tmp.take() else {
            return w.into_inner().map(drop).map_err(|e| e.into_error());
        };
        let res = (|| {
            let file = w.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
            drop(file);
            std::fs::rename(&tmp, &self.dest)
        })();
        crate::process::unregister_temp(&tmp);
        match res {
            Ok(()) => {
                sync_parent(&self.dest);
                Ok(())
            }
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                Err(e)
            }
        }
    }
}

impl Write for AtomicWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.inner {
            Some(w) => w.write(buf),
            None => Err(io::Error::other("AtomicWriter already finished")),
        }
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match &mut self.inner {
            Some(w) => w.write_all(buf),
            None => Err(io::Error::other("AtomicWriter already finished")),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match &mut self.inner {
            Some(w) => w.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for AtomicWriter {
    fn drop(&mut self) {
        if let Some(w) = self.inner.take() {
            drop(w);
            if let Some(tmp) = self.tmp.take() {
                let _ = std::fs::remove_file(&tmp);
                crate::process::unregister_temp(&tmp);
            }
        }
    }
}

/// HPCC-sim IPv4 address of a node: `0x0b000001 + ((node/256) << 16) + ((node%256) << 8)`
/// (so `node = (ip >> 8) & 0xffff`). Wraps instead of panicking for ids ≥ 2^24.
#[inline]
pub fn hpcc_ip(node: u32) -> u32 {
    0x0b00_0001u32
        .wrapping_add((node / 256) << 16)
        .wrapping_add((node % 256) << 8)
}

/// One line (without newline) of the HPCC-sim FCT file (`FORMATS.md` §7):
/// `%08x %08x %u %u %lu %lu %lu %lu` = `sip dip sport dport size_B start_ns fct_ns
/// standalone_fct_ns`. Picoseconds are converted to nanoseconds by integer division. An
/// unfinished flow (never written by HPCC-sim) gets `fct_ns` 0.
pub fn fct_line(rec: &FlowRecord) -> String {
    let mut v = Vec::with_capacity(96);
    // Writing into a Vec cannot fail, and the line is ASCII.
    let _ = write_fct_line(&mut v, rec);
    v.pop(); // the newline
    String::from_utf8(v).unwrap_or_default()
}

/// Write [`fct_line`] and a newline to `w` without building a `String` (one per completed
/// flow of a run streaming its results).
pub fn write_fct_line<W: io::Write>(w: &mut W, rec: &FlowRecord) -> io::Result<()> {
    writeln!(
        w,
        "{:08x} {:08x} {} {} {} {} {} {}",
        hpcc_ip(rec.src),
        hpcc_ip(rec.dst),
        rec.sport,
        rec.dport,
        rec.size_bytes,
        rec.start_ps / 1000,
        rec.fct_ps.unwrap_or(0) / 1000,
        rec.ideal_fct_ps / 1000
    )
}

/// Write an HPCC-sim FCT file (atomically): one [`fct_line`] per **completed** flow, in the
/// order given (pass records in completion order to match HPCC-sim); unfinished flows are
/// skipped as HPCC-sim never writes them.
pub fn write_fct_file<R: std::borrow::Borrow<FlowRecord>>(
    path: &Path,
    records: impl IntoIterator<Item = R>,
) -> io::Result<()> {
    let mut w = AtomicWriter::create(path)?;
    for r in records {
        let r = r.borrow();
        if r.fct_ps.is_some() {
            write_fct_line(&mut w, r)?;
        }
    }
    w.finish()
}

/// Format picoseconds as an exact decimal number of nanoseconds (`12345` → `"12.345"`,
/// `5000` → `"5"`), so no precision is lost and any CSV reader parses it as a number.
pub fn fmt_ns(ps: u64) -> String {
    let (ns, frac) = (ps / 1000, ps % 1000);
    if frac == 0 {
        ns.to_string()
    } else {
        let f = format!("{frac:03}");
        format!("{ns}.{}", f.trim_end_matches('0'))
    }
}

/// Header of [`flows_csv`].
pub const FLOWS_CSV_HEADER: &str = "id,src,dst,sport,dport,size_bytes,start_ns,fct_ns,ideal_fct_ns,slowdown,retx_packets,pauses,paused_ns,completed";

fn write_flow_row<W: io::Write>(w: &mut W, r: &FlowRecord) -> io::Result<()> {
    let (fct, sd) = match (r.fct_ps, r.slowdown()) {
        (Some(f), Some(s)) => (fmt_ns(f), format!("{s}")),
        _ => (String::new(), String::new()),
    };
    writeln!(
        w,
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
        r.id,
        r.src,
        r.dst,
        r.sport,
        r.dport,
        r.size_bytes,
        fmt_ns(r.start_ps),
        fct,
        fmt_ns(r.ideal_fct_ps),
        sd,
        r.retx_packets,
        r.pauses,
        fmt_ns(r.paused_ps),
        u8::from(r.fct_ps.is_some())
    )
}

/// Write the per-flow CSV (see [`flows_csv`]) to any writer, one record at a time.
pub fn write_flows_csv_to<W: io::Write, R: std::borrow::Borrow<FlowRecord>>(
    w: &mut W,
    records: impl IntoIterator<Item = R>,
) -> io::Result<()> {
    writeln!(w, "{FLOWS_CSV_HEADER}")?;
    for r in records {
        write_flow_row(w, r.borrow())?;
    }
    Ok(())
}

/// Per-flow CSV with header [`FLOWS_CSV_HEADER`], one row per record in the given order.
/// Times are nanoseconds written as exact decimals (see [`fmt_ns`]); `slowdown` uses Rust's
/// shortest round-trip float formatting; `fct_ns` and `slowdown` are empty for unfinished
/// flows (read as NaN by pandas); `completed` is `1`/`0`.
pub fn flows_csv(records: &[FlowRecord]) -> String {
    let mut buf = Vec::with_capacity(128 * (records.len() + 1));
    // Writing into a Vec cannot fail.
    let _ = write_flows_csv_to(&mut buf, records);
    String::from_utf8(buf).unwrap_or_default()
}

/// Write the per-flow CSV (see [`flows_csv`]) to `path`, streaming and atomically.
pub fn write_flows_csv<R: std::borrow::Borrow<FlowRecord>>(
    path: &Path,
    records: impl IntoIterator<Item = R>,
) -> io::Result<()> {
    let mut w = AtomicWriter::create(path)?;
    write_flows_csv_to(&mut w, records)?;
    w.finish()
}

/// A slowdown value for a table cell: `-` when there is no data.
fn cell(x: f64) -> String {
    if x.is_nan() {
        "-".to_string()
    } else if x >= 1000.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

/// Human size range of a bin: `1.0KB–5.0KB`, `>100.0KB` for an overflow bin.
fn bin_label(b: &BinStats) -> String {
    if b.hi_bytes == u64::MAX {
        format!(">{}", fmt_bytes(b.lo_bytes.saturating_sub(1)))
    } else if b.lo_bytes == b.hi_bytes {
        fmt_bytes(b.hi_bytes)
    } else {
        format!("{}-{}", fmt_bytes(b.lo_bytes), fmt_bytes(b.hi_bytes))
    }
}

/// [`bin_label`] of every bin, made distinct: bins whose rounded labels coincide (e.g. two
/// bins within one kilobyte) are labelled with exact byte ranges instead.
fn distinct_bin_labels(bins: &[BinStats]) -> Vec<String> {
    let mut labels: Vec<String> = bins.iter().map(bin_label).collect();
    for i in 0..labels.len() {
        if labels.iter().filter(|l| **l == labels[i]).count() > 1 {
            let dup = labels[i].clone();
            for (j, b) in bins.iter().enumerate() {
                if labels[j] == dup {
                    labels[j] = if b.hi_bytes == u64::MAX {
                        format!(">{}B", b.lo_bytes.saturating_sub(1))
                    } else if b.lo_bytes == b.hi_bytes {
                        format!("{}B", b.hi_bytes)
                    } else {
                        format!("{}-{}B", b.lo_bytes, b.hi_bytes)
                    };
                }
            }
        }
    }
    // Equal-count bins of flows of one size (e.g. an incast of equal flows: HPCC's deciles
    // split them by flow id) keep identical ranges: number them.
    for i in 0..labels.len() {
        let dup = labels[i].clone();
        let n = labels.iter().filter(|l| **l == dup).count();
        if n > 1 {
            let mut k = 0;
            for l in labels.iter_mut().filter(|l| **l == dup) {
                k += 1;
                *l = format!("{dup} #{k}/{n}");
            }
        }
    }
    labels
}

fn pct_row(out: &mut String, label: &str, count: usize, p: &Percentiles) {
    let _ = writeln!(
        out,
        "  {label:<21} {count:>9} {:>9} {:>9} {:>9} {:>9}",
        cell(p.p50),
        cell(p.p95),
        cell(p.p99),
        cell(p.p999)
    );
}

/// A fixed-width text table of one run for stdout: a title line, one row per size bin (size
/// range in decimal human units, completed-flow count, p50/p95/p99/p99.9 slowdown), an
/// `overall` row, the per-dport rows if more than one port is present, the completed/total flow
/// count, then the `extra` key/value lines (peak buffer, drops, events, wall time, …) aligned.
pub fn summary_table(title: &str, stats: &RunStats, extra: &[(String, String)]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "== {title} ==");
    let _ = writeln!(
        out,
        "  {:<21} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "flow size", "flows", "p50", "p95", "p99", "p99.9"
    );
    for (b, label) in stats.bins.iter().zip(distinct_bin_labels(&stats.bins)) {
        pct_row(&mut out, &label, b.count, &b.slowdown);
    }
    pct_row(&mut out, "overall", stats.flows_completed, &stats.slowdown);
    if stats.by_dport.len() > 1 {
        for d in &stats.by_dport {
            pct_row(
                &mut out,
                &format!("dport {}", d.dport),
                d.flows_completed,
                &d.slowdown,
            );
        }
    }
    let mut kv: Vec<(String, String)> = vec![(
        "completed flows".to_string(),
        format!("{}/{}", stats.flows_completed, stats.flows_total),
    )];
    kv.extend(extra.iter().cloned());
    let w = kv.iter().map(|(k, _)| k.chars().count()).max().unwrap_or(0);
    for (k, v) in &kv {
        let _ = writeln!(out, "  {k:<w$} : {v}");
    }
    out
}

/// Compare several runs side by side: one row per size-bin index with each run's P99 slowdown,
/// then overall p50/p99/p99.9 and completed-flow rows. Rows are labelled with the size range of
/// the first run having that bin (equal-count bins of runs over the same workload nearly
/// coincide); a run lacking a bin shows `-`.
pub fn side_by_side(columns: &[(String, RunStats)]) -> String {
    let width = columns
        .iter()
        .map(|(n, _)| n.chars().count())
        .max()
        .unwrap_or(0)
        .max(10);
    let mut out = String::new();
    let _ = write!(out, "  {:<21}", "p99 slowdown");
    for (name, _) in columns {
        let _ = write!(out, " {name:>width$}");
    }
    out.push('\n');
    let nbins = columns.iter().map(|(_, s)| s.bins.len()).max().unwrap_or(0);
    let labels = columns
        .iter()
        .map(|(_, s)| distinct_bin_labels(&s.bins))
        .collect::<Vec<_>>();
    for i in 0..nbins {
        let label = labels
            .iter()
            .find_map(|l| l.get(i))
            .cloned()
            .unwrap_or_default();
        let _ = write!(out, "  {label:<21}");
        for (_, s) in columns {
            let v = s.bins.get(i).map_or(f64::NAN, |b| b.slowdown.p99);
            let _ = write!(out, " {:>width$}", cell(v));
        }
        out.push('\n');
    }
    type Row = (&'static str, fn(&RunStats) -> String);
    let rows: [Row; 4] = [
        ("overall p50", |s| cell(s.slowdown.p50)),
        ("overall p99", |s| cell(s.slowdown.p99)),
        ("overall p99.9", |s| cell(s.slowdown.p999)),
        ("completed", |s| {
            format!("{}/{}", s.flows_completed, s.flows_total)
        }),
    ];
    for (label, f) in rows {
        let _ = write!(out, "  {label:<21}");
        for (_, s) in columns {
            let _ = write!(out, " {:>width$}", f(s));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::stats::{SizeBins, tests::rec};

    #[test]
    fn duplicate_bin_labels_become_exact_ranges() {
        let bin = |lo: u64, hi: u64| BinStats {
            lo_bytes: lo,
            hi_bytes: hi,
            count: 1,
            slowdown: Percentiles::from_sorted(&[1.0]),
            fct_us: Percentiles::from_sorted(&[1.0]),
        };
        // 1000–1040 B and 1041–1049 B both print as "1.0KB-1.0KB"; 2–5 KB stays rounded.
        let bins = [bin(1000, 1040), bin(1041, 1049), bin(2000, 5000)];
        assert_eq!(
            distinct_bin_labels(&bins),
            ["1000-1040B", "1041-1049B", "2.0KB-5.0KB"]
        );
        // Four deciles of one 8,700 B incast: same exact range, numbered.
        let bins = [
            bin(100, 100),
            bin(8700, 8700),
            bin(8700, 8700),
            bin(8700, 8700),
        ];
        assert_eq!(
            distinct_bin_labels(&bins),
            ["100B", "8700B #1/3", "8700B #2/3", "8700B #3/3"]
        );
    }

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("sfc-output-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn leftovers(d: &Path) -> Vec<String> {
        std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp-"))
            .collect()
    }

    #[test]
    fn ips() {
        assert_eq!(hpcc_ip(0), 0x0b00_0001);
        assert_eq!(hpcc_ip(2), 0x0b00_0201);
        assert_eq!(hpcc_ip(300), 0x0b01_2c01);
        assert_eq!((hpcc_ip(300) >> 8) & 0xffff, 300);
        let _ = hpcc_ip(u32::MAX);
    }

    #[test]
    fn fct_line_matches_hpcc() {
        let r = FlowRecord {
            id: 7,
            src: 2,
            dst: 300,
            sport: 10001,
            dport: 100,
            size_bytes: 4000,
            start_ps: 2_000_000_123_456,
            fct_ps: Some(12_345_999),
            ideal_fct_ps: 6_200_500,
            retx_packets: 0,
            pauses: 0,
            paused_ps: 0,
        };
        assert_eq!(
            fct_line(&r),
            "0b000201 0b012c01 10001 100 4000 2000000123 12345 6200"
        );
    }

    #[test]
    fn fct_file_skips_unfinished() {
        let d = tmpdir("fct");
        let p = d.join("fct.txt");
        let recs = vec![
            rec(1, 100, Some(2.0)),
            rec(0, 10, None),
            rec(2, 300, Some(1.0)),
        ];
        write_fct_file(&p, &recs).unwrap();
        let s = std::fs::read_to_string(&p).unwrap();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(
            lines[0].ends_with(" 100 100 2000000000 20000 10000"),
            "{}",
            lines[0]
        );
        assert!(lines[1].contains(" 300 "));
        assert!(leftovers(&d).is_empty());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn csv_columns() {
        let mut recs = vec![rec(0, 1000, Some(2.5)), rec(1, 5000, None)];
        recs[0].fct_ps = Some(25_000_001);
        recs[0].paused_ps = 1500;
        let csv = flows_csv(&recs);
        let ncol = FLOWS_CSV_HEADER.split(',').count();
        assert_eq!(ncol, 14);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], FLOWS_CSV_HEADER);
        for l in &lines {
            assert_eq!(l.split(',').count(), ncol, "{l}");
        }
        assert_eq!(
            lines[1],
            "0,0,1,10000,100,1000,2000000000,25000.001,10000,2.5000001,0,0,1.5,1"
        );
        assert_eq!(lines[2], "1,0,1,10000,100,5000,2000000000,,10000,,0,0,0,0");
        assert_eq!(fmt_ns(0), "0");
        assert_eq!(fmt_ns(1), "0.001");
        assert_eq!(fmt_ns(12_340), "12.34");
    }

    /// A symbolic link stays a link: its target receives the new content (atomically, in the
    /// target's directory), also through a chain and when the target does not exist yet.
    #[cfg(unix)]
    #[test]
    fn atomic_write_follows_symlinks() {
        let d = tmpdir("symlink");
        std::fs::create_dir_all(d.join("real")).unwrap();
        std::fs::write(d.join("real/t.txt"), b"old").unwrap();
        std::os::unix::fs::symlink("real/t.txt", d.join("link.txt")).unwrap();
        std::os::unix::fs::symlink("link.txt", d.join("link2.txt")).unwrap();
        write_atomic(&d.join("link2.txt"), b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(d.join("link.txt"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(
            std::fs::symlink_metadata(d.join("link2.txt"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(d.join("real/t.txt")).unwrap(), b"new");
        assert!(leftovers(&d).is_empty() && leftovers(&d.join("real")).is_empty());
        // Dangling: the target is created.
        std::os::unix::fs::symlink("real/absent.txt", d.join("dangling.txt")).unwrap();
        write_atomic(&d.join("dangling.txt"), b"made").unwrap();
        assert_eq!(std::fs::read(d.join("real/absent.txt")).unwrap(), b"made");
        assert!(
            std::fs::symlink_metadata(d.join("dangling.txt"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    /// A FIFO is written in place: it stays a FIFO and its reader receives every byte.
    #[cfg(unix)]
    #[test]
    fn atomic_write_to_a_fifo_writes_in_place() {
        use std::os::unix::fs::FileTypeExt;
        let d = tmpdir("fifo");
        let fifo = d.join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(&fifo).unwrap())
        };
        let mut w = AtomicWriter::create(&fifo).unwrap();
        w.write_all(b"line 1\n").unwrap();
        w.write_all(b"line 2\n").unwrap();
        w.finish().unwrap();
        assert_eq!(reader.join().unwrap(), b"line 1\nline 2\n");
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
        assert!(leftovers(&d).is_empty());
        // A directory is refused, not replaced.
        let e = write_atomic(&d, b"x").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::IsADirectory);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn atomic_write_replaces() {
        let d = tmpdir("atomic");
        let p = d.join("out.csv");
        std::fs::write(&p, b"old contents that are longer").unwrap();
        write_atomic(&p, b"new").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert!(leftovers(&d).is_empty());

        // Streaming writer: destination untouched until finish.
        let mut w = AtomicWriter::create(&p).unwrap();
        w.write_all(b"streamed\n").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert_eq!(leftovers(&d).len(), 1);
        w.finish().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"streamed\n");
        assert!(leftovers(&d).is_empty());

        // Abandoned writer: temp removed, destination kept.
        let mut w = AtomicWriter::create(&p).unwrap();
        w.write_all(b"partial").unwrap();
        drop(w);
        assert_eq!(std::fs::read(&p).unwrap(), b"streamed\n");
        assert!(leftovers(&d).is_empty());

        // Errors, not panics.
        assert!(write_atomic(&d.join("missing-dir/x"), b"x").is_err());
        assert!(write_atomic(Path::new("/"), b"x").is_err());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn tables() {
        let recs: Vec<FlowRecord> = (0..25u32)
            .map(|i| rec(i, 1000 * (i as u64 + 1), Some(1.0 + i as f64)))
            .collect();
        let s = RunStats::compute(&recs, &SizeBins::EqualCount(5));
        let extra = vec![
            ("peak buffer".to_string(), "1.20MB".to_string()),
            ("events/s".to_string(), "12.3M".to_string()),
        ];
        let t = summary_table("demo", &s, &extra);
        assert!(t.starts_with("== demo ==\n"));
        assert!(t.contains("1.0KB-5.0KB"), "{t}");
        assert!(t.contains("overall"));
        assert!(t.contains("completed flows : 25/25"), "{t}");
        assert!(t.contains("peak buffer     : 1.20MB"), "{t}");
        // 1 header + 1 column header + 5 bins + overall + 3 kv.
        assert_eq!(t.lines().count(), 11);

        let s2 = RunStats::compute(&recs[..4], &SizeBins::EqualCount(5));
        let sbs = side_by_side(&[("none".into(), s.clone()), ("SFC".into(), s2)]);
        let lines: Vec<&str> = sbs.lines().collect();
        assert_eq!(lines.len(), 1 + 5 + 4);
        assert!(lines[0].contains("none") && lines[0].contains("SFC"));
        assert!(lines[5].trim_end().ends_with('-'), "{sbs}");
        let w = lines[0].len();
        assert!(lines.iter().all(|l| l.len() == w), "{sbs}");
        assert!(side_by_side(&[]).lines().count() == 5);
    }
}
