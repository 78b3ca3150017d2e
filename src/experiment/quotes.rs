//! `sfc experiment quotes`: every claim's `quote` is looked up in the text of the paper it
//! cites (`[experiment] paper`), so a quote is the paper's words, not a paraphrase.
//!
//! The match ignores whitespace, hyphens (a word broken across a line, `in-network` vs
//! `in network`), case and the typographic forms text extraction varies on (ligatures `ﬁ`,
//! curly quotes, `µ` vs `μ`).

use std::path::{Path, PathBuf};

/// `text` reduced to what a quote must match: lower case, no whitespace, no hyphens (nor
/// soft hyphens), ligatures spelt out, curly quotes straight, the micro sign as `μ`.
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            c if c.is_whitespace() => {}
            '-' | '\u{2010}' | '\u{2011}' | '\u{00AD}' => {}
            'ﬁ' => out.push_str("fi"),
            'ﬂ' => out.push_str("fl"),
            'ﬀ' => out.push_str("ff"),
            'ﬃ' => out.push_str("ffi"),
            'ﬄ' => out.push_str("ffl"),
            '\u{2018}' | '\u{2019}' => out.push('\''),
            '\u{201C}' | '\u{201D}' => out.push('"'),
            '\u{00B5}' => out.push('μ'),
            c => out.extend(c.to_lowercase()),
        }
    }
    out
}

/// Is `quote` in `paper` (both as [`normalize`] reduces them)? An empty quote is not.
pub fn quote_in(quote: &str, paper: &str) -> bool {
    let q = normalize(quote);
    !q.is_empty() && normalize(paper).contains(&q)
}

/// The paper text file for paper `name` in `dir`: `dir/KEY.txt`, KEY the name in lower case
/// without non-alphanumerics (`PB-FS` → `pbfs.txt`), else the first `dir/KEY*.txt`
/// (`tcd-fragment.txt`).
pub fn paper_file(dir: &Path, name: &str) -> Option<PathBuf> {
    let key: String = name
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(|c| c.to_lowercase())
        .collect();
    if key.is_empty() {
        return None;
    }
    let exact = dir.join(format!("{key}.txt"));
    if exact.is_file() {
        return Some(exact);
    }
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "txt")
                && p.file_name()
                    .and_then(|f| f.to_str())
                    .is_some_and(|f| f.to_lowercase().starts_with(&key))
        })
        .collect();
    v.sort();
    v.into_iter().next()
}

/// What `sfc experiment quotes` found in one experiment file.
#[derive(Clone, Debug, Default)]
pub struct QuoteCheck {
    /// Quotes found in the paper's text.
    pub found: usize,
    /// Claims citing a `source` instead of a quote.
    pub sourced: usize,
    /// Audited claims (with `kind`) with neither `quote` nor `source`, as `file:line: text`.
    pub unquoted: Vec<String>,
    /// Quotes not found, as `file:line: claim `text`: quote not in PAPER`.
    pub missing: Vec<String>,
}

/// Check the quotes of the experiment `exp` read from `text` (labelled `file`) against the
/// paper texts in `papers`.
pub fn check(file: &str, text: &str, exp: &super::Experiment, papers: &Path) -> QuoteCheck {
    let mut r = QuoteCheck::default();
    let paper = paper_file(papers, &exp.meta.paper);
    let paper_text = paper.as_ref().and_then(|p| std::fs::read_to_string(p).ok());
    for (i, c) in exp.claims.iter().enumerate() {
        let line = |key: &str| super::claim_key_line(text, i, key).unwrap_or(0);
        match (&c.quote, &c.source) {
            (Some(q), _) => match &paper_text {
                Some(t) if quote_in(q, t) => r.found += 1,
                Some(_) => r.missing.push(format!(
                    "{file}:{}: claim `{}`: quote not in {}",
                    line("quote"),
                    c.text,
                    paper
                        .as_ref()
                        .map_or(String::new(), |p| p.display().to_string())
                )),
                None => r.missing.push(format!(
                    "{file}:{}: claim `{}`: no text of paper `{}` in {} (looked for {}.txt)",
                    line("quote"),
                    c.text,
                    exp.meta.paper,
                    papers.display(),
                    exp.meta.paper.to_lowercase()
                )),
            },
            (None, Some(_)) => r.sourced += 1,
            (None, None) if c.kind.is_some() => r.unquoted.push(format!(
                "{file}:{}: claim `{}`: audited, but neither `quote` nor `source`",
                line("kind"),
                c.text
            )),
            (None, None) => {}
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small paper text with a line-broken hyphenated word, a ligature, a curly quote, a
    /// micro sign and extra whitespace: quotes match across those, not across other words.
    #[test]
    fn quotes_match_ignoring_whitespace_and_hyphenation() {
        let paper = "HPCC is bene\u{FB01}cial to short \u{FB02}ows.  Figure 11a shows that for the\n\
                     ﬂows shorter than 120KB, HPCC achieves much lower FCTs than all the other \
                     schemes at 95th percentile. HPCC’s latency is under 20 \u{00B5}s, with in-\n\
                     network telemetry.";
        for q in [
            "HPCC is beneficial to short flows.",
            "for the flows shorter than 120KB, HPCC achieves much lower FCTs",
            "for the   flows\nshorter than 120 KB",
            "HPCC's latency is under 20 μs",
            "with in-network telemetry",
            "with innetwork telemetry",
            "hpcc achieves MUCH lower",
        ] {
            assert!(quote_in(q, paper), "{q:?} not found");
        }
        for q in [
            "HPCC is beneficial to long flows.",
            "HPCC achieves lower FCTs",
            "",
            "  \n ",
        ] {
            assert!(!quote_in(q, paper), "{q:?} found");
        }
    }

    /// `PB-FS` names `pbfs.txt`; a name with no file of its own takes the first file that
    /// starts with it (`tcd-fragment.txt`).
    #[test]
    fn paper_files_are_found_by_name() {
        let d = std::env::temp_dir().join(format!("sfc-quotes-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        for f in ["pbfs.txt", "tcd-fragment.txt", "hpcc.txt"] {
            std::fs::write(d.join(f), "x").unwrap();
        }
        assert_eq!(paper_file(&d, "PB-FS"), Some(d.join("pbfs.txt")));
        assert_eq!(paper_file(&d, "TCD"), Some(d.join("tcd-fragment.txt")));
        assert_eq!(paper_file(&d, "HPCC"), Some(d.join("hpcc.txt")));
        assert_eq!(paper_file(&d, "NDP"), None);
        assert_eq!(paper_file(&d, ""), None);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
