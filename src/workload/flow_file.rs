//! The HPCC simulator's flow file (`mix/flow.txt`, written by `traffic_gen.py`):
//!
//! ```text
//! <flow_num>
//! <src> <dst> <pg> <dport> <size_bytes> <start_time_s>     (flow_num lines)
//! ```
//!
//! Start times are seconds printed as `%.9f`; they are parsed exactly into picoseconds from their
//! decimal text. Lines after the declared count are ignored (as HPCC does). Two quirks of
//! `traffic_gen.py` are tolerated with a warning: the count is overwritten in place without
//! truncation, leaving stale digits either on a line of their own (skipped) or appended to the
//! count (detected when the file holds exactly the prefix's number of flows).

use super::FlowSpec;
use crate::topology::TopologySpec;
use crate::workload::shape::FlowShape;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Picoseconds per second.
const PS_PER_S: u64 = 1_000_000_000_000;

/// Parse a non-negative decimal number of seconds into picoseconds, exactly for plain decimals
/// (up to 12 fractional digits; more are rounded half-up to the picosecond) and via `f64` for
/// exponent forms (`2e-3`). Times past the simulator's time range
/// ([`crate::units::MAX_TIME_PS`], 1e7 s) are refused, as in a scenario file.
fn parse_seconds_ps(tok: &str) -> Result<u64, String> {
    let ps = parse_seconds_ps_unchecked(tok)?;
    if ps > crate::units::MAX_TIME_PS {
        return Err("is beyond the simulator's time range, 1e7 s (about 116 days)".to_string());
    }
    Ok(ps)
}

fn parse_seconds_ps_unchecked(tok: &str) -> Result<u64, String> {
    let t = tok.strip_prefix('+').unwrap_or(tok);
    if t.starts_with('-') {
        return Err("is negative".to_string());
    }
    if t.contains(['e', 'E']) {
        let v: f64 = t.parse().map_err(|_| "is not a number".to_string())?;
        let ps = v * PS_PER_S as f64;
        if !(ps.is_finite() && ps >= 0.0 && ps < u64::MAX as f64) {
            return Err("is out of range".to_string());
        }
        return Ok(ps.round() as u64);
    }
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    if int.is_empty() && frac.is_empty() {
        return Err("is not a number".to_string());
    }
    if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return Err("is not a decimal number".to_string());
    }
    let whole: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| "is out of range".to_string())?
    };
    let mut frac_ps: u64 = 0;
    for i in 0..12 {
        let d = frac.as_bytes().get(i).map_or(0, |b| (b - b'0') as u64);
        frac_ps = frac_ps * 10 + d;
    }
    if frac.as_bytes().get(12).is_some_and(|&b| b >= b'5') {
        frac_ps += 1;
    }
    whole
        .checked_mul(PS_PER_S)
        .and_then(|w| w.checked_add(frac_ps))
        .ok_or_else(|| "is out of range".to_string())
}

/// Parse one integer field, naming `name:line` and the field on failure.
fn field<T: std::str::FromStr>(
    tok: &str,
    idx: usize,
    what: &str,
    name: &str,
    line: usize,
) -> Result<T, String> {
    tok.parse().map_err(|_| {
        format!(
            "{name}:{line}: field {idx} ({what}) `{tok}` is not a valid {}",
            std::any::type_name::<T>()
        )
    })
}

/// Parse an HPCC flow file. `name` (usually the path) prefixes error messages as `name:line`.
///
/// Returns the flows sorted by start time (stably, keeping file order at equal times) and a list
/// of warnings (stale count digits, ignored extra lines, unsorted input). Errors: a missing or
/// malformed count, fewer flow lines than declared, a line without exactly 6 fields, an invalid
/// field (ids `u32`, pg `u8`, dport `u16`, size `u64` ≥ 1, start a non-negative decimal in
/// seconds). Whether ids are hosts is not checked here: use [`parse_with`] and
/// [`check_endpoints`] to check them while the line numbers are known.
pub fn parse(text: &str, name: &str) -> Result<(Vec<FlowSpec>, Vec<String>), String> {
    parse_with(text, name, |_| Ok(()))
}

/// Like [`parse`], and also run `check` on every flow as its line is read (before sorting by
/// start time), so a flow it rejects is reported as `name:line: flow `…`: <check's message>`.
/// Typically `check` is [`check_endpoints`] against the topology.
pub fn parse_with(
    text: &str,
    name: &str,
    check: impl Fn(&FlowSpec) -> Result<(), String>,
) -> Result<(Vec<FlowSpec>, Vec<String>), String> {
    let mut warnings = Vec::new();
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty())
        .peekable();
    let Some((cl, count_line)) = lines.next() else {
        return Err(empty_file(name));
    };
    let (declared, count_str) = parse_count(count_line, name, cl)?;
    // traffic_gen.py stale digits on a line of their own.
    if let Some(&(l2, second)) = lines.peek()
        && is_stale_count_line(second)
    {
        warnings.push(stale_line_warning(name, l2, second));
        lines.next();
    }
    let cap = declared.min(text.len() as u64 / 12 + 1) as usize;
    let mut flows: Vec<FlowSpec> = Vec::with_capacity(cap);
    let mut line_of: Vec<usize> = Vec::with_capacity(cap);
    while (flows.len() as u64) < declared {
        let Some((ln, l)) = lines.next() else { break };
        flows.push(checked_flow_line(l, name, ln, &check)?);
        line_of.push(ln);
    }
    let found = flows.len() as u64;
    if let Some(w) = count_shortfall(name, cl, count_str, declared, found)? {
        warnings.push(w);
    }
    let extra = lines.count();
    if extra > 0 {
        warnings.push(extra_lines_warning(name, extra, declared));
    }
    if let Some(i) = flows.windows(2).position(|w| w[1].start_ps < w[0].start_ps) {
        warnings.push(unsorted_warning(name, line_of[i + 1]));
        flows.sort_by_key(|f| f.start_ps);
    }
    Ok((flows, warnings))
}

