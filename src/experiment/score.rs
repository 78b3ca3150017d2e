//! The score of the claims: each experiment's claims as evaluated by `sfc experiment run`
//! (`claims.csv`), counted per paper by `sfc experiment score` and at the top of every
//! REPORT.md.
//!
//! A claim is counted by its kind: `point`, `range` and `bound` claims together, `direction`
//! claims apart (better/worse only says less); a claim with a calibrated parameter is shown
//! but never counted as a match, a claim repeated from the experiment that scores it
//! (`scored_in`: the same sentence under a setting the paper does not use) is shown but not
//! counted, and a claim without `kind` is unaudited (not scored).
//!
//! A claim of a sweep run on several seeds (`--seeds`) is evaluated on the mean over the
//! seeds of its value at each seed; `claims.csv` also gives the seeds, how many of them match
//! alone and the spread (lowest and highest value), and the score counts the scored claims
//! evaluated on three seeds or more.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One claim evaluated on one experiment's results: a row of `claims.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct ClaimRecord {
    /// Experiment name.
    pub experiment: String,
    /// Paper (the experiment's `[experiment] paper`).
    pub paper: String,
    /// The claim's text.
    pub claim: String,
    /// `point`, `range`, `bound`, `direction`, or empty (unaudited).
    pub kind: String,
    /// Our value (`None`: no data).
    pub value: Option<f64>,
    /// Lowest value that matches (`None`: unbounded below).
    pub low: Option<f64>,
    /// Highest value that matches (`None`: unbounded above).
    pub high: Option<f64>,
    /// `matches`, `differs (…)`, `no data (…)`, `undefined (0 / 0)`.
    pub verdict: String,
    /// The calibrated parameters, `;`-separated (empty: none).
    pub calibrated: String,
    /// Has the claim a `kind`?
    pub audited: bool,
    /// The experiment that scores the claim's sentence, when it is not this one (empty:
    /// this one).
    pub scored_in: String,
    /// Seeds the claim has a value at (0: a run without `--seeds`; `value` is then the
    /// claim on that run).
    pub seeds: u32,
    /// Of them, the seeds at which the claim matches alone.
    pub seeds_matching: u32,
    /// Lowest value at one seed (`None` without seeds).
    pub value_min: Option<f64>,
    /// Highest value at one seed (`None` without seeds).
    pub value_max: Option<f64>,
}

/// The columns of `claims.csv`.
pub const CLAIMS_CSV_HEADER: &str = "experiment,paper,claim,kind,value,low,high,verdict,\
                                     calibrated,audited,scored_in,seeds,seeds_matching,\
                                     value_min,value_max";

/// The headers of a `claims.csv` written without the last columns (read as if they were
/// empty): without the seeds' columns, and also without `scored_in`.
const CLAIMS_CSV_HEADERS_OLD: [&str; 2] = [
    "experiment,paper,claim,kind,value,low,high,verdict,calibrated,audited,scored_in",
    "experiment,paper,claim,kind,value,low,high,verdict,calibrated,audited",
];

/// `claims.csv`: [`CLAIMS_CSV_HEADER`] and one row per record (numbers as Rust prints
/// `f64`, an empty field for none; `inf` / `NaN` for an infinite ratio or 0 / 0).
pub fn claims_csv(records: &[ClaimRecord]) -> String {
    use super::runner::csv_field;
    let num = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v}"));
    let mut out = format!("{CLAIMS_CSV_HEADER}\n");
    for r in records {
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            csv_field(&r.experiment),
            csv_field(&r.paper),
            csv_field(&r.claim),
            csv_field(&r.kind),
            num(r.value),
            num(r.low),
            num(r.high),
            csv_field(&r.verdict),
            csv_field(&r.calibrated),
            r.audited,
            csv_field(&r.scored_in),
            r.seeds,
            r.seeds_matching,
            num(r.value_min),
            num(r.value_max)
        ));
    }
    out
}

/// The fields of each line of a CSV text (RFC 4180: quoted fields may hold commas, doubled
/// quotes and line breaks).
fn csv_rows(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        match (quoted, ch) {
            (true, '"') if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (true, _) => field.push(ch),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\r') => {}
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, _) => field.push(ch),
        }
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    rows
}

