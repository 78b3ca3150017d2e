//! Flow-size distributions given as empirical CDFs.
//!
//! Two file formats are understood:
//! - **HPCC percent format** (`traffic_gen/*.txt` of the HPCC simulator): lines
//!   `size_bytes cumulative_percent`, first percent 0, last 100. Sampling inverts the
//!   piecewise-linear CDF exactly like HPCC's `custom_rand.py` ([`Interp::Linear`]).
//! - **Homa format** (the Homa/ns-2 workload files): the first line is the mean, then lines
//!   `size cumulative_fraction`. Sampling returns the smallest listed size whose cumulative
//!   probability reaches the uniform variate ([`Interp::Step`]).
//!
//! Internally every CDF keeps the cumulative values on the scale of its source file (percent or
//! fraction) so that the Linear inverse performs the very same arithmetic as `custom_rand.py`.

use crate::rng::Rng;
use std::path::Path;

/// How a [`SizeCdf`] is inverted when sampling (and read by [`SizeCdf::cdf_at`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interp {
    /// HPCC `custom_rand.py`: piecewise-linear interpolation between the points (a continuous
    /// distribution of sizes between listed points), then truncation to whole bytes.
    Linear,
    /// Homa style: a discrete distribution; the result is the smallest listed size whose
    /// cumulative probability is ≥ the uniform variate.
    Step,
}

/// File format of a CDF file, for [`SizeCdf::load`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CdfFormat {
    /// HPCC percent format (`size_bytes cumulative_percent`), sampled with [`Interp::Linear`].
    Hpcc,
    /// Homa format (first line = mean, then `size cumulative_fraction`), sampled with
    /// [`Interp::Step`]; sizes are multiplied by `unit_bytes` (1 for byte-sized files, the packet
    /// payload size for files given in packets).
    Homa {
        /// Bytes per size unit of the file.
        unit_bytes: f64,
    },
}

/// A validated flow-size distribution: points `(size_bytes, cumulative probability)` with both
/// coordinates non-decreasing and the last probability equal to 1.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeCdf {
    /// Sizes in bytes (non-decreasing, ≥ 0).
    xs: Vec<f64>,
    /// Cumulative values on the source scale (`0..=y_scale`, non-decreasing, last = `y_scale`).
    ys: Vec<f64>,
    /// 100 for percent files, 1 for fraction files.
    y_scale: f64,
    interp: Interp,
}

/// Parse one non-negative finite number, naming `name:line` and the column on failure.
fn parse_num(tok: &str, what: &str, name: &str, line: usize) -> Result<f64, String> {
    let v: f64 = tok
        .parse()
        .map_err(|_| format!("{name}:{line}: {what} `{tok}` is not a number"))?;
    if !v.is_finite() {
        return Err(format!("{name}:{line}: {what} `{tok}` is not finite"));
    }
    if v < 0.0 {
        return Err(format!("{name}:{line}: {what} `{tok}` is negative"));
    }
    Ok(v)
}

/// Non-empty, non-comment lines with their 1-based line numbers (CRLF tolerated).
fn content_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().filter_map(|(i, l)| {
        let l = l.split('#').next().unwrap_or("").trim();
        (!l.is_empty()).then_some((i + 1, l))
    })
}

/// Parse the `size value` rows of a CDF file; returns (size, value, line) triples.
fn parse_rows<'a>(
    lines: impl Iterator<Item = (usize, &'a str)>,
    name: &str,
    col2: &str,
) -> Result<Vec<(f64, f64, usize)>, String> {
    let mut rows = Vec::new();
    for (ln, l) in lines {
        let toks: Vec<&str> = l.split_whitespace().collect();
        if toks.len() != 2 {
            return Err(format!(
                "{name}:{ln}: expected `size {col2}`, found {} field(s): `{l}`",
                toks.len()
            ));
        }
        let x = parse_num(toks[0], "size", name, ln)?;
        let y = parse_num(toks[1], col2, name, ln)?;
        rows.push((x, y, ln));
    }
    Ok(rows)
}