/// The error of a flow file without a non-blank line.
fn empty_file(name: &str) -> String {
    format!("{name}: empty flow file (expected the flow count on line 1)")
}

/// The flow count of the first non-blank line `count_line` (line `cl`): the declared count and
/// its text.
fn parse_count<'a>(count_line: &'a str, name: &str, cl: usize) -> Result<(u64, &'a str), String> {
    let ctoks: Vec<&str> = count_line.split_whitespace().collect();
    if ctoks.len() != 1 {
        return Err(format!(
            "{name}:{cl}: expected the flow count alone on the first line, found `{count_line}`"
        ));
    }
    let count_str = ctoks[0];
    let declared: u64 = count_str.parse().map_err(|_| {
        format!("{name}:{cl}: flow count `{count_str}` is not a non-negative integer")
    })?;
    Ok((declared, count_str))
}

/// Whether the non-blank line after the count holds stale digits of the count left by
/// `traffic_gen.py` (a single token): it is skipped.
fn is_stale_count_line(l: &str) -> bool {
    l.split_whitespace().count() == 1
}

/// The warning for the stale-digits line `l` (line `ln`) skipped.
fn stale_line_warning(name: &str, ln: usize, l: &str) -> String {
    format!("{name}:{ln}: skipped `{l}` (stale digits of the flow count left by traffic_gen.py)")
}

/// `found` flow lines followed a count of `declared` (line `cl`, text `count_str`): fine if
/// equal, a warning if the count is `found` followed by stale digits (`traffic_gen.py` wrote
/// "995" over "1000 "), an error otherwise.
fn count_shortfall(
    name: &str,
    cl: usize,
    count_str: &str,
    declared: u64,
    found: u64,
) -> Result<Option<String>, String> {
    if found >= declared {
        return Ok(None);
    }
    let real = found.to_string();
    if found > 0 && count_str.len() > real.len() && count_str.starts_with(&real) {
        Ok(Some(format!(
            "{name}:{cl}: flow count `{count_str}` taken as {found} (stale digits left by traffic_gen.py)"
        )))
    } else {
        Err(format!(
            "{name}: declares {declared} flows but only {found} flow lines follow"
        ))
    }
}

/// The warning for `extra` non-blank lines after the declared flows (ignored, as by HPCC).
fn extra_lines_warning(name: &str, extra: usize, declared: u64) -> String {
    format!("{name}: ignored {extra} line(s) after the {declared} declared flows")
}

/// The warning for a flow file not sorted by start time, naming the first flow (line `ln`)
/// that starts before the one above it.
fn unsorted_warning(name: &str, ln: usize) -> String {
    format!(
        "{name}:{ln}: flows are not sorted by start time; sorted them (HPCC requires sorted input)"
    )
}

/// Parse one flow line `l` (trimmed, non-blank; line `ln` of `name`):
/// `src dst pg dport size start_s`. Errors name `name:ln` and the field: not exactly 6
/// fields, ids not `u32`, pg not in 1..=7, dport not `u16`, size not a `u64` ≥ 1, start not a
/// non-negative decimal number of seconds.
pub fn parse_flow_line(l: &str, name: &str, ln: usize) -> Result<FlowSpec, String> {
    let t: Vec<&str> = l.split_whitespace().collect();
    if t.len() != 6 {
        return Err(format!(
            "{name}:{ln}: expected `src dst pg dport size start_s` (6 fields), found {}: `{l}`",
            t.len()
        ));
    }
    let src: u32 = field(t[0], 1, "src", name, ln)?;
    let dst: u32 = field(t[1], 2, "dst", name, ln)?;
    let prio: u8 = field(t[2], 3, "pg", name, ln)?;
    if prio == 0 || prio > 7 {
        // Queue 0 is the strict-priority control class; HPCC-sim has 8 queues (pg 1..=7).
        return Err(format!(
            "{name}:{ln}: field 3 (pg) = {prio} must be in 1..=7 (queue 0 is the control class)"
        ));
    }
    let dport: u16 = field(t[3], 4, "dport", name, ln)?;
    let size_bytes: u64 = field(t[4], 5, "size", name, ln)?;
    if size_bytes == 0 {
        return Err(format!(
            "{name}:{ln}: field 5 (size) must be at least 1 byte"
        ));
    }
    if size_bytes > crate::units::MAX_BYTES {
        // The cap of scenario sizes: beyond it a flow's ideal FCT overflows.
        return Err(format!(
            "{name}:{ln}: field 5 (size) = {size_bytes} is above the largest accepted size, 1 PB ({} bytes)",
            crate::units::MAX_BYTES
        ));
    }
    let start_ps = parse_seconds_ps(t[5])
        .map_err(|e| format!("{name}:{ln}: field 6 (start_time_s) `{}` {e}", t[5]))?;
    Ok(FlowSpec {
        src,
        dst,
        size_bytes,
        start_ps,
        prio,
        dport,
    })
}

/// [`parse_flow_line`], then `check` on the flow, whose refusal is reported as
/// `name:ln: flow `l`: <message>`.
fn checked_flow_line(
    l: &str,
    name: &str,
    ln: usize,
    check: &impl Fn(&FlowSpec) -> Result<(), String>,
) -> Result<FlowSpec, String> {
    let flow = parse_flow_line(l, name, ln)?;
    check(&flow).map_err(|e| format!("{name}:{ln}: flow `{l}`: {e}"))?;
    Ok(flow)
}