/// Parse `claims.csv` (`what` names it in errors).
pub fn parse_claims_csv(text: &str, what: &str) -> Result<Vec<ClaimRecord>, String> {
    let rows = csv_rows(text);
    let width = match rows.first() {
        Some(h) => std::iter::once(CLAIMS_CSV_HEADER)
            .chain(CLAIMS_CSV_HEADERS_OLD)
            .map(|x| x.split(',').collect::<Vec<&str>>())
            .find(|x| x == h)
            .map(|x| x.len()),
        None => None,
    };
    let Some(width) = width else {
        return Err(format!(
            "{what}: not a claims.csv (its first line is not `{CLAIMS_CSV_HEADER}`)"
        ));
    };
    let num = |s: &str, line: usize| -> Result<Option<f64>, String> {
        if s.is_empty() {
            return Ok(None);
        }
        s.parse::<f64>()
            .map(Some)
            .map_err(|_| format!("{what}:{line}: `{s}` is not a number"))
    };
    let mut out = Vec::new();
    for (i, r) in rows.iter().enumerate().skip(1) {
        if r.len() != width {
            return Err(format!("{what}:{}: {} fields, not {width}", i + 1, r.len()));
        }
        out.push(ClaimRecord {
            experiment: r[0].clone(),
            paper: r[1].clone(),
            claim: r[2].clone(),
            kind: r[3].clone(),
            value: num(&r[4], i + 1)?,
            low: num(&r[5], i + 1)?,
            high: num(&r[6], i + 1)?,
            verdict: r[7].clone(),
            calibrated: r[8].clone(),
            audited: r[9] == "true",
            scored_in: r.get(10).cloned().unwrap_or_default(),
            seeds: match r.get(11).map(String::as_str) {
                None | Some("") => 0,
                Some(s) => s
                    .parse()
                    .map_err(|_| format!("{what}:{}: seeds `{s}` is not a count", i + 1))?,
            },
            seeds_matching: match r.get(12).map(String::as_str) {
                None | Some("") => 0,
                Some(s) => s.parse().map_err(|_| {
                    format!("{what}:{}: seeds_matching `{s}` is not a count", i + 1)
                })?,
            },
            value_min: num(r.get(13).map_or("", String::as_str), i + 1)?,
            value_max: num(r.get(14).map_or("", String::as_str), i + 1)?,
        });
    }
    Ok(out)
}

/// The count of one paper's (or every paper's) claims.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// `point`, `range` and `bound` claims that match.
    pub value_matched: usize,
    /// `point`, `range` and `bound` claims scored.
    pub value_total: usize,
    /// `direction` claims that match.
    pub direction_matched: usize,
    /// `direction` claims scored.
    pub direction_total: usize,
    /// Audited claims with a calibrated parameter (evaluated, not scored).
    pub calibrated: usize,
    /// Audited claims repeated from the experiment that scores them (not scored here).
    pub repeated: usize,
    /// Claims without `kind` (not scored).
    pub unaudited: usize,
    /// Scored claims (point, range, bound or direction) evaluated on the mean of three
    /// seeds or more.
    pub on_three_seeds: usize,
    /// Of them, the claims that match at every seed alone too.
    pub at_every_seed: usize,
}

impl Tally {
    /// Count `r`.
    pub fn add(&mut self, r: &ClaimRecord) {
        let ok = r.verdict == "matches";
        if !r.audited {
            self.unaudited += 1;
        } else if !r.scored_in.is_empty() {
            self.repeated += 1;
        } else if !r.calibrated.is_empty() {
            self.calibrated += 1;
        } else {
            if r.kind == "direction" {
                self.direction_total += 1;
                self.direction_matched += ok as usize;
            } else {
                self.value_total += 1;
                self.value_matched += ok as usize;
            }
            if r.seeds >= 3 {
                self.on_three_seeds += 1;
                self.at_every_seed += (r.seeds_matching == r.seeds) as usize;
            }
        }
    }

    /// The count of `records`.
    pub fn of(records: &[ClaimRecord]) -> Tally {
        let mut t = Tally::default();
        records.iter().for_each(|r| t.add(r));
        t
    }

    /// Sum of two counts.
    fn plus(self, o: Tally) -> Tally {
        Tally {
            value_matched: self.value_matched + o.value_matched,
            value_total: self.value_total + o.value_total,
            direction_matched: self.direction_matched + o.direction_matched,
            direction_total: self.direction_total + o.direction_total,
            calibrated: self.calibrated + o.calibrated,
            repeated: self.repeated + o.repeated,
            unaudited: self.unaudited + o.unaudited,
            on_three_seeds: self.on_three_seeds + o.on_three_seeds,
            at_every_seed: self.at_every_seed + o.at_every_seed,
        }
    }
}

