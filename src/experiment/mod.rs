//! Paper-figure experiments: a checked-in TOML description (a scenario plus the parameter grid
//! it sweeps, the plots to draw and the paper's numbers to compare with), run in parallel with
//! resume, aggregated into CSVs, PNG/SVG plots and a `REPORT.md`.
//!
//! File format (`experiments/*.toml`, see `docs/src/papers/writing.md`):
//! ```toml
//! [experiment]            # name, title, paper, figure, description
//! [scenario]              # a full scenario (same keys as a scenario file)
//! [sweep]                 # axes = [{ key, values }], series = [{ name, set }], seeds = [..]
//! [quick]                 # set = [...] overrides for --quick; axes = [...] replaces axis values
//! [[plot]]                # what to draw (see `Plot`)
//! [[claim]]               # paper numbers to put next to ours in REPORT.md
//! ```

pub mod builtin;
pub mod cluster;
pub mod quotes;
pub mod runner;
pub mod score;
pub mod shard;

use serde::Deserialize;

/// `[experiment]` metadata.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    /// Short name (used on the command line and as the output directory).
    pub name: String,
    /// Title for plots and the report.
    pub title: String,
    /// Paper the figure is from (SFC, HPCC, BFC, PB-FS).
    #[serde(default)]
    pub paper: String,
    /// Figure or table reference in the paper.
    #[serde(default)]
    pub figure: String,
    /// What the experiment shows.
    #[serde(default)]
    pub description: String,
}

/// One swept parameter.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Axis {
    /// Scenario key (dotted, as for `--set`).
    pub key: String,
    /// Values (TOML values; strings keep their quotes when applied).
    pub values: Vec<toml::Value>,
    /// Short label for tables and plot axes (default: the key).
    #[serde(default)]
    pub label: Option<String>,
}

/// One series (a line in a plot, a column in a table).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeriesSpec {
    /// Name.
    pub name: String,
    /// Overrides.
    #[serde(default)]
    pub set: Vec<String>,
}

/// `[sweep]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sweep {
    /// Axes (Cartesian product).
    #[serde(default)]
    pub axes: Vec<Axis>,
    /// Series (default: one series named "run").
    #[serde(default)]
    pub series: Vec<SeriesSpec>,
    /// Seeds (default: the scenario's seed).
    #[serde(default)]
    pub seeds: Vec<u64>,
}

/// `[quick]`: a smaller variant that finishes in a couple of minutes on 2 cores.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quick {
    /// Overrides applied to every point.
    #[serde(default)]
    pub set: Vec<String>,
    /// Axes whose values are replaced (matched by key).
    #[serde(default)]
    pub axes: Vec<Axis>,
}

/// What a plot draws.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plot {
    /// File stem and id.
    pub name: String,
    /// `summary` (y = a summary.json path vs x = an axis key), `bins` (y = p50/p95/p99/p999
    /// slowdown per size bin), `buffer_cdf` (CDF of per-switch 10 µs buffer watermarks),
    /// `throughput_cdf` (CDF of receiver throughput samples), `queue` (queue time series of the
    /// monitored ports, summed), `buffer_time` (max switch buffer over time),
    /// `throughput_time` (receiver throughput over time, Gb/s, summed over [`Plot::receivers`],
    /// or sender goodput summed over [`Plot::senders`]).
    pub source: String,
    /// `throughput_time`: the receiving hosts (node ids) whose throughput is summed (default:
    /// every receiver), e.g. the host that only the victim flows of `tcd-victim` reach.
    #[serde(default)]
    pub receivers: Vec<u32>,
    /// `throughput_time`: instead of receivers, sum the goodput *sent* by these hosts (node
    /// ids), from `sender_throughput.csv` (the scenario needs `output.sender_throughput`).
    #[serde(default)]
    pub senders: Vec<u32>,
    /// Chart kind: `line`, `bar`, `cdf` (default by source).
    #[serde(default)]
    pub kind: Option<String>,
    /// X axis: an axis key (summary plots).
    #[serde(default)]
    pub x: Option<String>,
    /// Y metric: summary path (e.g. `peak_buffer_bytes`, `slowdown.p99`, `sfc.bts_generated`)
    /// or percentile for `bins` (`p99`).
    #[serde(default)]
    pub y: Option<String>,
    /// Multiply y (and CDF values) by this (e.g. 1e-6 for MB).
    #[serde(default)]
    pub scale: Option<f64>,
    /// Axis labels.
    #[serde(default)]
    pub x_label: Option<String>,
    /// Axis labels.
    #[serde(default)]
    pub y_label: Option<String>,
    /// Log axes.
    #[serde(default)]
    pub log_x: bool,
    /// Log axes.
    #[serde(default)]
    pub log_y: bool,
    /// Fix other axes: `{ "key" = value }` (default: every value of other axes makes its own
    /// series suffix).
    #[serde(default)]
    pub filter: toml::Table,
    /// Reference lines `[[label, value]]` (in plotted units).
    #[serde(default)]
    pub hlines: Vec<(String, f64)>,
}

/// How an audited claim is scored ([`Claim::kind`]); one tolerance rule per kind, applied by
/// the code ([`Claim::accepted`]), never per claim.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ClaimKind {
    /// One number of the paper (`paper_low`): matches within ±20 % ([`POINT_TOLERANCE`]),
    /// ±30 % when it was read off a plot ([`PLOT_TOLERANCE`], [`Claim::read_off_plot`]).
    Point,
    /// The paper's own range [`paper_low`, `paper_high`], widened by ±10 %
    /// ([`RANGE_TOLERANCE`]).
    Range,
    /// The paper's stated bound, no tolerance: `paper_high` alone is an upper bound (ours ≤
    /// it), `paper_low` alone a lower bound (ours ≥ it).
    Bound,
    /// Better or worse only: the claim's value (a ratio) above 1 ([`Better::Higher`]) or below
    /// 1 ([`Better::Lower`]).
    Direction,
}

impl ClaimKind {
    /// The kind's name as the file writes it.
    pub fn name(self) -> &'static str {
        match self {
            ClaimKind::Point => "point",
            ClaimKind::Range => "range",
            ClaimKind::Bound => "bound",
            ClaimKind::Direction => "direction",
        }
    }
}

/// The side a `direction` claim states ([`Claim::better`]).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    /// The claim's value (a ratio) is above 1.
    Higher,
    /// The claim's value (a ratio) is below 1.
    Lower,
}

/// A parameter of the experiment set by looking at its results rather than taken from a
/// paper ([`Claim::calibrated`]).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// Scenario key (dotted, as for `--set`), e.g. `sfc.bts_delay`.
    pub param: String,
    /// Why it was set that way.
    pub why: String,
    /// What the paper says about it, if anything.
    #[serde(default)]
    pub paper_value: Option<String>,
}

/// Relative tolerance of a `point` claim.
pub const POINT_TOLERANCE: f64 = 0.20;
/// Relative tolerance of a `point` claim whose number was read off a plot.
pub const PLOT_TOLERANCE: f64 = 0.30;
/// Relative widening of a `range` claim's range.
pub const RANGE_TOLERANCE: f64 = 0.10;
/// Relative tolerance of an unaudited claim without its own `tolerance`.
pub const UNAUDITED_TOLERANCE: f64 = 0.25;