/// Why a flow file was refused by [`scan`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScanError {
    /// The file could not be read, or is not UTF-8 text (the messages of
    /// [`crate::fsutil::read_text`]): about the file as a whole, so a front end may name the
    /// key that gave its path.
    Read(String),
    /// The text is not a valid flow file (the message of [`parse_with`], naming `name:line`).
    Invalid(String),
}

impl ScanError {
    /// The message.
    pub fn message(&self) -> &str {
        match self {
            ScanError::Read(m) | ScanError::Invalid(m) => m,
        }
    }
}

/// What [`scan`] learned about a valid flow file, in constant memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowFileSummary {
    /// Flows in the file (the declared count, or fewer when stale digits were appended to it).
    pub flows: u64,
    /// Line (1-based) of the first flow that starts before the flow above it; `None` when the
    /// flows are sorted by start time.
    pub first_unsorted_line: Option<usize>,
    /// Earliest start of a flow, picoseconds; `None` without flows.
    pub earliest_start_ps: Option<u64>,
    /// Byte offset where the flow lines begin: after the count line and the stale-digits
    /// line, if any (blank lines may follow).
    pub data_offset: u64,
    /// Lines (1-based numbering) before [`FlowFileSummary::data_offset`].
    pub data_line: usize,
    /// Warnings, those of [`parse_with`] in the same order.
    pub warnings: Vec<String>,
    /// The flows' starts, sizes and gaps in file order, for the memory estimate
    /// ([`crate::runguard::estimate_from_shape`]): the run's order when they are sorted.
    pub shape: FlowShape,
}

impl FlowFileSummary {
    /// Whether the flows are sorted by start time (then their file order is the run's order).
    pub fn sorted(&self) -> bool {
        self.first_unsorted_line.is_none()
    }
}

/// The lines of a flow file read one at a time, with the UTF-8 and read errors of
/// [`crate::fsutil::read_text`].
struct Lines<R> {
    r: R,
    name: String,
    buf: Vec<u8>,
    /// Byte offset after the last line read.
    pos: u64,
    /// Number of the last line read (1-based).
    line: usize,
}

impl<R: BufRead> Lines<R> {
    fn new(r: R, name: &str, pos: u64, line: usize) -> Lines<R> {
        Lines {
            r,
            name: name.to_string(),
            buf: Vec::new(),
            pos,
            line,
        }
    }

    /// The next non-blank line, trimmed, with its number; `None` at the end of the file.
    fn next_line(&mut self) -> Result<Option<(usize, &str)>, String> {
        let (start, end) = loop {
            self.buf.clear();
            // At most one line of MAX_LINE_BYTES (and its line break): a file without line
            // breaks (`/dev/zero`) is refused at once instead of read into memory whole.
            let max = crate::fsutil::MAX_LINE_BYTES;
            let n = (&mut self.r)
                .take(max as u64 + 2)
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| crate::fsutil::describe("cannot read", Path::new(&self.name), &e))?;
            if n == 0 {
                return Ok(None);
            }
            if n > max + 1 || (n == max + 1 && !self.buf.ends_with(b"\n")) {
                return Err(format!(
                    "{}:{}: line longer than {max} bytes, the longest accepted (is it the right \
                     file?)",
                    self.name,
                    self.line + 1
                ));
            }
            self.pos += n as u64;
            self.line += 1;
            let text = match std::str::from_utf8(&self.buf) {
                Ok(t) => t,
                Err(e) => {
                    let bad = e.valid_up_to();
                    return Err(format!(
                        "{}:{}:{}: not UTF-8 text (byte 0x{:02x}); save the file as UTF-8",
                        self.name,
                        self.line,
                        bad + 1,
                        self.buf[bad]
                    ));
                }
            };
            // A UTF-8 byte-order mark (Windows editors) is not part of the first line.
            let text = if self.line == 1 && self.pos == n as u64 {
                text.strip_prefix('\u{feff}').unwrap_or(text)
            } else {
                text
            };
            let t = text.trim();
            if !t.is_empty() {
                let start = t.as_ptr() as usize - self.buf.as_ptr() as usize;
                break (start, start + t.len());
            }
        };
        let t = std::str::from_utf8(&self.buf[start..end]).map_err(|e| e.to_string())?;
        Ok(Some((self.line, t)))
    }

    /// Read the rest of the file: its first read or UTF-8 error, if any; else the number of
    /// non-blank lines left.
    fn drain(&mut self) -> Result<usize, String> {
        let mut n = 0;
        while self.next_line()?.is_some() {
            n += 1;
        }
        Ok(n)
    }
}

/// Check an HPCC flow file read from `reader` line by line, in constant memory (no text, no
/// list of flows): exactly the checks, errors and warnings of [`parse_with`] on the file's
/// text (read and UTF-8 errors as [`crate::fsutil::read_text`] gives them, before any other),
/// `check` run on every flow; returns the flow count, sortedness, earliest start, where
/// the flow lines begin and the flows' [`FlowShape`] ([`FlowFileSummary`]). `name` prefixes messages as `name:line`.
pub fn scan<R: BufRead>(
    reader: R,
    name: &str,
    check: impl Fn(&FlowSpec) -> Result<(), String>,
) -> Result<FlowFileSummary, ScanError> {
    let mut lines = Lines::new(reader, name, 0, 0);
    match scan_lines(&mut lines, name, &check) {
        Ok(s) => Ok(s),
        Err(ScanError::Invalid(e)) => {
            // A read or UTF-8 error anywhere in the file comes first, as with the whole text.
            lines.drain().map_err(ScanError::Read)?;
            Err(ScanError::Invalid(e))
        }
        Err(e) => Err(e),
    }
}

