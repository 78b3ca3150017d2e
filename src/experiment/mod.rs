//! Paper-figure experiments: a checked-in TOML description (a scenario plus the parameter grid
//! it sweeps, the plots to draw and the paper's numbers to compare with), run in parallel with
//! resume, aggregated into CSVs, PNG/SVG plots and a `REPORT.md`.
//!
//! File format (`experiments/*.toml`, see `docs/experiments.md`):
//! ```toml
//! [experiment]            # name, title, paper, figure, description
//! [scenario]              # a full scenario (same keys as a scenario file)
//! [sweep]                 # axes = [{ key, values }], series = [{ name, set }], seeds = [..]
//! [quick]                 # set = [...] overrides for --quick; axes = [...] replaces axis values
//! [[plot]]                # what to draw (see `Plot`)
//! [[claim]]               # paper numbers to put next to ours in REPORT.md
//! ```

pub mod builtin;
pub mod runner;

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
    /// Paper's range (inclusive); a single value → low = high.
    pub paper_low: f64,
    /// Paper's range.
    #[serde(default)]
    pub paper_high: Option<f64>,
    /// Relative tolerance for "matches" around the range (default 0.25).
    #[serde(default)]
    pub tolerance: Option<f64>,
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

impl Experiment {
    /// Parse an experiment file's text.
    pub fn parse(text: &str, source: &str, dir: &std::path::Path) -> Result<Experiment, String> {
        let raw: RawExperiment = toml::from_str(text).map_err(|e| format!("{source}: {e}"))?;
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
        Ok(Experiment {
            meta: raw.experiment,
            scenario_text,
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
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let dir = path
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default();
        Self::parse(&text, &path.display().to_string(), &dir)
    }
}

/// Experiment files in `dir` (sorted by name).
pub fn list(dir: &std::path::Path) -> Result<Vec<(std::path::PathBuf, Experiment)>, String> {
    let mut v = Vec::new();
    if !dir.is_dir() {
        return Err(format!(
            "experiment directory {} does not exist (omit --dir to use the experiments built into sfc)",
            dir.display()
        ));
    }
    let rd = std::fs::read_dir(dir)
        .map_err(|e| crate::fsutil::describe("cannot list experiment directory", dir, &e))?;
    for e in rd.flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "toml") {
            v.push((p.clone(), Experiment::load(&p)?));
        }
    }
    v.sort_by(|a, b| a.1.meta.name.cmp(&b.1.meta.name));
    Ok(v)
}

/// Find experiment `name` (a name in `dir`, or a path to a file).
pub fn find(name: &str, dir: &std::path::Path) -> Result<Experiment, String> {
    let p = std::path::Path::new(name);
    if p.extension().is_some_and(|x| x == "toml") && p.exists() {
        return Experiment::load(p);
    }
    for (_, e) in list(dir)? {
        if e.meta.name == name {
            return Ok(e);
        }
    }
    Err(format!(
        "no experiment named `{name}` in {} (see `sfc experiment list`)",
        dir.display()
    ))
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
}
