//! `[cbfc]`: CBFC's scenario table and validation ([`SchemeConfig`] for [`CbfcConfig`]).

use serde::Deserialize;

use super::CbfcConfig;
use crate::scheme::config::{Fields, Inert, Issues, SchemeConfig, Value};
use crate::scheme::{CoreView, CreditPeriod, Declares, Exclusive, KeyView, Peers};
use crate::units::parse_bytes;

/// `[cbfc]` as written: InfiniBand credit-based flow control (the lossless buffer's
/// alternative to PFC) and IB's FECN marking.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawCbfc {
    /// On/off (needs `buffer.mode = "lossless"`; PFC is then off).
    pub enabled: Option<bool>,
    /// Credit-update period T_c (default: 65 536 symbol times of the port, 26.2144 µs at
    /// 100 G).
    pub period: Option<Value>,
    /// Credit limit per (port, VL) (default: one credit loop of the hop, see
    /// `docs/src/model.md`).
    pub limit: Option<Value>,
    /// Credit block (default 64 B).
    pub block: Option<Value>,
    /// Wire size of a flow-control packet (default: the PFC frame size).
    pub fcp_size: Option<Value>,
    /// FECN marking on/off (default off).
    pub fecn: Option<bool>,
    /// FECN threshold on the egress queue (default: the port's ECN Kmin).
    pub fecn_threshold: Option<Value>,
    /// Mark FECN at victim ports too (default true).
    pub fecn_victim_mask: Option<bool>,
}

impl SchemeConfig for CbfcConfig {
    const TABLE: &'static str = "cbfc";
    type Raw = RawCbfc;

    fn resolve(&mut self, r: &RawCbfc, f: &impl Fields) -> Result<(), String> {
        self.enabled = r.enabled.unwrap_or(self.enabled);
        self.fecn = r.fecn.unwrap_or(self.fecn);
        self.fecn_victim_mask = r.fecn_victim_mask.unwrap_or(self.fecn_victim_mask);
        self.block_bytes = f.bytes(&r.block, "cbfc.block", self.block_bytes)?;
        self.period_ps = f.opt_time(&r.period, "cbfc.period")?.or(self.period_ps);
        self.limit_bytes = f.opt_bytes(&r.limit, "cbfc.limit")?.or(self.limit_bytes);
        self.fecn_threshold_bytes = f
            .opt_bytes(&r.fecn_threshold, "cbfc.fecn_threshold")?
            .or(self.fecn_threshold_bytes);
        if let Some(v) = &r.fcp_size {
            let b = parse_bytes(v.get_ref()).map_err(|e| f.err(v, "cbfc.fcp_size", e))?;
            if b > 65_535 {
                return Err(f.err(
                    v,
                    "cbfc.fcp_size",
                    format!("must be at most 65535 B (got {b})"),
                ));
            }
            self.fcp_bytes = Some(b as u32);
        }
        Ok(())
    }

    fn issues(&self, core: &CoreView, _peers: &Peers) -> Issues {
        let mut v = CbfcConfig::issues(self, core.lossless, core.has_ecn, core.max_packet_bytes);
        if !self.enabled {
            return v;
        }
        let smallest = core.smallest_buffer_bytes;
        if let Some(l) = self.limit_bytes
            && l > smallest
        {
            v.push((
                "cbfc.limit",
                format!(
                    "({l} B) is more than the switch buffer ({smallest} B): the credit limit \
                     is ingress buffer reserved per (port, VL), and credits for space the \
                     buffer does not have let occupancy exceed it"
                ),
            ));
        }
        v
    }

    fn inert(&self, _core: &KeyView, _peers: &Peers) -> Vec<Inert> {
        if !self.enabled {
            return vec![Inert {
                keys: &[
                    "cbfc.period",
                    "cbfc.limit",
                    "cbfc.block",
                    "cbfc.fcp_size",
                    "cbfc.fecn",
                    "cbfc.fecn_threshold",
                    "cbfc.fecn_victim_mask",
                ],
                why: "has no effect: CBFC runs only with `cbfc.enabled = true`",
            }];
        }
        let mut v = Vec::new();
        if !self.fecn {
            v.push(Inert {
                keys: &["cbfc.fecn_threshold", "cbfc.fecn_victim_mask"],
                why: "has no effect: FECN marking is off (set `cbfc.fecn = true`)",
            });
        }
        v
    }

    /// One flow control per lossless buffer: PFC settings next to CBFC are a mistake.
    /// CBFC replaces PFC, paces credit updates (TCD-IB reads the period), marks FECN (CE) on
    /// a lossless fabric below TCD ([`super::FECN_PRECEDENCE`]), holds switch queues back hop by
    /// hop and blocks NIC QPs through the NICs' pause bits.
    fn declares(&self) -> Declares {
        if !self.enabled {
            return Declares::default();
        }
        Declares {
            on: Some(("CBFC", "cbfc.enabled")),
            replaces_pfc: Some(
                "PFC and CBFC cannot run together: the lossless buffer runs CBFC \
                 (`cbfc.enabled = true`), so PFC settings have no meaning; remove them or \
                 disable CBFC",
            ),
            ce_precedence: self.fecn.then_some(super::FECN_PRECEDENCE),
            queues_by_flow: false,
            acks_need_credits: true,
            xon_hysteresis_bytes: None,
            hold_marks: false,
            credit_period: Some(CreditPeriod {
                fixed_ps: self.period_ps,
                default_ps: super::ib_period_ps,
            }),
            exclusive: &[Exclusive::HopByHopHold, Exclusive::NicPauses],
        }
    }
}
