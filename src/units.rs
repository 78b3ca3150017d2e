//! Units used throughout the simulator and parsers for their human spellings.
//!
//! Simulated time is an integer number of **picoseconds** (`u64`, ~213 days of range).
//! Rates are integer **bits per second** (`u64`). Sizes are integer **bytes**.
//! Raw integers carry a unit suffix in their names (`_ps`, `_bps`, `_bytes`).

/// One nanosecond in picoseconds.
pub const NS: u64 = 1_000;
/// One microsecond in picoseconds.
pub const US: u64 = 1_000_000;
/// One millisecond in picoseconds.
pub const MS: u64 = 1_000_000_000;
/// One second in picoseconds.
pub const SEC: u64 = 1_000_000_000_000;
/// One gigabit per second in bits per second.
pub const GBPS: u64 = 1_000_000_000;

/// Exact serialization time of `bytes` at `rate_bps`, in picoseconds, rounded up to the
/// next whole picosecond (so a link is never faster than its rate).
#[inline]
pub fn ser_time_ps(bytes: u64, rate_bps: u64) -> u64 {
    // bytes · 8 · 1e12 / rate. Packets are small: stay in u64 (fast) below 2 MB, else u128.
    if bytes < (1 << 21) {
        (bytes * 8_000_000_000_000).div_ceil(rate_bps)
    } else {
        (bytes as u128 * 8_000_000_000_000u128).div_ceil(rate_bps as u128) as u64
    }
}

/// Time for a link of `rate_bps` to drain `bytes` of backlog, picoseconds, rounded *down*
/// (the queue-drain estimate of SFC's pause and the like; [`ser_time_ps`] rounds up because
/// a link may never be faster than its rate). Exact for any backlog (u128 intermediate).
#[inline]
pub fn drain_time_ps(bytes: u64, rate_bps: u64) -> u64 {
    (bytes as u128 * 8_000_000_000_000u128 / rate_bps.max(1) as u128).min(u64::MAX as u128) as u64
}

/// Bytes a link of `rate_bps` carries in `time_ps` (bandwidth-delay product), rounded down
/// (saturating at `u64::MAX`).
#[inline]
pub fn bytes_in_ps(time_ps: u64, rate_bps: u64) -> u64 {
    (time_ps as u128 * rate_bps as u128 / 8_000_000_000_000u128).min(u64::MAX as u128) as u64
}

/// Serialization time as the HPCC ns-3 simulator computes it: `size·8/rate` seconds converted to
/// ns-3 time with truncation to a whole nanosecond.
///
/// Derived from the simulator's measured FCTs (see `docs/src/hpcc.md`): a 1048 B packet at
/// 100 Gb/s takes 83 ns (83.84 truncated), a 60 B ACK 4 ns (4.8), a 1090 B HPCC packet 87 ns,
/// and a 1048 B packet at 25 Gb/s 335 ns (335.36) — every published number fits truncation of
/// the *full* frame size (L2 header included).
#[inline]
pub fn ser_time_ps_hpcc(bytes: u64, rate_bps: u64) -> u64 {
    if bytes < (1 << 31) {
        (bytes * 8_000_000_000 / rate_bps) * NS
    } else {
        (bytes as u128 * 8_000_000_000u128 / rate_bps as u128) as u64 * NS
    }
}