/// The score table's header (Markdown).
const TABLE_HEAD: &str = "| paper | point/range/bound matched | direction matched | scored on ≥ 3 seeds (matching at every seed) | calibrated (not scored) | repeated from another experiment (not scored) | unaudited (not scored) |\n|---|---|---|---|---|---|---|\n";

/// One row of the score table.
fn table_row(name: &str, t: &Tally) -> String {
    format!(
        "| {name} | {} of {} | {} of {} | {} ({}) | {} | {} | {} |\n",
        t.value_matched,
        t.value_total,
        t.direction_matched,
        t.direction_total,
        t.on_three_seeds,
        t.at_every_seed,
        t.calibrated,
        t.repeated,
        t.unaudited
    )
}

/// REPORT.md's score of its own claims (a "Score" section with a one-row table).
pub fn markdown(t: &Tally) -> String {
    format!(
        "## Score\n\nClaims of this experiment counted by `sfc experiment score`: point, range and \
         bound claims (the paper's number ± 20 %, ± 30 % read off a plot; its range ± 10 %; its \
         bound) and direction claims (better or worse only) matched of total, and the scored \
         claims evaluated on the mean of three seeds or more (with those that match at every \
         seed alone); claims with a calibrated parameter, claims repeated from the experiment that scores them \
         (`scored_in`: the paper's sentence under a setting the paper does not use) and \
         unaudited claims (no `kind`) are shown below but not scored.\n\n{TABLE_HEAD}{}",
        table_row("this experiment", t)
    )
}

/// Per-paper counts of `records` (papers sorted by name) and their total.
pub fn by_paper(records: &[ClaimRecord]) -> (BTreeMap<String, Tally>, Tally) {
    let mut per: BTreeMap<String, Tally> = BTreeMap::new();
    for r in records {
        per.entry(r.paper.clone()).or_default().add(r);
    }
    let total = per.values().fold(Tally::default(), |a, &b| a.plus(b));
    (per, total)
}

/// The score table of `records`: one row per paper and a total row (Markdown).
pub fn table(records: &[ClaimRecord]) -> String {
    let (per, total) = by_paper(records);
    let mut out = String::from(TABLE_HEAD);
    for (p, t) in &per {
        out.push_str(&table_row(if p.is_empty() { "(no paper)" } else { p }, t));
    }
    out.push_str(&table_row("total", &total));
    out
}

/// The score as JSON: `papers` (one object per paper with the counts of [`Tally`]) and
/// `total`.
pub fn json(records: &[ClaimRecord]) -> serde_json::Value {
    let obj = |t: &Tally| {
        serde_json::json!({
            "value_matched": t.value_matched,
            "value_total": t.value_total,
            "direction_matched": t.direction_matched,
            "direction_total": t.direction_total,
            "calibrated": t.calibrated,
            "repeated": t.repeated,
            "unaudited": t.unaudited,
            "on_three_seeds": t.on_three_seeds,
            "at_every_seed": t.at_every_seed,
        })
    };
    let (per, total) = by_paper(records);
    let papers: Vec<serde_json::Value> = per
        .iter()
        .map(|(p, t)| {
            let mut o = obj(t);
            o["paper"] = serde_json::Value::String(p.clone());
            o
        })
        .collect();
    serde_json::json!({ "papers": papers, "total": obj(&total) })
}

/// Where `sfc experiment run NAME` writes its results under `dir`, the first that holds a
/// `claims.csv` of: the full run on several seeds (`dir/NAME-seedsA-B-…`; of several, the
/// one with the most seeds), the full run (`dir/NAME`), the `--quick` run on several seeds
/// (`dir/NAME-quick-seeds…`), the `--quick` run (`dir/NAME-quick`); `None` when none does.
pub fn results_dir(dir: &Path, name: &str) -> Option<PathBuf> {
    let seeded = |stem: &str| -> Option<PathBuf> {
        let prefix = format!("{stem}-seeds");
        let mut found: Vec<(usize, String)> = std::fs::read_dir(dir)
            .ok()?
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter_map(|n| {
                let seeds = n.strip_prefix(&prefix)?;
                let count = seeds.split('-').count();
                let ok = !seeds.is_empty()
                    && seeds.split('-').all(|s| s.parse::<u64>().is_ok())
                    && dir.join(&n).join("claims.csv").is_file();
                ok.then_some((count, n))
            })
            .collect();
        // Most seeds first, then by name.
        found.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        found.into_iter().next().map(|(_, n)| dir.join(n))
    };
    let plain = |stem: &str| -> Option<PathBuf> {
        let d = dir.join(stem);
        d.join("claims.csv").is_file().then_some(d)
    };
    let quick = format!("{name}-quick");
    seeded(name)
        .or_else(|| plain(name))
        .or_else(|| seeded(&quick))
        .or_else(|| plain(&quick))
}

