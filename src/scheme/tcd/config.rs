//! `[tcd]`: TCD's scenario table and validation ([`SchemeConfig`] for [`TcdConfig`]).

use serde::Deserialize;

use super::{CeMarking, TcdConfig};
use crate::scheme::config::{Fields, Inert, Issues, SchemeConfig, Value};
use crate::scheme::{CoreView, Declares, KeyView, Peers};

/// `[tcd]` as written: ternary congestion detection at switch egress (lossless fabrics).
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawTcd {
    /// On/off.
    pub enabled: Option<bool>,
    /// ε of Eq. (3) (default 0.05).
    pub epsilon: Option<f64>,
    /// Fixed max(T_on) (default: Eq. (3) per port).
    pub max_ton: Option<Value>,
    /// Trend period T (default: max(T_on) per port).
    pub period: Option<Value>,
    /// Feedback latency τ (default 2·MTU/C + 2·t_p per port).
    pub tau: Option<Value>,
    /// B1 − B0 (default: the PFC XON hysteresis, 3 KiB).
    pub hysteresis: Option<Value>,
    /// Congestion threshold (default: the port's ECN Kmin).
    pub threshold: Option<Value>,
    /// Low threshold (default: one full data packet).
    pub low_threshold: Option<Value>,
    /// `red` (default) or `step`.
    pub ce_marking: Option<Value>,
}

impl SchemeConfig for TcdConfig {
    const TABLE: &'static str = "tcd";
    type Raw = RawTcd;

    fn resolve(&mut self, t: &RawTcd, f: &impl Fields) -> Result<(), String> {
        self.enabled = t.enabled.unwrap_or(self.enabled);
        self.epsilon = t.epsilon.unwrap_or(self.epsilon);
        self.max_ton_ps = f.opt_time(&t.max_ton, "tcd.max_ton")?.or(self.max_ton_ps);
        self.period_ps = f.opt_time(&t.period, "tcd.period")?.or(self.period_ps);
        self.tau_ps = f.opt_time(&t.tau, "tcd.tau")?.or(self.tau_ps);
        self.hysteresis_bytes = f
            .opt_bytes(&t.hysteresis, "tcd.hysteresis")?
            .or(self.hysteresis_bytes);
        self.threshold_bytes = f
            .opt_bytes(&t.threshold, "tcd.threshold")?
            .or(self.threshold_bytes);
        self.low_threshold_bytes = f
            .opt_bytes(&t.low_threshold, "tcd.low_threshold")?
            .or(self.low_threshold_bytes);
        if let Some(m) = &t.ce_marking {
            self.ce_marking = match m.get_ref().as_str() {
                "red" => CeMarking::Red,
                "step" => CeMarking::Step,
                _ => return Err(f.err(m, "tcd.ce_marking", "expected `red` or `step`")),
            };
        }
        Ok(())
    }

    fn issues(&self, core: &CoreView, _peers: &Peers) -> Issues {
        TcdConfig::issues(self, core.lossless, core.has_ecn)
    }

    /// TCD marks CE itself on a lossless fabric, above CBFC's FECN
    /// ([`super::CE_PRECEDENCE`]).
    fn declares(&self) -> Declares {
        if !self.enabled {
            return Declares::default();
        }
        Declares {
            on: Some(("TCD", "tcd.enabled")),
            ce_precedence: Some(super::CE_PRECEDENCE),
            hold_marks: true,
            ..Declares::default()
        }
    }

    fn inert(&self, _core: &KeyView, peers: &Peers) -> Vec<Inert> {
        if self.enabled {
            if peers.credit_period.is_some() {
                // TCD-IB: max(T_on) is the credit-update period, not Eq. (3).
                return vec![Inert {
                    keys: &["tcd.epsilon", "tcd.tau", "tcd.hysteresis"],
                    why: "has no effect under CBFC: TCD-IB takes max(T_on) = the credit-update \
                         period (`cbfc.period`; or set `tcd.max_ton`)",
                }];
            }
            return Vec::new();
        }
        vec![Inert {
            keys: &[
                "tcd.epsilon",
                "tcd.max_ton",
                "tcd.period",
                "tcd.tau",
                "tcd.hysteresis",
                "tcd.threshold",
                "tcd.low_threshold",
                "tcd.ce_marking",
            ],
            why: "has no effect: TCD runs only with `tcd.enabled = true`",
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheme::CreditPeriod;

    /// On a credit fabric (a declared credit period: CBFC) TCD-IB's max(T_on) is the period,
    /// so ε, τ and the hysteresis of Eq. (3) are warned about; without one nothing is; with
    /// TCD off every key is.
    #[test]
    fn eq3_keys_are_inert_under_credits() {
        let on = TcdConfig {
            enabled: true,
            ..TcdConfig::default()
        };
        let core = KeyView { lossless: true };
        let credits = Peers {
            credit_period: Some(CreditPeriod {
                fixed_ps: None,
                default_ps: |_| 1,
            }),
            ..Peers::default()
        };
        let w = on.inert(&core, &credits);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].keys, ["tcd.epsilon", "tcd.tau", "tcd.hysteresis"]);
        assert!(w[0].why.starts_with("has no effect under CBFC"));
        assert!(on.inert(&core, &Peers::default()).is_empty());
        let off = TcdConfig::default();
        assert!(
            off.inert(&core, &credits)[0]
                .keys
                .contains(&"tcd.ce_marking")
        );
    }
}