/// A NIC's pacing gap as the HPCC ns-3 simulator computes it, picoseconds (whole nanoseconds):
/// `Seconds(rate.CalculateTxTime(bytes))` in `RdmaHw::UpdateNextAvail` (and `ChangeRate`).
/// `DataRate::CalculateTxTime` divides in `double` (`bytes·8 / bps`), and ns-3's
/// `Seconds(double)` keeps that double's value to 64 fractional bits (`int64x64_t(double)`:
/// the integer part, and the fraction × 2⁶⁴ truncated), multiplies by 10⁹ and truncates to whole
/// nanoseconds (`Time::From`, `GetHigh`). Where `bytes·8/rate` is a whole number of nanoseconds
/// the double can fall just below it, and the gap is then one nanosecond shorter than
/// [`ser_time_ps_hpcc`]'s exact quotient: 1048 B at 1 Gb/s (DCQCN's `MIN_RATE`) is 8383 ns, not
/// 8384; 75 B at 100 Gb/s 5 ns, not 6. Otherwise the two agree.
#[inline]
pub fn pace_time_ps_ns3(bytes: u64, rate_bps: u64) -> u64 {
    let secs = bytes as f64 * 8.0 / rate_bps.max(1) as f64;
    let whole = secs.floor();
    // Exact: `secs - whole` is exact in binary floating point, and so is the scaling by 2^64;
    // `as` truncates the product as ns-3's `(int128_t)` cast does. The product is below 2^64
    // (the fraction is at most 1 − 2^-53), so it fits a `u64`, whose conversion is inline (a
    // `u128` one is a library call, on every paced packet).
    let frac_q64 = u128::from(((secs - whole) * 18_446_744_073_709_551_616.0) as u64);
    let ns = u128::from(whole as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add((frac_q64 * 1_000_000_000) >> 64);
    (ns.min((u64::MAX / NS) as u128) as u64) * NS
}

/// Error from parsing a quantity with a unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitError(pub String);

impl std::fmt::Display for UnitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for UnitError {}

fn split_num(s: &str) -> Result<(f64, &str), UnitError> {
    let s = s.trim();
    let idx = s
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+')
        })
        .unwrap_or(s.len());
    // 'e' could be the start of a unit only in odd cases; we accept scientific notation.
    let (n, u) = s.split_at(idx);
    let v: f64 = n
        .parse()
        .map_err(|_| UnitError(format!("`{s}`: expected a number followed by a unit")))?;
    if !v.is_finite() || v < 0.0 {
        return Err(UnitError(format!(
            "`{s}`: must be a finite non-negative number"
        )));
    }
    Ok((v, u.trim()))
}

/// Parse a data rate: `100Gbps`, `100G`, `400Gb/s`, `50Mb/s`, `1e9bps`, `25000000000` (bare = bit/s).
pub fn parse_rate_bps(s: &str) -> Result<u64, UnitError> {
    let (v, u) = split_num(s)?;
    let mult = match u {
        "" | "bps" | "b/s" => 1.0,
        "K" | "k" | "Kbps" | "kbps" | "Kb/s" | "kb/s" => 1e3,
        "M" | "Mbps" | "Mb/s" => 1e6,
        "G" | "Gbps" | "Gb/s" => 1e9,
        "T" | "Tbps" | "Tb/s" => 1e12,
        _ => {
            return Err(UnitError(format!(
                "`{s}`: unknown rate unit `{u}` (use bps, Mbps, Gbps, Gb/s …)"
            )));
        }
    };
    let r = (v * mult).round();
    if r < 1.0 {
        return Err(UnitError(format!("`{s}`: rate must be positive")));
    }
    checked_u64(r, s, "rate", MAX_RATE_BPS, "1000Tbps")
}

/// Largest accepted duration, picoseconds: 10⁷ s (≈ 116 days), a little below the `u64`
/// picosecond range (≈ 213 days) so that sums of a few such times cannot wrap.
pub const MAX_TIME_PS: u64 = 10_000_000 * SEC;
/// Largest accepted rate, bits per second (1000 Tb/s).
pub const MAX_RATE_BPS: u64 = 1_000_000_000_000_000;
/// Largest accepted size, bytes (1 PB).
pub const MAX_BYTES: u64 = 1_000_000_000_000_000;

/// `v` (already rounded, finite, ≥ 0) as a `u64`, or an error naming the range when it is
/// above `max` (never a silent saturation).
fn checked_u64(v: f64, s: &str, what: &str, max: u64, max_label: &str) -> Result<u64, UnitError> {
    if !v.is_finite() || v > max as f64 {
        return Err(UnitError(format!(
            "`{s}`: {what} out of range (the largest accepted is {max_label})"
        )));
    }
    Ok(v as u64)
}