/// The records of experiment `name` under `dir` (see [`results_dir`]), or the message saying
/// which command produces them.
pub fn read_results(dir: &Path, name: &str) -> Result<(PathBuf, Vec<ClaimRecord>), String> {
    let Some(d) = results_dir(dir, name) else {
        return Err(format!(
            "{name}: no results in {}, {} or their -seeds… variants (no claims.csv): `sfc \
             experiment run {name} [--quick] [--seeds 1,2,3] --out {}` produces them",
            dir.join(name).display(),
            dir.join(format!("{name}-quick")).display(),
            dir.join(name).display()
        ));
    };
    let f = d.join("claims.csv");
    let text = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
    let recs = parse_claims_csv(&text, &f.display().to_string())?;
    Ok((d, recs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(paper: &str, kind: &str, verdict: &str, calibrated: &str) -> ClaimRecord {
        ClaimRecord {
            experiment: "e".into(),
            paper: paper.into(),
            claim: "a, \"quoted\" claim".into(),
            kind: kind.into(),
            value: Some(1.5),
            low: Some(1.2),
            high: None,
            verdict: verdict.into(),
            calibrated: calibrated.into(),
            audited: !kind.is_empty(),
            scored_in: String::new(),
            seeds: 0,
            seeds_matching: 0,
            value_min: None,
            value_max: None,
        }
    }

    /// `r` evaluated on `seeds` seeds, `matching` of which match alone.
    fn on_seeds(r: ClaimRecord, seeds: u32, matching: u32) -> ClaimRecord {
        ClaimRecord {
            seeds,
            seeds_matching: matching,
            value_min: Some(1.0),
            value_max: Some(2.0),
            ..r
        }
    }

    /// The counts by hand: per paper, value claims (point/range/bound) and direction claims
    /// matched of total; calibrated, repeated and unaudited apart (never matched), and the
    /// total row.
    #[test]
    fn score_counts_by_kind_and_paper() {
        let rs = vec![
            rec("HPCC", "point", "matches", ""),
            rec("HPCC", "range", "differs (ours lower)", ""),
            rec("HPCC", "bound", "matches", ""),
            rec("HPCC", "direction", "matches", ""),
            rec("HPCC", "direction", "no data", ""),
            rec("HPCC", "point", "matches", "sfc.bts_delay"),
            rec("HPCC", "", "matches", ""),
            ClaimRecord {
                scored_in: "hpcc-other".into(),
                ..rec("HPCC", "point", "matches", "")
            },
            rec("SFC", "direction", "differs (ours higher)", ""),
            rec("SFC", "", "differs (ours higher)", ""),
            rec("SFC", "", "matches", ""),
            // On seeds: two scored on three (one matching at every seed), one on two seeds
            // (not counted as multi-seed), a calibrated one on three (not scored).
            on_seeds(rec("PB-FS", "point", "matches", ""), 3, 3),
            on_seeds(rec("PB-FS", "direction", "matches", ""), 3, 2),
            on_seeds(rec("PB-FS", "range", "matches", ""), 2, 2),
            on_seeds(rec("PB-FS", "range", "matches", "x"), 3, 3),
        ];
        let (per, total) = by_paper(&rs);
        let h = per["HPCC"];
        assert_eq!((h.value_matched, h.value_total), (2, 3));
        assert_eq!((h.direction_matched, h.direction_total), (1, 2));
        assert_eq!((h.calibrated, h.repeated, h.unaudited), (1, 1, 1));
        let s = per["SFC"];
        assert_eq!((s.value_matched, s.value_total), (0, 0));
        assert_eq!((s.direction_matched, s.direction_total), (0, 1));
        assert_eq!((s.calibrated, s.repeated, s.unaudited), (0, 0, 2));
        let p = per["PB-FS"];
        assert_eq!((p.on_three_seeds, p.at_every_seed), (2, 1));
        assert_eq!(
            total,
            Tally {
                value_matched: 4,
                value_total: 5,
                direction_matched: 2,
                direction_total: 4,
                calibrated: 2,
                repeated: 1,
                unaudited: 3,
                on_three_seeds: 2,
                at_every_seed: 1,
            }
        );
        let t = table(&rs);
        assert!(
            t.contains("| HPCC | 2 of 3 | 1 of 2 | 0 (0) | 1 | 1 | 1 |"),
            "{t}"
        );
        assert!(
            t.contains("| PB-FS | 2 of 2 | 1 of 1 | 2 (1) | 1 | 0 | 0 |"),
            "{t}"
        );
        assert!(
            t.contains("| SFC | 0 of 0 | 0 of 1 | 0 (0) | 0 | 0 | 2 |"),
            "{t}"
        );
        assert!(
            t.contains("| total | 4 of 5 | 2 of 4 | 2 (1) | 2 | 1 | 3 |"),
            "{t}"
        );
        let j = json(&rs);
        assert_eq!(j["total"]["direction_total"], 4);
        assert_eq!(j["total"]["on_three_seeds"], 2);
        assert_eq!(j["total"]["repeated"], 1);
        assert_eq!(j["papers"][0]["paper"], "HPCC");
    }

    /// claims.csv reads back as written (quoted fields with commas and quotes, empty
    /// numbers), and a file with another header is refused.
    #[test]
    fn claims_csv_round_trips() {
        let mut rs = vec![
            rec("HPCC", "point", "matches", "a;b"),
            rec("SFC", "", "no data", ""),
        ];
        rs[1].value = None;
        rs[1].low = Some(f64::INFINITY);
        rs[0].scored_in = "other, quoted".into();
        rs.push(on_seeds(rec("BFC", "bound", "matches", ""), 3, 2));
        let text = claims_csv(&rs);
        assert!(text.starts_with(CLAIMS_CSV_HEADER));
        let back = parse_claims_csv(&text, "c.csv").unwrap();
        assert_eq!(back, rs);
        // A claims.csv without the `scored_in` column reads with that column empty.
        let old = "experiment,paper,claim,kind,value,low,high,verdict,calibrated,audited\n\
                   e,HPCC,c,point,1,0.8,1.2,matches,,true\n";
        let back = parse_claims_csv(old, "old.csv").unwrap();
        assert_eq!((back[0].scored_in.as_str(), back[0].audited), ("", true));
        assert_eq!((back[0].seeds, back[0].value_min), (0, None));
        // Nor the seeds' columns.
        let v2 = "experiment,paper,claim,kind,value,low,high,verdict,calibrated,audited,scored_in\n\
                  e,HPCC,c,point,1,0.8,1.2,matches,,true,other\n";
        let back = parse_claims_csv(v2, "v2.csv").unwrap();
        assert_eq!((back[0].scored_in.as_str(), back[0].seeds), ("other", 0));
        assert!(
            parse_claims_csv(&format!("{CLAIMS_CSV_HEADER}\ne,HPCC,c\n"), "c.csv")
                .unwrap_err()
                .contains("c.csv:2: 3 fields, not 15")
        );
        assert!(
            parse_claims_csv("a,b\n", "c.csv")
                .unwrap_err()
                .contains("not a claims.csv")
        );
    }

    /// The results read for an experiment: a run on more seeds before a run on fewer, a full
    /// run before a quick one.
    #[test]
    fn results_prefer_full_runs_and_more_seeds() {
        let dir = std::env::temp_dir().join(format!("sfc-score-dirs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mk = |n: &str| {
            std::fs::create_dir_all(dir.join(n)).unwrap();
            std::fs::write(dir.join(n).join("claims.csv"), CLAIMS_CSV_HEADER).unwrap();
        };
        let got = || results_dir(&dir, "e").map(|d| d.file_name().unwrap().to_owned());
        assert_eq!(got(), None);
        mk("e-quick");
        assert_eq!(got().unwrap(), "e-quick");
        mk("e-quick-seeds1-2-3");
        assert_eq!(got().unwrap(), "e-quick-seeds1-2-3");
        mk("e");
        assert_eq!(got().unwrap(), "e");
        mk("e-seeds1-2");
        mk("e-seeds4-5-6");
        assert_eq!(got().unwrap(), "e-seeds4-5-6");
        // A directory whose suffix is not a seed list is not a run on seeds.
        mk("e-seedsx");
        mk("e-seeds1-2-3-4-x");
        mk("e-seeds");
        assert_eq!(got().unwrap(), "e-seeds4-5-6");
        // More seeds win.
        mk("e-seeds7-8-9-10");
        assert_eq!(got().unwrap(), "e-seeds7-8-9-10");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
