//! `[red]`: RED's scenario table, validation and no-effect keys ([`SchemeConfig`] for
//! [`RedConfig`]).

use serde::Deserialize;

use super::RedConfig;
use crate::scheme::config::{Fields, Inert, Issues, SchemeConfig, Value};
use crate::scheme::{CoreView, KeyView, Peers};

/// `[red]` as written.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawRed {
    /// On/off.
    pub enabled: Option<bool>,
    /// min_th (size).
    pub min_th: Option<Value>,
    /// max_th (size).
    pub max_th: Option<Value>,
    /// max_p.
    pub max_p: Option<f64>,
    /// w_q.
    pub weight: Option<f64>,
}

impl SchemeConfig for RedConfig {
    const TABLE: &'static str = "red";
    type Raw = RawRed;

    fn resolve(&mut self, r: &RawRed, f: &impl Fields) -> Result<(), String> {
        self.enabled = r.enabled.unwrap_or(false);
        self.min_th_bytes = f.opt_bytes(&r.min_th, "red.min_th")?;
        self.max_th_bytes = f.opt_bytes(&r.max_th, "red.max_th")?;
        self.max_p = r.max_p.unwrap_or(self.max_p);
        self.weight = r.weight.unwrap_or(self.weight);
        Ok(())
    }

    fn issues(&self, core: &CoreView, _peers: &Peers) -> Issues {
        let mut v = Vec::new();
        let (min_th, max_th) = self.thresholds(core.max_packet_bytes);
        if min_th == 0 {
            v.push(("red.min_th", "must be above 0 bytes".to_string()));
        }
        if max_th <= min_th {
            v.push((
                "red.max_th",
                format!(
                    "must be above `red.min_th` (max_th {max_th} B ≤ min_th {min_th} B; the \
                     defaults are {} and {} full-size data packets: {} B and {} B)",
                    super::DEFAULT_MIN_TH_PKTS,
                    super::DEFAULT_MAX_TH_PKTS,
                    super::DEFAULT_MIN_TH_PKTS * core.max_packet_bytes,
                    super::DEFAULT_MAX_TH_PKTS * core.max_packet_bytes,
                ),
            ));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            v.push((
                "red.max_p",
                format!("must be in (0, 1] (got {})", self.max_p),
            ));
        }
        if !(self.weight > 0.0 && self.weight <= 1.0) {
            v.push((
                "red.weight",
                format!("must be in (0, 1] (got {})", self.weight),
            ));
        }
        v
    }

    fn inert(&self, _core: &KeyView, _peers: &Peers) -> Vec<Inert> {
        if self.enabled {
            return Vec::new();
        }
        vec![Inert {
            keys: &["red.min_th", "red.max_th", "red.max_p", "red.weight"],
            why: "has no effect: RED is off (set `red.enabled = true`)",
        }]
    }
}