/// Check monotonicity and range of parsed rows (cumulative values on a `0..=scale` scale).
fn check_rows(
    rows: &[(f64, f64, usize)],
    scale: f64,
    name: &str,
    col2: &str,
) -> Result<(), String> {
    if rows.len() < 2 {
        return Err(format!(
            "{name}: a CDF needs at least two points, found {}",
            rows.len()
        ));
    }
    for (i, &(x, y, ln)) in rows.iter().enumerate() {
        if y > scale {
            return Err(format!("{name}:{ln}: {col2} {y} exceeds {scale}"));
        }
        // The largest message any scenario accepts (`units::MAX_BYTES`, 1e6 GB).
        if x > crate::units::MAX_BYTES as f64 {
            return Err(format!(
                "{name}:{ln}: size {x} B is above the largest accepted message, 1e15 B (1e6 GB)"
            ));
        }
        if i > 0 {
            let (px, py, _) = rows[i - 1];
            if x < px {
                return Err(format!(
                    "{name}:{ln}: size {x} is smaller than the previous size {px}"
                ));
            }
            if y < py {
                return Err(format!(
                    "{name}:{ln}: {col2} {y} is smaller than the previous {col2} {py}"
                ));
            }
        }
    }
    let &(last_x, last_y, last_ln) = rows.last().unwrap_or(&(0.0, 0.0, 0));
    if last_y != scale {
        return Err(format!(
            "{name}:{last_ln}: the last {col2} must be {scale}, found {last_y}"
        ));
    }
    if last_x <= 0.0 {
        return Err(format!(
            "{name}:{last_ln}: the largest size must be positive"
        ));
    }
    Ok(())
}

impl SizeCdf {
    /// Parse an HPCC percent-format CDF (`size_bytes cumulative_percent` per line; first percent
    /// 0, last 100; both columns non-decreasing). Blank lines, `#` comments and CRLF are accepted.
    /// Errors name `name:line`. The result samples with [`Interp::Linear`].
    pub fn parse_hpcc(text: &str, name: &str) -> Result<SizeCdf, String> {
        let rows = parse_rows(content_lines(text), name, "percent")?;
        check_rows(&rows, 100.0, name, "percent")?;
        let (_, y0, ln0) = rows[0];
        if y0 != 0.0 {
            return Err(format!(
                "{name}:{ln0}: the first percent must be 0, found {y0}"
            ));
        }
        Ok(SizeCdf {
            xs: rows.iter().map(|r| r.0).collect(),
            ys: rows.iter().map(|r| r.1).collect(),
            y_scale: 100.0,
            interp: Interp::Linear,
        })
    }

    /// Parse a Homa-format CDF: the first content line is the mean (checked to be a number, then
    /// ignored), then `size cumulative_fraction` lines (fractions in `[0, 1]`, last 1). Sizes are
    /// multiplied by `unit_bytes` (e.g. the packet payload size for files in packets). If the first
    /// fraction is above 0, that probability mass is placed at the first size. Errors name
    /// `name:line`. The result samples with [`Interp::Step`].
    pub fn parse_homa(text: &str, name: &str, unit_bytes: f64) -> Result<SizeCdf, String> {
        if !(unit_bytes.is_finite() && unit_bytes > 0.0) {
            return Err(format!(
                "{name}: unit_bytes must be positive, got {unit_bytes}"
            ));
        }
        let mut lines = content_lines(text);
        let Some((ln, first)) = lines.next() else {
            return Err(format!("{name}: empty CDF file"));
        };
        let toks: Vec<&str> = first.split_whitespace().collect();
        if toks.len() != 1 {
            return Err(format!(
                "{name}:{ln}: expected the mean on the first line of a Homa CDF, found `{first}`"
            ));
        }
        parse_num(toks[0], "mean", name, ln)?;
        let mut rows = parse_rows(lines, name, "fraction")?;
        // Tolerate a final fraction printed with rounding noise (e.g. 0.9999999999).
        if let Some(last) = rows.last_mut()
            && (last.1 - 1.0).abs() <= 1e-9
        {
            last.1 = 1.0;
        }
        check_rows(&rows, 1.0, name, "fraction")?;
        let mut xs: Vec<f64> = rows.iter().map(|r| r.0 * unit_bytes).collect();
        if let Some((x, &(_, _, ln))) = xs
            .iter()
            .zip(&rows)
            .find(|(x, _)| **x > crate::units::MAX_BYTES as f64)
        {
            return Err(format!(
                "{name}:{ln}: size {x} B (after unit_bytes {unit_bytes}) is above the largest accepted message, 1e15 B (1e6 GB)"
            ));
        }
        let mut ys: Vec<f64> = rows.iter().map(|r| r.1).collect();
        if ys[0] > 0.0 {
            xs.insert(0, xs[0]);
            ys.insert(0, 0.0);
        }
        Ok(SizeCdf {
            xs,
            ys,
            y_scale: 1.0,
            interp: Interp::Step,
        })
    }

