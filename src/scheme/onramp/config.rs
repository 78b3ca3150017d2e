//! `[onramp]`: OnRamp's scenario table, validation and `sfc hpcc` keys ([`SchemeConfig`] for
//! [`OnRampConfig`]).

use serde::Deserialize;

use super::OnRampConfig;
use crate::scheme::config::{Fields, HpccFields, Inert, Issues, SchemeConfig, Value};
use crate::scheme::config::{hpcc_positive, nonzero_time};
use crate::scheme::{CoreView, KeyView, Peers};

/// Largest accepted OnRamp gain K (pause = K × (OWD − T)): beyond it a pause is more than a
/// hundred times the excess one-way delay, and huge gains overflowed the pause end time.
pub const MAX_ONRAMP_GAIN: f64 = 100.0;

/// `[onramp]` as written: OnRamp end-to-end flow control.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawOnRamp {
    /// On/off.
    pub enabled: Option<bool>,
    /// OWD threshold T (default: longest base one-way delay + 1 µs).
    pub threshold: Option<Value>,
    /// Pause gain K.
    pub gain: Option<f64>,
    /// OWD EWMA weight (1 = none).
    pub ewma_w: Option<f64>,
    /// Stale-feedback guard.
    pub guard: Option<bool>,
}

impl SchemeConfig for OnRampConfig {
    const TABLE: &'static str = "onramp";
    type Raw = RawOnRamp;
    const HPCC_KEYS: &'static [&'static str] = &[
        "ONRAMP",
        "ONRAMP_THRESHOLD_NS",
        "ONRAMP_GAIN",
        "ONRAMP_EWMA",
    ];

    fn resolve(&mut self, o: &RawOnRamp, f: &impl Fields) -> Result<(), String> {
        self.enabled = o.enabled.unwrap_or(false);
        self.threshold_ps = nonzero_time(
            f,
            &o.threshold,
            "onramp.threshold",
            "the longest base one-way delay + 1 µs",
        )?;
        self.gain = o.gain.unwrap_or(1.0);
        self.ewma_w = o.ewma_w.unwrap_or(1.0);
        self.guard = o.guard.unwrap_or(true);
        Ok(())
    }

    fn issues(&self, _core: &CoreView, _peers: &Peers) -> Issues {
        let mut v = Vec::new();
        if !(self.gain.is_finite() && self.gain > 0.0 && self.gain <= MAX_ONRAMP_GAIN) {
            v.push((
                "onramp.gain",
                format!(
                    "must be a positive number at most {MAX_ONRAMP_GAIN} (got {}): a pause is \
                     gain × (OWD − T), and a larger gain pauses a flow for more than \
                     {MAX_ONRAMP_GAIN} times its excess delay (the default is 1)",
                    self.gain
                ),
            ));
        }
        if !(self.ewma_w > 0.0 && self.ewma_w <= 1.0) {
            v.push((
                "onramp.ewma_w",
                format!("must be in (0, 1] (got {})", self.ewma_w),
            ));
        }
        v
    }

    fn inert(&self, _core: &KeyView, _peers: &Peers) -> Vec<Inert> {
        if self.enabled {
            return Vec::new();
        }
        vec![Inert {
            keys: &[
                "onramp.threshold",
                "onramp.gain",
                "onramp.ewma_w",
                "onramp.guard",
            ],
            why: "has no effect: OnRamp is off (set `onramp.enabled = true`)",
        }]
    }

    /// The host half keeps per-flow OWD state indexed by flow id.
    fn needs_flow_list(&self) -> bool {
        self.enabled
    }

    fn resolve_hpcc(&mut self, c: &impl HpccFields) -> Result<(), String> {
        self.enabled = c.flag("ONRAMP", false)?;
        if let Some(v) = c.ns_as_ps("ONRAMP_THRESHOLD_NS")? {
            self.threshold_ps = hpcc_positive(c, "ONRAMP_THRESHOLD_NS", v)?;
        }
        if let Some(v) = c.f64("ONRAMP_GAIN")? {
            if !(v > 0.0 && v.is_finite()) {
                return Err(c.err("ONRAMP_GAIN", "must be positive"));
            }
            self.gain = v;
        }
        if let Some(v) = c.f64("ONRAMP_EWMA")? {
            if !(v > 0.0 && v <= 1.0) {
                return Err(c.err("ONRAMP_EWMA", "must be in (0, 1]"));
            }
            self.ewma_w = v;
        }
        Ok(())
    }

    fn hpcc_inert(&self, _core: &KeyView) -> Vec<(&'static [&'static str], &'static str)> {
        if self.enabled {
            return Vec::new();
        }
        vec![(
            &["ONRAMP_THRESHOLD_NS", "ONRAMP_GAIN", "ONRAMP_EWMA"],
            "OnRamp is off (set ONRAMP 1)",
        )]
    }

    fn hpcc_key(key: &'static str) -> &'static str {
        match key {
            "onramp.gain" => "ONRAMP_GAIN",
            "onramp.ewma_w" => "ONRAMP_EWMA",
            k => k,
        }
    }
}