/// Parse a duration into picoseconds: `1us`, `1000ns`, `0.001ms`, `2s`, `500ps`, `1.5µs`.
/// A bare number is rejected (units are mandatory to avoid silent mistakes).
pub fn parse_time_ps(s: &str) -> Result<u64, UnitError> {
    let (v, u) = split_num(s)?;
    let mult = match u {
        "ps" => 1.0,
        "ns" => 1e3,
        "us" | "µs" => 1e6,
        "ms" => 1e9,
        "s" => 1e12,
        "" => {
            return Err(UnitError(format!(
                "`{s}`: a duration needs a unit (ps, ns, us, ms, s)"
            )));
        }
        _ => {
            return Err(UnitError(format!(
                "`{s}`: unknown time unit `{u}` (use ps, ns, us, ms, s)"
            )));
        }
    };
    checked_u64(
        (v * mult).round(),
        s,
        "duration",
        MAX_TIME_PS,
        "1e7s, about 116 days",
    )
}

/// Parse a size into bytes: `1000`, `1000B`, `32MB` (10^6), `32MiB` (2^20), `125KB`, `4KiB`.
pub fn parse_bytes(s: &str) -> Result<u64, UnitError> {
    let (v, u) = split_num(s)?;
    let mult = match u {
        "" | "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1048576.0,
        "GiB" => 1073741824.0,
        _ => {
            return Err(UnitError(format!(
                "`{s}`: unknown size unit `{u}` (use B, KB, MB, GB, KiB, MiB, GiB)"
            )));
        }
    };
    checked_u64((v * mult).round(), s, "size", MAX_BYTES, "1e6GB")
}

/// Format picoseconds as a short human string (`12.24us`).
pub fn fmt_time(ps: u64) -> String {
    if ps >= SEC {
        format!("{:.3}s", ps as f64 / SEC as f64)
    } else if ps >= MS {
        format!("{:.3}ms", ps as f64 / MS as f64)
    } else if ps >= US {
        format!("{:.2}us", ps as f64 / US as f64)
    } else if ps >= NS {
        format!("{:.1}ns", ps as f64 / NS as f64)
    } else {
        format!("{ps}ps")
    }
}

/// Format a rate in bits per second as a short human string (`100Gbps`, `2.5Gbps`, `10Mbps`).
pub fn fmt_rate(bps: u64) -> String {
    let (v, u) = if bps >= 1_000_000_000 {
        (bps as f64 / 1e9, "Gbps")
    } else if bps >= 1_000_000 {
        (bps as f64 / 1e6, "Mbps")
    } else {
        (bps as f64, "bps")
    };
    if v.fract() == 0.0 {
        format!("{v:.0}{u}")
    } else {
        format!("{v}{u}")
    }
}

/// Format bytes as a short human string (`1.25MB`, decimal units).
pub fn fmt_bytes(b: u64) -> String {
    if b >= 1_000_000_000 {
        format!("{:.2}GB", b as f64 / 1e9)
    } else if b >= 1_000_000 {
        format!("{:.2}MB", b as f64 / 1e6)
    } else if b >= 1_000 {
        format!("{:.1}KB", b as f64 / 1e3)
    } else {
        format!("{b}B")
    }
}