fn scan_lines<R: BufRead>(
    lines: &mut Lines<R>,
    name: &str,
    check: &impl Fn(&FlowSpec) -> Result<(), String>,
) -> Result<FlowFileSummary, ScanError> {
    let read = ScanError::Read;
    let invalid = ScanError::Invalid;
    let mut warnings = Vec::new();
    let Some((cl, count_line)) = lines.next_line().map_err(read)? else {
        return Err(invalid(empty_file(name)));
    };
    let (declared, count_str) = parse_count(count_line, name, cl).map_err(invalid)?;
    let count_str = count_str.to_string();
    let (mut data_offset, mut data_line) = (lines.pos, lines.line);
    // The line after the count: stale digits (skipped), or the first flow line (kept).
    let mut held: Option<(usize, String)> = None;
    if let Some((l2, second)) = lines.next_line().map_err(read)? {
        if is_stale_count_line(second) {
            warnings.push(stale_line_warning(name, l2, second));
            (data_offset, data_line) = (lines.pos, lines.line);
        } else {
            held = Some((l2, second.to_string()));
        }
    }
    let (mut found, mut prev) = (0u64, 0u64);
    let mut first_unsorted_line = None;
    let mut shape = FlowShape::new();
    while found < declared {
        let flow = match held.take() {
            Some((ln, l)) => checked_flow_line(&l, name, ln, check).map(|f| (ln, f)),
            None => match lines.next_line().map_err(read)? {
                Some((ln, l)) => checked_flow_line(l, name, ln, check).map(|f| (ln, f)),
                None => break,
            },
        };
        let (ln, f) = flow.map_err(invalid)?;
        if found > 0 && f.start_ps < prev && first_unsorted_line.is_none() {
            first_unsorted_line = Some(ln);
        }
        prev = f.start_ps;
        shape.add(f.start_ps, f.size_bytes);
        found += 1;
    }
    if let Some(w) = count_shortfall(name, cl, &count_str, declared, found).map_err(invalid)? {
        warnings.push(w);
    }
    let extra = usize::from(held.is_some()) + lines.drain().map_err(read)?;
    if extra > 0 {
        warnings.push(extra_lines_warning(name, extra, declared));
    }
    if let Some(ln) = first_unsorted_line {
        warnings.push(unsorted_warning(name, ln));
    }
    Ok(FlowFileSummary {
        flows: found,
        first_unsorted_line,
        earliest_start_ps: (found > 0).then(|| shape.first_start_ps()),
        data_offset,
        data_line,
        warnings,
        shape,
    })
}

/// [`scan`] the flow file at `path` (messages name it as displayed).
pub fn scan_file(
    path: &Path,
    check: impl Fn(&FlowSpec) -> Result<(), String>,
) -> Result<FlowFileSummary, ScanError> {
    let name = path.display().to_string();
    let f = std::fs::File::open(path)
        .map_err(|e| ScanError::Read(crate::fsutil::describe("cannot read", path, &e)))?;
    scan(BufReader::new(f), &name, check)
}

/// The flows of a flow file checked by [`scan`], read lazily from disk in file order, one
/// line at a time (a lazy [`super::stream::Source`]): memory is one line buffer, whatever the
/// file's length. A clone reads on from the same flow (it re-opens the file and seeks to the
/// same byte offset). A read error, or a line that no longer parses (the file changed after
/// it was checked), ends the flows; [`FileFlows::error`] says why.
pub struct FileFlows {
    path: Arc<PathBuf>,
    name: Arc<str>,
    /// Open on the first read, at `lines.pos`.
    lines: Option<Lines<BufReader<std::fs::File>>>,
    /// Byte offset of the next line to read.
    pos: u64,
    /// Number of the last line read.
    line: usize,
    /// Flows still to yield.
    remaining: u64,
    /// Why the flows ended early.
    error: Option<String>,
    /// Start of the last flow yielded, picoseconds (the file was checked sorted: a flow
    /// starting earlier means it changed since).
    last_start_ps: u64,
}

impl FileFlows {
    /// The `summary.flows` flows of the file at `path`, as [`scan_file`] found them
    /// (`summary` is its result for this file).
    pub fn new(path: &Path, summary: &FlowFileSummary) -> FileFlows {
        FileFlows {
            name: path.display().to_string().into(),
            path: Arc::new(path.to_path_buf()),
            lines: None,
            pos: summary.data_offset,
            line: summary.data_line,
            remaining: summary.flows,
            error: None,
            last_start_ps: 0,
        }
    }

    /// Flows not yet returned.
    pub fn remaining(&self) -> u64 {
        self.remaining
    }

    /// Why the flows ended before the count found by [`scan`]: a read error, or a line that
    /// is no longer valid (the file changed after it was checked).
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    fn read_next(&mut self) -> Result<Option<FlowSpec>, String> {
        if self.lines.is_none() {
            let describe =
                |e: std::io::Error| crate::fsutil::describe("cannot read", &self.path, &e);
            let mut f = std::fs::File::open(&*self.path).map_err(describe)?;
            f.seek(SeekFrom::Start(self.pos)).map_err(describe)?;
            self.lines = Some(Lines::new(
                BufReader::new(f),
                &self.name,
                self.pos,
                self.line,
            ));
        }
        let lines = self.lines.as_mut().expect("opened above");
        let next = lines.next_line()?.map(|(ln, l)| (ln, l.to_string()));
        (self.pos, self.line) = (lines.pos, lines.line);
        let Some((ln, l)) = next else {
            return Err(format!(
                "{}: ended {} flows early (the file changed after it was checked)",
                self.name, self.remaining
            ));
        };
        let f = parse_flow_line(&l, &self.name, ln)
            .map_err(|e| format!("{e} (the file changed after it was checked)"))?;
        if f.start_ps < self.last_start_ps {
            return Err(format!(
                "{}:{ln}: this flow starts before the one above it (the file changed after it \
                 was checked sorted)",
                self.name
            ));
        }
        self.last_start_ps = f.start_ps;
        Ok(Some(f))
    }
}