    /// Build a CDF from `(size_bytes, cumulative_probability)` points (probabilities in `[0, 1]`,
    /// both coordinates non-decreasing, last probability 1). With [`Interp::Linear`] the first
    /// probability must be 0; with [`Interp::Step`] a positive first probability is mass at the
    /// first size.
    pub fn from_points(points: &[(f64, f64)], interp: Interp) -> Result<SizeCdf, String> {
        let name = "points";
        let mut rows = Vec::with_capacity(points.len());
        for (i, &(x, y)) in points.iter().enumerate() {
            if !(x.is_finite() && y.is_finite() && x >= 0.0 && y >= 0.0) {
                return Err(format!(
                    "{name}:{}: ({x}, {y}) must be finite and non-negative",
                    i + 1
                ));
            }
            rows.push((x, y, i + 1));
        }
        check_rows(&rows, 1.0, name, "probability")?;
        let mut xs: Vec<f64> = rows.iter().map(|r| r.0).collect();
        let mut ys: Vec<f64> = rows.iter().map(|r| r.1).collect();
        if ys[0] > 0.0 {
            if interp == Interp::Linear {
                return Err(format!(
                    "{name}:1: the first probability must be 0 for linear interpolation"
                ));
            }
            xs.insert(0, xs[0]);
            ys.insert(0, 0.0);
        }
        Ok(SizeCdf {
            xs,
            ys,
            y_scale: 1.0,
            interp,
        })
    }

    /// Read and parse a CDF file in the given format (errors name the path and line).
    pub fn load(path: &Path, format: CdfFormat) -> Result<SizeCdf, String> {
        let name = path.display().to_string();
        let text = crate::fsutil::read_text(path)?;
        match format {
            CdfFormat::Hpcc => SizeCdf::parse_hpcc(&text, &name),
            CdfFormat::Homa { unit_bytes } => SizeCdf::parse_homa(&text, &name, unit_bytes),
        }
    }

    /// The interpolation mode used by [`SizeCdf::sample`].
    pub fn interp(&self) -> Interp {
        self.interp
    }

    /// The same distribution points sampled with another interpolation mode.
    pub fn with_interp(mut self, interp: Interp) -> SizeCdf {
        self.interp = interp;
        self
    }

    /// The points as `(size_bytes, cumulative probability in [0, 1])`.
    pub fn points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.xs
            .iter()
            .zip(&self.ys)
            .map(|(&x, &y)| (x, y / self.y_scale))
    }

    /// Largest size of the distribution, bytes.
    pub fn max_bytes(&self) -> f64 {
        self.xs.last().copied().unwrap_or(0.0)
    }

    /// Draw one flow size in bytes (≥ 1).
    ///
    /// Linear: `u = scale·U[0,1)` (scale 100 for percent files, as `custom_rand.py`), the first
    /// point `i ≥ 1` with `y_i ≥ u` selects the segment, the size is linearly interpolated and
    /// truncated to an integer, minimum 1. Step: `u ∈ (0, 1]`, the smallest listed size with
    /// cumulative probability ≥ `u`, rounded to whole bytes, minimum 1.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let n = self.xs.len();
        let v = match self.interp {
            Interp::Linear => {
                let u = rng.f64() * self.y_scale;
                // First i ≥ 1 with ys[i] ≥ u (ys[last] = scale > u, so i < n).
                let i = (1 + self.ys[1..].partition_point(|&y| y < u)).min(n - 1);
                let (x0, y0, x1, y1) = (self.xs[i - 1], self.ys[i - 1], self.xs[i], self.ys[i]);
                if y1 > y0 {
                    x0 + (x1 - x0) / (y1 - y0) * (u - y0)
                } else {
                    x1
                }
            }
            Interp::Step => {
                let u = (1.0 - rng.f64()) * self.y_scale;
                let i = self.ys.partition_point(|&y| y < u).min(n - 1);
                self.xs[i].round()
            }
        };
        // `as` saturates for huge values; sizes are ≥ 0 by validation.
        (v as u64).max(1)
    }

    /// Mean flow size in bytes. Linear: trapezoid rule over the points (HPCC `getAvg`, the mean
    /// of the interpolated distribution before truncation). Step: the exact discrete mean.
    pub fn mean_bytes(&self) -> f64 {
        let mut s = 0.0;
        for i in 1..self.xs.len() {
            let dy = self.ys[i] - self.ys[i - 1];
            s += match self.interp {
                Interp::Linear => (self.xs[i] + self.xs[i - 1]) / 2.0 * dy,
                Interp::Step => self.xs[i].round() * dy,
            };
        }
        // Step: mass of the first point (zero for normalized CDFs, kept for clarity).
        if self.interp == Interp::Step {
            s += self.xs[0].round() * self.ys[0];
        }
        s / self.y_scale
    }

    /// The model CDF `P(size ≤ size_bytes)` in `[0, 1]` (for goodness-of-fit tests). Linear:
    /// piecewise-linear between points; Step: the cumulative probability of the largest listed
    /// size ≤ `size_bytes`.
    pub fn cdf_at(&self, size_bytes: f64) -> f64 {
        let n = self.xs.len();
        // k = number of points with x ≤ size.
        let k = self.xs.partition_point(|&x| x <= size_bytes);
        let y = if k == 0 {
            0.0
        } else if k == n {
            self.ys[n - 1]
        } else {
            match self.interp {
                Interp::Step => self.ys[k - 1],
                Interp::Linear => {
                    let (x0, y0, x1, y1) = (self.xs[k - 1], self.ys[k - 1], self.xs[k], self.ys[k]);
                    y0 + (y1 - y0) / (x1 - x0) * (size_bytes - x0)
                }
            }
        };
        y / self.y_scale
    }
}

