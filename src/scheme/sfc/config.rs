//! `[sfc]`: SFC's scenario table, validation, memory and `sfc hpcc` keys
//! ([`SchemeConfig`] for [`SfcConfig`]).

use serde::Deserialize;

use super::{
    EstimatorRule, MAX_BLOOM_BITS, MAX_CACHE_ENTRIES, PauseCache, SfcConfig, SfcDeploy, SfcMode,
};
use crate::scheme::config::{
    Fields, HpccFields, Inert, Issues, SchemeConfig, Value, hpcc_positive, nonzero_time,
};
use crate::scheme::{CoreView, Declares, Exclusive, KeyView, Peers};
use crate::units::parse_bytes;

/// Largest accepted SFC pause quantum, picoseconds (1 ms): pauses are rounded up to a whole
/// quantum, so a larger one pauses every triggered flow for hundreds of RTTs at least.
pub const MAX_SFC_PAUSE_QUANTUM_PS: u64 = crate::units::MS;

/// Longest accepted BTS path latency, picoseconds (1 s, the longest accepted link delay).
pub const MAX_BTS_DELAY_PS: u64 = crate::units::SEC;

/// `[sfc]` as written: Source Flow Control.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawSfc {
    /// `off`, `sfc` (ingress BTS + cache), `ingress`, `egress`, `sfcp`.
    pub mode: Option<Value>,
    /// `tor` (default) or `all`.
    pub deploy: Option<Value>,
    /// Trigger threshold Q_th (bytes); default 2 BDP.
    pub qth: Option<Value>,
    /// Target depth Q_tg (bytes); default 1 BDP.
    pub qtg: Option<Value>,
    /// Bloom filter reset period (default RTT/2).
    pub bloom_reset: Option<Value>,
    /// Bloom filter bits.
    pub bloom_bits: Option<u32>,
    /// Pause cache entries.
    pub cache_entries: Option<u32>,
    /// Incast estimator window τ (off when absent).
    pub estimator_tau: Option<Value>,
    /// Incast estimator rule: `queue` (Algorithm 1 on the estimated depth) or `any`.
    pub estimator_rule: Option<Value>,
    /// Pause granularity (default 1us).
    pub pause_quantum: Option<Value>,
    /// Latency of the BTS path in the generating switch (default 0).
    pub bts_delay: Option<Value>,
    /// Trigger diagnostics in the summary (default false).
    pub trigger_stats: Option<bool>,
}

/// Q_th / Q_tg: positive bytes, absent for the paper's default.
fn threshold(f: &impl Fields, v: &Option<Value>, key: &str) -> Result<u64, String> {
    match v {
        None => Ok(0),
        Some(x) if x.get_ref().ends_with("bdp") => Err(f.err(
            x,
            key,
            "give bytes (e.g. \"250KB\"); omit the key for the paper's default (Q_th = 2 BDP, Q_tg = 1 BDP per port)",
        )),
        Some(x) => match parse_bytes(x.get_ref()) {
            Err(e) => Err(f.err(x, key, e)),
            // 0 stands for the default inside the model: an explicit 0 is not taken for it.
            Ok(0) => Err(f.err(
                x,
                key,
                "must be positive; omit the key for the paper's default (Q_th = 2 BDP, \
                 Q_tg = 1 BDP per port)",
            )),
            Ok(b) => Ok(b),
        },
    }
}

impl SfcConfig {
    /// `sfc.bloom_bits` and `sfc.cache_entries`, checked.
    fn resolve_sizes(&mut self, s: &RawSfc, f: &impl Fields) -> Result<(), String> {
        if let Some(b) = s.bloom_bits
            && b < 64
        {
            return Err(f.err_key("sfc.bloom_bits", format!("must be at least 64 (got {b})")));
        }
        if let Some(b) = s.bloom_bits
            && b > MAX_BLOOM_BITS
        {
            return Err(f.err_key(
                "sfc.bloom_bits",
                format!(
                    "must be in 64..={MAX_BLOOM_BITS} (got {b}): the Bloom filter is a switch \
                     register array, allocated at every SFC switch and cleared every reset \
                     period (the paper's holds under 150 flows in under 0.1 % of the switch's \
                     SRAM; the default, 65536 bits, already has a false-positive rate near 3e-7)"
                ),
            ));
        }
        if s.cache_entries == Some(0) {
            return Err(f.err_key(
                "sfc.cache_entries",
                "must be at least 1 (a pause cache with no entry caches nothing)",
            ));
        }
        if let Some(n) = s.cache_entries
            && n > MAX_CACHE_ENTRIES
        {
            return Err(f.err_key(
                "sfc.cache_entries",
                format!(
                    "{n} is above the largest accepted, {MAX_CACHE_ENTRIES}: the pause cache is \
                     a switch register array (the paper's is small; the default is 32768), \
                     allocated at every SFC switch at 16 B an entry"
                ),
            ));
        }
        self.bloom_bits = s.bloom_bits.unwrap_or(self.bloom_bits).max(64);
        self.cache_entries = s.cache_entries.unwrap_or(self.cache_entries).max(1);
        Ok(())
    }