impl Clone for FileFlows {
    fn clone(&self) -> FileFlows {
        FileFlows {
            path: self.path.clone(),
            name: self.name.clone(),
            lines: None,
            pos: self.pos,
            line: self.line,
            remaining: self.remaining,
            error: self.error.clone(),
            last_start_ps: self.last_start_ps,
        }
    }
}

impl Iterator for FileFlows {
    type Item = FlowSpec;

    fn next(&mut self) -> Option<FlowSpec> {
        if self.remaining == 0 || self.error.is_some() {
            return None;
        }
        match self.read_next() {
            Ok(f) => {
                self.remaining -= 1;
                f
            }
            Err(e) => {
                self.error = Some(e);
                self.lines = None;
                None
            }
        }
    }
}

/// Read and [`parse`] a flow file (errors and warnings name the path).
pub fn load(path: &Path) -> Result<(Vec<FlowSpec>, Vec<String>), String> {
    let name = path.display().to_string();
    let text = crate::fsutil::read_text_lines(path)?;
    parse(&text, &name)
}

/// Format flows as an HPCC flow file: the count, then `src dst pg dport size start_s` per flow
/// in the given order, with the start in seconds as `%.9f` (rounded to the nearest ns).
pub fn write(flows: &[FlowSpec]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(16 + flows.len() * 40);
    let _ = writeln!(s, "{}", flows.len());
    for f in flows {
        let ns = f.start_ps / 1000 + u64::from(f.start_ps % 1000 >= 500);
        let _ = writeln!(
            s,
            "{} {} {} {} {} {}.{:09}",
            f.src,
            f.dst,
            f.prio,
            f.dport,
            f.size_bytes,
            ns / 1_000_000_000,
            ns % 1_000_000_000
        );
    }
    s
}

/// Write flows to `path` in the HPCC flow-file format (see [`write()`]).
pub fn save(path: &Path, flows: &[FlowSpec]) -> Result<(), String> {
    // Atomically (temp file, then rename): an interrupted `sfc trace` leaves the old file or
    // the complete new one, never a truncated flow file a later run would read.
    crate::metrics::output::write_atomic(path, write(flows).as_bytes())
        .map_err(|e| format!("{}: cannot write: {e}", path.display()))
}