/// A message with every very long decimal number (over 30 characters: Rust and serde print
/// `1e-300` or `1e308` in full, hundreds of digits) rewritten in scientific notation
/// (`1e-300`). Lines that quote the user's input (a TOML error's `12 | key = …` snippet) are
/// left as written.
pub fn shorten_long_numbers(msg: &str) -> String {
    const LONG: usize = 30;
    let mut out = String::with_capacity(msg.len());
    for (i, line) in msg.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let quoted = line
            .trim_start()
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start()
            .starts_with('|');
        if quoted {
            out.push_str(line);
            continue;
        }
        let b = line.as_bytes();
        let mut k = 0;
        while k < b.len() {
            let start = k;
            while k < b.len() && (b[k].is_ascii_digit() || b[k] == b'.') {
                k += 1;
            }
            if k == start {
                let c = line[k..].chars().next().expect("in bounds");
                out.push(c);
                k += c.len_utf8();
                continue;
            }
            // Only a number standing alone: not part of a word, a path, a file name or a
            // quoted value (`run_123…/`, `a.123…`, `"…txt"`); a sentence's final dot is not
            // part of it.
            let tok = &line[start..k];
            let body = tok.trim_end_matches('.');
            let (before, after) = (&line[..start], &line[start + body.len()..]);
            let joined = |c: char| c.is_alphanumeric() || "_/\\\"'.".contains(c);
            let mut prev = before.chars().rev();
            let glued_before = match prev.next() {
                Some('-' | '+') => prev.next().is_some_and(joined),
                Some(c) => joined(c),
                None => false,
            };
            let mut next = after.chars();
            let glued_after = match next.next() {
                Some('.') => next.next().is_some_and(|c| !c.is_whitespace()),
                Some(c) => joined(c) || c == '-',
                None => false,
            };
            match body.parse::<f64>() {
                Ok(v) if !glued_before && !glued_after && body.len() > LONG && v.is_finite() => {
                    out.push_str(&format!("{v:e}"))
                }
                _ => out.push_str(body),
            }
            out.push_str(&tok[body.len()..]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    /// The pacing gaps HPCC-sim computes, `Seconds(DataRate(rate).CalculateTxTime(bytes))`
    /// printed by a program linked against its ns-3 core (`GetTimeStep()`, ns): whole-ns
    /// quotients come out one nanosecond short (1048 B at 1 Gb/s, 1000 B at 100 Gb/s), the
    /// others truncated like `ser_time_ps_hpcc`.
    #[test]
    fn pacing_gap_as_ns3_computes_it() {
        let g = 1_000_000_000u64;
        let cases: [(u64, u64, u64); 20] = [
            (1048, g, 8383),
            (1000, g, 7999),
            (60, g, 479),
            (301, g, 2407),
            (1048, 100 * g, 83),
            (1000, 100 * g, 79),
            (75, 100 * g, 5),
            (150, 100 * g, 11),
            (60, 100 * g, 4),
            (1090, 100 * g, 87),
            (1048, 400 * g, 20),
            (1000, 400 * g, 19),
            (150, 400 * g, 2),
            (1048, 25 * g, 335),
            (1000, 25 * g, 319),
            (1048, 50 * g, 167),
            (1048, 12_500_000_000, 670),
            (1048, 3_125_000_000, 2682),
            (1048, 37_123_456_789, 225),
            (301, 37_123_456_789, 64),
        ];
        for (bytes, rate, ns) in cases {
            assert_eq!(
                pace_time_ps_ns3(bytes, rate),
                ns * NS,
                "{bytes} B at {rate} b/s"
            );
            let exact_ns = bytes * 8 * g / rate;
            let whole = (bytes * 8 * g).is_multiple_of(rate);
            assert_eq!(ns + whole as u64, exact_ns, "{bytes} B at {rate} b/s");
            assert_eq!(
                ser_time_ps_hpcc(bytes, rate) - pace_time_ps_ns3(bytes, rate),
                whole as u64 * NS
            );
        }
        // Degenerate inputs stay finite.
        assert_eq!(pace_time_ps_ns3(0, g), 0);
        assert!(pace_time_ps_ns3(u64::MAX, 1) > 0);
        assert_eq!(pace_time_ps_ns3(1048, 0), pace_time_ps_ns3(1048, 1));
    }

    #[test]
    fn long_numbers_are_shortened_outside_quoted_input() {
        let tiny = format!("{}", 1e-300_f64);
        let huge = format!("{}", 1e308_f64);
        assert!(tiny.len() > 300 && huge.len() > 300);
        assert_eq!(
            shorten_long_numbers(&format!(
                "`a`: {tiny} × 4000000 B; got {huge}.0, 0.5, 18446744073709551615"
            )),
            "`a`: 1e-300 × 4000000 B; got 1e308, 0.5, 18446744073709551615"
        );
        let quoted = format!("12 | load = {tiny}\n   |        ^");
        assert_eq!(shorten_long_numbers(&quoted), quoted);
        assert_eq!(shorten_long_numbers("é 1.5 ü"), "é 1.5 ü");
        assert_eq!(
            shorten_long_numbers(&format!("= -{tiny}: bad")),
            "= -1e-300: bad"
        );
        assert_eq!(shorten_long_numbers(&format!("got {huge}.")), "got 1e308.");
        // Paths, file names and quoted values keep every digit.
        let long = "1234567890123456789012345678901234";
        for kept in [
            format!("run_{long}/s.toml:3"),
            format!("\"topo_{long}.txt\""),
            format!("a.{long}"),
            format!("\"{long}.txt\""),
            format!("/tmp/{long}/x"),
            format!("topo-{long}.txt"),
            format!("v{long}"),
        ] {
            assert_eq!(shorten_long_numbers(&kept), kept);
        }
    }
    use super::*;

    #[test]
    fn serialization() {
        assert_eq!(ser_time_ps(1000, 100 * GBPS), 80_000);
        assert_eq!(ser_time_ps(1, 400 * GBPS), 20);
        assert_eq!(ser_time_ps_hpcc(1048, 100 * GBPS), 83 * NS);
        assert_eq!(ser_time_ps_hpcc(60, 100 * GBPS), 4 * NS);
        assert_eq!(ser_time_ps_hpcc(1048, 25 * GBPS), 335 * NS);
        assert_eq!(ser_time_ps_hpcc(1090, 100 * GBPS), 87 * NS);
    }

    #[test]
    fn drain_and_bdp() {
        // 100 KB at 100 G drain in 8 µs; 1 B at 3 b/s: 8/3 s, rounded down (ser rounds up).
        assert_eq!(drain_time_ps(100_000, 100 * GBPS), 8 * US);
        assert_eq!(drain_time_ps(1, 3), 2_666_666_666_666);
        assert_eq!(ser_time_ps(1, 3), 2_666_666_666_667);
        // 10 µs at 100 G = 125 000 B; saturates instead of wrapping.
        assert_eq!(bytes_in_ps(10 * US, 100 * GBPS), 125_000);
        assert_eq!(bytes_in_ps(u64::MAX, u64::MAX), u64::MAX);
    }

    #[test]
    fn parsing() {
        assert_eq!(parse_rate_bps("100Gbps").unwrap(), 100 * GBPS);
        assert_eq!(parse_rate_bps("50Mb/s").unwrap(), 50_000_000);
        assert_eq!(parse_rate_bps("25000000000").unwrap(), 25 * GBPS);
        assert!(parse_rate_bps("100Gbq").is_err());
        assert_eq!(parse_time_ps("0.001ms").unwrap(), US);
        assert_eq!(parse_time_ps("1000ns").unwrap(), US);
        assert_eq!(parse_time_ps("1.5us").unwrap(), 1_500_000);
        assert!(parse_time_ps("10").is_err());
        assert_eq!(parse_bytes("32MiB").unwrap(), 32 << 20);
        assert_eq!(parse_bytes("125KB").unwrap(), 125_000);
        assert!(parse_bytes("-1").is_err());
    }

    #[test]
    fn out_of_range_is_an_error_not_a_saturation() {
        // 1e30 s = 1e42 ps: far beyond u64 (1.8e19); an error, not u64::MAX.
        let e = parse_time_ps("1e30s").unwrap_err();
        assert!(e.0.contains("out of range"), "{e}");
        // The limit itself is accepted, one picosecond-scale step above is not.
        assert_eq!(parse_time_ps("1e7s").unwrap(), MAX_TIME_PS);
        assert!(parse_time_ps("1.0001e7s").is_err());
        assert!(parse_rate_bps("1e300Gbps").is_err());
        assert_eq!(parse_rate_bps("1000Tbps").unwrap(), MAX_RATE_BPS);
        assert!(parse_bytes("1e20GB").is_err());
        assert!(parse_bytes("inf").is_err());
    }
}