    /// `sfc.estimator_tau` and `sfc.estimator_rule`.
    fn resolve_estimator(&mut self, s: &RawSfc, f: &impl Fields) -> Result<(), String> {
        self.estimator_tau_ps = f.time(&s.estimator_tau, "sfc.estimator_tau", 0)?;
        if let Some(r) = &s.estimator_rule {
            self.estimator_rule = match r.get_ref().as_str() {
                "queue" => EstimatorRule::Queue,
                "any" => EstimatorRule::Any,
                _ => {
                    return Err(f.err(
                        r,
                        "sfc.estimator_rule",
                        "expected `queue` (Algorithm 1 on the estimated remote depth: above \
                         Q_th, pause down to Q_tg) or `any` (above 0, pause it all)",
                    ));
                }
            };
            if self.estimator_tau_ps == 0 {
                return Err(f.err(
                    r,
                    "sfc.estimator_rule",
                    "has no effect without the estimator (set `sfc.estimator_tau`)",
                ));
            }
        }
        Ok(())
    }
}

/// SFC's `sfc hpcc` keys.
const HPCC_KEYS: &[&str] = &[
    "SFC_MODE",
    "SFC_DEPLOY",
    "SFC_QTH_BYTES",
    "SFC_QTG_BYTES",
    "SFC_BLOOM_RESET_NS",
    "SFC_BTS_DELAY_NS",
    "SFC_ESTIMATOR",
    "SFC_ESTIMATOR_TAU_NS",
];