/// Check one flow's endpoints against `topo`: both must be hosts, and they must differ.
/// Errors say which endpoint is wrong and why (see [`TopologySpec::check_host`]); the caller
/// adds where the flow came from.
pub fn check_endpoints(f: &FlowSpec, topo: &TopologySpec) -> Result<(), String> {
    topo.check_host(f.src).map_err(|e| format!("source {e}"))?;
    topo.check_host(f.dst)
        .map_err(|e| format!("destination {e}"))?;
    if f.src == f.dst {
        return Err(format!(
            "source and destination are the same host ({}); a flow needs two different hosts",
            f.src
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::packet::{DPORT_BACKGROUND, DPORT_INCAST};
    use crate::units::{NS, SEC};

    #[test]
    fn seconds_exact() {
        assert_eq!(parse_seconds_ps("2.000000000"), Ok(2 * SEC));
        assert_eq!(parse_seconds_ps("2.000000001"), Ok(2 * SEC + NS));
        assert_eq!(parse_seconds_ps("2.123456789"), Ok(2_123_456_789 * NS));
        assert_eq!(parse_seconds_ps("0.000000000001"), Ok(1));
        assert_eq!(parse_seconds_ps("0.0000000000015"), Ok(2));
        assert_eq!(parse_seconds_ps("0.0000000000014999"), Ok(1));
        assert_eq!(parse_seconds_ps("3"), Ok(3 * SEC));
        assert_eq!(parse_seconds_ps("3."), Ok(3 * SEC));
        assert_eq!(parse_seconds_ps(".5"), Ok(SEC / 2));
        assert_eq!(parse_seconds_ps("+1.5"), Ok(3 * SEC / 2));
        assert_eq!(parse_seconds_ps("2e-3"), Ok(2_000_000_000));
        assert_eq!(parse_seconds_ps("1.5E0"), Ok(3 * SEC / 2));
        // The simulator's time range ends at 1e7 s (the u64 picosecond range, at 1.8e7 s,
        // accepted 18446744.07370955 s before).
        assert_eq!(parse_seconds_ps("10000000"), Ok(10_000_000 * SEC));
        for bad in ["10000000.000000000001", "18446744.07370955", "1.1e7"] {
            let e = parse_seconds_ps(bad).unwrap_err();
            assert!(e.contains("time range"), "{bad}: {e}");
        }
        for bad in ["-1", "1.2.3", "abc", ".", "", "1e400", "99999999999", "1x"] {
            assert!(parse_seconds_ps(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn parse_basic_and_round_trip() {
        let text =
            "3\r\n0 1 3 100 1000 2.000000000\r\n2 1 3 200 5 2.000001500\r\n1 0 3 100 77 2.5\r\n";
        let (f, w) = parse(text, "flow.txt").unwrap();
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(f.len(), 3);
        assert_eq!(
            f[1],
            FlowSpec {
                src: 2,
                dst: 1,
                size_bytes: 5,
                start_ps: 2 * SEC + 1500 * NS,
                prio: 3,
                dport: DPORT_INCAST
            }
        );
        assert_eq!(f[2].dport, DPORT_BACKGROUND);
        let out = write(&f);
        assert_eq!(out.lines().next(), Some("3"));
        assert!(out.contains("1 0 3 100 77 2.500000000\n"));
        let (g, w) = parse(&out, "rt").unwrap();
        assert!(w.is_empty());
        assert_eq!(f, g);
    }

    /// 10 ms of WebSearch Poisson traffic at 50 % among 8 hosts from 2 s, sorted.
    fn generated() -> Vec<FlowSpec> {
        let cdf = crate::workload::cdf::builtin("websearch").unwrap();
        let hosts: Vec<u32> = (0..8).collect();
        crate::workload::traffic::poisson(&hosts, &cdf, 0.5, 100_000_000_000, 2 * SEC, SEC / 100, 5)
            .unwrap()
    }

    #[test]
    fn round_trip_generated() {
        let flows = generated();
        assert!(flows.len() > 100);
        let (back, w) = parse(&write(&flows), "gen").unwrap();
        assert!(w.is_empty());
        assert_eq!(back, flows);
        let dir = std::env::temp_dir().join(format!("sfc_flow_file_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("flow.txt");
        save(&p, &flows).unwrap();
        assert_eq!(load(&p).unwrap().0, flows);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn write_rounds_to_ns() {
        let f = FlowSpec {
            src: 1,
            dst: 2,
            size_bytes: 9,
            start_ps: 1_999_999_999_999,
            prio: 3,
            dport: 100,
        };
        assert_eq!(write(&[f]), "1\n1 2 3 100 9 2.000000000\n");
    }

    #[test]
    fn traffic_gen_quirks() {
        // Stale digits on their own line.
        let (f, w) = parse("2\n0\n0 1 3 100 10 2.0\n1 0 3 100 10 2.1\n", "q").unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("q:2"), "{w:?}");
        // Stale digits appended to the count ("2" written over "10 ").
        let (f, w) = parse("20 \n0 1 3 100 10 2.0\n1 0 3 100 10 2.1\n", "q").unwrap();
        assert_eq!(f.len(), 2);
        assert!(w[0].contains("q:1") && w[0].contains("stale"), "{w:?}");
        // Extra lines are ignored with a warning.
        let (f, w) = parse("1\n0 1 3 100 10 2.0\n1 0 3 100 10 2.1\nnotes here\n", "q").unwrap();
        assert_eq!(f.len(), 1);
        assert!(w[0].contains("ignored 2"), "{w:?}");
        // Unsorted input is sorted stably with a warning naming the first offending line.
        let (f, w) = parse(
            "3\n0 1 3 100 1 2.5\n1 0 3 100 2 2.1\n2 0 3 100 3 2.1\n",
            "q",
        )
        .unwrap();
        assert_eq!(
            f.iter().map(|x| x.size_bytes).collect::<Vec<_>>(),
            vec![2, 3, 1]
        );
        assert!(w[0].contains("q:3"), "{w:?}");
        let (f, _) = parse("0\n", "q").unwrap();
        assert!(f.is_empty());
    }

    /// Malformed flow files and a part of the message each must give.
    const ERROR_CASES: [(&str, &str); 13] = [
        ("", "q:"),
        ("x\n", "q:1"),
        ("2 3\n", "q:1"),
        ("2\n0 1 3 100 10 2.0\n", "only 1"),
        ("3\n0 1 3 100 10 2.0\n", "only 1"),
        ("1\n0 1 3 100 10\n", "q:2"),
        ("1\n\n0 -1 3 100 10 2.0\n", "q:3: field 2 (dst)"),
        ("1\n0 1 300 100 10 2.0\n", "field 3 (pg)"),
        ("1\n0 1 3 70000 10 2.0\n", "field 4 (dport)"),
        ("1\n0 1 3 100 0 2.0\n", "field 5 (size)"),
        ("1\n0 1 3 100 1.5 2.0\n", "field 5 (size)"),
        ("1\n0 1 3 100 10 -2.0\n", "field 6 (start_time_s)"),
        ("2\n0 1 3 100 10 2.0\n0 1 3 100 10 zz\n", "q:3: field 6"),
    ];

    #[test]
    fn errors_name_line_and_field() {
        for (text, want) in ERROR_CASES {
            let e = parse(text, "q").unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn endpoint_errors_name_the_line_before_sorting() {
        // Star of 2 hosts (0, 1) and a switch (2).
        let topo = crate::topology::shapes::star(2, 100_000_000_000, 1_000_000).unwrap();
        let check = |f: &FlowSpec| check_endpoints(f, &topo);
        let ok = "2\n0 1 3 100 10 2.5\n1 0 3 100 10 2.1\n";
        let (f, w) = parse_with(ok, "q", check).unwrap();
        assert_eq!(f[0].src, 1, "sorted by start time");
        assert_eq!(w.len(), 1, "{w:?}");
        // The bad flow is on line 3 but starts first.
        let e = parse_with("2\n0 1 3 100 10 2.5\n0 2 3 100 10 2.1\n", "q", check).unwrap_err();
        assert!(
            e.starts_with("q:3: ") && e.contains("destination node 2 is a switch, not a host"),
            "{e}"
        );
        let e = parse_with("1\n9 1 3 100 10 2.0\n", "q", check).unwrap_err();
        assert!(e.starts_with("q:2: ") && e.contains("source node 9"), "{e}");
        let e = parse_with("1\n1 1 3 100 10 2.0\n", "q", check).unwrap_err();
        assert!(e.starts_with("q:2: ") && e.contains("same host"), "{e}");
    }

    /// Valid or odd flow files: the `traffic_gen.py` quirks, extra lines, blank lines, CRLF,
    /// sorted and unsorted, endpoints the star of [`star2`] refuses.
    const ODD_CASES: [&str; 19] = [
        "3\r\n0 1 3 100 1000 2.000000000\r\n2 1 3 200 5 2.000001500\r\n1 0 3 100 77 2.5\r\n",
        "2\n0\n0 1 3 100 10 2.0\n1 0 3 100 10 2.1\n",
        "20 \n0 1 3 100 10 2.0\n1 0 3 100 10 2.1\n",
        "20 \n\n0 1 3 100 10 2.0\n\n1 0 3 100 10 2.1",
        "1\n0 1 3 100 10 2.0\n1 0 3 100 10 2.1\nnotes here\n",
        "3\n0 1 3 100 1 2.5\n1 0 3 100 2 2.1\n2 0 3 100 3 2.1\n",
        "3\n0 1 3 100 1 2.5\n1 0 3 100 2 2.5\n1 0 3 100 3 2.6\n",
        "4\n1 0 3 100 1 2.5\n0 1 3 100 2 2.5\n1 0 3 100 3 2.1\n0 1 3 100 4 2.0\n",
        "0\n",
        "0\n5\n",
        "0\n0 1 3 100 10 2.0\n\n",
        "1\n7\n",
        "1\n7\n0 1 3 100 10 2.0\n8\n",
        "  \n\n 2 \n \t0 1 3 100 10 2.0 \r\n1 0 3 100 10 2.1\n\n\n",
        "2\n0 1 3 100 10 2.5\n0 2 3 100 10 2.1\n",
        "1\n9 1 3 100 10 2.0\n",
        "1\n1 1 3 100 10 2.0\n",
        "2\n0 1 3 100 10 2.0\n1 0 3 100 10 2.0\n0 1",
        "2\r\n0 1 3 100 10 2.0\r\n1 0 3 100 10 2.0\r",
    ];

    /// Star of 2 hosts (0, 1) and a switch (2).
    fn star2() -> TopologySpec {
        crate::topology::shapes::star(2, 100_000_000_000, 1_000_000).unwrap()
    }

    /// A fresh temp file holding `bytes`.
    fn temp_file(bytes: &[u8]) -> PathBuf {
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p =
            std::env::temp_dir().join(format!("sfc_flow_scan_{}_{seq}.txt", std::process::id()));
        std::fs::write(&p, bytes).unwrap();
        p
    }

    /// [`scan`] of `text` agrees with [`parse_with`] (same error, or same warnings and the
    /// summary of the same flows); returns the summary.
    fn scan_agrees(
        text: &str,
        check: &impl Fn(&FlowSpec) -> Result<(), String>,
    ) -> Option<FlowFileSummary> {
        let listed = parse_with(text, "q", check);
        let scanned = scan(text.as_bytes(), "q", check);
        match (listed, scanned) {
            (Err(a), Err(b)) => {
                assert_eq!(ScanError::Invalid(a), b, "{text:?}");
                None
            }
            (Ok((flows, warnings)), Ok(s)) => {
                assert_eq!(s.warnings, warnings, "{text:?}");
                assert_eq!(s.flows, flows.len() as u64, "{text:?}");
                let unsorted = warnings.iter().any(|w| w.contains("not sorted"));
                assert_eq!(s.sorted(), !unsorted, "{text:?}");
                assert_eq!(
                    s.earliest_start_ps,
                    flows.iter().map(|f| f.start_ps).min(),
                    "{text:?}"
                );
                // The shape of the list (sorted by start time): the scan's for a sorted file;
                // for an unsorted one, the same count, starts and bytes, not sorted.
                let listed = FlowShape::of(&flows);
                if s.sorted() {
                    assert_eq!(s.shape, listed, "{text:?}");
                } else {
                    let key = |x: &FlowShape| {
                        (
                            x.flows(),
                            x.first_start_ps(),
                            x.last_start_ps(),
                            x.total_bytes(),
                        )
                    };
                    assert_eq!(key(&s.shape), key(&listed), "{text:?}");
                    assert!(!s.shape.sorted(), "{text:?}");
                }
                Some(s)
            }
            (a, b) => panic!("{text:?}: parse_with {a:?}, scan {b:?}"),
        }
    }

    #[test]
    fn scan_agrees_with_parse_with() {
        let topo = star2();
        let endpoints = |f: &FlowSpec| check_endpoints(f, &topo);
        let any = |_: &FlowSpec| Ok(());
        let mut sorted = 0;
        let mut unsorted = 0;
        for text in ERROR_CASES.iter().map(|c| c.0).chain(ODD_CASES) {
            for s in [scan_agrees(text, &any), scan_agrees(text, &endpoints)]
                .into_iter()
                .flatten()
            {
                if s.sorted() {
                    sorted += 1;
                } else {
                    unsorted += 1;
                }
            }
        }
        assert!(sorted > 10 && unsorted >= 4, "{sorted} {unsorted}");
        // Generated files, sorted and not.
        let mut flows = generated();
        let s = scan_agrees(&write(&flows), &any).unwrap();
        assert!(s.sorted() && s.flows > 100);
        flows.swap(10, 20);
        let s = scan_agrees(&write(&flows), &any).unwrap();
        // Flow 11 (line 13) now starts before flow 10, which took flow 20's start.
        assert_eq!(s.first_unsorted_line, Some(13));
    }

    #[test]
    fn byte_order_mark_is_not_part_of_the_first_line() {
        let plain = "2\n0 1 3 100 10 2.0\n1 0 3 100 20 2.5\n";
        let bom = format!("\u{feff}{plain}");
        let a = scan(plain.as_bytes(), "q", |_| Ok(())).unwrap();
        let b = scan(bom.as_bytes(), "q", |_| Ok(())).unwrap();
        // The same flows; only the byte offset of the flow lines moves by the mark's 3 bytes.
        assert_eq!((b.flows, b.data_offset), (2, a.data_offset + 3));
        assert_eq!(
            FlowFileSummary {
                data_offset: a.data_offset,
                ..b
            },
            a
        );
        // Read whole, the text has no mark, and parses as the plain file.
        let text = crate::fsutil::text_from_bytes(bom.into_bytes(), "q").unwrap();
        assert_eq!(parse(&text, "q").unwrap(), parse(plain, "q").unwrap());
    }

    #[test]
    fn scan_reports_read_errors_as_read_text() {
        // Not UTF-8: the position of read_text's message, even after a malformed line.
        for bytes in [
            &b"2\n0 1 3 100 10 2.0\n1 0 3 100 10 2\xff.1\n"[..],
            b"2\n0 1 3 100 10 x\n1 0 3 100 10 2.1\n\n\xc3",
            b"\xc3\x28",
            b"1\n0 1 3 100 10 2.0\nnote \xe2\x82\n",
        ] {
            let want = crate::fsutil::text_from_bytes(bytes.to_vec(), "q").unwrap_err();
            assert_eq!(scan(bytes, "q", |_| Ok(())), Err(ScanError::Read(want)));
            let p = temp_file(bytes);
            let want = crate::fsutil::read_text(&p).unwrap_err();
            assert_eq!(scan_file(&p, |_| Ok(())), Err(ScanError::Read(want)));
            std::fs::remove_file(&p).ok();
        }
        let missing = std::env::temp_dir().join("sfc_flow_scan_no_such_file.txt");
        let want = crate::fsutil::read_text(&missing).unwrap_err();
        assert_eq!(scan_file(&missing, |_| Ok(())), Err(ScanError::Read(want)));
        let dir = std::env::temp_dir();
        let want = crate::fsutil::read_text(&dir).unwrap_err();
        assert_eq!(scan_file(&dir, |_| Ok(())).unwrap_err().message(), want);
    }

    /// The flows a [`FileFlows`] of `text` (written to a file) yields, checked against
    /// [`parse_with`]'s list and against clones taken after every flow.
    fn lazy_equals_list(text: &str) -> usize {
        let p = temp_file(text.as_bytes());
        let (want, _) = parse(text, "q").unwrap();
        let s = scan_file(&p, |_| Ok(())).unwrap();
        assert!(s.sorted(), "{text:?}");
        let mut lazy = FileFlows::new(&p, &s);
        assert_eq!(lazy.clone().collect::<Vec<_>>(), want, "{text:?}");
        for i in 0..want.len() {
            assert_eq!(lazy.remaining(), (want.len() - i) as u64);
            // A clone in the middle reads on from the same flow.
            let rest: Vec<FlowSpec> = lazy.clone().collect();
            assert_eq!(rest, want[i..], "{text:?} after {i}");
            assert_eq!(lazy.next().as_ref(), Some(&want[i]));
        }
        assert_eq!(lazy.next(), None);
        assert_eq!(lazy.error(), None);
        // Through a stream, as `sfc hpcc` takes them.
        let st = super::super::stream::FlowStream::new(vec![super::super::stream::Source::file(
            FileFlows::new(&p, &s),
        )]);
        assert_eq!(st.capacity_hint(), want.len());
        assert_eq!(st.clone().into_vec(), want);
        std::fs::remove_file(&p).ok();
        want.len()
    }

    #[test]
    fn lazy_file_flows_equal_the_list() {
        let mut n = 0;
        for text in ODD_CASES {
            if parse(text, "q").is_ok_and(|(_, w)| !w.iter().any(|w| w.contains("not sorted"))) {
                n += lazy_equals_list(text);
            }
        }
        assert!(n > 10, "{n}");
        let cdf = crate::workload::cdf::builtin("hadoop").unwrap();
        let hosts: Vec<u32> = (0..16).collect();
        let flows = crate::workload::traffic::poisson(
            &hosts,
            &cdf,
            0.7,
            100_000_000_000,
            2 * SEC,
            SEC / 200,
            9,
        )
        .unwrap();
        assert!(flows.len() > 500);
        let mut text = write(&flows);
        text.insert_str(text.find('\n').unwrap(), "\n7");
        assert_eq!(lazy_equals_list(&text), flows.len());
    }

    #[test]
    fn lazy_file_flows_report_a_changed_file() {
        let text = "3\n0 1 3 100 10 2.0\n1 0 3 100 10 2.1\n1 0 3 100 10 2.2\n";
        let p = temp_file(text.as_bytes());
        let s = scan_file(&p, |_| Ok(())).unwrap();
        let mut lazy = FileFlows::new(&p, &s);
        assert!(lazy.next().is_some());
        let clone = lazy.clone();
        // Truncated after the second flow, then a bad third line.
        std::fs::write(&p, "3\n0 1 3 100 10 2.0\n1 0 3 100 10 2.1\n").unwrap();
        assert!(clone.clone().nth(1).is_none());
        let mut c = clone.clone();
        assert!(c.next().is_some() && c.next().is_none());
        assert!(
            c.error().unwrap().contains("ended 1 flows early"),
            "{:?}",
            c.error()
        );
        std::fs::write(
            &p,
            "3\n0 1 3 100 10 2.0\n1 0 3 100 10 2.1\n1 0 3 100 10 z\n",
        )
        .unwrap();
        let mut st =
            super::super::stream::FlowStream::new(vec![super::super::stream::Source::file(clone)]);
        assert_eq!(st.by_ref().count(), 1);
        let e = st.error().unwrap();
        assert!(e.contains(":4: field 6") && e.contains("changed"), "{e}");
        // Rewritten in place with a start time going back: the flows stop there.
        std::fs::write(
            &p,
            "3\n0 1 3 100 10 2.0\n1 0 3 100 10 2.1\n1 0 3 100 10 1.5\n",
        )
        .unwrap();
        let mut back = lazy.clone();
        assert!(back.next().is_some() && back.next().is_none());
        let e = back.error().unwrap();
        assert!(e.contains(":4:") && e.contains("starts before"), "{e}");
        std::fs::remove_file(&p).ok();
        let mut gone = lazy.clone();
        assert!(gone.next().is_none());
        assert!(
            gone.error().unwrap().contains("cannot read"),
            "{:?}",
            gone.error()
        );
    }
}