/// Bytes per packet assumed for `homa_w5` (whose sizes are in packets): 1000 B, the simulator's
/// default MTU payload (`PACKET_PAYLOAD_SIZE` of the HPCC configs).
pub const HOMA_W5_PACKET_BYTES: f64 = 1000.0;

const WEBSEARCH: &str = include_str!("../../data/workloads/websearch_hpcc.txt");
const FB_HADOOP: &str = include_str!("../../data/workloads/fbhadoop_hpcc.txt");
const GOOGLE_RPC: &str = include_str!("../../data/workloads/googlerpc_hpcc.txt");
const ALISTORAGE: &str = include_str!("../../data/workloads/alistorage_hpcc.txt");
const HOMA_W1: &str = include_str!("../../data/workloads/homa_w1_fb_memcached_sampled.txt");
const HOMA_W2: &str = include_str!("../../data/workloads/homa_w2_google_search.txt");
const HOMA_W3: &str = include_str!("../../data/workloads/homa_w3_google_all.txt");
const HOMA_W4: &str = include_str!("../../data/workloads/homa_w4_fb_hadoop.txt");
const HOMA_W5: &str = include_str!("../../data/workloads/homa_w5_dctcp_websearch_pkts.txt");

/// A built-in workload by name: `websearch`, `fb_hadoop` (alias `hadoop`), `google_rpc` (alias
/// `rpc`), `alistorage` (HPCC percent files, Linear), and `homa_w1`..`homa_w5` (Homa files, Step;
/// `homa_w5` is in packets, converted with [`HOMA_W5_PACKET_BYTES`]). `None` for unknown names.
pub fn builtin(name: &str) -> Option<SizeCdf> {
    let r = match name {
        "websearch" => SizeCdf::parse_hpcc(WEBSEARCH, "websearch"),
        "fb_hadoop" | "hadoop" => SizeCdf::parse_hpcc(FB_HADOOP, "fb_hadoop"),
        "google_rpc" | "rpc" => SizeCdf::parse_hpcc(GOOGLE_RPC, "google_rpc"),
        "alistorage" => SizeCdf::parse_hpcc(ALISTORAGE, "alistorage"),
        "homa_w1" => SizeCdf::parse_homa(HOMA_W1, "homa_w1", 1.0),
        "homa_w2" => SizeCdf::parse_homa(HOMA_W2, "homa_w2", 1.0),
        "homa_w3" => SizeCdf::parse_homa(HOMA_W3, "homa_w3", 1.0),
        "homa_w4" => SizeCdf::parse_homa(HOMA_W4, "homa_w4", 1.0),
        "homa_w5" => SizeCdf::parse_homa(HOMA_W5, "homa_w5", HOMA_W5_PACKET_BYTES),
        _ => return None,
    };
    r.ok()
}