/// A paper claim to compare with our number.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// What is compared, in words.
    pub text: String,
    /// Summary metric path: dotted keys; an array element by index (`bins.3.slowdown.p99`) or
    /// by the value of one of its fields (`by_dport[dport=100].slowdown.p99` = background
    /// flows only; `bins[hi_bytes=1000].slowdown.p99` = the size bin ending at 1000 B).
    pub metric: String,
    /// A second metric path: the claim's value is then the ratio (num / den) at `metric`
    /// divided by the same ratio at `versus` ("the gain is larger for small flows than for
    /// large ones": `metric` = the small-flow bin, `versus` = the large-flow bin).
    #[serde(default)]
    pub versus: Option<String>,
    /// Series whose value is the numerator (or the value itself without `den`).
    pub num: String,
    /// Series for the denominator (ratio claims).
    #[serde(default)]
    pub den: Option<String>,
    /// Fix axes for this claim.
    #[serde(default)]
    pub filter: toml::Table,
    /// Paper's range (inclusive); a single value → low = high. Required, except for a
    /// `direction` claim and an upper `bound`.
    #[serde(default)]
    pub paper_low: Option<f64>,
    /// Paper's range.
    #[serde(default)]
    pub paper_high: Option<f64>,
    /// Relative tolerance for "matches" around the range of an unaudited claim (default
    /// [`UNAUDITED_TOLERANCE`]); a claim with `kind` has its kind's tolerance instead.
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// The paper's own sentence (or table cell, figure caption) the claim tests, verbatim:
    /// `sfc experiment quotes` finds it in the paper's text.
    #[serde(default)]
    pub quote: Option<String>,
    /// Where the number comes from when it is not in the paper's text (a plot, the authors'
    /// code, a talk).
    #[serde(default)]
    pub source: Option<String>,
    /// How the claim is scored; without it the claim is unaudited (its own tolerance, not
    /// counted by `sfc experiment score`).
    #[serde(default)]
    pub kind: Option<ClaimKind>,
    /// A `point` claim's number was read off a plot (tolerance ±30 % instead of ±20 %).
    #[serde(default)]
    pub read_off_plot: bool,
    /// The side a `direction` claim states.
    #[serde(default)]
    pub better: Option<Better>,
    /// Parameters set by looking at this experiment's results: the claim is evaluated and
    /// reported but never counted as a match.
    #[serde(default)]
    pub calibrated: Vec<Calibration>,
    /// The experiment that scores this claim's sentence: here the sentence is evaluated (by
    /// its kind's rule) under a setting the paper does not use — a sensitivity variant, or
    /// the paper's traffic with something added — and shown, never counted, so one sentence
    /// is scored once.
    #[serde(default)]
    pub scored_in: Option<String>,
}

impl Claim {
    /// The interval of values that match, `(low, high)` (an end is infinite when open), and
    /// whether its ends themselves match (`false` for a `direction` claim: 1 is neither
    /// better nor worse). Unaudited: the paper's range widened by the claim's tolerance
    /// (default [`UNAUDITED_TOLERANCE`]).
    pub fn accepted(&self) -> (f64, f64, bool) {
        let low = self.paper_low.unwrap_or(f64::NEG_INFINITY);
        let high = self.paper_high.unwrap_or(low);
        let widen = |lo: f64, hi: f64, t: f64| {
            let a = [lo * (1.0 - t), lo * (1.0 + t)];
            let b = [hi * (1.0 - t), hi * (1.0 + t)];
            (a[0].min(a[1]), b[0].max(b[1]))
        };
        match self.kind {
            None => {
                let t = self.tolerance.unwrap_or(UNAUDITED_TOLERANCE);
                (low * (1.0 - t), high * (1.0 + t), true)
            }
            Some(ClaimKind::Point) => {
                let t = if self.read_off_plot {
                    PLOT_TOLERANCE
                } else {
                    POINT_TOLERANCE
                };
                let (a, b) = widen(low, low, t);
                (a, b, true)
            }
            Some(ClaimKind::Range) => {
                let (a, b) = widen(low, high, RANGE_TOLERANCE);
                (a, b, true)
            }
            Some(ClaimKind::Bound) => match (self.paper_low, self.paper_high) {
                (Some(l), _) => (l, f64::INFINITY, true),
                (None, Some(h)) => (f64::NEG_INFINITY, h, true),
                (None, None) => (f64::NEG_INFINITY, f64::INFINITY, true),
            },
            Some(ClaimKind::Direction) => match self.better {
                Some(Better::Lower) => (f64::NEG_INFINITY, 1.0, false),
                _ => (1.0, f64::INFINITY, false),
            },
        }
    }

    /// Is the claim counted by the score (it has a `kind`, no calibrated parameter, and is
    /// not scored in another experiment)?
    pub fn scored(&self) -> bool {
        self.kind.is_some() && self.calibrated.is_empty() && self.scored_in.is_none()
    }
}

/// A parsed experiment file.
#[derive(Clone, Debug)]
pub struct Experiment {
    /// Metadata.
    pub meta: Meta,
    /// Scenario TOML text.
    pub scenario_text: String,
    /// Sweep.
    pub sweep: Sweep,
    /// Quick variant.
    pub quick: Quick,
    /// Plots.
    pub plots: Vec<Plot>,
    /// Claims.
    pub claims: Vec<Claim>,
    /// Directory of the file (for relative paths in the scenario).
    pub dir: std::path::PathBuf,
    /// Where it came from.
    pub source: String,
    /// The scenario seed set by `sfc experiment run --seed` ([`Experiment::with_seed`]), if
    /// any: it names the default output directory (`NAME[-quick]-seedN`) and the report's
    /// command line.
    pub seed_override: Option<u64>,
    /// The seeds set by `sfc experiment run --seeds` ([`Experiment::with_seeds`]); empty if
    /// none: they name the default output directory (`NAME[-quick]-seedsA-B-C`) and the
    /// report's command line.
    pub seeds_override: Vec<u64>,
    /// The `[scenario]` table as the experiment file writes it, every other line blank, its
    /// headers without `scenario.` (`[topology]`): the same scenario as
    /// [`Experiment::scenario_text`], whose lines are the file's, so that checking a point
    /// ([`runner::validate`]) cites the file's lines. `None` when the table cannot be cut out
    /// line by line (dotted `scenario.x = …` keys, a header inside a multi-line value).
    pub scenario_lines: Option<String>,
}

/// The `[scenario]` table of the experiment file `text` as a scenario whose lines are the
/// file's (see [`Experiment::scenario_lines`]); `None` unless it reads back equal to `table`.
fn scenario_lines(text: &str, table: &toml::Table) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut inside = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            let (open, close) = if t.starts_with("[[") {
                ("[[", "]]")
            } else {
                ("[", "]")
            };
            let name = t[open.len()..]
                .split(close)
                .next()
                .unwrap_or("")
                .trim()
                .to_string();
            if name == "scenario" {
                inside = true;
                out.push('\n');
                continue;
            }
            if let Some(rest) = name.strip_prefix("scenario.") {
                inside = true;
                out.push_str(&format!("{open}{rest}{close}\n"));
                continue;
            }
            inside = false;
        }
        if inside {
            out.push_str(line);
        }
        out.push('\n');
    }
    (out.parse::<toml::Table>().ok()? == *table).then_some(out)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExperiment {
    experiment: Meta,
    scenario: toml::Table,
    #[serde(default)]
    sweep: Sweep,
    #[serde(default)]
    quick: Quick,
    #[serde(default)]
    plot: Vec<Plot>,
    #[serde(default)]
    claim: Vec<Claim>,
}