impl SchemeConfig for SfcConfig {
    const TABLE: &'static str = "sfc";
    type Raw = RawSfc;
    const HPCC_KEYS: &'static [&'static str] = HPCC_KEYS;

    /// Q_th/Q_tg default to 2 and 1 BDP of each port (base RTT × port rate); explicit values
    /// are bytes.
    fn resolve(&mut self, s: &RawSfc, f: &impl Fields) -> Result<(), String> {
        if let Some(m) = &s.mode {
            self.mode = match m.get_ref().as_str() {
                "off" => SfcMode::Off,
                "sfc" => SfcMode::Sfc,
                "ingress" => SfcMode::Ingress,
                "egress" => SfcMode::Egress,
                "sfcp" => SfcMode::SfcP,
                _ => {
                    return Err(f.err(m, "sfc.mode", "expected off, sfc, ingress, egress or sfcp"));
                }
            };
        }
        if let Some(d) = &s.deploy {
            self.deploy = match d.get_ref().as_str() {
                "tor" => SfcDeploy::Tor,
                "all" => SfcDeploy::All,
                _ => return Err(f.err(d, "sfc.deploy", "expected tor or all")),
            };
        }
        self.qth_bytes = threshold(f, &s.qth, "sfc.qth")?;
        self.qtg_bytes = threshold(f, &s.qtg, "sfc.qtg")?;
        self.bloom_reset_ps = nonzero_time(f, &s.bloom_reset, "sfc.bloom_reset", "RTT/2")?;
        self.resolve_sizes(s, f)?;
        self.resolve_estimator(s, f)?;
        self.pause_quantum_ps =
            f.time(&s.pause_quantum, "sfc.pause_quantum", self.pause_quantum_ps)?;
        self.bts_delay_ps = f.time(&s.bts_delay, "sfc.bts_delay", self.bts_delay_ps)?;
        self.trigger_stats = s.trigger_stats.unwrap_or(false);
        Ok(())
    }

    fn issues(&self, _core: &CoreView, _peers: &Peers) -> Issues {
        let mut v = Vec::new();
        if self.qth_bytes > 0 && self.qtg_bytes > self.qth_bytes {
            v.push((
                "sfc.qtg",
                format!(
                    "Q_tg ({} B) must not exceed Q_th ({} B)",
                    self.qtg_bytes, self.qth_bytes
                ),
            ));
        }
        if self.bts_delay_ps > MAX_BTS_DELAY_PS {
            v.push((
                "sfc.bts_delay",
                format!(
                    "{} is above the longest accepted delay, 1s (as for link delays: base RTTs \
                     and timeouts must stay in range)",
                    crate::units::fmt_time(self.bts_delay_ps)
                ),
            ));
        }
        if self.pause_quantum_ps > MAX_SFC_PAUSE_QUANTUM_PS {
            v.push((
                "sfc.pause_quantum",
                format!(
                    "{} is above the largest accepted, 1ms: every pause is rounded up to a whole \
                     quantum, so each BTS would pause its flow for at least that long, \
                     hundreds of RTTs (the paper uses 1us)",
                    crate::units::fmt_time(self.pause_quantum_ps)
                ),
            ));
        }
        v
    }

    /// SFC pauses NIC QPs (BTS at the sender's NIC) through the NICs' pause bits.
    fn declares(&self) -> Declares {
        if !self.is_on() {
            return Declares::default();
        }
        Declares {
            on: Some(("SFC", "sfc.mode")),
            exclusive: &[Exclusive::NicPauses],
            ..Declares::default()
        }
    }

    fn inert(&self, _core: &KeyView, _peers: &Peers) -> Vec<Inert> {
        if self.mode != SfcMode::Off {
            return Vec::new();
        }
        vec![Inert {
            keys: &[
                "sfc.deploy",
                "sfc.qth",
                "sfc.qtg",
                "sfc.bloom_reset",
                "sfc.bloom_bits",
                "sfc.cache_entries",
                "sfc.estimator_tau",
                "sfc.estimator_rule",
                "sfc.pause_quantum",
                "sfc.bts_delay",
                "sfc.trigger_stats",
            ],
            why: "has no effect: SFC is off (set `sfc.mode`)",
        }]
    }

    /// The pause cache (`sfc.cache_entries`) and the Bloom filter (`sfc.bloom_bits`), counted
    /// at every switch (an upper bound for SFC deployed at ToRs).
    fn tables(&self) -> Vec<(&'static str, u64)> {
        if self.mode == SfcMode::Off {
            return Vec::new();
        }
        vec![
            (
                "sfc.cache_entries",
                PauseCache::bytes_for(self.cache_entries),
            ),
            ("sfc.bloom_bits", (self.bloom_bits as u64).div_ceil(64) * 8),
        ]
    }

    fn resolve_hpcc(&mut self, c: &impl HpccFields) -> Result<(), String> {
        if let Some(m) = c.str("SFC_MODE") {
            self.mode = match m {
                "off" => SfcMode::Off,
                "sfc" => SfcMode::Sfc,
                "ingress" => SfcMode::Ingress,
                "egress" => SfcMode::Egress,
                "sfcp" => SfcMode::SfcP,
                _ => return Err(c.err("SFC_MODE", "expected off, sfc, ingress, egress or sfcp")),
            };
        }
        if let Some(d) = c.str("SFC_DEPLOY") {
            self.deploy = match d {
                "tor" => SfcDeploy::Tor,
                "all" => SfcDeploy::All,
                _ => return Err(c.err("SFC_DEPLOY", "expected tor or all")),
            };
        }
        if let Some(v) = c.u64("SFC_QTH_BYTES")? {
            self.qth_bytes = hpcc_positive(c, "SFC_QTH_BYTES", v)?;
        }
        if let Some(v) = c.u64("SFC_QTG_BYTES")? {
            self.qtg_bytes = hpcc_positive(c, "SFC_QTG_BYTES", v)?;
        }
        if self.qth_bytes > 0 && self.qtg_bytes > self.qth_bytes {
            return Err(c.err("SFC_QTG_BYTES", "must not exceed SFC_QTH_BYTES"));
        }
        if let Some(v) = c.ns_as_ps("SFC_BLOOM_RESET_NS")? {
            self.bloom_reset_ps = hpcc_positive(c, "SFC_BLOOM_RESET_NS", v)?;
        }
        if let Some(v) = c.ns_as_ps("SFC_BTS_DELAY_NS")? {
            self.bts_delay_ps = v;
        }
        if c.flag("SFC_ESTIMATOR", false)? {
            // Default window τ: 10 µs (about one base RTT of the paper's Clos).
            self.estimator_tau_ps = c
                .ns_as_ps("SFC_ESTIMATOR_TAU_NS")?
                .unwrap_or(10_000_000)
                .max(1000);
        }
        Ok(())
    }

    fn hpcc_inert(&self, _core: &KeyView) -> Vec<(&'static [&'static str], &'static str)> {
        if self.mode == SfcMode::Off {
            vec![(&HPCC_KEYS[1..], "SFC is off (set SFC_MODE)")]
        } else if self.estimator_tau_ps == 0 {
            vec![(
                &["SFC_ESTIMATOR_TAU_NS"],
                "the estimator is off (set SFC_ESTIMATOR 1)",
            )]
        } else {
            Vec::new()
        }
    }

    fn hpcc_key(key: &'static str) -> &'static str {
        match key {
            "sfc.qtg" => "SFC_QTG_BYTES",
            "sfc.bts_delay" => "SFC_BTS_DELAY_NS",
            // No HPCC-sim key sets the pause quantum (scenario files only); never reported.
            "sfc.pause_quantum" => "SFC_MODE",
            k => k,
        }
    }
}