/// Canonical names accepted by [`builtin`] (aliases `hadoop` and `rpc` are accepted too).
pub fn builtin_names() -> &'static [&'static str] {
    &[
        "websearch",
        "fb_hadoop",
        "google_rpc",
        "alistorage",
        "homa_w1",
        "homa_w2",
        "homa_w3",
        "homa_w4",
        "homa_w5",
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_line_mean(text: &str) -> f64 {
        text.lines().next().unwrap().trim().parse().unwrap()
    }

    #[test]
    fn all_builtins_parse() {
        for n in builtin_names() {
            let c = builtin(n).unwrap_or_else(|| panic!("{n}"));
            assert!(c.mean_bytes() > 0.0, "{n}");
        }
        assert!(builtin("hadoop").is_some());
        assert!(builtin("rpc").is_some());
        assert!(builtin("nope").is_none());
    }

    #[test]
    fn hpcc_trapezoid_means() {
        let ws = builtin("websearch").unwrap().mean_bytes();
        assert!((ws - 1_711_250.0).abs() < 1e-6, "{ws}");
        let hd = builtin("fb_hadoop").unwrap().mean_bytes();
        assert!((hd - 120_420.75).abs() < 1e-6, "{hd}");
        let ali = builtin("alistorage").unwrap().mean_bytes();
        assert!((ali - 40_869.8).abs() < 0.1, "{ali}");
        let rpc = builtin("google_rpc").unwrap().mean_bytes();
        assert!((rpc - 2_891.6).abs() < 1.0, "{rpc}");
    }

    #[test]
    fn homa_means_match_header() {
        let files = [
            ("homa_w1", HOMA_W1, 1.0),
            ("homa_w2", HOMA_W2, 1.0),
            ("homa_w3", HOMA_W3, 1.0),
            ("homa_w4", HOMA_W4, 1.0),
            ("homa_w5", HOMA_W5, HOMA_W5_PACKET_BYTES),
        ];
        for (n, text, unit) in files {
            let m = builtin(n).unwrap().mean_bytes();
            let stated = first_line_mean(text) * unit;
            assert!((m - stated).abs() / stated < 0.02, "{n}: {m} vs {stated}");
        }
    }

    /// Kolmogorov–Smirnov-style check at the CDF points.
    fn ks(cdf: &SizeCdf, n: usize, seed: u64) -> f64 {
        let mut rng = Rng::new(seed);
        let mut s: Vec<u64> = (0..n).map(|_| cdf.sample(&mut rng)).collect();
        s.sort_unstable();
        let mut worst: f64 = 0.0;
        for (x, _) in cdf.points() {
            let emp = s.partition_point(|&v| (v as f64) <= x) as f64 / n as f64;
            worst = worst.max((emp - cdf.cdf_at(x)).abs());
        }
        worst
    }

    #[test]
    fn ks_linear() {
        for n in ["websearch", "hadoop", "google_rpc", "alistorage"] {
            let d = ks(&builtin(n).unwrap(), 200_000, 11);
            assert!(d < 0.01, "{n}: {d}");
        }
    }

    #[test]
    fn ks_step_and_only_listed_sizes() {
        for n in ["homa_w1", "homa_w4", "homa_w5"] {
            let c = builtin(n).unwrap();
            assert!(ks(&c, 200_000, 5) < 0.01, "{n}");
            let sizes: Vec<u64> = c.points().map(|(x, _)| x.round() as u64).collect();
            let mut rng = Rng::new(3);
            for _ in 0..50_000 {
                let v = c.sample(&mut rng);
                assert!(sizes.binary_search(&v).is_ok(), "{n}: {v} not listed");
            }
        }
        // Zero-mass points are never drawn (w4 starts with `50 0`).
        let c = builtin("homa_w4").unwrap();
        let mut rng = Rng::new(9);
        assert!((0..100_000).all(|_| c.sample(&mut rng) != 50));
    }

    #[test]
    fn step_mass_below_first_point() {
        let c = SizeCdf::parse_homa("2.5\n1 0.5\n4 1\n", "t", 1.0).unwrap();
        assert_eq!(c.points().next(), Some((1.0, 0.0)));
        assert!((c.mean_bytes() - 2.5).abs() < 1e-12);
        assert_eq!(c.cdf_at(0.5), 0.0);
        assert_eq!(c.cdf_at(1.0), 0.5);
        assert_eq!(c.cdf_at(3.9), 0.5);
        assert_eq!(c.cdf_at(4.0), 1.0);
        let mut rng = Rng::new(1);
        let ones = (0..100_000).filter(|_| c.sample(&mut rng) == 1).count();
        assert!((ones as f64 / 100_000.0 - 0.5).abs() < 0.01);
    }

    #[test]
    fn linear_sampling_details() {
        // A point mass (equal sizes) and truncation/minimum 1 byte.
        let c = SizeCdf::parse_hpcc("0 0\n0.5 50\n1000 50\n1000 100\n", "t").unwrap();
        let mut rng = Rng::new(2);
        let mut small = 0;
        for _ in 0..10_000 {
            let v = c.sample(&mut rng);
            assert!(v == 1 || v == 1000, "{v}");
            small += (v == 1) as usize;
        }
        assert!((small as f64 / 10_000.0 - 0.5).abs() < 0.03);
        assert_eq!(c.cdf_at(999.0), 0.5);
        assert_eq!(c.cdf_at(1000.0), 1.0);
    }

    #[test]
    fn parse_errors_name_line() {
        let e = SizeCdf::parse_hpcc("0 0\n# c\n\n10 50\r\n5 100\n", "f.txt").unwrap_err();
        assert!(e.contains("f.txt:5"), "{e}");
        let e = SizeCdf::parse_hpcc("0 0\n10 60\n20 50\n30 100\n", "f").unwrap_err();
        assert!(e.contains("f:3") && e.contains("percent"), "{e}");
        let e = SizeCdf::parse_hpcc("0 0\n10 nan\n30 100\n", "f").unwrap_err();
        assert!(e.contains("f:2"), "{e}");
        let e = SizeCdf::parse_hpcc("0 0\n-10 50\n30 100\n", "f").unwrap_err();
        assert!(e.contains("f:2") && e.contains("negative"), "{e}");
        let e = SizeCdf::parse_hpcc("0 0\n10 50 7\n30 100\n", "f").unwrap_err();
        assert!(e.contains("f:2"), "{e}");
        let e = SizeCdf::parse_hpcc("0 5\n30 100\n", "f").unwrap_err();
        assert!(e.contains("f:1"), "{e}");
        let e = SizeCdf::parse_hpcc("0 0\n30 99\n", "f").unwrap_err();
        assert!(e.contains("f:2"), "{e}");
        let e = SizeCdf::parse_hpcc("0 0\n30 100\n40 101\n", "f").unwrap_err();
        assert!(e.contains("f:3"), "{e}");
        // An HPCC file given as Homa is rejected at its first line.
        let e = SizeCdf::parse_homa("0 0\n30 100\n", "h", 1.0).unwrap_err();
        assert!(e.contains("h:1"), "{e}");
        let e = SizeCdf::parse_homa("5\n1 0.5\n4 0.9\n", "h", 1.0).unwrap_err();
        assert!(e.contains("h:3"), "{e}");
        assert!(SizeCdf::parse_hpcc("", "f").is_err());
        assert!(SizeCdf::parse_homa("", "f", 1.0).is_err());
        // CRLF, comments and blank lines are fine.
        let c = SizeCdf::parse_hpcc("# x\r\n0 0\r\n\r\n10 100\r\n", "f").unwrap();
        assert_eq!(c.mean_bytes(), 5.0);
    }

    #[test]
    fn load_and_from_points() {
        let dir = std::env::temp_dir().join(format!("sfc_cdf_test_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("w.txt");
        std::fs::write(&p, "3\n1 0.5\n5 1\n").unwrap();
        let c = SizeCdf::load(&p, CdfFormat::Homa { unit_bytes: 10.0 }).unwrap();
        assert!((c.mean_bytes() - 30.0).abs() < 1e-9);
        assert!(SizeCdf::load(&dir.join("missing"), CdfFormat::Hpcc).is_err());
        std::fs::remove_dir_all(&dir).ok();
        let c = SizeCdf::from_points(&[(100.0, 1.0)], Interp::Step);
        assert!(c.is_err()); // needs two points
        let c = SizeCdf::from_points(&[(100.0, 0.0), (100.0, 1.0)], Interp::Step).unwrap();
        assert_eq!(c.sample(&mut Rng::new(1)), 100);
        assert!(SizeCdf::from_points(&[(1.0, 0.5), (2.0, 1.0)], Interp::Linear).is_err());
    }
}