/// Most points a sweep may expand to (full or quick): beyond it a typo in an axis list is
/// far likelier than a wish for days of runs, and the expansion itself would exhaust memory.
pub const MAX_POINTS: u64 = 100_000;

/// A name that becomes a file or directory name under the output directory (a plot, the
/// experiment): not empty, not `.` or `..`, no path separator.
fn safe_name(what: &str, name: &str) -> Result<(), String> {
    if name.trim().is_empty() || name == "." || name == ".." || name.contains(['/', '\\']) {
        return Err(format!(
            "{what} `{name}`: not a usable name (it names files under the output directory: \
             not empty, `.` or `..`, no `/` or `\\`)"
        ));
    }
    Ok(())
}

/// The key an override `key=value` sets, normalized (`a[0].b` → `a.0.b`).
fn set_key(set: &str) -> String {
    let k = set.split_once('=').map_or(set, |(k, _)| k).trim();
    k.replace('[', ".").replace(']', "")
}

/// Every override of a series' or `[quick]`'s `set`, with who gives it (`series `A``,
/// `[quick] set`), for messages.
fn overrides<'a>(
    series: &'a [SeriesSpec],
    quick: &'a Quick,
) -> impl Iterator<Item = (String, &'a String)> + 'a {
    series
        .iter()
        .flat_map(|s| {
            s.set
                .iter()
                .map(move |x| (format!("series `{}`", s.name), x))
        })
        .chain(quick.set.iter().map(|x| ("[quick] set".to_string(), x)))
}

/// Checks of the grid and of what plots and claims refer to, so a sweep never runs something
/// other than what it labels: axis keys distinct and not overridden by a series or `[quick]`
/// `set` (the override would win silently), no empty axis, `[quick] axes` naming sweep axes,
/// plot and experiment names usable as file names, distinct and usable point ids, at most
/// [`MAX_POINTS`] points, no `[[scenario.compare]]` (variants are series here), plot kinds,
/// `bins` percentiles and `x` on summary plots only, filters naming an axis and one of its
/// values, claim ranges finite with low ≤ high and a tolerance in [0, 1).
fn check_grid(raw: &RawExperiment, sweep: &Sweep, source: &str, text: &str) -> Result<(), String> {
    let in_source = |m: String| format!("{source}: {m}");
    safe_name("[experiment] name", &raw.experiment.name).map_err(in_source)?;
    if raw.scenario.contains_key("compare") {
        return Err(in_source(
            "[scenario]: `[[scenario.compare]]` variants are not run by experiments; write them \
             as `[sweep] series = [{ name, set }]`"
                .into(),
        ));
    }
    check_axes(raw, sweep).map_err(in_source)?;
    check_grid_size(raw, sweep).map_err(in_source)?;
    check_overrides_read(raw, sweep).map_err(in_source)?;
    check_point_ids(raw, sweep, source).map_err(in_source)?;
    check_plots(raw, sweep).map_err(in_source)?;
    check_claims(raw, sweep, text).map_err(in_source)
}

/// The sweep's axis keys, in `--set` spelling.
fn axis_keys(sweep: &Sweep) -> Vec<String> {
    sweep.axes.iter().map(|a| set_key(&a.key)).collect()
}

/// Axes distinct and not empty, `[quick] axes` naming sweep axes, and no series or `[quick]`
/// `set` overriding an axis or the sweep's seeds.
fn check_axes(raw: &RawExperiment, sweep: &Sweep) -> Result<(), String> {
    let axis_keys = axis_keys(sweep);
    for (i, a) in sweep.axes.iter().enumerate() {
        if axis_keys[..i].contains(&axis_keys[i]) {
            return Err(format!("[sweep]: axis `{}` is given twice", a.key));
        }
        if a.values.is_empty() {
            return Err(format!("[sweep]: axis `{}` has no values", a.key));
        }
    }
    for q in &raw.quick.axes {
        if !axis_keys.contains(&set_key(&q.key)) {
            return Err(format!(
                "[quick]: axis `{}` is not a sweep axis (its values would be ignored)",
                q.key
            ));
        }
        if q.values.is_empty() {
            return Err(format!("[quick]: axis `{}` has no values", q.key));
        }
    }
    for (who, x) in overrides(&sweep.series, &raw.quick) {
        let k = set_key(x);
        if k == "seed" && !sweep.seeds.is_empty() {
            return Err(format!(
                "{who}: `{x}` sets the seed, which the sweep's `seeds` set for every point (the \
                 sweep's would win silently)"
            ));
        }
        if let Some(a) = axis_keys
            .iter()
            .find(|a| k == **a || a.starts_with(&format!("{k}.")))
        {
            return Err(format!(
                "{who}: `{x}` sets the sweep axis `{a}`, which every point sets itself (the \
                 override would win over the axis value silently)"
            ));
        }
    }
    Ok(())
}

/// The values of each sweep axis, `[quick]`'s where it gives some and `quick` is set.
fn axis_values<'a>(
    raw: &'a RawExperiment,
    sweep: &'a Sweep,
    quick: bool,
) -> Vec<&'a Vec<toml::Value>> {
    sweep
        .axes
        .iter()
        .map(|a| {
            let q = raw
                .quick
                .axes
                .iter()
                .find(|q| quick && set_key(&q.key) == set_key(&a.key));
            &q.unwrap_or(a).values
        })
        .collect()
}

/// The size of the grid, before expanding it: at most [`MAX_POINTS`], with and without
/// `--quick`.
fn check_grid_size(raw: &RawExperiment, sweep: &Sweep) -> Result<(), String> {
    for quick in [false, true] {
        let mut n = (sweep.series.len() as u64).saturating_mul(sweep.seeds.len().max(1) as u64);
        for values in axis_values(raw, sweep, quick) {
            n = n.saturating_mul(values.len() as u64);
        }
        if n > MAX_POINTS {
            return Err(format!(
                "[sweep]: {n} points{} (series × axis values × seeds), more than the {MAX_POINTS} \
                 a sweep may have",
                if quick { " with --quick" } else { "" }
            ));
        }
    }
    Ok(())
}

/// Every override names a scenario key and gives it a value of the right type: checked here
/// on the scenario with each series' overrides and every axis value (with and without
/// `[quick]`), instead of failing in every point's run. Each axis value is tried once, the
/// other axes at their first value.
fn check_overrides_read(raw: &RawExperiment, sweep: &Sweep) -> Result<(), String> {
    for quick in [false, true] {
        let values = axis_values(raw, sweep, quick);
        let mut choices: Vec<Vec<usize>> = vec![vec![0; values.len()]];
        for (i, v) in values.iter().enumerate() {
            for j in 1..v.len() {
                let mut c = vec![0; values.len()];
                c[i] = j;
                choices.push(c);
            }
        }
        for (s, choice) in sweep
            .series
            .iter()
            .flat_map(|s| choices.iter().map(move |c| (s, c)))
        {
            let mut sets: Vec<String> = Vec::new();
            if quick {
                sets.extend(raw.quick.set.iter().cloned());
            }
            for ((a, v), &j) in sweep.axes.iter().zip(&values).zip(choice) {
                if let Some(v) = v.get(j) {
                    sets.push(format!("{}={v}", a.key));
                }
            }
            sets.extend(s.set.iter().cloned());
            read_with_overrides(&raw.scenario, &sets).map_err(|e| {
                format!(
                    "series `{}`{} (with {}): {e}",
                    s.name,
                    if quick { " with --quick" } else { "" },
                    sets.iter()
                        .map(|x| format!("`{x}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })?;
        }
    }
    Ok(())
}

/// Whether `scenario` with the overrides `sets` still reads as a scenario (keys and types;
/// values are checked when a point runs).
fn read_with_overrides(scenario: &toml::Table, sets: &[String]) -> Result<(), String> {
    let mut doc = scenario.clone();
    crate::scenario::apply_overrides(&mut doc, sets)
        .and_then(|()| toml::to_string(&doc).map_err(|e| e.to_string()))
        .and_then(|t| {
            toml::from_str::<crate::scenario::RawScenario>(&t)
                .map(|_| ())
                .map_err(|e| e.message().trim_end().to_string())
        })
}

/// Distinct, usable point ids (ids are file names: `x y` and `x_y` would share a
/// directory), with and without `--quick`.
fn check_point_ids(raw: &RawExperiment, sweep: &Sweep, source: &str) -> Result<(), String> {
    let probe = Experiment {
        meta: raw.experiment.clone(),
        scenario_text: String::new(),
        sweep: sweep.clone(),
        quick: raw.quick.clone(),
        plots: Vec::new(),
        claims: Vec::new(),
        dir: Default::default(),
        source: source.to_string(),
        seed_override: None,
        seeds_override: Vec::new(),
        scenario_lines: None,
    };
    for quick in [false, true] {
        let mut seen: std::collections::HashMap<String, runner::Point> = Default::default();
        for p in runner::points(&probe, quick) {
            if p.id.is_empty() || p.id == "." || p.id == ".." {
                return Err(format!(
                    "series `{}`: its points would be named `{}` (points/{}): give the series \
                     a name with a letter or digit",
                    p.series, p.id, p.id
                ));
            }
            if let Some(q) = seen.get(&p.id) {
                let show = |p: &runner::Point| {
                    let mut v = vec![format!("series `{}`", p.series)];
                    v.extend(p.axes.iter().map(|(k, x)| format!("{k} = {x}")));
                    v.extend(p.seed.map(|s| format!("seed {s}")));
                    v.join(", ")
                };
                return Err(format!(
                    "[sweep]: two points would share the id (and directory) `{}`{}: {} and {} \
                     (repeated or look-alike series names, axis values or seeds)",
                    p.id,
                    if quick { " with --quick" } else { "" },
                    show(q),
                    show(&p)
                ));
            }
            seen.insert(p.id.clone(), p);
        }
    }
    Ok(())
}

/// A plot's or claim's filter (`what` names it) names sweep axes and one of each axis's
/// values (of the sweep or of `[quick]`).
fn check_filter(
    raw: &RawExperiment,
    sweep: &Sweep,
    what: &str,
    filter: &toml::Table,
) -> Result<(), String> {
    let axis_keys = axis_keys(sweep);
    for (k, v) in filter {
        if !axis_keys.contains(&set_key(k)) {
            return Err(format!("{what}: filter key `{k}` is not a sweep axis"));
        }
        let key = set_key(k);
        let mut values = sweep
            .axes
            .iter()
            .filter(|a| set_key(&a.key) == key)
            .chain(raw.quick.axes.iter().filter(|a| set_key(&a.key) == key))
            .flat_map(|a| a.values.iter());
        if !values.any(|x| x == v) {
            return Err(format!(
                "{what}: filter `{k} = {v}` is not one of the axis's values"
            ));
        }
    }
    Ok(())
}

/// Plot names usable as file names and distinct, known kinds, `x` on summary plots only,
/// `bins` percentiles, and their filters.
fn check_plots(raw: &RawExperiment, sweep: &Sweep) -> Result<(), String> {
    let mut plot_names: Vec<&str> = Vec::new();
    for p in &raw.plot {
        let what = format!("plot `{}`", p.name);
        safe_name("plot", &p.name)?;
        if plot_names.contains(&p.name.as_str()) {
            return Err(format!(
                "{what}: two plots have this name (one file would overwrite the other)"
            ));
        }
        plot_names.push(&p.name);
        if let Some(k) = &p.kind
            && !["line", "bar", "cdf"].contains(&k.as_str())
        {
            return Err(format!("{what}: unknown kind `{k}` (line, bar or cdf)"));
        }
        if p.x.is_some() && p.source != "summary" {
            return Err(format!("{what}: `x` applies to summary plots only"));
        }
        if p.source == "bins"
            && let Some(y) = &p.y
            && !["p50", "p95", "p99", "p999"].contains(&y.as_str())
        {
            return Err(format!(
                "{what}: y = `{y}`: a bins plot shows p50, p95, p99 or p999"
            ));
        }
        check_filter(raw, sweep, &what, &p.filter)?;
    }
    Ok(())
}

/// Claims: their filters, the paper's range finite with low ≤ high, a tolerance in [0, 1),
/// and the fields each `kind` needs (see [`claim_field_error`]).
fn check_claims(raw: &RawExperiment, sweep: &Sweep, text: &str) -> Result<(), String> {
    for (i, c) in raw.claim.iter().enumerate() {
        let what = format!("claim `{}`", c.text);
        check_filter(raw, sweep, &what, &c.filter)?;
        if c.scored_in.as_deref() == Some(raw.experiment.name.as_str()) {
            let at = claim_key_line(text, i, "scored_in")
                .map(|l| format!(" (line {l})"))
                .unwrap_or_default();
            return Err(format!(
                "{what}{at}: `scored_in` names this experiment; it names the one that scores the claim"
            ));
        }
        if let Some((key, why)) = claim_field_error(c) {
            let at = claim_key_line(text, i, key)
                .map(|l| format!(" (line {l}, `{key}`)"))
                .unwrap_or_else(|| format!(" (`{key}`)"));
            return Err(format!("{what}{at}: {why}"));
        }
        let lo = c.paper_low.or(c.paper_high).unwrap_or(0.0);
        let hi = c.paper_high.unwrap_or(lo);
        if !lo.is_finite() || !hi.is_finite() || lo > hi {
            return Err(format!(
                "{what}: the paper's range [{lo}, {hi}] must be finite with paper_low ≤ paper_high"
            ));
        }
        if let Some(t) = c.tolerance
            && !(0.0..1.0).contains(&t)
        {
            return Err(format!(
                "{what}: tolerance {t} must be in [0, 1) (a relative margin)"
            ));
        }
    }
    Ok(())
}

/// The field of claim `c` that its `kind` forbids or misses, and why: `tolerance` with a
/// kind (the kind's rule applies), `paper_low` missing (an unaudited, `point` or `range`
/// claim), `paper_high` on a `point` (one number) or missing on a `range`, a `bound` with
/// both or neither end, `better` missing on a `direction` claim or given on another kind,
/// `read_off_plot` on a claim other than `point`, `quote` and `source` both given,
/// `scored_in` on an unaudited claim or naming no experiment.
pub fn claim_field_error(c: &Claim) -> Option<(&'static str, String)> {
    use ClaimKind::*;
    let kind = c.kind;
    let name = kind.map_or("", |k| k.name());
    if kind.is_some() && c.tolerance.is_some() {
        return Some((
            "tolerance",
            format!(
                "a `{name}` claim takes the tolerance of its kind (point ±20 %, ±30 % read off a plot; range ±10 %; bound and direction none): remove `tolerance`"
            ),
        ));
    }
    if c.quote.is_some() && c.source.is_some() {
        return Some((
            "source",
            "give `quote` (the paper's words) or `source` (where the number comes from), not both"
                .into(),
        ));
    }
    match kind {
        None | Some(Point) | Some(Range) if c.paper_low.is_none() => {
            return Some(("paper_low", "missing field `paper_low`".into()));
        }
        Some(Point) if c.paper_high.is_some_and(|h| Some(h) != c.paper_low) => {
            return Some((
                "paper_high",
                "a `point` claim is one number (`paper_low`); a range is `kind = \"range\"`".into(),
            ));
        }
        Some(Range) if c.paper_high.is_none() => {
            return Some(("paper_low", "a `range` claim needs `paper_high` too".into()));
        }
        Some(Bound) if c.paper_low.is_some() == c.paper_high.is_some() => {
            return Some((
                "paper_high",
                "a `bound` claim gives one end: `paper_high` (an upper bound) or `paper_low` (a lower bound)"
                    .into(),
            ));
        }
        Some(Direction) if c.better.is_none() => {
            return Some((
                "better",
                "a `direction` claim says which side it states: `better = \"higher\"` (the value, a ratio, above 1) or `\"lower\"` (below 1)"
                    .into(),
            ));
        }
        _ => {}
    }
    if c.better.is_some() && kind != Some(Direction) {
        return Some((
            "better",
            "`better` applies to `direction` claims only".into(),
        ));
    }
    if c.read_off_plot && kind != Some(Point) {
        return Some((
            "read_off_plot",
            "`read_off_plot` applies to `point` claims only".into(),
        ));
    }
    if let Some(e) = &c.scored_in {
        if kind.is_none() {
            return Some((
                "scored_in",
                "a claim repeated from another experiment takes the `kind` it has there".into(),
            ));
        }
        if e.trim().is_empty() {
            return Some((
                "scored_in",
                "`scored_in` names the experiment that scores the claim".into(),
            ));
        }
    }
    None
}

/// The 1-based line of `key` in the `index`-th `[[claim]]` table of `text` (the header's line
/// when the key is not written there), for messages.
pub(crate) fn claim_key_line(text: &str, index: usize, key: &str) -> Option<usize> {
    let mut seen = 0usize;
    let mut header = None;
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.starts_with('[') {
            if header.is_some() {
                break;
            }
            if t.starts_with("[[claim]]") {
                if seen == index {
                    header = Some(n + 1);
                }
                seen += 1;
            }
            continue;
        }
        if header.is_some()
            && let Some((k, _)) = t.split_once('=')
            && k.trim() == key
        {
            return Some(n + 1);
        }
    }
    header
}

impl Experiment {
    /// Parse an experiment file's text.
    pub fn parse(text: &str, source: &str, dir: &std::path::Path) -> Result<Experiment, String> {
        let raw: RawExperiment = toml::from_str(text).map_err(|e| format!("{source}: {e}"))?;
        // The scenario's own keys, read from the file itself so an error cites its line.
        #[derive(Deserialize)]
        struct ScenarioOnly {
            #[allow(dead_code)]
            scenario: crate::scenario::RawScenario,
        }
        toml::from_str::<ScenarioOnly>(text).map_err(|e| format!("{source}: [scenario]: {e}"))?;
        let scenario_text =
            toml::to_string(&raw.scenario).map_err(|e| format!("{source}: [scenario]: {e}"))?;
        let mut sweep = raw.sweep.clone();
        if sweep.series.is_empty() {
            sweep.series.push(SeriesSpec {
                name: "run".into(),
                set: Vec::new(),
            });
        }
        for p in &raw.plot {
            let ok = [
                "summary",
                "bins",
                "buffer_cdf",
                "throughput_cdf",
                "queue",
                "buffer_time",
                "throughput_time",
            ]
            .contains(&p.source.as_str());
            if !ok {
                return Err(format!(
                    "{source}: plot `{}`: unknown source `{}`",
                    p.name, p.source
                ));
            }
            if (!p.senders.is_empty() || !p.receivers.is_empty()) && p.source != "throughput_time" {
                return Err(format!(
                    "{source}: plot `{}`: `senders` / `receivers` apply to throughput_time plots only",
                    p.name
                ));
            }
            if !p.senders.is_empty() && !p.receivers.is_empty() {
                return Err(format!(
                    "{source}: plot `{}`: give `senders` or `receivers`, not both",
                    p.name
                ));
            }
            if p.source == "summary" && p.y.is_none() {
                return Err(format!(
                    "{source}: plot `{}`: summary plots need `y` (a summary.json path)",
                    p.name
                ));
            }
            if let Some(x) = &p.x
                && !raw.sweep.axes.iter().any(|a| &a.key == x)
            {
                return Err(format!(
                    "{source}: plot `{}`: x = `{x}` is not a sweep axis key",
                    p.name
                ));
            }
        }
        check_grid(&raw, &sweep, source, text)?;
        for c in &raw.claim {
            for m in std::iter::once(&c.metric).chain(&c.versus) {
                if !runner::valid_metric_path(m) {
                    return Err(format!(
                        "{source}: claim `{}`: malformed metric path `{m}` (dotted keys, an \
                         index, or `name[key=value]`)",
                        c.text
                    ));
                }
            }
            for name in std::iter::once(&c.num).chain(&c.den) {
                if !sweep.series.iter().any(|s| &s.name == name) {
                    return Err(format!(
                        "{source}: claim `{}`: `{name}` is not a series of the sweep",
                        c.text
                    ));
                }
            }
        }
        let scenario_lines = scenario_lines(text, &raw.scenario);
        Ok(Experiment {
            meta: raw.experiment,
            scenario_text,
            scenario_lines,
            sweep,
            quick: raw.quick,
            plots: raw.plot,
            claims: raw.claim,
            dir: dir.to_path_buf(),
            source: source.to_string(),
            seed_override: None,
            seeds_override: Vec::new(),
        })
    }

    /// The same experiment with the scenario's `seed` replaced by `seed` (every point's
    /// workload and RNGs follow it): one command re-runs a paper figure on another sample of
    /// its random workload. An experiment whose sweep lists its own `seeds` is an error (each
    /// point sets its seed, so this one would be ignored): use [`Experiment::with_seeds`].
    pub fn with_seed(mut self, seed: u64) -> Result<Experiment, String> {
        if !self.sweep.seeds.is_empty() {
            return Err(format!(
                "--seed {seed}: {} lists its own seeds ({:?}), which every point sets; use --seeds",
                self.source, self.sweep.seeds
            ));
        }
        let pinned = overrides(&self.sweep.series, &self.quick).find(|(_, x)| set_key(x) == "seed");
        if let Some((who, x)) = pinned {
            return Err(format!(
                "--seed {seed}: {who} of {} sets `{x}`, which would win over --seed for its points",
                self.source
            ));
        }
        let mut t: toml::Table = toml::from_str(&self.scenario_text)
            .map_err(|e| format!("{}: [scenario]: {e}", self.source))?;
        // Above TOML's integer range the scenario takes the seed as a decimal string.
        let v = i64::try_from(seed)
            .map(toml::Value::Integer)
            .unwrap_or_else(|_| toml::Value::String(seed.to_string()));
        t.insert("seed".into(), v);
        self.scenario_text =
            toml::to_string(&t).map_err(|e| format!("{}: [scenario]: {e}", self.source))?;
        self.seed_override = Some(seed);
        Ok(self)
    }

    /// The same experiment run once per seed of `seeds`, in increasing order (replacing the
    /// sweep's own `seeds` list, if any): every claim is then checked on the seeds' mean and,
    /// with two seeds or more, at each seed alone (REPORT.md), and every plot shows each seed.
    /// Errors on an empty list or a repeated seed.
    pub fn with_seeds(mut self, seeds: &[u64]) -> Result<Experiment, String> {
        if seeds.is_empty() {
            return Err("--seeds: give at least one seed (e.g. --seeds 1,2,3)".into());
        }
        let mut sorted = seeds.to_vec();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            return Err(format!("--seeds: a seed is repeated in {seeds:?}"));
        }
        // Sorted: the same set of seeds is the same run (and output directory).
        self.sweep.seeds = sorted.clone();
        self.seeds_override = sorted;
        Ok(self)
    }

    /// The `sfc experiment run` arguments that set this experiment's seeds: `["--seed", "N"]`,
    /// `["--seeds", "A,B,C"]` (the validated, sorted list) or none. What the children of a
    /// sweep are given, REPORT.md's command line shows and the default output directory is
    /// named after ([`Self::seed_dir_suffix`]).
    pub fn seed_args(&self) -> Vec<String> {
        if let Some(s) = self.seed_override {
            vec!["--seed".into(), s.to_string()]
        } else if !self.seeds_override.is_empty() {
            let l: Vec<String> = self.seeds_override.iter().map(|s| s.to_string()).collect();
            vec!["--seeds".into(), l.join(",")]
        } else {
            Vec::new()
        }
    }

    /// Suffix of the default output directory for [`Self::seed_args`]: `-seedN`,
    /// `-seedsA-B-C` or nothing.
    pub fn seed_dir_suffix(&self) -> String {
        match self.seed_args().as_slice() {
            [flag, v] => format!("-{}{}", flag.trim_start_matches('-'), v.replace(',', "-")),
            _ => String::new(),
        }
    }

    /// Load an experiment file.
    pub fn load(path: &std::path::Path) -> Result<Experiment, String> {
        let text = crate::fsutil::read_text(path)?;
        let dir = path
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default();
        Self::parse(&text, &path.display().to_string(), &dir)
    }
}

/// What an experiment directory holds: the files that load (sorted by experiment name) and,
/// for each `*.toml` that does not, its path and error.
pub struct DirListing {
    /// Experiment files that load, sorted by `[experiment] name`.
    pub loaded: Vec<(std::path::PathBuf, Experiment)>,
    /// Files that do not load (sorted by path): the path and the error.
    pub broken: Vec<(std::path::PathBuf, String)>,
}

/// Read every `*.toml` in `dir`. A broken file does not hide the others (it is reported in
/// [`DirListing::broken`]); two files naming the same experiment are an error naming both.
pub fn scan(dir: &std::path::Path) -> Result<DirListing, String> {
    if !dir.is_dir() {
        return Err(format!(
            "experiment directory {} does not exist (omit --dir to use the experiments built into sfc)",
            dir.display()
        ));
    }
    let rd = std::fs::read_dir(dir)
        .map_err(|e| crate::fsutil::describe("cannot list experiment directory", dir, &e))?;
    let mut paths: Vec<std::path::PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    let mut loaded = Vec::new();
    let mut broken = Vec::new();
    for p in paths {
        match Experiment::load(&p) {
            Ok(e) => loaded.push((p, e)),
            Err(e) => broken.push((p, e)),
        }
    }
    loaded.sort_by(|a, b| a.1.meta.name.cmp(&b.1.meta.name));
    for w in loaded.windows(2) {
        if w[0].1.meta.name == w[1].1.meta.name {
            return Err(format!(
                "{} and {} both define experiment `{}` (rename one: `[experiment] name`)",
                w[0].0.display(),
                w[1].0.display(),
                w[0].1.meta.name
            ));
        }
    }
    Ok(DirListing { loaded, broken })
}

/// Experiment files in `dir` (sorted by name); an error if any `*.toml` there does not load
/// (every broken file is named) or two define the same experiment.
pub fn list(dir: &std::path::Path) -> Result<Vec<(std::path::PathBuf, Experiment)>, String> {
    let l = scan(dir)?;
    if l.broken.is_empty() {
        return Ok(l.loaded);
    }
    Err(broken_files(&l.broken))
}

/// "N experiment file(s) do not load:" and each file's error.
pub fn broken_files(broken: &[(std::path::PathBuf, String)]) -> String {
    let mut m = format!(
        "{} experiment file{} in the directory do{} not load:",
        broken.len(),
        if broken.len() == 1 { "" } else { "s" },
        if broken.len() == 1 { "es" } else { "" }
    );
    for (p, e) in broken {
        let e = e.strip_prefix(&format!("{}: ", p.display())).unwrap_or(e);
        let e = e.trim_end().replace('\n', "\n    ");
        m.push_str(&format!("\n  {}: {e}", p.display()));
    }
    m
}

/// Find experiment `name` (a name in `dir`, or a path to a file). Files of `dir` that do not
/// load stop the search only when they could be the one asked for: a file named `NAME.toml`
/// (its error is returned), or any, when no loaded file defines `name`.
pub fn find(name: &str, dir: &std::path::Path) -> Result<Experiment, String> {
    let p = std::path::Path::new(name);
    if p.extension().is_some_and(|x| x == "toml") && p.exists() {
        return Experiment::load(p);
    }
    let l = scan(dir)?;
    if let Some((_, e)) = l
        .broken
        .iter()
        .find(|(p, _)| p.file_stem().is_some_and(|s| s == name))
    {
        return Err(e.clone());
    }
    if let Some((_, e)) = l.loaded.into_iter().find(|(_, e)| e.meta.name == name) {
        return Ok(e);
    }
    let mut m = format!(
        "no experiment named `{name}` in {} (see `sfc experiment list --dir {}`)",
        dir.display(),
        dir.display()
    );
    if !l.broken.is_empty() {
        m.push_str("; it may be in one of the files that do not load.\n");
        m.push_str(&broken_files(&l.broken));
    }
    Err(m)
}

/// The experiments built into the binary ([`builtin::BUILTIN`]), sorted by name; each is
/// labelled `<built-in>/FILE`.
pub fn list_builtin() -> Result<Vec<(std::path::PathBuf, Experiment)>, String> {
    let mut v = Vec::new();
    for (file, text) in builtin::BUILTIN {
        let label = std::path::PathBuf::from("<built-in>").join(file);
        let e = Experiment::parse(
            text,
            &label.display().to_string(),
            std::path::Path::new("experiments"),
        )?;
        v.push((label, e));
    }
    v.sort_by(|a, b| a.1.meta.name.cmp(&b.1.meta.name));
    Ok(v)
}

/// Find an experiment by name (or a path to an experiment file) in `dir`, or among the
/// built-in experiments when `dir` is `None`.
pub fn find_in(name: &str, dir: Option<&std::path::Path>) -> Result<Experiment, String> {
    let Some(dir) = dir else {
        let p = std::path::Path::new(name);
        if p.extension().is_some_and(|x| x == "toml") && p.exists() {
            return Experiment::load(p);
        }
        return list_builtin()?
            .into_iter()
            .map(|(_, e)| e)
            .find(|e| e.meta.name == name)
            .ok_or_else(|| {
                format!("no experiment named `{name}` among the built-in ones (see `sfc experiment list`)")
            });
    };
    find(name, dir)
}

#[cfg(test)]
mod tests {
    use super::Experiment;

    /// `senders` / `receivers` select hosts of a `throughput_time` plot: elsewhere, or both
    /// at once, they are an error naming the plot.
    #[test]
    fn plot_host_selection_is_checked() {
        let base = include_str!("../../experiments/sfc-fig15.toml");
        let dir = std::path::Path::new(".");
        assert!(Experiment::parse(base, "fig15", dir).is_ok());
        for (extra, want) in [
            (
                "[[plot]]\nname = \"x\"\nsource = \"queue\"\nsenders = [1]\n",
                "apply to throughput_time plots only",
            ),
            (
                "[[plot]]\nname = \"x\"\nsource = \"throughput_time\"\nsenders = [1]\nreceivers = [0]\n",
                "not both",
            ),
        ] {
            let e = Experiment::parse(&format!("{base}\n{extra}"), "fig15", dir).unwrap_err();
            assert!(e.contains("plot `x`") && e.contains(want), "{e}");
        }
    }

    /// A small experiment: a 2-host star, one axis (`stop`) and two series, with `sweep`
    /// (the `[sweep]` body) and `extra` (plots, claims, `[quick]`) filled in by each case.
    fn mini(sweep: &str, extra: &str) -> String {
        format!(
            "[experiment]\nname = \"mini\"\ntitle = \"t\"\n\
             [scenario]\nname = \"s\"\n[scenario.topology]\nkind = \"star\"\nhosts = 2\n\
             [[scenario.traffic]]\nkind = \"long_lived\"\npairs = [[0, 1]]\nsize = \"1MB\"\n\
             [sweep]\n{sweep}\n{extra}"
        )
    }

    const GRID: &str = "axes = [{ key = \"stop\", values = [\"20us\", \"40us\"] }]\n\
                        series = [{ name = \"A\", set = [] }, { name = \"B\", set = ['cc.kind=\"dcqcn\"'] }]";

    /// Sweeps that would run something other than what they label, names that would write
    /// outside the output directory, and plots or claims naming what does not exist are
    /// refused when the file is read, each naming what is wrong.
    #[test]
    fn grid_plots_and_claims_are_checked_when_read() {
        let dir = std::path::Path::new(".");
        let parse = |t: &str| Experiment::parse(t, "x.toml", dir);
        assert!(parse(&mini(GRID, "")).is_ok());
        let series = |s: &str| {
            format!("axes = [{{ key = \"stop\", values = [\"20us\", \"40us\"] }}]\nseries = [{s}]")
        };
        let claim = |body: &str| {
            format!("[[claim]]\ntext = \"c\"\nmetric = \"events\"\nnum = \"A\"\n{body}\n")
        };
        let plot = |body: &str| format!("[[plot]]\nname = \"p\"\n{body}\n");
        for (sweep, extra, want) in [
            // Point ids that collide: repeated or look-alike names, values, seeds.
            (series("{ name = \"A\" }, { name = \"A\" }"), String::new(), "share the id"),
            (series("{ name = \"x y\" }, { name = \"x_y\" }"), String::new(), "share the id"),
            (
                "axes = [{ key = \"stop\", values = [\"20us\", \"20us\"] }]".into(),
                String::new(),
                "share the id",
            ),
            ("seeds = [1, 1, 2]".into(), String::new(), "share the id"),
            ("series = [{ name = \"..\" }]".into(), String::new(), "would be named `..`"),
            ("series = [{ name = \"\" }]".into(), String::new(), "would be named ``"),
            // Overrides that would beat the axis, repeated or empty axes, bad quick axes.
            (series("{ name = \"A\", set = ['stop=\"10us\"'] }"), String::new(), "sets the sweep axis `stop`"),
            (
                "axes = [{ key = \"stop\", values = [\"20us\"] }, { key = \"stop\", values = [\"40us\"] }]".into(),
                String::new(),
                "axis `stop` is given twice",
            ),
            ("axes = [{ key = \"stop\", values = [] }]".into(), String::new(), "has no values"),
            (GRID.into(), "[quick]\nset = ['stop=\"5us\"']\n".into(), "[quick] set: `stop=\"5us\"` sets the sweep axis"),
            (GRID.into(), "[quick]\naxes = [{ key = \"stopp\", values = [1] }]\n".into(), "is not a sweep axis"),
            // Overrides naming unknown keys or giving a wrong type; compare variants.
            (series("{ name = \"A\", set = ['cc.etaa=0.5'] }"), String::new(), "unknown field `etaa`"),
            ("axes = [{ key = \"cc.etta\", values = [0.9] }]".into(), String::new(), "unknown field `etta`"),
            (
                "axes = [{ key = \"topology.hosts\", values = [2, \"x\"] }]".into(),
                String::new(),
                "(with `topology.hosts=\"x\"`): invalid type: string",
            ),
            (
                "seeds = [1, 2]\nseries = [{ name = \"A\", set = ['seed=7'] }]".into(),
                String::new(),
                "sets the seed, which the sweep's `seeds` set",
            ),
            (GRID.into(), "[[scenario.compare]]\nname = \"v\"\nset = []\n".into(), "scenario.compare"),
            // Too many points.
            (
                format!("axes = [{}]", (0..6).map(|i| format!("{{ key = \"traffic.0.size\", values = [{}] }}", (0..10).map(|v| format!("\"{v}{i}KB\"")).collect::<Vec<_>>().join(", "))).collect::<Vec<_>>().join(", ")),
                String::new(),
                "given twice",
            ),
            // Plots and claims.
            (GRID.into(), plot("source = \"bins\"\ny = \"p98\""), "p50, p95, p99 or p999"),
            (GRID.into(), plot("source = \"summary\"\ny = \"events\"\nkind = \"pie\""), "unknown kind `pie`"),
            (GRID.into(), plot("source = \"bins\"\nx = \"stop\""), "`x` applies to summary plots only"),
            (GRID.into(), plot("source = \"bins\"\nfilter = { stopp = \"20us\" }"), "filter key `stopp`"),
            (GRID.into(), plot("source = \"bins\"\nfilter = { stop = \"30us\" }"), "not one of the axis's values"),
            (GRID.into(), format!("{}{}", plot("source = \"bins\""), plot("source = \"bins\"")), "two plots have this name"),
            (GRID.into(), plot("source = \"bins\"").replace("\"p\"", "\"../p\""), "not a usable name"),
            (GRID.into(), claim("paper_low = nan"), "must be finite"),
            (GRID.into(), claim("paper_low = 1e9\npaper_high = 1.0"), "paper_low ≤ paper_high"),
            (GRID.into(), claim("paper_low = 1.0\npaper_high = inf"), "must be finite"),
            (GRID.into(), claim("paper_low = 1.0\ntolerance = -5.0"), "tolerance -5"),
            (GRID.into(), claim("paper_low = 1.0\ntolerance = nan"), "tolerance NaN"),
            (GRID.into(), claim("paper_low = 1.0\nfilter = { stop = \"1s\" }"), "not one of the axis's values"),
        ] {
            let e = parse(&mini(&sweep, &extra)).unwrap_err();
            assert!(e.starts_with("x.toml: ") && e.contains(want), "{sweep} / {extra}: {e}");
        }
        // The name of the experiment becomes the default output directory.
        let e = parse(&mini(GRID, "").replace("name = \"mini\"", "name = \"../x\"")).unwrap_err();
        assert!(e.contains("not a usable name"), "{e}");
        // The scenario's own errors cite the experiment file's line.
        let t = mini(GRID, "").replace("hosts = 2\n", "hosts = 2\nspinez = 4\n");
        let e = parse(&t).unwrap_err();
        assert!(
            e.contains("[scenario]") && e.contains("line 9") && e.contains("spinez"),
            "{e}"
        );
        // A grid of more than MAX_POINTS points is refused before it is expanded.
        let big = format!(
            "axes = [{}]",
            [
                "stop",
                "seed",
                "traffic.0.size",
                "topology.host_delay",
                "cc.kind"
            ]
            .iter()
            .map(|k| format!(
                "{{ key = \"{k}\", values = [{}] }}",
                (0..20)
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
            .collect::<Vec<_>>()
            .join(", ")
        );
        let e = parse(&mini(&big, "")).unwrap_err();
        assert!(e.contains("3200000 points") && e.contains("100000"), "{e}");
    }

    /// Claim fields each `kind` refuses or needs: an error naming the claim, the key and its
    /// line in the file; an unknown kind is refused by the reader with its line.
    #[test]
    fn claim_kinds_are_checked_when_read() {
        let dir = std::path::Path::new(".");
        let parse = |t: &str| Experiment::parse(t, "x.toml", dir);
        let claim = |body: &str| {
            format!(
                "[[claim]]\ntext = \"c\"\nmetric = \"events\"\nnum = \"A\"\nden = \"B\"\n{body}\n"
            )
        };
        for ok in [
            "kind = \"point\"\npaper_low = 2.0\nquote = \"q\"",
            "kind = \"point\"\npaper_low = 2.0\nread_off_plot = true",
            "kind = \"range\"\npaper_low = 1.0\npaper_high = 2.0",
            "kind = \"bound\"\npaper_high = 20.0",
            "kind = \"bound\"\npaper_low = 1.0",
            "kind = \"direction\"\nbetter = \"lower\"\nsource = \"Fig. 3 (plot)\"",
            "kind = \"point\"\npaper_low = 2.0\ncalibrated = [{ param = \"cc.eta\", why = \"w\", paper_value = \"0.95\" }]",
            "paper_low = 1.0\ntolerance = 0.5",
        ] {
            assert!(parse(&mini(GRID, &claim(ok))).is_ok(), "{ok}");
        }
        // The claim starts on line 16 of `mini`'s text: text 17, metric 18, num 19, den 20, then
        // the body's lines from 21.
        for (body, want) in [
            (
                "kind = \"point\"\npaper_low = 2.0\ntolerance = 0.1",
                "(line 23, `tolerance`): a `point` claim takes the tolerance of its kind",
            ),
            (
                "kind = \"direction\"\nbetter = \"higher\"\ntolerance = 0.0",
                "(line 23, `tolerance`)",
            ),
            ("kind = \"direction\"", "(line 16, `better`)"),
            (
                "kind = \"point\"",
                "(line 16, `paper_low`): missing field `paper_low`",
            ),
            ("paper_high = 2.0", "missing field `paper_low`"),
            (
                "kind = \"point\"\npaper_low = 1.0\npaper_high = 2.0",
                "a `point` claim is one number",
            ),
            (
                "kind = \"range\"\npaper_low = 1.0",
                "needs `paper_high` too",
            ),
            (
                "kind = \"bound\"\npaper_low = 1.0\npaper_high = 2.0",
                "gives one end",
            ),
            (
                "kind = \"range\"\npaper_low = 1.0\npaper_high = 2.0\nbetter = \"higher\"",
                "`better` applies to `direction` claims only",
            ),
            (
                "kind = \"range\"\npaper_low = 1.0\npaper_high = 2.0\nread_off_plot = true",
                "`read_off_plot` applies to `point` claims only",
            ),
            (
                "kind = \"point\"\npaper_low = 1.0\nquote = \"q\"\nsource = \"s\"",
                "not both",
            ),
        ] {
            let e = parse(&mini(GRID, &claim(body))).unwrap_err();
            assert!(
                e.starts_with("x.toml: claim `c`") && e.contains(want),
                "{body}: {e}"
            );
        }
        // An unknown kind, `better` or key: the reader's message with the line.
        for body in [
            (
                "kind = \"pointy\"\npaper_low = 1.0",
                "line 21",
                "unknown variant `pointy`",
            ),
            (
                "kind = \"direction\"\nbetter = \"up\"",
                "line 22",
                "unknown variant `up`",
            ),
            (
                "kind = \"point\"\npaper_low = 1.0\nquotes = \"q\"",
                "line 23",
                "unknown field `quotes`",
            ),
            (
                "kind = \"point\"\npaper_low = 1.0\ncalibrated = [{ param = \"x\" }]",
                "line 23",
                "missing field `why`",
            ),
        ] {
            let (body, line, want) = body;
            let e = parse(&mini(GRID, &claim(body))).unwrap_err();
            assert!(e.contains(line) && e.contains(want), "{body}: {e}");
        }
    }

    /// The `[scenario]` table is cut out of the file with its lines kept (headers without
    /// `scenario.`), and not when it cannot be (a `scenario.x` key outside the table).
    #[test]
    fn scenario_lines_keep_the_files_lines() {
        let text = "[experiment]\nname = \"x\"\ntitle = \"t\"\n\n[scenario]\nseed = 2\n\
                    [scenario.topology] # star\nkind = \"star\"\n[[scenario.traffic]]\nkind = \"incast\"\n\
                    [sweep]\nseeds = [1]\n";
        let raw: toml::Table = text.parse().unwrap();
        let scenario = raw["scenario"].as_table().unwrap();
        let lines = super::scenario_lines(text, scenario).expect("cut out");
        let l: Vec<&str> = lines.lines().collect();
        assert_eq!(l.len(), text.lines().count());
        assert_eq!(l[5], "seed = 2");
        assert_eq!(l[6], "[topology]");
        assert_eq!(l[8], "[[traffic]]");
        assert_eq!(l[11], "");
        let dotted = "[experiment]\nname = \"x\"\n[scenario]\ntopology.kind = \"star\"\n";
        let raw: toml::Table = dotted.parse().unwrap();
        assert!(super::scenario_lines(dotted, raw["scenario"].as_table().unwrap()).is_some());
        let root = "scenario.seed = 1\n[experiment]\nname = \"x\"\n";
        let raw: toml::Table = root.parse().unwrap();
        assert!(super::scenario_lines(root, raw["scenario"].as_table().unwrap()).is_none());
    }

    /// `--seed` is refused when a series pins its own seed (it would be ignored there).
    #[test]
    fn seed_override_refuses_a_series_that_pins_the_seed() {
        let dir = std::path::Path::new(".");
        let t = mini(
            "series = [{ name = \"A\" }, { name = \"pinned\", set = ['seed=7'] }]",
            "",
        );
        let e = Experiment::parse(&t, "x.toml", dir)
            .unwrap()
            .with_seed(2)
            .unwrap_err();
        assert!(e.contains("series `pinned`") && e.contains("seed=7"), "{e}");
    }
}
